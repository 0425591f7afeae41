"""The frames an expression is read in (policies/selections.py): one pair of
parentheses, brackets or braces, and the type of each item in it, as far as loading
knows it (policies/types.py); and the values of objects' fields read in an item."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentform.policies.types import NOTHING, VALUE, ListOf, MapOf, Sort, Type, indexed, join


@dataclass
class Frame:
    """One pair of parentheses, brackets or braces, and the type of each item in it."""

    kind: str  # "call", "group", "list", "map", "struct", "index" or "top"
    base: Type = None  # a call's receiver, an indexed value
    method: str = ""
    at: int = 0  # a call's or an index's offset
    bound: tuple[str, Type] | None = None  # a macro's variable, its type
    items: list[Type] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)  # each item as a plain string
    current: Type = None  # the value in progress
    values: int = 0  # how many values the current item holds
    plain: bool = True  # nothing but those values in the current item
    literal: str | None = None  # the current item is this string
    branches: list[Type] | None = None  # a conditional's values before the last
    questions: int = 0  # `?` awaiting their `:`
    key: str | None = None  # a map entry's key, once its `:` is read
    reads: list[int] = field(default_factory=list)  # fields' values read in the item
    operators: set[str] = field(default_factory=set)  # those applied in the item

    def value(self) -> Type:
        one = self.current if self.plain and self.values == 1 else None
        return one if self.branches is None else join([*self.branches, one])

    def restart(self) -> None:
        self.current, self.values, self.plain, self.literal = None, 0, True, None

    def end_item(self) -> None:
        alone = self.values == 1 and self.plain and self.branches is None
        value, key = self.value(), self.literal if alone else None  # not `c ? 'a' : 'b'`
        self.items.append(value)
        self.keys.append(self.key if self.kind == "map" else key)
        self.restart()
        self.branches, self.questions, self.key = None, 0, None
        self.reads, self.operators = [], set()

    def only_joined(self) -> bool:
        """The item's values are shown as they are: alone or joined with `+` at the
        top or in parentheses (a message shows a sensitive one as `(sensitive)`)."""
        return self.kind in ("top", "group") and self.operators <= {"+"}

    def colon(self) -> None:
        if self.questions:  # a conditional's branch ends
            self.questions -= 1
            self.branches = [*(self.branches or []), self.value()]
        elif self.kind == "map":
            self.key = self.literal if self.values == 1 else None
        else:
            self.plain = False
        self.restart()

    def result(self) -> Type:
        empty = not self.items and self.values == 0 and self.plain and self.branches is None
        self.end_item()
        if self.kind == "call":
            return call_result(self.method, self.base, self.items)
        if self.kind == "index":
            if isinstance(self.base, MapOf) and self.keys[0] is not None:
                return self.base.get(self.keys[0])
            return indexed(self.base)
        if self.kind == "group":
            return self.items[0] if len(self.items) == 1 else None
        if self.kind == "map":
            pairs = [] if empty else list(zip(self.keys, self.items, strict=True))
            entries = tuple((k, t) for k, t in pairs if k is not None)
            return MapOf(entries) if len(entries) == len(pairs) else None
        listed = NOTHING if empty else join(self.items)
        return ListOf(listed) if self.kind == "list" and listed is not None else None


def call_result(method: str, receiver: Type, arguments: list[Type]) -> Type:
    if method == "filter":
        return receiver if isinstance(receiver, ListOf) else None
    if method == "map" and isinstance(receiver, ListOf):
        return ListOf(arguments[-1]) if arguments[-1] is not None else None
    return None


def field_value(value: Type) -> bool:
    """Whether `value` is a value of an object's field (`headers['X']`)."""
    return isinstance(value, Sort) and value.path[-1:] == (VALUE,)
