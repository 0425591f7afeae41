"""A batch's progress as an SVG line chart drawn on the server: how many of its
items had been triggered, and how many had failed, at each moment.

`progress_chart` returns the geometry (points in the drawing's own units, axis
labels); the template draws it with presentation attributes only, so the page
needs no script, no chart library and no inline style.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentform.service.store.database import parse_iso

WIDTH, HEIGHT, MARGIN = 640, 240, 40
LEGEND = 100  # the right margin, where the lines are named
SERIES = (("triggered", "#116329"), ("failed", "#a4001d"))


@dataclass(frozen=True)
class Line:
    name: str
    colour: str
    points: str  # "x,y x,y ...": the polyline's
    total: int


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    margin: int
    right: int  # where the plot ends
    lines: list[Line]
    start: str
    end: str
    top: int  # the largest count: the y axis' label


def _step_points(times: list[float], start: float, span: float, top: int) -> str:
    """A cumulative count as a staircase: flat until each item, then one up."""
    plot_w, plot_h = WIDTH - MARGIN - LEGEND, HEIGHT - 2 * MARGIN

    def xy(t: float, n: int) -> str:
        x = MARGIN + plot_w * ((t - start) / span if span else 1.0)
        y = HEIGHT - MARGIN - plot_h * (n / top if top else 0)
        return f"{x:.1f},{y:.1f}"

    points = [xy(start, 0)]
    for count, moment in enumerate(times, start=1):
        points += [xy(moment, count - 1), xy(moment, count)]
    points.append(xy(start + span, len(times)))
    return " ".join(points)


def progress_chart(timeline: Sequence[tuple[str, str]]) -> Chart | None:
    """The chart of (time, outcome) pairs in time order; None when there are none."""
    if not timeline:
        return None
    moments = {
        name: [parse_iso(t).timestamp() for t, o in timeline if o == name] for name, _ in SERIES
    }
    start = parse_iso(timeline[0][0]).timestamp()
    span = parse_iso(timeline[-1][0]).timestamp() - start
    top = max(len(v) for v in moments.values())
    lines = [
        Line(name, colour, _step_points(moments[name], start, span, top), len(moments[name]))
        for name, colour in SERIES
    ]
    right = WIDTH - LEGEND
    return Chart(WIDTH, HEIGHT, MARGIN, right, lines, timeline[0][0], timeline[-1][0], top)
