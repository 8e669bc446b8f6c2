"""The files zoneproof reads and writes as pydantic models: their JSON Schemas and their errors.

A file's model is the one place its shape is defined; ``json_schema`` is the text shipped in
the package beside the model's module (``make schemas`` writes it; a unit test per file holds
the two equal), and ``problems`` turns a ``ValidationError`` into one line per problem, each
naming its place as the file writes it (``backend.allow_destructive``, ``tests[3].outcome``)
and the fix: an unknown key names the valid ones and the closest.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from typing import Any

import pydantic

from zoneproof._util.userfiles import bounded

__all__ = ["json_schema", "problems"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(model: type[pydantic.BaseModel]) -> str:
    """``model``'s JSON Schema (keys as the file writes them), as the shipped file holds it."""
    schema = {"$schema": _DRAFT, **model.model_json_schema(by_alias=True)}
    return json.dumps(schema, indent=2) + "\n"


def _keys(model: type[pydantic.BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _models_in(annotation: Any) -> list[type[pydantic.BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict, tuple,
                                         typing.Annotated):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


def _model_at(model: type[pydantic.BaseModel], loc: tuple[int | str, ...]
              ) -> type[pydantic.BaseModel] | None:
    """The model of the mapping at ``loc`` (list indexes and dict keys stepped over)."""
    for part in loc:
        if isinstance(part, int):
            continue
        fields = {f.alias or name: f for name, f in model.model_fields.items()}
        if part not in fields:
            continue  # a dict's key
        found = _models_in(fields[part].annotation)
        if not found:
            return None
        model = found[0]
    return model


def _place(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "the top level"


def _shown(value: object) -> str:
    return bounded(repr(value), chars=80)


def _problem(model: type[pydantic.BaseModel], item: Any) -> str:
    loc: tuple[int | str, ...] = tuple(item["loc"])
    place, kind, given = _place(loc), item["type"], item.get("input")
    key = str(loc[-1]) if loc else ""
    if kind == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        valid = _keys(parent) if parent is not None else []
        close = difflib.get_close_matches(key, valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return (f"{_place(loc[:-1])}: unknown key {key!r}{hint}; valid keys: "
                f"{', '.join(valid)}")
    if kind == "missing":
        parent = _model_at(model, loc[:-1])
        required = [k for k, f in zip(_keys(parent), parent.model_fields.values(), strict=True)
                    if f.is_required()] if parent is not None else []
        return f"{place}: missing (required keys: {', '.join(required)})"
    if kind == "literal_error":
        expected = str(item.get("ctx", {}).get("expected", ""))
        several = "," in expected or " or " in expected
        expected = f"one of {expected}" if several else expected.strip("'")
        return f"{place}: {_shown(given)} is not supported: write {expected}"
    if kind in ("string_type", "string_too_short"):
        return (f"{place}: give a non-empty string, got {_shown(given)} (quote it: "
                f"{key}: \"...\")")
    if kind == "bool_type":
        return f"{place}: true or false, got {_shown(given)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{place}: must be a mapping, got {type(given).__name__}"
    if kind == "list_type":
        return f"{place}: must be a list, got {type(given).__name__}"
    message = str(item["msg"]).removeprefix("Value error, ")
    return f"{place}: {message}, got {_shown(given)}"


def problems(error: pydantic.ValidationError, model: type[pydantic.BaseModel]) -> list[str]:
    """One line per problem of a file validated as ``model``: its place and the fix."""
    return [_problem(model, item) for item in error.errors(include_url=False)]
