"""``kind create cluster`` is made again from nothing when a node missed kind's boot wait,
and only then."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from zoneproof._util import processes
from zoneproof.cluster.kind import backend

_BOOT = ('ERROR: failed to create cluster: could not find a log line that matches '
         '"Reached target .*Multi-User System.*|detected cgroup v1"')
_OTHER = "ERROR: failed to create cluster: failed to pull image"


class _Kind:
    """``kind`` on a loaded machine: the first ``fails`` creates fail with ``error``."""

    def __init__(self, fails: int, error: str = _BOOT) -> None:
        self.fails, self.error, self.calls = fails, error, []

    def run(self, argv: Sequence[str], *, log_file: Path | None = None, **_: Any) -> str:
        self.calls.append(argv[1])
        creates = self.calls.count("create")
        if argv[1] == "create":
            assert log_file is not None
            log_file.write_text(f"try {creates}\n")
            if creates <= self.fails:
                raise processes.CommandError(argv, 1, f"try {creates}\n{self.error}")
        return ""


def _create(kind: _Kind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    said: list[str] = []
    monkeypatch.setattr(backend.processes, "run", kind.run)
    backend.kind_create(["kind", "create", "cluster"], log_file=tmp_path / "kind-create.log",
                        delete=["kind", "delete", "cluster"], progress=said.append)
    return said


@pytest.mark.parametrize(("fails", "calls"), [
    (0, ["create"]), (1, ["create", "delete", "create"]),
    (2, ["create", "delete", "create", "delete", "create"])])
def test_a_create_whose_node_missed_the_boot_wait_is_deleted_and_made_again(
        fails: int, calls: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = _Kind(fails)
    said = _create(kind, tmp_path, monkeypatch)
    assert kind.calls == calls
    assert len(said) == fails and all("boot within kind's 30 s" in line for line in said)
    for attempt in range(1, fails + 1):  # each failed try's log is kept beside the last one
        assert (tmp_path / f"kind-create.log.{attempt}").read_text() == f"try {attempt}\n"


def test_a_create_that_keeps_missing_the_boot_wait_raises_the_last_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = _Kind(99)
    with pytest.raises(processes.CommandError, match="could not find a log line"):
        _create(kind, tmp_path, monkeypatch)
    assert kind.calls.count("create") == backend._CREATE_TRIES


def test_any_other_create_failure_is_final_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = _Kind(1, _OTHER)
    with pytest.raises(processes.CommandError, match="failed to pull image"):
        _create(kind, tmp_path, monkeypatch)
    assert kind.calls == ["create"]
