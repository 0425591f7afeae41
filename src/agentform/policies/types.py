"""The types of the values an expression computes, as far as policy loading knows
them (policies/selections.py types each value as it reads it): a value rules see by
its sort (a change, the plan, a name; a change's `after`, or a field of it, is a
change's value at that path), a list of values of one type, a map literal by its
entries; None when not known.
"""

from __future__ import annotations

from dataclasses import dataclass

ELEMENTS: dict[tuple[str, ...], str] = {("plan", "changes"): "change", ("change", "fields"): "name"}
"""What the items of a list rules see are (`plan.changes.all(c, ...)`: `c` is a change)."""
OBJECTS = ("before", "after")  # a change's values whose fields are its kinds' fields
VALUE = "[]"  # in a path: a value of the field before it (`headers['X']`)
RECORDS = ("change", "plan", "organization")  # the sorts whose fields rules know by name


@dataclass(frozen=True)
class Sort:
    """A value rules see: `sort` (a change, the plan...), at `path` in it (a change's
    `after`, or a field of it, `("after", "headers")`)."""

    sort: str
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class ListOf:
    item: Type


@dataclass(frozen=True)
class MapOf:
    """A map literal whose keys are all written as strings."""

    entries: tuple[tuple[str, Type], ...]

    def get(self, key: str) -> Type:
        return next((t for k, t in self.entries if k == key), None)


Type = Sort | ListOf | MapOf | None  # None: not known
NOTHING = Sort("")  # the items of `[]`: a list of anything


def join(types: list[Type]) -> Type:
    """The type of a value that is any of `types` (branches, a list's items)."""
    found: Type = NOTHING
    for one in types:
        if found == NOTHING or one == NOTHING:
            found = one if found == NOTHING else found
        elif isinstance(found, ListOf) and isinstance(one, ListOf):
            item = join([found.item, one.item])
            found = ListOf(item) if item is not None else None
        elif found != one:
            return None
    return found


def item_of(value: Type) -> Type:
    return value.item if isinstance(value, ListOf) and value.item != NOTHING else None


def indexed(value: Type) -> Type:
    """`value[...]`: an item of a list, or a value of an object's field."""
    if isinstance(value, Sort) and len(value.path) == 2 and value.path[0] in OBJECTS:
        return Sort(value.sort, (*value.path, VALUE))
    return item_of(value)


def by_name(value: Type) -> bool:
    """Whether `value[...]` reads a field by its name, as `.name` would: `value` is a
    change, the plan, the organization, or a change's `before` or `after`. Its key is
    then a field's name in quotes (`change['after']` is `change.after`), never
    computed: loading could not tell which field, sensitive or not, it reads."""
    if not isinstance(value, Sort) or value.sort not in RECORDS:
        return False
    return not value.path or (len(value.path) == 1 and value.path[0] in OBJECTS)


def then(value: Sort, names: tuple[str, ...]) -> Type:
    """The type of `value` then `.names` (`plan` then `changes`: a list of changes)."""
    path = (*value.path, *names)
    if not names:
        return value
    if (known := ELEMENTS.get((value.sort, *path))) is not None:
        return ListOf(Sort(known))
    if value.sort == "change" and path[0] in OBJECTS and len(path) <= 2:
        return Sort("change", path)  # an object, or one of its fields
    if value.sort == "change" and path[0] in OBJECTS and len(path) == 3:
        return Sort("change", (*path[:2], VALUE))  # `headers.Authorization`, as indexed
    return None
