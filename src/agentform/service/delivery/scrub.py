"""An answer's first bytes, with the integration's header values taken out before they
are stored (docs/service/choices.md#webhooks).

A receiver may echo what it was sent: an error page quoting `X-Token`, a JSON error
repeating the `Authorization` it refused. The head of every answer is kept with its
attempt and shown to a read key (`GET /agentform/v1/webhook-deliveries`, `agentform
webhook deliveries`), so each custom header's value is replaced by `[redacted]` in
every form a receiver is likely to write it back in: as sent, JSON-escaped (ASCII or
not), URL-encoded, HTML-escaped, and each of its space-separated parts (the token of
`Bearer TOKEN`). The head is cut at `HEAD_BYTES`, so a value cut short at its end
is taken out too. Parts shorter than `MIN_SECRET` are left: a value of three
characters is no secret worth hiding, and replacing every `on` would hide the answer.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
MIN_SECRET = 4


def forms(value: str) -> set[str]:
    """Every form of `value` (and of each of its parts) a receiver may echo."""
    found: set[str] = set()
    for part in {value, *value.split()}:
        if len(part) < MIN_SECRET:
            continue
        found |= {
            part,
            json.dumps(part)[1:-1],
            json.dumps(part, ensure_ascii=False)[1:-1],
            quote(part, safe=""),
            quote_plus(part, safe=""),
            html.escape(part),
            html.escape(part, quote=False),
        }
    return found


def scrub(head: str, secrets: Iterable[str]) -> str:
    """`head` with every form of every secret replaced, longest first."""
    every = sorted({f for secret in secrets for f in forms(secret)}, key=len, reverse=True)
    for form in every:
        head = head.replace(form, REDACTED)
    for form in every:  # a form the cut at the head's end left unfinished
        for length in range(len(form) - 1, MIN_SECRET - 1, -1):
            if head.endswith(form[:length]):
                return head[:-length] + REDACTED
    return head
