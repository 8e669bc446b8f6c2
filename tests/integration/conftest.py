"""Integration tests of the test bed itself: real processes, no mocks."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything here runs against real clusters."""
    for item in items:
        if "tests/integration" in str(item.path):
            item.add_marker(pytest.mark.cluster)
