"""What actually ran: executable resolution and digest, the description, the ledger."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.components.harness import started
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.registry import Kind
from zoneproof.components.harness.sources.command import Command
from zoneproof.specs.ha_config import registration

VENDOR = Component(Kind.CONTROLLER, Command("ctl {kubeconfig} {identity}"))


def _program(directory: Path, body: bytes) -> Path:
    path = directory / "ctl"
    path.write_bytes(body)
    path.chmod(0o755)
    return path


def test_the_executable_is_resolved_on_path_and_digested(tmp_path: Path) -> None:
    real = _program(tmp_path, b"#!/bin/sh\necho one\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ctl").symlink_to(real)
    path, digest = started.executable_of(["ctl", "x"], {"PATH": str(tmp_path / "bin")})
    assert path == str(real.resolve())
    assert digest == hashlib.sha256(b"#!/bin/sh\necho one\n").hexdigest()


def test_a_changed_executable_gets_a_new_digest(tmp_path: Path) -> None:
    program = _program(tmp_path, b"one")
    first = started.executable_of([str(program)])[1]
    program.write_bytes(b"two!")
    os.utime(program, ns=(1, 1))
    assert started.executable_of([str(program)])[1] == hashlib.sha256(b"two!").hexdigest() != first


def test_a_missing_executable_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="cannot run 'nope': .* fix the command template"):
        started.executable_of(["nope"], {"PATH": str(tmp_path)})
    with pytest.raises(errors.ConfigError, match="empty"):
        started.executable_of([])


def test_a_start_round_trips_and_names_command_argv_and_digest() -> None:
    rendered = registration.render_webhook_configuration(ca_bundle=b"pem", url="https://h:1/x")
    made = started.of_command(VENDOR, [sys.executable, "k", "zp-0"]).with_registration(
        "https://h:1/x", rendered)
    data = made.to_dict()
    assert data["command"] == "ctl {kubeconfig} {identity}"
    assert data["argv"] == [sys.executable, "k", "zp-0"]
    assert data["executable"] == str(Path(sys.executable).resolve()) and len(data["sha256"]) == 64
    assert started.Started.from_dict(data) == made
    external = started.Started(Component(Kind.WEBHOOK), url="https://x").to_dict()
    assert set(external) == {"component", "url"}


def test_the_ledger_lists_starts_since_a_mark() -> None:
    position = started.mark()
    one = started.note(started.of_command(VENDOR, [sys.executable, "a"]))
    two = started.note(started.of_command(VENDOR, [sys.executable, "b"]))
    assert started.since(position) == [one, two]
    assert started.since(started.mark()) == []
