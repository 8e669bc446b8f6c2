"""Durations as people write them."""

from __future__ import annotations

import pytest

from zoneproof import errors
from zoneproof._util.durations import parse_seconds


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 30.0), ("2.5", 2.5), ("30s", 30.0), ("5m", 300.0), ("1m30s", 90.0), ("250ms", 0.25),
    ("1h", 3600.0), (" 8S ", 8.0), ("1h2m3s", 3723.0),
])
def test_accepted_forms(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "-1", "nan", "inf", "5x", "m", "5 m", "1.s", "s5"])
def test_refused_forms_name_the_accepted_ones(text: str) -> None:
    with pytest.raises(errors.ConfigError, match="30s, 5m, 1m30s, 250ms"):
        parse_seconds(text)
