"""``GET /healthz`` and ``/readyz`` over plain HTTP for the kubelet's probes (``--health-port``).

Both answer 200 while ``alive()`` holds (every thread of the process runs) and 503 once it
does not. Readiness does not depend on leadership: a standby replica is ready to take over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HealthServer"]

log = logging.getLogger(__name__)
_PATHS = ("/healthz", "/readyz")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug(format, *args)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        path = self.path.split("?", 1)[0]
        if path not in _PATHS:
            status, body = 404, f"not found: {path} (serving {', '.join(_PATHS)})\n"
        elif self.server.alive():
            status, body = 200, "ok\n"
        else:
            status, body = 503, "a controller thread has stopped\n"
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    alive: Callable[[], bool]


class HealthServer:
    """Serves the probes in a daemon thread from ``start()`` until ``stop()``."""

    def __init__(self, port: int, alive: Callable[[], bool], bind: str = "0.0.0.0") -> None:
        self._httpd = _Server((bind, port), _Handler)
        self._httpd.alive = alive
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.5},
                                        name="ha-health", daemon=True)

    @property
    def port(self) -> int:
        """The bound port (``port=0`` picks a free one)."""
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
