"""The Kubernetes wrapper module, the version stamp, and zoneproof's own Go sources."""

import shutil
import subprocess
from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.binaries import build

UPSTREAM = """module k8s.io/kubernetes

go 1.26.0

require (
\tk8s.io/api v0.0.0
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
\tk8s.io/api => ./staging/src/k8s.io/api
\tgithub.com/other/mod => github.com/fork/mod v1.0.0
)
"""


def test_staging_modules_are_the_local_replaces_only() -> None:
    assert build.staging_modules(UPSTREAM) == ["k8s.io/api", "k8s.io/apimachinery"]


def test_wrapper_gomod_replaces_staging_with_published_twins_and_lists_tools() -> None:
    gomod = build.render_kubernetes_gomod(UPSTREAM, "v1.37.2", "1.26.0")
    assert "require k8s.io/kubernetes v1.37.2" in gomod
    assert "\tk8s.io/api => k8s.io/api v0.37.2" in gomod
    assert "\tk8s.io/apimachinery => k8s.io/apimachinery v0.37.2" in gomod
    assert "github.com/other" not in gomod
    for command in build.KUBE_COMMANDS:
        assert f"\tk8s.io/kubernetes/cmd/{command}" in gomod


def test_non_v1_version_is_rejected() -> None:
    with pytest.raises(errors.ConfigError):
        build.render_kubernetes_gomod(UPSTREAM, "v2.0.0", "1.26.0")


def test_ldflags_stamp_version_and_strip() -> None:
    flags = build.kube_ldflags("v1.37.2")
    assert "-X k8s.io/component-base/version.gitVersion=v1.37.2" in flags
    assert "gitMinor=37" in flags and flags.startswith("-s -w")


def test_zoneproofs_own_go_sources_are_gofmt_clean() -> None:
    gofmt = shutil.which("gofmt")
    if gofmt is None:
        pytest.skip("needs gofmt (comes with Go)")
    gobuild = Path(build.__file__).parent / "gobuild"
    out = subprocess.run([gofmt, "-l", str(gobuild)], capture_output=True, text=True, check=True)
    assert out.stdout == "", f"run gofmt -w on: {out.stdout}"
