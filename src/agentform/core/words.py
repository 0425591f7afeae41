"""Counts in messages agree with their nouns and verbs: "1 object differs",
"2 objects differ", "1 other change was left out". Every count said in words
(views, warnings, errors) goes through `counted`."""

from __future__ import annotations

SINGULAR_VERBS = {"were": "was", "are": "is", "have": "has", "do": "does"}


def counted(n: int, noun: str, verb: str = "", plural: str = "") -> str:
    """`n` and `noun` (its `plural`, else noun + "s"), then `verb` given in the plural
    ("differ", "were left out"), made singular when n is 1."""
    words = f"{n} {noun if n == 1 else plural or noun + 's'}"
    if not verb:
        return words
    if n == 1:
        first, _, rest = verb.partition(" ")
        first = SINGULAR_VERBS.get(first, first + "s")
        verb = f"{first} {rest}" if rest else first
    return f"{words} {verb}"
