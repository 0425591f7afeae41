"""Keys: the identity of an object within its kind, whatever it is made of.

A key is a tuple of strings: `(name,)` for pools, groups, templates and
integrations, `(agent, integration)` for attachments, `(agent, name)` for
batches. Its one canonical string form joins the parts with `/`, escaping `%`
and `/` inside a part, so every key can be written as `KIND/KEY` (plans,
`--target`, `--exclude`) and read back unchanged.
"""

from __future__ import annotations

import re

_ESCAPED = re.compile(r"%(25|2F)", re.IGNORECASE)


class Key(tuple[str, ...]):
    """An object's identity within its kind; `str()` is its canonical form."""

    __slots__ = ()

    def __new__(cls, *parts: str) -> Key:
        return super().__new__(cls, parts)

    def __str__(self) -> str:
        text = "/".join(self)
        if "%" not in text and text.count("/") == len(self) - 1:
            return text  # no part needs escaping: a plan names tens of thousands of keys
        return "/".join(p.replace("%", "%25").replace("/", "%2F") for p in self)

    def __repr__(self) -> str:
        return f"Key{tuple(self)!r}"

    @classmethod
    def parse(cls, text: str) -> Key:
        """The key whose canonical form is `text`."""
        return cls(*(_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), p) for p in text.split("/")))


def address(kind: str, key: Key) -> str:
    """`KIND/KEY`: how plans, --target and --exclude name one object."""
    return f"{kind}/{key}"


def parse_address(text: str) -> tuple[str, Key]:
    """(kind, key) of `KIND/KEY`; ValueError when there is no `/`."""
    kind, sep, rest = text.partition("/")
    if not sep or not kind or not rest:
        raise ValueError(f"expected KIND/KEY, got {text!r}")
    return kind, Key.parse(rest)
