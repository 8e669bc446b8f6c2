"""The vocabulary of the specifications every component under test is judged by.

Belongs here: what ../shared/spec and the seed documents define, shared by the reference
implementations, the harness and the conformance machinery: label and annotation keys,
JSON payload types, the inputs a component reads, the spec's webhook registration. Not here:
any behaviour of a component (``components.reference``), any check (``conformance``).
"""

__all__: list[str] = []
