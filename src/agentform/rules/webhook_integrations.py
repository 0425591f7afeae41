"""Webhook integration rules (docs/service/contract.md#webhook-integrations), written
once for the service and the provisioner: the integration's name, URL, payload version
and custom headers, and the header digest a read answers instead of a header value.

Every check raises (inside pydantic) or returns a message that names the
offending field but never a header value: header values are secrets.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, StrictStr, StringConstraints, WithJsonSchema

from agentform.core.problems import rule_error
from agentform.rules.signatures import SIGNATURE_HEADER
from agentform.rules.values import NAME_SCHEMA, PlainName
from agentform.rules.webhook_targets import target_problem

INTEGRATIONS_PATH = "/webhook-integrations"
"""The API collection of webhook integrations."""

MAX_HEADERS = 20
MAX_HEADER_VALUE = 8192  # characters (ASCII: bytes) of one custom header's value
MAX_URL_LENGTH = 2048
SERVICE_HEADERS = frozenset({"content-type", "content-length", "host", SIGNATURE_HEADER.lower()})
"""Header names the service sets itself on a delivery (case-insensitive)."""
HOP_BY_HOP_HEADERS = frozenset(
    {"transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade", "expect"}
)
"""Headers that change how a request is framed or what a proxy forwards
(RFC 9110 §7.6.1, RFC 9112 §6): with the service's own Content-Length, a custom
`Transfer-Encoding: chunked` is the request-smuggling shape, and `Connection:
X-Service-Signature` would let a proxy drop the signature. `Proxy-*` too."""
REFUSED_HEADERS = SERVICE_HEADERS | HOP_BY_HOP_HEADERS
"""Header names a custom header may not have (case-insensitive), besides `Proxy-*`."""

PAYLOAD_VERSION = "v2"
PAYLOAD_VERSION_MESSAGE = "only the V2 payload format is accepted (payloadVersion 'v2')"

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# What an HTTP/1.1 field value may be on the wire (RFC 9110 §5.5, as h11 checks it):
# visible ASCII, inner spaces and tabs, no line break, no leading or trailing blank.
_FIELD_VALUE = re.compile(r"(?:[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*)?")


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an integration's URL, or None."""
    if len(url) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "must be an absolute http or https URL"
    if not parts.hostname:
        return "must be an absolute http or https URL with a host"
    if parts.username is not None or parts.password is not None:
        return "must not carry credentials; send them in a custom header instead"
    return connect_problem(url)


def connect_problem(url: str) -> str | None:
    """Why the sender (httpx) would not connect to `url`'s host and port as they are
    written, or None. Python's URL parser keeps a host of circled or full-width digits
    (`127.0.0.1` in NFKC) as a name, and some of its versions read full-width port
    digits; httpx refuses them (IDNA 2008): stored, every delivery of such a URL stayed
    pending. A URL is accepted only when what is checked is what is connected to."""
    host_port = urlsplit(url).netloc.rpartition("@")[2]
    after_host = host_port.rpartition("]")[2] if host_port.startswith("[") else host_port
    colon, port = after_host.rpartition(":")[1:]
    if colon and port and not (port.isascii() and port.isdigit()):
        return "cannot be connected to: its port must be written in ASCII digits"
    import httpx  # here: `validate` of a workspace without webhooks loads no HTTP client

    try:
        httpx.URL(url).host  # noqa: B018 - decoding an A-label may fail too
    except (httpx.InvalidURL, UnicodeError) as exc:  # idna's errors are UnicodeErrors
        return f"cannot be connected to ({exc})"
    return None


def header_name_problem(name: str) -> str | None:
    """Why `name` cannot be a custom header's name, or None."""
    if not _TOKEN.fullmatch(name):
        return (
            f"'{name}' is not a valid header name "
            "(letters, digits and !#$%&'*+-.^_`|~ only, at least one)"
        )
    if name.lower() in SERVICE_HEADERS:
        return f"'{name}' is set by the service and cannot be a custom header"
    if name.lower() in HOP_BY_HOP_HEADERS or name.lower().startswith("proxy-"):
        return f"'{name}' is a hop-by-hop or framing header and cannot be a custom header"
    return None


def is_sendable_header_value(value: str) -> bool:
    """Whether `value` can go on the wire as a header value (it is never shown)."""
    return _FIELD_VALUE.fullmatch(value) is not None


def header_problems(headers: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """Every problem of a custom header map, as (parameter, detail); values never shown.

    A value of None is not checked (a caller that cannot see it yet, like a
    provisioner before secrets are resolved).
    """
    problems: list[tuple[str, str]] = []
    if len(headers) > MAX_HEADERS:
        problems.append(("headers", f"at most {MAX_HEADERS} headers, got {len(headers)}"))
    seen: dict[str, str] = {}
    for name, value in headers.items():
        where = f"headers.{name}"
        problem = header_name_problem(name)
        if problem:
            problems.append((where, problem))
            continue
        if name.lower() in seen:
            problems.append((where, f"'{name}' repeats '{seen[name.lower()]}' (names ignore case)"))
        seen[name.lower()] = name
        if value is not None and len(value) > MAX_HEADER_VALUE:
            problems.append(
                (where, f"the value must be at most {MAX_HEADER_VALUE} characters (not shown)")
            )
        elif value is not None and not is_sendable_header_value(value):
            problems.append(
                (
                    where,
                    "the value must be printable ASCII, without line breaks "
                    "or leading or trailing blanks (the value is not shown)",
                )
            )
    return problems


def header_digest(integration_id: str, name: str, value: str) -> str:
    """`sha256:HEX` of `integrationId:NAME:VALUE`
    (docs/service/contract.md#webhook-integrations): what reads answer."""
    data = f"{integration_id}:{name}:{value}".encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


# -- pydantic types for both halves --------------------------------------------


def _check_url(url: str) -> str:
    problem = url_problem(url) or target_problem(url)
    if problem:
        raise rule_error(problem)
    return url


def _check_payload_version(version: str) -> str:
    if version != PAYLOAD_VERSION:
        raise rule_error(PAYLOAD_VERSION_MESSAGE)
    return version


def _check_headers(headers: dict[str, str]) -> dict[str, str]:
    problems = header_problems(headers)
    if problems:
        # Each problem at its header (`headers.X-A`), or at the map itself.
        at = [(tuple(p.split(".", 1)[1:]), d) for p, d in problems]
        raise rule_error("; ".join(f"{p}: {d}" for p, d in problems), at)
    return headers


IntegrationName = Annotated[
    StrictStr, StringConstraints(min_length=1, max_length=200), PlainName, NAME_SCHEMA
]
IntegrationUrl = Annotated[
    StrictStr,
    AfterValidator(_check_url),
    WithJsonSchema(
        {
            "type": "string",
            "format": "uri",
            "maxLength": MAX_URL_LENGTH,
            "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\s]+",
        }
    ),
]
PayloadVersion = Annotated[
    StrictStr,
    AfterValidator(_check_payload_version),
    WithJsonSchema({"type": "string", "enum": [PAYLOAD_VERSION]}),
]
HeaderMap = Annotated[
    dict[StrictStr, StrictStr],
    AfterValidator(_check_headers),
    WithJsonSchema(
        {
            "type": "object",
            "propertyNames": {"pattern": f"^{_TOKEN.pattern}$"},
            "additionalProperties": {
                "type": "string",
                "pattern": f"^{_FIELD_VALUE.pattern}$",
                "maxLength": MAX_HEADER_VALUE,
            },
            "maxProperties": MAX_HEADERS,
            "description": "Custom headers NAME: VALUE; Content-Type, Content-Length, Host, "
            "X-Service-Signature, the hop-by-hop and framing headers (Transfer-Encoding, "
            "Connection, Keep-Alive, TE, Trailer, Upgrade, Expect, Proxy-*) are refused, "
            "and names differing only in case too.",
        }
    ),
]
"""Custom headers as written (service requests); the provisioner checks its
sensitive values with `header_problems`. A model holding one sets
`hide_input_in_errors=True`, or pydantic's error text would show the values."""
