"""The scale profile makes a bed of its own: no shared chaos bed to restore after it."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def restore_bed() -> None:
    """Overrides chaos/conftest.py's: the profile's bed is deleted by the profile itself."""
