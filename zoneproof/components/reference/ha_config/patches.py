"""RFC 6902 JSON Patch: ``diff`` builds one, ``apply`` applies one (RFC 6901 pointers)."""

from __future__ import annotations

from zoneproof import errors
from zoneproof.components.reference.ha_config.decoding import copy_json
from zoneproof.specs.ha_config.payloads import JsonValue, PatchOp

__all__ = ["PatchError", "apply", "diff"]


class PatchError(errors.ZoneproofError):
    """A patch cannot be applied (bad pointer, failed test, unknown op)."""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def diff(old: JsonValue, new: JsonValue, path: str = "") -> list[PatchOp]:
    """Operations turning ``old`` into ``new``: recursive on objects and equal-length lists."""
    if old == new and type(old) is type(new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[PatchOp] = [{"op": "remove", "path": f"{path}/{_escape(k)}"} for k in old if k not in new]
        for key, value in new.items():
            child = f"{path}/{_escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": child, "value": copy_json(value)})
            else:
                ops.extend(diff(old[key], value, child))
        return ops
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [op for i, (a, b) in enumerate(zip(old, new, strict=True)) for op in diff(a, b, f"{path}/{i}")]
    return [{"op": "replace", "path": path, "value": copy_json(new)}]


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}: must be empty or start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(container: list[JsonValue], token: str, pointer: str, *, append: bool) -> int:
    if append and token == "-":
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r} in {pointer!r}")
    index = int(token)
    if index > len(container) - (0 if append else 1):
        raise PatchError(f"array index {index} out of range in {pointer!r}")
    return index


def _get(doc: JsonValue, pointer: str) -> JsonValue:
    node = doc
    for token in _tokens(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, pointer, append=False)]
        else:
            raise PatchError(f"path {pointer!r} does not exist")
    return node


def _parent(doc: JsonValue, pointer: str) -> tuple[JsonValue, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchError("the whole document cannot be the target here")
    parent_pointer = "".join(f"/{_escape(t)}" for t in tokens[:-1])
    return _get(doc, parent_pointer), tokens[-1]


def _add(doc: JsonValue, pointer: str, value: JsonValue) -> JsonValue:
    if pointer == "":
        return value
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, pointer, append=True), value)
    else:
        raise PatchError(f"parent of {pointer!r} is not a container")
    return doc


def _remove(doc: JsonValue, pointer: str) -> JsonValue:
    parent, token = _parent(doc, pointer)
    if isinstance(parent, dict) and token in parent:
        del parent[token]
    elif isinstance(parent, list):
        del parent[_index(parent, token, pointer, append=False)]
    else:
        raise PatchError(f"path {pointer!r} does not exist")
    return doc


def apply(doc: JsonValue, ops: list[PatchOp] | list[dict[str, JsonValue]]) -> JsonValue:
    """A patched deep copy of ``doc``; PatchError if any operation fails."""
    result = copy_json(doc)
    for raw in ops:
        op, path = raw.get("op"), raw.get("path")
        if not isinstance(path, str):
            raise PatchError(f"operation {raw!r} has no string path")
        if op == "add":
            result = _add(result, path, copy_json(raw.get("value")))
        elif op == "remove":
            result = _remove(result, path)
        elif op == "replace":
            _get(result, path)
            result = _add(_remove(result, path), path, copy_json(raw.get("value"))) if path else \
                copy_json(raw.get("value"))
        elif op == "test":
            if _get(result, path) != raw.get("value"):
                raise PatchError(f"test failed at {path!r}")
        elif op in ("move", "copy"):
            source = raw.get("from")
            if not isinstance(source, str):
                raise PatchError(f"operation {raw!r} has no string from")
            value = copy_json(_get(result, source))
            if op == "move":
                result = _remove(result, source)
            result = _add(result, path, value)
        else:
            raise PatchError(f"unknown patch operation {op!r}")
    return result
