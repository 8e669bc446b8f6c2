"""The component under test: what it is, where it comes from, how it is registered.

One value for the webhook and the HA controller alike. Its source is one of
- ``Registered``: an implementation of the component registry (the reference, or one a
  vendor registered) started as one of its variants;
- ``Command``: a vendor's command template the suite starts (no variants);
- ``Url``: a webhook already running at an https URL, with the CA that signs it;
- ``InCluster``: workloads the suite deploys from a kustomize manifests directory with the
  images of an archive loaded into every node (the reference: deploy/ and the archive of
  ``zoneproof build --images``), on backends that can load images (``harness.in_cluster``).
A webhook is
registered with its ``registration_file`` (the vendor's own MutatingWebhookConfiguration;
the suite names it and fills in each entry's clientConfig, see
``specs.ha_config.registration.adopt``) or else with the spec's §3 configuration, with
the selection its registered variant wants.

``to_dict``/``from_dict`` is the one form a component crosses a process boundary in
(pytest options, chaos experiment configuration, qualify and mutants).
"""

from __future__ import annotations

import json
import shlex
import string
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from zoneproof import errors
from zoneproof.cluster import registry as backends
from zoneproof.cluster.interface import Capability
from zoneproof.components import manifests
from zoneproof.components.harness import registry
from zoneproof.components.harness.registry import Kind
from zoneproof.specs.ha_config import registration

__all__ = ["HOST", "IN_CLUSTER", "MODES", "PLACEHOLDERS", "REQUIRED", "Command", "Component",
           "Components", "InCluster", "Registered", "Source", "Url", "from_choices", "placeholders"]

#: How components under test run: host processes (or a URL), or in-cluster workloads.
HOST, IN_CLUSTER = "host", "in-cluster"
MODES = (HOST, IN_CLUSTER)

#: The placeholders a command template of each kind may use (``{variant}``: registered only).
PLACEHOLDERS: dict[Kind, tuple[str, ...]] = {
    Kind.WEBHOOK: ("python", "kubeconfig", "host", "port", "cert_file", "key_file"),
    Kind.CONTROLLER: ("python", "kubeconfig", "identity", "namespaces", "selector", "lease_name",
                      "lease_namespace", "lease_duration", "renew_deadline", "retry_period"),
}
#: The placeholders a command must use to be reachable and attributable.
REQUIRED: dict[Kind, tuple[str, ...]] = {
    Kind.WEBHOOK: ("port", "cert_file", "key_file"),
    Kind.CONTROLLER: ("kubeconfig", "identity"),
}
_VARIANT = "variant"


def placeholders(kind: Kind, names: tuple[str, ...] | None = None) -> str:
    """``{a}, {b}, ...``: the placeholders of ``kind`` (or ``names``), for messages and help."""
    return ", ".join("{" + p + "}" for p in (PLACEHOLDERS[kind] if names is None else names))


@dataclass(frozen=True, slots=True)
class Registered:
    """An implementation of the component registry, started as one of its variants."""

    name: str = registry.REFERENCE
    variant: str = registry.REFERENCE


@dataclass(frozen=True, slots=True)
class Command:
    """A command template the suite starts (the kind's placeholders, no variant)."""

    template: str


@dataclass(frozen=True, slots=True)
class Url:
    """A webhook already running at ``url`` whose serving certificate ``ca_bundle`` signs."""

    url: str
    ca_bundle: Path


#: The reference's manifests of each kind (subdirectories of deploy/).
REFERENCE_MANIFESTS: dict[Kind, Path] = {Kind.WEBHOOK: manifests.DEPLOY_DIR / "ha-config-webhook",
                                         Kind.CONTROLLER: manifests.DEPLOY_DIR / "ha-controller"}


@dataclass(frozen=True, slots=True)
class InCluster:
    """Workloads deployed from kustomize ``manifests`` with ``image_archive``'s images loaded
    into every node; no archive: the reference images (``zoneproof build --images``)."""

    manifests: Path
    image_archive: Path | None = None
    variant: str = registry.REFERENCE
    """A variant of the reference controller its images run (``--variant``): the reference
    images only (a vendor's images have none)."""

    @property
    def reference(self) -> bool:
        """True for the reference's own manifests and images."""
        return self.image_archive is None


Source = Registered | Command | Url | InCluster
_SOURCE_NAMES: dict[type[Registered | Command | Url | InCluster], str] = {
    Registered: "registered", Command: "command", Url: "url", InCluster: IN_CLUSTER}
_KEYS = {"registered": ("name", "variant"), "command": ("command",), "url": ("url", "ca_bundle"),
         IN_CLUSTER: ("manifests", "image_archive", "variant")}


def _fields(template: str) -> list[str]:
    """The placeholder names a template uses (``{a.b}`` counts as ``a``); '' for ``{}``."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise errors.ConfigError(f"command template {template!r} is malformed: {exc} (write a "
                                 "literal brace as {{ or }})") from None
    return [name.split(".")[0].split("[")[0] for _, name, _, _ in parsed if name is not None]


@dataclass(frozen=True, slots=True)
class Component:
    """One component under test."""

    kind: Kind
    source: Source = field(default_factory=Registered)
    registration_file: Path | None = None
    """A webhook's own MutatingWebhookConfiguration (YAML/JSON); None: the spec's §3."""

    # -- what it is ----------------------------------------------------------------------
    @property
    def source_name(self) -> str:
        """``registered``, ``command``, ``url`` or ``in-cluster``."""
        return _SOURCE_NAMES[type(self.source)]

    @property
    def implementation(self) -> registry.Implementation | None:
        """The registered implementation (None for a command or a URL)."""
        if isinstance(self.source, Registered):
            return registry.implementation(self.kind, self.source.name)
        return None

    @property
    def variant(self) -> str | None:
        """The registered variant started (None for a command or a URL)."""
        return self.source.variant if isinstance(self.source, Registered) else None

    @property
    def template(self) -> str:
        """The command template the suite starts ('' for a URL)."""
        if isinstance(self.source, Command):
            return self.source.template
        implementation = self.implementation
        return implementation.command if implementation is not None else ""

    @property
    def external(self) -> bool:
        """True when the component runs elsewhere (the suite cannot start or stop it)."""
        return isinstance(self.source, Url)

    @property
    def mode(self) -> str:
        """``in-cluster`` for workloads the suite deploys, else ``host``."""
        return IN_CLUSTER if isinstance(self.source, InCluster) else HOST

    def label(self) -> str:
        """A short human description for messages."""
        if isinstance(self.source, Registered):
            return f"{self.kind} {self.source.name!r} (variant {self.source.variant})"
        if isinstance(self.source, Command):
            return f"{self.kind} command {self.source.template!r}"
        if isinstance(self.source, InCluster):
            images = self.source.image_archive or "the reference images"
            variant = ("" if self.source.variant == registry.REFERENCE
                       else f", variant {self.source.variant}")
            return f"in-cluster {self.kind} from {self.source.manifests} ({images}{variant})"
        return f"{self.kind} at {self.source.url}"

    # -- validation ----------------------------------------------------------------------
    def problems(self) -> list[str]:
        """What is wrong with this component (empty when valid)."""
        found = []
        if isinstance(self.source, Registered):
            try:
                implementation = registry.implementation(self.kind, self.source.name)
                implementation.check_variant(self.source.variant)
            except errors.ConfigError as exc:
                found.append(str(exc))
        elif isinstance(self.source, Command):
            found += self._template_problems(self.source.template)
        elif isinstance(self.source, InCluster):
            found += self._in_cluster_problems(self.source)
        else:
            found += self._url_problems(self.source)
        if self.registration_file is not None and isinstance(self.source, InCluster):
            found.append(f"the in-cluster {self.kind} is registered by its own manifests: drop "
                         "the registration file (put the MutatingWebhookConfiguration in them)")
        elif self.registration_file is not None:
            found += self._registration_problems(self.registration_file)
        return found

    def _registration_problems(self, path: Path) -> list[str]:
        if self.kind is not Kind.WEBHOOK:
            return [f"a {self.kind} has no registration file: only a webhook is registered"]
        if not path.is_file():
            return [f"webhook registration {path} is not a file: give the path of your "
                    "MutatingWebhookConfiguration (YAML or JSON)"]
        try:
            registration.load_file(path)
        except errors.ConfigError as exc:
            return [str(exc)]
        return []

    def _template_problems(self, template: str) -> list[str]:
        allowed = PLACEHOLDERS[self.kind]
        valid = placeholders(self.kind)
        try:
            used = _fields(template)
        except errors.ConfigError as exc:
            return [f"{self.kind} {exc}"]
        found = []
        if unknown := sorted(set(used) - set(allowed)):
            hint = (" ({variant} belongs to registered implementations: put the variant in the "
                    "command itself)" if _VARIANT in unknown else "")
            found.append(f"{self.kind} command has unknown placeholder(s) "
                         f"{placeholders(self.kind, tuple(unknown))}: use {valid}{hint}")
        if missing := tuple(p for p in REQUIRED[self.kind] if p not in used):
            found.append(f"{self.kind} command must use {placeholders(self.kind, missing)} "
                         f"(the suite chooses them); placeholders: {valid}")
        return found

    def _in_cluster_problems(self, source: InCluster) -> list[str]:
        found = []
        if source.variant != registry.REFERENCE and (
                reason := replace(self, source=replace(source, variant=registry.REFERENCE)
                                  ).cannot_be(source.variant)) is not None:
            found.append(reason)
        if not (source.manifests / "kustomization.yaml").is_file():
            found.append(f"in-cluster {self.kind} manifests {source.manifests} have no "
                         "kustomization.yaml: give a kustomize directory (like deploy/"
                         f"{REFERENCE_MANIFESTS[self.kind].name} in the repository)")
        if source.image_archive is None and source.manifests != REFERENCE_MANIFESTS[self.kind]:
            found.append(f"in-cluster {self.kind} manifests {source.manifests} need the image "
                         f"archive of their images (--zp-{self.kind}-image-archive TAR, made by "
                         "`docker save`)")
        elif source.image_archive is not None and not source.image_archive.is_file():
            found.append(f"in-cluster {self.kind} image archive {source.image_archive} is not a "
                         "file: give the archive `docker save` wrote")
        return found

    def _url_problems(self, source: Url) -> list[str]:
        found = []
        if self.kind is not Kind.WEBHOOK:
            found.append(f"a {self.kind} cannot be reached by URL: give a command")
        if not source.url.startswith("https://"):
            found.append(f"webhook URL {source.url!r} must be https:// (admission requires TLS)")
        if not source.ca_bundle.is_file():
            found.append(f"webhook URL needs the PEM CA bundle that signed its serving certificate; "
                         f"{source.ca_bundle} is not a file")
        return found

    def validate(self) -> Component:
        """This component; ConfigError naming every problem."""
        if found := self.problems():
            raise errors.ConfigError("; ".join(found))
        return self

    # -- starting and registering ----------------------------------------------------------
    def argv(self, values: Mapping[str, object], extra_args: tuple[str, ...] = ()) -> list[str]:
        """The command line: the template with ``values`` (quoted) filled in, then ``extra_args``."""
        if self.external:
            raise errors.ConfigError(f"the {self.label()} runs elsewhere: the suite starts no command")
        if isinstance(self.source, InCluster):
            raise errors.ConfigError(f"the {self.label()} is deployed by its manifests: the suite "
                                     "starts no command")
        filled = {k: shlex.quote(str(v)) for k, v in values.items()}
        if self.variant is not None:
            filled[_VARIANT] = shlex.quote(self.variant)
        try:
            text = self.template.format(**filled)
        except (KeyError, IndexError) as exc:
            raise errors.ConfigError(f"{self.kind} command has unknown placeholder {exc}: use "
                                     f"{placeholders(self.kind)}") from None
        return [*shlex.split(text), *extra_args]

    def selection(self) -> registration.Selection:
        """What the webhook's registration selects: its registered variant's, else the spec's."""
        implementation = self.implementation
        if implementation is None or self.variant is None:
            return registration.SPEC
        return implementation.selection_of(self.variant)

    # -- variants --------------------------------------------------------------------------
    def cannot_be(self, variant: str) -> str | None:
        """Why this component cannot be started as ``variant`` (None: it can)."""
        implementation = self.implementation
        if isinstance(self.source, InCluster):
            if not self.source.reference or self.kind is not Kind.CONTROLLER:
                return (f"the {self.label()} runs its images, not variants: run the broken "
                        f"variant {variant!r} as a host process (--zp-components {HOST})")
            implementation = registry.implementation(self.kind, registry.REFERENCE)
        if implementation is None:
            return (f"the {self.label()} has no variants: register it in the entry-point group "
                    f"{registry.GROUP!r} with its variants to run checks against {variant!r}")
        if variant not in implementation.variants:
            return (f"the {self.kind} implementation {implementation.name!r} has no variant "
                    f"{variant!r} (it has {', '.join(implementation.variants)})")
        return None

    def with_variant(self, variant: str) -> Component:
        """The same registered implementation started as ``variant``."""
        if (reason := self.cannot_be(variant)) is not None:
            raise errors.ConfigError(reason)
        assert isinstance(self.source, Registered | InCluster)
        return replace(self, source=replace(self.source, variant=variant))

    # -- one serialization form ----------------------------------------------------------
    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (inverse of ``from_dict``)."""
        out = {"kind": str(self.kind), "source": self.source_name}
        if isinstance(self.source, Registered):
            out |= {"name": self.source.name, "variant": self.source.variant}
        elif isinstance(self.source, Command):
            out["command"] = self.source.template
        elif isinstance(self.source, InCluster):
            out["manifests"] = str(self.source.manifests)
            if self.source.image_archive is not None:
                out["image_archive"] = str(self.source.image_archive)
            if self.source.variant != registry.REFERENCE:
                out["variant"] = self.source.variant
        else:
            out |= {"url": self.source.url, "ca_bundle": str(self.source.ca_bundle)}
        if self.registration_file is not None:
            out["registration_file"] = str(self.registration_file)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], kind: Kind | None = None) -> Component:
        """Read ``to_dict``'s form (``source`` defaults to ``registered``); ConfigError names
        the bad key and the valid ones. Not validated: call ``validate``."""
        if not isinstance(data, Mapping):
            raise errors.ConfigError(f"a component is a mapping, got {data!r}")
        raw_kind = data.get("kind", kind)
        if raw_kind not in {str(k) for k in Kind} or (kind is not None and raw_kind != kind):
            raise errors.ConfigError(f"component kind {raw_kind!r}: expected "
                                     f"{kind or ' or '.join(Kind)}")
        source = str(data.get("source", "registered"))
        if source not in _KEYS:
            raise errors.ConfigError(f"component source {source!r} is unknown: choose one of "
                                     f"{', '.join(_KEYS)}")
        valid = ("kind", "source", *_KEYS[source], "registration_file")
        if unknown := sorted(set(data) - set(valid)):
            raise errors.ConfigError(f"unknown key(s) {', '.join(unknown)} of a {source} component: "
                                     f"valid keys are {', '.join(valid)}")
        text = {k: str(v) for k, v in data.items()}
        missing = [k for k in _KEYS[source] if k not in text and source not in ("registered",
                                                                               IN_CLUSTER)]
        if missing:
            raise errors.ConfigError(f"a {source} component needs {', '.join(missing)}")
        parsed: Source
        if source == "registered":
            parsed = Registered(text.get("name", registry.REFERENCE),
                                text.get("variant", registry.REFERENCE))
        elif source == "command":
            parsed = Command(text["command"])
        elif source == IN_CLUSTER:
            archive = text.get("image_archive")
            parsed = InCluster(Path(text.get("manifests", REFERENCE_MANIFESTS[Kind(raw_kind)])),
                               Path(archive) if archive else None,
                               text.get("variant", registry.REFERENCE))
        else:
            parsed = Url(text["url"], Path(text["ca_bundle"]))
        file = text.get("registration_file")
        return cls(Kind(raw_kind), parsed, Path(file) if file else None)


@dataclass(frozen=True, slots=True)
class Components:
    """The webhook and the HA controller under test (each defaults to the reference)."""

    webhook: Component = field(default_factory=lambda: Component(Kind.WEBHOOK))
    controller: Component = field(default_factory=lambda: Component(Kind.CONTROLLER))

    def __post_init__(self) -> None:
        if (self.webhook.kind, self.controller.kind) != (Kind.WEBHOOK, Kind.CONTROLLER):
            raise errors.ConfigError("Components(webhook=, controller=) got components of the "
                                     f"wrong kinds: {self.webhook.kind}, {self.controller.kind}")

    def problems(self) -> list[str]:
        """What is wrong with either component."""
        return self.webhook.problems() + self.controller.problems()

    def refusal(self, backend: str, capabilities: frozenset[Capability], flag: str = "--"
                ) -> str | None:
        """Why these components cannot run on ``backend`` with ``capabilities`` (None: they
        can): in-cluster ones need clusters that load image archives into their nodes
        (``flag``: the options' prefix, for the fix)."""
        in_cluster = [c.label() for c in (self.webhook, self.controller) if c.mode == IN_CLUSTER]
        if not in_cluster or Capability.LOAD_IMAGES in capabilities:
            return None
        loaders = " or ".join(backends.backends_with(Capability.LOAD_IMAGES)) or "kind"
        return (f"{flag}components {IN_CLUSTER}: the {backend} backend cannot load image "
                f"archives into its nodes (it runs no pods from them), so the "
                f"{' and the '.join(in_cluster)} cannot run there: use {flag}backend {loaders}, "
                f"or {flag}components {HOST}")

    def to_dict(self) -> dict[str, dict[str, str]]:
        """JSON-ready form (inverse of ``from_dict``)."""
        return {"webhook": self.webhook.to_dict(), "controller": self.controller.to_dict()}

    def to_json(self) -> str:
        """``to_dict`` as compact JSON (for a command-line option)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | str | None) -> Components:
        """Read ``to_dict``'s form, or its JSON text; a missing kind is the reference."""
        if isinstance(data, str):
            try:
                data = json.loads(data) if data.strip() else {}
            except json.JSONDecodeError as exc:
                raise errors.ConfigError(f"components are not valid JSON ({exc}): {data!r}") from None
        data = data or {}
        if not isinstance(data, Mapping) or set(data) - {"webhook", "controller"}:
            raise errors.ConfigError(f"components must map 'webhook' and/or 'controller' to a "
                                     f"component, got {data!r}")
        defaults = cls()
        return cls(Component.from_dict(data["webhook"], Kind.WEBHOOK) if "webhook" in data
                   else defaults.webhook,
                   Component.from_dict(data["controller"], Kind.CONTROLLER) if "controller" in data
                   else defaults.controller)


def from_choices(kind: Kind, *, variant: str = "", command: str = "", url: str = "",
                 ca_bundle: str = "", registration: str = "", mode: str = HOST,
                 manifests_dir: str = "", image_archive: str = "",
                 flag: str = "--zp-") -> Component:
    """The component a user's options choose (``flag``: the options' prefix, for messages).

    Nothing chosen: the reference. ``variant`` picks a variant of the reference; a command
    or a URL (webhooks) is the component itself; ``registration`` is a webhook's own
    MutatingWebhookConfiguration file. ``mode`` ``in-cluster``: deployed from
    ``manifests_dir`` + ``image_archive`` (none: the reference's deploy/ and images).
    ConfigError names the conflicting options.
    """
    option = f"{flag}{kind}-"
    if mode not in MODES:
        raise errors.ConfigError(f"{flag}components {mode!r}: choose {' or '.join(MODES)} (or "
                                 "give the components as JSON)")
    if mode == IN_CLUSTER:
        return _in_cluster_choice(kind, option, flag, variant=variant, host_options=(
            ("command", command), ("url", url), ("ca-bundle", ca_bundle),
            ("registration", registration)), manifests_dir=manifests_dir,
            image_archive=image_archive)
    if manifests_dir or image_archive:
        raise errors.ConfigError(f"{option}manifests and {option}image-archive deploy the {kind} "
                                 f"in the cluster: add {flag}components {IN_CLUSTER}")
    chosen = [name for name, value in (("command", command), ("url", url)) if value]
    if len(chosen) > 1:
        raise errors.ConfigError(f"{option}command and {option}url both name the {kind} under "
                                 "test: give one")
    if ca_bundle and not url:
        raise errors.ConfigError(f"{option}ca-bundle belongs to {option}url")
    if variant and variant != registry.REFERENCE and chosen:
        raise errors.ConfigError(
            f"{option}variant names a variant of the reference {kind}; with {option}{chosen[0]} "
            "that component is under test (build the variant into it)")
    if url and not ca_bundle:
        raise errors.ConfigError(f"{option}url needs {option}ca-bundle FILE (the PEM CA that "
                                 "signed its serving certificate)")
    if registration and kind is not Kind.WEBHOOK:
        raise errors.ConfigError(f"a {kind} has no registration: {flag}webhook-registration "
                                 "belongs to the webhook")
    source: Source = (Command(command) if command
                      else Url(url, Path(ca_bundle).expanduser().resolve()) if url
                      else Registered(variant=variant or registry.REFERENCE))
    file = Path(registration).expanduser().resolve() if registration else None
    return Component(kind, source, file).validate()


def _in_cluster_choice(kind: Kind, option: str, flag: str, *, variant: str,
                       host_options: tuple[tuple[str, str], ...], manifests_dir: str,
                       image_archive: str) -> Component:
    if given := [f"{option}{name}" for name, value in host_options if value]:
        raise errors.ConfigError(f"{', '.join(given)} name a host {kind}; {flag}components "
                                 f"{IN_CLUSTER} deploys it from manifests: give {option}manifests "
                                 f"DIR {option}image-archive TAR instead (or {flag}components "
                                 f"{HOST})")
    if variant and variant != registry.REFERENCE:
        raise errors.ConfigError(f"{option}variant {variant!r}: the in-cluster {kind} runs the "
                                 f"reference images; broken variants run as host processes "
                                 f"({flag}components {HOST})")
    if bool(manifests_dir) != bool(image_archive):
        raise errors.ConfigError(f"a vendor's in-cluster {kind} needs both {option}manifests DIR "
                                 f"and {option}image-archive TAR (neither: the reference's)")
    source = (InCluster(Path(manifests_dir).expanduser().resolve(),
                        Path(image_archive).expanduser().resolve()) if manifests_dir
              else InCluster(REFERENCE_MANIFESTS[kind]))
    return Component(kind, source).validate()
