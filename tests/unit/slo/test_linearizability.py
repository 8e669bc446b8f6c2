"""porcupine-check on hand-made register histories: legal ones pass, illegal ones are caught
with the operations involved named, undecided ones never pass, thin traffic is void."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.binaries import resolve
from zoneproof.faults import Effect, FaultRecord
from zoneproof.measure import Timeline
from zoneproof.measure.history import History, Operation, OpKind, Outcome, ReadMode, TrafficPlan
from zoneproof.slo import Evidence, FindingKind, SloStatus, figures, judge, load_slos
from zoneproof.slo import linearizability as lin

GET, PUT, CAS, DELETE = OpKind.GET, OpKind.PUT, OpKind.CAS, OpKind.DELETE
OK, NOT_FOUND, CONFLICT = Outcome.OK, Outcome.NOT_FOUND, Outcome.CONFLICT
UNKNOWN, FAILED = Outcome.UNKNOWN, Outcome.FAILED
PLAN = TrafficPlan("ns", ("k",), 3, 150.0, 100.0, ReadMode.QUORUM, 0)
SLO = load_slos().get("history-linearizable")


def _op(client: int, kind: OpKind, call: float, ret: float, outcome: Outcome = OK, *,
        value: str = "", rv: int | None = None, expected: int | None = None,
        key: str = "k") -> Operation:
    return Operation(0, client, key, kind, call, ret, outcome, value,
                     "" if expected is None else str(expected), "" if rv is None else str(rv))


def history(*ops: Operation) -> History:
    """Operations numbered in the order given (the tests give them in invoke order)."""
    return History(PLAN, "2026-01-01T00:00:00+00:00",
                   tuple(Operation(n, *_rest(op)) for n, op in enumerate(ops)))


def _rest(op: Operation) -> tuple[object, ...]:
    return (op.client, op.key, op.kind, op.call, op.ret, op.outcome, op.value, op.expected_rv,
            op.rv, op.error)


@pytest.fixture(scope="module")
def checker() -> Path:
    """The real porcupine-check (built from its Go module on first use)."""
    return resolve.resolve(lin.CHECKER, progress=lambda _: None)


def verdict(h: History, tmp_path: Path, checker: Path, **kwargs: float) -> lin.CheckReport:
    return lin.check(h, tmp_path, checker=checker, **kwargs)


WRITE_THEN_READ = (_op(0, PUT, 0, 1, value="a", rv=10), _op(0, PUT, 2, 3, value="b", rv=11))


# -- legal histories ---------------------------------------------------------------------

def test_reads_after_acknowledged_writes_see_them(tmp_path: Path, checker: Path) -> None:
    h = history(*WRITE_THEN_READ, _op(1, GET, 4, 5, value="b", rv=11),
                _op(2, CAS, 6, 7, value="c", rv=12, expected=11),
                _op(1, CAS, 8, 9, CONFLICT, value="d", expected=11),
                _op(2, DELETE, 10, 11), _op(1, GET, 12, 13, NOT_FOUND),
                _op(0, CAS, 14, 15, NOT_FOUND, value="e", expected=12))
    report = verdict(h, tmp_path, checker)
    assert report.non_linearizable_keys == 0.0
    assert [k.result for k in report.keys] == [lin.KeyResult.OK]
    assert lin.judge(SLO, h, report, fault_at=None).status is SloStatus.PASS
    shown = lin.figures(h, report, fault_at=12.5)
    assert (shown.operations, shown.checked, shown.non_linearizable_keys) == (8, 8, 0.0)
    assert shown.ops_per_s_before_fault == 2 / 4 and shown.read_mode == "quorum"  # its last 4 s


def test_a_read_concurrent_with_a_write_may_see_either_value(tmp_path: Path,
                                                            checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10), _op(0, PUT, 2, 6, value="b", rv=11),
                _op(1, GET, 3, 4, value="a", rv=10), _op(2, GET, 3.5, 4.5, value="b", rv=11))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 0.0


def test_an_unknown_write_that_may_have_applied_is_legal_either_way(tmp_path: Path,
                                                                    checker: Path) -> None:
    """A timed-out put whose value a later read sees, and one nobody ever sees, both fit."""
    h = history(_op(0, PUT, 0, 1, value="a", rv=10),
                _op(1, PUT, 2, 3, UNKNOWN, value="lost?"),
                _op(2, PUT, 4, 5, UNKNOWN, value="seen"),
                _op(0, GET, 6, 7, value="seen", rv=14),
                _op(0, CAS, 8, 9, value="c", rv=15, expected=14),
                _op(1, GET, 10, 11, value="c", rv=15))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 0.0


def test_an_unknown_cas_and_an_unknown_delete_may_have_applied(tmp_path: Path,
                                                               checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10),
                _op(1, CAS, 2, 3, UNKNOWN, value="b", expected=10),
                _op(0, GET, 4, 5, value="b", rv=12),
                _op(2, DELETE, 6, 7, UNKNOWN),
                _op(0, GET, 8, 9, NOT_FOUND))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 0.0


def test_failed_operations_had_no_effect(tmp_path: Path, checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10), _op(1, PUT, 2, 3, FAILED, value="never"),
                _op(2, GET, 2.5, 3.5, FAILED), _op(0, GET, 4, 5, value="a", rv=10))
    report = verdict(h, tmp_path, checker)
    assert report.non_linearizable_keys == 0.0 and report.operations == 2


# -- illegal histories -------------------------------------------------------------------

def test_a_stale_read_after_an_acknowledged_write_is_caught_and_named(tmp_path: Path,
                                                                      checker: Path) -> None:
    h = history(*WRITE_THEN_READ, _op(1, GET, 4, 5, value="a", rv=10),
                _op(2, GET, 6, 7, NOT_FOUND, key="other"))
    report = verdict(h, tmp_path, checker, faults=[FaultRecord(
        "kill-etcd-member", (Effect.ETCD_MEMBERS_DOWN,), ("etcd-0",), 1.5, 3.5)])
    assert report.non_linearizable_keys == 1.0
    (bad,) = report.of(lin.KeyResult.ILLEGAL)
    assert (bad.key, bad.last_linearized, bad.frontier, bad.state) == ("k", 1, (2,), "b@11")
    assert bad.visualization is not None and bad.visualization.is_file()
    assert "kill-etcd-member" in bad.visualization.read_text()
    result = lin.judge(SLO, h, report, fault_at=None)
    assert result.status is SloStatus.FAIL and result.observed == 1.0
    assert "#1 client 0 k: put(b) -> ok@11" in result.message
    assert "#2 client 1 k: get() -> a@10 [4.000-5.000 s]" in result.message


def test_a_lost_cas_is_caught(tmp_path: Path, checker: Path) -> None:
    """Two compare-and-sets from the same resourceVersion cannot both succeed."""
    h = history(_op(0, PUT, 0, 1, value="a", rv=10),
                _op(1, CAS, 2, 3, value="b", rv=11, expected=10),
                _op(2, CAS, 4, 5, value="c", rv=12, expected=10))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 1.0


def test_a_read_after_an_acknowledged_delete_must_not_see_the_object(tmp_path: Path,
                                                                     checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10), _op(0, DELETE, 2, 3),
                _op(1, GET, 4, 5, value="a", rv=10))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 1.0


def test_resource_versions_must_grow_with_the_writes(tmp_path: Path, checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10), _op(1, PUT, 2, 3, value="b", rv=9))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 1.0


def test_a_value_never_written_is_caught(tmp_path: Path, checker: Path) -> None:
    h = history(_op(0, PUT, 0, 1, value="a", rv=10), _op(1, GET, 2, 3, value="ghost", rv=10))
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 1.0


# -- never a silent pass -----------------------------------------------------------------

def _big_history(ops_per_client: int = 400) -> History:
    ops: list[Operation] = []
    for n in range(ops_per_client):
        for client in range(4):
            t = n * 1.0 + client * 0.1
            ops.append(_op(client, PUT, t, t + 0.5, UNKNOWN, value=f"c{client}-{n}"))
    return history(*ops)


def test_a_check_out_of_time_is_undecided_and_does_not_pass(tmp_path: Path,
                                                            checker: Path) -> None:
    h = _big_history()
    report = verdict(h, tmp_path, checker, timeout_s=1e-9)
    assert [k.result for k in report.keys] == [lin.KeyResult.UNKNOWN]
    assert report.non_linearizable_keys is None
    result = lin.judge(SLO, h, report, fault_at=None)
    assert result.status is SloStatus.NO_DATA and not result.met
    assert "did not finish within" in result.message


def test_an_illegal_key_counts_even_when_another_is_undecided() -> None:
    report = lin.CheckReport((lin.KeyCheck("a", lin.KeyResult.ILLEGAL, 3, 0.1),
                              lin.KeyCheck("b", lin.KeyResult.UNKNOWN, 3, 9.0)), 6, 9.0, 9.0, "")
    assert report.non_linearizable_keys == 1.0
    empty = lin.CheckReport((), 0, 0.0, 9.0, "")
    assert empty.non_linearizable_keys is None


def test_traffic_under_its_minimum_rate_before_the_fault_is_void() -> None:
    thin = history(*(_op(0, GET, t, t + 0.01, NOT_FOUND) for t in range(10)))  # 1 op/s
    report = lin.CheckReport((lin.KeyCheck("k", lin.KeyResult.OK, 10, 0.1),), 10, 0.1, 9.0, "")
    result = lin.judge(SLO, thin, report, fault_at=9.5)
    assert result.status is SloStatus.VOID and not result.met
    assert result.message.startswith("void:") and "100 ops/s" in result.message
    assert lin.judge(SLO, history(), report, fault_at=9.5).status is SloStatus.VOID
    dense = history(*(_op(0, GET, t / 200, t / 200 + 0.001, NOT_FOUND) for t in range(400)))
    assert lin.judge(SLO, dense, report, fault_at=2.0).status is SloStatus.PASS
    # the 4 s before the fault decide: a slow start is forgiven, a stall before it is not
    late = history(*(_op(0, GET, t, t + 0.01, NOT_FOUND) for t in range(6)),
                   *(_op(0, GET, 6 + t / 200, 6.001 + t / 200, NOT_FOUND) for t in range(1000)))
    assert lin.judge(SLO, late, report, fault_at=11.0).status is SloStatus.PASS
    stalled = history(*(_op(0, GET, t / 200, t / 200 + 0.001, NOT_FOUND) for t in range(2000)),
                      _op(0, GET, 10.5, 10.6, NOT_FOUND))
    void = lin.judge(SLO, stalled, report, fault_at=14.0)
    assert void.status is SloStatus.VOID and "in the 4 s before the fault ran 0.2 ops/s" in \
        void.message, void.message


def test_a_non_numeric_resource_version_is_a_clear_error() -> None:
    with pytest.raises(errors.ConfigError, match="not an integer"):
        lin.prepare(history(Operation(0, 0, "k", PUT, 0, 1, OK, "a", "", "abc")))


# -- preparing the checker's input -------------------------------------------------------

def test_prepare_drops_what_had_no_effect_and_patches_writes_a_read_proved() -> None:
    h = history(_op(0, PUT, 0, 1, UNKNOWN, value="x"),
                _op(0, GET, 2, 3, FAILED),
                _op(1, PUT, 2, 3, FAILED, value="y"),
                _op(0, PUT, 4, 5, UNKNOWN, value="z"),
                _op(2, GET, 6, 7, value="x", rv=12),
                _op(2, GET, 6.5, 8, value="x", rv=12))
    prepared = {p["id"]: p for p in lin.prepare(h)}
    assert sorted(prepared) == [0, 3, 4, 5]
    assert (prepared[0]["outcome"], prepared[0]["rv"], prepared[0]["return"]) == ("ok", 12, 7 * 10**9)
    assert (prepared[3]["outcome"], prepared[3]["return"]) == ("unknown", None)
    # after an unknown write the client continues under a new id
    assert prepared[0]["client"] != prepared[3]["client"]


# -- histories recorded on a real local bed ----------------------------------------------

DATA = Path(__file__).parents[2] / "data" / "histories"


def test_recorded_quorum_reads_stay_linearizable(tmp_path: Path, checker: Path) -> None:
    """The first 4 s of a quorum-read run (traffic of tests/integration/test_history.py)."""
    h = History.load(DATA / "quorum-local-bed.json")
    assert h.plan.read_mode is ReadMode.QUORUM and len(h.operations) > 150
    assert verdict(h, tmp_path, checker).non_linearizable_keys == 0.0


def test_recorded_informer_reads_are_caught_stale(tmp_path: Path, checker: Path) -> None:
    """The first 4 s of an informer-read run: its cache lagged acknowledged writes."""
    h = History.load(DATA / "informer-local-bed.json")
    report = verdict(h, tmp_path, checker)
    assert report.non_linearizable_keys == 4.0
    stuck = [h.operations[i] for k in report.of(lin.KeyResult.ILLEGAL) for i in k.frontier]
    assert any(op.kind is GET for op in stuck)


# -- the SLO through the run's evidence (slo.figures.result) ------------------------------

def _evidence(h: History | None, report: lin.CheckReport | None,
              *faults_at: float) -> Evidence:
    faults = tuple(FaultRecord("kill-etcd-leader", (Effect.ETCD_MEMBERS_DOWN,), ("etcd-0",),
                               t, t + 3) for t in faults_at)
    return Evidence(Timeline(), faults, "ns", history=h, history_check=report)


OK_REPORT = lin.CheckReport((lin.KeyCheck("k", lin.KeyResult.OK, 400, 0.1),), 400, 0.2, 60.0,
                            "v1.3.1")


def test_the_history_slo_judges_itself_from_the_evidence() -> None:
    dense = history(*(_op(0, GET, t / 200, t / 200 + 0.001, NOT_FOUND) for t in range(400)),
                    *(_op(0, GET, t, t + 0.001, NOT_FOUND) for t in range(3, 30)))
    passed = figures.result(SLO, _evidence(dense, OK_REPORT, 20.0, 2.0))  # the earliest counts
    assert passed.status is SloStatus.PASS and passed.observed == 0.0
    void = figures.result(SLO, _evidence(dense, OK_REPORT, 20.0))  # 21 ops/s until then
    assert void.status is SloStatus.VOID and void.message.startswith("void:")
    findings = judge({"status": "completed"}, [void]).findings
    assert [(f.kind, f.subject) for f in findings if f.kind is FindingKind.VOID] == [
        (FindingKind.VOID, "history-linearizable")]
    assert "void: history-linearizable: void: the traffic" in judge(
        {"status": "completed"}, [void]).summary()
    unchecked = figures.result(SLO, _evidence(dense, None, 2.0))
    assert unchecked.status is SloStatus.NO_DATA
    no_traffic = figures.result(SLO, _evidence(None, None, 2.0))
    assert no_traffic.status is SloStatus.NO_DATA and not no_traffic.met
    assert figures.compute(SLO.metric, _evidence(dense, OK_REPORT, 2.0)) == 0.0


def test_history_figures_without_a_check() -> None:
    dense = history(*(_op(0, GET, t / 200, t / 200 + 0.001, NOT_FOUND) for t in range(400)))
    shown = lin.figures(dense, None, fault_at=1.0)
    assert (shown.operations, shown.checked, shown.check_seconds) == (400, None, None)
    assert shown.ops_per_s is not None and shown.ops_per_s > 190
    assert shown.ops_per_s_before_fault == 200.0 and shown.illegal == {}
