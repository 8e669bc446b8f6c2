"""The agent's loop: read its node's command and the switch, decide, act on the host, report.

One tick per ``interval_s``: the node's ConfigMap and the switch Lease are read (a failed
read keeps what was known: a suite that cannot be heard from stops renewing in the agent's
eyes, so its faults expire), ``logic.decide`` says what to do, ``host`` does it, and the
result is patched into the ConfigMap's report (retried on the next tick if the patch fails).
``shutdown`` reverts what is active (the DaemonSet is being removed).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from zoneproof._util.jsonlog import emit
from zoneproof.nodeagent import host, logic
from zoneproof.nodeagent.protocol import (
    COMMAND_KEY,
    REPORT_KEY,
    SWITCH_LEASE,
    Action,
    Command,
    Reason,
    Report,
    State,
    configmap_name,
)

__all__ = ["Agent"]

log = logging.getLogger(__name__)
_API_ERRORS = (ApiException, OSError)


class Agent:
    """The node agent of ``node``: commands from ``<namespace>/node-<node>``."""

    def __init__(self, node: str, core: client.CoreV1Api, leases: client.CoordinationV1Api, *,
                 namespace: str, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 run: Callable[[list[str]], str] = host.run) -> None:
        self.node, self.namespace = node, namespace
        self._core, self._leases = core, leases
        self._clock, self._wall, self._run = clock, wall, run
        self.state = logic.AgentState()
        self.switch = logic.Switch()
        self._desired: Command | None = None
        self._acted_wall: float | None = None
        self._unreported: Report | None = None

    # --- reading -------------------------------------------------------------------------
    def _configmap(self) -> dict[str, str]:
        try:
            cm = self._core.read_namespaced_config_map(configmap_name(self.node), self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return {}
            raise
        return dict(cm.data or {})

    def _read_command(self) -> Command | None:
        text = self._configmap().get(COMMAND_KEY)
        if not text:
            return None
        try:
            return Command.from_json(text)
        except ValueError as exc:
            emit(log, logging.WARNING, "malformed_command", node=self.node, error=exc)
            return None

    def _read_switch(self, name: str) -> tuple[str | None, float | None]:
        try:
            lease = self._leases.read_namespaced_lease(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None, None
            raise
        spec = lease.spec
        if spec is None or spec.renew_time is None or not spec.lease_duration_seconds:
            return None, None
        return str(spec.renew_time.isoformat()), float(spec.lease_duration_seconds)

    # --- the loop --------------------------------------------------------------------------
    def adopt(self) -> None:
        """After a restart: take over a fault an earlier agent reported active (it will be
        reverted unless its command still stands, and then bounded from now)."""
        try:
            data = self._configmap()
            report = Report.from_json(data[REPORT_KEY]) if data.get(REPORT_KEY) else None
        except (*_API_ERRORS, ValueError) as exc:
            emit(log, logging.WARNING, "adopt_failed", node=self.node, error=exc)
            return
        if report is None or report.state is not State.ACTIVE:
            return
        command = Command(report.command_id, Action(report.action), max_duration_s=1.0)
        try:
            desired = Command.from_json(data.get(COMMAND_KEY, ""))
            if desired.id == report.command_id:
                command = desired
        except ValueError:
            pass
        self.state = logic.AgentState(logic.Active(command, self._clock()), command.id)
        self._acted_wall = report.acted_at
        emit(log, logging.INFO, "adopted", node=self.node, command=command.id)

    def tick(self) -> logic.Decision:
        """Read, decide, act, report; the decision taken."""
        now = self._clock()
        try:
            self._desired = self._read_command()
        except _API_ERRORS as exc:
            emit(log, logging.WARNING, "read_command_failed", node=self.node, error=exc)
        desired = self._desired
        switch_name = (desired.switch if desired else
                       self.state.active.command.switch if self.state.active else SWITCH_LEASE)
        try:
            renew, duration = self._read_switch(switch_name)
            self.switch = logic.observe(self.switch, renew, duration, now)
        except _API_ERRORS as exc:
            emit(log, logging.WARNING, "read_switch_failed", node=self.node, error=exc)
        decision = logic.decide(self.state, desired, self.switch.alive(now), now)
        if decision.choice is not logic.Choice.NOTHING:
            self._carry_out(decision, desired, now)
        self._flush()
        return decision

    def shutdown(self) -> None:
        """Revert what is active (the agent is being removed) and report it."""
        if self.state.active is not None:
            self._carry_out(logic.Decision(logic.Choice.REVERT, Reason.AGENT_STOPPED),
                            self._desired, self._clock())
        self._flush()

    def run(self, stop: threading.Event, interval_s: float) -> None:
        """Tick until ``stop`` is set, then ``shutdown``."""
        self.adopt()
        emit(log, logging.INFO, "agent_started", node=self.node, namespace=self.namespace)
        while not stop.is_set():
            try:
                self.tick()
            except Exception as exc:  # one bad tick must not end the agent (and its faults' bound)
                emit(log, logging.ERROR, "tick_failed", node=self.node, error=repr(exc))
            stop.wait(interval_s)
        self.shutdown()

    # --- acting and reporting --------------------------------------------------------------
    def _carry_out(self, decision: logic.Decision, desired: Command | None, now: float) -> None:
        choice = decision.choice
        if choice is logic.Choice.REFUSE and desired is not None:
            self.state = logic.after(self.state, decision, desired, now)
            self._report(Report(desired.id, desired.action, State.REFUSED,
                                error=f"switch Lease {desired.switch} is not being renewed"))
            return
        command = desired if choice is logic.Choice.ACT else (
            self.state.active.command if self.state.active else None)
        if command is None:
            return
        if choice is logic.Choice.ACT and command.action is Action.CUT_APISERVER:
            own = host.kubelet_endpoints(self._run)  # the kubelet's own server, too
            command = dataclasses.replace(command, endpoints=tuple(sorted(
                {*command.endpoints, *own})))
        argv = (host.apply_argv if choice is logic.Choice.ACT else host.revert_argv)(command)
        error = ""
        try:
            self._run(argv)
        except host.HostCommandError as exc:
            error = str(exc)
        self.state = logic.after(self.state, decision, desired, now, succeeded=not error)
        emit(log, logging.INFO if not error else logging.ERROR, f"{choice.value}",
             node=self.node, command=command.id, reason=decision.reason or "", error=error,
             endpoints=" ".join(f"{a}:{p}" for a, p in command.endpoints))
        if choice is logic.Choice.ACT:
            self._acted_wall = self._wall()
            state = State.FAILED if error else State.ACTIVE
            self._report(Report(command.id, command.action, state, self._acted_wall, error=error))
        elif not error:
            self._report(Report(command.id, command.action, State.REVERTED, self._acted_wall,
                                self._wall(), decision.reason))
        else:
            self._report(Report(command.id, command.action, State.ACTIVE, self._acted_wall,
                                error=f"revert failed (retrying): {error}"))

    def _report(self, report: Report) -> None:
        self._unreported = report

    def _flush(self) -> None:
        report = self._unreported
        if report is None:
            return
        body: dict[str, Any] = {"data": {REPORT_KEY: report.to_json()}}
        try:
            self._core.patch_namespaced_config_map(configmap_name(self.node), self.namespace, body)
        except _API_ERRORS as exc:
            emit(log, logging.WARNING, "report_failed", node=self.node, error=exc)
            return
        self._unreported = None
