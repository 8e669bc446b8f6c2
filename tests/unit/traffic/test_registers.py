"""Register traffic's pure parts: outcome of a failed request, pacing, settings, what a
client remembers for its next compare-and-set."""

import threading

import pytest
import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof.measure.history import Operation, OpKind, Outcome
from zoneproof.traffic import registers
from zoneproof.traffic.registers import TrafficSettings, classify

_REFUSED = urllib3.exceptions.NewConnectionError(None, "Connection refused")  # type: ignore[arg-type]


@pytest.mark.parametrize(("exc", "kind", "outcome"), [
    (client.ApiException(status=404), OpKind.GET, Outcome.NOT_FOUND),
    (client.ApiException(status=404), OpKind.CAS, Outcome.NOT_FOUND),
    (client.ApiException(status=404), OpKind.PUT, Outcome.FAILED),  # apply creates: namespace gone
    (client.ApiException(status=409), OpKind.CAS, Outcome.CONFLICT),
    (client.ApiException(status=409), OpKind.PUT, Outcome.FAILED),
    (client.ApiException(status=429), OpKind.PUT, Outcome.FAILED),
    (client.ApiException(status=500), OpKind.PUT, Outcome.UNKNOWN),
    (client.ApiException(status=504), OpKind.DELETE, Outcome.UNKNOWN),
    (client.ApiException(status=0), OpKind.CAS, Outcome.UNKNOWN),
    (urllib3.exceptions.MaxRetryError(None, "/", _REFUSED), OpKind.PUT, Outcome.FAILED),  # type: ignore[arg-type]
    (_REFUSED, OpKind.DELETE, Outcome.FAILED),
    (urllib3.exceptions.MaxRetryError(None, "/", urllib3.exceptions.ProtocolError("reset")),  # type: ignore[arg-type]
     OpKind.PUT, Outcome.UNKNOWN),
    (urllib3.exceptions.ReadTimeoutError(None, "/", "read timed out"), OpKind.CAS,  # type: ignore[arg-type]
     Outcome.UNKNOWN),
    (ConnectionResetError(), OpKind.PUT, Outcome.UNKNOWN),
])
def test_a_write_is_unknown_unless_it_certainly_did_not_reach_etcd(
        exc: BaseException, kind: OpKind, outcome: Outcome) -> None:
    assert classify(exc, kind)[0] is outcome


def test_the_pacer_hands_out_slots_at_the_rate_without_bursting_after_a_stall() -> None:
    now = [100.0]
    pacer = registers._Pacer(10.0, clock=lambda: now[0])
    waits: list[float] = []

    class _Stop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(round(timeout or 0.0, 6))
            return False

    stop = _Stop()
    assert pacer.wait(stop) and pacer.wait(stop) and pacer.wait(stop)
    assert waits == [0.0, 0.1, 0.2]
    now[0] = 105.0  # a stall: the next slot is now, then one every 0.1 s again
    pacer.wait(stop)
    pacer.wait(stop)
    assert waits[3:] == [0.0, 0.1]


def test_settings_name_every_problem() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        TrafficSettings("ns", keys=0, rate_ops_s=50, min_rate_ops_s=100, mix=(1, 0, 0))
    message = str(caught.value)
    assert "keys and clients" in message and "min_rate_ops_s" in message and "mix" in message
    settings = TrafficSettings("ns", 100.0, keys=3)
    assert settings.key_names == ("r-0", "r-1", "r-2")
    assert settings.plan().min_rate_ops_s == 100.0 and settings.rate_ops_s >= 100


def _op(kind: OpKind, outcome: Outcome, rv: str = "") -> Operation:
    return Operation(0, 0, "k", kind, 0.0, 1.0, outcome, rv=rv)


@pytest.mark.parametrize(("op", "remembered"), [
    (_op(OpKind.GET, Outcome.OK, "5"), "5"),
    (_op(OpKind.PUT, Outcome.OK, "6"), "6"),
    (_op(OpKind.GET, Outcome.NOT_FOUND), None),
    (_op(OpKind.DELETE, Outcome.OK), None),
    (_op(OpKind.CAS, Outcome.CONFLICT), None),
    (_op(OpKind.PUT, Outcome.UNKNOWN), None),
    (_op(OpKind.GET, Outcome.UNKNOWN), "1"),
    (_op(OpKind.PUT, Outcome.FAILED), "1"),
])
def test_a_client_remembers_the_resource_version_it_last_saw(op: Operation,
                                                            remembered: str | None) -> None:
    known = {"k": "1"}
    registers._remember(known, op)
    assert known.get("k") == remembered


def test_every_backend_floor_is_under_the_traffic_rate_and_the_local_bed_keeps_100() -> None:
    """A floor above the rate the traffic aims at would void every history; the local bed
    keeps the issue's (and etcd robustness') 100 ops/s."""
    from zoneproof.cluster import registry

    rate = TrafficSettings("ns", 1.0).rate_ops_s
    floors = {name: registry.backend_type(name).traits.history_min_rate_ops_s
              for name in registry.names()}
    assert all(0 < floor < rate for floor in floors.values()), floors
    assert floors["local"] == 100.0


@pytest.mark.parametrize(("probing", "op", "after"), [
    (False, _op(OpKind.PUT, Outcome.UNKNOWN), True),
    (False, _op(OpKind.CAS, Outcome.UNKNOWN), True),
    (False, _op(OpKind.DELETE, Outcome.UNKNOWN), True),
    (False, _op(OpKind.PUT, Outcome.FAILED), False),  # certainly not applied: nothing pending
    (False, _op(OpKind.GET, Outcome.UNKNOWN), False),
    (True, _op(OpKind.GET, Outcome.UNKNOWN), True),
    (True, _op(OpKind.GET, Outcome.FAILED), True),
    (True, _op(OpKind.GET, Outcome.OK, "7"), False),
    (True, _op(OpKind.GET, Outcome.NOT_FOUND), False),
])
def test_a_client_probes_from_an_unknown_write_until_a_read_answers(
        probing: bool, op: Operation, after: bool) -> None:
    """Each unknown write stays pending in porcupine's search: one per client and outage."""
    assert registers.probing_after(probing, op) is after


def test_a_probing_client_only_reads() -> None:
    import random

    traffic = registers.RegisterTraffic.__new__(registers.RegisterTraffic)
    traffic.settings = TrafficSettings("ns", 100.0, mix=(0, 1, 1, 1))
    worker = registers._Client(0, None, random.Random(1), probing=True)  # type: ignore[arg-type]
    assert {traffic._choose(worker)[1] for _ in range(50)} == {OpKind.GET}
    worker.probing = False
    worker.known_rv = dict.fromkeys(traffic.settings.key_names, "1")  # a cas has its rv
    assert OpKind.GET not in {traffic._choose(worker)[1] for _ in range(50)}


def test_the_traffic_is_ready_once_its_last_4_s_ran_at_the_floor() -> None:
    """A fault comes only once the traffic runs at the rate its history is judged by (the
    4 s before the fault, ``History.rate_before``), not after a fixed pause."""
    import types

    clock = [0.0]
    traffic = registers.RegisterTraffic.__new__(registers.RegisterTraffic)
    traffic.settings = TrafficSettings("ns", 100.0)
    traffic.timeline = types.SimpleNamespace(now=lambda: clock[0], start_wall="")  # type: ignore[assignment]
    traffic._lock = threading.Lock()
    slow = [Operation(0, 0, "k", OpKind.GET, t / 20, t / 20 + 0.01, Outcome.OK) for t in range(60)]
    unknown = [Operation(0, 0, "k", OpKind.PUT, 3 + t / 200, 3.01 + t / 200, Outcome.UNKNOWN)
               for t in range(800)]
    traffic._operations = slow
    clock[0] = 2.9
    assert traffic.recent_rate() is None, "the first call is not 4 s old"
    assert traffic.wait_at_rate(timeout_s=0.3) is None
    clock[0] = 4.0
    assert traffic.recent_rate() == 60 / 4 and traffic.wait_at_rate(timeout_s=0.3) == 15.0
    traffic._operations = slow + unknown
    assert traffic.recent_rate() == 15.0, "unknown outcomes do not count"
    fast = [Operation(0, 0, "k", OpKind.GET, 3 + t / 200, 3.01 + t / 200, Outcome.OK)
            for t in range(800)]
    traffic._operations = slow + fast
    clock[0] = 7.01  # the last of them returned at 7.005
    assert traffic.wait_at_rate(timeout_s=5) == 200.0, "the last 4 s: 800 operations"
