"""Build upstream binaries from their Go modules with the machine's ``go``, into a cache dir.

Kubernetes cannot be ``go install``-ed (its go.mod replaces every staging module with a
local path), so a generated wrapper module requires ``k8s.io/kubernetes`` and replaces each
staging module by its published ``v0.<minor>.<patch>`` twin. etcd is built through a thin
``main`` (gobuild/etcd/main.go); kwok installs directly and brings its Stage YAMLs along.
The kind backend's node image adds kubelet, kubeadm, kubectl and kube-proxy (the same
wrapper module), kind, coredns and local-path-provisioner (``go install``) and pause
(gobuild/pause/main.go, zoneproof's own: a static PID 1 that reaps and waits for a signal).
actionlint (the test suite's check of .github/workflows) and hey (the webhook bench's load
generator) are plain ``go install``s, and so is
toxiproxy's server (the zoned local bed's links between zones), renamed ``toxiproxy-server``.
The linearizability checker ``porcupine-check`` is zoneproof's thin command (gobuild/porcupine:
the register model and JSON I/O) over the pinned porcupine module. zoneproof's own Go that
holds logic (``OWN_SOURCES``: porcupine-check, tcplb, the HA load balancer, and
webhook-ceiling, the webhook bench's fixed-answer server) has a cache
directory carrying a digest of those sources (``source_digest``), so a changed source is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from zoneproof import errors
from zoneproof._util import processes
from zoneproof._util.progress import Progress

__all__ = [
    "KUBE_COMMANDS",
    "KWOK_STAGES",
    "NODE_COMMANDS",
    "OWN_SOURCES",
    "Progress",
    "build_project",
    "kube_ldflags",
    "render_kubernetes_gomod",
    "source_digest",
    "staging_modules",
]


KUBE_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
#: Kubernetes commands of the kind node image (project ``kubernetes-node``).
NODE_COMMANDS = ("kubelet", "kubeadm", "kubectl", "kube-proxy")

#: ``go install`` targets of the single-binary projects: project → (package, binary name).
GO_INSTALL: dict[str, tuple[str, str]] = {
    "kind": ("sigs.k8s.io/kind", "kind"),
    "coredns": ("github.com/coredns/coredns", "coredns"),
    "local-path-provisioner": ("github.com/rancher/local-path-provisioner", "local-path-provisioner"),
    "actionlint": ("github.com/rhysd/actionlint/cmd/actionlint", "actionlint"),
    "hey": ("github.com/rakyll/hey", "hey"),
}

#: kwok Stage files (relative to the kwok module) that make nodes Ready, heartbeat with a
#: Lease, and drive pods through Running/Ready, completion and deletion.
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)

_GOBUILD_DIR = Path(__file__).parent / "gobuild"
_STAGING = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/", re.MULTILINE)
_TICK_S = 30.0


def staging_modules(upstream_gomod: str) -> list[str]:
    """Modules that k8s.io/kubernetes's go.mod replaces with ./staging paths, sorted."""
    return sorted(set(_STAGING.findall(upstream_gomod)))


def _staging_version(kube_version: str) -> str:
    major, minor, patch = kube_version.lstrip("v").split(".")
    if major != "1":
        raise errors.ConfigError(f"unexpected Kubernetes version {kube_version!r}: expected v1.x.y")
    return f"v0.{minor}.{patch}"


def render_kubernetes_gomod(upstream_gomod: str, kube_version: str, go_version: str,
                            commands: tuple[str, ...] = KUBE_COMMANDS) -> str:
    """The wrapper go.mod that builds ``commands`` (k8s.io/kubernetes/cmd/…) of ``kube_version``."""
    staging = _staging_version(kube_version)
    replaces = "\n".join(f"\t{m} => {m} {staging}" for m in staging_modules(upstream_gomod))
    tools = "\n".join(f"\tk8s.io/kubernetes/cmd/{c}" for c in commands)
    return (
        "module zoneproof.local/kubernetes-build\n\n"
        f"go {go_version}\n\n"
        f"require k8s.io/kubernetes {kube_version}\n\n"
        f"tool (\n{tools}\n)\n\n"
        f"replace (\n{replaces}\n)\n"
    )


def kube_ldflags(kube_version: str) -> str:
    """Linker flags that stamp the version (else binaries report v0.0.0-master) and strip."""
    major, minor, _ = kube_version.lstrip("v").split(".")
    pkg = "k8s.io/component-base/version"
    return (
        f"-s -w -X {pkg}.gitVersion={kube_version} -X {pkg}.gitMajor={major}"
        f" -X {pkg}.gitMinor={minor} -X {pkg}.gitTreeState=clean"
    )


class _Ticker:
    """Prints 'still building' with elapsed time and compiled-package count while go runs."""

    def __init__(self, what: str, log_file: Path, progress: Progress) -> None:
        self._what, self._log, self._progress = what, log_file, progress
        self._stop = threading.Event()
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(_TICK_S):
            lines = len(self._log.read_text(errors="replace").splitlines()) if self._log.exists() else 0
            elapsed = time.monotonic() - self._start
            self._progress(f"  … {self._what}: {elapsed:.0f}s, {lines} log lines ({self._log})")


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise errors.BinaryError(
            "`go` is not on PATH, and upstream binaries must be built: install Go >= 1.26 "
            "(e.g. `apt-get install golang` or go.dev), or set ZONEPROOF_BIN_DIR to a "
            "directory holding prebuilt kube-apiserver, kube-controller-manager, "
            "kube-scheduler, etcd and kwok."
        )
    return go


def _go_env(work: Path) -> dict[str, str]:
    return {"CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GOWORK": "off",
            "PWD": str(work)}


def _go_version(go: str) -> str:
    out = processes.run([go, "env", "GOVERSION"]).strip()  # e.g. go1.26.8
    return ".".join(out.removeprefix("go").split(".")[:2]) + ".0"


def _module_dir(go: str, module: str, version: str, work: Path) -> Path:
    out = processes.run([go, "mod", "download", "-json", f"{module}@{version}"], cwd=work,
                        env=_go_env(work))
    return Path(json.loads(out)["Dir"])


def _step(progress: Progress, what: str, work: Path, argv: list[str], log_name: str, *,
          env: dict[str, str] | None = None) -> None:
    log_file = work / log_name
    progress(f"  {what} (log: {log_file})")
    start = time.monotonic()
    with _Ticker(what, log_file, progress):
        processes.run(argv, cwd=work, env={**_go_env(work), **(env or {})}, log_file=log_file)
    progress(f"  {what}: done in {time.monotonic() - start:.0f}s")


def _build_kube_commands(go: str, version: str, work: Path, out: Path, progress: Progress, *,
                         commands: tuple[str, ...]) -> None:
    upstream = _module_dir(go, "k8s.io/kubernetes", version, work) / "go.mod"
    (work / "go.mod").write_text(
        render_kubernetes_gomod(upstream.read_text(), version, _go_version(go), commands))
    _step(progress, "go mod tidy (kubernetes)", work, [go, "mod", "tidy"], "tidy.log")
    pkgs = [f"k8s.io/kubernetes/cmd/{c}" for c in commands]
    _step(progress, f"go build {', '.join(commands)}", work,
          [go, "build", "-v", "-trimpath", "-ldflags", kube_ldflags(version), "-o", str(out), *pkgs],
          "build.log")


def _build_kubernetes(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    _build_kube_commands(go, version, work, out, progress, commands=KUBE_COMMANDS)


def _build_kubernetes_node(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    _build_kube_commands(go, version, work, out, progress, commands=NODE_COMMANDS)


def _build_etcd(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    shutil.copy(_GOBUILD_DIR / "etcd" / "main.go", work / "main.go")
    (work / "go.mod").write_text(
        f"module zoneproof.local/etcd-build\n\ngo {_go_version(go)}\n\n"
        f"require go.etcd.io/etcd/server/v3 {version}\n")
    _step(progress, "go mod tidy (etcd)", work, [go, "mod", "tidy"], "tidy.log")
    _step(progress, "go build etcd", work,
          [go, "build", "-v", "-trimpath", "-ldflags", "-s -w", "-o", str(out / "etcd"), "."],
          "build.log")


def _go_install(go: str, package: str, version: str, work: Path, *, out: Path,
                progress: Progress) -> None:
    name = package.rsplit("/", 1)[-1]
    _step(progress, f"go install {package}@{version}", work,
          [go, "install", "-v", "-trimpath", "-ldflags", "-s -w", f"{package}@{version}"],
          f"install-{name}.log", env={"GOFLAGS": "", "GOBIN": str(out)})


def _build_kwok(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    _go_install(go, "sigs.k8s.io/kwok/cmd/kwok", version, work, out=out, progress=progress)
    module = _module_dir(go, "sigs.k8s.io/kwok", version, work)
    stages = out / "stages"
    stages.mkdir(exist_ok=True)
    for rel in KWOK_STAGES:
        shutil.copy(module / rel, stages / Path(rel).name)


def _build_pause(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    shutil.copy(_GOBUILD_DIR / "pause" / "main.go", work / "main.go")
    (work / "go.mod").write_text(f"module zoneproof.local/pause\n\ngo {_go_version(go)}\n")
    _step(progress, f"go build pause ({version})", work,
          [go, "build", "-trimpath", "-ldflags", f"-s -w -X main.version={version}",
           "-o", str(out / "pause"), "."], "build.log")


def _own_main(name: str) -> Builder:
    """The builder of zoneproof's own standard-library-only command gobuild/``name``."""
    def build(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
        shutil.copy(_GOBUILD_DIR / name / "main.go", work / "main.go")
        (work / "go.mod").write_text(f"module zoneproof.local/{name}\n\ngo {_go_version(go)}\n")
        _step(progress, f"go build {name} ({version})", work,
              [go, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(out / name), "."], "build.log")
    return build


#: Projects built from zoneproof's own Go sources that hold logic (not just a ``main``).
OWN_SOURCES = {"porcupine": "porcupine", "tcplb": "tcplb", "webhook-ceiling": "webhook-ceiling"}


def source_digest(project: str) -> str:
    """12 hex digits of the SHA-256 of ``project``'s own Go sources ('' for upstream-only ones)."""
    folder = OWN_SOURCES.get(project)
    if folder is None:
        return ""
    digest = hashlib.sha256()
    for path in sorted((_GOBUILD_DIR / folder).glob("*.go")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def _build_porcupine(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    for source in sorted((_GOBUILD_DIR / "porcupine").glob("*.go")):
        shutil.copy(source, work / source.name)
    (work / "go.mod").write_text(
        f"module zoneproof.local/porcupine-check\n\ngo {_go_version(go)}\n\n"
        f"require github.com/anishathalye/porcupine {version}\n")
    _step(progress, "go mod tidy (porcupine)", work, [go, "mod", "tidy"], "tidy.log")
    _step(progress, f"go build porcupine-check (porcupine {version})", work,
          [go, "build", "-trimpath", "-ldflags", "-s -w", "-o", str(out / "porcupine-check"), "."],
          "build.log")


def _build_toxiproxy(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    """``go install`` of toxiproxy's server command (named ``server`` by go), renamed."""
    _go_install(go, "github.com/Shopify/toxiproxy/v2/cmd/server", version, work, out=out,
                progress=progress)
    (out / "server").rename(out / "toxiproxy-server")


def _installer(project: str) -> Builder:
    package, _ = GO_INSTALL[project]

    def build(go: str, version: str, work: Path, out: Path, progress: Progress) -> None:
        _go_install(go, package, version, work, out=out, progress=progress)
    return build


Builder = Callable[[str, str, Path, Path, Progress], None]

_BUILDERS: dict[str, Builder] = {
    "kubernetes": _build_kubernetes, "kubernetes-node": _build_kubernetes_node,
    "etcd": _build_etcd, "kwok": _build_kwok, "pause": _build_pause,
    "tcplb": _own_main("tcplb"), "webhook-ceiling": _own_main("webhook-ceiling"),
    "porcupine": _build_porcupine, "toxiproxy": _build_toxiproxy,
    **{project: _installer(project) for project in GO_INSTALL},
}


def build_project(project: str, version: str, work: Path, out: Path, progress: Progress) -> None:
    """Build every binary of ``project`` at ``version`` into ``out`` (work files under ``work``)."""
    go = _go()
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    try:
        _BUILDERS[project](go, version, work, out, progress)
    except processes.CommandError as exc:
        raise errors.BinaryError(
            f"building {project} {version} failed; full log under {work}.\n{exc}\n"
            "Fix: check that the Go module proxy answers (`go env GOPROXY`) and retry "
            "`zoneproof build`, or set ZONEPROOF_BIN_DIR to prebuilt binaries."
        ) from exc
