"""Label selectors as the API server reads them: the model's own, pure (the reference's is a
component under test and is not consulted).

``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` and ``!k``,
comma-separated, every requirement must hold; ``!=`` and ``notin`` also hold when the key
is absent. Also what the generators need: labels that satisfy a selector, and labels that
miss it in one requirement, each way it can be missed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

from zoneproof import errors

__all__ = ["SHAPES", "Requirement", "Selector", "drawn", "parse"]

_SET = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*$")
_EQUALITY = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s*(?P<op>==|!=|=)\s*(?P<value>[^\s,()]*)\s*$")
_EXISTS = re.compile(r"^\s*(?P<not>!?)\s*(?P<key>[^\s!=,()]+)\s*$")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement: ``op`` is ``=``, ``!=``, ``in``, ``notin``, ``exists`` or ``!``."""

    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy it."""
        present = self.key in labels
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        return present if self.op == "exists" else not present


def _split(text: str) -> list[str]:
    """Top-level comma-separated parts (commas inside ``( )`` belong to a set)."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _requirement(part: str) -> Requirement:
    if m := _SET.match(part):
        values = tuple(sorted(v.strip() for v in m["values"].split(",") if v.strip()))
        return Requirement(m["key"], m["op"], values)
    if m := _EQUALITY.match(part):
        return Requirement(m["key"], "!=" if m["op"] == "!=" else "=", (m["value"],))
    if m := _EXISTS.match(part):
        return Requirement(m["key"], "!" if m["not"] else "exists")
    raise errors.ConfigError(f"cannot read label selector requirement {part.strip()!r}")


@dataclass(frozen=True, slots=True)
class Selector:
    """Every requirement must hold (an empty selector matches everything)."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement."""
        return all(r.matches(labels) for r in self.requirements)

    def satisfying(self) -> dict[str, str]:
        """The smallest labels that satisfy it."""
        labels: dict[str, str] = {}
        for r in self.requirements:
            if r.op in ("=", "in"):
                labels[r.key] = r.values[0]
            elif r.op == "exists":
                labels[r.key] = "yes"
        return labels

    def matching(self) -> list[dict[str, str]]:
        """Labels that satisfy it, one set per way (the smallest first): each other value of a
        set, a negative requirement's key present with an allowed value, an existence with an
        empty value, and a label the selector does not name."""
        base = self.satisfying()
        found = [base]
        for r in self.requirements:
            if r.op == "in":
                found += [{**base, r.key: value} for value in r.values[1:]]
            elif r.op in ("!=", "notin") and r.key not in base:
                found.append({**base, r.key: "other"})
            elif r.op == "exists":
                found.append({**base, r.key: ""})
        found.append({**base, "zoneproof.dev/other": "x"})
        return [labels for labels in found if self.matches(labels)]

    def misses(self) -> list[dict[str, str]]:
        """Labels that satisfy every requirement but one, one way per way to miss it:
        the key absent, another value, a value differing in case or by a suffix, the key
        in another case, a forbidden value or key present."""
        found = []
        base = self.satisfying()
        for r in self.requirements:
            rest = {k: v for k, v in base.items() if k != r.key}
            if r.op in ("=", "in"):
                value = r.values[0]
                found += [rest, {**rest, r.key: value + "-x"}, {**rest, r.key: value.upper()}
                          if value.upper() != value else {**rest, r.key: value + "0"},
                          {**rest, r.key.upper(): value} if r.key.upper() != r.key else rest]
            elif r.op in ("!=", "notin"):
                found += [{**rest, r.key: value} for value in r.values]
            elif r.op == "exists":
                found.append(rest)
            else:
                found.append({**rest, r.key: "yes"})
        return [labels for labels in found if not self.matches(labels)]


def parse(text: str) -> Selector:
    """The selector written as ``text``; ConfigError names a requirement it cannot read."""
    if not text.strip():
        return Selector(())
    return Selector(tuple(_requirement(p) for p in _split(text)))


SHAPES = ("app=noobaa,tier in (core,db),zone!=z9,owner,!legacy",
          "app in (noobaa,noobaa-db),tier==core,zone notin (z8,z9),!canary,owner",
          "owner,!legacy,app in (noobaa,noobaa-db),zone notin (z8,z9),tier=core",
          "tier notin (web,legacy),app==noobaa,role in (worker,db),owner,!canary",
          "app in (noobaa,noobaa-db),zone!=z9,!legacy,owner,tier=core")
"""Selectors the controller is told, one drawn per batch when the run names none: each holds
every kind of requirement the grammar has (a set, an equality, an inequality, an existence and
a non-existence; spellings and order vary by shape), so that every batch meets each one's
semantics: a controller misreading any kind is exposed by every batch, not by one in five."""


def drawn(seed: int) -> str:
    """The selector of ``SHAPES`` a batch of seed ``seed`` tells the controller."""
    return random.Random(seed).choice(SHAPES)
