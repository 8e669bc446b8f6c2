"""The chaos experiments of a checkout (``chaos/*.yaml``) and which apply to a run.

One tag narrows them: an experiment tagged ``in-cluster`` takes down the components' own
pods, so it applies only when every component under test runs in the cluster. Any other
experiment applies to every run; one that applies and did not run is never a pass.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from zoneproof.components.harness.component import IN_CLUSTER, Components
from zoneproof.components.harness.source import Where

__all__ = ["IN_CLUSTER_TAG", "applicable", "in_cluster_only", "names", "not_applicable"]

IN_CLUSTER_TAG = "in-cluster"
"""An experiment so tagged is about the components' own pods: in-cluster components only."""


def names(directory: Path) -> list[str]:
    """Every experiment in ``directory`` (its YAML files' stems), sorted."""
    return sorted(p.stem for p in directory.glob("*.yaml"))


def in_cluster_only(directory: Path) -> set[str]:
    """The experiments tagged ``in-cluster``."""
    return {p.stem for p in directory.glob("*.yaml")
            if IN_CLUSTER_TAG in (yaml.safe_load(p.read_text()).get("tags") or [])}


def not_applicable(directory: Path, components: Components) -> dict[str, str]:
    """Experiment → why it does not apply to ``components`` (none when all run in-cluster)."""
    if all(c.where is Where.IN_CLUSTER for c in components):
        return {}
    ran = ", ".join(f"the {c.kind} {c.where}" for c in components)
    return {name: f"takes down the components' own pods: only for components that all run "
                  f"{IN_CLUSTER} (these run: {ran})"
            for name in sorted(in_cluster_only(directory))}


def applicable(directory: Path, components: Components) -> list[str]:
    """The experiments that apply to ``components``, sorted."""
    excluded = not_applicable(directory, components)
    return [name for name in names(directory) if name not in excluded]
