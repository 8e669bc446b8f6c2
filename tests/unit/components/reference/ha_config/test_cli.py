"""The webhook process: argument errors exit 2 with a message; a real process serves health and JSON logs."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import sys
import time
from pathlib import Path

import pytest

from zoneproof._util import certs, daemons, processes, waiting
from zoneproof.bench import procstat
from zoneproof.components.reference.ha_config import cli
from zoneproof.specs.ha_config import keys

MODULE = [sys.executable, "-m", "zoneproof.components.reference.ha_config"]


@pytest.mark.parametrize(("args", "message"), [
    (["--port", "99999", "--cert-file", "{f}", "--key-file", "{f}"],
     "argument --port: port 99999 is outside"),
    (["--port", "1", "--cert-file", "/nope", "--key-file", "{f}"],
     "argument --cert-file: /nope: no such file"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--variant", "bogus"],
     "invalid choice: 'bogus'"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--unreachable-toleration-seconds", "-1"],
     "toleration seconds must be >= 0"),
    (["--cert-file", "{f}", "--key-file", "{f}"], "the following arguments are required: --port"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--header-timeout", "0"],
     "argument --header-timeout: must be > 0 seconds, got 0"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--max-connections", "-3"],
     "argument --max-connections: must be > 0, got -3"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--workers", "0"],
     "argument --workers: must be > 0, got 0"),
    (["--port", "1", "--cert-file", "{f}", "--key-file", "{f}", "--shutdown-delay", "-1"],
     "argument --shutdown-delay: must be >= 0 seconds, got -1"),
])
def test_bad_arguments_exit_2_with_a_message(tmp_path: Path, args: list[str], message: str) -> None:
    existing = tmp_path / "f.pem"
    existing.write_text("x")
    with pytest.raises(processes.CommandError) as caught:
        processes.run([*MODULE, *(a.replace("{f}", str(existing)) for a in args)], timeout_s=60)
    assert caught.value.returncode == 2
    assert message in caught.value.output


def test_unusable_certificate_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    kubeconfig = _kubeconfig(tmp_path, 1)
    with pytest.raises(processes.CommandError) as caught:
        processes.run([*MODULE, "--kubeconfig", str(kubeconfig), "--port", "0", "--cert-file", str(junk),
                       "--key-file", str(junk)], timeout_s=60)
    assert caught.value.returncode == 2
    assert "ha_config: error: cannot serve on 127.0.0.1:0" in caught.value.output


def test_parser_defaults() -> None:
    args = cli.build_parser().parse_args(["--port", "0", "--cert-file", __file__, "--key-file", __file__])
    assert (args.bind, args.variant, args.not_ready_toleration_seconds, args.no_companion) == (
        "127.0.0.1", "reference", None, False)


def _kubeconfig(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}",
                                               "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_process_serves_health_and_refuses_until_caches_sync(tmp_path: Path) -> None:
    ca = certs.make_ca("cli-test-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(tmp_path, "tls")
    log_path = tmp_path / "webhook.log"
    argv = [*MODULE, "--kubeconfig", str(_kubeconfig(tmp_path, _closed_port())), "--port", "0",
            "--cert-file", str(crt), "--key-file", str(key),
            "--max-connections", "7", "--header-timeout", "2.5"]
    record = daemons.start("ha-config", argv, log_path)
    try:
        def serving() -> tuple[bool, object]:
            lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
            ports = [(line["port"], line["max_connections"], line["header_timeout_s"])
                     for line in lines if line.get("event") == "webhook-serving"]
            return bool(ports), ports[0] if ports else log_path.read_text()[-500:]

        port, max_connections, header_timeout_s = waiting.wait_for(
            serving, what="the webhook to log webhook-serving", timeout_s=30)
        assert isinstance(port, int)
        assert (max_connections, header_timeout_s) == (7, 2.5), "the serving limits come from the options"
        context = ssl.create_default_context(cadata=ca.cert_pem.decode())

        def call(method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
            try:
                conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                return response.status, response.read()
            finally:
                conn.close()

        assert call("GET", "/healthz") == (200, b"ok\n")
        assert call("GET", "/readyz")[0] == 503
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"}, "namespace": "team",
            "name": "app", "operation": "CREATE", "object": {}}}
        status, raw = call("POST", keys.WEBHOOK_PATH, json.dumps(review).encode())
        assert status == 200
        assert json.loads(raw)["response"]["status"] == {
            "code": 500, "message": "the namespaces cache has not synced yet"}
        assert any(json.loads(line).get("event") == "admission"
                   for line in log_path.read_text().splitlines() if line.startswith("{"))
    finally:
        daemons.stop(record, timeout_s=10)
    assert not daemons.alive(record)


def test_workers_serve_beside_the_first_and_stop_with_it(tmp_path: Path) -> None:
    """A second worker waits for its caches (never synced here) before it listens; the first
    serves meanwhile, with its share of --max-connections; SIGTERM ends both."""
    ca = certs.make_ca("cli-workers-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(tmp_path, "tls")
    log_path = tmp_path / "webhook.log"
    argv = [*MODULE, "--kubeconfig", str(_kubeconfig(tmp_path, _closed_port())), "--port", "0",
            "--cert-file", str(crt), "--key-file", str(key), "--workers", "2", "--max-connections", "9"]
    record = daemons.start("ha-config", argv, log_path)
    try:
        def serving() -> tuple[bool, object]:
            lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
            found = [(line["port"], line["max_connections"], line["loops"])
                     for line in lines if line.get("event") == "webhook-serving"]
            return bool(found), found[0] if found else log_path.read_text()[-500:]

        port, max_connections, loops = waiting.wait_for(
            serving, what="the first worker to log webhook-serving", timeout_s=30)
        assert (max_connections, loops) == (5, 1), "each worker: a share of the limit, one loop"
        (second,) = procstat.children(record.pid)
        conn = http.client.HTTPSConnection("127.0.0.1", int(port), timeout=10,
                                           context=ssl.create_default_context(cadata=ca.cert_pem.decode()))
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() == b"ok\n"
        conn.close()
    finally:
        daemons.stop(record, timeout_s=10)
    assert not daemons.alive(record)
    waiting.wait_for(lambda: (not Path(f"/proc/{second}").exists()
                              or Path(f"/proc/{second}/stat").read_text().split(")")[1].split()[0] == "Z",
                              second), what="the second worker to end", timeout_s=10)


def test_sigterm_drains_and_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    """--shutdown-delay: SIGTERM starts the drain (logged, still listening); a second SIGTERM
    ends it long before the delay."""
    ca = certs.make_ca("cli-drain-ca")
    crt, key = certs.issue_cert(ca, "webhook", sans=("127.0.0.1",)).write(tmp_path, "tls")
    log_path = tmp_path / "webhook.log"
    argv = [*MODULE, "--kubeconfig", str(_kubeconfig(tmp_path, _closed_port())), "--port", "0",
            "--cert-file", str(crt), "--key-file", str(key), "--shutdown-delay", "120"]
    record = daemons.start("ha-config", argv, log_path)

    def logged(event: str) -> tuple[bool, str]:
        return f'"event": "{event}"' in log_path.read_text(), log_path.read_text()[-500:]

    try:
        waiting.wait_for(lambda: logged("webhook-serving"), what="webhook-serving", timeout_s=30)
        os.kill(record.pid, signal.SIGTERM)
        waiting.wait_for(lambda: logged("webhook-draining"), what="webhook-draining", timeout_s=10)
        time.sleep(0.5)
        assert daemons.alive(record), "it drains for --shutdown-delay"
        began = time.monotonic()
        os.kill(record.pid, signal.SIGTERM)
        waiting.wait_for(lambda: (not daemons.alive(record), "alive"), what="the webhook to end",
                         timeout_s=20)
        assert time.monotonic() - began < 20
    finally:
        daemons.stop(record, timeout_s=10)
