"""Suites: whole runs of the product — qualification (the release gate), certification (a
profile in, a signed bundle out; verify) and mutation runs.

Belongs here: orchestrating pytest over the conformance and chaos suites, reports and
verdicts of a whole run. Not here: argument parsing (cli), single checks (conformance/,
chaos/).
"""

__all__: list[str] = []
