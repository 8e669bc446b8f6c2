"""One experiment run, typed: its cluster, Timeline, Injector, planned faults, and what its
activities started (``Started``: the workloads, a component, traffic), each stopped by its
stop activity or, newest first, when the run closes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util.progress import Progress
from zoneproof.chaos import guard, k8s
from zoneproof.chaos.configuration import ExperimentConfig
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness.controller import REPLICA_PREFIX, ControllerReplicas
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.webhook import RunningWebhook
from zoneproof.faults import Effect, Fault, FaultContext, FaultRecord, Injector
from zoneproof.measure import History, Recorder, Timeline
from zoneproof.report import artefacts
from zoneproof.traffic.admission import AdmissionTraffic
from zoneproof.traffic.registers import RegisterTraffic
from zoneproof.traffic.writer import Writer

__all__ = ["NAMESPACE_STEMS", "ExperimentRun", "Started", "experiment_namespace", "named"]

log = logging.getLogger(__name__)

#: The namespaces an experiment makes besides its workloads' (``ExperimentConfig.namespace``), each
#: this stem and the run's suffix (``named``): what ``experiment_namespace`` recognises.
NAMESPACE_STEMS = ("zp-writes", "zp-history", "zp-admission", "zp-no-admission", "zp-tolerant")

T = TypeVar("T")


class Started(Generic[T]):
    """One thing an activity started (the workloads, a component, traffic): its stop
    activity takes it back; what is left is stopped when the run closes, newest first."""

    def __init__(self, what: str, starter: str, stop: Callable[[T], object],
                 order: list[Started[Any]]) -> None:
        self.what, self.starter, self._stop, self._order = what, starter, stop, order
        self._value: T | None = None

    @property
    def value(self) -> T | None:
        """What runs (None: nothing)."""
        return self._value

    def start(self, value: T) -> T:
        """Hold ``value`` (an activity just started it); ``value``."""
        self._value = value
        if self in self._order:
            self._order.remove(self)
        self._order.append(self)
        return value

    def get(self) -> T:
        """What runs; FaultError names the activity that starts it."""
        if self._value is None:
            raise errors.FaultError(f"no {self.what} runs in this run: call {self.starter} first")
        return self._value

    def take(self) -> T | None:
        """What runs (None: nothing), no longer held: the caller stops it."""
        value, self._value = self._value, None
        if self in self._order:
            self._order.remove(self)
        return value

    def pop(self) -> T:
        """What runs, no longer held (the caller stops it); FaultError as ``get``."""
        value = self.get()
        self.take()
        return value

    def stop(self) -> None:
        """Stop what runs, if anything."""
        value = self.take()
        if value is not None:
            self._stop(value)


class ExperimentRun:
    """One experiment run: its cluster, Timeline, Injector, planned faults and what its
    activities started."""

    def __init__(self, config: ExperimentConfig, cluster: Cluster, api: client.ApiClient, workdir: Path,
                 plan: guard.FaultPlan, *, opened: runs.Run | None = None) -> None:
        self.config, self.cluster, self.api, self.workdir = config, cluster, api, workdir
        self.plan = plan
        self.timeline = Timeline()
        self.injector = Injector(cluster, self.timeline)
        #: This run's workload namespace: ``<zoneproof_namespace>-<run id>``.
        self.namespace = f"{config.namespace}-{uuid.uuid4().hex[:6]}"
        self.recorders: list[Recorder] = []
        #: What failed while closing the run (a revert, a stop): the verdict must fail.
        self.problems: list[str] = []
        #: The cluster as reports name it (``runs.identity``).
        self.identity: dict[str, Any] = {}
        #: The register history of the run's traffic, once stopped (None: it ran none).
        self.history: History | None = None
        #: What the controller replicas' identities (and audited users) start with: the host
        #: replicas' prefix, or the in-cluster Deployment's pod-name prefix once deployed.
        self.replica_prefix = REPLICA_PREFIX
        #: The zoneproof run opened for this one (None: it joined the process's run).
        self._opened = opened
        order: list[Started[Any]] = []
        self.started = order
        self.workloads = Started[str]("workloads", "deploy_workloads", self.delete_namespace,
                                      order)
        self.controller = Started[ControllerReplicas](
            "HA controller", "deploy_ha_controller", lambda group: group.stop_all(), order)
        self.webhook = Started[RunningWebhook]("webhook", "deploy_webhook",
                                               lambda hook: hook.stop(), order)
        self.writer = Started[Writer]("writer", "start_writer", lambda writer: writer.stop(),
                                      order)
        self.traffic = Started[RegisterTraffic]("register traffic", "start_history_traffic",
                                                self.save_history, order)
        self.tolerant = Started[str]("zone-tolerant workload", "deploy_zone_tolerant_workload",
                                     self.delete_namespace, order)
        self.admissions = Started[AdmissionTraffic](
            "admission traffic", "start_admission_traffic", lambda traffic: traffic.stop(), order)

    def fault_context(self) -> FaultContext:
        """What this run's faults act on: its cluster, API client, workload namespace, the
        components under test it deployed, and the cordon/drain adapter."""
        running: dict[Kind, object] = {Kind.CONTROLLER: self.controller.value,
                                       Kind.WEBHOOK: self.webhook.value}
        return FaultContext(self.cluster, self.api, self.namespace,
                            running={k: v for k, v in running.items() if v is not None},
                            scheduling=k8s.NodeScheduling(self.cluster.kubeconfig))

    def start_fault(self, fault: Fault, max_duration_s: float,
                    context: FaultContext | None = None) -> tuple[str, ...]:
        """Inject ``fault`` acting on ``context`` (the run's own when None; reverted at the
        latest when the run closes); its targets."""
        key = self.injector.start(fault, max_duration_s=max_duration_s,
                                  context=context or self.fault_context())
        return self.injector.record(key).targets

    def not_ready_targets(self) -> list[str]:
        """Every node a fault of this run must turn NotReady."""
        return sorted({t for r in self.injector.records if r.causes(Effect.NODES_NOT_READY)
                       for t in r.targets})

    def stop_faults(self, kind: str = "") -> list[FaultRecord]:
        """Revert the active faults of ``kind`` (all when empty); their records."""
        return self.injector.revert_all(kind)

    def save_history(self, traffic: RegisterTraffic) -> History:
        """Stop the register traffic and save its history next to the timeline."""
        self.history = traffic.stop()
        artefacts.save_history(self.workdir, self.history)
        return self.history

    def delete_namespace(self, namespace: str) -> None:
        """Delete ``namespace`` (gone already is fine), not waiting for it to go."""
        try:
            client.CoreV1Api(self.api).delete_namespace(namespace)
        except client.ApiException as exc:
            if exc.status != 404:
                raise

    def close(self) -> None:
        """Revert every active fault, stop what the activities started (newest first) and
        the recorders; every step runs even if an earlier one fails (``problems``)."""
        steps: list[tuple[str, Callable[[], object]]] = [
            ("revert faults", self.injector.revert_all),
            *((f"stop {started.what}", started.stop) for started in reversed(self.started)),
            *((f"stop {type(r).__name__}", r.stop) for r in reversed(self.recorders))]
        for step, undo in steps:
            try:
                undo()
            except Exception as exc:  # kept in problems (fails the verdict): all steps run
                log.error("closing the chaos run: %s failed: %s", step, exc)
                self.problems.append(f"{step}: {type(exc).__name__}: {exc}")
        self.recorders.clear()

    def end(self, progress: Progress) -> list[str]:
        """Close the zoneproof run this run opened (undoing what it still holds); the
        problems met. A run it joined is left to its owner."""
        opened, self._opened = self._opened, None
        return runs.close(progress) if opened is not None else []


def named(run: ExperimentRun, stem: str) -> str:
    """``stem`` with the run's suffix: a name (a namespace, a webhook registration) of this
    run's own, on a cluster other runs and tests may share."""
    return f"{stem}{run.namespace.removeprefix(run.config.namespace)}"


def experiment_namespace(name: str, workloads: str) -> bool:
    """Whether namespace ``name`` is one an experiment makes (``workloads``: the configured
    namespace), not a test's own: on a user's cluster other tests' namespaces live beside."""
    return any(name.startswith(f"{stem}-") for stem in (workloads, *NAMESPACE_STEMS))
