"""When a call fails, is what it was for already so?

Another apply may have made the same change (two pipelines at once), or this
apply's own earlier attempt may have landed after its answer was lost. Each
kind of call has a goal that can be read back: a create, the object as asked
(found as its kind finds it, compared as its kind compares it); a delete, the
object gone; a member change, the members in or out; an update (PATCH or PUT),
the fields as sent; an action (a batch's cancel), what its kind says it leaves
(kinds/base.py `action_goal`). Calls that are not safe to send twice (creates,
actions) are sent again only after that read shows their goal not reached.

When a failed call's goal is found reached, the change goes on, and it is
reported "already in place" — or "succeeded" when this apply's own earlier
attempt may be what landed. An object found under the name that is not what was
asked is a conflict, never adopted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentform.api.retries import Lookup
from agentform.core.errors import ApiError, Conflict
from agentform.kinds import Kind
from agentform.kinds.keys import Key
from agentform.kinds.model import ApiCall


@dataclass(frozen=True)
class Reached:
    answer: Any  # what the call would have answered (a create: the object found)
    ours: bool  # this apply's own earlier attempt may be what made it so


async def adopted(api: Any, kind: Kind, key: Key, body: Any) -> Any:
    """The object a create of `key` made (found as the kind finds it), or None;
    Conflict when one exists and is not what `body` asked for."""
    found = await kind.find_created(api, key, body)
    if found is not None and isinstance(body, dict):
        differing = kind.created_differs(body, found)
        if differing:
            raise Conflict(
                f"{kind.label} '{key}' exists already and differs from the files "
                f"({', '.join(differing)}); nothing was changed"
            )
    return found


async def reached(
    api: Any, kind: Kind, key: Key, call: ApiCall, path: str, body: Any, error: ApiError
) -> Reached | None:
    """The goal of `call` (sent to `path` with `body`, failed with `error`), when it
    is reached.

    A call refused as bad (400, 401, 403) at its only attempt made nothing; any
    other failure may hide a goal reached (an earlier attempt that landed, or
    another run). A read that fails here leaves the call failed."""
    status = error.status
    if status in (400, 401, 403) and not error.retried:
        return None
    ours = error.retried or status is None or status >= 500
    try:
        if call.creates:
            found = await adopted(api, kind, key, body)
            return Reached(found, ours) if found is not None else None
        if (action := kind.action_goal(call, path)) is not None:
            current = await kind.read_back(api, action.path)
            return Reached(current, ours) if action.done(current) else None
        if call.method == "DELETE" and body is None:
            if status == 404:
                return Reached(None, ours=error.retried)
            return Reached(None, ours) if await kind.read_back(api, path) is None else None
        if path.endswith("/members") and isinstance(body, dict):
            members = {m["id"] for m in await api.list_all(path)}
            wanted = set(body.get("profileIds", []))
            done = wanted <= members if call.method == "POST" else not (wanted & members)
            return Reached(None, ours) if done else None
        if call.method in ("PATCH", "PUT") and isinstance(body, dict):
            current = await kind.read_back(api, path)
            if current is not None and not kind.created_differs(body, current):
                return Reached(current, ours)
    except ApiError:
        return None
    return None


def earlier_attempt(
    api: Any, kind: Kind, key: Key, call: ApiCall, path: str, body: Any
) -> Lookup | None:
    """For a call that is not safe to send twice (a create, an action such as a
    batch's cancel): the lookup the client runs before sending it again, which
    answers what an earlier attempt that landed would have answered, or None
    (nothing landed: it is sent again). None for a call without one (the client
    then never sends it again after it may have landed)."""
    if call.creates:

        async def created() -> Any:
            return await adopted(api, kind, key, body)

        return created
    if (action := kind.action_goal(call, path)) is not None:

        async def acted() -> Any:
            current = await kind.read_back(api, action.path)
            # (a batch gone is `done` but answers None: the action is sent again
            # and its 404 is then read back as the goal reached)
            return current if action.done(current) else None

        return acted
    return None
