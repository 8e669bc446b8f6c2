"""The SLO table of a test, as HTML: what the allure report shows on each chaos test's page."""

from __future__ import annotations

import html
from collections.abc import Sequence

from zoneproof.slo.results import SloResult

__all__ = ["TABLE_ID", "to_html"]

TABLE_ID = "zoneproof-slo-table"
_STYLE = ("font-family:sans-serif;font-size:13px;border-collapse:collapse",
          "border:1px solid #bbb;padding:3px 8px;text-align:left")


def to_html(rows: Sequence[SloResult]) -> str:
    """A table: SLO, result, measured, bound, unit (a failing row in red)."""
    table, cell = _STYLE

    def row(r: SloResult) -> str:
        measured = "no data" if r.observed is None else f"{r.observed:.2f}"
        colour = "" if r.met else ";color:#b00020;font-weight:bold"
        values = (r.name, str(r.status), measured, f"≤ {r.threshold:g}", r.unit)
        return "<tr>" + "".join(f'<td style="{cell}{colour}">{html.escape(v)}</td>'
                                for v in values) + "</tr>"

    head = "".join(f'<th style="{cell}">{h}</th>'
                   for h in ("SLO", "result", "measured", "bound", "unit"))
    return (f'<table id="{TABLE_ID}" style="{table}"><caption style="text-align:left">'
            f"SLOs judged on this run</caption><tr>{head}</tr>"
            f"{''.join(row(r) for r in rows)}</table>")
