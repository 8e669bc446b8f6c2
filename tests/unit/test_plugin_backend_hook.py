"""``pytest_zoneproof_make_backend``: another plugin substitutes the backend (pytester)."""

from __future__ import annotations

import pytest

_VENDOR = '''
import pytest
from zoneproof.cluster.interface import Traits

ASKED = []


class VendorBackend:
    name = "vendor"
    traits = Traits(summary="a vendor's clusters", makes_clusters=False,
                    default_etcd_members=5)

    def prepare(self, progress):
        pass

    def create(self, spec, *, progress, keep_on_failure=False):
        raise AssertionError("no cluster in this test")

    def get(self, name):
        return None

    def delete(self, name, *, progress):
        return False

    def names(self):
        return []


def pytest_zoneproof_make_backend(config, name):
    ASKED.append(name)
    return VendorBackend() if name in {NAMES} else None


@pytest.fixture
def asked():
    return ASKED
'''


def _vendor(pytester: pytest.Pytester, names: set[str]) -> None:
    pytester.makeconftest(_VENDOR.replace("{NAMES}", repr(names)))


def test_a_plugin_backend_serves_a_name_no_distribution_installs(
        pytester: pytest.Pytester) -> None:
    _vendor(pytester, {"vendor"})
    pytester.makepyfile('''
        def test_backend(zp_backend, zp_settings):
            assert zp_backend.name == "vendor"
            assert zp_settings.backend == "vendor"
            assert zp_settings.spec.etcd_members == 5, "the spec follows the backend's traits"
    ''')
    result = pytester.runpytest_subprocess("--zp-backend", "vendor")
    result.stdout.fnmatch_lines(["zoneproof: backend=vendor cluster=zoneproof*"])
    assert result.ret == 0, result.stdout.str()


def test_a_plugin_wins_over_the_built_in_which_runs_last(pytester: pytest.Pytester) -> None:
    _vendor(pytester, {"local"})
    pytester.makepyfile('''
        def test_backend(zp_backend):
            assert type(zp_backend).__name__ == "VendorBackend"
    ''')
    assert pytester.runpytest_subprocess().ret == 0


def test_private_beds_of_a_backend_that_makes_none_come_from_the_default(
        pytester: pytest.Pytester) -> None:
    _vendor(pytester, {"vendor"})
    pytester.makepyfile('''
        from zoneproof import cluster

        def test_private(private_bed, asked):
            assert asked == ["vendor", cluster.DEFAULT_BACKEND]
    ''')
    assert pytester.runpytest_subprocess("--zp-backend", "vendor").ret == 0


def test_without_the_plugin_the_name_is_unknown(pytester: pytest.Pytester) -> None:
    _vendor(pytester, set())
    result = pytester.runpytest_subprocess("--zp-backend", "vendor")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown backend 'vendor': choose one of local, existing, kind*"])
