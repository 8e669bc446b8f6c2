"""The kinds of component under test, as registered values: the webhook and the HA controller.

A kind says what the suite needs to know of every component of it, whatever its source:
the placeholders its command may use (and must), the reference's manifests, whether it
is an admission webhook served over https (reachable by URL, registered by a
MutatingWebhookConfiguration), the settings the suite tells it, those its in-cluster
manifests fix themselves, and its conformance suite. The options, the profile, the
reports and the mutants command read them from here; a kind is one ``register`` call.
``Kind.WEBHOOK`` and ``Kind.CONTROLLER`` name the two registered below, for code about
one of them (the webhook's runner, the controller's faults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from zoneproof import errors
from zoneproof.components import manifests
from zoneproof.components.harness.option import Option
from zoneproof.specs import kubernetes

__all__ = ["Kind", "KindSpec", "every", "get", "placeholders", "register", "spec"]


class Kind(str):
    """A registered kind of component under test, by name (``webhook``, ``controller``)."""

    __slots__ = ()
    WEBHOOK: ClassVar[Kind]
    CONTROLLER: ClassVar[Kind]

    @property
    def spec(self) -> KindSpec:
        """What the suite knows of this kind."""
        return spec(self)


@dataclass(frozen=True, slots=True)
class KindSpec:
    """What the suite knows of every component of one kind."""

    name: str
    title: str
    """For help and messages: ``the high-availability-config webhook``."""
    placeholders: tuple[str, ...]
    """The placeholders its command template may use (``{variant}``: registered ones only)."""
    required: tuple[str, ...]
    """The placeholders its command must use to be reachable and attributable."""
    manifests: Path
    """The reference's kustomize directory (in-cluster mode without a vendor's)."""
    conformance: tuple[str, ...]
    """Its conformance suites' directories (relative to the checkout): what a certification
    leaves out when the reference stands in for the kind."""
    mutant_suite: tuple[str, ...]
    """The test files ``zoneproof mutants`` runs against each broken variant."""
    serves: bool = False
    """An admission webhook: served over https, reachable by URL, registered by a
    MutatingWebhookConfiguration (the in-cluster one's serving certificate in ``tls/``)."""
    settings: tuple[Option, ...] = ()
    """What the suite tells a component of this kind (the controller's selector, Lease)."""
    in_cluster_variants: bool = False
    """Its in-cluster runner tells the reference images which variant to run."""
    fixed_in_cluster: Mapping[str, str] = field(default_factory=dict)
    """Settings its in-cluster manifests fix themselves (the reference's Lease, which their
    RBAC names): the default of those settings for an in-cluster component."""


_KINDS: dict[str, tuple[Kind, KindSpec]] = {}


def register(described: KindSpec) -> Kind:
    """Register a kind; the ``Kind`` naming it."""
    taken = _KINDS.get(described.name)
    if taken is not None and taken[1] != described:
        raise TypeError(f"component kind {described.name!r} is registered already")
    kind = Kind(described.name)
    _KINDS[described.name] = (kind, described)
    return kind


def get(name: str) -> Kind:
    """The registered kind called ``name``; ConfigError lists the registered ones."""
    found = _KINDS.get(str(name))
    if found is None:
        raise errors.ConfigError(f"component kind {name!r}: expected {' or '.join(_KINDS)}")
    return found[0]


def spec(kind: str) -> KindSpec:
    """What the suite knows of ``kind``."""
    return _KINDS[get(kind)][1]


def every() -> tuple[Kind, ...]:
    """Every registered kind, in registration order."""
    return tuple(kind for kind, _ in _KINDS.values())


def placeholders(kind: str, names: tuple[str, ...] | None = None) -> str:
    """``{a}, {b}, ...``: the placeholders of ``kind`` (or ``names``), for messages and help."""
    return ", ".join("{" + p + "}" for p in (spec(kind).placeholders if names is None else names))


def _lease_problem(value: str) -> str | None:
    namespace, _, name = value.partition("/")
    if value.count("/") != 1 or not namespace or not name:
        return f"{value!r} must be NAMESPACE/NAME"
    if not kubernetes.is_dns_label(namespace) or not kubernetes.is_dns_subdomain(name):
        return (f"{value!r} must be NAMESPACE/NAME of a Lease (lowercase letters, digits, '-'; "
                "a name may have '.')")
    return None


def _selector_problem(value: str) -> str | None:
    if not value.strip():
        return "give a label selector (e.g. app=noobaa)"
    try:
        kubernetes.matching_labels(value)
    except errors.ConfigError as exc:
        return str(exc)
    return None


def _namespaces_problem(value: str) -> str | None:
    if value == NAMESPACES_PER_TEST:
        return None
    return (f"{value!r} is not supported: the suite makes fresh namespaces for each test and "
            f"passes them comma-separated in {{namespaces}}; write {NAMESPACES_PER_TEST!r} and "
            "make the command use it")


NAMESPACES_PER_TEST = "per-test"
DEFAULT_LEASE = "default/zoneproof-ha-controller"

Kind.WEBHOOK = register(KindSpec(
    name="webhook", title="the high-availability-config webhook",
    placeholders=("python", "kubeconfig", "host", "port", "cert_file", "key_file"),
    required=("port", "cert_file", "key_file"),
    manifests=manifests.DEPLOY_DIR / "ha-config-webhook", conformance=("conformance/ha_config",),
    mutant_suite=("conformance/ha_config/test_registration.py",
                  "conformance/ha_config/test_cases.py", "conformance/ha_config/test_generated.py"),
    serves=True))

Kind.CONTROLLER = register(KindSpec(
    name="controller", title="the HA controller",
    placeholders=("python", "kubeconfig", "identity", "namespaces", "selector", "lease_name",
                  "lease_namespace", "lease_duration", "renew_deadline", "retry_period"),
    required=("kubeconfig", "identity"),
    manifests=manifests.DEPLOY_DIR / "ha-controller", conformance=("conformance/ha_controller",),
    mutant_suite=("conformance/ha_controller/test_controller.py",
                  "conformance/ha_controller/test_generated.py"),
    settings=(
        Option("selector", "label selector of the pods {title} acts on", metavar="SELECTOR",
               default="app=noobaa", check=_selector_problem),
        Option("lease", "NAMESPACE/NAME of the Lease {title} holds (in-cluster: the "
               "manifests' own)", metavar="NAMESPACE/NAME", default=DEFAULT_LEASE,
               check=_lease_problem),
        Option("namespaces", "the namespaces {title} acts in: per-test (the suite makes fresh "
               "ones for each test and passes them in {{namespaces}})", default=NAMESPACES_PER_TEST,
               flags=False, check=_namespaces_problem)),
    in_cluster_variants=True, fixed_in_cluster={"lease": "/".join(manifests.CONTROLLER_LEASE)}))
