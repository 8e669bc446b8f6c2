"""Go's ``strconv`` rules the handler depends on: ``Atoi``, ``ParseBool``, ``Quote``, int32 wrap."""

from __future__ import annotations

import unicodedata

__all__ = ["AtoiError", "atoi", "parse_bool", "quote", "to_int32"]

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})
_MAX_UINT64 = (1 << 64) - 1
_UINT64_CUTOFF = _MAX_UINT64 // 10 + 1
_INT64_CUTOFF = 1 << 63
_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t",
            "\v": r"\v", "\\": "\\\\", '"': '\\"'}


class AtoiError(ValueError):
    """``strconv.Atoi`` failed; ``str(err)`` is Go's exact error text."""


def parse_bool(value: str | None) -> bool | None:
    """Go ``strconv.ParseBool``: True/False, or None where Go returns an error."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _is_print(char: str) -> bool:
    """Go ``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


def quote(value: str) -> str:
    """Go ``strconv.Quote``: double-quoted with Go escapes (lone surrogates become U+FFFD)."""
    out = ['"']
    for raw in value:
        char = "\ufffd" if 0xD800 <= ord(raw) <= 0xDFFF else raw
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _is_print(char):
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def atoi(value: str) -> int:
    """Go ``strconv.Atoi`` on 64-bit: optional sign, ASCII digits, int64 range; else AtoiError."""
    def fail(why: str) -> AtoiError:
        return AtoiError(f"strconv.Atoi: parsing {quote(value)}: {why}")

    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits:
        raise fail("invalid syntax")
    number = 0
    for char in digits:  # ParseUint: a syntax error or an overflow ends the scan at once
        if not "0" <= char <= "9":
            raise fail("invalid syntax")
        if number >= _UINT64_CUTOFF:
            raise fail("value out of range")
        number = number * 10 + (ord(char) - 48)
        if number > _MAX_UINT64:
            raise fail("value out of range")
    negative = value.startswith("-")
    if number > _INT64_CUTOFF or (number == _INT64_CUTOFF and not negative):
        raise fail("value out of range")
    return -number if negative else number


def to_int32(value: int) -> int:
    """Go ``int32(v)``: two's-complement truncation of an int64."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
