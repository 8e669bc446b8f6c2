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
    reference = dataclasses.asdict(variants.Behaviour())
    changed = {k for k, v in dataclasses.asdict(variant.behaviour).items() if reference[k] != v}
    assert len(changed) == 1, changed
    assert variant.breaks and variant.name == name


def test_unknown_variant_lists_valid_names() -> None:
    with pytest.raises(errors.ConfigError, match="unknown webhook variant 'nope'.*reference.*no-companion"):
        variants.get_variant("nope")
