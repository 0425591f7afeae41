"""The secrets registry of one run: the last line of defence behind the type.

`Secrets` holds the values of the declared secrets (and the previous values
learned from the live workspace after a rotation), the API key, and anything
else sensitive. It marks live values that hold a known value as `Sensitive`
(core/sensitive.py, the type that keeps values out of every view), and scrubs
every known value, in every encoding it can take, from text that leaves the
process anyway (cassettes, crash logs, error messages of a service).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from markupsafe import escape

from agentform.core.sensitive import MASK, Part, SecretRef, Sensitive

API_KEY_VARIABLE = "AGENTFORM_API_KEY"
"""The environment variable holding the API key (a workspace file never reads it)."""

MIN_SEARCHED = 8  # shorter values are masked by type, but never searched for in text


class Secrets:
    """The sensitive values of one run: marks live values, scrubs text."""

    MASK = MASK

    def __init__(self) -> None:
        self.values: dict[str, str] = {}  # NAME -> current value
        self.marking: set[str] = set()  # the NAMEs of secret() variables
        self.previous: dict[str, set[str]] = {}  # NAME -> values it had before
        self.unset: set[str] = set()  # NAMEs used in the files but not set
        self.others: set[str] = set()  # API keys and other values with no NAME
        self._forms: dict[bool, list[str]] | None = None  # plain included or not -> forms
        self._known: list[tuple[str, SecretRef]] | None = None

    def add(self, name: str, value: str | Sensitive, marks: bool = True) -> None:
        """Registers a named sensitive value: a secret() variable, which also marks
        the live values that hold it, or (`marks` False) a value a kind names for its
        slots (a header value written as it is), which is scrubbed but marks nothing
        (a header `X-Team: payments` does not make every "payments" sensitive)."""
        if isinstance(value, Sensitive):
            if not value.resolved:
                return
            value = value.reveal()
        self.values[name] = value
        if marks:
            self.marking.add(name)
        self._changed()

    def add_previous(self, name: str, value: str) -> None:
        if value and value != self.values.get(name):
            self.previous.setdefault(name, set()).add(value)
            self._changed()

    def add_other(self, value: str | None) -> None:
        if value:
            self.others.add(value)
            self._changed()

    def _changed(self) -> None:
        self._forms = self._known = None

    def known(self) -> list[tuple[str, SecretRef]]:
        """Every named value that marks, with what it is, longest first."""
        if self._known is None:
            self._known = self._pairs()
        return self._known

    def _pairs(self) -> list[tuple[str, SecretRef]]:
        pairs = [(v, SecretRef(n)) for n, v in self.values.items() if v and n in self.marking]
        pairs += [(v, SecretRef(n, True)) for n, vs in self.previous.items() for v in vs]
        return sorted(pairs, key=lambda p: (-len(p[0]), p[1].previous, p[1].name))

    def everything(self, plain: bool = True) -> set[str]:
        """Every value scrubbed from text: marking or not (`plain` False: only the
        marking ones), current or earlier."""
        earlier = {v for vs in self.previous.values() for v in vs}
        current = {v for n, v in self.values.items() if v and (plain or n in self.marking)}
        return current | earlier | self.others

    # -- marking ---------------------------------------------------------------
    def split(self, text: str) -> tuple[Part, ...] | None:
        """`text` as parts when it holds a known value (whole, or searched for when
        long enough), else None."""
        for value, ref in self.known():
            if text == value:
                return (ref,)
        searched = [(v, r) for v, r in self.known() if len(v) >= MIN_SEARCHED and v in text]
        if not searched:
            return None
        pattern = re.compile("|".join(re.escape(v) for v, _ in searched))
        refs = dict(searched)
        parts: list[Part] = []
        at = 0
        for match in pattern.finditer(text):
            if match.start() > at:
                parts.append(text[at : match.start()])
            parts.append(refs[match.group(0)])
            at = match.end()
        if at < len(text):
            parts.append(text[at:])
        return tuple(parts)

    def mark(self, value: Any) -> Any:
        """`value` (JSON-like) with each string that holds a known value made Sensitive."""
        if not self.marking and not self.previous:
            return value  # no secret() in the files: nothing to mark
        if isinstance(value, str):
            parts = self.split(value)
            return value if parts is None else Sensitive(value, parts)
        if isinstance(value, dict):
            return {k: self.mark(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mark(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.mark(v) for v in value)
        return value

    def learn(self, live: Any, desired: Any, sets: tuple[str, ...] = ()) -> Any:
        """`live` with every value at a place `desired` holds a Sensitive marked
        sensitive too: the live value of a secret field is an earlier value of it.
        The secrets' earlier values are learned where the live text fits how the
        field is written (`token {{ secret("T") }}` against `token OLD`). `sets`:
        keys of fields that are sets, whose elements do not pair by position."""
        if isinstance(desired, Sensitive):
            if isinstance(live, str):
                return self._learned(live, desired)
            return live
        if isinstance(desired, dict) and isinstance(live, dict):
            return {k: v if k in sets else self.learn(v, desired.get(k)) for k, v in live.items()}
        if isinstance(desired, list | tuple) and isinstance(live, list | tuple):
            learned = [self.learn(v, d) for v, d in zip(live, desired, strict=False)]
            return type(live)([*learned, *live[len(desired) :]])
        return live

    def _learned(self, live: str, desired: Sensitive) -> Sensitive:
        if desired.parts is not None:
            pattern = "".join(
                f"(?P<s{i}>.*?)" if isinstance(p, SecretRef) else re.escape(p)
                for i, p in enumerate(desired.parts)
            )
            match = re.fullmatch(pattern, live, re.DOTALL)
            if match:
                for i, p in enumerate(desired.parts):
                    if isinstance(p, SecretRef):
                        self.add_previous(p.name, match.group(f"s{i}"))
        if live and live != desired:
            self.others.add(live)  # scrubbed whole, even when it does not fit
            self._changed()
        return Sensitive(live, self.split(live))

    # -- scrubbing -------------------------------------------------------------
    def forms(self, plain: bool = True) -> list[str]:
        """Every searchable form of every known value, longest first."""
        if self._forms is None:
            self._forms = {}
        if plain not in self._forms:
            found: set[str] = set()
            for value in self.everything(plain):
                if len(value) >= MIN_SEARCHED:
                    found.update(encodings(value))
            self._forms[plain] = sorted((f for f in found if f), key=len, reverse=True)
        return self._forms[plain]

    def scrub(self, text: str, mask: str = MASK) -> str:
        """`text` with every known value, in any encoding, replaced by `mask`: for
        records of the run (cassettes, logs, error messages)."""
        return self._replaced(text, mask, plain=True)

    def scrub_shown(self, text: str, mask: str = MASK) -> str:
        """`text` scrubbed of the marking values only, for what shows or holds the
        workspace's data (plans, saved plans, reports, exports): a value written
        plainly (a header `X-Team: payments`) is masked where it is a header value,
        by its type and field, and searching for it would also mask, and in a saved
        plan change, every other "payments" (a metadataFilter value)."""
        return self._replaced(text, mask, plain=False)

    def _replaced(self, text: str, mask: str, plain: bool) -> str:
        forms = self.forms(plain)
        if not forms or not text:
            return text
        return _pattern(tuple(forms)).sub(mask, text)

    def scrub_bytes(self, data: bytes, mask: bytes = MASK.encode()) -> bytes:
        forms = self.forms()
        if not forms or not data:
            return data
        for form in forms:
            data = data.replace(form.encode("utf-8"), mask)
        return data

    def is_sensitive(self, text: str) -> bool:
        return bool(self.forms()) and _pattern(tuple(self.forms())).search(text) is not None


_patterns: dict[tuple[str, ...], re.Pattern[str]] = {}


def _pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    if forms not in _patterns:
        _patterns.clear()
        _patterns[forms] = re.compile("|".join(re.escape(f) for f in forms))
    return _patterns[forms]


def encodings(value: str) -> set[str]:
    """The forms `value` can take in a request, a response, a cassette, a log or a
    page: raw, JSON-escaped (ASCII or not, either hex case), YAML- and Python-escaped,
    URL- and form-encoded, Base64 (standard and URL-safe, at each alignment), and each
    of those HTML-escaped as Jinja2 escapes it."""
    out = {value}
    for ascii_only in (True, False):
        escaped = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
        out |= {escaped, _upper_hex(escaped)}
    out |= {_yaml_escaped(value), repr(value)[1:-1], ascii(value)[1:-1]}
    out.add(value.encode("unicode_escape").decode())  # Python's escapes (tracebacks)
    out |= {quote(value, safe=""), quote(value), quote_plus(value)}
    out |= {_upper_hex(quote(value, safe="")).lower()}
    out |= set(base64_fragments(value.encode("utf-8")))
    # Any of those inside an HTML page (the console's templates, `test --html`): escaped.
    out |= {str(escape(form)) for form in list(out)}
    return out


def _upper_hex(text: str) -> str:
    return re.sub(r"\\u([0-9a-f]{4})", lambda m: "\\u" + m.group(1).upper(), text)


def _yaml_escaped(value: str) -> str:
    out = []
    for ch in value:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02X}")
        elif code < 0x10000:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return "".join(out)


def base64_fragments(data: bytes) -> Iterable[str]:
    """The Base64 characters that stand for `data` wherever it sits in a longer
    encoded text: for each of the three alignments, the characters that depend
    on `data`'s bytes alone."""
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode()
        start = -(-8 * offset // 6)
        end = (8 * (offset + len(data))) // 6
        fragment = encoded[start:end]
        if len(fragment) >= MIN_SEARCHED:
            yield fragment
            yield fragment.replace("+", "-").replace("/", "_")
