"""The variant registry: stable names, one flag each, a clear error for unknown names."""

import dataclasses

import pytest

from zoneproof import errors
from zoneproof.components.reference.ha_config import variants


def test_at_least_ten_broken_variants_plus_reference() -> None:
    assert variants.VARIANTS["reference"] is variants.REFERENCE
    assert variants.REFERENCE.behaviour == variants.Behaviour()
    assert len(variants.VARIANTS) - 1 >= 10


@pytest.mark.parametrize("name", [n for n in variants.VARIANTS if n != "reference"])
def test_each_broken_variant_flips_exactly_one_flag(name: str) -> None:
    variant = variants.get_variant(name)
    reference = variants.Behaviour().flags()
    changed = {k for k, v in variant.behaviour.flags().items() if reference[k] != v}
    assert len(changed) == 1, changed
    assert variant.breaks and variant.name == name


def test_flags_name_every_field_and_the_registration_knobs() -> None:
    flags = variants.Behaviour().flags()
    assert "kinds" not in flags and "registration" not in flags
    assert flags["registration.failure_policy"] == "Fail"
    assert {f.name for f in dataclasses.fields(variants.Behaviour)} - {"kinds", "registration"} \
        <= set(flags)


def test_kinds_narrow_a_flag_to_those_kinds() -> None:
    broken = variants.get_variant("statefulset-scales-down-hpa").behaviour
    assert broken.for_kind("StatefulSet") is broken
    assert broken.for_kind("Deployment") == variants.Behaviour()
    everywhere = variants.get_variant("scales-down-hpa-workloads").behaviour
    assert everywhere.for_kind("Deployment") is everywhere


def test_unknown_variant_lists_valid_names() -> None:
    with pytest.raises(errors.ConfigError, match="unknown webhook variant 'nope'.*reference.*no-companion"):
        variants.get_variant("nope")
