"""``zoneproof bench webhook``: the reference webhook serving on loopback, no cluster needed.

Per run, a fresh webhook process (static cluster facts, TLS, 127.0.0.1) and 100 client
threads, each holding one keep-alive TLS connection as the API server does:

1. burst: the 100 clients connect at the same moment and each sends one review; figure:
   connect + TLS handshake + review latency, and the listen overflows of the whole run
   (``TcpExt ListenOverflows`` of /proc/net/netstat, a machine-wide counter);
2. paced: the same warm connections send reviews at ``PACED_RATE_RPS`` in all for
   ``PACED_S``; figure: latency of one review (TLS records + HTTP + handler) as a client
   sees it, from writing the request to reading the whole response;
3. saturated: every client sends back to back for ``SATURATED_S``; figures: throughput,
   and the latency it costs (100 requests always queued: mostly waiting for the CPU);
4. sequential: one client sends ``SEQUENTIAL`` reviews one after the other: the latency
   of a review with nothing queued (TLS records + HTTP + handler, no waiting for others).

Where the time goes: the server process's CPU time per review (user + system, from
/proc/PID/stat) in the paced and saturated phases, and the machine's 1-minute load average
at the start of the run (on a busy machine the server waits for a CPU, and latency says
more about the machine than about the server).

Reviews are realistic: a Deployment CREATE (v1), a StatefulSet UPDATE with oldObject
(v1) and a Deployment CREATE (v1beta1) in a three-zone namespace, each answered with a
patch. Errors (a non-200 answer, a broken or refused connection) are counted; a broken
connection is opened again.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from zoneproof import errors
from zoneproof._util import certs
from zoneproof.bench import samples as figures
from zoneproof.cluster.interface import Progress
from zoneproof.specs.ha_config import keys

__all__ = ["CLIENTS", "PACED_RATE_RPS", "bench_webhook", "listen_overflows", "review_bodies"]

CLIENTS = 100
PACED_RATE_RPS = 400.0
PACED_S = 10.0
SATURATED_S = 5.0
SEQUENTIAL = 200
_NAMESPACE = "shop"
_STATIC_SERVER = "zoneproof.components.reference.ha_config.static_server"
"""The reference webhook on fixed cluster facts (a command, not an import: the reference is
reached only by name)."""
_CONNECT_TIMEOUT_S = 30.0
_START_TIMEOUT_S = 30.0


def listen_overflows() -> int:
    """``TcpExt: ListenOverflows`` now (machine-wide: SYNs dropped on a full accept queue)."""
    lines = [line.split() for line in Path("/proc/net/netstat").read_text().splitlines()
             if line.startswith("TcpExt:")]
    names, values = lines[0], lines[1]
    return int(values[names.index("ListenOverflows")])


def _pod_template(app: str) -> dict[str, object]:
    env = [{"name": f"SETTING_{i}", "value": f"value-{i}"} for i in range(12)]
    container = {
        "name": app, "image": f"registry.example/{app}:1.4.2", "args": ["--port=8080", "--log=json"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}], "env": env,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
        "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True},
    }
    return {"metadata": {"labels": {"app": app}, "annotations": {"checksum/config": "ab" * 32}},
            "spec": {"containers": [container], "serviceAccountName": app,
                     "volumes": [{"name": "config", "configMap": {"name": f"{app}-config"}}],
                     "tolerations": [{"key": "dedicated", "operator": "Equal", "value": app,
                                      "effect": "NoSchedule"}]}}


def _workload(kind: str, app: str, replicas: int) -> dict[str, object]:
    spec: dict[str, object] = {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                               "template": _pod_template(app)}
    if kind == "StatefulSet":
        spec["serviceName"] = app
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": app, "namespace": _NAMESPACE,
                         "labels": {"app": app, keys.LABEL_TYPE: keys.TYPE_SERVER},
                         "annotations": {keys.ANNOTATION_FAILURE_TOLERANCE_TYPE: "zone"}},
            "spec": spec}


def review_bodies() -> list[bytes]:
    """Three AdmissionReviews as the API server sends them (uid ``UID-PLACEHOLDER``)."""
    def review(version: str, kind: str, operation: str, app: str) -> bytes:
        obj = _workload(kind, app, 3)
        request: dict[str, object] = {
            "uid": "UID-PLACEHOLDER", "kind": {"group": "apps", "version": "v1", "kind": kind},
            "resource": {"group": "apps", "version": "v1", "resource": kind.lower() + "s"},
            "namespace": _NAMESPACE, "name": app, "operation": operation, "object": obj,
            "userInfo": {"username": "system:serviceaccount:kube-system:deployer", "groups": [
                "system:serviceaccounts", "system:authenticated"]}, "dryRun": False}
        if operation == "UPDATE":
            request["oldObject"] = _workload(kind, app, 2)
        return json.dumps({"apiVersion": f"admission.k8s.io/{version}", "kind": "AdmissionReview",
                           "request": request}).encode()

    return [review("v1", "Deployment", "CREATE", "web"), review("v1", "StatefulSet", "UPDATE", "db"),
            review("v1beta1", "Deployment", "CREATE", "api")]


@dataclass
class _Tally:
    """Latencies (seconds) and errors of one phase, shared by the client threads."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, latency: float | None) -> None:
        with self.lock:
            if latency is None:
                self.errors += 1
            else:
                self.latencies.append(latency)


class _Client:
    """One keep-alive TLS connection and its review bodies."""

    def __init__(self, index: int, port: int, context: ssl.SSLContext, bodies: list[bytes]) -> None:
        self.port, self.context, self.index = port, context, index
        self.bodies = bodies
        self.sent = 0
        self.conn: http.client.HTTPSConnection | None = None

    def _connection(self) -> http.client.HTTPSConnection:
        if self.conn is None:
            self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context,
                                                    timeout=_CONNECT_TIMEOUT_S)
            self.conn.connect()
        return self.conn

    def review(self) -> float | None:
        """Send one review: seconds until its answer was read, None on any error."""
        self.sent += 1
        body = self.bodies[self.sent % len(self.bodies)].replace(
            b"UID-PLACEHOLDER", f"{self.index:03d}-{self.sent:07d}".encode())
        start = time.perf_counter()
        try:
            conn = self._connection()
            conn.request("POST", keys.WEBHOOK_PATH, body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise http.client.HTTPException(f"HTTP {response.status}")
        except (OSError, http.client.HTTPException):
            self.close()
            return None
        return time.perf_counter() - start

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _run_clients(clients: list[_Client], work: Callable[[_Client], None]) -> None:
    threads = [threading.Thread(target=work, args=(c,), name=f"bench-client-{c.index}") for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _burst(clients: list[_Client]) -> _Tally:
    tally, barrier = _Tally(), threading.Barrier(len(clients))

    def work(client: _Client) -> None:
        barrier.wait()
        tally.add(client.review())  # the first review opens the connection

    _run_clients(clients, work)
    return tally


def _paced(clients: list[_Client], rate_rps: float, duration_s: float) -> _Tally:
    tally, period = _Tally(), len(clients) / rate_rps
    start = time.perf_counter() + 0.1
    end = start + duration_s

    def work(client: _Client) -> None:
        due = start + random.Random(client.index).uniform(0, period)
        while due < end:
            time.sleep(max(0.0, due - time.perf_counter()))  # pacing the load, not waiting for state
            tally.add(client.review())
            due += period

    _run_clients(clients, work)
    return tally


def _saturated(clients: list[_Client], duration_s: float) -> _Tally:
    tally, end = _Tally(), time.perf_counter() + duration_s

    def work(client: _Client) -> None:
        while time.perf_counter() < end:
            tally.add(client.review())

    _run_clients(clients, work)
    return tally


def _sequential(client: _Client, count: int) -> _Tally:
    tally = _Tally()
    for _ in range(count):
        tally.add(client.review())
    return tally


def _start_server(directory: Path) -> tuple[subprocess.Popen[str], int, ssl.SSLContext]:
    ca = certs.make_ca("zoneproof-bench-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(directory, "tls")
    process = subprocess.Popen([sys.executable, "-m", _STATIC_SERVER, str(crt), str(key), _NAMESPACE],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.isdigit():
        process.kill()
        process.wait()
        raise errors.ZoneproofError(f"the bench webhook did not start (exit {process.poll()}): "
                                    f"printed {line!r} instead of its port")
    return process, int(line), ssl.create_default_context(cadata=ca.cert_pem.decode())


def _one_run(directory: Path) -> dict[str, float]:
    process, port, context = _start_server(directory)
    bodies = review_bodies()
    clients = [_Client(i, port, context, bodies) for i in range(CLIENTS)]
    found = {"loadavg_1m": os.getloadavg()[0]}
    try:
        overflows = listen_overflows()
        burst = _burst(clients)
        cpu = figures.cpu_seconds(process.pid)
        paced = _paced(clients, PACED_RATE_RPS, PACED_S)
        paced_cpu, cpu = figures.cpu_seconds(process.pid) - cpu, figures.cpu_seconds(process.pid)
        saturated = _saturated(clients, SATURATED_S)
        saturated_cpu = figures.cpu_seconds(process.pid) - cpu
        sequential = _sequential(clients[0], SEQUENTIAL)
        found["listen_overflows"] = float(listen_overflows() - overflows)
    finally:
        for client in clients:
            client.close()
        process.kill()
        process.wait(timeout=_START_TIMEOUT_S)
    for name, tally in (("burst", burst), ("paced", paced), ("saturated", saturated),
                        ("sequential", sequential)):
        if tally.latencies:
            found[f"{name}_p50_ms"] = figures.percentile(tally.latencies, 0.5) * 1000
            found[f"{name}_p99_ms"] = figures.percentile(tally.latencies, 0.99) * 1000
        found[f"{name}_errors"] = float(tally.errors)
    found["paced_throughput_rps"] = len(paced.latencies) / PACED_S
    found["saturated_throughput_rps"] = len(saturated.latencies) / SATURATED_S
    found["paced_server_cpu_ms_per_review"] = paced_cpu * 1000 / max(1, len(paced.latencies))
    found["saturated_server_cpu_ms_per_review"] = saturated_cpu * 1000 / max(1, len(saturated.latencies))
    return found


def bench_webhook(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """``runs`` fresh webhook processes, each driven by ``CLIENTS`` keep-alive TLS clients."""
    samples = figures.Samples()
    with tempfile.TemporaryDirectory(prefix="zp-bench-webhook-") as tmp:
        for run in range(1, runs + 1):
            found = _one_run(Path(tmp))
            for key, value in found.items():
                samples.note(key, value)
            progress(f"run {run}/{runs}: " + ", ".join(f"{k}={v:.1f}" for k, v in found.items()))
    return figures.summarize(samples, progress, out)
