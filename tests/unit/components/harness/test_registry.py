"""The component registry: entry points of group ``zoneproof.components``."""

from __future__ import annotations

import importlib.metadata

import pytest

from zoneproof import errors
from zoneproof.components.harness import registry
from zoneproof.components.harness.registry import Implementation, Kind
from zoneproof.specs.ha_config import registration


def test_the_references_are_registered_with_their_variants() -> None:
    webhook = registry.implementation(Kind.WEBHOOK)
    controller = registry.implementation(Kind.CONTROLLER, "reference")
    assert (webhook.name, webhook.correct, controller.correct) == ("reference",) * 3
    assert "wrong-zone-key" in webhook.broken and "graceful-delete" in controller.broken
    assert "{variant}" in webhook.command and "{variant}" in controller.command
    assert [i.name for i in registry.implementations(Kind.WEBHOOK)] == ["reference"]


def test_a_webhook_variant_brings_its_selection() -> None:
    webhook = registry.implementation(Kind.WEBHOOK)
    assert webhook.selection_of("ignores-namespace-label") == registration.Selection(
        consider_label=False)
    assert webhook.selection_of("reference") == registration.SPEC
    assert registry.implementation(Kind.CONTROLLER).selection_of("no-reconcile") == registration.SPEC
    with pytest.raises(errors.ConfigError, match="unknown webhook variant 'nope' of 'reference'"):
        webhook.selection_of("nope")


def test_an_unknown_implementation_lists_the_registered_ones() -> None:
    with pytest.raises(errors.ConfigError) as caught:
        registry.implementation(Kind.CONTROLLER, "acme")
    assert ("no controller implementation 'acme' is registered (entry-point group "
            "'zoneproof.components'); registered: controller.reference, webhook.reference") \
        in str(caught.value)


def test_an_entry_point_that_is_no_implementation_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = importlib.metadata.EntryPoint("webhook.acme", "zoneproof.errors:ConfigError",
                                          registry.GROUP)
    monkeypatch.setattr(registry, "_entry_points", lambda: {"webhook.acme": wrong})
    registry.implementation.cache_clear()
    try:
        with pytest.raises(errors.ConfigError, match="entry point webhook.acme = zoneproof.errors"):
            registry.implementation(Kind.WEBHOOK, "acme")
    finally:
        registry.implementation.cache_clear()


def test_an_implementation_names_its_variants_in_errors() -> None:
    made = Implementation(Kind.CONTROLLER, "acme", "run {identity}", ("ok", "broken"))
    assert (made.correct, made.broken) == ("ok", ("broken",))
    with pytest.raises(errors.ConfigError, match="choose one of ok, broken"):
        made.check_variant("reference")
