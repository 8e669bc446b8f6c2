"""Go strconv rules: Atoi syntax/range errors with Go's quoting, ParseBool, int32 truncation."""

import pytest

from zoneproof.components.reference.ha_config import gostrconv


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("3", 3), ("+3", 3), ("-1", -1), ("007", 7),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
])
def test_atoi_accepts_go_integers(text: str, value: int) -> None:
    assert gostrconv.atoi(text) == value


@pytest.mark.parametrize(("text", "message"), [
    ("three", 'strconv.Atoi: parsing "three": invalid syntax'),
    (" 3", 'strconv.Atoi: parsing " 3": invalid syntax'),
    ("3 ", 'strconv.Atoi: parsing "3 ": invalid syntax'),
    ("2.5", 'strconv.Atoi: parsing "2.5": invalid syntax'),
    ("1_000", 'strconv.Atoi: parsing "1_000": invalid syntax'),
    ("+", 'strconv.Atoi: parsing "+": invalid syntax'),
    ("", 'strconv.Atoi: parsing "": invalid syntax'),
    ("٣", 'strconv.Atoi: parsing "٣": invalid syntax'),  # Arabic-Indic 3: not ASCII
    ('a"b\\c\n', 'strconv.Atoi: parsing "a\\"b\\\\c\\n": invalid syntax'),
    ("\x00\x7f", 'strconv.Atoi: parsing "\\x00\\x7f": invalid syntax'),
    ("\u200b", 'strconv.Atoi: parsing "\\u200b": invalid syntax'),
    ("9223372036854775808", 'strconv.Atoi: parsing "9223372036854775808": value out of range'),
    ("-9223372036854775809", 'strconv.Atoi: parsing "-9223372036854775809": value out of range'),
    ("99999999999999999999x", 'strconv.Atoi: parsing "99999999999999999999x": value out of range'),
])
def test_atoi_errors_carry_go_text(text: str, message: str) -> None:
    with pytest.raises(gostrconv.AtoiError) as caught:
        gostrconv.atoi(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(("text", "value"), [
    *((t, True) for t in ("1", "t", "T", "TRUE", "true", "True")),
    *((f, False) for f in ("0", "f", "F", "FALSE", "false", "False")),
    *((x, None) for x in ("yes", "tRUE", " true", "", None)),
])
def test_parse_bool_is_go_parse_bool(text: str | None, value: bool | None) -> None:
    assert gostrconv.parse_bool(text) is value


@pytest.mark.parametrize(("value", "wrapped"), [
    (5, 5), (-1, -1), (2**31 - 1, 2**31 - 1), (2**31, -(2**31)), (2**32 + 2, 2), (-(2**31) - 1, 2**31 - 1),
])
def test_to_int32_truncates_like_go(value: int, wrapped: int) -> None:
    assert gostrconv.to_int32(value) == wrapped


def test_quote_replaces_lone_surrogates_and_escapes_astral_controls() -> None:
    assert gostrconv.quote("\ud800") == '"\ufffd"'
    assert gostrconv.quote("\U000e0001") == '"\\U000e0001"'
    assert gostrconv.quote("é😀") == '"é😀"'
