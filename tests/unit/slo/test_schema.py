"""The SLO file's JSON Schema, shipped in the package and the docs, is the model's current one
(``make schemas`` writes both), and it accepts the defaults file and refuses what the model
refuses."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from zoneproof.slo import spec

DOCS_COPY = Path(__file__).resolve().parents[3] / "docs" / "reference" / "schemas" / "slo-file.schema.json"


def test_the_shipped_schema_is_the_models() -> None:
    assert spec.SCHEMA_FILE.read_text() == spec.json_schema(), "run `make schemas`"
    assert DOCS_COPY.read_text() == spec.json_schema(), "run `make schemas`"


def test_the_schema_names_the_files_fields() -> None:
    schema = json.loads(spec.SCHEMA_FILE.read_text())
    assert schema["required"] == ["apiVersion", "kind", "slos"]
    assert schema["additionalProperties"] is False
    entry = schema["$defs"]["SloEntry"]
    assert set(entry["properties"]) == set(spec.SloEntry.model_fields)
    defaults = yaml.safe_load((spec.SCHEMA_FILE.parent / "defaults.yaml").read_text())
    assert set(defaults) <= set(schema["properties"])
