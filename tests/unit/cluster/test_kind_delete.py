"""``kind delete cluster`` is tried again when docker could not kill a node container yet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from zoneproof._util import processes
from zoneproof.cluster.kind import backend

_STUCK = ("Error response from daemon: Could not kill running container affc49, cannot remove "
          "- tried to kill container, but did not receive an exit event")


class _Kind:
    """``kind`` as CI's docker left it: the first ``fails`` runs fail; each argv kept."""

    def __init__(self, fails: int) -> None:
        self.fails, self.calls = fails, 0

    def run(self, argv: Sequence[str], **_: Any) -> None:
        self.calls += 1
        if self.calls <= self.fails:
            raise processes.CommandError(argv, 1, _STUCK)


@pytest.mark.parametrize(("fails", "calls"), [(0, 1), (1, 2), (2, 3)])
def test_a_delete_docker_could_not_finish_is_tried_again(
        fails: int, calls: int, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = _Kind(fails)
    monkeypatch.setattr(backend, "_DELETE_PAUSE_S", 0)
    monkeypatch.setattr(backend.processes, "run", kind.run)
    backend.kind_delete(["kind", "delete", "cluster", "--name", "zp-x"])
    assert kind.calls == calls


def test_a_delete_that_keeps_failing_raises_the_last_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kind = _Kind(99)
    monkeypatch.setattr(backend, "_DELETE_PAUSE_S", 0)
    monkeypatch.setattr(backend.processes, "run", kind.run)
    with pytest.raises(processes.CommandError, match="did not receive an exit event"):
        backend.kind_delete(["kind", "delete", "cluster", "--name", "zp-x"])
    assert kind.calls == backend._DELETE_TRIES
