"""The ``zoneproof`` command: argument parsing and printing over the library. No logic here."""

__all__: list[str] = []
