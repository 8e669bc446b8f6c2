"""Every bad input is refused by the real CLI: a message naming the fix, no traceback, and
nothing started or left behind (issue 14, item 10; the abusive `down --name`s, item 1)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from zoneproof.slo import SCHEMA_VERSION


@dataclass(frozen=True)
class Bad:
    args: tuple[str, ...]
    exit_code: int
    says: str
    """A regular expression the message must match (what is wrong and the fix)."""


def _prepare(tmp: Path) -> None:
    """The files the cases name: kubeconfigs, SLO files, a user's directory in the state."""
    (tmp / "garbage.kubeconfig").write_text("this: [is not\n a kubeconfig")
    (tmp / "unreachable.kubeconfig").write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n"
        "    server: https://127.0.0.1:9\n    insecure-skip-tls-verify: true\ncontexts:\n"
        "- name: c\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {token: t}\n")
    (tmp / "state" / "local" / "userdir").mkdir(parents=True)
    (tmp / "state" / "local" / "userdir" / "precious").write_text("mine")
    for name, body in (("nan", "{name: lease-failover, max: .nan}"),
                       ("inf", "{name: lease-failover, max: .inf}"),
                       ("typo", "{name: lease-failover, metric: lease_failovr}")):
        (tmp / f"{name}.yaml").write_text(
            f"apiVersion: {SCHEMA_VERSION}\nkind: SloSet\nslos:\n  - {body}\n")


def _cases(tmp: Path) -> dict[str, Bad]:
    garbage, unreachable = tmp / "garbage.kubeconfig", tmp / "unreachable.kubeconfig"
    nan, inf, typo = (str(tmp / f"{n}.yaml") for n in ("nan", "inf", "typo"))
    name_rule = r"1-40 lowercase letters, digits or '-'"
    return {
        "etcd-members-0": Bad(("up", "--etcd-members", "0"), 1,
                              r"etcd_members must be 1, 3 or 5 .*got 0"),
        "empty-zone": Bad(("up", "--zones", "zone-a,,zone-b"), 2,
                          r"has an empty entry: write the zones comma-separated"),
        "trailing-comma-zone": Bad(("up", "--zones", "zone-a,"), 2, r"empty entry"),
        "nodes-per-zone-0": Bad(("up", "--nodes-per-zone", "0"), 1, r"nodes_per_zone must be"),
        "port-base-80": Bad(("up", "--port-base", "80"), 1, r"--port-base must be 1024"),
        "slo-nan": Bad(("qualify", "--slo", nan), 1, r"max must be a finite number >= 0"),
        "slo-inf": Bad(("qualify", "--slo", inf), 1, r"max must be a finite number >= 0"),
        "slo-misspelled-metric": Bad(("qualify", "--slo", typo), 1,
                                     r"unknown metric 'lease_failovr': zoneproof measures"),
        "existing-garbage-kubeconfig": Bad(
            ("status", "--backend", "existing", "--kubeconfig", str(garbage)), 1,
            r"not a usable kubeconfig .*pass a kubeconfig kubectl accepts"),
        "existing-unreachable-kubeconfig": Bad(
            ("status", "--backend", "existing", "--kubeconfig", str(unreachable)), 1,
            r"cannot reach the cluster of .* at https://127.0.0.1:9.*check that it is up"),
        "existing-missing-kubeconfig": Bad(
            ("status", "--backend", "existing", "--kubeconfig", str(tmp / "nope")), 1,
            r"does not exist: pass the path"),
        "reports-in-proc": Bad(("qualify", "--reports", "/proc/x"), 1,
                               r"cannot create the reports directory /proc/x/.*pass --reports "
                               r"a writable directory"),
        "workers-0": Bad(("qualify", "--workers", "0"), 1, r"--workers must be >= 1"),
        "existing-only-experiment": Bad(
            ("qualify", "--backend", "existing", "--kubeconfig", str(unreachable), "--only",
             "zone-outage"), 1, r"chaos experiments run on beds zoneproof makes.*--backend local"),
        "down-absolute-path": Bad(("down", "--name", str(tmp / "state")), 2, name_rule),
        "down-dotdot-path": Bad(("down", "--name", "../../dir2"), 2, name_rule),
        "down-dotdot": Bad(("down", "--name", ".."), 2, name_rule),
        "down-empty": Bad(("down", "--name", ""), 2, name_rule),
        "down-userdir": Bad(("down", "--name", "userdir"), 1,
                            r"is not a bed zoneproof made \(no state.json\): nothing removed"),
        "up-bad-name": Bad(("up", "--name", "Bad/Name"), 2, name_rule),
    }


CASES = sorted(_cases(Path("/nonexistent")))


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_cleanly(case: str, tmp_path: Path) -> None:
    _prepare(tmp_path)
    bad = _cases(tmp_path)[case]
    env = {**os.environ, "ZONEPROOF_STATE": str(tmp_path / "state")}
    result = subprocess.run([sys.executable, "-m", "zoneproof.cli.main", *bad.args],
                            capture_output=True, text=True, env=env, timeout=300, check=False)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == bad.exit_code, output
    assert re.search(bad.says, output, re.S), f"{bad.says!r} not in:\n{output}"
    assert (tmp_path / "state" / "local" / "userdir" / "precious").read_text() == "mine"
    beds = [p.name for p in (tmp_path / "state" / "local").iterdir() if p.name != "ports.lock"]
    assert beds == ["userdir"], "a refused input started nothing"
    assert not (tmp_path / "state" / "runs").exists() or \
        list((tmp_path / "state" / "runs").iterdir()) == [], "no run left behind"
