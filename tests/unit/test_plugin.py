"""The pytest plugin's options, validated before any cluster is touched (pytester)."""

import pytest


def test_unknown_backend_is_a_usage_error_listing_valid_ones(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-backend", "nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--zp-backend 'nope' is unknown: choose one of local, existing*"])


def test_existing_backend_needs_a_kubeconfig(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-backend", "existing")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs --zp-kubeconfig*"])


def test_invalid_zone_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--zp-zones", "Bad Zone!")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not a valid label value*"])


def test_ini_twin_and_header(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nzp_cluster_name = from-ini\n")
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess()
    result.stdout.fnmatch_lines(["zoneproof: backend=local cluster=from-ini*",
                                 "zoneproof pins: kubernetes v1.*"])
    assert result.ret == 0


def test_unit_tests_start_no_cluster(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--zp-cluster-name", "never-made")
    assert result.ret == 0
    assert "never-made" not in result.stdout.str().replace("cluster=never-made", "")
