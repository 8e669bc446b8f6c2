"""Conformance machinery of the high-availability-config webhook (cases, live runner, selection)."""

__all__: list[str] = []
