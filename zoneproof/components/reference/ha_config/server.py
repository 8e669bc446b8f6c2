"""The webhook's HTTPS server: POST the spec's path, GET /healthz and /readyz, JSON logs.

asyncio does the sockets and TLS, h11 (a kept HTTP/1.1 library) the framing: keep-alive,
``Connection: close``, HTTP/1.0, ``Expect: 100-continue``. ``loops`` event-loop threads
accept on the one listening socket and serve the connections each accepted (TLS work runs
outside the GIL, but under load the loops mostly trade the GIL: for a second core, run
worker processes, ``workers`` and the command's ``--workers``, one loop each). A review
of up to ``INLINE_BODY_BYTES`` (nearly all: ~1 ms of work) is answered in its loop, a
larger one in a small thread pool so that probes and small reviews keep being served
meanwhile. Every limit in ``Limits`` is answered clearly:

- listen backlog ``backlog`` (the kernel's accept queue, capped by net.core.somaxconn);
- at most ``max_connections`` open connections: the next gets 503 and is closed;
- at most ``large_review_workers`` large reviews at once: another waits within its
  deadline, then gets 503;
- the TLS handshake within ``handshake_timeout_s``; the request line and headers within
  ``header_timeout_s`` of the connection's start (first request) or of the request's
  first byte (later ones); the whole request (headers, body, answer) within
  ``request_timeout_s`` of its first byte. A client that misses one (slowloris) is cut off
  without an answer: it stopped sending;
- a keep-alive connection idle for ``idle_timeout_s`` is closed (longer than the API
  server's 90 s, so that the client, not the server, closes idle connections);
- headers over ``max_header_bytes``: 431; a body over ``max_body_bytes``: 413, unread;
- a method a path does not serve: 405 with ``Allow``.

Errors of the server itself are JSON ``Status`` objects as the Kubernetes API returns
them; the handler's own 4xx (``review``) keep their plain-text reason. One JSON log line
per admission (uid, kind, namespace/name, operation, allowed, code, patch_ops, latency_ms).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import http
import json
import logging
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import h11

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_config import mutation, review
from zoneproof.components.reference.ha_config.variants import REFERENCE, Variant
from zoneproof.specs.ha_config import facts, keys

__all__ = ["DEFAULT_MAX_BODY_BYTES", "INLINE_BODY_BYTES", "Limits", "WebhookServer", "status_body"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024
"""As controller-runtime: an AdmissionReview carries object and oldObject (3 MiB each at most)."""

INLINE_BODY_BYTES = 256 * 1024
"""Reviews up to this size are answered in the event loop; larger ones in the worker pool."""

_READ_BYTES = 64 * 1024
_LINGER_S = 1.0
_ANSWER_S = 1.0
_SLOT_POLL_S = 0.05
_SHUTDOWN_GRACE_S = 5.0
_JSON = "application/json"
_HEALTH_METHODS = ("GET", "HEAD")
_ROUTES: dict[str, tuple[str, ...]] = {
    "/healthz": _HEALTH_METHODS, "/readyz": _HEALTH_METHODS, keys.WEBHOOK_PATH: ("POST",)}
_SERVED_METHODS = ("GET", "HEAD", "POST")
_SERVING = f"serving GET /healthz, GET /readyz, POST {keys.WEBHOOK_PATH}"


@dataclass(frozen=True, slots=True)
class Limits:
    """How much the server accepts and how long it waits (see the module docstring)."""

    backlog: int = 1024
    loops: int = 2
    max_connections: int = 512
    large_review_workers: int = 2
    handshake_timeout_s: float = 10.0
    header_timeout_s: float = 10.0
    request_timeout_s: float = 30.0
    idle_timeout_s: float = 120.0
    max_header_bytes: int = 16 * 1024
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    def __post_init__(self) -> None:
        bad = [f"{name}={value}" for name, value in dataclasses.asdict(self).items() if not value > 0]
        if bad:
            raise ValueError(f"server limits must be > 0: {', '.join(bad)}")


def status_body(code: int, message: str) -> bytes:
    """A Kubernetes ``Status`` (kind Status, status Failure) as the server's error body."""
    reason = http.HTTPStatus(code).phrase.title().replace(" ", "").replace("-", "")
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason, "code": code}).encode() + b"\n"


class _Cut(Exception):
    """The client went away mid-request: close without answering."""


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    body: bytes = b""
    content_type: str = _JSON
    headers: tuple[tuple[str, str], ...] = ()
    close: bool = False

    @classmethod
    def error(cls, status: int, message: str, *headers: tuple[str, str]) -> _Reply:
        """The server's own error: a JSON Status, and the connection is closed after it."""
        return cls(status, status_body(status, message), _JSON, headers, close=True)


class _Exchange:
    """One client connection: its h11 state, its socket streams and its deadlines."""

    def __init__(self, server: WebhookServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server, self.reader, self.writer = server, reader, writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=server.limits.max_header_bytes)
        self.loop = asyncio.get_running_loop()
        self.busy = False
        self.head = False
        self.deadline = 0.0

    async def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        """The next h11 event, reading from the socket as needed (the caller bounds the time)."""
        while (event := self.h11.next_event()) is h11.NEED_DATA:
            data = await self.reader.read(_READ_BYTES)
            self.h11.receive_data(data)  # b"" is the client's end of stream
        return event

    async def _wait_first_byte(self, first: bool) -> float | None:
        """When the next request starts (the connection's start, or its first byte); None once
        the client closed the idle connection or left it idle for ``idle_timeout_s``."""
        if first or self.h11.trailing_data[0]:
            return self.loop.time()
        try:
            async with asyncio.timeout(self.server.limits.idle_timeout_s):
                data = await self.reader.read(_READ_BYTES)
        except TimeoutError:
            return None
        if not data:
            return None
        self.h11.receive_data(data)
        return self.loop.time()

    async def serve(self, *, overloaded: bool) -> None:
        """Answer requests until the connection closes, a deadline passes or the server stops."""
        limits, first = self.server.limits, True
        while not self.server.stopping:
            started = await self._wait_first_byte(first)
            if started is None:
                return
            first = False
            self.busy = True
            self.deadline = request_deadline = started + limits.request_timeout_s
            try:
                async with asyncio.timeout_at(min(started + limits.header_timeout_s, request_deadline)):
                    event = await self._next_event()
            except h11.RemoteProtocolError as exc:
                await self._send(_Reply.error(exc.error_status_hint, f"invalid HTTP request: {exc}"),
                                 close=True, deadline=request_deadline)
                return
            if isinstance(event, h11.ConnectionClosed):
                return
            assert isinstance(event, h11.Request), event
            self.head = event.method == b"HEAD"
            async with asyncio.timeout_at(request_deadline):
                reply = await self._answer(event, overloaded)
                close = reply.close or self.server.closing or not self._body_consumed()
                await self._send(reply, close=close, deadline=request_deadline)
            if self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                return
            self.h11.start_next_cycle()
            self.busy = False

    def _body_consumed(self) -> bool:
        """Whether the request was read to its end (a bodiless one is, without any I/O)."""
        if self.h11.their_state is h11.SEND_BODY:
            with contextlib.suppress(h11.RemoteProtocolError):
                self.h11.next_event()  # EndOfMessage at once when there is no body
        return self.h11.their_state is h11.DONE

    async def _answer(self, request: h11.Request, overloaded: bool) -> _Reply:
        started = time.monotonic()
        method = request.method.decode("ascii", "replace")
        path = request.target.decode("ascii", "replace").split("?", 1)[0]
        allowed = _ROUTES.get(path)
        head_bytes = len(request.target) + sum(len(n) + len(v) + 4 for n, v in request.headers)
        if head_bytes > self.server.limits.max_header_bytes:  # h11 bounds only a head still arriving
            return _Reply.error(431, f"request headers of {head_bytes} bytes exceed the limit of "
                                     f"{self.server.limits.max_header_bytes}")
        if overloaded:
            return _Reply.error(503, f"overloaded: {self.server.limits.max_connections} connections are "
                                     "open, the server's limit; retry", ("Retry-After", "1"))
        if allowed is None and method in _SERVED_METHODS:
            where = f"the webhook is at {keys.WEBHOOK_PATH}" if method == "POST" else _SERVING
            return _Reply.error(404, f"not found: {method} {path} ({where})")
        if allowed is None or method not in allowed:
            allow = ", ".join(allowed or _SERVED_METHODS)
            return _Reply.error(405, f"method {method} not allowed on {path}: allowed {allow} "
                                     f"({_SERVING})", ("Allow", allow))
        if path == keys.WEBHOOK_PATH:
            return await self._review(request, started)
        if path == "/readyz" and self.server.draining:
            return _Reply(503, b"draining: shutting down\n", "text/plain; charset=utf-8")
        if path == "/readyz" and not self.server.cluster.synced():
            return _Reply(503, b"caches not synced\n", "text/plain; charset=utf-8")
        return _Reply(200, b"ok\n", "text/plain; charset=utf-8")

    async def _review(self, request: h11.Request, started: float) -> _Reply:
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in request.headers}
        length_header = headers.get("content-length")
        limit = self.server.limits.max_body_bytes
        if headers.get("transfer-encoding", "identity").lower() != "identity":
            return _Reply.error(411, "Transfer-Encoding is not supported: send Content-Length")
        if length_header is None:
            return _Reply.error(411, "Content-Length required")
        length = int(length_header)  # h11 has checked that it is a number
        if length > limit:
            return _Reply.error(413, f"body of {length} bytes exceeds the limit of {limit}: the "
                                     "server's --max-body-bytes")
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != _JSON:
            shown = content_type or "(none)"
            return _Reply.error(415, f"Content-Type {shown!r} not supported: use {_JSON}")
        if length <= INLINE_BODY_BYTES:
            answer: review.Answer | None = self.server.answer(await self._read_body())
        else:
            answer = await self._review_in_pool()
        if answer is None:
            return _Reply.error(503, f"overloaded: {self.server.limits.large_review_workers} reviews "
                                     f"over {INLINE_BODY_BYTES} bytes are being handled; retry",
                                ("Retry-After", "1"))
        self.server.log_admission(answer, started)  # before answering: the log never lags the client
        return _Reply(answer.status, answer.body, answer.content_type)

    async def _review_in_pool(self) -> review.Answer | None:
        """A large review answered in the pool; None when no worker was free before the deadline."""
        give_up = self.deadline - _ANSWER_S  # early enough to answer 503 within the deadline
        while not self.server.large_slots.acquire(blocking=False):  # shared by every loop
            if self.loop.time() >= give_up:
                return None
            await asyncio.sleep(_SLOT_POLL_S)
        try:
            body = await self._read_body()
            return await self.loop.run_in_executor(self.server.pool, self.server.answer, body)
        finally:
            self.server.large_slots.release()

    async def _read_body(self) -> bytes:
        if self.h11.they_are_waiting_for_100_continue:
            self.writer.write(self.h11.send(h11.InformationalResponse(status_code=100, headers=[])) or b"")
        chunks: list[bytes] = []
        while not isinstance(event := await self._next_event(), h11.EndOfMessage):
            if isinstance(event, h11.ConnectionClosed):
                raise _Cut("closed while sending the body")
            assert isinstance(event, h11.Data), event
            chunks.append(bytes(event.data))
        return b"".join(chunks)

    async def _send(self, reply: _Reply, *, close: bool, deadline: float) -> None:
        headers = [("Content-Type", reply.content_type), ("Content-Length", str(len(reply.body))),
                   *reply.headers]
        if close:
            headers.append(("Connection", "close"))
        data = [self.h11.send(h11.Response(status_code=reply.status, headers=headers))]
        if reply.body and not self.head:
            data.append(self.h11.send(h11.Data(data=reply.body)))
        data.append(self.h11.send(h11.EndOfMessage()))
        self.writer.write(b"".join(d for d in data if d))
        async with asyncio.timeout_at(deadline):
            await self.writer.drain()
        if close and self.h11.their_state is not h11.DONE:
            await self._linger()

    async def _linger(self) -> None:
        """Read and drop what the client still sends, briefly: closing on unread data would reset
        the connection, and the client could lose the answer."""
        with contextlib.suppress(TimeoutError, OSError):
            async with asyncio.timeout(_LINGER_S):
                while await self.reader.read(_READ_BYTES):
                    pass


class WebhookServer:
    """The HTTPS webhook; ``port=0`` picks a free port (read it from ``port``).

    ``max_body_bytes`` and ``request_timeout_s`` override the same fields of ``limits``;
    ``reuse_port`` listens with ``SO_REUSEPORT`` beside the other worker processes (``workers``).
    """

    def __init__(self, *, cluster: facts.ClusterFacts, cert_file: Path, key_file: Path,
                 bind: str = "127.0.0.1", port: int = 0, settings: mutation.TolerationDefaults | None = None,
                 variant: Variant = REFERENCE, limits: Limits | None = None,
                 max_body_bytes: int | None = None, request_timeout_s: float | None = None,
                 reuse_port: bool = False) -> None:
        limits = limits or Limits()
        if max_body_bytes is not None:
            limits = dataclasses.replace(limits, max_body_bytes=max_body_bytes)
        if request_timeout_s is not None:
            limits = dataclasses.replace(limits, request_timeout_s=request_timeout_s)
        self.cluster, self.variant, self.limits = cluster, variant, limits
        self.settings = settings or mutation.TolerationDefaults()
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._context.load_cert_chain(certfile=str(cert_file), keyfile=str(key_file))
        family = socket.AF_INET6 if ":" in bind else socket.AF_INET
        self._socket = socket.create_server((bind, port), family=family, backlog=limits.backlog,
                                            reuse_port=reuse_port)
        self.pool = concurrent.futures.ThreadPoolExecutor(limits.large_review_workers,
                                                          thread_name_prefix="ha-config-review")
        self.large_slots = threading.BoundedSemaphore(limits.large_review_workers)
        self.stopping = False
        self.draining = False
        self._exchanges: set[_Exchange] = set()  # of every loop (set.add/discard are atomic)
        self._stops: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._lock = threading.Lock()
        self._listening = threading.Semaphore(0)  # released once by each loop that listens
        self._stop_requested = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def closing(self) -> bool:
        """Whether every answer now closes its connection (draining or stopping)."""
        return self.draining or self.stopping

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._socket.getsockname()[1])

    def answer(self, body: bytes) -> review.Answer:
        """The handler: an AdmissionReview body → the answer (any thread)."""
        try:
            return review.answer_review(body, self.cluster, settings=self.settings,
                                        behaviour=self.variant.behaviour)
        except Exception:  # a handler bug must still get an answer, and be logged
            log.exception("the review handler failed")
            return review.Answer(500, status_body(500, "the webhook failed to handle the review: "
                                                  "see its log"), _JSON)

    def log_admission(self, answer: review.Answer, started: float) -> None:
        """The JSON log line of one admission."""
        request, verdict = answer.request, answer.verdict
        latency_ms = round((time.monotonic() - started) * 1000, 3)
        if request is None or verdict is None:
            jsonlog.emit(log, logging.INFO, "admission-rejected", status=answer.status,
                         error=answer.body.decode(errors="replace").strip(), latency_ms=latency_ms)
            return
        jsonlog.emit(log, logging.INFO, "admission", uid=request.uid,
                     kind=f"{request.kind}.{request.group}" if request.group else request.kind,
                     namespace=request.namespace, name=request.name, operation=request.operation,
                     allowed=verdict.allowed, code=verdict.code, patch_ops=len(verdict.patch),
                     message=verdict.message, latency_ms=latency_ms, variant=self.variant.name)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        exchange = _Exchange(self, reader, writer)
        overloaded = len(self._exchanges) >= self.limits.max_connections
        self._exchanges.add(exchange)
        try:
            await exchange.serve(overloaded=overloaded)
        except (_Cut, TimeoutError, OSError, ssl.SSLError, h11.ProtocolError) as exc:
            peer = writer.get_extra_info("peername")
            jsonlog.emit(log, logging.DEBUG, "connection-cut", peer=str(peer), reason=repr(exc))
            writer.transport.abort()
            return
        finally:
            self._exchanges.discard(exchange)
        writer.close()

    async def _serve(self, sock: socket.socket) -> None:
        """One loop: accept on ``sock`` (a dup of the listening socket) until shutdown."""
        loop, stop = asyncio.get_running_loop(), asyncio.Event()
        with self._lock:
            self._stops.append((loop, stop))
        listener = await asyncio.start_server(
            self._connection, sock=sock, ssl=self._context, backlog=self.limits.backlog,
            ssl_handshake_timeout=self.limits.handshake_timeout_s)
        self._listening.release()
        if self._stop_requested.is_set():  # shutdown() came before this loop ran
            stop.set()
        await stop.wait()
        self.stopping = True
        listener.close()
        mine = [e for e in list(self._exchanges) if e.loop is loop]  # list(): one atomic copy
        for exchange in mine:
            if not exchange.busy:  # idle keep-alive: nothing to finish
                exchange.writer.transport.abort()
        deadline = loop.time() + _SHUTDOWN_GRACE_S
        while any(e in self._exchanges for e in mine) and loop.time() < deadline:
            await asyncio.sleep(0.05)  # in-flight requests finish, then their connections close
        for exchange in mine:
            exchange.writer.transport.abort()

    def _run_loop(self) -> None:
        asyncio.run(self._serve(self._socket.dup()))

    def serve_forever(self) -> None:
        """Serve (``loops`` threads, this one included) until ``shutdown`` from another thread."""
        jsonlog.emit(log, logging.INFO, "webhook-serving", address=self._socket.getsockname()[0],
                     port=self.port, path=keys.WEBHOOK_PATH, variant=self.variant.name,
                     **dataclasses.asdict(self.limits))
        others = [threading.Thread(target=self._run_loop, name=f"ha-config-loop-{i}", daemon=True)
                  for i in range(1, self.limits.loops)]
        try:
            for thread in others:
                thread.start()
            self._run_loop()
        finally:
            self._stop_loops()
            for thread in others:
                thread.join(timeout=_SHUTDOWN_GRACE_S + 5)
            self._socket.close()
            self.pool.shutdown(wait=False, cancel_futures=True)
            self._done.set()

    def start(self) -> None:
        """Serve in a daemon thread (returns once every loop listens)."""
        self._thread = threading.Thread(target=self.serve_forever, name="ha-config-webhook", daemon=True)
        self._thread.start()
        for _ in range(self.limits.loops):
            self._listening.acquire(timeout=10)

    def _stop_loops(self) -> None:
        """Tell every loop to stop (returns at once)."""
        self._stop_requested.set()
        with self._lock:
            stops = list(self._stops)
        for loop, stop in stops:
            with contextlib.suppress(RuntimeError):  # that loop already ended
                loop.call_soon_threadsafe(stop.set)

    def drain(self, delay_s: float) -> None:
        """Serve ``delay_s`` more, draining, then ``shutdown`` (at once if it is called meanwhile).

        Draining: /readyz answers 503 and every answer closes its connection, while new
        connections are still served. A pod's Service endpoint and kube-proxy's rules lag
        behind its deletion, and the API server keeps its connections open: a webhook that
        stopped listening at once would fail the admissions still routed here. An idle
        keep-alive connection is left open (closing it could race a request on its way); the
        client's next request on it gets its answer and the close.
        """
        if delay_s > 0 and not self._stop_requested.is_set():
            self.draining = True
            jsonlog.emit(log, logging.INFO, "webhook-draining", delay_s=delay_s)
            self._stop_requested.wait(timeout=delay_s)
        self.shutdown()

    def shutdown(self) -> None:
        """Stop accepting, let in-flight requests finish (5 s at most), close every connection."""
        self._stop_loops()
        if self._thread is not None or self._stops:
            self._done.wait(timeout=_SHUTDOWN_GRACE_S + 10)
        if self._thread is not None:
            self._thread.join(timeout=5)
