"""A vendor's command template the suite starts (the kind's placeholders, no variant)."""

from __future__ import annotations

import os
import shlex
import shutil
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from zoneproof import errors
from zoneproof.components.harness.kinds import Kind, placeholders
from zoneproof.components.harness.option import Option
from zoneproof.components.harness.source import Launcher, Source

__all__ = ["Command", "fields"]

T = TypeVar("T")
C = TypeVar("C")
_VARIANT = "variant"


def fields(template: str) -> list[str]:
    """The placeholder names a template uses (``{a.b}`` counts as ``a``); '' for ``{}``."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise errors.ConfigError(f"command template {template!r} is malformed: {exc} (write a "
                                 "literal brace as {{ or }})") from None
    return [name.split(".")[0].split("[")[0] for _, name, _, _ in parsed if name is not None]


def _program_problem(template: str) -> str | None:
    """Why the program the template starts cannot run (a placeholder such as ``{python}``
    is the suite's to fill in)."""
    try:
        program = shlex.split(template)[0] if template.strip() else ""
    except ValueError as exc:
        return f"command {template!r} cannot be split like a shell line: {exc}"
    if not program:
        return "the command is empty: give a command template"
    if "{" in program:
        return None
    if "/" in program and not Path(program).is_absolute():
        return (f"the program {program!r} is a relative path; the suite runs from the "
                f"zoneproof checkout: write {Path(program).resolve()}")
    found = shutil.which(program) if "/" not in program else program
    if found is None or not Path(found).is_file():
        return f"{program!r} is not an executable file nor on PATH: install it or give its absolute path"
    if not os.access(found, os.X_OK):
        return f"{program!r} is not executable: chmod +x {found}"
    return None


@dataclass(frozen=True, slots=True)
class Command(Source):
    """A command template the suite starts (the kind's placeholders, no variant)."""

    template: str
    name: ClassVar[str] = "command"
    options: ClassVar[tuple[Option, ...]] = (
        Option("command", "{title} under test, started by this command template; placeholders "
               "{allowed}", metavar="TEMPLATE", required=True, selects=True),)

    def to_dict(self) -> dict[str, str]:
        return {"command": self.template}

    @classmethod
    def from_dict(cls, data: Mapping[str, str], kind: Kind) -> Command:
        return cls(data["command"])

    def problems(self, kind: Kind) -> list[str]:
        allowed = kind.spec.placeholders
        valid = placeholders(kind)
        try:
            used = fields(self.template)
        except errors.ConfigError as exc:
            return [f"{kind} {exc}"]
        found = []
        if unknown := sorted(set(used) - set(allowed)):
            hint = (" ({variant} belongs to registered implementations: put the variant in the "
                    "command itself)" if _VARIANT in unknown else "")
            found.append(f"{kind} command has unknown placeholder(s) "
                         f"{placeholders(kind, tuple(unknown))}: use {valid}{hint}")
        if missing := tuple(p for p in kind.spec.required if p not in used):
            found.append(f"{kind} command must use {placeholders(kind, missing)} "
                         f"(the suite chooses them); placeholders: {valid}")
        if (program := _program_problem(self.template)) is not None:
            found.append(f"{kind} command: {program}")
        return found

    def label(self, kind: Kind) -> str:
        return f"{kind} command {self.template!r}"

    def start(self, component: C, launcher: Launcher[C, T]) -> T:
        return launcher.process(component)

    def command(self, kind: Kind) -> str:
        return self.template
