"""The certification profile's JSON Schema, shipped in the package and the docs, is its model's
current one (``make schemas`` writes both), and it offers every key of the option table."""

from __future__ import annotations

import json
from pathlib import Path

from zoneproof.components.harness import kinds, options
from zoneproof.suites import profile

DOCS_COPY = (Path(__file__).resolve().parents[3] / "docs" / "reference" / "schemas"
             / "profile.schema.json")


def test_the_shipped_schema_is_the_models() -> None:
    assert profile.SCHEMA_FILE.read_text() == profile.json_schema(), "run `make schemas`"
    assert DOCS_COPY.read_text() == profile.json_schema(), "run `make schemas`"


def test_the_schema_names_every_key_a_profile_may_write() -> None:
    schema = json.loads(profile.SCHEMA_FILE.read_text())
    assert schema["required"] == ["apiVersion", "kind", "vendor", "product", "version",
                                  "contact", "components"]
    assert schema["additionalProperties"] is False
    components = schema["$defs"]["ProfileComponents"]["properties"]
    assert set(components) == {str(k) for k in kinds.every()}
    for kind in kinds.every():
        entry = schema["$defs"][f"{str(kind).title()}Component"]
        assert entry["additionalProperties"] is False
        assert {r.option.key for r in options.rows(kind)} | {"source"} <= set(entry["properties"])
    assert set(schema["$defs"]["BackendSection"]["properties"]) == set(
        profile.BackendSection.model_fields)
