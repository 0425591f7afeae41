"""Modules `-m` deselects whole are not collected (tests/tiers.py), and only those."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests.tiers import FAST_EXAMPLES, deselects_whole, examples, left_out, module_marks

FAST = "not slow and not pipeline"  # make test-fast


def test_a_modules_marks_are_read_from_its_source() -> None:
    source = "import pytest\npytestmark = [pytest.mark.schemathesis, pytest.mark.slow]\n"
    assert module_marks(source) == {"schemathesis", "slow"}
    assert module_marks("pytestmark = pytest.mark.server  # a server\n") == {"server"}
    assert module_marks("import pytest\n\n@pytest.mark.slow\ndef test_x(): pass\n") == set()


@pytest.mark.parametrize(
    ("expression", "marks", "whole"),
    [
        (FAST, {"schemathesis", "slow"}, True),
        (FAST, {"pipeline"}, True),
        (FAST, {"server"}, False),  # its tests run in the fast tier
        (FAST, set(), False),
        ("slow", {"schemathesis", "slow"}, False),
        ("schemathesis", {"slow"}, False),  # one of its tests may be marked schemathesis
        ("not slow or anyio", {"slow"}, False),  # ... or anyio, a mark not registered
        ("not slow and not anyio", {"slow"}, True),
        ("server and not slow", {"precommit"}, False),
    ],
)
def test_only_a_module_no_test_of_which_can_match_is_left_out(
    expression: str, marks: set[str], whole: bool
) -> None:
    assert deselects_whole(expression, marks) is whole


def test_the_fast_tier_leaves_out_the_fuzzing_and_pipeline_modules() -> None:
    tests = Path(__file__).parent
    assert left_out(tests / "service" / "test_schemathesis.py", FAST)
    assert left_out(tests / "gitops" / "test_pipeline.py", FAST)
    assert not left_out(tests / "service" / "test_schemathesis.py", "")
    assert not left_out(tests / "service" / "test_server.py", FAST)
    assert not left_out(tests / "service" / "conftest.py", FAST)


def test_a_property_test_runs_every_example_but_a_quarter_in_the_fast_tier() -> None:
    loaded = "fast" if settings().max_examples == FAST_EXAMPLES else "agentform"
    try:
        settings.load_profile("agentform")
        assert (examples(200), examples(1), settings().max_examples) == (200, 1, 100)
        settings.load_profile("fast")
        assert (examples(200), examples(1), settings().max_examples) == (50, 1, 25)
        assert settings().deadline is None
    finally:
        settings.load_profile(loaded)
