"""The batch chart's geometry (service/console/chart.py): cumulative staircases from
the first outcome to the last, scaled to the drawing."""

from __future__ import annotations

from agentform.service.console.chart import HEIGHT, MARGIN, progress_chart


def points(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in text.split())]


def test_each_line_climbs_one_step_per_item_at_its_time() -> None:
    chart = progress_chart(
        [
            ("2026-01-01T00:00:00Z", "triggered"),
            ("2026-01-01T00:01:00Z", "triggered"),
            ("2026-01-01T00:02:00Z", "failed"),
        ]
    )
    assert chart is not None
    triggered, failed = chart.lines
    assert (triggered.name, triggered.total, failed.name, failed.total) == (
        "triggered",
        2,
        "failed",
        1,
    )
    steps = points(triggered.points)
    assert steps[0] == (MARGIN, HEIGHT - MARGIN)  # nothing at the start
    assert steps[-1] == (chart.right, MARGIN)  # both, the top, at the end
    middle = (MARGIN + chart.right) / 2
    assert (middle, (HEIGHT - MARGIN + MARGIN) / 2) in steps  # the second at half time
    assert points(failed.points)[-2] == (chart.right, (HEIGHT - MARGIN + MARGIN) / 2)
    assert chart.start == "2026-01-01T00:00:00Z" and chart.end == "2026-01-01T00:02:00Z"


def test_no_outcome_no_chart() -> None:
    assert progress_chart([]) is None
