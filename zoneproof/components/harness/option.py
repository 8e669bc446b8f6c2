"""One option of a component under test: its key, its flag, what it means, how it is checked.

The same option is a key of a component's dict form and of the certification profile
(``ca_bundle``), a command-line option (``--webhook-ca-bundle``) and a pytest option with
an ini twin (``--zp-webhook-ca-bundle``, ``zp_webhook_ca_bundle``); ``options`` generates
all three from these values. Sources declare the options of their keys, kinds the
settings the suite tells their components.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Option"]


@dataclass(frozen=True, slots=True)
class Option:
    """One option; ``help`` may use ``{kind}``, ``{title}`` and ``{allowed}`` (the kind's
    placeholders)."""

    key: str
    """Its key in a component's dict form and in the profile (``ca_bundle``)."""
    help: str
    metavar: str = "TEXT"
    flag: str = ""
    """Its flag after ``--<kind>-`` (default: ``key`` with dashes: ``ca-bundle``)."""
    default: str = ""
    """The value that means "not given" (``reference`` for a variant)."""
    path: bool = False
    """A file or directory: resolved against the current (or the profile's) directory."""
    required: bool = False
    """Its source needs it (a dict without it is refused)."""
    selects: bool = False
    """Giving it chooses its source (``--webhook-url`` chooses the url source)."""
    flags: bool = True
    """A command-line and pytest option (False: a dict and profile key only)."""
    conflict: str = ""
    """Why it cannot go with another source that was chosen (``{option}``, ``{chosen}``,
    ``{kind}``); default: it belongs to its own source's options."""
    elsewhere: str = ""
    """A hint when it is given for components that run elsewhere (host vs in-cluster)."""
    check: Callable[[str], str | None] | None = None
    """A problem with a value (None: fine), for settings the suite tells the component."""
    aliases: tuple[str, ...] = ()
    """Older spellings of ``flag``, still accepted (deprecated)."""

    @property
    def name(self) -> str:
        """The flag after ``--<kind>-``."""
        return self.flag or self.key.replace("_", "-")

    def given(self, value: object) -> bool:
        """True when ``value`` says something (neither empty nor the default)."""
        return value not in (None, "", self.default)

    def problem(self, value: str) -> str | None:
        """What is wrong with ``value`` (None: fine, or nothing to check)."""
        return self.check(value) if self.check is not None else None
