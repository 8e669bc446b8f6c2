"""The kubeconfig kubectl would use: $KUBECONFIG, else ~/.kube/config (the flag wins: CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof._util import kube


def test_kubeconfig_env_wins_over_the_home_file(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text("{}")
    assert kube.default_kubeconfig({"KUBECONFIG": "/x/kc"}, tmp_path) == (Path("/x/kc"), "$KUBECONFIG")
    assert kube.default_kubeconfig({}, tmp_path) == (tmp_path / ".kube" / "config", "~/.kube/config")


def test_nothing_found_is_none(tmp_path: Path) -> None:
    assert kube.default_kubeconfig({"KUBECONFIG": ""}, tmp_path) == (None, "")


def test_several_files_in_kubeconfig_are_refused_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="pass --kubeconfig FILE"):
        kube.default_kubeconfig({"KUBECONFIG": "/a:/b"}, tmp_path)
