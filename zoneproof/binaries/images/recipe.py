"""What the components' images hold: Debian's python3, pinned Python dependencies, zoneproof's sources (pure).

One image per reference component, both on one shared layer stack:

- ``debian-python``: a minbase Debian root file system with ``python3`` (debootstrap),
  documentation pruned; keyed by its packages only;
- ``components``: + the Python distributions the components import at run time, at the
  versions installed in this environment (the closure of ``RUNTIME_DISTRIBUTIONS`` over
  their declared requirements), + zoneproof's modules the components import
  (``ZONEPROOF_SOURCES``), byte-compiled in the image; runs as ``RUN_AS`` (non-root),
  writes nothing (``PYTHONDONTWRITEBYTECODE``), so a read-only root file system works;
- ``ha-config-webhook`` and ``ha-controller``: the same with their ``python3 -m`` entry point.

The tag is a hash of every input; the images travel as one docker archive that kind (or
``ctr images import``) loads with no registry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = [
    "ARCHIVE",
    "AS_ROOT",
    "COMPONENTS",
    "NOT_AT_RUNTIME",
    "NOT_SHIPPED",
    "DEFAULT_TAG",
    "ENTRYPOINTS",
    "PACKAGES",
    "PACKAGE_ROOT",
    "PRUNE",
    "RECIPE_VERSION",
    "REPOSITORIES",
    "RUNTIME_DISTRIBUTIONS",
    "RUN_AS",
    "SITE",
    "SITE_PRUNE",
    "ZONEPROOF_SOURCES",
    "Recipe",
    "components_dockerfile",
    "entry_dockerfile",
    "requirement_closure",
    "sources_digest",
    "zoneproof_files",
]

#: Bump when the recipe changes in a way the hashed inputs do not show.
RECIPE_VERSION = "1"
#: Debian packages of the root file system (debootstrap --variant=minbase --include).
PACKAGES = ("python3",)
#: Directories of the root file system no component reads.
PRUNE = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale",
         "usr/share/lintian", "usr/share/common-licenses")
#: Python distributions the components import (their requirements come along).
RUNTIME_DISTRIBUTIONS = ("kubernetes", "PyYAML", "urllib3", "h11")
#: Requirements no component imports, with why (left out, with what only they require).
NOT_AT_RUNTIME = {"aiohttp": "kubernetes.aio only (the asyncio client; the components use the "
                             "synchronous one)",
                  "aiohttp-retry": "kubernetes.aio only"}
#: Parts of installed distributions no component imports (relative to the site directory).
SITE_PRUNE = ("kubernetes/aio",)
#: zoneproof's files in the image, relative to the package: what the two components import.
ZONEPROOF_SOURCES = ("__init__.py", "errors.py", "py.typed", "_util/__init__.py", "_util/jsonlog.py",
                     "_util/kube.py", "_util/nft.py", "specs", "components/__init__.py",
                     "components/reference", "nodeagent")
#: Files under those sources no component runs: its registry entry (how the harness starts
#: it on a host) and the unit tests' fakes.
NOT_SHIPPED = ("component.py", "testing.py")
#: Where the distributions and zoneproof go in the image (on PYTHONPATH).
SITE = "/opt/zoneproof/site"
#: uid:gid the images run as (no user of that id exists: nothing needs a home).
RUN_AS = "65532:65532"
#: image → repository (the manifests in deploy/ name these): the reference components and
#: the node agent (deploy/node-agent, installed only for runs that allow node faults).
REPOSITORIES = {"ha-config-webhook": "localhost/zoneproof/ha-config-webhook",
                "ha-controller": "localhost/zoneproof/ha-controller",
                "node-agent": "localhost/zoneproof/node-agent"}
#: image → the module it runs (``python3 -m``).
ENTRYPOINTS = {"ha-config-webhook": "zoneproof.components.reference.ha_config",
               "ha-controller": "zoneproof.components.reference.ha_controller",
               "node-agent": "zoneproof.nodeagent"}
#: The reference components' images (deploy/<component>/, deploy/kustomization.yaml).
COMPONENTS = ("ha-config-webhook", "ha-controller")
#: Images that run as root: the node agent enters the host's namespaces (nsenter).
AS_ROOT = frozenset({"node-agent"})
#: The second tag every build gives its images: the one deploy/ names (zoneproof's version).
DEFAULT_TAG = metadata.version("zoneproof")
#: The archive's file name in its cache directory.
ARCHIVE = "components.tar"

_LOCAL = "localhost/zoneproof"
#: The zoneproof package whose files the image takes.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def requirement_closure(roots: Iterable[str], *, requires: Callable[[str], list[str] | None],
                        version: Callable[[str], str],
                        skip: Iterable[str] = ()) -> dict[str, str]:
    """Canonical distribution name → installed version, for ``roots`` and all they require.

    ``requires`` and ``version`` read installed metadata (``importlib.metadata``); markers are
    evaluated for this interpreter, with the extras a requirement asks for. Distributions in
    ``skip`` are left out, and so is what only they require.
    """
    skipped = {canonicalize_name(name) for name in skip}
    found: dict[str, str] = {}
    queue: list[tuple[str, frozenset[str]]] = [(name, frozenset()) for name in roots]
    seen: set[tuple[str, frozenset[str]]] = set()
    while queue:
        name, extras = queue.pop()
        key = canonicalize_name(name)
        if (key, extras) in seen or key in skipped:
            continue
        seen.add((key, extras))
        found[key] = version(name)
        for text in requires(name) or []:
            req = Requirement(text)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": extra}) for extra in ("", *extras))
            if wanted:
                queue.append((req.name, frozenset(req.extras)))
    return dict(sorted(found.items()))


def zoneproof_files(root: Path = PACKAGE_ROOT) -> list[Path]:
    """Every file of ``ZONEPROOF_SOURCES`` under ``root`` (sources only, no caches), sorted."""
    files: list[Path] = []
    for entry in ZONEPROOF_SOURCES:
        path = root / entry
        if path.is_dir():
            files += [p for p in path.rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
                      and p.name not in NOT_SHIPPED]
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: listed in ZONEPROOF_SOURCES but missing")
    return sorted(files)


def sources_digest(root: Path = PACKAGE_ROOT) -> str:
    """SHA-256 over the relative path and content of every file the image takes from zoneproof."""
    digest = hashlib.sha256()
    for path in zoneproof_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def components_dockerfile(base_ref: str) -> str:
    """The shared image: the site directory on the Debian python, compiled, non-root."""
    return (f"FROM {base_ref}\n"
            f"COPY site/ {SITE}/\n"
            f"RUN python3 -m compileall -q -j 0 {SITE}\n"
            f"ENV PYTHONPATH={SITE} PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp\n"
            "WORKDIR /\n"
            f"USER {RUN_AS}\n")


def entry_dockerfile(components_ref: str, component: str) -> str:
    """One image: the shared one with its ``python3 -m`` entry point (as root: ``AS_ROOT``)."""
    user = "USER 0:0\n" if component in AS_ROOT else ""
    return (f"FROM {components_ref}\n{user}"
            f'ENTRYPOINT ["python3", "-m", "{ENTRYPOINTS[component]}"]\n')


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Recipe:
    """One build's inputs and the names they give: Debian source, pinned distributions, sources."""

    suite: str
    mirror: str
    #: canonical distribution name → version (``requirement_closure``)
    distributions: tuple[tuple[str, str], ...]
    #: ``sources_digest()``
    sources: str

    @property
    def base_ref(self) -> str:
        """The Debian python root file system; keyed by suite, mirror, packages and pruning."""
        key = _short("\n".join([self.suite, self.mirror, *PACKAGES, *PRUNE]))
        return f"{_LOCAL}/debian-python:{self.suite}-{key}"

    @property
    def hash(self) -> str:
        """12 hex digits over every input that changes an image."""
        pins = [f"{name}=={version}" for name, version in self.distributions]
        parts = [RECIPE_VERSION, self.base_ref, *pins, *SITE_PRUNE, self.sources,
                 components_dockerfile(self.base_ref), *(entry_dockerfile("", c) for c in ENTRYPOINTS)]
        return _short("\n".join(parts))

    @property
    def components_ref(self) -> str:
        return f"{_LOCAL}/components:{self.hash}"

    def ref(self, component: str, tag: str | None = None) -> str:
        """``localhost/zoneproof/<component>:<hash>`` (or ``:<tag>``)."""
        return f"{REPOSITORIES[component]}:{tag or self.hash}"

    @property
    def refs(self) -> dict[str, str]:
        """component → its content-addressed image name."""
        return {component: self.ref(component) for component in REPOSITORIES}

    @property
    def pins(self) -> list[str]:
        """``name==version`` of every distribution pip installs."""
        return [f"{name}=={version}" for name, version in self.distributions]
