"""Render a components' manifests directory (kustomize) for one cluster: images, serving cert, caBundle.

``deploy/`` in the repository is plain YAML that kustomize builds (``kubectl apply -k``); the
webhook's kustomization generates its serving Secret from ``ha-config-webhook/tls/`` and
copies the CA into the registration's caBundle. ``render`` does what a user does by hand:
copies the directory, writes a fresh CA and a serving certificate for the Service the
registration names into ``tls_dir``, sets the images, runs ``kubectl kustomize``, and checks
that the caBundle of every webhook served by a Service is that CA. kustomize itself comes
from the pinned kubectl (``zoneproof build --node-image`` builds it).
"""

from __future__ import annotations

import base64
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from zoneproof import errors
from zoneproof._util import certs, locations, processes
from zoneproof.binaries import resolve
from zoneproof.specs.ha_config.registration import ServiceRef

__all__ = [
    "CONTROLLER_LEASE",
    "DEPLOY_DIR",
    "NAMESPACE",
    "TLS_DIR",
    "WEBHOOK_SERVICE",
    "Rendered",
    "ServiceRef",
    "WebhookTls",
    "apply",
    "delete",
    "image_override",
    "kubectl",
    "render",
    "service_dns_names",
]

#: The repository's manifests of the reference components.
DEPLOY_DIR = locations.suite_path("deploy")
#: Where the webhook's kustomization reads its certificate files, relative to the directory.
TLS_DIR = "ha-config-webhook/tls"
NAMESPACE = "zoneproof-system"
#: The Service in front of the reference webhook (deploy/ha-config-webhook/service.yaml).
WEBHOOK_SERVICE = ServiceRef("ha-config-webhook", NAMESPACE)
#: (namespace, name) of the reference controller's Lease (deploy/ha-controller/deployment.yaml).
CONTROLLER_LEASE = (NAMESPACE, "zoneproof-ha-controller")
_KUSTOMIZATION = "kustomization.yaml"


def service_dns_names(service: ServiceRef) -> tuple[str, ...]:
    """The names the API server may dial a Service by (it uses ``<name>.<namespace>.svc``)."""
    base = f"{service.name}.{service.namespace}"
    return (service.name, base, f"{base}.svc", f"{base}.svc.cluster.local")


@dataclass(frozen=True, slots=True)
class WebhookTls:
    """A CA and the serving certificate it signed for a webhook Service."""

    ca: certs.KeyPair
    serving: certs.KeyPair

    @classmethod
    def issue(cls, service: ServiceRef = WEBHOOK_SERVICE, ca: certs.KeyPair | None = None
              ) -> WebhookTls:
        """A serving certificate for ``service``'s DNS names, signed by ``ca`` (else a new CA)."""
        ca = ca or certs.make_ca("zoneproof-webhook-ca")
        names = service_dns_names(service)
        return cls(ca, certs.issue_cert(ca, names[2], sans=names))

    def write(self, directory: Path) -> None:
        """``tls.crt``, ``tls.key`` (0600) and ``ca.crt``: the files deploy/ expects."""
        directory.mkdir(parents=True, exist_ok=True)
        self.serving.write(directory, "tls")
        (directory / "ca.crt").write_bytes(self.ca.cert_pem)


@dataclass(frozen=True, slots=True)
class Rendered:
    """The objects a manifests directory renders to, in kustomize's order."""

    #: raw API payloads, as kustomize printed them
    objects: tuple[dict[str, Any], ...]
    tls: WebhookTls | None

    def find(self, kind: str, name: str) -> dict[str, Any]:
        """The object of ``kind`` called ``name``; ConfigError if the manifests lack it."""
        for obj in self.objects:
            if obj.get("kind") == kind and obj.get("metadata", {}).get("name") == name:
                return obj
        raise errors.ConfigError(f"the rendered manifests have no {kind} {name!r}")

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [obj for obj in self.objects if obj.get("kind") == kind]

    def images(self) -> list[str]:
        """Every container image the workloads name."""
        found = []
        for obj in self.of_kind("Deployment") + self.of_kind("StatefulSet") + self.of_kind("DaemonSet"):
            pod = obj["spec"]["template"]["spec"]
            found += [c["image"] for c in pod.get("initContainers", []) + pod["containers"]]
        return found

    def yaml(self) -> str:
        """The objects as one YAML stream (what ``kubectl apply -f -`` takes)."""
        return yaml.safe_dump_all(self.objects, sort_keys=False)


def image_override(name: str, ref: str) -> dict[str, str]:
    """A kustomize ``images:`` entry turning image ``name`` into ``ref`` (tag or digest)."""
    if "@" in ref:
        new_name, digest = ref.split("@", 1)
        return {"name": name, "newName": new_name, "digest": digest}
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return {"name": name, "newName": ref[:colon], "newTag": ref[colon + 1:]}
    return {"name": name, "newName": ref}


def kubectl() -> Path:
    """The pinned kubectl (its embedded kustomize renders the manifests)."""
    return resolve.resolve("kubectl", build_missing=False)


def _kustomize(directory: Path, kubectl_bin: Path, out: Path) -> list[dict[str, Any]]:
    processes.run([str(kubectl_bin), "kustomize", str(directory), "--output", str(out)])
    return [doc for doc in yaml.safe_load_all(out.read_text()) if doc]


def _set_images(directory: Path, images: Mapping[str, str]) -> None:
    path = directory / _KUSTOMIZATION
    if not path.is_file():
        raise errors.ConfigError(f"{directory} has no {_KUSTOMIZATION}: a manifests directory "
                                 "is a kustomization (see deploy/ in the repository)")
    doc = yaml.safe_load(path.read_text()) or {}
    entries = [e for e in doc.get("images", []) if e.get("name") not in images]
    doc["images"] = entries + [image_override(name, ref) for name, ref in images.items()]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _webhook_services(objects: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for obj in objects:
        if obj.get("kind") in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for hook in obj.get("webhooks", []):
                if "service" in hook.get("clientConfig", {}):
                    yield obj["metadata"]["name"], hook["clientConfig"]


def _service_of(objects: list[dict[str, Any]], directory: Path) -> ServiceRef | None:
    refs = {(c["service"]["name"], c["service"]["namespace"], int(c["service"].get("port", 443)))
            for _, c in _webhook_services(objects)}
    if len(refs) > 1:
        raise errors.ConfigError(f"the manifests in {directory} register webhooks behind several "
                                 f"Services ({sorted(refs)}): one serving certificate covers one")
    return ServiceRef(*refs.pop()) if refs else None


def _check_ca_bundles(objects: list[dict[str, Any]], tls: WebhookTls, directory: Path) -> None:
    for name, client_config in _webhook_services(objects):
        bundle = base64.b64decode(client_config.get("caBundle", "") or "")
        if bundle.strip() != tls.ca.cert_pem.strip():
            raise errors.ConfigError(
                f"webhook configuration {name!r} rendered from {directory} does not carry the CA "
                f"written to {TLS_DIR}/ca.crt in its caBundle: its kustomization must copy it "
                "(see the replacements in deploy/ha-config-webhook/kustomization.yaml)")


def render(directory: Path = DEPLOY_DIR, *, images: Mapping[str, str] | None = None,
           tls: WebhookTls | None = None, tls_dir: str | None = TLS_DIR,
           kubectl_bin: Path | None = None) -> Rendered:
    """Build ``directory`` with kustomize, images set and the webhook's certificate filled in.

    ``images`` maps an image name the manifests use (e.g. ``localhost/zoneproof/ha-controller``)
    to the reference to run. A directory with ``tls_dir`` gets ``tls`` (default: a fresh CA and a
    serving certificate for the Service its webhook registration names); ``tls_dir`` None:
    the directory serves no webhook.
    """
    if not (directory / _KUSTOMIZATION).is_file():
        raise errors.ConfigError(f"{directory} has no {_KUSTOMIZATION}: pass a kustomize "
                                 "directory such as deploy/ in the repository")
    kubectl_bin = kubectl_bin or kubectl()
    with tempfile.TemporaryDirectory(prefix="zoneproof-manifests-") as tmp:
        work = Path(tmp) / "manifests"
        shutil.copytree(directory, work)
        if images:
            _set_images(work, images)
        if tls_dir is None or not (work / tls_dir).parent.is_dir():
            return Rendered(tuple(_kustomize(work, kubectl_bin, Path(tmp) / "out.yaml")), None)
        shutil.rmtree(work / tls_dir, ignore_errors=True)  # never a user's leftover files
        # first pass: which Service the registration names (any certificate will do)
        ca = tls.ca if tls is not None else certs.make_ca("zoneproof-webhook-ca")
        WebhookTls(ca, ca).write(work / tls_dir)
        objects = _kustomize(work, kubectl_bin, Path(tmp) / "out.yaml")
        service = _service_of(objects, directory)
        if service is None:
            raise errors.ConfigError(f"{directory} has {tls_dir} but registers no webhook behind a "
                                     "Service: nothing to issue a serving certificate for")
        tls = tls or WebhookTls.issue(service, ca)
        tls.write(work / tls_dir)
        objects = _kustomize(work, kubectl_bin, Path(tmp) / "out.yaml")
        _check_ca_bundles(objects, tls, directory)
    return Rendered(tuple(objects), tls)


def _kubectl_file(verb: list[str], rendered: Rendered, kubeconfig: Path, kubectl_bin: Path | None
                  ) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", prefix="zoneproof-manifests-") as f:
        f.write(rendered.yaml())
        f.flush()
        return processes.run([str(kubectl_bin or kubectl()), "--kubeconfig", str(kubeconfig),
                              *verb, "-f", f.name])


def apply(rendered: Rendered, kubeconfig: Path, *, kubectl_bin: Path | None = None) -> str:
    """``kubectl apply --server-side`` of every object (creates or updates)."""
    return _kubectl_file(["apply", "--server-side", "--force-conflicts",
                          "--field-manager=zoneproof"], rendered, kubeconfig, kubectl_bin)


def delete(rendered: Rendered, kubeconfig: Path, *, kubectl_bin: Path | None = None) -> str:
    """``kubectl delete`` of every object, waiting until they are gone (absent ones are fine)."""
    return _kubectl_file(["delete", "--ignore-not-found", "--wait=true", "--timeout=120s"],
                         rendered, kubeconfig, kubectl_bin)
