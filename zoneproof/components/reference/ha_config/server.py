"""The webhook's HTTPS server: POST the spec's path, GET /healthz and /readyz, JSON logs.

Stdlib ``ThreadingHTTPServer`` with TLS; the TLS handshake happens in the request thread
(never blocking ``accept``), every socket has a timeout, bodies above ``max_body_bytes``
are refused unread. One JSON log line per admission (uid, kind, namespace/name,
operation, allowed, code, patch_ops, latency_ms).
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from zoneproof._util import jsonlog
from zoneproof.components.reference.ha_config import mutation, review
from zoneproof.components.reference.ha_config.variants import REFERENCE, Variant
from zoneproof.specs.ha_config import facts, keys

__all__ = ["DEFAULT_MAX_BODY_BYTES", "WebhookServer"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024
"""As controller-runtime: an AdmissionReview carries object and oldObject (3 MiB each at most)."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.request_timeout_s)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug(format, *args)

    def _reply(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self, status: int, reason: str, *, close: bool = False) -> None:
        self.close_connection = self.close_connection or close
        self._reply(status, f"{reason}\n".encode())

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._reply(200, b"ok\n")
        elif path == "/readyz":
            ready = self.server.cluster.synced()
            self._reply(200 if ready else 503, b"ok\n" if ready else b"caches not synced\n")
        else:
            self._refuse(404, f"not found: GET {path} (serving /healthz, /readyz, POST {keys.WEBHOOK_PATH})")

    def _method_not_allowed(self) -> None:
        allowed = f"POST {keys.WEBHOOK_PATH}, GET /healthz, GET /readyz"
        self._refuse(405, f"method {self.command} not allowed: {allowed}", close=True)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _method_not_allowed  # noqa: N815

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        started = time.monotonic()
        path = self.path.split("?", 1)[0]
        if path != keys.WEBHOOK_PATH:
            self._refuse(404, f"not found: POST {path} (the webhook is at {keys.WEBHOOK_PATH})", close=True)
            return
        body = self._read_body()
        if body is None:
            return
        srv = self.server
        answer = review.answer_review(body, srv.cluster, settings=srv.settings,
                                      behaviour=srv.variant.behaviour)
        self._reply(answer.status, answer.body, answer.content_type)
        self._log(answer, started)

    def _read_body(self) -> bytes | None:
        """The body, or None after answering 4xx (length missing or too big, wrong type, cut short)."""
        length_header = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self._refuse(411, "Transfer-Encoding is not supported: send Content-Length", close=True)
            return None
        if length_header is None:
            self._refuse(411, "Content-Length required", close=True)
            return None
        try:
            length = int(length_header)
            if length < 0:
                raise ValueError(length_header)
        except ValueError:
            self._refuse(400, f"invalid Content-Length {length_header!r}", close=True)
            return None
        if length > self.server.max_body_bytes:
            self._refuse(413, f"body of {length} bytes exceeds the limit of {self.server.max_body_bytes}",
                         close=True)
            return None
        content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            shown = content_type or "(none)"
            self._refuse(415, f"Content-Type {shown!r} not supported: use application/json", close=True)
            return None
        try:
            body = self.rfile.read(length)
        except (TimeoutError, OSError) as exc:
            self.close_connection = True
            log.debug("reading the body failed: %s", exc)
            return None
        if len(body) != length:
            self.close_connection = True
            return None
        return body

    def _log(self, answer: review.Answer, started: float) -> None:
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
                     message=verdict.message, latency_ms=latency_ms, variant=self.server.variant.name)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    cluster: facts.ClusterFacts
    settings: mutation.Settings
    variant: Variant
    max_body_bytes: int
    request_timeout_s: float

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection from %s failed", client_address, exc_info=True)


_NO_TOLERATIONS = mutation.Settings()


class WebhookServer:
    """The HTTPS webhook; ``port=0`` picks a free port (read it from ``port``)."""

    def __init__(self, *, cluster: facts.ClusterFacts, cert_file: Path, key_file: Path,
                 bind: str = "127.0.0.1", port: int = 0, settings: mutation.Settings = _NO_TOLERATIONS,
                 variant: Variant = REFERENCE, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 request_timeout_s: float = 30.0) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(certfile=str(cert_file), keyfile=str(key_file))
        self._httpd = _Server((bind, port), _Handler, bind_and_activate=True)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True,
                                                 do_handshake_on_connect=False)
        self._httpd.cluster = cluster
        self._httpd.settings = settings
        self._httpd.variant = variant
        self._httpd.max_body_bytes = max_body_bytes
        self._httpd.request_timeout_s = request_timeout_s
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._httpd.server_address[1])

    def serve_forever(self) -> None:
        """Serve in this thread until ``shutdown`` (from another thread)."""
        jsonlog.emit(log, logging.INFO, "webhook-serving", address=self._httpd.server_address[0],
                     port=self.port, path=keys.WEBHOOK_PATH, variant=self._httpd.variant.name)
        self._httpd.serve_forever(poll_interval=0.2)

    def start(self) -> None:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="ha-config-webhook", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
