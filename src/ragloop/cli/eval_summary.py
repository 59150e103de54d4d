"""What ``ragloop eval`` prints: the metrics table, notes, errors, bad rows and totals."""

from __future__ import annotations

import math
from typing import Any

from rich.table import Table

from ragloop.cli import console, err_console
from ragloop.safety.console import plain, shown

#: bad rows listed by name; the rest are counted (all are in ``--out``)
SHOWN_BAD_ROWS = 5


def _fmt(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.4f}"


def print_result(result: Any) -> None:
    """The summary table, notes, fatal errors, bad rows and totals."""
    table = Table(title=f"ragloop eval ({result.run_id})")
    for column in ("metric", "mean", "measured/total", "coverage", "top NaN reasons"):
        table.add_column(column, overflow="fold")
    for name, s in result.metrics.items():
        reasons = "; ".join(f"{r['kind']} x{r['count']}" for r in s.nan_reasons[:3]) or "-"
        table.add_row(
            name, _fmt(s.mean), f"{s.measured}/{s.total}", f"{s.coverage:.0%}", plain(reasons)
        )
    console.print(table)
    for note in result.notes:
        console.print(f"[dim]note:[/] {shown(note)}", highlight=False)
    for error in result.errors:
        err_console.print(f"[bold red]error:[/] {shown(error)}", highlight=False)
    if result.bad_rows:
        console.print(f"bad rows: {len(result.bad_rows)}", highlight=False)
        for bad in result.bad_rows[:SHOWN_BAD_ROWS]:
            console.print(plain(f"  row {bad.index}: {bad.reason}"), highlight=False)
        if len(result.bad_rows) > SHOWN_BAD_ROWS:
            console.print(f"  ... and {len(result.bad_rows) - SHOWN_BAD_ROWS} more (see --out)")
    else:
        console.print("bad rows: 0")
    t = result.totals
    console.print(
        f"LLM calls {t['llm_calls']} (cache hits {t['cache_hits']}, resumed jobs {t['resumed']}, "
        f"retries {t['retries']}), tokens {t['input_tokens']} in / {t['output_tokens']} out, "
        f"{t['wall_time_s']:.2f} s",
        highlight=False,
    )
