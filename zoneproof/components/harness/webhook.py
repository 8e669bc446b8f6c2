"""Run the high-availability-config webhook under test on a cluster and register it.

``RunningWebhook`` is the webhook kind's launcher (``source.Launcher``): the component's
source starts it the one way it delivers it. A command (a registered implementation and
its variants, or a vendor's) is started on the cluster's ``host_address`` — loopback, or
the docker gateway a kind node reaches this host by — with a serving certificate from a
CA made at deploy time; a webhook already running at a URL is used with its CA bundle;
in-cluster workloads are deployed by their manifests, which register them. The
MutatingWebhookConfiguration is the component's own
file when it has one (``registration_file``, adopted by ``registration.adopt``: the suite
names it and fills in each entry's clientConfig), else the spec's (§3) with the
selection the component's registered variant wants; either way labelled with the run
(removed with it, whatever ends it). Certificates and keys live in the run's private
directory and expire after ``runs.CREDENTIAL_LIFETIME_S``. Every start is described
(``started.Started``, with the configuration as the API server stored it) and noted in
the ledger reports are built from.
"""

from __future__ import annotations

import copy
import datetime as dt
import ssl
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import filelock
import urllib3
from kubernetes import client

from zoneproof import errors, runs
from zoneproof._util import certs, daemons, kube, ports, waiting
from zoneproof.cluster.interface import Cluster
from zoneproof.components.harness import in_cluster, started
from zoneproof.components.harness.component import Component
from zoneproof.components.harness.kinds import Kind
from zoneproof.components.harness.source import Workloads
from zoneproof.runs import state, sweep
from zoneproof.specs.ha_config import keys
from zoneproof.specs.ha_config import registration as config

__all__ = ["PROBE_NAMESPACE", "RunningWebhook", "release", "replacing"]

PROBE_NAMESPACE = "zoneproof-webhook-probe"
_READY_TIMEOUT_S = 60.0
_BIND_ATTEMPTS = 3


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

    def __init__(self, cluster: Cluster, component: Component, workdir: Path, *,
                 extra_args: tuple[str, ...] = (),
                 configuration_name: str = config.DEFAULT_CONFIGURATION_NAME,
                 patch: in_cluster.Patch | None = None,
                 ready_timeout_s: float = _READY_TIMEOUT_S) -> None:
        if component.kind != Kind.WEBHOOK:
            raise errors.ConfigError(f"RunningWebhook needs a webhook, got the {component.label()}")
        component.validate()
        self.cluster, self.component, self.workdir = cluster, component, workdir
        self.extra_args, self.configuration_name = extra_args, configuration_name
        self.patch = patch
        """What changes an in-cluster webhook's rendered objects before they are applied."""
        self.ready_timeout_s = ready_timeout_s
        """How long ``start`` waits for the API server to call the webhook."""
        self.api = kube.api_client(cluster.kubeconfig)
        self.record: daemons.DaemonRecord | None = None
        self.url = ""
        self.ca_bundle = b""
        """PEM of the CA that signs the webhook's serving certificate (after ``start``)."""
        self.registered: dict[str, Any] = {}
        """The configuration as the API server stored it (after ``start``)."""
        self.started: started.Started | None = None
        """What the last ``start`` ran (None before)."""
        self.installed: in_cluster.Installed | None = None
        """The in-cluster webhook as deployed (after ``start``; None for a host one)."""
        self._port_lock: filelock.BaseFileLock | None = None
        """Holds the served port from ``start`` to ``stop``, restarts included."""
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
        if self._port_lock is not None:
            self._port_lock.release()
        port, self._port_lock = ports.reserve(state.state_root() / "webhook-ports",
                                              start=20000, stop=21000, host=host)
        argv = self.component.argv(
            {"python": sys.executable, "kubeconfig": self.cluster.kubeconfig, "port": port,
             "cert_file": cert_file, "key_file": key_file, "host": host}, self.extra_args)
        self.url = config.webhook_url(host, port, self._path())
        self._launch(argv, ca.cert_pem)
        return ca.cert_pem

    def _launch(self, argv: list[str], ca_pem: bytes) -> None:
        """Start ``argv`` (noted in the ledger) and wait until its /readyz answers 200."""
        log_file = self.workdir / "webhook.log"
        self.started = started.of_command(self.component, argv, log=log_file)
        record = self.record = daemons.start("webhook", argv, log_file)
        context = ssl.create_default_context(cadata=ca_pem.decode())
        pool = urllib3.PoolManager(ssl_context=context, retries=False,
                                   timeout=urllib3.Timeout(connect=0.5, read=2))
        split = urllib.parse.urlsplit(self.url)
        base = f"{split.scheme}://{split.netloc}"

        def ready() -> tuple[bool, str]:
            if not daemons.alive(record):
                raise errors.ProvisionError(f"the webhook exited during start-up; log: "
                                            f"{log_file}:\n{self.log()[-1500:]}")
            try:
                status = pool.request("GET", f"{base}/readyz").status
            except urllib3.exceptions.HTTPError as exc:
                return False, str(exc)
            return status == 200, f"/readyz {status}"

        waiting.wait_for(ready, what="the webhook's /readyz", timeout_s=_READY_TIMEOUT_S)

    def restart(self, meanwhile: Callable[[], None] = lambda: None) -> None:
        """Stop the process and start the same command again (same URL, certificate and
        registration, as when a webhook's pod restarts); ``meanwhile`` runs while it is down."""
        if self.record is None:
            raise errors.ConfigError(f"the {self.component.label()} was not started by the suite: "
                                     "it cannot be restarted")
        daemons.stop(self.record, timeout_s=10)
        meanwhile()
        try:
            self._launch(list(self.record.argv), self.ca_bundle)
        finally:
            if self.started is not None:
                started.note(self.started.with_registration(self.url, self.registered))

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

    def _path(self) -> str:
        """The HTTP path reviews are posted to: the vendor's first entry's, else the spec's."""
        if self.component.registration_file is None:
            return keys.WEBHOOK_PATH
        vendor = config.load_file(self.component.registration_file)
        return config.entry_path(vendor["webhooks"][0])

    def _body(self, ca_bundle: bytes) -> dict[str, Any]:
        """The configuration to register: the vendor's adopted, or the spec's rendered."""
        if self.component.registration_file is None:
            return dict(config.render_webhook_configuration(
                ca_bundle=ca_bundle, url=self.url, name=self.configuration_name,
                selection=self.component.selection()))
        split = urllib.parse.urlsplit(self.url)
        return config.adopt(config.load_file(self.component.registration_file),
                            name=self.configuration_name, ca_bundle=ca_bundle,
                            base_url=f"{split.scheme}://{split.netloc}",
                            keep_service=self.component.external)

    def _register(self, ca_bundle: bytes) -> dict[str, Any]:
        """Register the configuration; it as the API server stored it."""
        admission = client.AdmissionregistrationV1Api(self.api)
        body = sweep.labelled(self._body(ca_bundle))
        try:
            stored = admission.create_mutating_webhook_configuration(body)
        except client.ApiException as exc:
            if exc.status != 409:
                raise errors.ProvisionError(
                    f"the API server refused the webhook registration {self.configuration_name} "
                    f"(HTTP {exc.status}): {exc.body}") from None
            # one left by an earlier start of ours (same name): replaced as the one read now
            # (an update must name the resourceVersion it replaces, else HTTP 422)
            current = admission.read_mutating_webhook_configuration(self.configuration_name)
            stored = admission.replace_mutating_webhook_configuration(
                self.configuration_name, replacing(body, current.metadata.resource_version))
        found: dict[str, Any] = self.api.sanitize_for_serialization(stored)
        return found

    def start(self) -> RunningWebhook:
        """Serve (unless external), register, and wait until admissions really go through it.

        A start that fails undoes what it did (process, registration, in-cluster objects):
        a registration left behind would send every later object of the cluster through a
        webhook that never came up."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> RunningWebhook:
        core = client.CoreV1Api(self.api)
        try:
            core.create_namespace(sweep.labelled({"metadata": {
                "name": PROBE_NAMESPACE, "labels": {keys.LABEL_CONSIDER: "true"}}}))
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        baseline = copy.deepcopy(self._dry_run_probe())  # before registration: no webhook
        self.started = None
        self.component.start(self)

        def mutating() -> tuple[bool, str]:
            return self._dry_run_probe() != baseline, "probe Deployment not mutated yet"

        waiting.wait_for(mutating, what=f"the API server to call the {self.component.label()} "
                         f"for a Deployment in namespace {PROBE_NAMESPACE} (labelled consider=true; "
                         "if the registration is the vendor's, check its rules and selectors)",
                         timeout_s=self.ready_timeout_s, ignore=(client.ApiException,))
        return self

    # -- the ways a source starts it (``source.Launcher``) ------------------------------------
    def process(self, component: Component) -> None:
        """Serve the component's command with a fresh CA and serving certificate; register it."""
        self._register_served(self._serve)

    def endpoint(self, component: Component, url: str, ca_bundle: bytes) -> None:
        """Register the webhook already running at ``url``."""

        def given() -> bytes:
            self.url, self.started = url, started.Started(component)
            return ca_bundle

        self._register_served(given)

    def workloads(self, component: Component, workloads: Workloads) -> None:
        """Deploy the in-cluster webhook; its manifests register it themselves."""
        installed = self.installed = in_cluster.install(self.cluster, component, workloads,
                                                        patch=self.patch)
        try:
            configurations = installed.of_kind("MutatingWebhookConfiguration")
            if len(configurations) != 1 or installed.rendered.tls is None:
                raise errors.ConfigError(
                    f"the manifests of the {self.component.label()} must register exactly one "
                    f"MutatingWebhookConfiguration served behind a Service with the certificate "
                    f"of their tls/ directory; they have {len(configurations)}")
            self.configuration_name = configurations[0]["metadata"]["name"]
            self.ca_bundle = installed.rendered.tls.ca.cert_pem
            stored = client.AdmissionregistrationV1Api(self.api).read_mutating_webhook_configuration(
                self.configuration_name)
            self.registered = self.api.sanitize_for_serialization(stored)
            service = self.registered["webhooks"][0]["clientConfig"].get("service") or {}
            self.url = ""  # a Service: reached by the API server only
            self.started = started.Started(
                self.component, url=(f"https://{service.get('name')}.{service.get('namespace')}"
                                     f".svc:{service.get('port', 443)}{service.get('path', '')}"),
                registration=self.registered, in_cluster=installed.describe())
        except BaseException:
            in_cluster.uninstall(installed.describe())
            raise
        finally:
            if self.started is not None:
                started.note(self.started)

    def _register_served(self, serve: Callable[[], bytes]) -> None:
        """``serve`` (its CA bundle), then register the spec's or the vendor's configuration."""
        try:  # noted even when it fails to come up: it was started
            self.ca_bundle = serve()
            assert self.started is not None
            self.registered = self._register(self.ca_bundle)
            self.started = self.started.with_registration(self.url, self.registered)
        finally:
            if self.started is not None:
                started.note(self.started)

    def pod_nodes(self) -> dict[str, str]:
        """Pod → node of an in-cluster webhook's Deployment ({}: it runs on no node)."""
        if self.installed is None:
            return {}
        return {pod: node for deployment in self.installed.of_kind("Deployment")
                for pod, node in in_cluster.pod_nodes(self.api, deployment).items()}

    def rollout_restart(self, timeout_s: float) -> list[tuple[list[str], list[str]]]:
        """Restart an in-cluster webhook's Deployments one by one (rolling updates); for each,
        its pods (before, after). ConfigError when it does not run in the cluster."""
        if self.installed is None:
            raise errors.ConfigError(f"{self.component.label()} does not run in the cluster: only an "
                                     "in-cluster webhook's pods can be restarted (--zp-components "
                                     "in-cluster)")
        return [in_cluster.restart(self.api, deployment, timeout_s=timeout_s)
                for deployment in self.installed.of_kind("Deployment")]

    def describe(self) -> dict[str, Any]:
        """JSON description, enough for ``release`` in another process; ``started`` is what ran."""
        return {"kubeconfig": str(self.cluster.kubeconfig), "url": self.url,
                "ca_bundle": self.ca_bundle.decode(), "configuration": self.configuration_name,
                "started": self.started.to_dict() if self.started else None,
                "process": self.record.to_dict() if self.record else None,
                "in_cluster": self.installed.describe() if self.installed else None}

    def stop(self) -> None:
        """Unregister and stop the process; nothing is left behind."""
        release(self.describe())
        if self._port_lock is not None:
            self._port_lock.release()
            self._port_lock = None


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
    if description.get("in_cluster"):
        in_cluster.uninstall(description["in_cluster"])


def replacing(body: dict[str, Any], resource_version: str) -> dict[str, Any]:
    """``body`` as the update of the stored object of ``resource_version`` (optimistic
    concurrency: the API server refuses an update without it, and one of a stale version)."""
    metadata = {**body.get("metadata", {}), "resourceVersion": resource_version}
    return {**body, "metadata": metadata}
