"""``zoneproof bench webhook``: the reference webhook serving on loopback, no cluster needed.

Per run, a fresh webhook (static cluster facts, TLS, 127.0.0.1; ``WORKERS`` processes, one
per core, as ``--workers``) and ``CLIENTS``
keep-alive TLS connections, as the API server holds them:

1. burst (Python client threads): the 100 clients connect at the same moment and each sends
   one review; figure: connect + TLS handshake + review latency, and the listen overflows
   of the whole run (``TcpExt ListenOverflows`` of /proc/net/netstat, machine-wide);
2. sequential (one Python client): ``SEQUENTIAL`` reviews one after the other: the latency
   of a review with nothing queued (TLS records + HTTP + handler);
3. saturated (closed loop, hey): 100 connections send back to back for ``LOAD_S``; figures:
   throughput and latency p50/p99 (by Little's law, mean latency = 100 / throughput);
4. paced (Python client threads): 100 connections send ``PACED_RATE_RPS`` in all, each at
   its own random phase, so the offered load is even (at 10 reviews/s a connection waits
   100 ms between requests, far longer than an answer: in effect an open loop); figure:
   latency at that rate.

Phase 3 is driven by the load generator of ``loadgen`` (hey, compiled; a Python stand-in
when hey cannot be had, said in the output). Phases 3 and 4 are repeated, in the same run, against
the **ceiling**: ``webhook-ceiling`` (gobuild/webhook-ceiling), a Go TLS HTTP/1.1 server
that answers every request with the webhook's own answer to the same review, with no
handler. Its figures are what this machine, with the generator sharing its cores, can serve
at all; ``*_vs_ceiling`` are the webhook's figures as ratios to them (throughput: webhook /
ceiling, the share of the limit reached; latency: webhook / ceiling, how many times slower).

Where the time goes: the server processes' CPU time per review (user + system, from
/proc/PID/stat) and the generator's CPU per request; the machine's 1-minute load average at
the start of the run (on a busy machine latency says more about the machine than about the
server).

Reviews are realistic: a Deployment CREATE (v1), a StatefulSet UPDATE with oldObject
(v1) and a Deployment CREATE (v1beta1) in a three-zone namespace, each answered with a
patch; the Python phases rotate the three, the generator sends the first. Errors (a
non-200 answer, a broken or refused connection) are counted.
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from zoneproof import errors
from zoneproof._util import certs
from zoneproof.bench import loadgen, procstat
from zoneproof.bench import samples as figures
from zoneproof.binaries import resolve
from zoneproof.binaries.pins import PINS
from zoneproof.cluster.interface import Progress
from zoneproof.specs.ha_config import keys

__all__ = ["CLIENTS", "PACED_RATE_RPS", "Generator", "bench_webhook", "generator", "listen_overflows",
           "review_bodies", "versus_ceiling"]

CLIENTS = 100
PACED_RATE_RPS = 1000.0
LOAD_S = 5.0
"""Length of the measured window of phases 3 and 4, seconds."""
WARMUP_S = 1.0
"""Load sent before the measured window (connections opened, TLS handshakes), seconds."""
SEQUENTIAL = 200
WORKERS = os.cpu_count() or 1
"""The webhook's worker processes (``--workers``): one per core."""
_LOAD_PHASES = ("saturated", "paced")
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


def _figures(tally: _Tally, seconds: float, client_cpu_s: float = 0.0) -> loadgen.LoadFigures:
    if not tally.latencies:
        return loadgen.LoadFigures(0, tally.errors, seconds, float("nan"), float("nan"), client_cpu_s)
    return loadgen.LoadFigures(len(tally.latencies), tally.errors, seconds,
                               figures.percentile(tally.latencies, 0.5) * 1000,
                               figures.percentile(tally.latencies, 0.99) * 1000, client_cpu_s)


def _own_cpu_seconds() -> float:
    usage = os.times()
    return usage.user + usage.system


@dataclass(frozen=True, slots=True)
class Generator:
    """How phase 3 (closed loop) is driven: hey (``hey`` set) or Python client threads."""

    hey: Path | None
    ceiling: Path | None
    note: str

    def closed(self, port: int, context: ssl.SSLContext, body: Path) -> loadgen.LoadFigures:
        """``CLIENTS`` connections back to back for ``LOAD_S`` (after ``WARMUP_S``)."""
        if self.hey is not None:
            return loadgen.run_hey(self.hey, f"https://127.0.0.1:{port}{keys.WEBHOOK_PATH}", body,
                                   clients=CLIENTS, duration_s=WARMUP_S + LOAD_S, warmup_s=WARMUP_S)
        return _python_load(port, context, body, None)

    def paced(self, port: int, context: ssl.SSLContext, body: Path) -> loadgen.LoadFigures:
        """``CLIENTS`` connections at ``PACED_RATE_RPS`` in all, each at its own phase: Python
        threads always (hey's rate limit fires every connection at the same instant)."""
        return _python_load(port, context, body, PACED_RATE_RPS)


def _python_load(port: int, context: ssl.SSLContext, body: Path,
                 rate_rps: float | None) -> loadgen.LoadFigures:
    clients = [_Client(i, port, context, [body.read_bytes()]) for i in range(CLIENTS)]
    try:
        _burst(clients)  # connect (and warm) every client first
        cpu = _own_cpu_seconds()
        tally = _saturated(clients, LOAD_S) if rate_rps is None else _paced(clients, rate_rps, LOAD_S)
        return _figures(tally, LOAD_S, _own_cpu_seconds() - cpu)
    finally:
        for client in clients:
            client.close()


def generator(progress: Progress) -> Generator:
    """hey and the ceiling from the binary cache (built on first use), else the Python stand-in."""
    try:
        hey = resolve.resolve("hey", progress=progress)
    except errors.ZoneproofError as exc:
        return Generator(None, None, f"Python client threads (hey cannot be had: {exc}; they share "
                                     "the CPU with the server and cap its figures; no ceiling)")
    try:
        ceiling = resolve.resolve("webhook-ceiling", progress=progress)
    except errors.ZoneproofError as exc:
        return Generator(hey, None, f"hey {PINS.hey} (no ceiling: {exc})")
    return Generator(hey, ceiling, f"hey {PINS.hey}; ceiling: webhook-ceiling {PINS.webhook_ceiling}")


def versus_ceiling(found: Mapping[str, float]) -> dict[str, float]:
    """``<phase>_{throughput,p50,p99}_vs_ceiling`` for each phase measured on both the webhook
    and the ceiling: throughput webhook / ceiling (share of the limit reached), latency
    webhook / ceiling (times slower). A figure the ceiling measured as 0 gives no ratio."""
    out: dict[str, float] = {}
    for phase in _LOAD_PHASES:
        for figure in ("throughput_rps", "p50_ms", "p99_ms"):
            mine, limit = found.get(f"{phase}_{figure}"), found.get(f"ceiling_{phase}_{figure}")
            if mine is not None and limit is not None and limit > 0:
                out[f"{phase}_{figure.split('_')[0]}_vs_ceiling"] = mine / limit
    return out


def _start(argv: list[str], what: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.isdigit():
        process.kill()
        process.wait()
        raise errors.ZoneproofError(f"the bench {what} did not start (exit {process.poll()}): "
                                    f"printed {line!r} instead of its port")
    return process, int(line)


def _stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait(timeout=_START_TIMEOUT_S)


def _load_phases(tool: Generator, process: subprocess.Popen[str], port: int,
                 context: ssl.SSLContext, body: Path, *, prefix: str) -> dict[str, float]:
    """Phases 3 and 4 against one server: its figures and CPU per review, keys ``prefix*``."""
    found: dict[str, float] = {}
    for phase, drive in (("saturated", tool.closed), ("paced", tool.paced)):
        cpu = procstat.tree_cpu_seconds(process.pid)
        load = drive(port, context, body)
        cpu = procstat.tree_cpu_seconds(process.pid) - cpu
        found |= load.named(prefix + phase)
        found[f"{prefix}{phase}_server_cpu_ms_per_review"] = cpu * 1000 / max(1, load.requests)
    return found


def _answer_of(port: int, context: ssl.SSLContext, body: bytes) -> bytes:
    """The webhook's answer to ``body`` (what the ceiling sends back to every request)."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=_CONNECT_TIMEOUT_S)
    try:
        conn.request("POST", keys.WEBHOOK_PATH, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        answer = response.read()
        if response.status != 200:
            raise errors.ZoneproofError(f"the bench webhook answered HTTP {response.status}: {answer!r}")
        return answer
    finally:
        conn.close()


def _one_run(directory: Path, tool: Generator) -> dict[str, float]:
    ca = certs.make_ca("zoneproof-bench-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(directory, "tls")
    context = ssl.create_default_context(cadata=ca.cert_pem.decode())
    process, port = _start([sys.executable, "-m", _STATIC_SERVER, str(crt), str(key), _NAMESPACE,
                            str(WORKERS)], "webhook")
    bodies = review_bodies()
    body, answer = directory / "review.json", directory / "answer.json"
    body.write_bytes(bodies[0].replace(b"UID-PLACEHOLDER", b"bench-0000001"))
    clients = [_Client(i, port, context, bodies) for i in range(CLIENTS)]
    found = {"loadavg_1m": os.getloadavg()[0], "webhook_workers": float(WORKERS)}
    try:
        overflows = listen_overflows()
        burst = _burst(clients)
        sequential = _sequential(clients[0], SEQUENTIAL)
        for client in clients:
            client.close()
        answer.write_bytes(_answer_of(port, context, body.read_bytes()))
        found |= _load_phases(tool, process, port, context, body, prefix="")
        found["listen_overflows"] = float(listen_overflows() - overflows)
    finally:
        for client in clients:
            client.close()
        _stop(process)
    for name, tally in (("burst", burst), ("sequential", sequential)):
        if tally.latencies:
            found[f"{name}_p50_ms"] = figures.percentile(tally.latencies, 0.5) * 1000
            found[f"{name}_p99_ms"] = figures.percentile(tally.latencies, 0.99) * 1000
        found[f"{name}_errors"] = float(tally.errors)
    if tool.ceiling is not None:
        process, port = _start([str(tool.ceiling), str(crt), str(key), str(answer)], "ceiling")
        try:
            found |= _load_phases(tool, process, port, context, body, prefix="ceiling_")
        finally:
            _stop(process)
    return found | versus_ceiling(found)


def bench_webhook(runs: int, progress: Progress, out: Path | None = None) -> figures.Summary:
    """``runs`` fresh webhook processes, each driven by ``CLIENTS`` keep-alive TLS clients,
    and the ceiling driven alike."""
    samples = figures.Samples()
    tool = generator(progress)
    progress(f"load generator: {tool.note}")
    with tempfile.TemporaryDirectory(prefix="zp-bench-webhook-") as tmp:
        for run in range(1, runs + 1):
            found = _one_run(Path(tmp), tool)
            for key, value in found.items():
                samples.note(key, value)
            progress(f"run {run}/{runs}: " + ", ".join(f"{k}={v:.2f}" for k, v in found.items()))
    return figures.summarize(samples, progress, out, notes={"load_generator": tool.note})
