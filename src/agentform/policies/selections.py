"""The names an expression selects (`change.after.url`, `c.kind`), with what each
chain's first name stands for, so that loading can check them (policies/names.py).

A comprehension's variable stands for the items of the list its macro runs over,
and that list's items are inferred through what keeps them: `filter` (a list of
changes stays a list of changes), parentheses, an index (`plan.changes[0]` is a
change) and a list literal of values of one known sort (`[c]`). Where the items
cannot be known (`map`, a conditional, a mixed list), the variable is not checked:
no error that could be wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentform.policies.expressions import TOKEN, VARIABLES

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
KEEPS_ITEMS = frozenset({"filter"})  # the macros giving a list of their list's items
ELEMENTS: dict[tuple[str, ...], str] = {("plan", "changes"): "change", ("change", "fields"): "name"}
"""What the items of a list rules see are, for a comprehension's variable over it
(`plan.changes.all(c, ...)`: `c` is a change); over any other list, not known."""
_VARIABLE = re.compile(r"\s*\(\s*([A-Za-z_]\w*)\s*,")  # `(c,` after a macro's name


@dataclass(frozen=True)
class Selection:
    """A chain of names as written (`change.after.url`) and its offset in the source;
    `element`: names[0] is a comprehension's variable over items of that (`change`)."""

    names: tuple[str, ...]
    offsets: tuple[int, ...]  # of each name in the source
    element: str | None = None

    @property
    def offset(self) -> int:
        return self.offsets[0]


@dataclass(frozen=True)
class _Shape:
    """A value whose sort is known: one `sort` (a change, a name...) or a list of them."""

    sort: str
    many: bool = False

    def item(self) -> _Shape | None:
        return _Shape(self.sort) if self.many else None

    def then(self, names: tuple[str, ...]) -> _Shape | None:
        """The sort of this value's `names` (`plan` then `changes`: a list of changes)."""
        if not names:
            return self
        known = None if self.many else ELEMENTS.get((self.sort, *names))
        return _Shape(known, True) if known else None


@dataclass
class _Frame:
    """One pair of parentheses or brackets, and the one value inside it if it is just
    that (a list literal's items, separated by commas)."""

    kind: str  # "call", "group", "list", "index" or "top"
    base: _Shape | None = None  # a call's receiver, an index's list
    method: str | None = None
    bound: tuple[str, str | None] | None = None  # a macro's variable, its items' sort
    items: list[_Shape | None] = field(default_factory=list)
    current: _Shape | None = None  # the value in progress
    values: int = 0  # how many values the current item holds
    plain: bool = True  # nothing but those values in the current item

    def result(self) -> _Shape | None:
        self.items.append(self.current if self.plain and self.values == 1 else None)
        if self.kind == "call":
            return self.base if self.method in KEEPS_ITEMS and self.base else None
        if self.kind == "index":
            return self.base.item() if self.base else None
        if self.kind == "group":
            return self.items[0] if len(self.items) == 1 else None
        sorts = set(self.items)
        one = sorts.pop() if len(sorts) == 1 else None
        return _Shape(one.sort, True) if one and not one.many else None


class _Reader:
    """Reads an expression's tokens once, keeping the frames it is inside."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.frames = [_Frame("top")]
        self.found: list[Selection] = []
        self.declared: set[int] = set()  # where variables are declared: not selections
        self.after_value = False  # the last token ended a value: `.x`, `[`, `(` apply to it
        self.call: tuple[_Shape | None, str, int] | None = None  # a call about to open

    def read(self) -> list[Selection]:
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
            elif text in "([":
                self._open(text)
            elif text in ")]" and len(self.frames) > 1:
                self._close()
            elif text == ",":
                frame.items.append(frame.current if frame.plain and frame.values == 1 else None)
                frame.current, frame.values, frame.plain = None, 0, True
                self.after_value = False
            else:  # an operator or a literal: the item is no longer one value
                frame.current, frame.plain = None, False
                self.after_value = match["string"] is not None or text == "}"
        return self.found

    def _names(self, match: re.Match[str], base: _Shape | None, root: bool) -> None:
        """A chain (`c.after.url`, root) or the members after a value (`.kind`)."""
        frame = self.frames[-1]
        parts = [(m[0], match.start() + m.start()) for m in re.finditer(r"\w+", match[0])]
        calls = self.source[match.end() :].lstrip().startswith("(")
        method = parts.pop()[0] if calls and len(parts) > int(root) else None
        names, element = tuple(p[0] for p in parts), None
        if root:
            bound = next((f.bound for f in reversed(self.frames) if self._binds(f, names[0])), None)
            element = bound[1] if bound else None
            if bound is None and names[0] in VARIABLES:
                base = _Shape(names[0])
                self.found.append(Selection(names, tuple(p[1] for p in parts)))
            elif element is not None:
                base = _Shape(element)
                self.found.append(Selection(names, tuple(p[1] for p in parts), element))
            shape = base.then(names[1:]) if base else None
            frame.values, frame.current = frame.values + 1, shape
        else:
            if base is not None and not base.many and names:
                offsets = (parts[0][1], *(p[1] for p in parts))
                self.found.append(Selection((base.sort, *names), offsets, base.sort))
            frame.current = base.then(names) if base else None
        self.call = (frame.current, method or "", match.end()) if calls else None
        self.after_value = True

    @staticmethod
    def _binds(frame: _Frame, name: str) -> bool:
        return frame.bound is not None and frame.bound[0] == name

    def _open(self, text: str) -> None:
        frame = self.frames[-1]
        if text == "(" and self.call is not None:
            receiver, method, end = self.call
            new = _Frame("call", receiver, method)
            if method in MACROS and (variable := _VARIABLE.match(self.source, end)):
                item = receiver.item() if receiver else None
                new.bound = (variable[1], item.sort if item else None)
                self.declared.add(variable.start(1))
        elif text == "[" and self.after_value:
            new = _Frame("index", frame.current)
        else:
            new = _Frame("group" if text == "(" else "list")
        self.frames.append(new)
        self.call, self.after_value = None, False

    def _close(self) -> None:
        done = self.frames.pop()
        frame, result = self.frames[-1], done.result()
        if done.kind not in ("call", "index"):  # a new value, not the end of one
            frame.values += 1
        frame.current, self.after_value = result, True


def selections(source: str) -> list[Selection]:
    """Every `a.b.c` chain the expression writes outside strings and comments,
    starting at a variable of rules or at a value whose sort is known (a
    comprehension's variable, `plan.changes[0]`); calls such as `.startsWith` end a
    chain. A comprehension's variable is bound inside its macro's parentheses,
    shadowing a variable of rules."""
    return _Reader(source).read()
