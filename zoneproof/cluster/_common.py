"""Cluster behaviour shared by every backend: API reads, readiness waits, creation steps."""

from __future__ import annotations

import base64
import contextlib
import signal
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import urllib3
import yaml
from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import certs, files, kube, waiting
from zoneproof.cluster.interface import Capability, Progress
from zoneproof.cluster.spec import NAME_PATTERN
from zoneproof.runs import ownership, state, sweep
from zoneproof.specs import kubernetes

__all__ = [
    "ZONE_LABEL",
    "ApiCluster",
    "StateDirBackend",
    "Step",
    "no_interrupts",
    "node_ready",
    "run_creation",
]

#: A named creation step.
Step = tuple[str, Callable[[], None]]

ZONE_LABEL, REGION_LABEL, HOSTNAME_LABEL = (kubernetes.ZONE_LABEL, kubernetes.REGION_LABEL,
                                           kubernetes.HOSTNAME_LABEL)


def node_ready(node: Any) -> bool:
    """True if ``node`` (a V1Node) has condition Ready=True."""
    conditions = (node.status and node.status.conditions) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


@contextlib.contextmanager
def no_interrupts() -> Iterator[None]:
    """Ignore Ctrl-C while tearing down (main thread only), so teardown is not cut short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class _HasStateFile(Protocol):
    @property
    def state(self) -> Path: ...


PathsT = TypeVar("PathsT", bound=_HasStateFile)
ClusterT = TypeVar("ClusterT")


class StateDirBackend(Generic[PathsT, ClusterT]):
    """Finding a backend's clusters: one directory each under ``<state root>/<name>/``,
    with a ``state.json`` once it is zoneproof's."""

    name: str
    #: the paths of a cluster directory; the cluster object over them
    paths_type: Callable[[Path], PathsT]
    cluster_type: Callable[[PathsT], ClusterT]

    def root(self) -> Path:
        """``<state root>/<backend name>``."""
        return state.state_root() / self.name

    def paths(self, name: str) -> PathsT:
        """The state directory of cluster ``name``: ConfigError unless ``name`` is a valid
        cluster name whose directory lies inside the backend's root (``ownership.bed_dir``)."""
        return self.paths_type(ownership.bed_dir(self.root(), name))

    def get(self, name: str) -> ClusterT | None:
        """The cluster called ``name`` if zoneproof's state of it exists."""
        paths = self.paths(name)
        return self.cluster_type(paths) if paths.state.is_file() else None

    def names(self) -> list[str]:
        """Clusters with a state file (sorted)."""
        root = self.root()
        return sorted(p.name for p in root.iterdir() if NAME_PATTERN.match(p.name)
                      and not p.is_symlink() and (p / "state.json").is_file()) \
            if root.is_dir() else []


def run_creation(steps: Sequence[Step], *, what: str, progress: Progress, keep_on_failure: bool,
                 teardown: Callable[[], None], kept_hint: str) -> float:
    """Run ``steps`` in order, printing ``[i/n] title``; the seconds they took.

    On any failure (Ctrl-C too) ``teardown`` runs unless ``keep_on_failure`` (then
    ``kept_hint`` says how to debug and remove it); a ZoneproofError comes back as a
    ProvisionError naming ``what``.
    """
    started = time.monotonic()
    try:
        for index, (title, step) in enumerate(steps, 1):
            progress(f"[{index}/{len(steps)}] {title}")
            step()
    except BaseException as exc:
        if keep_on_failure:
            progress(f"start-up failed; cluster kept for debugging ({kept_hint})")
        else:
            progress("start-up failed; tearing down what started")
            teardown()
        if isinstance(exc, errors.ZoneproofError):
            raise errors.ProvisionError(f"{what} failed to come up: {exc}") from exc
        raise
    return time.monotonic() - started


class ApiCluster:
    """Base of the concrete clusters: holds the kubeconfig and talks to the API server."""

    name: str
    backend: str
    kubeconfig: Path
    capabilities: frozenset[Capability]

    @property
    def host_address(self) -> str:
        """Loopback: the API server runs on this host (overridden where it does not)."""
        return "127.0.0.1"

    @cached_property
    def api(self) -> client.ApiClient:
        """One ApiClient per cluster object."""
        return kube.api_client(self.kubeconfig)

    @cached_property
    def _probe_api(self) -> client.ApiClient:
        """A client without retries, for health probes."""
        return kube.api_client(self.kubeconfig, retries=0)

    def apiserver_ready(self) -> bool:
        """True if the API server answers /readyz with 200 (within 3 s)."""
        try:
            response = kube.get_path(self._probe_api, "/readyz", timeout_s=3)
        except (client.ApiException, urllib3.exceptions.HTTPError):
            return False
        return int(response.status) == 200

    @property
    def core(self) -> client.CoreV1Api:
        """CoreV1Api on this cluster."""
        return client.CoreV1Api(self.api)

    def client_kubeconfig(self, user: str, groups: tuple[str, ...], path: Path) -> Path:
        """Write a kubeconfig for client identity ``user`` in ``groups`` to ``path`` (0600;
        put it in the run's private directory).

        The certificate comes from the cluster's own kube-apiserver-client signer through
        the CertificateSigningRequest API, so this works on any backend whose kcm signs; it
        expires after ``runs.CREDENTIAL_LIFETIME_S`` (the request is labelled with the run
        and deleted once issued).
        """
        csr_pem, key_pem = certs.make_csr(user, groups)
        name = f"zoneproof-{user}-{uuid.uuid4().hex[:6]}"
        api = client.CertificatesV1Api(self.api)
        api.create_certificate_signing_request(sweep.labelled({
            "metadata": {"name": name},
            "spec": {"request": base64.b64encode(csr_pem).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["client auth"],
                     "expirationSeconds": runs.CREDENTIAL_LIFETIME_S}}))
        api.patch_certificate_signing_request_approval(name, {"status": {"conditions": [{
            "type": "Approved", "status": "True", "reason": "ZoneproofTestIdentity",
            "message": "approved by zoneproof for a component under test"}]}})

        def issued() -> tuple[bool, str]:
            cert = api.read_certificate_signing_request(name).status.certificate
            return bool(cert), cert or ""

        cert_b64 = waiting.wait_for(issued, what=f"certificate of CSR {name}", timeout_s=30)
        api.delete_certificate_signing_request(name)
        doc = yaml.safe_load(self.kubeconfig.read_text())
        context = doc["current-context"]
        ctx = next(c for c in doc["contexts"] if c["name"] == context)["context"]
        ctx["user"] = user
        doc["users"] = [{"name": user, "user": {
            "client-certificate-data": cert_b64,
            "client-key-data": base64.b64encode(key_pem).decode()}}]
        files.write_private(path, yaml.safe_dump(doc, sort_keys=False))
        return path

    def audit_log(self) -> Path | None:
        """The API server's audit log (pod deletions), if this backend can read it."""
        return None

    def nodes_by_zone(self) -> dict[str, list[str]]:
        """Zone → sorted node names, from the API server."""
        zones: dict[str, list[str]] = defaultdict(list)
        for node in self.core.list_node().items:
            zones[(node.metadata.labels or {}).get(ZONE_LABEL, "")].append(node.metadata.name)
        return {zone: sorted(names) for zone, names in sorted(zones.items())}

    def nodes_ready(self) -> dict[str, bool]:
        """Node name → Ready, from the API server."""
        return {n.metadata.name: node_ready(n) for n in self.core.list_node().items}

    def wait_nodes(self, names: list[str], *, ready: bool, timeout_s: float) -> None:
        """Wait until every node in ``names`` is Ready (or not Ready, with ready=False)."""

        def probe() -> tuple[bool, dict[str, bool]]:
            now = self.nodes_ready()
            wrong = {n: now.get(n, False) for n in names if now.get(n, False) != ready}
            return not wrong, wrong

        waiting.wait_for(probe, what=f"nodes {names} Ready={ready}", timeout_s=timeout_s,
                         interval_s=0.2, ignore=(client.ApiException,))

    def zone_nodes(self, zone: str) -> list[str]:
        """Node names of ``zone``; FaultError if the zone has none."""
        nodes = self.nodes_by_zone().get(zone)
        if not nodes:
            raise errors.FaultError(f"zone {zone!r} has no nodes in cluster {self.name!r}; "
                                    f"zones: {sorted(self.nodes_by_zone())}")
        return nodes
