"""report.html's per-question view: each question with every configuration's answer, contexts
and scores side by side (no script: one ``<details>`` per question, closed by default)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

from ragloop.experiments.tables import verdict

if TYPE_CHECKING:
    from ragloop.experiments.result import ExperimentResult

#: characters of a context shown before "…" (every context is whole in rows.jsonl)
CONTEXT_CHARS = 1200


def _score(value: Any) -> str:
    if value is None or isinstance(value, float) and math.isnan(value):
        return "–"
    return f"{float(value):.3f}"


def _contexts(row: dict[str, Any]) -> str:
    texts = row.get("retrieved_contexts") or []
    if not texts:
        return "<i>no context kept</i>"
    sources = row.get("sources") or []
    items = []
    for n, text in enumerate(texts):
        source = sources[n] if n < len(sources) else ""
        cut = text if len(text) <= CONTEXT_CHARS else text[:CONTEXT_CHARS].rstrip() + " …"
        items.append(f"<li><b>{html.escape(source)}</b> {html.escape(cut)}</li>")
    return f"<details><summary>{len(texts)} context(s)</summary><ol>{''.join(items)}</ol></details>"


def _row(row: dict[str, Any], metrics: list[str], rec: dict[str, Any] | None) -> str:
    esc = html.escape
    scores = row.get("metrics") or {}
    reasons = row.get("reasons") or {}
    cells = [
        f"<td><b>{esc(row['config'])}</b> {esc(verdict(rec) if rec else '')}"
        f'<br><span class="small">{esc(row.get("label", ""))}</span></td>',
        f'<td class="answer">{esc(row.get("response") or row.get("error") or "")}</td>',
        f"<td>{_contexts(row)}</td>",
    ]
    for m in metrics:
        tip = reasons.get(m) or ""
        cells.append(f'<td class="num" title="{esc(str(tip))}">{_score(scores.get(m))}</td>')
    path = f"{row.get('iterations', 0)} · {row.get('stop_reason', '')}"
    cells.append(f'<td class="small">{esc(path)}</td>')
    cls = ' class="chosen"' if rec and rec.get("chosen") else ""
    return f"<tr{cls}>{''.join(cells)}</tr>"


def questions_view(result: ExperimentResult) -> str:
    """The "Questions" section: one closed ``<details>`` per dataset row, every config inside."""
    esc = html.escape
    metrics = list(result.spec.metrics)
    by_index: dict[int, list[dict[str, Any]]] = {}
    for row in result.rows:
        by_index.setdefault(int(row.get("index", 0)), []).append(row)
    head = "".join(f"<th>{esc(h)}</th>" for h in ("configuration", "answer", "contexts"))
    head += "".join(f'<th class="num">{esc(m).replace("_", "_<wbr>")}</th>' for m in metrics)
    head += "<th>iterations · stop</th>"
    cols = '<col style="width:10rem"><col><col>'
    cols += '<col style="width:6rem">' * len(metrics) + '<col style="width:6.5rem">'
    table = f'<table class="qv"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
    parts = [
        '<section id="questions"><h2>Questions: every configuration\'s answer, contexts and '
        "scores</h2>",
        '<p class="small">Open a question to compare the configurations on it; the chosen '
        "configuration's row is highlighted, a score's reason shows on hover.</p>",
    ]
    for index in sorted(by_index):
        rows = by_index[index]
        first = rows[0]
        objective = result.spec.objective.metric
        chosen = next((r for r in rows if r["config"] == result.chosen), None)
        mark = (
            f" · chosen {objective} {_score((chosen.get('metrics') or {}).get(objective))}"
            if chosen
            else ""
        )
        ident = f"{first.get('id') or index}"
        body = "".join(_row(r, metrics, result.record(r["config"])) for r in rows)
        reference = first.get("reference")
        ref = f"<p><b>reference</b>: {esc(reference)}</p>" if reference else ""
        parts.append(
            f'<details class="question" id="q-{index}"><summary><b>{esc(ident)}</b> '
            f"{esc(first.get('user_input') or '')}"
            f'<span class="small">{esc(mark)}</span></summary>{ref}'
            f'<div class="scroll">{table}<tbody>{body}</tbody></table></div></details>'
        )
    parts.append("</section>")
    return "\n".join(parts)
