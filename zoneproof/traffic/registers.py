"""Register traffic: concurrent clients run get/put/cas/delete on a few ConfigMaps and record
every operation's invoke and return times (the run's Timeline clock), arguments and outcome.

Each client is a thread with its own ApiClient (no retries: one request, one operation).
A shared pacer hands out start slots at the stated total rate; a slow API server lowers the
rate achieved, it never causes a burst afterwards. Every write puts a unique value
(``c<client>-<n>``), so a value read names the write that produced it.

- get: by ``ReadMode``: a quorum GET, a LIST with resourceVersion=0 (watch cache), or the
  client-side informer's cache.
- put: server-side apply (creates or updates, force).
- cas: update carrying the resourceVersion this client last saw for the key (409 if it moved).
- delete: delete.

A client whose write came back unknown (timeout, 5xx, connection lost) probes with quorum
GETs, whatever the read mode, and writes again only after one answers. Each unknown write
stays pending in the checker's search until the end of the history, so their number per key
decides whether porcupine can finish: without the back-off, 16 clients kept writing through
a 13 s quorum loss on kind and left ~27 pending writes per key, two keys undecided after
60 s; with it, at most one per client and outage.

Events: ``traffic_started`` {namespace, read_mode, rate_ops_s, clients, keys} and
``traffic_stopped`` {operations}. The History is returned by ``stop()`` and saved by the
caller next to the timeline (``history.json``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import kube, waiting
from zoneproof.measure.history import (
    GUARD_WINDOW_S,
    History,
    Operation,
    OpKind,
    Outcome,
    ReadMode,
    TrafficPlan,
)
from zoneproof.measure.timeline import Timeline
from zoneproof.runs import sweep
from zoneproof.traffic.informer import ConfigMapInformer

__all__ = ["DATA_KEY", "FIELD_MANAGER", "RegisterTraffic", "TrafficSettings", "classify",
           "probing_after"]

log = logging.getLogger(__name__)

DATA_KEY = "v"
FIELD_MANAGER = "zoneproof-traffic"
_APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True, slots=True)
class TrafficSettings:
    """What to run: ``clients`` threads at ``rate_ops_s`` in total on ``keys`` ConfigMaps.

    ``mix`` weighs get, put, cas, delete (a cas with no resourceVersion known for its key
    reads instead). ``min_rate_ops_s`` (the bed's ``Traits.history_min_rate_ops_s``) is
    recorded with the history: a judge calls the history void when the traffic before a
    fault ran slower. Each client waits for its
    answer, so the rate achieved is at most ``clients`` / latency: 16 clients hold 150 ops/s
    up to ~100 ms a request. Past that the bed is the limit, not the clients (a
    3-control-plane kind on 2 cores: 92 ops/s with 8 clients, 91 with 16; hence
    ``Traits.history_min_rate_ops_s`` per backend).
    """

    namespace: str
    min_rate_ops_s: float
    keys: int = 5
    clients: int = 16
    rate_ops_s: float = 150.0
    read_mode: ReadMode = ReadMode.QUORUM
    request_timeout_s: float = 3.0
    mix: tuple[float, float, float, float] = (0.5, 0.2, 0.2, 0.1)
    seed: int = 0
    key_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        problems = []
        if self.keys < 1 or self.clients < 1:
            problems.append(f"keys and clients must be >= 1, got {self.keys} and {self.clients}")
        if not 0 < self.min_rate_ops_s <= self.rate_ops_s:
            problems.append(f"need 0 < min_rate_ops_s <= rate_ops_s, got {self.min_rate_ops_s:g} "
                            f"and {self.rate_ops_s:g}")
        if self.request_timeout_s <= 0:
            problems.append(f"request_timeout_s must be > 0, got {self.request_timeout_s:g}")
        if len(self.mix) != 4 or min(self.mix) < 0 or sum(self.mix) <= 0:
            problems.append(f"mix weighs get, put, cas, delete: 4 weights >= 0, got {self.mix}")
        if problems:
            raise errors.ConfigError("invalid register traffic: " + "; ".join(problems))
        object.__setattr__(self, "key_names", tuple(f"r-{i}" for i in range(self.keys)))

    def plan(self) -> TrafficPlan:
        """The plan recorded with the history."""
        return TrafficPlan(self.namespace, self.key_names, self.clients, self.rate_ops_s,
                           self.min_rate_ops_s, self.read_mode, self.seed)


def classify(exc: BaseException, kind: OpKind) -> tuple[Outcome, str]:
    """The outcome of a request that raised ``exc``, and a short error text.

    404 is NOT_FOUND (not for put: apply creates) and 409 on a cas is CONFLICT; a request
    refused before it was sent (no connection) or rejected with another 4xx was certainly
    not applied (FAILED); a 5xx, a timeout or a connection lost after sending may have been
    (UNKNOWN).
    """
    if isinstance(exc, client.ApiException):
        status = int(exc.status or 0)
        text = f"HTTP {status}" + (f" {exc.reason}" if exc.reason else "")
        if status == 404 and kind is not OpKind.PUT:
            return Outcome.NOT_FOUND, ""
        if status == 409 and kind is OpKind.CAS:
            return Outcome.CONFLICT, ""
        if 400 <= status < 500:
            return Outcome.FAILED, text
        return Outcome.UNKNOWN, text
    reason = exc.reason if isinstance(exc, urllib3.exceptions.MaxRetryError) else exc
    if isinstance(reason, urllib3.exceptions.ConnectTimeoutError):  # incl. NewConnectionError
        return Outcome.FAILED, f"not sent: {type(reason).__name__}"
    return Outcome.UNKNOWN, type(reason).__name__


_ERRORS = (client.ApiException, urllib3.exceptions.HTTPError, OSError)


class _Pacer:
    """Start slots ``1 / rate`` apart, shared by all clients; never in the past."""

    def __init__(self, rate_ops_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval, self._clock = 1.0 / rate_ops_s, clock
        self._next = clock()
        self._lock = threading.Lock()

    def wait(self, stop: threading.Event) -> bool:
        """Wait for the next slot; False once ``stop`` is set."""
        with self._lock:
            now = self._clock()
            slot = max(self._next, now)
            self._next = slot + self._interval
        return not stop.wait(max(0.0, slot - now))


@dataclass
class _Client:
    index: int
    core: client.CoreV1Api
    rng: random.Random
    known_rv: dict[str, str] = field(default_factory=dict)
    writes: int = 0
    probing: bool = False
    """Its last write came back unknown: it reads (quorum) until a read answers."""


class RegisterTraffic:
    """Runs the settings' clients on a fresh namespace until ``stop()``; the History."""

    def __init__(self, kubeconfig: Path, timeline: Timeline, settings: TrafficSettings) -> None:
        self.kubeconfig, self.timeline, self.settings = kubeconfig, timeline, settings
        self._admin = kube.api_client(kubeconfig)
        self._operations: list[Operation] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._clients: list[client.ApiClient] = []
        self._informer: ConfigMapInformer | None = None
        self._history: History | None = None

    def start(self) -> RegisterTraffic:
        """Create the namespace (ConfigError if it exists), start the informer (informer
        reads) and the clients."""
        s = self.settings
        core = client.CoreV1Api(self._admin)
        try:
            core.create_namespace(sweep.labelled({"metadata": {"name": s.namespace}}))
        except client.ApiException as exc:
            if exc.status == 409:
                raise errors.ConfigError(
                    f"namespace {s.namespace} exists: register traffic needs a fresh one (its "
                    "keys start absent); pick another name or delete it") from exc
            raise
        if s.read_mode is ReadMode.INFORMER:
            api = kube.api_client(self.kubeconfig, retries=0)
            self._clients.append(api)
            try:
                self._informer = ConfigMapInformer(api, s.namespace, self.timeline,
                                                   data_key=DATA_KEY,
                                                   rng=random.Random(s.seed)).start()
            except BaseException:
                with contextlib.suppress(*_ERRORS):
                    core.delete_namespace(s.namespace)
                raise
        pacer = _Pacer(s.rate_ops_s)
        for index in range(s.clients):
            api = kube.api_client(self.kubeconfig, retries=0)
            self._clients.append(api)
            worker = _Client(index, client.CoreV1Api(api), random.Random(s.seed * 1_000 + index))
            thread = threading.Thread(target=self._run, args=(worker, pacer), daemon=True,
                                      name=f"RegisterClient-{index}")
            self._threads.append(thread)
        self.timeline.add("traffic_started", s.namespace, read_mode=str(s.read_mode),
                          rate_ops_s=f"{s.rate_ops_s:g}", clients=str(s.clients),
                          keys=str(s.keys))
        for thread in self._threads:
            thread.start()
        log.info("register traffic: %d clients, %g ops/s, %s reads on %s", s.clients,
                 s.rate_ops_s, s.read_mode, s.namespace)
        return self

    def recent_rate(self) -> float | None:
        """The rate the guard would judge if a fault came now (``History.rate_before``);
        None until the first call is ``GUARD_WINDOW_S`` old."""
        now = self.timeline.now()
        with self._lock:
            operations = tuple(self._operations)
        recorded = History(self.settings.plan(), self.timeline.start_wall, operations)
        started = recorded.started
        return None if started is None or now - started < GUARD_WINDOW_S else recorded.rate_before(now)

    def wait_at_rate(self, timeout_s: float) -> float | None:
        """Wait until the traffic ran at its minimum rate over the last ``GUARD_WINDOW_S`` (what
        a fault's history is judged by), at most ``timeout_s``; the rate last seen (under the
        minimum after a timeout: the history will be VOID, which says so)."""
        def probe() -> tuple[bool, float | None]:
            rate = self.recent_rate()
            return rate is not None and rate >= self.settings.min_rate_ops_s, rate

        try:
            return waiting.wait_for(probe, what=f"register traffic at "
                                    f">= {self.settings.min_rate_ops_s:g} ops/s",
                                    timeout_s=timeout_s, interval_s=0.25)
        except waiting.WaitTimeout as exc:
            log.warning("%s", exc)
            return self.recent_rate()

    def stop(self, *, delete_namespace: bool = True) -> History:
        """Stop the clients (each finishes its request) and the informer; the History."""
        if self._history is not None:
            return self._history
        self._stop.set()
        for thread in self._threads:
            thread.join(self.settings.request_timeout_s + 5)
        if self._informer is not None:
            self._informer.stop()
        for api in self._clients:
            api.close()
        with self._lock:
            ordered = sorted(self._operations, key=lambda op: op.call)
        operations = tuple(dataclasses.replace(op, id=n) for n, op in enumerate(ordered))
        self._history = History(self.settings.plan(), self.timeline.start_wall, operations)
        self.timeline.add("traffic_stopped", self.settings.namespace,
                          operations=str(len(operations)))
        if delete_namespace:
            with contextlib.suppress(*_ERRORS):
                client.CoreV1Api(self._admin).delete_namespace(self.settings.namespace)
        return self._history

    def _choose(self, worker: _Client) -> tuple[str, OpKind]:
        key = worker.rng.choice(self.settings.key_names)
        kind = worker.rng.choices(list(OpKind), weights=self.settings.mix)[0]
        if worker.probing or (kind is OpKind.CAS and key not in worker.known_rv):
            kind = OpKind.GET
        return key, kind

    def _run(self, worker: _Client, pacer: _Pacer) -> None:
        while pacer.wait(self._stop):
            key, kind = self._choose(worker)
            value = f"c{worker.index}-{worker.writes}" if kind in (OpKind.PUT, OpKind.CAS) else ""
            if value:
                worker.writes += 1
            op = self._request(worker, key, kind, value)
            with self._lock:
                self._operations.append(op)
            _remember(worker.known_rv, op)
            worker.probing = probing_after(worker.probing, op)

    def _request(self, worker: _Client, key: str, kind: OpKind, value: str) -> Operation:
        expected = worker.known_rv.get(key, "") if kind is OpKind.CAS else ""
        call = self.timeline.now()
        try:
            read, rv = self._send(worker.core, key, kind, value, expected,
                                  quorum=worker.probing)
        except _ERRORS as exc:
            outcome, error = classify(exc, kind)
            return Operation(0, worker.index, key, kind, call, self.timeline.now(), outcome,
                             value, expected, "", error)
        if rv is None:
            return Operation(0, worker.index, key, kind, call, self.timeline.now(),
                             Outcome.NOT_FOUND, value, expected)
        return Operation(0, worker.index, key, kind, call, self.timeline.now(), Outcome.OK,
                         read if kind is OpKind.GET else value, expected, rv)

    def _send(self, core: client.CoreV1Api, key: str, kind: OpKind, value: str,  # noqa: PLR0913
              expected: str, *, quorum: bool = False) -> tuple[str, str | None]:
        """One request: (value read, resourceVersion); rv None for an absent key; ``quorum``
        reads from etcd whatever the read mode."""
        ns, timeout = self.settings.namespace, self.settings.request_timeout_s
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": key},
                "data": {DATA_KEY: value}}
        if kind is OpKind.GET:
            return self._read(core, key, ReadMode.QUORUM if quorum else self.settings.read_mode)
        if kind is OpKind.PUT:
            obj = core.patch_namespaced_config_map(key, ns, body, field_manager=FIELD_MANAGER,
                                                   force=True, _content_type=_APPLY,
                                                   _request_timeout=timeout)
        elif kind is OpKind.CAS:
            body["metadata"]["resourceVersion"] = expected  # type: ignore[index]
            obj = core.replace_namespaced_config_map(key, ns, body, _request_timeout=timeout)
        else:
            core.delete_namespaced_config_map(key, ns, _request_timeout=timeout)
            return "", ""
        return value, str(obj.metadata.resource_version)

    def _read(self, core: client.CoreV1Api, key: str, mode: ReadMode) -> tuple[str, str | None]:
        ns, timeout = self.settings.namespace, self.settings.request_timeout_s
        if mode is ReadMode.INFORMER:
            assert self._informer is not None
            cached = self._informer.get(key)
            return cached if cached is not None else ("", None)
        if mode is ReadMode.WATCH_CACHE:
            items = core.list_namespaced_config_map(
                ns, field_selector=f"metadata.name={key}", resource_version="0",
                _request_timeout=timeout).items
            if not items:
                return "", None
            obj = items[0]
        else:
            try:
                obj = core.read_namespaced_config_map(key, ns, _request_timeout=timeout)
            except client.ApiException as exc:
                if exc.status == 404:
                    return "", None
                raise
        return (obj.data or {}).get(DATA_KEY, ""), str(obj.metadata.resource_version)


def probing_after(probing: bool, op: Operation) -> bool:
    """Whether a client probes after ``op``: from an unknown write until a read answers."""
    if op.kind is not OpKind.GET and op.outcome is Outcome.UNKNOWN:
        return True
    if op.kind is OpKind.GET and op.outcome.definite:
        return False
    return probing


def _remember(known_rv: dict[str, str], op: Operation) -> None:
    """What a client knows of the key's resourceVersion after ``op`` (for its next cas)."""
    if op.outcome is Outcome.OK and op.kind is not OpKind.DELETE:
        known_rv[op.key] = op.rv
    elif not (op.outcome is Outcome.FAILED
              or (op.outcome is Outcome.UNKNOWN and op.kind is OpKind.GET)):
        known_rv.pop(op.key, None)  # gone, moved, or possibly changed by this very write
