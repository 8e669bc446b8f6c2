"""Port block choice."""

import socket
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof._util import ports
from zoneproof.cluster.local.ports import Ports, ports_needed


def test_block_layout() -> None:
    p = Ports.from_base(100, 3)
    assert p.etcd_client == (100, 101, 102)
    assert p.etcd_peer == (103, 104, 105)
    assert (p.apiserver, p.controller_manager, p.scheduler) == (106, 107, 108)
    assert len(p.all()) == ports_needed(3) == len(set(p.all()))


def test_auto_skips_busy_and_reserved_blocks() -> None:
    busy = {1002}
    base = ports.choose_base(3, explicit=None, reserved={1004}, free=lambda p: p not in busy,
                             start=1000, stop=1100)
    assert base == 1006


def test_explicit_busy_port_names_port_and_fix() -> None:
    with pytest.raises(errors.ConfigError, match=r"port 1001 .*--port-base"):
        ports.choose_base(3, explicit=1000, free=lambda p: p != 1001)


def test_no_free_block() -> None:
    with pytest.raises(errors.ConfigError, match="no block"):
        ports.choose_base(3, explicit=None, free=lambda p: False, start=1000, stop=1010)


def test_is_free_sees_a_real_listener() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert not ports.is_free(listener.getsockname()[1])


def test_is_free_checks_the_address_it_is_given() -> None:
    """A listener on another address (e.g. a docker gateway) is seen only there."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.2", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert not ports.is_free(port, "127.0.0.2")
        assert ports.is_free(port)  # 127.0.0.1: another address, free


def test_a_reserved_port_is_held_even_while_nothing_listens(tmp_path: Path) -> None:
    """A webhook's port stays its own across a restart: between stop and start nothing
    listens, yet another reservation (another process's webhook) must not take it."""
    first, held = ports.reserve(tmp_path, start=20000, stop=21000)
    assert ports.is_free(first)  # nothing listens on it: a bind test alone would hand it out
    second, other = ports.reserve(tmp_path, start=20000, stop=21000)
    assert second != first
    held.release()
    again, _ = ports.reserve(tmp_path, start=first, stop=first + 1)
    assert again == first
    other.release()


def test_a_port_something_listens_on_is_not_reserved(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(errors.ConfigError, match=f"no free port on 127.0.0.1 between {port}"):
            ports.reserve(tmp_path, start=port, stop=port + 1)
