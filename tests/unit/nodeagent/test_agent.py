"""The agent's loop against fake API objects and a fake host: act, report, revert, expire."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from kubernetes.client.rest import ApiException

from zoneproof.nodeagent import host
from zoneproof.nodeagent.agent import Agent
from zoneproof.nodeagent.logic import Choice
from zoneproof.nodeagent.protocol import (
    COMMAND_KEY,
    REPORT_KEY,
    Action,
    Command,
    Reason,
    Report,
    State,
)

#: What a stop-kubelet command runs does not depend on its id or bound.
STOP = Command("any", Action.STOP_KUBELET, 60)


class FakeApi:
    """One node's ConfigMap and the switch Lease, as the agent reads and patches them."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self.renew: datetime | None = None
        self.duration = 15
        self.down = False

    def read_namespaced_config_map(self, name: str, namespace: str) -> Any:
        if self.down:
            raise OSError("connection refused")
        return SimpleNamespace(data=dict(self.data))

    def patch_namespaced_config_map(self, name: str, namespace: str, body: dict[str, Any]) -> None:
        if self.down:
            raise OSError("connection refused")
        self.data.update(body["data"])

    def read_namespaced_lease(self, name: str, namespace: str) -> Any:
        if self.down:
            raise OSError("connection refused")
        if self.renew is None:
            raise ApiException(status=404)
        return SimpleNamespace(spec=SimpleNamespace(renew_time=self.renew,
                                                    lease_duration_seconds=self.duration))

    def renew_now(self, second: int) -> None:
        self.renew = datetime(2026, 1, 1, 0, 0, second % 60, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _agent(api: FakeApi, clock: Clock, ran: list[list[str]], fail: bool = False) -> Agent:
    def run(argv: list[str]) -> str:
        ran.append(argv)
        if fail:
            raise host.HostCommandError("systemctl: unit kubelet not found")
        return ""
    return Agent("n1", api, api, namespace="ns", clock=clock, wall=clock, run=run)  # type: ignore[arg-type]


def _report(api: FakeApi) -> Report:
    return Report.from_json(api.data[REPORT_KEY])


def test_acts_reports_and_reverts_on_command() -> None:
    api, clock, ran = FakeApi(), Clock(), []
    agent = _agent(api, clock, ran)
    api.renew_now(0)
    api.data[COMMAND_KEY] = Command("c1", Action.STOP_KUBELET, 60).to_json()
    assert agent.tick().choice is Choice.ACT
    assert ran == [host.apply_argv(STOP)]
    assert _report(api).state is State.ACTIVE and _report(api).acted_at == 1000.0
    clock.t += 1
    api.renew_now(1)
    assert agent.tick().choice is Choice.NOTHING
    del api.data[COMMAND_KEY]
    clock.t += 1
    assert agent.tick().choice is Choice.REVERT
    assert ran[-1] == host.revert_argv(STOP)
    report = _report(api)
    assert (report.state, report.reason, report.reverted_at) == (State.REVERTED, Reason.COMMANDED, 1002.0)


def test_reverts_by_itself_when_the_switch_is_not_renewed_even_with_the_api_unreachable() -> None:
    api, clock, ran = FakeApi(), Clock(), []
    agent = _agent(api, clock, ran)
    api.renew_now(0)
    api.data[COMMAND_KEY] = Command("c1", Action.STOP_KUBELET, 600).to_json()
    agent.tick()
    api.down = True  # the suite is gone and so is the network: nothing renews, nothing reads
    clock.t += 15
    assert agent.tick().choice is Choice.NOTHING
    clock.t += 1
    decision = agent.tick()
    assert (decision.choice, decision.reason) == (Choice.REVERT, Reason.SWITCH_EXPIRED)
    assert ran[-1] == host.revert_argv(STOP)
    api.down = False
    clock.t += 1
    agent.tick()  # the report that could not be written is written now, once
    assert _report(api).reason is Reason.SWITCH_EXPIRED
    assert len(ran) == 2  # the command still stands, but it is handled: never acted on again


def test_reverts_at_the_faults_deadline_while_the_switch_lives() -> None:
    api, clock, ran = FakeApi(), Clock(), []
    agent = _agent(api, clock, ran)
    api.data[COMMAND_KEY] = Command("c1", Action.STOP_KUBELET, 5).to_json()
    for second in range(8):
        api.renew_now(second)
        agent.tick()
        clock.t += 1
    assert _report(api).reason is Reason.DEADLINE
    assert ran == [host.apply_argv(STOP), host.revert_argv(STOP)]


def test_refuses_without_a_live_switch_and_reports_a_failed_host_command() -> None:
    api, clock, ran = FakeApi(), Clock(), []
    api.data[COMMAND_KEY] = Command("c1", Action.STOP_KUBELET, 5).to_json()
    _agent(api, clock, ran).tick()
    assert _report(api).state is State.REFUSED and ran == []
    api.renew_now(0)
    api.data[COMMAND_KEY] = Command("c2", Action.STOP_KUBELET, 5).to_json()
    _agent(api, clock, ran, fail=True).tick()
    assert _report(api).state is State.FAILED and "not found" in _report(api).error


def test_shutdown_reverts_what_is_active_and_a_restarted_agent_adopts_it() -> None:
    api, clock, ran = FakeApi(), Clock(), []
    agent = _agent(api, clock, ran)
    api.renew_now(0)
    api.data[COMMAND_KEY] = Command("c1", Action.STOP_KUBELET, 60).to_json()
    agent.tick()
    successor = _agent(api, clock, ran)  # the pod restarted mid-fault
    successor.adopt()
    del api.data[COMMAND_KEY]
    assert successor.tick().choice is Choice.REVERT
    api.data[COMMAND_KEY] = Command("c2", Action.STOP_KUBELET, 60).to_json()
    api.renew_now(1)
    successor.tick()
    successor.shutdown()
    assert _report(api).reason is Reason.AGENT_STOPPED
    assert ran[-1] == host.revert_argv(STOP)


def test_host_commands_enter_pid_1s_namespaces() -> None:
    argv = host.apply_argv(STOP)
    assert argv[:3] == ["nsenter", "--target", "1"] and argv[-3:] == ["systemctl", "stop", "kubelet"]
    assert host.revert_argv(STOP)[-3:] == ["systemctl", "start", "kubelet"]


def test_a_cut_runs_the_hosts_nft_on_its_endpoints_and_deletes_the_table_on_revert() -> None:
    """The kubelet-apiserver cut on a user's node: one nft transaction in the host's
    namespaces dropping, both ways, the API servers' endpoints the suite named and the
    server the host's kubelet is configured with (an HA control plane's load balancer);
    the revert deletes the table."""
    api, clock, ran = FakeApi(), Clock(), []
    answers = {"sed": "https://lb.example:6443\n",
               "getent": "172.18.0.9      STREAM lb.example\n172.18.0.9      DGRAM\n"}

    def run(argv: list[str]) -> str:
        ran.append(argv)
        return next((text for word, text in answers.items() if word in " ".join(argv)), "")

    agent = Agent("n1", api, api, namespace="ns", clock=clock, wall=clock, run=run)  # type: ignore[arg-type]
    api.renew_now(0)
    cut = Command("c1", Action.CUT_APISERVER, 60, endpoints=(("172.18.0.2", 6443),
                                                             ("fc00::2", 443)))
    api.data[COMMAND_KEY] = cut.to_json()
    assert agent.tick().choice is Choice.ACT
    nft = ran[-1]
    assert nft[:3] == ["nsenter", "--target", "1"] and nft[-2] == "nft"
    assert "output ip daddr { 172.18.0.2, 172.18.0.9 } tcp dport 6443 drop" in nft[-1]
    assert "input ip6 saddr { fc00::2 } tcp sport 443 drop" in nft[-1]
    del api.data[COMMAND_KEY]
    clock.t += 1
    api.renew_now(1)
    assert agent.tick().choice is Choice.REVERT
    assert ran[-1][-2:] == ["nft", "add table inet zoneproof; delete table inet zoneproof"]
    assert _report(api).state is State.REVERTED
