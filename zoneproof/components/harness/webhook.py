"""Run the high-availability-config webhook under test on a cluster and register it.

Three ways, one code path for registration: the reference webhook (a command template,
started on the cluster's ``host_address`` — loopback, or the docker gateway a kind node
reaches this host by — with a serving certificate from a CA made at deploy time), a vendor's
command (same template placeholders), or a webhook already running at a URL with its CA
bundle. The MutatingWebhookConfiguration is the spec's (§3) for the chosen variant,
labelled with the run (removed with it, whatever ends it). Certificates and keys live in
the run's private directory and expire after ``runs.CREDENTIAL_LIFETIME_S``.
"""

from __future__ import annotations

import copy
import datetime as dt
import shlex
import ssl
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client

from zoneproof import errors
from zoneproof._util import certs, daemons, kube, ports, waiting
from zoneproof.cluster import runs, sweep
from zoneproof.cluster.interface import Cluster
from zoneproof.components.reference.ha_config import variants as ha_variants
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

__all__ = ["REFERENCE_COMMAND", "RunningWebhook", "WebhookSettings", "release"]

REFERENCE_COMMAND = (
    "{python} -m zoneproof.components.reference.ha_config --kubeconfig {kubeconfig} --bind {host} "
    "--port {port} --cert-file {cert_file} --key-file {key_file} --variant {variant}"
)
PROBE_NAMESPACE = "zoneproof-webhook-probe"
_READY_TIMEOUT_S = 60.0
_BIND_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """Which webhook is under test and how to reach it."""

    variant: str = "reference"
    command: str = REFERENCE_COMMAND
    #: A webhook already running: its https URL and the PEM CA bundle that signs it.
    url: str = ""
    ca_bundle: Path | None = None
    configuration_name: str = config.DEFAULT_CONFIGURATION_NAME

    def problems(self) -> list[str]:
        """What is wrong with these settings (empty when valid)."""
        found = []
        if self.variant not in ha_variants.VARIANTS:
            found.append(f"webhook variant {self.variant!r} is unknown: choose one of "
                         f"{', '.join(ha_variants.VARIANTS)}")
        if self.url and (self.ca_bundle is None or not self.ca_bundle.is_file()):
            found.append("a webhook URL needs --zp-webhook-ca-bundle FILE (the PEM CA that "
                         "signed its serving certificate)")
        if self.url and not self.url.startswith("https://"):
            found.append(f"webhook URL {self.url!r} must be https:// (admission requires TLS)")
        return found


def _probe_deployment() -> dict[str, Any]:
    labels = {"app": "zoneproof-webhook-probe"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "probe", "labels": {keys.LABEL_TYPE: keys.TYPE_SERVER},
                         "annotations": {keys.ANNOTATION_REPLICAS: "3"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "fake"}]}}}}


class RunningWebhook:
    """A webhook deployed on ``cluster``: ``start()`` returns once the API server calls it."""

    def __init__(self, cluster: Cluster, settings: WebhookSettings, workdir: Path) -> None:
        if found := settings.problems():
            raise errors.ConfigError("; ".join(found))
        self.cluster, self.settings, self.workdir = cluster, settings, workdir
        self.api = kube.api_client(cluster.kubeconfig)
        self.record: daemons.DaemonRecord | None = None
        self.url = settings.url
        workdir.mkdir(parents=True, exist_ok=True)

    # -- process ---------------------------------------------------------------------
    def _serve(self) -> bytes:
        """``_serve_once``, again if another process bound the chosen port meanwhile (a race)."""
        for attempt in range(1, _BIND_ATTEMPTS + 1):
            try:
                return self._serve_once()
            except errors.ProvisionError as exc:
                if attempt == _BIND_ATTEMPTS or "Address already in use" not in str(exc):
                    raise
        raise AssertionError("unreachable")

    def _serve_once(self) -> bytes:
        """Start the webhook process with a fresh CA and serving cert; the CA bundle."""
        lifetime = dt.timedelta(seconds=runs.CREDENTIAL_LIFETIME_S)
        ca = certs.make_ca("zoneproof-webhook-ca", validity=lifetime)
        host = self.cluster.host_address  # loopback, or e.g. a docker gateway for kind
        sans = tuple(dict.fromkeys((host, "127.0.0.1", "localhost")))
        cert_file, key_file = certs.issue_cert(
            ca, "zoneproof-webhook", sans=sans, validity=lifetime).write(
                runs.private_dir("webhook"), "serving")
        port = ports.choose_base(1, explicit=None, start=20000, stop=21000,
                                 free=lambda p: ports.is_free(p, host))
        argv = shlex.split(self.settings.command.format(
            python=shlex.quote(sys.executable), kubeconfig=shlex.quote(str(self.cluster.kubeconfig)),
            port=port, cert_file=shlex.quote(str(cert_file)), key_file=shlex.quote(str(key_file)),
            variant=self.settings.variant, host=host))
        record = self.record = daemons.start("webhook", argv, self.workdir / "webhook.log")
        self.url = config.webhook_url(host, port)
        context = ssl.create_default_context(cadata=ca.cert_pem.decode())
        pool = urllib3.PoolManager(ssl_context=context, retries=False,
                                   timeout=urllib3.Timeout(connect=0.5, read=2))
        base = self.url.removesuffix(keys.WEBHOOK_PATH)

        def ready() -> tuple[bool, str]:
            if not daemons.alive(record):
                raise errors.ProvisionError(f"the webhook exited during start-up; log: "
                                            f"{self.workdir / 'webhook.log'}:\n{self.log()[-1500:]}")
            try:
                status = pool.request("GET", f"{base}/readyz").status
            except urllib3.exceptions.HTTPError as exc:
                return False, str(exc)
            return status == 200, f"/readyz {status}"

        waiting.wait_for(ready, what="the webhook's /readyz", timeout_s=_READY_TIMEOUT_S)
        return ca.cert_pem

    def log(self) -> str:
        """The webhook process's output so far ('' for an external webhook)."""
        path = self.workdir / "webhook.log"
        return path.read_text(errors="replace") if path.is_file() else ""

    # -- registration ----------------------------------------------------------------
    def _dry_run_probe(self) -> Any:
        apps = client.AppsV1Api(self.api)
        stored = apps.create_namespaced_deployment(PROBE_NAMESPACE, _probe_deployment(),
                                                   dry_run="All")
        return self.api.sanitize_for_serialization(stored)["spec"]

    def _register(self, ca_bundle: bytes) -> None:
        admission = client.AdmissionregistrationV1Api(self.api)
        body = config.render_webhook_configuration(
            ca_bundle=ca_bundle, url=self.url, name=self.settings.configuration_name,
            selection=ha_variants.selection(ha_variants.VARIANTS[self.settings.variant]))
        labelled = sweep.labelled(body)
        try:
            admission.create_mutating_webhook_configuration(labelled)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            admission.replace_mutating_webhook_configuration(
                self.settings.configuration_name, labelled)

    def start(self) -> RunningWebhook:
        """Serve (unless external), register, and wait until admissions really go through it."""
        core = client.CoreV1Api(self.api)
        try:
            core.create_namespace(sweep.labelled({"metadata": {
                "name": PROBE_NAMESPACE, "labels": {keys.LABEL_CONSIDER: "true"}}}))
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        baseline = copy.deepcopy(self._dry_run_probe())  # before registration: no webhook
        if self.settings.url:
            assert self.settings.ca_bundle is not None
            ca_bundle = self.settings.ca_bundle.read_bytes()
        else:
            ca_bundle = self._serve()
        self._register(ca_bundle)

        def mutating() -> tuple[bool, str]:
            return self._dry_run_probe() != baseline, "probe Deployment not mutated yet"

        waiting.wait_for(mutating, what=f"the API server to call the webhook at {self.url}",
                         timeout_s=_READY_TIMEOUT_S, ignore=(client.ApiException,))
        return self

    def describe(self) -> dict[str, Any]:
        """JSON description, enough for ``release`` in another process."""
        return {"kubeconfig": str(self.cluster.kubeconfig), "url": self.url,
                "configuration": self.settings.configuration_name,
                "variant": self.settings.variant,
                "process": self.record.to_dict() if self.record else None}

    def stop(self) -> None:
        """Unregister and stop the process; nothing is left behind."""
        release(self.describe())


def release(description: dict[str, Any]) -> None:
    """Undo a deployment described by ``RunningWebhook.describe`` (idempotent)."""
    api = kube.api_client(Path(description["kubeconfig"]))
    try:
        client.AdmissionregistrationV1Api(api).delete_mutating_webhook_configuration(
            description["configuration"])
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    except urllib3.exceptions.HTTPError:
        pass  # the cluster is gone already: nothing to unregister
    if description["process"] is not None:
        daemons.stop(daemons.DaemonRecord.from_dict(description["process"]), timeout_s=10)
