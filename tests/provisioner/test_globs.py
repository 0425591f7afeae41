"""Name globs: whether two can match a common name, decided exactly (checked
against every short name), and the cases a workspace's `owns` meets."""

from __future__ import annotations

import fnmatch
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentform.config import globs
from agentform.config.globs import overlap
from tests.tiers import examples

PIECES = ["a", "b", "/", "*", "?", "[ab]", "[!a]", "[a-b]", "[!ab]", "[", "[b-a]"]


def _witness(a: str, b: str, steps: int) -> str | None:
    """A name both globs match, searched among every name of a, b, c, /, [ up to
    `steps` characters (a common name needs at most one per step of the two globs)."""
    for n in range(steps + 1):
        for letters in itertools.product("abc/[", repeat=n):
            name = "".join(letters)
            if fnmatch.fnmatchcase(name, a) and fnmatch.fnmatchcase(name, b):
                return name
    return None


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=3), st.lists(st.sampled_from(PIECES), max_size=3))
def test_overlap_is_exact(first: list[str], second: list[str]) -> None:
    a, b = "".join(first), "".join(second)
    assert overlap(a, b) == (_witness(a, b, len(first) + len(second)) is not None), (a, b)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("team-a-*", "team-b-*", False),
        ("team-*", "team-b-*", True),
        ("*-eu", "checkout-*", True),  # checkout-eu
        ("*-eu", "*-us", False),
        ("checkout-agent/*", "*/nightly", True),  # batches: AGENT/NAME
        ("a?c", "ab", False),
        ("[!t]*", "team-*", False),
        ("*", "", True),
        ("[z-a]x", "*", False),  # a reversed range matches nothing, as in fnmatch
        ("x" * 200 + "*", "*" + "x" * 200, True),
    ],
)
def test_overlap_cases(a: str, b: str, expected: bool) -> None:
    assert overlap(a, b) is expected
    assert overlap(b, a) is expected


def test_a_search_past_its_bound_takes_the_globs_to_overlap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the bound, two globs are refused as overlapping: never accepted as
    disjoint unchecked. Five characters, and six or more, share no name."""
    assert not overlap("?????", "??????*")
    monkeypatch.setattr(globs, "MAX_STATES", 3)
    assert overlap("?????", "??????*")


def test_globs_with_different_fixed_starts_are_told_apart_without_a_search() -> None:
    assert not overlap("team-a-" + "*x" * 200, "team-b-" + "*x" * 200)
