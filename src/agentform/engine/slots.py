"""Slots: how a plan holds values it cannot or must not hold, and how apply fills them.

At plan time `seal` turns the sentinels kinds wrote (kinds/slots.py) into public
placeholders, "(known after create)" and "(sensitive)", plus `Slot`s saying what
goes where. At apply time `fill` puts in the ids earlier changes created and the
sensitive values taken from the workspace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentform.core.errors import AgentformError
from agentform.core.frozen import thaw
from agentform.kinds.model import ApiCall, Slot
from agentform.kinds.slots import KNOWN_AFTER_CREATE, OWN_ID, SENTINEL, placeholder, public

_TOKEN = re.compile("\x01([0-9]+)\x01")


def _slot(kind: str, ref: str, at: tuple[str | int, ...]) -> Slot:
    return Slot(at=at, idOf=ref) if kind == "id" else Slot(at=at, sensitive=ref)


def _seal_path(path: str, own: str) -> tuple[str, list[Slot]]:
    found: list[re.Match[str]] = []

    def token(match: re.Match[str]) -> str:  # a sentinel's reference may hold '/'
        found.append(match)
        return f"\x01{len(found) - 1}\x01"

    slots: list[Slot] = []
    out = []
    for index, segment in enumerate(SENTINEL.sub(token, path).split("/")):
        whole = _TOKEN.fullmatch(segment)
        if whole:
            match = found[int(whole.group(1))]
            slots.append(_slot(match.group(1), match.group(2), ("path", index)))
            segment = placeholder(match.group(1))
        elif segment == OWN_ID:
            slots.append(Slot(at=("path", index), idOf=own))
            segment = KNOWN_AFTER_CREATE
        assert "\x01" not in segment, "a sentinel must be a whole path segment"
        out.append(segment)
    return "/".join(out), slots


def _seal_value(value: Any, at: tuple[str | int, ...], slots: list[Slot]) -> Any:
    if isinstance(value, str):
        match = SENTINEL.fullmatch(value)
        if match:
            slots.append(_slot(match.group(1), match.group(2), at))
            return placeholder(match.group(1))
        assert not SENTINEL.search(value), "a sentinel must be a whole value"
        return value
    if isinstance(value, dict):
        return {k: _seal_value(v, (*at, k), slots) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_seal_value(v, (*at, i), slots) for i, v in enumerate(value)]
    return value


def seal(call: ApiCall, own: str) -> ApiCall:
    """The call with placeholders where its sentinels were, and slots for them."""
    path, slots = _seal_path(call.path, own)
    body = _seal_value(call.body, ("body",), slots) if call.body is not None else None
    if not slots:
        return call
    return call.but(path=path, body=body, slots=(*call.slots, *slots))


def shown(value: Any) -> Any:
    """A value for people (before, after, field changes): placeholders for sentinels."""
    if isinstance(value, str):
        return public(value)
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown(v) for v in value]
    return value


def ids_needed(call: ApiCall) -> set[str]:
    return {s.idOf for s in call.slots if s.idOf is not None}


def fill(call: ApiCall, created: Mapping[str, str], values: Mapping[str, Any]) -> tuple[str, Any]:
    """The path and body to send: slots filled with created ids and sensitive values."""
    if not call.slots:
        return call.path, call.body
    segments = call.path.split("/")
    body = thaw(call.body)
    for slot in call.slots:
        if slot.idOf is not None:
            if slot.idOf not in created:
                raise AgentformError(f"the id of {slot.idOf} is not known: it was not created")
            value = created[slot.idOf]
        else:
            assert slot.sensitive is not None
            if slot.sensitive not in values:
                raise AgentformError(f"the workspace has no value for {slot.sensitive}")
            value = values[slot.sensitive]
        if slot.at[0] == "path":
            segments[int(slot.at[1])] = value
        else:
            _set(body, slot.at[1:], value)
    return "/".join(segments), body


def _set(target: Any, at: tuple[str | int, ...], value: str) -> None:
    for part in at[:-1]:
        target = target[part]
    target[at[-1]] = value
