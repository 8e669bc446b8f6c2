"""``Progress``: how long work reports what it is doing (one line per call, for people)."""

from collections.abc import Callable

__all__ = ["Progress"]

Progress = Callable[[str], None]
