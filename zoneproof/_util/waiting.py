"""The one polling helper: wait until a probe says done, on tenacity, with a deadline."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import tenacity

from zoneproof import errors

__all__ = ["WaitTimeout", "wait_for", "wait_for_value"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class WaitTimeout(errors.ZoneproofError):
    """A condition did not hold before its deadline; the message has the last observed state."""


class _NotYet(Exception):
    def __init__(self, observed: object) -> None:
        super().__init__(observed)
        self.observed = observed


def wait_for(
    probe: Callable[[], tuple[bool, T]],
    *,
    what: str,
    timeout_s: float,
    interval_s: float = 0.2,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``probe`` until it returns ``(True, value)``; return ``value``.

    ``probe`` returns ``(done, observed)``; ``observed`` of the last try goes into the
    timeout message. Exceptions listed in ``ignore`` count as "not yet" (their text is
    the observed state). Raises WaitTimeout after ``timeout_s``.
    """

    @tenacity.retry(
        stop=tenacity.stop_after_delay(timeout_s),
        wait=tenacity.wait_fixed(interval_s),
        retry=tenacity.retry_if_exception_type(_NotYet),
        reraise=True,
    )
    def attempt() -> T:
        try:
            done, observed = probe()
        except ignore as exc:
            raise _NotYet(f"{type(exc).__name__}: {exc}") from exc
        if not done:
            raise _NotYet(observed)
        return observed

    try:
        return attempt()
    except _NotYet as exc:
        raise WaitTimeout(
            f"timed out after {timeout_s:g}s waiting for {what}; last observed: {exc.observed}"
        ) from None


def wait_for_value(get: Callable[[], T | None], *, what: str, timeout_s: float,
                   interval_s: float = 0.2) -> T:
    """Call ``get`` until it returns something other than None (a figure once its event
    came); return it. Raises WaitTimeout after ``timeout_s``."""
    def probe() -> tuple[bool, T | None]:
        value = get()
        return value is not None, value

    found = wait_for(probe, what=what, timeout_s=timeout_s, interval_s=interval_s)
    assert found is not None
    return found
