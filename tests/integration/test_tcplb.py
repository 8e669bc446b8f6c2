"""tcplb, the stand-in for kind's envoy, against two real HTTPS backends: health as envoy checks it.

A backend that accepts TCP but fails ``GET /healthz`` (a kube-apiserver whose own etcd member is
gone) gets no new connections, and the connections open through it are closed when it turns
unhealthy, so clients reconnect to the healthy one; it gets traffic again once healthy. With no
healthy backend (panic mode) every backend gets connections; those through a failing one are
closed once another backend is healthy.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof._util import certs, waiting
from zoneproof.binaries import resolve

#: envoy's (and tcplb's) checks: at start, then every 2 s, 3 s timeout, unhealthy at the first
#: answer other than 200 (after 2 checks in a row without an answer)
SETTLE_S = 30.0  # generous: the checks settle in ~0-2 s on a quiet machine


@dataclass
class Backend:
    """An HTTPS server answering GET /healthz with ``health`` and anything else with its name."""

    name: str
    health: int = 200
    server: ThreadingHTTPServer = field(init=False)

    def start(self, pair: certs.KeyPair, workdir: Path) -> int:
        backend = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                # TLS handshake in this connection's own thread: done in the accept loop, one
                # connection that never sends its hello would stall the whole server (its
                # health checks too)
                self.request = context.wrap_socket(self.request, server_side=True)
                super().setup()

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                status = backend.health if self.path == "/healthz" else 200
                body = backend.name.encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        crt, key = pair.write(workdir, self.name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(crt, key)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return int(self.server.server_address[1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Bed:
    port: int
    backends: dict[str, Backend]


@pytest.fixture
def bed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bed]:
    """tcplb in front of backends a and b, answering /healthz with ``request.param`` (200 unless
    parametrized indirectly) from before tcplb's first check."""
    try:
        tcplb = resolve.resolve("tcplb", progress=lambda _: None)
    except errors.BinaryError as exc:
        pytest.skip(f"tcplb cannot be built here (needs go): {exc}")
    ca = certs.make_ca("tcplb-test")
    pair = certs.issue_cert(ca, "apiserver", sans=("127.0.0.1",))
    backends = {name: Backend(name, getattr(request, "param", 200)) for name in ("a", "b")}
    ports = {name: b.start(pair, tmp_path) for name, b in backends.items()}
    listen = _free_port()
    (tmp_path / "lds.yaml").write_text(f"resources:\n- address:\n    socket_address:\n"
                                       f"      port_value: {listen}\n")
    (tmp_path / "cds.yaml").write_text("resources:\n" + "".join(
        f"      - endpoint:\n          address:\n            socket_address:\n"
        f"              address: 127.0.0.1\n              port_value: {port}\n"
        for port in ports.values()))
    proc = subprocess.Popen([str(tcplb), "-c", str(tmp_path / "envoy.yaml")],
                            stdout=subprocess.DEVNULL, stderr=(tmp_path / "tcplb.log").open("w"))
    try:
        yield Bed(listen, backends)
    finally:
        proc.kill()
        proc.wait()
        for b in backends.values():
            b.server.shutdown()


def _context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def _who(port: int) -> str:
    """A fresh connection through the balancer: which backend answers ("closed" when the
    balancer closed it unanswered: a connection it had sent to a backend that has just
    turned unhealthy is closed, as it must be, and counts as no answer)."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=_context())
    try:
        conn.request("GET", "/who")
        return conn.getresponse().read().decode()
    except (http.client.RemoteDisconnected, ConnectionResetError):
        return "closed"
    finally:
        conn.close()


def _spread(port: int, n: int = 12) -> set[str]:
    return {_who(port) for _ in range(n)}


def _is_closed(conn: http.client.HTTPSConnection) -> tuple[bool, str]:
    """Whether the balancer has closed ``conn`` (a request on it fails), or who answers it."""
    try:
        conn.request("GET", "/who")
        return False, conn.getresponse().read().decode()
    except (http.client.HTTPException, OSError) as exc:
        return True, repr(exc)


def test_a_backend_failing_healthz_gets_no_connections(bed: Bed) -> None:
    waiting.wait_for(lambda: (_spread(bed.port) == {"a", "b"}, _spread(bed.port)),
                     what="both backends serving", timeout_s=SETTLE_S, interval_s=0.5)
    bed.backends["b"].health = 500  # accepts TCP, fails /healthz: a TCP check would keep it
    waiting.wait_for(lambda: (_spread(bed.port) == {"a"}, _spread(bed.port)),
                     what="only the healthy backend serving", timeout_s=SETTLE_S, interval_s=0.5)
    time.sleep(2)
    assert _spread(bed.port, 30) == {"a"}
    bed.backends["b"].health = 200
    waiting.wait_for(lambda: (_spread(bed.port) == {"a", "b"}, _spread(bed.port)),
                     what="the recovered backend serving again", timeout_s=SETTLE_S, interval_s=0.5)


def test_connections_through_a_backend_that_turns_unhealthy_are_closed(bed: Bed) -> None:
    """The connection may be made before tcplb's first checks (panic mode): it is closed all
    the same when its backend fails."""
    waiting.wait_for(lambda: (_spread(bed.port) == {"a", "b"}, _spread(bed.port)),
                     what="both backends serving", timeout_s=SETTLE_S, interval_s=0.5)
    conn = http.client.HTTPSConnection("127.0.0.1", bed.port, timeout=5, context=_context())
    conn.request("GET", "/who")
    pinned = conn.getresponse().read().decode()
    bed.backends[pinned].health = 503
    started = time.monotonic()
    waiting.wait_for(lambda: _is_closed(conn),
                     what=f"the connection through unhealthy {pinned} closed",
                     timeout_s=SETTLE_S, interval_s=0.3)
    print(f"connection through {pinned} closed {time.monotonic() - started:.1f}s after it "
          "began failing /healthz")
    conn.close()
    assert _spread(bed.port) == {"a", "b"} - {pinned}


def _pinned_connection(port: int, to: str) -> http.client.HTTPSConnection:
    """A kept-alive connection through the balancer that backend ``to`` answered."""
    seen = []
    for _ in range(12):  # round-robin: one of the first few connections goes to ``to``
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=_context())
        conn.request("GET", "/who")
        seen.append(conn.getresponse().read().decode())
        if seen[-1] == to:
            return conn
        conn.close()
    raise AssertionError(f"no connection through {to} in 12: {seen}")


@pytest.mark.parametrize("bed", [503], indirect=True)
def test_a_connection_made_in_panic_mode_is_closed_once_another_backend_is_healthy(
        bed: Bed) -> None:
    """Both backends fail /healthz from the start: panic mode sends connections to both. The
    one through b, never healthy, is closed once a is healthy and b still fails."""
    assert _spread(bed.port) - {"closed"} == {"a", "b"}  # b's first failed check may close one
    time.sleep(3)  # past tcplb's first checks: a connection made to a backend known to fail
    assert _spread(bed.port) == {"a", "b"}
    conn = _pinned_connection(bed.port, "b")
    bed.backends["a"].health = 200
    started = time.monotonic()
    waiting.wait_for(lambda: _is_closed(conn), what="the panic-mode connection through b closed",
                     timeout_s=SETTLE_S, interval_s=0.3)
    print(f"connection through b closed {time.monotonic() - started:.1f}s after a turned "
          "healthy")
    conn.close()
    assert _spread(bed.port) == {"a"}
