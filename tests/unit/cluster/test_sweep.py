"""What a run creates in a cluster carries its label; what it cannot label it holds by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zoneproof._util import reaping
from zoneproof.cluster import runs, sweep


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[runs.Run]:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    monkeypatch.setattr(runs, "_current", runs._Current())  # apart from this session's run
    monkeypatch.setenv(reaping.RUN_ENV, "")
    opened = runs.open_run("test", keeper=False)
    yield opened
    runs.close(print)


def test_labelled_adds_the_run_label_and_keeps_the_rest(run: runs.Run) -> None:
    body = {"metadata": {"name": "ns", "labels": {"app": "x"}}, "spec": {}}
    assert sweep.labelled(body) == {"metadata": {"name": "ns", "labels": {
        "app": "x", sweep.RUN_LABEL: run.id}}, "spec": {}}
    assert body["metadata"]["labels"] == {"app": "x"}, "the caller's body is not changed"
    assert sweep.labelled({})["metadata"]["labels"] == {sweep.RUN_LABEL: run.id}


def test_outside_a_run_nothing_is_labelled_or_held(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "_current", runs._Current())
    assert sweep.labels() == {}
    sweep.track(tmp_path / "kubeconfig")  # no run: a no-op


def test_a_run_holds_its_clusters_objects_leases_and_cordons(run: runs.Run,
                                                             tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    sweep.track(kubeconfig)
    sweep.track(kubeconfig)
    sweep.track_named(kubeconfig, "Lease", "default", "zoneproof-ha-controller")
    sweep.hold_uncordon(kubeconfig, "topology.kubernetes.io/zone=zone-a")
    held = {h["kind"]: h for h in run.holdings()}
    assert sorted(held) == ["object", "objects", "uncordon"] and len(run.holdings()) == 3
    assert held["objects"]["run"] == run.id
    assert held["object"]["object"] == {"kind": "Lease", "namespace": "default",
                                        "name": "zoneproof-ha-controller"}
    assert held["uncordon"]["selector"] == "topology.kubernetes.io/zone=zone-a"
    # the cluster is gone (its kubeconfig with it): undoing is a no-op, not an error
    assert runs.close(print) == []
