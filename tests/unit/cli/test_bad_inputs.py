"""Every bad input is refused by the real CLI before anything starts: one line naming what
is wrong and the fix (a profile lists each problem on a line of its own), bounded in size,
no traceback, and nothing started or left behind — no process, run, bed, temp file (issue
14 item 10, issue 26 item 2; the abusive `down --name`s of issue 14 item 1).

The commands run in processes forked from one that imported the CLI (``forked_cli``): each
is a real ``zoneproof`` process with its own environment and exit status, without paying
the import for each of the cases.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from zoneproof._util import reaping, waiting
from zoneproof.exit_codes import ExitCode
from zoneproof.slo import SCHEMA_VERSION

_MAX_OUTPUT_CHARS = 4500
_TOKEN = "ZONEPROOF_BAD_INPUT_CASE"
#: A port that accepts connections and never answers (an API server that hangs).
_SILENT: dict[str, int] = {"port": 9}


@dataclass(frozen=True)
class Bad:
    args: tuple[str, ...]
    says: str
    """A regular expression the message must match (what is wrong and the fix)."""
    exit_code: int = ExitCode.ERROR
    lines: int = 1
    """At most this many lines (1: a one-line refusal)."""
    cwd: str = ""
    """Directory to run in, relative to the case's tmp dir (default: the tmp dir)."""


def _kubeconfig(server: str) -> str:
    return ("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n"
            f"    server: {server}\n    insecure-skip-tls-verify: true\ncontexts:\n"
            "- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t}\n")


LAUGHS = "".join(f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join(
    [f"*{chr(96 + i)}"] * 9 if i else ['"lol"'] * 9) + "]\n" for i in range(9))
"""A billion laughs: 700 bytes, 9^9 strings once its aliases are expanded."""


def _slo(body: str, head: str = f"apiVersion: {SCHEMA_VERSION}\nkind: SloSet\n") -> str:
    return f"{head}slos:\n{body}"


#: SLO file name → (content, the message it must give).
SLO_FILES: dict[str, tuple[str | bytes, str]] = {
    "nan": (_slo("  - {name: lease-failover, max: .nan}\n"), r"max must be a finite number >= 0"),
    "inf": (_slo("  - {name: lease-failover, max: .inf}\n"), r"max must be a finite number >= 0"),
    "neg": (_slo("  - {name: lease-failover, max: -1}\n"), r"max must be a finite number >= 0"),
    "max-string": (_slo("  - {name: lease-failover, max: '5'}\n"), r"finite number >= 0"),
    "max-bool": (_slo("  - {name: lease-failover, max: true}\n"), r"finite number >= 0"),
    "typo": (_slo("  - {name: lease-failover, metric: lease_failovr}\n"),
             r"unknown metric 'lease_failovr': zoneproof measures"),
    "twice": (_slo("  - {name: lease-failover, max: 3}\n  - {name: lease-failover, max: 9}\n"),
              r"'lease-failover' given more than once"),
    "api-version": (_slo("  - {name: lease-failover, max: 3}\n", "apiVersion: v0\nkind: SloSet\n"),
                    r"apiVersion must be 'zoneproof.dev/v1'"),
    "kind": (_slo("  - {name: lease-failover, max: 3}\n", f"apiVersion: {SCHEMA_VERSION}\n"
                  "kind: Slos\n"), r"kind 'SloSet'"),
    "list": ("- a\n- b\n", r"expected a mapping with apiVersion, kind, slos"),
    "empty": ("", r"expected a mapping with apiVersion, kind, slos"),
    "binary": (bytes(range(256)) * 4, r"is not text .*binary file\? give an SLO file"),
    "nul": ("apiVersion: x\0\n", r"is not text \(it holds NUL bytes\)"),
    "laughs": (LAUGHS, r"more than 16 aliases"),
    "syntax": ("slos: [unclosed\n", r"is not valid YAML"),
    "unknown-field": (_slo("  - {name: lease-failover, colour: red}\n"),
                      r"unknown field 'colour'; allowed"),
    "unit": (_slo("  - {name: lease-failover, unit: hours}\n"), r"unit must be one of"),
    "name-empty": (_slo("  - {name: '', max: 3}\n"), r"name: String should have at least 1"),
    "name-number": (_slo("  - {name: 5, max: 3}\n"), r"name: Input should be a valid string"),
    "no-name": (_slo("  - {max: 3}\n"), r"name: Field required"),
    "slos-not-list": (_slo("  x: 1\n"), r"slos must be a list of mappings"),
    "slos-of-strings": (_slo("  - lease-failover\n"), r"slos must be a list of mappings"),
    "unknown-top": (_slo("  - {name: lease-failover, max: 3}\n") + "extra: 1\n",
                    r"unknown key 'extra'; allowed: apiVersion, kind, slos"),
    "new-without-metric": (_slo("  - {name: brand-new, max: 3, unit: seconds}\n"),
                           r"SLO 'brand-new': missing 'metric'"),
    "allow-no-data-string": (_slo("  - {name: lease-failover, allow_no_data: 'yes'}\n"),
                             r"allow_no_data: Input should be a valid boolean"),
    "description-list": (_slo("  - {name: lease-failover, description: [a]}\n"),
                         r"description: Input should be a valid string"),
}

_PROFILE_OK = """apiVersion: zoneproof.dev/v1
kind: CertificationProfile
vendor: acme
product: acme ha
version: "1.0"
contact: ha@acme.example
components:
  webhook: {source: registered, name: reference, variant: reference}
  controller: {source: registered, name: reference, variant: reference}
backend: {name: local}
"""


def _profile(old: str, new: str) -> str:
    assert old in _PROFILE_OK, old
    return _PROFILE_OK.replace(old, new)


#: Profile name → (content, the message it must give, at most this many lines).
PROFILES: dict[str, tuple[str | bytes, str, int]] = {
    "binary": (bytes(range(256)) * 4, r"certification profile .* is not text", 1),
    "laughs": (LAUGHS, r"more than 16 aliases", 1),
    "syntax": ("vendor: [x\n", r"is not valid YAML", 1),
    "list": ("- a\n", r"must be a mapping \(apiVersion: zoneproof.dev/v1", 1),
    "empty": ("", r"must be a mapping", 1),
    "vendor-number": (_profile("vendor: acme", "vendor: 42"),
                      r"vendor: give a non-empty string, got 42 \(quote it", 2),
    "version-float": (_profile('version: "1.0"', "version: 1.0"),
                      r"version: give a non-empty string, got 1.0", 2),
    "product-empty": (_profile("product: acme ha", "product: ''"), r"product: give a non-empty", 2),
    "contact-null": (_profile("contact: ha@acme.example", "contact:"), r"contact: give a non", 2),
    "vendor-list": (_profile("vendor: acme", "vendor: [a, b]"), r"vendor: give a non-empty", 2),
    "typo-key": (_profile("vendor: acme", "vendr: acme"), r"did you mean 'vendor'", 3),
    "api-version": (_profile("apiVersion: zoneproof.dev/v1", "apiVersion: v2"),
                    r"apiVersion: 'v2' is not supported: write zoneproof.dev/v1", 2),
    "kind": (_profile("kind: CertificationProfile", "kind: Profile"),
             r"kind: 'Profile' is not supported: write CertificationProfile", 2),
    "no-components": (_PROFILE_OK.split("components:", maxsplit=1)[0] + "backend: {name: local}\n",
                      r"components: missing", 4),
    "backend-unknown": (_profile("backend: {name: local}", "backend: {name: vmware}"),
                        r"backend.name: 'vmware' is not installed", 2),
    "backend-key": (_profile("backend: {name: local}", "backend: {name: local, nme: x}"),
                    r"backend: unknown key 'nme'", 2),
    "backend-existing-no-kubeconfig": (
        _profile("backend: {name: local}", "backend: {name: existing}"),
        r"backend.kubeconfig: the existing backend needs", 3),
    "backend-kubeconfig-missing": (
        _profile("backend: {name: local}", "backend: {name: existing, kubeconfig: nope.yaml}"),
        r"backend.kubeconfig: .*nope.yaml is not a file", 3),
    "allow-destructive-string": (
        _profile("backend: {name: local}", "backend: {name: local, allow_destructive: 'yes'}"),
        r"backend.allow_destructive: true or false, got 'yes'", 2),
    "components-key": (_profile("  controller:", "  gadget: {}\n  controller:"),
                       r"components: unknown key 'gadget'", 2),
    "namespaces": (_profile("variant: reference}\nbackend",
                            "variant: reference, namespaces: shared}\nbackend"),
                   r"namespaces: 'shared' is not supported", 2),
    "lease": (_profile("variant: reference}\nbackend",
                       "variant: reference, lease: no-slash}\nbackend"),
              r"lease: 'no-slash' must be NAMESPACE/NAME", 2),
    "slo-missing": (_PROFILE_OK + "slo: nope.yaml\n", r"slo: .*nope.yaml is not a file", 2),
    "slo-nan": (_PROFILE_OK + "slo: nan.slo.yaml\n", r"max must be a finite number", 4),
    "slo-binary": (_PROFILE_OK + "slo: binary.slo.yaml\n", r"is not text", 4),
    "backend-not-mapping": (_profile("backend: {name: local}", "backend: local"),
                            r"backend: must be a mapping, got str", 2),
}

_KEYS = {"garbage.pem": b"not a key\n", "binary.pem": bytes(range(256)),
         "public.pem": b"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"}


def _prepare(tmp: Path) -> None:
    """The files the cases name: kubeconfigs, SLO files, profiles, keys, a user's directory
    and forged beds in the state."""
    (tmp / "garbage.kubeconfig").write_text("this: [is not\n a kubeconfig")
    (tmp / "binary.kubeconfig").write_bytes(bytes(range(256)) * 4)
    (tmp / "empty.kubeconfig").write_text("")
    (tmp / "unreachable.kubeconfig").write_text(_kubeconfig("https://127.0.0.1:9"))
    (tmp / "silent.kubeconfig").write_text(_kubeconfig(f"https://127.0.0.1:{_SILENT['port']}"))
    local = tmp / "state" / "local"
    (local / "userdir").mkdir(parents=True)
    (local / "userdir" / "precious").write_text("mine")
    (local / "forged").mkdir()
    (local / "forged" / "state.json").write_text('{"processes": {}, "ports": {}}')
    (local / "notjson").mkdir()
    (local / "notjson" / "state.json").write_text("{not json")
    for name, (content, _) in SLO_FILES.items():
        path = tmp / f"{name}.slo.yaml"
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    for name, (content, _, _) in PROFILES.items():
        path = tmp / f"{name}.profile.yaml"
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    (tmp / "ok.profile.yaml").write_text(_PROFILE_OK)
    for name, data in _KEYS.items():
        (tmp / name).write_bytes(data)
    (tmp / "sub").mkdir()
    (tmp / "bundle.tar.gz").write_bytes(b"not a tarball")


def _numbers(command: tuple[str, ...], flag: str, values: dict[str, str]) -> dict[str, Bad]:
    return {f"{'-'.join(command)}{flag}={value}": Bad((*command, flag, value), says, 2)
            for value, says in values.items()}


def _cases(tmp: Path) -> dict[str, Bad]:  # noqa: PLR0915 (one table)
    unreachable = tmp / "unreachable.kubeconfig"
    name_rule = r"1-40 lowercase letters, digits or '-'"
    whole = r"is not a whole number: give one from"
    out_of_range = r"is out of range: give a whole number from"
    seconds = r"give a finite number > 0 and <= 3600"
    cases: dict[str, Bad] = {
        "etcd-members-0": Bad(("up", "--etcd-members", "0"),
                              r"etcd_members must be 1, 3 or 5 .*got 0", lines=2),
        "etcd-members-2": Bad(("up", "--etcd-members", "2"), r"etcd_members must be 1, 3 or 5",
                              lines=2),
        "empty-zone": Bad(("up", "--zones", "zone-a,,zone-b"),
                          r"has an empty entry: write the zones comma-separated", 2),
        "trailing-comma-zone": Bad(("up", "--zones", "zone-a,"), r"empty entry", 2),
        "zone-not-a-label": Bad(("up", "--zones", "Bad Zone!"), r"not a valid label value",
                                lines=2),
        "port-base-80": Bad(("up", "--port-base", "80"), r"--port-base must be 1024"),
        "slo-dir": Bad(("qualify", "--slo-file", str(tmp)), r"SLO file .*: Is a directory", lines=2),
        "slo-missing": Bad(("qualify", "--slo-file", str(tmp / "nope.yaml")),
                           r"No such file or directory", lines=2),
        "reports-in-proc": Bad(("qualify", "--reports", "/proc/x"),
                               r"cannot create the reports directory /proc/x/.*pass --reports "
                               r"a writable directory"),
        "existing-only-experiment": Bad(
            ("qualify", "--backend", "existing", "--kubeconfig", str(unreachable), "--experiments",
             "zone-outage"), r"chaos experiments run on beds zoneproof makes.*--backend local"),
        "down-absolute-path": Bad(("down", "--cluster-name", str(tmp / "state")), name_rule, 2),
        "down-dotdot-path": Bad(("down", "--cluster-name", "../../dir2"), name_rule, 2),
        "down-dotdot": Bad(("down", "--cluster-name", ".."), name_rule, 2),
        "down-empty": Bad(("down", "--cluster-name", ""), name_rule, 2),
        "down-userdir": Bad(("down", "--cluster-name", "userdir"),
                            r"is not a bed zoneproof made \(no state.json\): nothing removed"),
        "down-forged-state": Bad(("down", "--cluster-name", "forged"),
                                 r"is not a bed state zoneproof wrote \(no 'spec'\): nothing"),
        "down-state-not-json": Bad(("down", "--cluster-name", "notjson"),
                                   r"is not a bed state zoneproof wrote \(JSONDecodeError"),
        "status-forged-state": Bad(("status", "--cluster-name", "forged"),
                                   r"is not a bed state zoneproof wrote"),
        "up-bad-name": Bad(("up", "--cluster-name", "Bad/Name"), name_rule, 2),
        "up-long-name": Bad(("up", "--cluster-name", "a" * 41), name_rule, 2),
        "up-kubeconfig-without-existing": Bad(
            ("up", "--kubeconfig", str(unreachable)),
            r"--kubeconfig names a cluster to adopt, and the local backend makes its own: add "
            r"--backend existing"),
        "qualify-kubeconfig-without-existing": Bad(
            ("qualify", "--kubeconfig", str(unreachable)), r"add --backend existing"),
        "down-kubeconfig-without-existing": Bad(
            ("down", "--kubeconfig", str(unreachable)), r"add --backend existing"),
        "unknown-backend": Bad(("up", "--backend", "vmware"), r"invalid choice: 'vmware'", 2),
        "unknown-command": Bad(("launch",), r"invalid choice: 'launch'", 2),
        "no-command": Bad((), r"the following arguments are required: COMMAND", 2),
        "qualify-only-unknown": Bad(("qualify", "--experiments", "zone-outag"),
                                    r"unknown experiment\(s\) zone-outag: choose from"),
        "qualify-skip-unknown": Bad(("qualify", "--skip-experiments", "nope"),
                                    r"unknown experiment\(s\) nope: choose from"),
        "qualify-scale-pods-without-scale": Bad(("qualify", "--scale-pods", "100"),
                                                r"goes with --scale NODES_PER_ZONE"),
        "qualify-scale-with-only": Bad(("qualify", "--scale", "3", "--experiments", "zone-outage"),
                                       r"--scale runs the scale profile alone: drop --experiments"),
        "qualify-scale-on-kind": Bad(("qualify", "--scale", "3", "--backend", "kind"),
                                     r"--scale needs a backend whose beds hold nodes at scale"),
        "bench-unknown": Bad(("bench", "nothing"), r"invalid choice: 'nothing'", 2),
        "mutants-unknown": Bad(("mutants", "gadget"), r"invalid choice: 'gadget'", 2),
        "kind-config-etcd-2": Bad(("kind-config", "--etcd-members", "2"),
                                  r"etcd_members must be 1, 3 or 5", lines=2),
        "certify-missing-profile": Bad(("certify", str(tmp / "nope.yaml"), "--key",
                                        str(tmp / "garbage.pem")),
                                       r"certification profile .*nope.yaml: No such file"),
        "certify-profile-dir": Bad(("certify", str(tmp), "--key", str(tmp / "garbage.pem")),
                                   r"certification profile .*: Is a directory"),
        "certify-no-key": Bad(("certify", str(tmp / "ok.profile.yaml")),
                              r"the following arguments are required: --key", 2),
        "certify-garbage-key": Bad(("certify", str(tmp / "ok.profile.yaml"), "--key",
                                    str(tmp / "garbage.pem")), r"is not a PEM private key"),
        "certify-binary-key": Bad(("certify", str(tmp / "ok.profile.yaml"), "--key",
                                   str(tmp / "binary.pem")), r"is not a PEM private key"),
        "certify-public-key": Bad(("certify", str(tmp / "ok.profile.yaml"), "--key",
                                   str(tmp / "public.pem")), r"is a public key"),
        "certify-missing-key": Bad(("certify", str(tmp / "ok.profile.yaml"), "--key",
                                    str(tmp / "nope.pem")), r"nope.pem"),
        "certify-output-missing-dir": Bad(
            ("certify", str(tmp / "ok.profile.yaml"), "--key", str(tmp / "garbage.pem"), "--bundle",
             str(tmp / "no" / "such" / "b.tar.gz")),
            r"--bundle .*b.tar.gz: directory .*/no/such does not exist: create it first"),
        "certify-output-is-dir": Bad(
            ("certify", str(tmp / "ok.profile.yaml"), "--key", str(tmp / "garbage.pem"), "--bundle",
             str(tmp / "sub")), r"--bundle .*sub is a directory: give the bundle's file path"),
        "certify-output-in-proc": Bad(
            ("certify", str(tmp / "ok.profile.yaml"), "--key", str(tmp / "garbage.pem"), "--bundle",
             "/proc/b.tar.gz"), r"directory /proc is not writable"),
        "certify-output-relative-missing": Bad(
            ("certify", "ok.profile.yaml", "--key", "garbage.pem", "--bundle", "nodir/b.tar.gz"),
            rf"directory {re.escape(str(tmp))}/nodir does not exist"),
        "verify-missing-bundle": Bad(("verify", str(tmp / "nope.tar.gz"), "--key",
                                      str(tmp / "public.pem")), r"is not a PEM public key"),
        "verify-no-key": Bad(("verify", str(tmp / "bundle.tar.gz")),
                             r"the following arguments are required: --key", 2),
        "slo-relative-to-cwd": Bad(("qualify", "--slo-file", "nan.slo.yaml"),
                                   rf"{re.escape(str(tmp))}/nan.slo.yaml.*max must be a finite",
                                   lines=2),
        "slo-relative-in-subdir": Bad(("qualify", "--slo-file", "../inf.slo.yaml"),
                                      r"max must be a finite", lines=2, cwd="sub"),
    }
    unusable = r"not a usable kubeconfig .*pass a kubeconfig kubectl accepts"
    unanswered = r"cannot reach the cluster of .* at https://127.0.0.1:9.*check that it is up"
    silent = rf"at https://127.0.0.1:{_SILENT['port']}: .*timed out"
    for command, kubeconfig, says in (
            ("status", "garbage", unusable), ("status", "binary", unusable),
            ("status", "empty", r"not a usable kubeconfig"),
            ("status", "nope", r"does not exist: pass the path"),
            ("down", "unreachable", unanswered), ("status", "unreachable", unanswered),
            ("up", "silent", silent), ("qualify", "silent", silent)):
        cases[f"{command}-existing-{kubeconfig}-kubeconfig"] = Bad(
            (command, "--backend", "existing", "--kubeconfig", str(tmp / f"{kubeconfig}.kubeconfig")
             if kubeconfig != "nope" else str(tmp / "nope")), says)
    for name, (_, says) in SLO_FILES.items():
        cases[f"qualify-slo-{name}"] = Bad(("qualify", "--slo-file", str(tmp / f"{name}.slo.yaml")),
                                           says, lines=2)
    for name, (_, says, lines) in PROFILES.items():
        cases[f"certify-profile-{name}"] = Bad(
            ("certify", str(tmp / f"{name}.profile.yaml"), "--key", str(tmp / "garbage.pem")),
            says, lines=lines)
    cases |= _numbers(("up",), "--nodes-per-zone", {"0": out_of_range, "-1": out_of_range,
                                                    "abc": whole, "1.5": whole, "nan": whole,
                                                    "99999999": out_of_range})
    cases |= _numbers(("up",), "--etcd-members", {"abc": r"invalid int value: 'abc'",
                                                  "nan": r"invalid int value: 'nan'"})
    cases |= _numbers(("up",), "--node-monitor-grace-period", {
        "nan": seconds, "inf": seconds, "-inf": seconds, "0": seconds, "-5": seconds,
        "1e10": seconds, "abc": r"'abc' is not a number of seconds", "": r"is not a number"})
    cases["up--node-monitor-grace-period=-inf"] = Bad(
        ("up", "--node-monitor-grace-period", "-inf"), r"expected one argument", 2)
    whole_seconds = r"give a whole number of seconds from 0 to 86400 \(or a duration"
    cases |= _numbers(("up",), "--toleration-seconds", {
        "-1": whole_seconds, "abc": r"'abc' is not a number of seconds or a duration",
        "1.5": whole_seconds, "nan": whole_seconds, "1e9": whole_seconds, "2d": r"not a number",
        "1.5s": whole_seconds, "25h": whole_seconds})
    cases |= _numbers(("qualify",), "--workers", {"0": out_of_range, "-1": out_of_range,
                                                  "abc": whole, "1000": out_of_range})
    cases |= _numbers(("qualify",), "--scale", {"0": out_of_range, "-1": out_of_range,
                                                "abc": whole, "nan": whole, "1e3": whole})
    cases |= _numbers(("qualify",), "--scale-pods", {"0": out_of_range, "-5": out_of_range,
                                                     "abc": whole})
    cases |= _numbers(("bench", "webhook"), "--runs", {"0": out_of_range, "-1": out_of_range,
                                                       "abc": whole})
    cases |= _numbers(("certify", "x.yaml", "--key", "k.pem"), "--workers",
                      {"0": out_of_range, "abc": whole})
    cases |= {f"up-port-base-{v}": Bad(("up", "--port-base", v), r"--port-base (must be|takes)")
              for v in ("abc", "70000", "-1", "1023")}
    return cases


CASES = sorted(_cases(Path("/nonexistent")))


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.fixture(scope="module")
def forked_cli() -> Iterator[subprocess.Popen[str]]:
    """The process the commands are forked from (it imported the CLI once)."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("forked_cli.py"))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline()) == {"ready": True}
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=60)


def test_at_least_150_bad_inputs_are_tried() -> None:
    assert len(CASES) >= 150, len(CASES)


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_cleanly(case: str, tmp_path: Path, silent_port: int,
                                      forked_cli: subprocess.Popen[str]) -> None:
    _SILENT["port"] = silent_port
    _prepare(tmp_path)
    bad = _cases(tmp_path)[case]
    token = uuid.uuid4().hex
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    env = {**os.environ, "ZONEPROOF_STATE": str(tmp_path / "state"), "TMPDIR": str(scratch),
           _TOKEN: token}
    env.pop(reaping.RUN_ENV, None)
    assert forked_cli.stdin is not None and forked_cli.stdout is not None
    started = time.monotonic()
    forked_cli.stdin.write(json.dumps({"args": bad.args, "env": env,
                                       "cwd": str(tmp_path / bad.cwd)}) + "\n")
    forked_cli.stdin.flush()
    result = json.loads(forked_cli.stdout.readline())
    took = time.monotonic() - started
    output: str = result["output"]
    assert "Traceback" not in output, output
    assert result["code"] == bad.exit_code, output
    assert re.search(bad.says, output, re.S), f"{bad.says!r} not in:\n{output}"
    lines = output.strip().splitlines()
    assert len(lines) <= bad.lines, f"{len(lines)} lines, at most {bad.lines} expected:\n{output}"
    assert lines[0].startswith("zoneproof") and "error" in lines[0], output
    assert len(output) <= _MAX_OUTPUT_CHARS, f"{len(output)} chars of output"
    assert took < 30, f"refused after {took:.1f} s: a bad input is refused at once"
    assert (tmp_path / "state" / "local" / "userdir" / "precious").read_text() == "mine"
    beds = sorted(p.name for p in (tmp_path / "state" / "local").iterdir()
                  if p.name != "ports.lock")
    assert beds == ["forged", "notjson", "userdir"], "a refused input started nothing"
    runs = tmp_path / "state" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == [], "no run left behind"
    assert list(scratch.iterdir()) == [], "no temp file left behind"
    # a run's keeper notices its run closed within a second
    waiting.wait_for(lambda: (not (left := reaping.with_token(_TOKEN, token)), left),
                     what="no process left behind", timeout_s=15, interval_s=0.1)
