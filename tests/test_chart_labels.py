"""Labels on report.html's cost chart: shared for one position, never overlapping."""

from itertools import combinations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ragloop.experiments.chart_labels import group_points, place_labels

# latencies and scores like an offline demo run: several configurations close together
XS = [10.6, 11.2, 15.9, 41.4, 42.4, 46.2, 48.8, 83.6]
YS = [0.24, 0.24, 0.24, 0.24, 0.24, 0.24, 0.24, 0.24]
NAMES = [f"c{n}" for n in range(1, 9)]


def boxes(notes):
    renderer = notes[0].figure.canvas.get_renderer()
    return [n.get_window_extent(renderer) for n in notes]


def overlapping(extents):
    return [
        (a, b)
        for a, b in combinations(extents, 2)
        if a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1
    ]


def chart():
    fig = Figure(figsize=(5, 4))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.scatter(XS, YS)
    ax.margins(x=0.15, y=0.12)
    fig.tight_layout()
    return ax


def test_crowded_labels_do_not_overlap_and_stay_inside_the_axes():
    ax = chart()
    notes = place_labels(ax, group_points(XS, YS, NAMES))
    extents = boxes(notes)
    assert len(notes) == 8 and overlapping(extents) == []
    frame = ax.get_window_extent(ax.figure.canvas.get_renderer())
    assert all(frame.x0 <= e.x0 and e.x1 <= frame.x1 for e in extents)


def test_one_fixed_offset_would_collide_on_the_same_points():
    ax = chart()
    notes = [
        ax.annotate(n, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
        for x, y, n in zip(XS, YS, NAMES, strict=True)
    ]
    assert overlapping(boxes(notes))  # what the report did before


def test_points_at_one_position_share_one_label_and_nan_is_left_out():
    points = group_points([0.4, 0.4, 0.8, float("nan")], [0.2, 0.2, 0.2, 0.1], ["a", "b", "c", "d"])
    assert points == [(0.4, 0.2, "a, b"), (0.8, 0.2, "c")]


def test_labels_do_not_cover_any_point():
    from ragloop.experiments.chart_labels import _marker_box

    ax = chart()
    labels = boxes(place_labels(ax, group_points(XS, YS, NAMES)))
    markers = [_marker_box(ax, x, y) for x, y in zip(XS, YS, strict=True)]
    assert all(overlapping([label, marker]) == [] for label in labels for marker in markers)
