"""The webhook bench's closed-loop load generator: hey (compiled, pinned) when it can be had.

``hey`` (github.com/rakyll/hey, ``PINS.hey``, built from its Go module into the binary cache)
holds ``clients`` keep-alive TLS connections and sends back to back (closed loop). (Its rate
limit ``-q`` is not used: every connection's ticker fires at the same instant, so the load
comes in bursts of ``clients`` requests.) Its per-request CSV (``-o csv``) is read here:
requests that started in the first ``warmup_s`` (connecting, TLS handshakes) are left out,
so the figures are of warm connections.

Without hey (no ``go``, no module proxy), the bench's Python client threads stand in; they
share the CPU with the server under test and cap its figures, and the bench says so.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from zoneproof import errors
from zoneproof.bench import samples as figures

__all__ = ["LoadFigures", "hey_command", "parse_hey_csv", "run_hey"]

_HEY_TIMEOUT_S = 20
"""hey's per-request timeout, seconds (its default; a slower answer counts as an error)."""


@dataclass(frozen=True, slots=True)
class LoadFigures:
    """What one load phase measured, on warm connections only."""

    requests: int
    errors: int
    seconds: float
    p50_ms: float
    p99_ms: float
    client_cpu_s: float = 0.0

    @property
    def throughput_rps(self) -> float:
        """Answered requests per second of the measured window."""
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    def named(self, prefix: str) -> dict[str, float]:
        """The figures as bench keys ``<prefix>_throughput_rps``, ``_p50_ms``, ``_p99_ms``, …"""
        return {f"{prefix}_throughput_rps": self.throughput_rps, f"{prefix}_p50_ms": self.p50_ms,
                f"{prefix}_p99_ms": self.p99_ms, f"{prefix}_errors": float(self.errors),
                f"{prefix}_client_cpu_ms_per_request":
                    self.client_cpu_s * 1000 / max(1, self.requests)}


def parse_hey_csv(text: str, *, warmup_s: float, duration_s: float,
                  client_cpu_s: float = 0.0) -> LoadFigures:
    """The figures of hey's ``-o csv`` output: rows whose request started in
    [``warmup_s``, ``duration_s``) count; a status other than 200 is an error.
    ValueError if the text is not hey's CSV or no request was answered in the window."""
    rows = csv.DictReader(io.StringIO(text))
    if rows.fieldnames is None or not {"response-time", "status-code", "offset"} <= set(rows.fieldnames):
        raise ValueError(f"not hey's CSV output (header {rows.fieldnames})")
    latencies: list[float] = []
    errors = 0
    for row in rows:
        if not warmup_s <= float(row["offset"]) < duration_s:
            continue
        if row["status-code"] != "200":
            errors += 1
        else:
            latencies.append(float(row["response-time"]))
    if not latencies:
        raise ValueError(f"hey answered no request between {warmup_s} s and {duration_s} s")
    return LoadFigures(requests=len(latencies), errors=errors, seconds=duration_s - warmup_s,
                       p50_ms=figures.percentile(latencies, 0.5) * 1000,
                       p99_ms=figures.percentile(latencies, 0.99) * 1000, client_cpu_s=client_cpu_s)


def hey_command(hey: Path, url: str, body: Path, *, clients: int, duration_s: float) -> list[str]:
    """The hey command line: ``clients`` keep-alive connections POSTing ``body`` back to back
    for ``duration_s``, every request's figures as CSV."""
    return [str(hey), "-z", f"{duration_s}s", "-c", str(clients), "-t", str(_HEY_TIMEOUT_S),
            "-m", "POST", "-T", "application/json", "-D", str(body), "-o", "csv", url]


def run_hey(hey: Path, url: str, body: Path, *, clients: int, duration_s: float,
            warmup_s: float) -> LoadFigures:
    """One hey run; its figures after ``warmup_s``, with hey's own CPU time (user + system)."""
    argv = hey_command(hey, url, body, clients=clients, duration_s=duration_s)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # wait4: hey's own CPU time
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            raise errors.ZoneproofError(f"hey exited {process.returncode}: "
                                        f"{err.read().decode(errors='replace').strip()[-300:]}")
        out.seek(0)
        text = out.read().decode()
    return parse_hey_csv(text, warmup_s=warmup_s, duration_s=duration_s,
                         client_cpu_s=usage.ru_utime + usage.ru_stime)
