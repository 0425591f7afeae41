"""The types of an expression's values pass through every construct: a list of
changes built by any nesting of them is still one, so a misspelt field of its
items is an error at load, at its place; of no known type, nothing is said."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentform.policies.expressions import compile_expression
from agentform.policies.names import unknown_names

KEEPING = [  # each construct, around a list of changes, gives a list of changes
    "({})",
    "{}.filter(c, true)",
    "{}.map(c, c)",
    "{}.map(c, true, c)",
    "(true ? {} : plan.changes)",
    "(false ? [] : {})",
    "{{'k': {}}}.k",
    "{{'k': {}}}['k']",
    "{{\"k\": {{'j': {}}}}}.k.j",
    "[{}][0]",
    "[{}[0], plan.changes[1]]",
    "[{}][0].map(d, d)",
]
LOSING = [  # each gives a value of no known type: nothing can be said of its items
    "[{}, 1][0]",
    "(true ? {} : [1])",
    "{{'k': {}}}[plan.changes[0].kind]",
    "{}.map(c, [c, 1][0])",
]


def nested(constructs: list[str], most: int = 4) -> st.SearchStrategy[str]:
    """`plan.changes` inside up to `most` constructs (CEL's parser takes 32 levels)."""
    return st.lists(st.sampled_from(constructs), max_size=most).map(
        lambda chosen: _wrapped("plan.changes", chosen)
    )


def _wrapped(inner: str, constructs: list[str]) -> str:
    for construct in constructs:
        inner = construct.format(inner)
    return inner


@given(nested(KEEPING))
def test_a_typo_in_items_of_any_nesting_is_found_at_its_place(changes: str) -> None:
    typo = f"{changes}.exists(x, x.actoin == 'create')"
    compile_expression(typo)  # the construct is CEL
    assert unknown_names(typo, "plan", []) == [
        ("x has no field actoin (did you mean 'action'?)", typo.rindex("actoin"))
    ]
    assert unknown_names(typo.replace("actoin", "action"), "plan", []) == []


@given(nested(KEEPING, 2), st.sampled_from(LOSING), nested(KEEPING, 2))
def test_a_value_of_no_known_type_selects_nothing(inner: str, losing: str, outer: str) -> None:
    changes = outer.replace("plan.changes", losing.format(inner), 1)
    unknown = f"{changes}.exists(x, x.actoin == 'create')"
    compile_expression(unknown)
    assert unknown_names(unknown, "plan", []) == []
