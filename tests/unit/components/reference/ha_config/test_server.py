"""The HTTPS server in-process: real TLS on 127.0.0.1, static facts, every HTTP path and error."""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import http.client
import itertools
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from zoneproof._util import certs, waiting
from zoneproof.components.reference.ha_config import server, variants
from zoneproof.specs.ha_config import facts, keys


@dataclass(frozen=True)
class Running:
    port: int
    context: ssl.SSLContext

    @contextlib.contextmanager
    def tls(self) -> Iterator[ssl.SSLSocket]:
        """A raw TLS connection, for what http.client cannot send."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as plain, \
                self.context.wrap_socket(plain, server_hostname="127.0.0.1") as tls:
            yield tls

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=10)

    def call(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        conn = self.connect()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


class _Unsynced(facts.StaticFacts):
    def synced(self) -> bool:
        return False


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, ssl.SSLContext]:
    ca = certs.make_ca("ha-config-test-ca")
    directory = tmp_path_factory.mktemp("pki")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1", "localhost")).write(directory, "tls")
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    return crt, key, context


def _start(pki: tuple[Path, Path, ssl.SSLContext], cluster: facts.ClusterFacts,
           **kwargs: Any) -> Iterator[Running]:
    crt, key, context = pki
    kwargs.setdefault("limits", server.Limits(request_timeout_s=2.0))
    webhook = server.WebhookServer(cluster=cluster, cert_file=crt, key_file=key, port=0, **kwargs)
    webhook.start()
    try:
        yield Running(webhook.port, context)
    finally:
        webhook.shutdown()


CLUSTER = facts.StaticFacts(namespaces={"team": facts.NamespaceInfo("team")}, nodes=3)


@pytest.fixture(scope="module")
def running(pki: tuple[Path, Path, ssl.SSLContext]) -> Iterator[Running]:
    yield from _start(pki, CLUSTER, max_body_bytes=64 * 1024)


def review_body(replicas: int = 5) -> bytes:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "app", "labels": {keys.LABEL_TYPE: "server"}},
           "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}},
                    "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u-1", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "namespace": "team", "name": "app", "operation": "CREATE", "object": obj}}).encode()


JSON = {"Content-Type": "application/json"}
POST_HEAD = f"POST {keys.WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


def test_post_review_round_trip_and_log_line(running: Running, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=server.__name__):
        status, raw = running.call("POST", keys.WEBHOOK_PATH, review_body(), JSON)
    assert status == 200
    response = json.loads(raw)["response"]
    assert response["uid"] == "u-1" and response["allowed"] is True and response["patchType"] == "JSONPatch"
    lines = [r for r in caplog.records if getattr(r, "event", None) == "admission"]
    assert len(lines) == 1
    fields = lines[0].fields  # type: ignore[attr-defined]
    logged = ("uid", "kind", "namespace", "name", "operation", "allowed", "patch_ops")
    assert {k: fields[k] for k in logged} == {
        "uid": "u-1", "kind": "Deployment.apps", "namespace": "team", "name": "app", "operation": "CREATE",
        "allowed": True, "patch_ops": 2}
    assert fields["latency_ms"] >= 0


def test_keep_alive_serves_several_reviews_on_one_connection(running: Running) -> None:
    conn = running.connect()
    try:
        for _ in range(3):
            conn.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())["response"]["allowed"]
    finally:
        conn.close()


def test_health_and_readiness(running: Running) -> None:
    assert running.call("GET", "/healthz") == (200, b"ok\n")
    assert running.call("GET", "/readyz") == (200, b"ok\n")


def test_readiness_waits_for_caches(pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    for started in _start(pki, _Unsynced()):
        status, raw = started.call("GET", "/readyz")
        assert (status, raw) == (503, b"caches not synced\n")
        assert started.call("GET", "/healthz")[0] == 200


def _server(pki: tuple[Path, Path, ssl.SSLContext]) -> tuple[server.WebhookServer, Running]:
    crt, key, context = pki
    webhook = server.WebhookServer(cluster=CLUSTER, cert_file=crt, key_file=key, port=0)
    webhook.start()
    return webhook, Running(webhook.port, context)


def test_draining_serves_every_request_with_a_close_then_stops(
        pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    """Behind a Service, requests keep coming for a moment after SIGTERM: they are answered,
    each closing its connection, /readyz says draining, and only then the port is closed."""
    webhook, started = _server(pki)
    kept = started.connect()  # a keep-alive connection opened before the drain, idle during it
    try:
        kept.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
        assert kept.getresponse().read()
        drain = threading.Thread(target=webhook.drain, args=(1.5,))
        began = time.monotonic()
        drain.start()
        waiting.wait_for(lambda: (webhook.draining, "not yet"), what="draining", timeout_s=5, interval_s=0.01)
        kept.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
        response = kept.getresponse()
        assert response.status == 200 and response.getheader("Connection") == "close"
        assert json.loads(response.read())["response"]["allowed"]
        fresh = started.connect()
        fresh.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
        response = fresh.getresponse()
        assert (response.status, response.getheader("Connection")) == (200, "close")
        response.read()
        fresh.close()
        assert started.call("GET", "/readyz") == (503, b"draining: shutting down\n")
        assert time.monotonic() - began < 1.5, "the checks above ran while it drained"
        drain.join(timeout=15)
        assert not drain.is_alive() and time.monotonic() - began >= 1.5
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", started.port), timeout=5).close()
    finally:
        kept.close()
        webhook.shutdown()


def test_shutdown_cuts_a_drain_short_and_no_delay_stops_at_once(
        pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    webhook, _ = _server(pki)
    drain = threading.Thread(target=webhook.drain, args=(60.0,))
    drain.start()
    waiting.wait_for(lambda: (webhook.draining, "not yet"), what="draining", timeout_s=5, interval_s=0.01)
    began = time.monotonic()
    webhook.shutdown()
    drain.join(timeout=15)
    assert not drain.is_alive() and time.monotonic() - began < 10
    other, started = _server(pki)
    began = time.monotonic()
    other.drain(0.0)
    assert not other.draining and time.monotonic() - began < 10
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", started.port), timeout=5).close()


@dataclass(frozen=True)
class Bad:
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    status: int
    fragment: str


@pytest.mark.parametrize("bad", [Bad(*args) for args in [
    ("POST", "/mutate", b"{}", JSON, 404, "the webhook is at /webhooks/high-availability-config"),
    ("GET", "/nope", None, {}, 404, "not found"),
    ("PUT", keys.WEBHOOK_PATH, b"{}", JSON, 405, "not allowed"),
    ("DELETE", "/healthz", None, {}, 405, "not allowed"),
    ("POST", keys.WEBHOOK_PATH, b"{}", {"Content-Type": "text/plain"}, 415, "application/json"),
    ("POST", keys.WEBHOOK_PATH, b"{not json", JSON, 400, "not valid JSON"),
    ("POST", keys.WEBHOOK_PATH, b'{"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview"}', JSON,
     400, "apiVersion"),
]])
def test_http_errors_are_clear_4xx(running: Running, bad: Bad) -> None:
    got, raw = running.call(bad.method, bad.path, bad.body, bad.headers)
    assert got == bad.status
    assert bad.fragment in raw.decode()


def _raw_tls(running: Running, payload: bytes) -> bytes:
    with running.tls() as tls:
        tls.sendall(payload)
        chunks = []
        while chunk := tls.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_missing_or_bad_content_length(running: Running) -> None:
    head = POST_HEAD
    assert _raw_tls(running, (head + "\r\n").encode()).startswith(b"HTTP/1.1 411")
    assert _raw_tls(running, (head + "Content-Length: -4\r\n\r\n").encode()).startswith(b"HTTP/1.1 400")
    assert _raw_tls(running, (head + "Transfer-Encoding: chunked\r\n\r\n").encode()
                    ).startswith(b"HTTP/1.1 411")


def test_oversized_body_is_refused_unread(running: Running) -> None:
    head = POST_HEAD + f"Content-Length: {64 * 1024 + 1}\r\n\r\n"
    reply = _raw_tls(running, head.encode())
    assert reply.startswith(b"HTTP/1.1 413")
    assert b"body of 65537 bytes exceeds the limit of 65536" in reply


def test_stalled_clients_do_not_block_others(running: Running) -> None:
    with socket.create_connection(("127.0.0.1", running.port), timeout=10) as silent, \
            socket.create_connection(("127.0.0.1", running.port), timeout=10) as half:
        half.sendall(b"\x16\x03\x01")  # the start of a TLS record, then nothing
        assert running.call("POST", keys.WEBHOOK_PATH, review_body(), JSON)[0] == 200
        assert silent.fileno() >= 0


def test_short_body_is_dropped_after_the_timeout(running: Running) -> None:
    head = (POST_HEAD + "Content-Length: 100\r\n\r\n{").encode()
    with running.tls() as tls:
        tls.sendall(head)
        assert tls.recv(100) == b"", "the server closes the connection without answering"


def test_variant_is_served(pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    for started in _start(pki, CLUSTER, variant=variants.get_variant("replicas-off-by-one")):
        status, raw = started.call("POST", keys.WEBHOOK_PATH, review_body(replicas=1), JSON)
        assert status == 200
        ops = json.loads(base64.b64decode(json.loads(raw)["response"]["patch"]))
        assert {"op": "replace", "path": "/spec/replicas", "value": 3} in ops


# -- serving like production software (issue 14): each test below fails on the stdlib server --


def _json_error(raw: bytes, status: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(raw)
    assert (body["kind"], body["status"], body["code"]) == ("Status", "Failure", status)
    return body


@pytest.mark.parametrize(("method", "target", "allow"), [
    ("TRACE", keys.WEBHOOK_PATH, "POST"),
    ("TRACE", "/healthz", "GET, HEAD"),
    ("CONNECT", "127.0.0.1:443", "GET, HEAD, POST"),
    ("PROPFIND", keys.WEBHOOK_PATH, "POST"),
    ("BREW", "/readyz", "GET, HEAD"),
])
def test_wrong_methods_get_405_with_allow_and_json(running: Running, method: str, target: str,
                                                     allow: str) -> None:
    conn = running.connect()
    try:
        conn.request(method, target)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    assert response.status == 405
    assert response.getheader("Allow") == allow
    assert response.getheader("Content-Type") == "application/json"
    body = _json_error(raw, 405)
    assert body["reason"] == "MethodNotAllowed" and f"method {method} not allowed" in body["message"]


def test_headers_over_the_limit_get_431_json(running: Running) -> None:
    status, raw = running.call("GET", "/healthz", headers={"X-Big": "a" * 20_000})
    assert status == 431
    assert "exceed the limit of 16384" in _json_error(raw, 431)["message"]


def test_head_on_health_answers_without_a_body(running: Running) -> None:
    conn = running.connect()
    try:
        conn.request("HEAD", "/healthz")
        response = conn.getresponse()
        assert (response.status, response.read(), response.getheader("Content-Length")) == (200, b"", "3")
        conn.request("GET", "/healthz")  # the same connection goes on
        assert conn.getresponse().read() == b"ok\n"
    finally:
        conn.close()


def test_a_body_over_the_limit_gets_413_json(running: Running) -> None:
    status, raw = running.call("POST", keys.WEBHOOK_PATH, b"x" * (64 * 1024 + 1), JSON)
    assert status == 413
    body = _json_error(raw, 413)
    assert body["reason"] == "RequestEntityTooLarge"
    assert "body of 65537 bytes exceeds the limit of 65536" in body["message"]


FAST = server.Limits(handshake_timeout_s=1.0, header_timeout_s=1.0, request_timeout_s=2.0,
                     idle_timeout_s=1.0, max_body_bytes=64 * 1024)
DRIP_INTERVAL_S = 0.25
CUT_MARGIN_S = 3.0
"""Generous: a busy machine may be late to notice a deadline, never by this much."""


@pytest.fixture(scope="module")
def strict(pki: tuple[Path, Path, ssl.SSLContext]) -> Iterator[Running]:
    yield from _start(pki, CLUSTER, limits=FAST)


def _drip_until_cut(tls: ssl.SSLSocket, payload: bytes) -> float:
    """Send ``payload`` a byte every DRIP_INTERVAL_S; seconds until the server closed on us."""
    start = time.monotonic()
    tls.settimeout(DRIP_INTERVAL_S)
    for byte in itertools.cycle(payload):
        try:
            tls.sendall(bytes([byte]))
            if tls.recv(1024) == b"":
                break
        except TimeoutError:
            pass  # the server is still waiting for us
        except (ConnectionError, ssl.SSLError):
            break
        if time.monotonic() - start > 30:
            break
    return time.monotonic() - start


def test_slow_drip_headers_are_cut_at_the_header_deadline(strict: Running) -> None:
    with strict.tls() as tls:
        took = _drip_until_cut(tls, f"POST {keys.WEBHOOK_PATH} HTTP/1.1\r\nX-Slow: ".encode() + b"a" * 200)
    assert FAST.header_timeout_s - 0.2 <= took <= FAST.header_timeout_s + CUT_MARGIN_S


def test_slow_drip_body_is_cut_at_the_request_deadline(strict: Running) -> None:
    head = (POST_HEAD + "Content-Length: 1000\r\n\r\n").encode()
    with strict.tls() as tls:
        tls.sendall(head)
        took = _drip_until_cut(tls, b" " * 1000)
    assert FAST.request_timeout_s - 0.3 <= took <= FAST.request_timeout_s + CUT_MARGIN_S


def test_silent_tls_handshake_is_cut(strict: Running) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=10) as plain:
        start = time.monotonic()
        plain.settimeout(FAST.handshake_timeout_s + CUT_MARGIN_S)
        assert plain.recv(1) == b""
        assert time.monotonic() - start >= FAST.handshake_timeout_s - 0.2


def test_idle_keep_alive_connection_is_closed(strict: Running) -> None:
    conn = strict.connect()
    try:
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() == b"ok\n"
        assert conn.sock is not None
        conn.sock.settimeout(FAST.idle_timeout_s + CUT_MARGIN_S)
        assert conn.sock.recv(1) == b""
    finally:
        conn.close()


BURST = 100
SYN_RETRY_S = 0.9
"""Linux retransmits a dropped SYN after 1 s: a connect slower than this was dropped (full backlog)."""


def test_a_burst_of_100_connections_is_accepted_at_once_and_answered(running: Running) -> None:
    barrier = threading.Barrier(BURST)

    def one(_: int) -> tuple[float, int]:
        barrier.wait()
        start = time.monotonic()
        plain = socket.create_connection(("127.0.0.1", running.port), timeout=30)
        connected = time.monotonic() - start
        conn = running.connect()
        conn.sock = running.context.wrap_socket(plain, server_hostname="127.0.0.1")
        try:
            conn.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
            response = conn.getresponse()
            response.read()
            return connected, response.status
        finally:
            conn.close()

    with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
        results = list(pool.map(one, range(BURST)))
    slow = sorted(round(t, 2) for t, _ in results if t > SYN_RETRY_S)
    assert not slow, f"{len(slow)} of {BURST} connects waited for a SYN retransmission: {slow}"
    assert [status for _, status in results] == [200] * BURST


def test_connections_over_the_limit_get_503_json(pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    for started in _start(pki, CLUSTER, limits=server.Limits(max_connections=4)):
        held = [started.connect() for _ in range(4)]
        try:
            for conn in held:
                conn.request("GET", "/healthz")
                assert conn.getresponse().read() == b"ok\n"
            status, raw = started.call("POST", keys.WEBHOOK_PATH, review_body(), JSON)
            assert status == 503
            assert "4 connections are open" in _json_error(raw, 503)["message"]
            for conn in held:  # the connections within the limit are still served
                conn.request("POST", keys.WEBHOOK_PATH, body=review_body(), headers=JSON)
                response = conn.getresponse()
                assert (response.status, json.loads(response.read())["response"]["allowed"]) == (200, True)
        finally:
            held.pop().close()
        waiting.wait_for(lambda served=started: ((s := served.call("GET", "/healthz")[0]) == 200, s),
                         what="a connection once one closed", timeout_s=10)
        for conn in held:
            conn.close()


@dataclass(frozen=True)
class _Blocking(facts.StaticFacts):
    """Facts whose Namespace read says it ``entered`` and waits for ``release``: a review that
    holds its worker."""

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def namespace(self, name: str) -> facts.NamespaceInfo:
        self.entered.set()
        self.release.wait(timeout=30)
        return super().namespace(name)


def _large_review() -> bytes:
    review = json.loads(review_body())
    review["request"]["object"]["metadata"]["annotations"] = {"padding": "x" * server.INLINE_BODY_BYTES}
    return json.dumps(review).encode()


def test_large_reviews_are_bounded_and_probes_keep_answering(pki: tuple[Path, Path, ssl.SSLContext]) -> None:
    cluster = _Blocking(namespaces=CLUSTER.namespaces)
    limits = server.Limits(large_review_workers=1, request_timeout_s=3.0)
    for started in _start(pki, cluster, limits=limits):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            first = pool.submit(started.call, "POST", keys.WEBHOOK_PATH, _large_review(), JSON)
            try:
                assert cluster.entered.wait(timeout=10), "the first large review never reached the handler"
                assert started.call("GET", "/healthz") == (200, b"ok\n")
                status, raw = started.call("POST", keys.WEBHOOK_PATH, _large_review(), JSON)
                assert status == 503
                assert "1 reviews over" in _json_error(raw, 503)["message"]
            finally:
                cluster.release.set()
            assert first.result(timeout=30)[0] == 200
