"""The one error hierarchy of zoneproof: every failure the library raises is a ZoneproofError."""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BinaryError",
    "ConfigError",
    "FaultError",
    "ProvisionError",
    "VerificationError",
    "ZoneproofError",
]


class ZoneproofError(Exception):
    """Base of every error zoneproof raises on purpose; the message names the fix."""


class ConfigError(ZoneproofError):
    """A user-supplied value (option, spec, file) is invalid."""


class BinaryError(ZoneproofError):
    """An upstream binary cannot be found, built or trusted."""


class BackendError(ZoneproofError):
    """A cluster backend cannot do what was asked (unknown, unsupported, not running)."""


class ProvisionError(BackendError):
    """Bringing a cluster up failed; whatever had started was torn down."""


class FaultError(BackendError):
    """A fault could not be injected or reverted, or is not allowed on this cluster."""


class VerificationError(ZoneproofError):
    """A signed artefact (the certification bundle) does not verify: altered, or not signed
    by the given key."""
