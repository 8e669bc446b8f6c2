"""``zoneproof qualify`` and ``mutants`` refuse bad component choices before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.cli import main
from zoneproof.exit_codes import ExitCode
from zoneproof.suites import qualify

pytestmark = pytest.mark.usefixtures("vendor_programs")  # hook, ctl on PATH


@pytest.mark.parametrize(("argv", "message"), [
    (["qualify", "--controller-variant", "nope"], "unknown controller variant 'nope'"),
    (["qualify", "--webhook-command", "hook {port}", "--webhook-url", "https://x"],
     "--webhook-command and --webhook-url both name the webhook under test"),
    (["qualify", "--controller-command", "ctl {identity}"], "must use {kubeconfig}"),
    (["mutants", "webhook", "--implementation", "acme"], "no webhook implementation 'acme'"),
    (["qualify", "--webhook-registration", "/no/such/mwc.yaml"],
     "webhook registration /no/such/mwc.yaml is not a file"),
    (["qualify", "--components", "in-cluster", "--backend", "local"],
     "--components in-cluster: the local backend cannot load image archives"),
    (["qualify", "--webhook-manifests", "deploy"], "add --components in-cluster"),
    (["qualify", "--controller-selector", "app in (("], "--controller-selector selector "
     "'app in ((' is not equality-based"),
    (["qualify", "--controller-lease", "x"], "--controller-lease 'x' must be NAMESPACE/NAME"),
    (["qualify", "--components", "in-cluster", "--backend", "kind", "--controller-manifests",
      "deploy"], "needs both --controller-manifests DIR and --controller-image-archive TAR"),
])
def test_bad_components_exit_4_naming_the_fix(argv: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(argv) == ExitCode.ERROR
    assert message in capsys.readouterr().err


def test_qualify_passes_the_registration_file_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mwc = tmp_path / "mwc.yaml"
    mwc.write_text("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
                   "webhooks: [{name: high-availability-config.resources.gardener.cloud}]\n")
    seen: list[qualify.Options] = []
    monkeypatch.setattr(qualify, "qualify", lambda _b, _s, options, **_k: seen.append(options) or 0)
    assert main.main(["qualify", "--webhook-command", "hook {port} {cert_file} {key_file}",
                      "--webhook-registration", str(mwc)]) == 0
    (options,) = seen
    assert options.components.webhook.registration_file == mwc
    assert options.components.webhook.to_dict()["registration_file"] == str(mwc)


def test_qualify_passes_in_cluster_components_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[qualify.Options] = []
    monkeypatch.setattr(qualify, "qualify", lambda _b, _s, options, **_k: seen.append(options) or 0)
    assert main.main(["qualify", "--backend", "kind", "--components", "in-cluster"]) == 0
    (options,) = seen
    assert options.components.webhook.mode == options.components.controller.mode == "in-cluster"
    assert '"source":"in-cluster"' in options.components.to_json()
