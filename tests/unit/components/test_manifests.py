"""deploy/: seed 000's HA rules, least-privilege RBAC, the spec's registration, and rendering.

The YAML checks parse the plain files (no kustomize needed); the rendering tests run the
pinned kubectl's kustomize and are skipped, with the command that builds it, without it.
"""

from __future__ import annotations

import base64
import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from zoneproof import errors
from zoneproof.binaries.images import recipe
from zoneproof.components import manifests
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

Obj = dict[str, Any]
DEPLOY = manifests.DEPLOY_DIR


def _plain(directory: Path) -> list[Obj]:
    """The objects the kustomization's ``resources`` list, read without kustomize."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    objects: list[Obj] = []
    for entry in kustomization.get("resources", []):
        path = directory / entry
        if path.is_dir():
            objects += _plain(path)
        else:
            objects += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return objects


def _find(objects: list[Obj], kind: str, name: str) -> Obj:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


# -- seed 000's rules for the components' own workloads --------------------------------------
def _ha_problems(objects: list[Obj]) -> list[str]:
    """What breaks seed 000's rules (or runs as root / writable) in the Deployments here."""
    problems = []
    pdbs = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    for d in (o for o in objects if o["kind"] == "Deployment"):
        name, spec = d["metadata"]["name"], d["spec"]
        labels = spec["selector"]["matchLabels"]
        pod = spec["template"]["spec"]
        if spec.get("replicas", 1) < 2:
            problems.append(f"{name}: fewer than 2 replicas")
        spread = {(c["topologyKey"], c["whenUnsatisfiable"], c["maxSkew"])
                  for c in pod.get("topologySpreadConstraints", [])
                  if c.get("labelSelector", {}).get("matchLabels") == labels}
        if (keys.TOPOLOGY_ZONE, "DoNotSchedule", 1) not in spread:
            problems.append(f"{name}: no required zone spread")
        if (keys.TOPOLOGY_HOSTNAME, "ScheduleAnyway", 1) not in spread:
            problems.append(f"{name}: no node spread")
        if not any(p["spec"].get("maxUnavailable") == 1 and p["spec"]["selector"]["matchLabels"] == labels
                   for p in pdbs):
            problems.append(f"{name}: no PodDisruptionBudget with maxUnavailable 1")
        if not pod.get("securityContext", {}).get("runAsNonRoot"):
            problems.append(f"{name}: may run as root")
        for c in pod["containers"]:
            security = c.get("securityContext", {})
            if not security.get("readOnlyRootFilesystem"):
                problems.append(f"{name}/{c['name']}: writable root file system")
            if security.get("allowPrivilegeEscalation") is not False or \
                    security.get("capabilities", {}).get("drop") != ["ALL"]:
                problems.append(f"{name}/{c['name']}: privileges not dropped")
            if "readinessProbe" not in c or "livenessProbe" not in c:
                problems.append(f"{name}/{c['name']}: no readiness or liveness probe")
            if c.get("imagePullPolicy") != "IfNotPresent":
                problems.append(f"{name}/{c['name']}: would pull images it has")
    return problems


def test_deploy_follows_seed_000_and_runs_confined() -> None:
    assert _ha_problems(_plain(DEPLOY)) == []


def _deployment(objects: list[Obj], name: str) -> Obj:
    return _find(objects, "Deployment", name)


def _one_replica(o: list[Obj]) -> None:
    _deployment(o, "ha-config-webhook")["spec"]["replicas"] = 1


def _zone_spread_best_effort(o: list[Obj]) -> None:
    pod = _deployment(o, "ha-controller")["spec"]["template"]["spec"]
    pod["topologySpreadConstraints"][1]["whenUnsatisfiable"] = "ScheduleAnyway"


def _no_pdb(o: list[Obj]) -> None:
    o.remove(_find(o, "PodDisruptionBudget", "ha-controller"))


def _writable(o: list[Obj]) -> None:
    c = _deployment(o, "ha-config-webhook")["spec"]["template"]["spec"]["containers"][0]
    c["securityContext"]["readOnlyRootFilesystem"] = False


def _no_probe(o: list[Obj]) -> None:
    del _deployment(o, "ha-controller")["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]


def _as_root(o: list[Obj]) -> None:
    del _deployment(o, "ha-controller")["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"]


@pytest.mark.parametrize(("breakage", "found"), [
    (_one_replica, "ha-config-webhook: fewer than 2 replicas"),
    (_zone_spread_best_effort, "ha-controller: no required zone spread"),
    (_no_pdb, "ha-controller: no PodDisruptionBudget"),
    (_writable, "ha-config-webhook/webhook: writable root file system"),
    (_no_probe, "ha-controller/controller: no readiness or liveness probe"),
    (_as_root, "ha-controller: may run as root"),
])
def test_each_broken_deployment_is_caught(breakage: Callable[[list[Obj]], None], found: str) -> None:
    objects = copy.deepcopy(_plain(DEPLOY))
    breakage(objects)
    assert any(p.startswith(found) for p in _ha_problems(objects)), _ha_problems(objects)


def test_namespace_is_not_one_the_webhook_mutates() -> None:
    ns = _find(_plain(DEPLOY), "Namespace", manifests.NAMESPACE)
    assert keys.LABEL_CONSIDER not in ns["metadata"].get("labels", {})
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


# -- least-privilege RBAC -------------------------------------------------------------------
def _rules(objects: list[Obj], kind: str, name: str) -> set[tuple[str, str, str, str]]:
    """(apiGroup, resource, verb, resourceName or '*') of every grant of a role."""
    grants = set()
    for rule in _find(objects, kind, name)["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    for named in rule.get("resourceNames", ["*"]):
                        grants.add((group, resource, verb, named))
    return grants


_WEBHOOK_GRANTS = {("", r, v, "*") for r in ("nodes", "namespaces") for v in ("list", "watch")} | {
    ("autoscaling", "horizontalpodautoscalers", v, "*") for v in ("list", "watch")} | {
    ("apps", r, v, "*") for r in ("deployments", "statefulsets") for v in ("list", "patch")}
_CONTROLLER_GRANTS = {("", "nodes", v, "*") for v in ("list", "watch")} | {
    ("", "pods", v, "*") for v in ("list", "watch", "delete")}
_LEASE = manifests.CONTROLLER_LEASE[1]
_LEASE_GRANTS = {("coordination.k8s.io", "leases", "create", "*"),
                 ("coordination.k8s.io", "leases", "get", _LEASE),
                 ("coordination.k8s.io", "leases", "update", _LEASE)}


def test_rbac_grants_exactly_what_the_components_do() -> None:
    objects = _plain(DEPLOY)
    assert _rules(objects, "ClusterRole", "zoneproof:ha-config-webhook") == _WEBHOOK_GRANTS
    assert _rules(objects, "ClusterRole", "zoneproof:ha-controller") == _CONTROLLER_GRANTS
    assert _rules(objects, "Role", "ha-controller-lease") == _LEASE_GRANTS
    role = _find(objects, "Role", "ha-controller-lease")
    assert role["metadata"]["namespace"] == manifests.CONTROLLER_LEASE[0]


def test_bindings_name_each_components_own_service_account() -> None:
    objects = _plain(DEPLOY)
    for kind, name, account in (
            ("ClusterRoleBinding", "zoneproof:ha-config-webhook", "ha-config-webhook"),
            ("ClusterRoleBinding", "zoneproof:ha-controller", "ha-controller"),
            ("RoleBinding", "ha-controller-lease", "ha-controller")):
        binding = _find(objects, kind, name)
        assert binding["roleRef"]["name"] == name
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account,
                                        "namespace": manifests.NAMESPACE}]
        pod = _deployment(objects, account)["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == account


# -- the components' arguments agree with the objects around them -------------------------------
def _args(objects: list[Obj], name: str) -> dict[str, str]:
    container = _deployment(objects, name)["spec"]["template"]["spec"]["containers"][0]
    return dict(a.removeprefix("--").split("=", 1) if "=" in a else (a.removeprefix("--"), "")
                for a in container["args"])


def test_controller_holds_its_named_lease_as_its_pod() -> None:
    objects = _plain(DEPLOY)
    args = _args(objects, "ha-controller")
    assert args["lease-name"] == _LEASE and args["lease-namespace"] == "$(POD_NAMESPACE)"
    assert args["identity"] == "$(POD_NAME)"
    container = _deployment(objects, "ha-controller")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"]}
    assert env == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}
    port = {p["name"]: p["containerPort"] for p in container["ports"]}["health"]
    assert args["health-port"] == str(port)
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_webhook_serves_the_mounted_certificate_on_the_services_port() -> None:
    objects = _plain(DEPLOY)
    args = _args(objects, "ha-config-webhook")
    pod = _deployment(objects, "ha-config-webhook")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "tls")
    assert args["cert-file"] == f"{mount}/tls.crt" and args["key-file"] == f"{mount}/tls.key"
    assert args["bind"] == "0.0.0.0"
    assert container["ports"] == [{"name": "https", "containerPort": int(args["port"]),
                                   "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "https",
                                                      "scheme": "HTTPS"}
    service = _find(objects, "Service", manifests.WEBHOOK_SERVICE.name)
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    assert service["spec"]["ports"][0]["port"] == manifests.WEBHOOK_SERVICE.port


def test_registration_is_the_specs_section_3_behind_the_service() -> None:
    ours = _find(_plain(DEPLOY), "MutatingWebhookConfiguration", config.DEFAULT_CONFIGURATION_NAME)
    spec = config.render_webhook_configuration(ca_bundle=b"-", service=manifests.WEBHOOK_SERVICE)
    ours = copy.deepcopy(ours)
    del ours["metadata"]["labels"]
    assert ours["webhooks"][0]["clientConfig"].pop("caBundle") == ""
    del spec["webhooks"][0]["clientConfig"]["caBundle"]
    assert ours == spec


def test_image_override_splits_name_tag_and_digest() -> None:
    assert manifests.image_override("a/b", "localhost:5000/x/y:1.2") == {
        "name": "a/b", "newName": "localhost:5000/x/y", "newTag": "1.2"}
    assert manifests.image_override("a/b", "localhost:5000/x/y") == {
        "name": "a/b", "newName": "localhost:5000/x/y"}
    assert manifests.image_override("a/b", "x/y@sha256:00") == {
        "name": "a/b", "newName": "x/y", "digest": "sha256:00"}


# -- rendering with kustomize ------------------------------------------------------------------
def _kubectl() -> Path:
    try:
        return manifests.kubectl()
    except errors.BinaryError as exc:
        pytest.skip(f"needs the pinned kubectl (`zoneproof build --node-image` builds it): {exc}")


@pytest.fixture(scope="module")
def rendered() -> manifests.Rendered:
    return manifests.render(DEPLOY, kubectl_bin=_kubectl(), images={
        recipe.REPOSITORIES["ha-controller"]: "localhost/zoneproof/ha-controller:cafe"})


def _strip_rendered(objects: list[Obj] | tuple[Obj, ...]) -> list[Obj]:
    """Objects without what rendering fills in (Secret, caBundle, images, secret names)."""
    out = []
    for obj in copy.deepcopy(list(objects)):
        if obj["kind"] == "Secret":
            continue
        if obj["kind"] == "MutatingWebhookConfiguration":
            for hook in obj["webhooks"]:
                hook["clientConfig"].pop("caBundle", None)
        if obj["kind"] == "Deployment":
            pod = obj["spec"]["template"]["spec"]
            for c in pod["containers"]:
                c["image"] = c["image"].rsplit(":", 1)[0]
            for v in pod["volumes"]:
                if "secret" in v:
                    v["secret"]["secretName"] = "-"
        out.append(obj)
    return sorted(out, key=lambda o: (o["kind"], o["metadata"]["name"]))


def test_kustomize_changes_nothing_but_what_rendering_fills_in(rendered: manifests.Rendered) -> None:
    assert _strip_rendered(rendered.objects) == _strip_rendered(_plain(DEPLOY))


def test_rendering_fills_in_the_serving_secret_and_the_ca_bundle(rendered: manifests.Rendered) -> None:
    tls = rendered.tls
    assert tls is not None
    secret = next(o for o in rendered.of_kind("Secret"))
    assert secret["type"] == "kubernetes.io/tls"
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    assert data == {"tls.crt": tls.serving.cert_pem, "tls.key": tls.serving.key_pem,
                    "ca.crt": tls.ca.cert_pem}
    hook = rendered.find("MutatingWebhookConfiguration", config.DEFAULT_CONFIGURATION_NAME)
    assert base64.b64decode(hook["webhooks"][0]["clientConfig"]["caBundle"]) == tls.ca.cert_pem
    pod = rendered.find("Deployment", "ha-config-webhook")["spec"]["template"]["spec"]
    assert pod["volumes"][0]["secret"]["secretName"] == secret["metadata"]["name"]
    cert = x509.load_pem_x509_certificate(tls.serving.cert_pem)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "ha-config-webhook.zoneproof-system.svc" in sans.get_values_for_type(x509.DNSName)


def test_rendering_sets_images(rendered: manifests.Rendered) -> None:
    assert rendered.images() == [f"{recipe.REPOSITORIES['ha-config-webhook']}:{recipe.DEFAULT_TAG}",
                                 "localhost/zoneproof/ha-controller:cafe"]


def test_renders_a_directory_without_a_webhook(tmp_path: Path) -> None:
    r = manifests.render(DEPLOY / "ha-controller", kubectl_bin=_kubectl())
    assert r.tls is None and [o["kind"] for o in r.of_kind("Deployment")] == ["Deployment"]


def test_a_kustomization_that_drops_the_ca_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "deploy"
    shutil.copytree(DEPLOY, broken)
    path = broken / "ha-config-webhook" / "kustomization.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["replacements"]
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(errors.ConfigError, match="does not carry the CA"):
        manifests.render(broken, kubectl_bin=_kubectl())


def test_a_directory_that_is_no_kustomization_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="no kustomization.yaml"):
        manifests.render(tmp_path, kubectl_bin=Path("/nonexistent/kubectl"))
