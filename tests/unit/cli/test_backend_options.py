"""``zoneproof up`` offers every installed backend's own options; the chosen backend checks them."""

from __future__ import annotations

import pytest

from zoneproof.cli import main


def test_up_still_takes_the_local_flags() -> None:
    args = main._parser().parse_args(["up", "--port-base", "23000", "--kwok-per", "zone"])
    assert main._backend_options(args) == {"port-base": "23000", "kwok-per": "zone"}
    assert main._backend_options(main._parser().parse_args(["up"])) == {}


def test_an_option_of_another_backend_is_an_error_naming_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["up", "--backend", "kind", "--kwok-per", "zone", "--cluster-name", "x"]) == 4
    assert ("--kwok-per is an option of the local backend, not of kind: drop it, or use "
            "--backend local") in capsys.readouterr().err


def test_help_describes_each_backend_from_its_traits(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main.main(["up", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "local: etcd, control plane and kwok nodes as processes on this host" in text
    assert "etcd members (default: local 3; kind 1)" in text
    assert "--kwok-per {node,zone}" in text
