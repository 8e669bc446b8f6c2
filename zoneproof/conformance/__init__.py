"""Conformance machinery: loading data-driven cases and running them through a live API server.

Belongs here: case schemas and loaders, the live runners, the API server's selection
model, expectation checks. Not here: the suites themselves (``conformance/`` at the
repository root holds the pytest files and case data), component implementations.
"""

__all__: list[str] = []
