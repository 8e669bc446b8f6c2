"""toxiproxy on the links between a zoned bed's zones: its proxies, and toxics through its API.

Each zone runs one ``toxiproxy-server`` (Shopify's, pinned in ``binaries.pins``) that listens,
for every other zone, on that zone's name address at its etcd ports and forwards to its
wire address (``netns``). Toxics shape those streams: ``latency`` (ms, with ``jitter``),
``bandwidth`` (KB/s) and ``timeout`` (data stops; the connection closes after the timeout,
never with 0). ``reset`` removes every toxic. The API is plain HTTP (JSON), spoken here over
urllib3 (toxiproxy's Python clients on PyPI are unmaintained since 2019).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import urllib3

from zoneproof import errors

__all__ = ["API_PORT", "ETCD_PORTS", "Proxy", "Toxics", "client", "config_json", "proxies"]

API_PORT = 8474
#: The ports of a zone's services that other zones reach through toxiproxy: etcd's client
#: (the API servers' etcd clients) and peer (raft) ports.
ETCD_PORTS = {"etcd-client": 2379, "etcd-peer": 2380}
_http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=1.0, read=5.0))


@dataclass(frozen=True, slots=True)
class Proxy:
    """One proxied link: its name, where it listens, where it forwards."""

    name: str
    listen: str
    upstream: str
    #: The zone the link leads to.
    to_zone: str

    def to_dict(self) -> dict[str, Any]:
        """toxiproxy's proxy definition."""
        return {"name": self.name, "listen": self.listen, "upstream": self.upstream,
                "enabled": True}


def proxies(zone: str, others: Mapping[str, tuple[str, str]]) -> list[Proxy]:
    """The proxies of ``zone``'s toxiproxy: for each other zone (name → (its name address,
    its wire address)), one per etcd port."""
    return [Proxy(f"{zone}-to-{other}-{label}", f"{name}:{port}", f"{wire}:{port}", other)
            for other, (name, wire) in others.items() if other != zone
            for label, port in ETCD_PORTS.items()]


def config_json(links: Sequence[Proxy]) -> str:
    """The ``-config`` file of a toxiproxy-server holding ``links``."""
    return json.dumps([p.to_dict() for p in links], indent=2)


@dataclass(frozen=True, slots=True)
class Toxics:
    """What to add to a link, both ways: one-way ``latency_ms`` (± ``jitter_ms``), a
    ``bandwidth_kbps`` cap (KB/s), ``timeout_ms`` (data stops; 0 = no such toxic)."""

    latency_ms: int = 0
    jitter_ms: int = 0
    bandwidth_kbps: int = 0
    timeout_ms: int = 0
    stop_data: bool = False
    """Data stops and connections hang open (toxiproxy's timeout toxic with 0)."""

    def problems(self) -> list[str]:
        """Every invalid value, naming the parameter."""
        found = [f"{k} must be >= 0, got {v}" for k, v in (
            ("latency_ms", self.latency_ms), ("jitter_ms", self.jitter_ms),
            ("bandwidth_kbps", self.bandwidth_kbps), ("timeout_ms", self.timeout_ms)) if v < 0]
        if not (self.latency_ms or self.bandwidth_kbps or self.timeout_ms or self.stop_data):
            found.append("no toxic: give latency_ms, bandwidth_kbps or timeout_ms (> 0)")
        return found

    def definitions(self) -> list[dict[str, Any]]:
        """toxiproxy toxic definitions, each on both streams."""
        kinds: list[tuple[str, dict[str, int]]] = []
        if self.latency_ms:
            kinds.append(("latency", {"latency": self.latency_ms, "jitter": self.jitter_ms}))
        if self.bandwidth_kbps:
            kinds.append(("bandwidth", {"rate": self.bandwidth_kbps}))
        if self.timeout_ms or self.stop_data:
            kinds.append(("timeout", {"timeout": self.timeout_ms}))
        return [{"name": f"zoneproof-{kind}-{stream}", "type": kind, "stream": stream,
                 "toxicity": 1.0, "attributes": attributes}
                for kind, attributes in kinds for stream in ("upstream", "downstream")]


class client:  # noqa: N801 - a namespace of calls on one server
    """Calls on the toxiproxy API at ``host``."""

    def __init__(self, host: str, port: int = API_PORT) -> None:
        self.base = f"http://{host}:{port}"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            response = _http.request(method, self.base + path,
                                     body=None if body is None else json.dumps(body),
                                     headers={"Content-Type": "application/json"})
        except urllib3.exceptions.HTTPError as exc:
            raise errors.FaultError(f"toxiproxy at {self.base} did not answer {method} {path}: "
                                    f"{exc}") from exc
        if response.status >= 300:
            raise errors.FaultError(f"toxiproxy at {self.base}: {method} {path} answered "
                                    f"{response.status}: {response.data.decode(errors='replace')}")
        return json.loads(response.data) if response.data else None

    def proxies(self) -> dict[str, Any]:
        """Name → proxy (with its toxics)."""
        found: dict[str, Any] = self._call("GET", "/proxies")
        return found

    def add_toxics(self, proxy: str, toxics: Toxics) -> None:
        """Add ``toxics`` to ``proxy`` (both streams)."""
        for toxic in toxics.definitions():
            self._call("POST", f"/proxies/{proxy}/toxics", toxic)

    def reset(self) -> None:
        """Remove every toxic and enable every proxy."""
        self._call("POST", "/reset")

    def toxics(self) -> dict[str, list[str]]:
        """Proxy → names of its toxics."""
        return {name: [t["name"] for t in p.get("toxics", [])]
                for name, p in self.proxies().items()}
