"""``zoneproof qualify`` and ``mutants`` refuse bad component choices before anything starts."""

from __future__ import annotations

import pytest

from zoneproof.cli import main


@pytest.mark.parametrize(("argv", "message"), [
    (["qualify", "--controller-variant", "nope"], "unknown controller variant 'nope'"),
    (["qualify", "--webhook-command", "hook {port}", "--webhook-url", "https://x"],
     "--webhook-command and --webhook-url both name the webhook under test"),
    (["qualify", "--controller-command", "ctl {identity}"], "must use {kubeconfig}"),
    (["mutants", "webhook", "--implementation", "acme"], "no webhook implementation 'acme'"),
])
def test_bad_components_exit_1_naming_the_fix(argv: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(argv) == 1
    assert message in capsys.readouterr().err
