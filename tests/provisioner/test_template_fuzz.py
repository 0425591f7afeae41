"""The budget holds whatever a template does: templates composed by hypothesis from
what the sandbox allows, over large operands, each validated in a child process
whose peak memory and processor time are measured from outside (tests/template_fuzz.py).
Each ends with a verdict (valid, or diagnostics; never a crash) inside the budget
it ran under: here a low one, so an example takes a moment (bench/template_fuzz.py
runs many more under the real one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from tests.template_fuzz import Harness, templates

MEMORY, CPU, WALL = 128 << 20, 1.0, 3.0
SLACK = 32 << 20  # the child's own reading and writing, outside the metered file
CPU_SLACK = 0.5  # the load around the file: settings, digests, checks


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    running = Harness(MEMORY, CPU, WALL)
    yield running
    running.close()


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(template=templates())
def test_every_template_validates_within_the_budget(harness: Harness, template: str) -> None:
    verdict = harness.validate(template)
    assert not verdict.outcome.startswith("crash"), (template, verdict)
    assert verdict.grown <= MEMORY + SLACK, (template, verdict)
    assert verdict.cpu <= CPU + CPU_SLACK, (template, verdict)


def test_the_harness_sees_a_template_past_the_budget(harness: Harness) -> None:
    """The measure can fail: the issue's join is refused, within the budget."""
    verdict = harness.validate("{% set s='x'*1000000 %}{{ range(3000)|join(s)|length }}")
    assert verdict.outcome == "diagnostics"
    assert "needs more than the 128 MiB of memory" in verdict.said
    assert verdict.grown <= MEMORY + SLACK
