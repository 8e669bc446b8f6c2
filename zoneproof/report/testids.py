"""What a test id says: its suite, and a chaos test's experiment (the one place these
conventions are read)."""

from __future__ import annotations

__all__ = ["experiment_of", "suite_of"]


def experiment_of(test: str) -> str:
    """The experiment a chaos test id names (its parameter: ``...[zone-outage]``)."""
    return test.rsplit("[", 1)[-1].rstrip("]")


def suite_of(test: str) -> str:
    """The suite a test id belongs to: its first two path parts (``conformance/ha_config``),
    or its first for a file at the top of a suite (``chaos``)."""
    parts = test.split("::", 1)[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
