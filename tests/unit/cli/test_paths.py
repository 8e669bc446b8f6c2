"""Paths on the command line mean what they mean in the shell: relative to the current
directory, resolved when parsed (qualify runs its suite from the checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.cli import main


@pytest.mark.parametrize(("argv", "attribute", "relative"), [
    (["qualify", "--reports", "reports"], "reports", "reports"),
    (["qualify", "--slo-file", "my-slos.yaml"], "slo_file", "my-slos.yaml"),
    (["qualify", "--backend", "existing", "--kubeconfig", "kc.yaml"], "kubeconfig", "kc.yaml"),
    (["certify", "profile.yaml", "--key", "k.pem", "--bundle", "out/b.tar.gz"], "bundle",
     "out/b.tar.gz"),
    (["bench", "webhook", "--json", "figures.json"], "json", "figures.json"),
])
def test_relative_paths_are_the_current_directorys(argv: list[str], attribute: str,
                                                   relative: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert getattr(main._parser().parse_args(argv), attribute) == tmp_path / relative
