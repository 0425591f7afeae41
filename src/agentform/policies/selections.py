"""The names an expression selects (`change.after.url`, `c.kind`), with what each
chain's first name stands for, so that loading can check them (policies/names.py).

The expression's values are typed as it is read (policies/types.py). Every construct
gives its value's type from its parts': parentheses and the conditional (its
branches, when they agree), a list or map literal, an index or a key, `filter` (its
list) and `map` (a list of its last argument). A comprehension's variable stands
for its list's items; a name read off a value of a known sort is a selection, and so
is an index of one by a name in quotes (`change['after']`); a computed key there is
noted (`computed_keys`: loading refuses it). A
value of no known type (a mixed list, a function's result) selects nothing: no
error that could be wrong.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from agentform.policies.expressions import TOKEN, VARIABLES
from agentform.policies.frames import Frame, field_value
from agentform.policies.types import NOTHING, MapOf, Sort, Type, by_name, item_of, then

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
TESTS = frozenset({"isSecret", "isSensitive", "isSet", "has"})
"""The functions that only test a value (a field's value may be sensitive: loading
lets nothing else read one, policies/names.py)."""
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


class _Reader:
    """Reads an expression's tokens once, keeping the frames it is inside."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.frames = [Frame("top")]
        self.found: list[Selection] = []
        self.calls: list[Call] = []
        self.values: list[tuple[Sort, int]] = []  # each value of a field, where it is read
        self.tested: set[int] = set()  # those given alone to a test, or shown alone
        self.joined: set[int] = set()  # those only joined with `+`: a message shows them
        self.declared: set[int] = set()  # where variables are declared: not selections
        self.computed: list[tuple[Sort, int]] = []  # fields read by a computed key
        self.after_value = False  # the last token ended a value: `.x`, `[`, `(` apply to it
        self.call: tuple[Type, str, int, int] | None = None  # a call about to open

    def read(self) -> _Reader:
        for match in TOKEN.finditer(self.source):
            text, frame = match[0], self.frames[-1]
            if match["comment"] or text.isspace():
                continue
            if match["chain"] is not None:
                if text == "in":  # an operator
                    frame.operators.add(text)
                if match.start() not in self.declared:
                    self._names(match, None, root=True)
                continue
            if match["member"] is not None:
                self._names(match, frame.current if self.after_value else None, root=False)
            elif text in "([{":
                self._open(text, match.start())
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
                frame.operators.add(text)
        self._test(self.frames[0].value())  # the whole expression: a message shows it
        self._joined(self.frames[0])
        return self

    def _value_at(self, value: Type, at: int) -> None:
        """Notes where a value of an object's field is read (`headers['X']`)."""
        if field_value(value):
            assert isinstance(value, Sort)
            self.values.append((value, at))
            self.frames[-1].reads.append(at)

    def _joined(self, frame: Frame) -> None:
        if frame.only_joined():
            self.joined.update(frame.reads)

    def _test(self, item: Type) -> None:
        """`item`, a whole argument of a test or the whole expression, is the last
        field's value read when it is one: that reading only tests or shows it."""
        if field_value(item) and self.values:
            self.tested.add(self.values[-1][1])

    def _keyed(self, done: Frame) -> Type:
        """`change['after']`, read as `change.after` (a selection, typed as one); a
        computed key (`change.after[k]`) is noted, and its value of no type."""
        assert isinstance(done.base, Sort)
        if len(done.keys) != 1 or done.keys[0] is None:
            self.computed.append((done.base, done.at))
            return None
        return self._select(done.base, ("", done.keys[0]), (done.at, done.at), None)

    def _separator(self, text: str, frame: Frame) -> None:
        if text == ",":
            self._joined(frame)
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
            self._value_at(value, offsets[0])
        elif names:
            frame.current = self._select(base, ("", *names), (offsets[0], *offsets), None)
            self._value_at(frame.current, offsets[0])
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
    def _binds(frame: Frame, name: str) -> bool:
        return frame.bound is not None and frame.bound[0] == name

    def _open(self, text: str, at: int) -> None:
        frame = self.frames[-1]
        if self.after_value and field_value(frame.current) and text in "([":
            frame.operators.add(text)  # a method called on the value, or an index

        if text == "(" and self.call is not None:
            receiver, method, at, end = self.call
            new = Frame("call", receiver, method, at)
            if method in MACROS and (variable := _VARIABLE.match(self.source, end)):
                new.bound = (variable[1], item_of(receiver))
                self.declared.add(variable.start(1))
        elif text == "[" and self.after_value:
            new = Frame("index", frame.current, at=at)
        else:
            kinds = {"(": "group", "[": "list", "{": "struct" if self.after_value else "map"}
            new = Frame(kinds[text])  # a struct: a message's fields, `Name{a: 1}`
        self.frames.append(new)
        self.call, self.after_value = None, False

    def _close(self) -> None:
        done = self.frames.pop()
        self._joined(done)
        frame, result = self.frames[-1], done.result()
        if done.kind == "call":
            self.calls.append(Call(done.method, (done.base, *done.items), done.at))
            if done.method in TESTS and len(done.items) == 1:
                self._test(done.items[0])
        elif done.kind != "index":  # a new value, not the end of one
            frame.values += 1
        elif isinstance(done.base, Sort):  # a field's value; not a literal's item again
            result = self._keyed(done) if by_name(done.base) else result
            self._value_at(result, done.at)
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


def values_used(source: str, shown: bool = False) -> list[tuple[Sort, int]]:
    """Each value of an object's field (`change.after.headers['X']`) the expression
    reads other than alone as the argument of a test (TESTS) or as the whole
    expression: given to any other function or method, to an operator (`==`, `in`,
    `+`), put in a list or map; with the offset where it is read. `shown`: the
    expression is a message's, which may also join such values with `+`."""
    used, joined = _read(source)[2:4]
    return [v for v in used if not (shown and v[1] in joined)]


def computed_keys(source: str) -> list[tuple[Sort, int]]:
    """Each change, plan, organization or change's object indexed by a key the
    expression computes (`change.after[k]`), with the offset of its `[`."""
    return list(_read(source)[4])


@functools.lru_cache(maxsize=1_024)
def _read(
    source: str,
) -> tuple[
    tuple[Selection, ...],
    tuple[Call, ...],
    tuple[tuple[Sort, int], ...],
    frozenset[int],
    tuple[tuple[Sort, int], ...],
]:
    """Read once for loading's several questions about one expression."""
    reader = _Reader(source).read()
    used = tuple(v for v in reader.values if v[1] not in reader.tested)
    found, joined = tuple(reader.found), frozenset(reader.joined)
    return found, tuple(reader.calls), used, joined, tuple(reader.computed)
