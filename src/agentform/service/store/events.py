"""Events: what happened to executions and batches
(docs/service/contract.md#events-and-payloads), in the order appended.

`append_event` records an event inside the caller's write transaction, so the
state change and its event commit together. Subscribers (`event_subscriber`)
run in that same transaction for every appended event: that is where work an
event causes (a webhook delivery, say) is scheduled, so it commits with it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentform.service.store.common import stored_json
from agentform.service.store.database import Conn, new_id


@dataclass(frozen=True)
class Event:
    id: str
    seq: int
    organization_id: str
    agent_id: str
    event: str
    payload: dict[str, Any] = field(hash=False)
    metadata: dict[str, str] = field(hash=False)
    execution_id: str | None
    batch_id: str | None
    created_at: str


EventSubscriber = Callable[[Conn, Event], None]
_subscribers: dict[str, EventSubscriber] = {}


def event_subscriber(fn: EventSubscriber) -> EventSubscriber:
    """Registers `fn(conn, event)` to run for every appended event, in its transaction."""
    _subscribers[f"{fn.__module__}.{fn.__qualname__}"] = fn
    return fn


def event_from_row(row: sqlite3.Row) -> Event:
    return Event(
        id=row["id"],
        seq=row["seq"],
        organization_id=row["organization_id"],
        agent_id=row["agent_id"],
        event=row["event"],
        payload=stored_json(row["payload"]),
        metadata=stored_json(row["metadata"]),
        execution_id=row["execution_id"],
        batch_id=row["batch_id"],
        created_at=row["created_at"],
    )


def append_event(
    conn: Conn,
    *,
    organization_id: str,
    agent_id: str,
    event: str,
    payload: Mapping[str, Any],
    execution_id: str | None = None,
    batch_id: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> str:
    """Records an event in the caller's transaction; returns its id."""
    event_id = new_id()
    cursor = conn.execute(
        "INSERT INTO events (id, organization_id, agent_id, execution_id, batch_id, event, "
        "payload, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            event_id,
            organization_id,
            agent_id,
            execution_id,
            batch_id,
            event,
            json.dumps(dict(payload)),
            json.dumps(dict(metadata or {})),
            conn.now_iso(),
        ),
    )
    if _subscribers:
        row = conn.execute("SELECT * FROM events WHERE seq = ?", (cursor.lastrowid,)).fetchone()
        recorded = event_from_row(row)
        for subscriber in list(_subscribers.values()):
            subscriber(conn, recorded)
    return event_id


def list_events(
    conn: Conn,
    *,
    organization_id: str | None = None,
    agent_id: str | None = None,
    execution_id: str | None = None,
    batch_id: str | None = None,
) -> list[Event]:
    """Events matching every filter given, in the order they were appended."""
    where, args = ["1"], []
    for column, value in (
        ("organization_id", organization_id),
        ("agent_id", agent_id),
        ("execution_id", execution_id),
        ("batch_id", batch_id),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    rows = conn.execute(f"SELECT * FROM events WHERE {' AND '.join(where)} ORDER BY seq", args)
    return [event_from_row(r) for r in rows]
