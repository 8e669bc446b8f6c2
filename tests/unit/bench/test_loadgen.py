"""The webhook bench's reading of hey's per-request CSV, its command line and the ceiling ratios."""

from __future__ import annotations

from pathlib import Path

import pytest

from zoneproof.bench import loadgen
from zoneproof.bench.webhook import versus_ceiling

_HEADER = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"


def _csv(*rows: tuple[float, int, float]) -> str:
    """hey's CSV of (response-time s, status, offset s) rows."""
    return _HEADER + "\n".join(f"{t:.4f},0.0000,0.0000,0.0000,{t:.4f},0.0000,{code},{offset:.4f}"
                               for t, code, offset in rows)


def test_requests_started_in_the_warmup_or_after_the_window_do_not_count() -> None:
    rows = [(0.5, 200, 0.1), (0.4, 200, 0.99)]  # handshakes: slow, left out
    rows += [(0.001 * (i + 1), 200, 1.0 + i / 100) for i in range(100)]
    rows += [(9.0, 200, 3.0)]  # started after the window
    found = loadgen.parse_hey_csv(_csv(*rows), warmup_s=1.0, duration_s=3.0, client_cpu_s=0.05)
    assert found.requests == 100 and found.errors == 0 and found.seconds == 2.0
    assert found.throughput_rps == 50.0
    assert found.p50_ms == pytest.approx(51.0) and found.p99_ms == pytest.approx(99.0)
    named = found.named("saturated")
    assert named["saturated_throughput_rps"] == 50.0
    assert named["saturated_client_cpu_ms_per_request"] == pytest.approx(0.5)


def test_a_non_200_answer_is_an_error_not_a_latency() -> None:
    found = loadgen.parse_hey_csv(_csv((0.002, 200, 1.5), (0.001, 503, 1.6), (0.0001, 0, 1.7)),
                                  warmup_s=1.0, duration_s=2.0)
    assert (found.requests, found.errors) == (1, 2)
    assert found.p50_ms == found.p99_ms == pytest.approx(2.0)


@pytest.mark.parametrize("text", ["", "Summary:\n  Total: 4.3 secs\n", _csv((0.1, 200, 0.5))])
def test_output_that_is_not_hey_csv_or_has_no_answer_in_the_window_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="hey"):
        loadgen.parse_hey_csv(text, warmup_s=1.0, duration_s=2.0)


def test_hey_holds_the_connections_back_to_back_and_reports_every_request() -> None:
    argv = loadgen.hey_command(Path("/bin/hey"), "https://127.0.0.1:1/x", Path("b.json"), clients=100,
                               duration_s=7.0)
    assert argv[argv.index("-c") + 1] == "100" and argv[argv.index("-z") + 1] == "7.0s"
    assert argv[argv.index("-o") + 1] == "csv" and argv[-1] == "https://127.0.0.1:1/x"
    assert "-q" not in argv and "-disable-keepalive" not in argv


def test_the_webhook_is_compared_with_the_ceiling_of_the_same_run() -> None:
    found = {"saturated_throughput_rps": 2000.0, "saturated_p50_ms": 50.0, "saturated_p99_ms": 80.0,
             "ceiling_saturated_throughput_rps": 10000.0, "ceiling_saturated_p50_ms": 10.0,
             "ceiling_saturated_p99_ms": 20.0, "paced_p99_ms": 5.0, "ceiling_paced_p99_ms": 0.0}
    assert versus_ceiling(found) == {"saturated_throughput_vs_ceiling": 0.2,
                                     "saturated_p50_vs_ceiling": 5.0, "saturated_p99_vs_ceiling": 4.0}
