"""The names an expression selects (`change.after.url`, `c.kind`), with what each
chain's first name stands for, so that loading can check them (policies/names.py).

The expression's values are typed as it is read (policies/types.py). Every construct
gives its value's type from its parts': parentheses and the conditional (its
branches, when they agree), a list or map literal, an index or a key, `filter` (its
list) and `map` (a list of its last argument). A comprehension's variable stands
for its list's items; a name read off a value of a known sort is a selection. A
value of no known type (a mixed list, a function's result) selects nothing: no
error that could be wrong.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from agentform.policies.expressions import TOKEN, VARIABLES
from agentform.policies.types import (
    NOTHING,
    ListOf,
    MapOf,
    Sort,
    Type,
    indexed,
    item_of,
    join,
    then,
)

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_VARIABLE = re.compile(r"\s*\(\s*([A-Za-z_]\w*)\s*,")  # `(c,` after a macro's name


@dataclass(frozen=True)
class Selection:
    """A chain of names as written (`change.after.url`) and its offset in the source;
    `element`: names[0] is a variable standing for a value of that sort (`change`)."""

    names: tuple[str, ...]
    offsets: tuple[int, ...]  # of each name in the source
    element: str | None = None

    @property
    def offset(self) -> int:
        return self.offsets[0]


@dataclass(frozen=True)
class Call:
    """A function or method called (`string`, `exists`), its arguments' types (the
    receiver first for a method), and the offset of its name."""

    name: str
    arguments: tuple[Type, ...]
    offset: int


@dataclass
class _Frame:
    """One pair of parentheses, brackets or braces, and the type of each item in it."""

    kind: str  # "call", "group", "list", "map", "struct", "index" or "top"
    base: Type = None  # a call's receiver, an indexed value
    method: str = ""
    at: int = 0  # a call's offset
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

    def value(self) -> Type:
        one = self.current if self.plain and self.values == 1 else None
        return one if self.branches is None else join([*self.branches, one])

    def restart(self) -> None:
        self.current, self.values, self.plain, self.literal = None, 0, True, None

    def end_item(self) -> None:
        value, key = self.value(), self.literal if self.values == 1 else None
        self.items.append(value)
        self.keys.append(self.key if self.kind == "map" else key)
        self.restart()
        self.branches, self.questions, self.key = None, 0, None

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
            return _call_result(self.method, self.base, self.items)
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


def _call_result(method: str, receiver: Type, arguments: list[Type]) -> Type:
    if method == "filter":
        return receiver if isinstance(receiver, ListOf) else None
    if method == "map" and isinstance(receiver, ListOf):
        return ListOf(arguments[-1]) if arguments[-1] is not None else None
    return None


class _Reader:
    """Reads an expression's tokens once, keeping the frames it is inside."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.frames = [_Frame("top")]
        self.found: list[Selection] = []
        self.calls: list[Call] = []
        self.declared: set[int] = set()  # where variables are declared: not selections
        self.after_value = False  # the last token ended a value: `.x`, `[`, `(` apply to it
        self.call: tuple[Type, str, int, int] | None = None  # a call about to open

    def read(self) -> _Reader:
        for match in TOKEN.finditer(self.source):
            text, frame = match[0], self.frames[-1]
            if match["comment"] or text.isspace():
                continue
            if match["chain"] is not None:
                if match.start() not in self.declared:
                    self._names(match, None, root=True)
                continue
            if match["member"] is not None:
                self._names(match, frame.current if self.after_value else None, root=False)
            elif text in "([{":
                self._open(text)
            elif text in ")]}" and len(self.frames) > 1:
                self._close()
            elif text in ",?:":
                self._separator(text, frame)
            elif match["string"] is not None:  # a value of no type; a map's key perhaps
                plain = text[0] in "'\"" and "\\" not in text and text[:3] != text[0] * 3
                frame.literal = text[1:-1] if plain and frame.values == 0 else None
                frame.values, frame.current, self.after_value = frame.values + 1, None, True
            else:  # an operator or a literal: the item is no longer one value
                frame.current, frame.plain, self.after_value = None, False, False
        return self

    def _separator(self, text: str, frame: _Frame) -> None:
        if text == ",":
            frame.end_item()
        elif text == "?":
            frame.questions += 1
            frame.branches = frame.branches or []
            frame.restart()  # the condition is no value of the item
        else:
            frame.colon()
        self.after_value = False

    def _names(self, match: re.Match[str], base: Type, root: bool) -> None:
        """A chain (`c.after.url`, root) or the members after a value (`.kind`)."""
        frame = self.frames[-1]
        parts = [(m[0], match.start() + m.start()) for m in re.finditer(r"\w+", match[0])]
        calls = self.source[match.end() :].lstrip().startswith("(")
        method = parts.pop() if calls and len(parts) > int(root) else None
        names, offsets = tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        if root:
            method = method or (parts[0] if calls else None)  # a function's name
            bound = next((f.bound for f in reversed(self.frames) if self._binds(f, names[0])), None)
            if bound is None and names[0] in VARIABLES:
                value = self._select(Sort(names[0]), names, offsets, None)
            else:
                value = self._select(bound[1], names, offsets, names[0]) if bound else None
            frame.values, frame.current = frame.values + 1, value
        elif names:
            frame.current = self._select(base, ("", *names), (offsets[0], *offsets), None)
        else:  # a method called on the value
            frame.current = base
        frame.literal = None
        self.call = (frame.current, *method, match.end()) if calls and method else None
        self.after_value = True

    def _select(
        self, value: Type, names: tuple[str, ...], offsets: tuple[int, ...], var: str | None
    ) -> Type:
        """The type of `value`, written `names[0]`, then `.names[1:]`: through a map
        literal's entries, then a selection where a name is read off a sort."""
        i = 1
        while isinstance(value, MapOf) and i < len(names):
            value, i = value.get(names[i]), i + 1
        if not isinstance(value, Sort) or value == NOTHING:
            return value if i == len(names) else None
        if var is not None or i > 1 or names[0] == "":  # a value standing for a sort
            head, element, at = (var if i == 1 and var else value.sort), value.sort, offsets[i - 1]
        else:
            head, element, at = names[0], None, offsets[0]
        pad = (at,) * len(value.path)
        rest = names[i:]
        self.found.append(Selection((head, *value.path, *rest), (at, *pad, *offsets[i:]), element))
        return then(value, rest)

    @staticmethod
    def _binds(frame: _Frame, name: str) -> bool:
        return frame.bound is not None and frame.bound[0] == name

    def _open(self, text: str) -> None:
        frame = self.frames[-1]
        if text == "(" and self.call is not None:
            receiver, method, at, end = self.call
            new = _Frame("call", receiver, method, at)
            if method in MACROS and (variable := _VARIABLE.match(self.source, end)):
                new.bound = (variable[1], item_of(receiver))
                self.declared.add(variable.start(1))
        elif text == "[" and self.after_value:
            new = _Frame("index", frame.current)
        else:
            kinds = {"(": "group", "[": "list", "{": "struct" if self.after_value else "map"}
            new = _Frame(kinds[text])  # a struct: a message's fields, `Name{a: 1}`
        self.frames.append(new)
        self.call, self.after_value = None, False

    def _close(self) -> None:
        done = self.frames.pop()
        frame, result = self.frames[-1], done.result()
        if done.kind == "call":
            self.calls.append(Call(done.method, (done.base, *done.items), done.at))
        elif done.kind != "index":  # a new value, not the end of one
            frame.values += 1
        frame.current, frame.literal, self.after_value = result, None, True


def selections(source: str) -> list[Selection]:
    """Every `a.b.c` chain the expression writes outside strings and comments,
    starting at a variable of rules or at a value whose sort is known (a
    comprehension's variable, `plan.changes[0]`); calls such as `.startsWith` end a
    chain. A comprehension's variable is bound inside its macro's parentheses,
    shadowing a variable of rules."""
    return list(_read(source)[0])


def calls(source: str) -> list[Call]:
    """Every function and method the expression calls, with its arguments' types."""
    return list(_read(source)[1])


@functools.lru_cache(maxsize=1_024)
def _read(source: str) -> tuple[tuple[Selection, ...], tuple[Call, ...]]:
    """Read once for loading's several questions about one expression."""
    reader = _Reader(source).read()
    return tuple(reader.found), tuple(reader.calls)
