"""Every broken variant differs observably from the reference, through ``cli.wire``."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from typing import Any, NoReturn

import pytest
from kubernetes.client.exceptions import ApiException

from zoneproof import errors
from zoneproof._util import waiting
from zoneproof.components.reference.ha_controller import cli, leader, variants
from zoneproof.components.reference.ha_controller.testing import (
    FakeClock,
    FakeCoreApi,
    FakeLeaseApi,
    WatchFactory,
    node,
    to_model,
)


class Replica:
    """One wired replica on shared fakes; elector stepped and worker drained by hand."""

    def __init__(self, variant: str, core: FakeCoreApi, leases: FakeLeaseApi,
                 clock: FakeClock, *, identity: str = "me", namespaces: str = "a") -> None:
        self.core = core
        self.exits: list[int] = []
        opts = cli.parse_options(cli.build_parser().parse_args([
            "--namespaces", namespaces, "--identity", identity, "--lease-name", "ha",
            "--lease-namespace", "zp", "--variant", variant]))
        self.parts = cli.wire(opts, core=core, leases=leases, exit_now=self._exit, clock=clock)

    def _exit(self, code: int) -> NoReturn:
        self.exits.append(code)
        raise SystemExit(code)

    def step(self) -> None:
        if self.parts.elector is not None:
            with contextlib.suppress(SystemExit):  # the fake exit_now
                self.parts.elector.step()

    def start(self) -> None:
        self.step()
        for watch in self.parts.watches:  # nodes (→ reconcile), then pods (→ cache synced)
            watch.relist("start")
        self.core.pod_listeners.append(self.parts.pods.apply)  # the pod watch, without lag
        self.parts.controller.process_pending()

    def set_ready(self, name: str, status: str) -> None:
        self.core.nodes[name] = node(name, status)
        self.parts.controller.observe_event("MODIFIED", to_model(self.core.nodes[name], "V1Node"))
        self.parts.controller.process_pending()


def cluster() -> FakeCoreApi:
    core = FakeCoreApi()
    core.add_node("n1")
    core.add_pod("a", "noobaa-0", "n1")
    core.add_pod("a", "web-0", "n1", {"app": "web"})
    return core


def deleted(core: FakeCoreApi) -> list[str]:
    return [d.name for d in core.deletes]


def bound_after_failure(variant: str) -> tuple[FakeCoreApi, Replica]:
    """n1 went NotReady (its pods deleted), then a matching pod is bound to it."""
    core = cluster()
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", "False")
    core.deletes.clear()
    core.add_pod("a", "noobaa-1", "n1")
    return core, r


def acts_on_recovery(variant: str) -> object:
    core, r = bound_after_failure(variant)
    r.set_ready("n1", "True")
    return deleted(core)


def acts_on_not_ready_change(variant: str) -> object:
    """n1 went False (its pods deleted), a matching pod was bound to it, then Unknown."""
    core, r = bound_after_failure(variant)
    r.set_ready("n1", "Unknown")
    return deleted(core)


def deleted_on_failure(variant: str, status: str = "False") -> object:
    core = cluster()
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", status)
    return deleted(core)


def grace_periods(variant: str) -> object:
    core = cluster()
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", "False")
    return [d.grace_period_seconds for d in core.deletes]


def standby_acts(variant: str) -> object:
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    Replica("reference", core, leases, clock, identity="other").step()  # holds the Lease
    r = Replica(variant, core, leases, clock)
    r.start()
    r.set_ready("n1", "False")
    return deleted(core)


def after_lease_loss(variant: str) -> object:
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    r = Replica(variant, core, leases, clock)
    r.start()
    leases.fail = ApiException(status=500, reason="apiserver down")
    clock.advance(10)
    r.step()
    if r.exits:  # the real process is gone here (os._exit)
        return (r.exits, [])
    r.set_ready("n1", "False")
    return (r.exits, deleted(core))


def acts_unrenewed(variant: str) -> object:
    """Leader, then no renewal for longer than the renew deadline (a hung renew loop)."""
    core, clock = cluster(), FakeClock()
    r = Replica(variant, core, FakeLeaseApi(), clock)
    r.start()
    clock.advance(20)
    r.set_ready("n1", "False")
    return deleted(core)


def already_down_at_start(variant: str) -> object:
    core = cluster()
    core.nodes["n1"] = node("n1", "False")
    Replica(variant, core, FakeLeaseApi(), FakeClock()).start()
    return deleted(core)


def lease_after_shutdown(variant: str) -> object:
    core, leases = cluster(), FakeLeaseApi()
    stop = threading.Event()
    opts = cli.parse_options(cli.build_parser().parse_args([
        "--namespaces", "a", "--identity", "me", "--lease-name", "ha", "--lease-namespace", "zp",
        "--lease-duration", "2", "--renew-deadline", "1", "--retry-period", "0.05",
        "--variant", variant]))
    rc: list[int] = []
    thread = threading.Thread(target=lambda: rc.append(cli.run(
        opts, core=core, leases=leases, stop=stop, watch_factory=WatchFactory(),
        pod_watch_factory=WatchFactory())))
    thread.start()
    try:
        waiting.wait_for(lambda: (("zp", "ha") in leases.store, leases.calls),
                         what="lease acquired", timeout_s=10, interval_s=0.02)
    finally:
        stop.set()
        thread.join(10)
    return (rc, leases.spec()["holderIdentity"])


def zone_neighbour(variant: str) -> object:
    """n1 and n2 share a zone; only n1 fails: nothing of n2's goes."""
    def zoned(name: str, ready: str) -> dict[str, Any]:
        raw = node(name, ready)
        raw["metadata"]["labels"] = {"topology.kubernetes.io/zone": "z"}
        return raw

    core = cluster()
    core.nodes = {name: zoned(name, "True") for name in ("n1", "n2")}
    core.add_pod("a", "noobaa-n2", "n2")
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    core.nodes["n1"] = zoned("n1", "False")
    r.parts.controller.observe_event("MODIFIED", to_model(core.nodes["n1"], "V1Node"))
    r.parts.controller.process_pending()
    return [d for d in deleted(core) if d != "noobaa-0"]


def two_namespaces(variant: str) -> object:
    core = cluster()
    core.add_pod("b", "noobaa-b", "n1")
    r = Replica(variant, core, FakeLeaseApi(), FakeClock(), namespaces="a,b")
    r.start()
    r.set_ready("n1", "False")
    return sorted(deleted(core))


def catch_up_order(variant: str) -> object:
    """A node already NotReady; the Lease expired: the take-over comes before any delete."""
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    core.nodes["n1"] = node("n1", "False")
    Replica("reference", core, leases, clock, identity="old").step()  # holds it, then dies
    r = Replica(variant, core, leases, clock)
    r.start()  # caches synced; the Lease is still the old holder's
    clock.advance(20)
    order: list[str] = []
    core.on_delete = lambda call: order.append(f"delete {call.name}")
    leases.before_replace = lambda: order.append("lease")
    r.step()
    r.parts.controller.process_pending()
    return order[:2]


def bound_before_fence(variant: str) -> object:
    """A pod bound to n1 after its NotReady flip, before kcm's taint: freed at the taint."""
    core = cluster()
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", "False")
    core.add_pod("a", "noobaa-1", "n1")
    core.nodes["n1"] = node("n1", "False", taints=("node.kubernetes.io/not-ready:NoSchedule",))
    r.parts.controller.observe_event("MODIFIED", to_model(core.nodes["n1"], "V1Node"))
    r.parts.controller.process_pending()
    return deleted(core)


def standby_after_release(variant: str) -> object:
    """A standby sees the leader renew, tries again later: the leader has released since."""
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    holder = Replica("reference", core, leases, clock, identity="other")
    holder.step()
    standby = Replica(variant, core, leases, clock)
    standby.step()  # held by "other": not won
    clock.advance(1)
    holder.step()  # renewed
    standby.step()  # sees the renewal
    assert holder.parts.elector is not None and holder.parts.elector.release()
    clock.advance(1)
    standby.step()
    return leases.spec()["holderIdentity"]


def standby_finds_a_holder(variant: str) -> object:
    """A standby's first attempt finds the Lease held by a healthy leader."""
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    Replica("reference", core, leases, clock, identity="other").step()
    standby = Replica(variant, core, leases, clock)
    standby.step()
    return standby.exits


def standby_after_holder_died(variant: str, silent_s: float = 20) -> object:
    """The holder stops renewing (it died); the standby observes, ``silent_s`` pass."""
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    Replica("reference", core, leases, clock, identity="other").step()
    standby = Replica(variant, core, leases, clock)
    standby.step()
    clock.advance(silent_s)
    standby.step()
    return leases.spec()["holderIdentity"]


def other_namespace(variant: str) -> object:
    core = cluster()
    core.add_pod("z", "noobaa-z", "n1")
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", "False")
    return sorted(deleted(core))


def bound_long_after(variant: str) -> object:
    """A pod bound to the NotReady node after its transition, the leader working on (its
    dispatcher runs for 3.5 s: a periodic resync would come in that time)."""
    core, r = bound_after_failure(variant)
    worker = threading.Thread(target=r.parts.controller.run_worker, daemon=True)
    worker.start()
    threading.Event().wait(3.5)
    r.parts.controller.pool.run_pending()
    r.parts.controller.stop(timeout_s=1)
    worker.join(2)
    return deleted(core)


def terminating_on_failure(variant: str) -> object:
    """A selected pod already deleted gracefully (it hangs Terminating on a dead node)."""
    core = cluster()
    core.pods[("a", "noobaa-0")]["metadata"]["deletionTimestamp"] = "2026-12-07T10:00:00Z"
    r = Replica(variant, core, FakeLeaseApi(), FakeClock())
    r.start()
    r.set_ready("n1", "False")
    return deleted(core)


SCENARIOS: dict[str, tuple[Callable[[str], object], object]] = {
    "acts-on-recovery": (acts_on_recovery, []),
    "acts-on-not-ready-change": (acts_on_not_ready_change, []),
    "ignores-selector": (deleted_on_failure, ["noobaa-0"]),
    "graceful-delete": (grace_periods, [0]),
    "no-leader-election": (standby_acts, []),
    "survives-lease-loss": (after_lease_loss, ([cli.EXIT_LEASE_LOST], [])),
    "no-reconcile": (already_down_at_start, ["noobaa-0"]),
    "ignores-unknown": (lambda v: deleted_on_failure(v, "Unknown"), ["noobaa-0"]),
    "no-release-on-shutdown": (lease_after_shutdown, ([cli.EXIT_OK], "")),
    "acts-on-expired-lease": (acts_unrenewed, []),
    "ignores-false": (deleted_on_failure, ["noobaa-0"]),
    "deletes-zone": (zone_neighbour, []),
    "namespaces-one-string": (two_namespaces, ["noobaa-0", "noobaa-b"]),
    "acts-before-lease": (catch_up_order, ["lease", "delete noobaa-0"]),
    "gives-up-as-standby": (standby_after_release, "me"),
    "exits-as-standby": (standby_finds_a_holder, []),
    "takes-only-released": (standby_after_holder_died, "me"),
    "takes-lease-early": (lambda v: standby_after_holder_died(v, 10), "other"),
    "every-namespace": (other_namespace, ["noobaa-0"]),
    "periodic-resync": (bound_long_after, []),
    "skips-terminating": (terminating_on_failure, ["noobaa-0"]),
}


def test_the_reference_frees_a_pod_bound_before_the_fence_when_it_lands() -> None:
    """Its choice (the seeds filter the fence event out: no broken variant without it)."""
    assert bound_before_fence("reference") == ["noobaa-0", "noobaa-1"]


def test_every_broken_variant_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(variants.VARIANTS) - {"reference"}
    assert len(SCENARIOS) >= 6


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_variant_differs_from_reference(name: str) -> None:
    scenario, expected = SCENARIOS[name]
    assert scenario("reference") == expected
    broken = scenario(name)
    assert broken != expected, f"{name} is indistinguishable from reference"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_broken_variant_flips_exactly_one_flag(name: str) -> None:
    behaviour = variants.get_variant(name).behaviour
    flipped = [f.name for f in dataclasses.fields(variants.Behaviour)
               if getattr(behaviour, f.name) != f.default]
    assert len(flipped) == 1


def test_unknown_variant_lists_names() -> None:
    with pytest.raises(errors.ConfigError, match="reference, acts-on-recovery"):
        variants.get_variant("nope")


def test_reference_is_default_behaviour() -> None:
    assert variants.REFERENCE.behaviour == variants.Behaviour()


def test_no_leader_election_has_no_elector() -> None:
    r = Replica("no-leader-election", cluster(), FakeLeaseApi(), FakeClock())
    assert r.parts.elector is None
    assert r.parts.gate.current() == leader.Leadership("me", None)


def test_lease_loss_exits_before_any_further_delete() -> None:
    core, leases, clock = cluster(), FakeLeaseApi(), FakeClock()
    r = Replica("reference", core, leases, clock)
    r.start()
    leases.fail = ApiException(status=500, reason="down")
    clock.advance(10)
    r.step()
    assert r.exits == [cli.EXIT_LEASE_LOST]
    r.set_ready("n1", "False")  # even if the process somehow lived on
    assert deleted(core) == []
