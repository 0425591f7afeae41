"""Name globs per kind (`protect`, `owns`): whether one matches a key, and whether
two globs can match a common name.

A glob is fnmatch's, matched case-sensitively against the key's canonical form
(`checkout-eu`; a batch's `AGENT/NAME`): `*` is any text (a `/` included), `?`
one character, `[abc]`, `[a-z]` and `[!abc]` one character of a set.

Whether two globs overlap is decided exactly, not guessed from prefixes: both
are read as sequences of steps (a literal, a set, one character, any text), and
a search over pairs of positions looks for a string both can read to their end.
There are (len(a) + 1) * (len(b) + 1) pairs at most, each visited once; two globs
whose fixed starts or ends differ (`team-a-*`, `team-b-*`) are told apart first,
without a search. A search is bounded (MAX_STATES): past it, two globs are taken
to overlap, which may refuse a pair that does not, never accept one that does.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

MAX_CHAR = 0x10FFFF
MAX_STATES = 5_000  # a pair of globs searched past this many positions: taken to overlap


@dataclass(frozen=True)
class _Step:
    """One step of a glob: `any_text` (`*`), or one character in `ranges` (or,
    `negated`, outside them); `?` is one character outside no range, and a set of
    no range (`[z-a]`) is no character at all."""

    ranges: tuple[tuple[int, int], ...] = ()
    negated: bool = False
    any_text: bool = False


def matches(globs: Mapping[str, Sequence[str]], kind: str, key: str) -> bool:
    """Whether a glob given for `kind` matches `key` (its canonical form)."""
    return any(fnmatch.fnmatchcase(key, glob) for glob in globs.get(kind, ()))


def _set_step(glob: str, i: int) -> tuple[_Step, int] | None:
    """The set starting at glob[i] == '[' and the index after it; None when it is
    not closed (fnmatch then reads the '[' as itself)."""
    j = i + 1
    negated = j < len(glob) and glob[j] == "!"
    j += negated
    start = j
    while j < len(glob) and (glob[j] != "]" or j == start):
        j += 1
    if j >= len(glob):
        return None
    body, ranges = glob[start:j], []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = ord(body[k]), ord(body[k + 2])
            if low <= high:  # fnmatch drops a reversed range: it matches nothing
                ranges.append((low, high))
            k += 3
        else:
            ranges.append((ord(body[k]), ord(body[k])))
            k += 1
    return _Step(tuple(ranges), negated), j + 1


@lru_cache(maxsize=4096)
def _steps(glob: str) -> tuple[_Step, ...]:
    """The glob's steps (parsed once: validate --all compares each glob many times)."""
    steps: list[_Step] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            if not (steps and steps[-1].any_text):  # ** is *
                steps.append(_Step(any_text=True))
            i += 1
            continue
        if char == "?":
            steps.append(_Step(negated=True))
            i += 1
            continue
        found = _set_step(glob, i) if char == "[" else None
        if found is not None:
            steps.append(found[0])
            i = found[1]
            continue
        steps.append(_Step(((ord(char), ord(char)),)))
        i += 1
    return tuple(steps)


def _covered(ranges: Sequence[tuple[int, int]], by: Sequence[tuple[int, int]]) -> bool:
    """Whether every character of `ranges` is in `by`."""
    for low, high in ranges:
        point = low
        while point <= high:
            cover = next(((lo, hi) for lo, hi in by if lo <= point <= hi), None)
            if cover is None:
                return False
            point = cover[1] + 1
    return True


def _share_a_character(a: _Step, b: _Step) -> bool:
    if a.any_text or b.any_text:
        other = b if a.any_text else a
        return other.any_text or other.negated or bool(other.ranges)
    if a.negated and b.negated:
        both = [*a.ranges, *b.ranges]
        return not _covered([(0, MAX_CHAR)], both)
    if a.negated or b.negated:
        positive, negative = (b, a) if a.negated else (a, b)
        return not _covered(positive.ranges, negative.ranges)
    return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a.ranges for lo2, hi2 in b.ranges)


def _ends_differ(first: Sequence[_Step], second: Sequence[_Step]) -> bool:
    """Whether the two globs' fixed starts or fixed ends (up to their first `*`)
    cannot be the same text: then no name matches both (the usual case, decided
    without a search)."""
    starts = zip(first, second, strict=False)  # up to the shorter: the rest is unread
    ends = zip(reversed(first), reversed(second), strict=False)
    for pairs in (starts, ends):
        for here, there in pairs:
            if here.any_text or there.any_text:
                break
            if not _share_a_character(here, there):
                return True
    return False


def overlap(a: str, b: str) -> bool:
    """Whether some name matches both globs: decided exactly, within MAX_STATES
    pairs of positions; past them (two long globs of many `*`, which no one
    writes), they are taken to overlap, so an overlap is never missed."""
    first, second = _steps(a), _steps(b)
    if not any(s.any_text for s in (*first, *second)) and len(first) != len(second):
        return False
    if _ends_differ(first, second):
        return False
    seen: set[tuple[int, int]] = set()
    todo = [(0, 0)]
    while todo:
        i, j = todo.pop()
        if (i, j) in seen:
            continue
        if len(seen) >= MAX_STATES:
            return True
        seen.add((i, j))
        if i == len(first) and j == len(second):
            return True
        here = first[i] if i < len(first) else None
        there = second[j] if j < len(second) else None
        if here is not None and here.any_text:
            todo.append((i + 1, j))  # * reads nothing more
        if there is not None and there.any_text:
            todo.append((i, j + 1))
        if here is None or there is None:
            continue
        if _share_a_character(here, there):
            # one character read by both: a * stays where it is, a character moves on
            todo.append((i + (not here.any_text), j + (not there.any_text)))
    return False
