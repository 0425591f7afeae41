"""What a template may compute in the sandbox (config/sandbox.py): bounded work and
values, and secret() tokens that may only be placed in text.

At most MAX_STEPS loop iterations and calls (`Budget`), no single value over
MAX_VALUE characters (`*`, `~`, `+`, `%`, `**`, widths and counts given to formats,
filters and str methods, each checked before it runs and its result after), only
data written as text (`written`), and a `secret()` token (`SecretToken`) used only
as it is. Breaking a rule raises `NotAllowed` (a SecurityError).
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError

from agentform.core.bounds import NOT_ALLOWED
from agentform.core.errors import AgentformError

MAX_STEPS = 1_000_000  # loop iterations and calls in one file's rendering
MAX_VALUE = 1 << 20  # characters of one value a template computes
MAX_RENDERED = 16 << 20  # characters of one rendered file
MAX_WIDTH = 10_000  # a width or count given to a format or a filter
_WIDTHS = re.compile(r"[{%][^}%a-zA-Z]*?(\d+)")  # widths and precisions in a format


class SecretToken(str):
    """What `secret('NAME')` gives a template: a token standing for the value, which
    no template sees. Placing it in text is all a template may do with it."""


PLACING_FILTERS = frozenset({"string", "default", "d"})
"""Filters that give a secret() token back as it is."""


def refuse_transform(how: str) -> None:
    raise NotAllowed(f"a secret() value can only be placed in text, not {how}")


class NotAllowed(AgentformError, SecurityError):
    """Something a workspace file may not do; the message says what."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: {NOT_ALLOWED}")


class Budget:
    """Steps left for one file's rendering."""

    def __init__(self) -> None:
        self.left = MAX_STEPS

    def step(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise NotAllowed(f"more than {MAX_STEPS:,} loop iterations and calls")

    def counted(self, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            self.step()
            yield item


def size(value: Any, limit: int = MAX_VALUE) -> int:
    """The characters `value` reads as, as text: a collection counts everything it
    holds, each time it holds it (`[s] * 1000` is a thousand `s`); counting stops
    once past `limit`, so a huge collection costs no more than that to measure."""
    if isinstance(value, str):  # nearly every value a template writes: no stack needed
        return len(value)
    if isinstance(value, int | float | bool) or value is None:
        return 1
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += 1
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            total += 1
            stack.extend(item)
        else:
            total += 1
    return total


def bounded(value: Any) -> Any:
    if size(value) > MAX_VALUE:
        raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")
    return value


def _what(item: Any) -> str:
    if callable(item) and not isinstance(item, type):
        return "a function"
    if isinstance(item, types.ModuleType):
        return "a module"
    return f"{with_article(type_name(item))} object"


def written(value: Any) -> Any:
    """`value`, bounded, when it is data (text, numbers, lists and maps of them): what
    a template writes out as text; anything else would be written as its Python repr
    (an object's address, a function's name), which no file means to say."""
    bounded(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | int | float | range | jinja2.Undefined) or item is None:
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        else:
            raise NotAllowed(f"writing {_what(item)} as text (only data is written)")
    return value


def check_widths(text: Any) -> None:
    if isinstance(text, str) and any(int(w) > MAX_WIDTH for w in _WIDTHS.findall(text)):
        raise NotAllowed(f"a format width over {MAX_WIDTH:,}")


def check_counts(args: Iterable[Any]) -> None:
    if any(isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_WIDTH for a in args):
        raise NotAllowed(f"a width or count over {MAX_WIDTH:,}")


_TEXT_OF_WHOLE = frozenset({"string", "join", "tojson", "pprint", "urlencode", "xmlattr"})
"""Filters that write a whole collection out as one text."""
_WIDTH_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate", "format", "replace"})


def check_operands(operator: str, left: Any, right: Any) -> None:
    """Refuses, before it is computed, a product or power too large to hold, and any
    arithmetic on a secret() token."""
    if isinstance(left, SecretToken) and operator != "+":
        refuse_transform(f"used with {operator}")
    if operator == "*":
        count, repeated = (right, left) if isinstance(right, int) else (left, right)
        if isinstance(count, int) and size(repeated) * count > MAX_VALUE:
            raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        if abs(right) > 64 or left.bit_length() * abs(right) > 4096:
            raise NotAllowed("a number over 4,096 bits")
    elif operator == "%" and isinstance(left, str):
        check_widths(left)
        written(right)


def sliced(value: Any) -> Any:
    if isinstance(value, SecretToken):
        refuse_transform("indexed or sliced")
    return value


def check_replace(text: Any, old: Any, new: Any) -> None:
    if isinstance(text, str) and str(old) and text.count(str(old)) * len(str(new)) > MAX_VALUE:
        raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")


def type_name(obj: Any) -> str:
    """The type a template sees: the built-in one agentform's own types extend (`vars`
    is a dict to the files, whatever class holds it)."""
    kind = type(obj)
    if kind.__module__.startswith("agentform."):
        kind = next(t for t in kind.__mro__ if t.__module__ == "builtins")
    return kind.__name__


def with_article(name: str) -> str:
    """`name` after its article: a dict, an int, an object."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def checked_filter(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def checked(*args: Any, **kwargs: Any) -> Any:
        if name not in PLACING_FILTERS and any(isinstance(a, SecretToken) for a in args):
            refuse_transform(f"given to |{name}")
        if name in _TEXT_OF_WHOLE:  # the whole value becomes text: measure it first
            args = _written_arguments(args, hasattr(original, "jinja_pass_arg"))
        if name not in _WIDTH_FILTERS:
            return original(*args, **kwargs)
        check_counts([*args[1:], *kwargs.values()])
        if args and original.__name__ in ("do_format",):
            check_widths(args[0])
        if original.__name__ == "do_replace" and len(args) >= 4:
            check_replace(*args[1:4])
        return bounded(original(*args, **kwargs))

    for attribute in ("jinja_pass_arg",):  # eval-context / environment filters
        if hasattr(original, attribute):
            setattr(checked, attribute, getattr(original, attribute))
    checked.__name__ = original.__name__
    return checked


def _written_arguments(args: tuple[Any, ...], passed: bool) -> tuple[Any, ...]:
    """The arguments of a filter that writes them out as text, each checked as data;
    an iterator (`map`, `select`) read into a list first, so its items are what is
    checked and written (`|map('upper')|join`). `passed`: the first is Jinja2's own."""
    own, given = (args[:1], args[1:]) if passed else ((), args)
    read = tuple(list(a) if isinstance(a, Iterator) else a for a in given)
    for arg in read:
        written(arg)
    return (*own, *read)
