"""What a run creates in a cluster carries its label; what it cannot label it holds by name."""

from __future__ import annotations

import concurrent.futures
import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import urllib3
from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import kube, reaping
from zoneproof.runs import sweep


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


class _Namespaces:
    """A cluster's namespaces as the sweep reads them: ``terminating`` ones carry a
    deletion timestamp; deleting a terminating one is a 409, as on a real API server."""

    def __init__(self, live: list[str], terminating: list[str], *, race: str = "") -> None:
        self.live, self.terminating, self.race = live, terminating, race
        self.deleted: list[str] = []

    def list_namespace(self, label_selector: str) -> SimpleNamespace:
        items = [SimpleNamespace(metadata=SimpleNamespace(name=n, deletion_timestamp=None))
                 for n in self.live]
        items += [SimpleNamespace(metadata=SimpleNamespace(name=n, deletion_timestamp="now"))
                  for n in self.terminating]
        if self.deleted:
            items = []  # the sweep then waits until they are gone: they are
        return SimpleNamespace(items=items)

    def delete_namespace(self, name: str) -> None:
        if name in self.terminating or name == self.race:
            raise client.ApiException(status=409, reason="Conflict")
        self.deleted.append(name)


@pytest.mark.parametrize("race", ["", "zp-b"])
def test_the_sweep_leaves_namespaces_terminating_already(
        race: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A namespace already terminating (the node agent's, removed just before) is not
    deleted again; one that began terminating after the list (409) is not an error."""
    api = _Namespaces(["zp-a", "zp-b"], ["zoneproof-node-agent"], race=race)
    monkeypatch.setattr(sweep, "_api", lambda _: contextlib.nullcontext())
    monkeypatch.setattr(sweep, "KINDS", (sweep._Kind("Namespace", lambda _: api, "list_namespace",
                                                     "delete_namespace"),))
    monkeypatch.setattr(sweep.client, "CoreV1Api", lambda _: api)
    removed = sweep.remove_labelled(tmp_path / "kubeconfig", "r1", lambda _: None)
    assert removed == ["Namespace/zp-a", "Namespace/zp-b"]
    assert api.deleted == (["zp-a"] if race else ["zp-a", "zp-b"])


class _FallsSilent(_Namespaces):
    """Answers the list and the deletes, then ``silent_lists`` lists get no answer (a bed
    going down; ``None``: it never answers again)."""

    def __init__(self, silent_lists: int | None) -> None:
        super().__init__(["zp-a"], [])
        self.silent_lists = silent_lists

    def list_namespace(self, label_selector: str) -> SimpleNamespace:
        if self.deleted and (self.silent_lists is None or self.silent_lists > 0):
            if self.silent_lists is not None:
                self.silent_lists -= 1
            raise urllib3.exceptions.ReadTimeoutError(None, "/api/v1/namespaces", "timed out")
        return super().list_namespace(label_selector)


@pytest.mark.parametrize("silent_lists", [2, None])
def test_the_wait_for_namespaces_bears_a_short_silence_and_ends_on_a_long_one(
        silent_lists: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the deletes, a few unanswered lists are waited out; an API server that stops
    answering ends the sweep with the error naming it at once, not after the 120 s for
    namespaces to go (a certify's teardown waited them out on a bed going down)."""
    api = _FallsSilent(silent_lists)
    monkeypatch.setattr(sweep, "_SILENT_S", 1.0)
    monkeypatch.setattr(sweep, "_api", lambda _: contextlib.nullcontext())
    monkeypatch.setattr(sweep, "KINDS", (sweep._Kind("Namespace", lambda _: api, "list_namespace",
                                                     "delete_namespace"),))
    monkeypatch.setattr(sweep.client, "CoreV1Api", lambda _: api)
    start = time.monotonic()
    if silent_lists is None:
        with pytest.raises(errors.BackendError, match="did not answer"):
            sweep.remove_labelled(tmp_path / "kubeconfig", "r1", lambda _: None)
        assert time.monotonic() - start < 10
    else:
        assert sweep.remove_labelled(tmp_path / "kubeconfig", "r1", lambda _: None) == [
            "Namespace/zp-a"]
        assert api.silent_lists == 0


def test_a_conflict_deleting_anything_but_a_namespace_is_an_error() -> None:
    def delete(name: str) -> None:
        raise client.ApiException(status=409, reason="Conflict")

    with pytest.raises(client.ApiException):
        sweep._delete(delete, "a-cluster-role")
    sweep._delete(delete, "a-namespace", going=True)


@pytest.fixture
def silent_api_server(tmp_path: Path) -> Iterator[Path]:
    """A kubeconfig of an API server that accepts connections and never answers (one that
    stopped answering mid-run); its path."""
    server = socket.create_server(("127.0.0.1", 0), backlog=16)
    port = server.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: silent\n"
        f"clusters: [{{name: silent, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: silent, context: {cluster: silent, user: nobody}}]\n"
        "users: [{name: nobody, user: {token: x}}]\n")
    yield kubeconfig
    server.close()


@pytest.mark.parametrize("step", ["objects", "lease", "uncordon"])
def test_a_cluster_that_stops_answering_ends_the_sweep_with_an_error_naming_it(
        step: str, silent_api_server: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's end never waits forever on its cluster: each request is bounded, and the error
    names the cluster and the kubectl command that finishes the job (it hung, once, for 25
    minutes until CI's SIGTERM)."""
    monkeypatch.setattr(kube, "TEARDOWN_REQUEST_TIMEOUT_S", 0.5)
    sweeps = {"objects": lambda: sweep.remove_labelled(silent_api_server, "r1", print),
              "lease": lambda: sweep.remove_named(
                  silent_api_server, {"kind": "Lease", "namespace": "default", "name": "l"},
                  print),
              "uncordon": lambda: sweep.uncordon(silent_api_server, "zone=a", print)}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        with pytest.raises(errors.BackendError) as raised:
            pool.submit(sweeps[step]).result(timeout=30)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"the {step} sweep still waits on a cluster that does not answer")
    finally:
        pool.shutdown(wait=False)  # a hung sweep ends when the server's socket closes
    assert str(silent_api_server) in str(raised.value)
    assert "did not answer" in str(raised.value) and "kubectl --kubeconfig" in str(raised.value)
