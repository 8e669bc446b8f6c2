"""Kubernetes label selectors: parse the string form, match labels, print the query.

Pure: no I/O. Supports ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k`` and ``!k``, comma-separated (all must hold), with the API server's semantics
(``!=`` and ``notin`` match when the key is absent).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass

from zoneproof import errors

__all__ = ["Op", "Requirement", "Selector", "parse_selector"]

_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?"
_KEY = rf"(?:{_PREFIX}/)?{_NAME}"
_VALUE_RE = re.compile(rf"(?:{_NAME})?")
_EXISTS_RE = re.compile(rf"(?P<not>!?)\s*(?P<key>{_KEY})")
_EQUALITY_RE = re.compile(rf"(?P<key>{_KEY})\s*(?P<op>==|!=|=)\s*(?P<value>\S*)")
_SET_RE = re.compile(rf"(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)")


class Op(enum.Enum):
    """A requirement's operator; the value is its query-string spelling."""

    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


@dataclass(frozen=True, slots=True)
class Requirement:
    """One term of a selector: ``key`` ``op`` ``values``."""

    key: str
    op: Op
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this term."""
        present = self.key in labels
        value = labels.get(self.key)
        match self.op:
            case Op.EXISTS:
                return present
            case Op.DOES_NOT_EXIST:
                return not present
            case Op.EQUALS | Op.IN:
                return present and value in self.values
            case Op.NOT_EQUALS | Op.NOT_IN:
                return value not in self.values

    def to_query(self) -> str:
        """This term as the API server's ``labelSelector`` syntax."""
        if self.op is Op.EXISTS:
            return self.key
        if self.op is Op.DOES_NOT_EXIST:
            return f"!{self.key}"
        if self.op in (Op.EQUALS, Op.NOT_EQUALS):
            (value,) = self.values
            return f"{self.key}{self.op.value}{value}"
        return f"{self.key} {self.op.value} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class Selector:
    """All requirements must hold; no requirements matches everything."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether ``labels`` (None: no labels) satisfy every requirement."""
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    @property
    def is_empty(self) -> bool:
        """True when the selector matches every object."""
        return not self.requirements

    def to_query(self) -> str:
        """The selector as a ``labelSelector`` query parameter."""
        return ",".join(r.to_query() for r in self.requirements)


def parse_selector(text: str) -> Selector:
    """Parse ``text``; ConfigError names every malformed term."""
    terms = [t.strip() for t in _split_terms(text)]
    if terms == [""]:
        return Selector(())
    parsed: list[Requirement] = []
    problems: list[str] = []
    for term in terms:
        try:
            parsed.append(_parse_term(term))
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise errors.ConfigError(
            f"invalid label selector {text!r}: {'; '.join(problems)} "
            "(expected e.g. 'app=noobaa', 'tier in (a,b)', '!canary')"
        )
    return Selector(tuple(parsed))


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return terms


def _parse_term(term: str) -> Requirement:
    if not term:
        raise ValueError("empty term")
    if m := _SET_RE.fullmatch(term):
        values = frozenset(v.strip() for v in m["values"].split(","))
        if not m["values"].strip():
            raise ValueError(f"{term!r}: the value set of {m['op']!r} must not be empty")
        _check_values(term, values)
        return Requirement(m["key"], Op(m["op"]), values)
    if m := _EQUALITY_RE.fullmatch(term):
        _check_values(term, frozenset({m["value"]}))
        op = Op.NOT_EQUALS if m["op"] == "!=" else Op.EQUALS
        return Requirement(m["key"], op, frozenset({m["value"]}))
    if m := _EXISTS_RE.fullmatch(term):
        return Requirement(m["key"], Op.DOES_NOT_EXIST if m["not"] else Op.EXISTS)
    raise ValueError(f"{term!r} is not a label selector term")


def _check_values(term: str, values: frozenset[str]) -> None:
    bad = sorted(v for v in values if not _VALUE_RE.fullmatch(v))
    if bad:
        raise ValueError(f"{term!r}: invalid label value(s) {', '.join(map(repr, bad))}")
