"""Point labels on a scatter chart that do not collide: same-place points share one label,
and each label takes the first free spot around its point (checked in pixels)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg

#: offsets in points tried in order: right, above, below, left, then further out
OFFSETS = [
    (6, 4), (6, -12), (6, 14), (-6, 4), (6, -24), (6, 26), (-6, -12), (-6, 14),
    (6, -36), (6, 38), (-6, -24), (-6, 26), (6, -48), (6, 50),
]  # fmt: skip


def group_points(
    xs: Sequence[float], ys: Sequence[float], names: Sequence[str], tolerance: float = 1e-9
) -> list[tuple[float, float, str]]:
    """One (x, y, "a, b") per distinct position; NaN points are left out."""
    groups: list[tuple[float, float, list[str]]] = []
    for x, y, name in zip(xs, ys, names, strict=True):
        if math.isnan(x) or math.isnan(y):
            continue
        for gx, gy, members in groups:
            if abs(gx - x) <= tolerance and abs(gy - y) <= tolerance:
                members.append(name)
                break
        else:
            groups.append((x, y, [name]))
    return [(x, y, ", ".join(members)) for x, y, members in groups]


def _overlaps(a: Any, b: Any) -> bool:
    return bool(a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)


def _marker_box(ax: Any, x: float, y: float, radius: float = 4.0) -> Any:
    """The pixel box of a scatter marker at (x, y)."""
    from matplotlib.transforms import Bbox

    px, py = ax.transData.transform((x, y))
    return Bbox([[px - radius, py - radius], [px + radius, py + radius]])


def place_labels(ax: Any, points: list[tuple[float, float, str]], fontsize: int = 8) -> list[Any]:
    """Annotate each (x, y, text) at the first offset whose box overlaps no point, no earlier
    label and stays inside the axes; the nearest offset when none is free."""
    fig = ax.figure
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    placed: list[Any] = []
    boxes: list[Any] = [_marker_box(ax, x, y) for x, y, _ in points]  # labels avoid points too
    for x, y, text in sorted(points, key=lambda p: (p[0], p[1])):
        note = None
        for dx, dy in OFFSETS:
            ha = "left" if dx >= 0 else "right"
            if note is not None:
                note.remove()
            note = ax.annotate(
                text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=fontsize, ha=ha
            )
            box = note.get_window_extent(renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
            if inside and box.y1 <= frame.y1 and not any(_overlaps(box, b) for b in boxes):
                break
        else:
            if note is not None:
                note.remove()
            note = ax.annotate(
                text, (x, y), textcoords="offset points", xytext=OFFSETS[0], fontsize=fontsize
            )
            box = note.get_window_extent(renderer)
        placed.append(note)
        boxes.append(box)
    return placed
