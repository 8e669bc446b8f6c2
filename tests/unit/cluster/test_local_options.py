"""The local backend's own options: parsed from their flags, validated, stored, compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof._util import daemons, reaping
from zoneproof.cluster.local import LocalBackend, LocalOptions, render
from zoneproof.cluster.local.ports import Ports
from zoneproof.cluster.spec import ClusterSpec
from zoneproof.runs import state


def test_flags_parse_into_typed_options() -> None:
    assert LocalOptions.parse({}) == LocalOptions()
    assert LocalOptions.parse({"port-base": "23000", "kwok-per": "zone"}) == LocalOptions(
        port_base=23000, kwok_per="zone")


@pytest.mark.parametrize(("given", "message"), [
    ({"port-base": "abc"}, r"--port-base takes a port number, got 'abc': pass --port-base N, "
                           r"or omit it"),
    ({"port-base": "80"}, r"--port-base must be 1024\.\.65000, got 80"),
    ({"kwok-per": "pod"}, r"--kwok-per must be node or zone, got 'pod'"),
])
def test_bad_option_values_name_the_flag(given: dict[str, str], message: str) -> None:
    with pytest.raises(errors.ConfigError, match=message):
        LocalOptions.parse(given)


def test_every_problem_at_once() -> None:
    with pytest.raises(errors.ConfigError, match=r"--port-base must .*; --kwok-per must"):
        LocalBackend(LocalOptions(port_base=1, kwok_per="pod"))  # type: ignore[arg-type]


def test_round_trip_through_dict() -> None:
    options = LocalOptions(port_base=23000, kwok_per="zone")
    assert LocalOptions.from_dict(options.to_dict()) == options


def _bed_state(root: Path, spec: dict[str, object], **extra: object) -> None:
    """A state file as ``up`` leaves it, every process this (live) test process."""
    paths = render.BedPaths(root)
    paths.root.mkdir(parents=True)
    state.write_json(paths.state, {"spec": spec, "ports": Ports.from_base(23000, 3).to_dict(),
                                   "processes": {}, **extra})
    bed = LocalBackend().get(root.name)
    assert bed is not None
    me = reaping.ProcessId.me()
    data = state.read_json(paths.state)
    data["processes"] = {name: daemons.DaemonRecord(name, ("x",), "log", me.pid,
                                                    me.start_ticks).to_dict()
                         for name in bed.expected_processes()}
    state.write_json(paths.state, data)


def test_up_of_the_same_bed_is_a_no_op_and_other_options_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    spec = ClusterSpec(name="bed")
    zoned = LocalOptions(kwok_per="zone")
    _bed_state(tmp_path / "local" / "bed", spec.to_dict(), options=zoned.to_dict())
    said: list[str] = []
    again = LocalBackend(zoned).create(spec, progress=said.append)
    assert again.options == zoned and again.spec == spec
    assert "already up" in said[-1]
    with pytest.raises(errors.ProvisionError, match=r"already up with another spec .*"
                                                    r"kwok_per='zone'.*zoneproof down --cluster-name bed"):
        LocalBackend().create(spec, progress=said.append)
    with pytest.raises(errors.ProvisionError, match="another spec"):
        LocalBackend(zoned).create(ClusterSpec(name="bed", nodes_per_zone=1),
                                   progress=said.append)


def test_a_state_from_when_options_were_spec_fields_reads_them_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZONEPROOF_STATE", str(tmp_path))
    legacy = {**ClusterSpec(name="old").to_dict(), "port_base": 23000, "kwok_per": "zone"}
    _bed_state(tmp_path / "local" / "old", legacy)
    bed = LocalBackend().get("old")
    assert bed is not None
    assert bed.spec == ClusterSpec(name="old")
    assert bed.options == LocalOptions(port_base=23000, kwok_per="zone")
    assert bed.kwok_groups() == bed.spec.nodes_by_zone()


def test_the_zoned_layout_is_an_option_and_takes_no_port_block() -> None:
    Options = LocalOptions  # noqa: N806
    assert Options.parse({"layout": "zones"}).layout == "zones"
    assert Options.from_dict(Options(layout="zones").to_dict()).layout == "zones"
    assert Options.from_dict({}).layout == "flat"
    with pytest.raises(errors.ConfigError, match="--layout must be flat or zones"):
        Options.parse({"layout": "rings"})
    with pytest.raises(errors.ConfigError, match="--port-base does not apply to --layout zones"):
        Options.parse({"layout": "zones", "port-base": "30000"})
