"""What an experiment's ``configuration`` says about zoneproof (keys ``zoneproof_*``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zoneproof import cluster, errors
from zoneproof.components.harness import options
from zoneproof.components.harness.component import Components
from zoneproof.slo.spec import SloSet, load_slos

__all__ = ["ExperimentConfig"]

_BOOL_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class ExperimentConfig:
    """zoneproof's part of an experiment configuration, validated."""

    backend: str = cluster.DEFAULT_BACKEND
    cluster: str = "zoneproof"
    kubeconfig: Path | None = None
    allow_destructive: bool = False
    namespace: str = "zp-chaos"
    """Where workloads live (the controller acts here; pods there are recorded)."""
    selector: str = "app=noobaa"
    lease: str = "default/zoneproof-ha-controller"
    """NAMESPACE/NAME of the controller's Lease (an in-cluster controller's default: its
    manifests' own)."""
    components: Components = field(default_factory=Components)
    """The webhook and controller under test (``zoneproof_components``: ``Components.to_dict``
    or its JSON; default: the reference ones)."""
    slos: tuple[str, ...] = ()
    """Names of the SLOs to judge."""
    slo_set: SloSet = field(default_factory=load_slos)
    """The SLOs by name: the defaults with ``zoneproof_slo_file`` over them, loaded once."""
    workdir: Path | None = None

    @property
    def lease_namespace(self) -> str:
        """Namespace of the controller's Lease."""
        return self.lease.split("/", 1)[0]

    @property
    def lease_name(self) -> str:
        """Name of the controller's Lease."""
        return self.lease.split("/", 1)[1]

    @classmethod
    def from_configuration(cls, configuration: Mapping[str, Any] | None) -> ExperimentConfig:
        """Read ``zoneproof_*`` keys (and load the SLO file); ConfigError names every bad one."""
        conf, d = dict(configuration or {}), cls()

        def text(key: str, default: str) -> str:
            value = conf.get(f"zoneproof_{key}", default)
            return default if value is None else str(value)

        def path(key: str) -> Path | None:
            value = text(key, "")
            return Path(value).expanduser() if value else None

        slos = conf.get("zoneproof_slos") or []
        problems = []
        if isinstance(slos, str):
            slos = [s.strip() for s in slos.split(",") if s.strip()]
        if not isinstance(slos, list) or not all(isinstance(s, str) for s in slos):
            problems.append(f"zoneproof_slos must be a list of SLO names, got {slos!r}")
            slos = []
        lease = text("lease", d.lease)
        if lease.count("/") != 1 or not all(lease.split("/")):
            problems.append(f"zoneproof_lease {lease!r} must be NAMESPACE/NAME")
        try:
            components = Components.from_dict(conf.get("zoneproof_components"))
            found = components.problems()
        except errors.ConfigError as exc:
            components, found = d.components, [str(exc)]
        problems += [f"zoneproof_components: {p}" for p in found]
        lease = options.setting(components.controller, "lease", lease)  # in-cluster: its own
        try:
            slo_set = load_slos(path("slo_file"))
        except errors.ConfigError as exc:
            problems.append(f"zoneproof_slo_file: {exc}")
        if problems:
            raise errors.ConfigError("; ".join(problems))
        return cls(backend=text("backend", d.backend), cluster=text("cluster", d.cluster),
                   kubeconfig=path("kubeconfig"),
                   allow_destructive=text("allow_destructive", "").lower() in _BOOL_TRUE,
                   namespace=text("namespace", d.namespace),
                   selector=text("selector", d.selector), lease=lease,
                   components=components, slos=tuple(slos),
                   slo_set=slo_set, workdir=path("workdir"))
