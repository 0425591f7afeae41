"""secret() in a file renders as an opaque token, never as its value.

The rendered text of a file is parsed as YAML, digested and may end up in an
error message: none of that may hold a secret. So `secret('NAME')` renders a
token (letters, digits and dashes, safe in any YAML scalar style, with a
per-process nonce so no file can forge one), and after parsing, every string
that holds tokens becomes a `Sensitive` built from its parts. Only then is the
value joined in, outside any text.
"""

from __future__ import annotations

import re
import secrets as pysecrets
from typing import Any

from agentform.core.secrets import MIN_SEARCHED, Secrets
from agentform.core.sensitive import Part, SecretRef, Sensitive

_PREFIX = "agentform-secret-"


class SecretTokens:
    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self.nonce = pysecrets.token_hex(6)
        self.names: list[str] = []
        self.pattern = re.compile(re.escape(f"{_PREFIX}{self.nonce}-") + "([0-9]+)-")
        self.loose = re.compile(re.escape(_PREFIX), re.IGNORECASE)

    def token(self, name: str) -> str:
        if name not in self.names:
            self.names.append(name)
        return f"{_PREFIX}{self.nonce}-{self.names.index(name)}-"

    def parts(self, text: str) -> tuple[Part, ...] | None:
        """`text` split into plain text and secret references; None without tokens."""
        if _PREFIX not in text:
            return None
        parts: list[Part] = []
        at = 0
        for match in self.pattern.finditer(text):
            if match.start() > at:
                parts.append(text[at : match.start()])
            parts.append(SecretRef(self.names[int(match.group(1))]))
            at = match.end()
        if not parts:
            return None
        if at < len(text):
            parts.append(text[at:])
        return tuple(parts)

    def sensitive(self, parts: tuple[Part, ...]) -> Sensitive:
        values = []
        for part in parts:
            if isinstance(part, SecretRef):
                if part.name not in self.secrets.values:
                    return Sensitive(None, parts)
                values.append(self.secrets.values[part.name])
            else:
                values.append(part)
        whole = "".join(values)
        # The whole text is sensitive, and scrubbed as a whole: a secret too short
        # to be searched for alone is still found as part of the field holding it.
        # (Not when every secret in it is empty: the rest is plain text.)
        if any(isinstance(p, SecretRef) and self.secrets.values[p.name] for p in parts):
            self.secrets.add_other(whole)
        return Sensitive(whole, parts)

    def replace(self, text: str, how: str = "marker") -> str:
        """`text` with each token as its marker `((secret:NAME))` (digests) or its
        source `{{ secret("NAME") }}` (messages)."""

        def one(match: re.Match[str]) -> str:
            ref = SecretRef(self.names[int(match.group(1))])
            return ref.marker() if how == "marker" else ref.source()

        return self.pattern.sub(one, text)

    def mangled(self, text: str) -> bool:
        """A token changed by a filter (`| upper`, `| replace`): its value is lost."""
        return self.loose.search(self.pattern.sub("", text)) is not None


def too_short(value: Any) -> bool:
    """A resolved Sensitive whose whole text is too short to be scrubbed from text."""
    return isinstance(value, Sensitive) and value.resolved and len(value.reveal()) < MIN_SEARCHED


def substitute(
    data: Any,
    tokens: SecretTokens,
    path: tuple[str | int, ...] = (),
    short: list[tuple[tuple[str | int, ...], set[str]]] | None = None,
) -> tuple[Any, list[tuple[tuple[str | int, ...], str]]]:
    """The parsed data with Sensitive values for tokens, and the problems found
    (a path and a message): a token in a mapping key, or a token a filter changed.
    `short` collects the paths (and secret names) of values too short to scrub."""
    problems: list[tuple[tuple[str | int, ...], str]] = []

    def walk(value: Any, at: tuple[str | int, ...]) -> Any:
        if isinstance(value, str):
            if not tokens.loose.search(value):
                return value
            parts = tokens.parts(value)
            if tokens.mangled(value):
                problems.append(
                    (at, "a secret() value was changed by a filter: it can only be placed in text")
                )
                return value
            if parts is None:
                return value
            made = tokens.sensitive(parts)
            if short is not None and too_short(made):
                short.append((at, made.secret_names()))
            return made
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if tokens.parts(str(key)) is not None or tokens.mangled(str(key)):
                    problems.append(((*at, key), "a secret() value cannot be a key"))
                    continue
                out[key] = walk(item, (*at, key))
            return out
        if isinstance(value, list):
            return [walk(item, (*at, i)) for i, item in enumerate(value)]
        return value

    return walk(data, path), problems
