"""FairPool: round-robin across nodes, dedupe of pending tokens, stop, worker threads."""

from __future__ import annotations

import threading

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_controller.pool import FairPool


def queue_nodes(pool: FairPool, ran: list[str], nodes: int, per_node: int) -> None:
    for n in range(nodes):
        for p in range(per_node):
            name = f"n{n}/p{p}"
            assert pool.submit(f"n{n}", name, lambda name=name: ran.append(name))


def test_every_node_gets_its_first_task_before_any_gets_a_second() -> None:
    pool, ran = FairPool(4), []
    queue_nodes(pool, ran, nodes=100, per_node=17)
    assert pool.run_pending() == 1700
    assert ran[:100] == [f"n{n}/p0" for n in range(100)]
    assert ran[100:200] == [f"n{n}/p1" for n in range(100)]
    assert sorted(ran) == sorted(set(ran))


def test_a_node_queued_later_gets_its_first_task_next() -> None:
    pool, ran = FairPool(1), []
    queue_nodes(pool, ran, nodes=3, per_node=10)
    for _ in range(5):
        pool._run(*pool._next(block=False) or ())  # 5 of the 30 ran
    for p in range(2):
        pool.submit("late", f"late/p{p}", lambda p=p: ran.append(f"late/p{p}"))
    pool.run_pending()
    assert ran[5] == "late/p0", "the fresh node's first task goes next"
    assert 5 < ran.index("late/p1") <= 5 + 3 + 1, "then it takes its turn in the round"


def test_a_node_with_new_tasks_after_draining_is_fresh_again() -> None:
    pool, ran = FairPool(1), []
    pool.submit("n1", "a", lambda: ran.append("n1/a"))
    pool.run_pending()
    queue_nodes(pool, ran, nodes=2, per_node=3)  # n0, n1 queued; n1 is fresh again
    pool.run_pending()
    assert ran[1:3] == ["n0/p0", "n1/p0"]


def test_a_pending_token_is_not_queued_twice_but_may_be_queued_after() -> None:
    pool, ran = FairPool(1), []
    assert pool.submit("n1", "uid-1", lambda: ran.append("first"))
    assert not pool.submit("n1", "uid-1", lambda: ran.append("again"))
    assert pool.pending == 1
    pool.run_pending()
    assert pool.submit("n1", "uid-1", lambda: ran.append("later"))
    pool.run_pending()
    assert ran == ["first", "later"] and pool.pending == 0


def test_a_running_token_is_not_queued_twice() -> None:
    pool, ran = FairPool(1), []

    def task() -> None:
        ran.append("running")
        assert not pool.submit("n1", "uid-1", lambda: ran.append("duplicate"))

    pool.submit("n1", "uid-1", task)
    pool.run_pending()
    assert ran == ["running"]


def test_stop_drops_queued_tasks_and_waits_for_running_ones() -> None:
    pool, ran = FairPool(1), []
    started, release = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        release.wait(5)
        ran.append("slow")

    pool.submit("n1", "slow", slow)
    pool.submit("n1", "queued", lambda: ran.append("queued"))
    worker = threading.Thread(target=pool.work)
    worker.start()
    assert started.wait(5)
    assert not pool.stop(timeout_s=0.05), "a task is still running"
    release.set()
    assert pool.stop(timeout_s=5)
    worker.join(5)
    assert not worker.is_alive()
    assert ran == ["slow"] and pool.pending == 0
    assert not pool.submit("n1", "after", lambda: None)


def test_workers_run_tasks_in_parallel() -> None:
    pool = FairPool(4)
    barrier = threading.Barrier(4, timeout=5)
    for n in range(4):
        pool.submit(f"n{n}", n, barrier.wait)  # deadlocks unless 4 run at once
    workers = [threading.Thread(target=pool.work) for _ in range(4)]
    for w in workers:
        w.start()
    assert pool.wait_idle(5)
    pool.stop(timeout_s=5)
    for w in workers:
        w.join(5)
    assert not barrier.broken


def test_a_failing_task_ends_its_worker_but_frees_its_token() -> None:
    pool = FairPool(1)

    def boom() -> None:
        raise RuntimeError("bug")

    pool.submit("n1", "t", boom)
    with pytest.raises(RuntimeError):
        pool.work()
    assert pool.pending == 0


def test_workers_must_be_positive() -> None:
    with pytest.raises(errors.ConfigError, match="--workers must be >= 1"):
        FairPool(0)
