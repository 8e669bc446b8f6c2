"""The SLO file: defaults load, overrides replace by name, every problem is reported."""

from pathlib import Path

import pytest

from zoneproof import errors
from zoneproof.slo import SCHEMA_VERSION, load_slos


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "slos.yaml"
    path.write_text(f"apiVersion: {SCHEMA_VERSION}\nkind: SloSet\n{body}")
    return path


def test_defaults_load_and_name_every_metric() -> None:
    slos = load_slos()
    assert {s.name for s in slos.slos} >= {"lease-failover", "lost-acknowledged-writes",
                                             "ha-controller-force-delete"}
    assert slos.get("lost-acknowledged-writes").max == 0


def test_override_replaces_fields_by_name_and_adds(tmp_path: Path) -> None:
    path = _write(tmp_path, "slos:\n  - {name: lease-failover, max: 20}\n"
                            "  - {name: mine, metric: lease_failover, max: 1, unit: count}\n")
    slos = load_slos(path)
    failover = slos.get("lease-failover")
    assert failover.max == 20 and failover.metric == "lease_failover"
    assert slos.get("mine").unit == "count"


def test_every_problem_is_listed(tmp_path: Path) -> None:
    path = _write(tmp_path, "slos:\n  - {name: a, metric: m, max: -1, unit: hours, colour: red}\n"
                            "  - {name: b}\n")
    with pytest.raises(errors.ConfigError) as caught:
        load_slos(path)
    text = str(caught.value)
    for fragment in ("unknown field 'colour'", "max must be a finite number >= 0",
                     "unit must be one of", "SLO 'b': missing 'metric'"):
        assert fragment in text


def test_wrong_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("apiVersion: v0\nkind: SloSet\nslos: []\n")
    with pytest.raises(errors.ConfigError, match="apiVersion must be"):
        load_slos(path)


def test_unknown_slo_name() -> None:
    with pytest.raises(errors.ConfigError, match="no SLO named 'nope'"):
        load_slos().get("nope")


@pytest.mark.parametrize("bound", [".nan", ".inf", "-.inf", "-1", "'5'", "true"])
def test_max_must_be_a_finite_number(tmp_path: Path, bound: str) -> None:
    path = _write(tmp_path, f"slos:\n  - {{name: lease-failover, max: {bound}}}\n")
    with pytest.raises(errors.ConfigError, match="max must be a finite number >= 0"):
        load_slos(path)


def test_a_misspelled_metric_names_the_known_ones(tmp_path: Path) -> None:
    path = _write(tmp_path, "slos:\n  - {name: lease-failover, metric: lease_failovr}\n")
    with pytest.raises(errors.ConfigError, match=r"unknown metric 'lease_failovr': zoneproof "
                                                 r"measures .*lease_failover"):
        load_slos(path)


def test_known_metrics_are_the_ones_zoneproof_measures() -> None:
    """Every figure, the linearizability checker's (judged from a history, not a figure) and
    the scale profile's (measured on a bed of its own)."""
    from zoneproof.slo import figures, spec

    assert spec.known_metrics() == (frozenset(figures.FIGURES) | {"non_linearizable_keys"}
                                    | figures.SCALE_METRICS)


def test_an_slo_named_twice_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "slos:\n  - {name: lease-failover, max: 3}\n"
                            "  - {name: lease-failover, max: 300}\n")
    with pytest.raises(errors.ConfigError, match="'lease-failover' given more than once"):
        load_slos(path)


def test_the_file_schema_is_a_json_schema() -> None:
    from zoneproof.slo.spec import SloFile

    schema = SloFile.model_json_schema(by_alias=True)
    assert set(schema["properties"]) == {"apiVersion", "kind", "slos"}
    assert schema["additionalProperties"] is False
