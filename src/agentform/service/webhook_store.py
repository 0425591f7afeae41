"""Webhook storage (API.md §8): integrations, attachments, signing keys, deliveries.

Owns the tables, their queries and the row -> answer mapping. Header values
are kept here and leave only on the wire of a delivery: an integration read
answers their digests.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from ..rules.webhooks import AttachmentSettings, header_digest
from ..webhooks import ALGORITHM, SigningKeyPair, generate_key_pair
from .db import Database, new_id, now_iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS signing_keys (
    organization_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
    key_id TEXT NOT NULL,
    private_pem TEXT NOT NULL,
    public_pem TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_integrations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    payload_version TEXT NOT NULL,
    headers TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (organization_id, name)
);
CREATE INDEX IF NOT EXISTS webhook_integrations_order
    ON webhook_integrations (organization_id, created_at, id);
CREATE TABLE IF NOT EXISTS webhook_attachments (
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
    integration_id TEXT NOT NULL REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    settings TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, integration_id)
);
CREATE INDEX IF NOT EXISTS webhook_attachments_by_integration
    ON webhook_attachments (integration_id, created_at, id);
CREATE INDEX IF NOT EXISTS webhook_attachments_by_agent
    ON webhook_attachments (agent_id, created_at, id);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    integration_id TEXT NOT NULL REFERENCES webhook_integrations(id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    notification TEXT NOT NULL,
    unwrap INTEGER NOT NULL,
    execution_id TEXT,
    batch_id TEXT,
    event_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_response_status INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_order
    ON webhook_deliveries (integration_id, created_at, id);
"""

# -- answers ---------------------------------------------------------------------


class HeaderDigest(BaseModel):
    digest: str


class Integration(BaseModel):
    id: str
    name: str
    url: str
    organizationId: str
    payloadVersion: str
    headers: dict[str, HeaderDigest]
    createdAt: str
    updatedAt: str


class Attachment(AttachmentSettings):
    agentId: str
    integrationId: str
    createdAt: str
    updatedAt: str


DeliveryStatus = Literal["pending", "delivered", "failed"]


class Delivery(BaseModel):
    id: str
    eventId: str
    event: str
    executionId: str | None = None
    batchId: str | None = None
    status: DeliveryStatus
    attempts: int
    lastResponseStatus: int | None = None
    lastError: str | None = None
    createdAt: str
    updatedAt: str


class SigningKey(BaseModel):
    keyId: str
    algorithm: str
    publicKeyPem: str


# -- signing keys ------------------------------------------------------------------


def signing_key(conn: sqlite3.Connection, organization_id: str) -> SigningKeyPair | None:
    row = conn.execute(
        "SELECT * FROM signing_keys WHERE organization_id = ?", (organization_id,)
    ).fetchone()
    if row is None:
        return None
    return SigningKeyPair(row["private_pem"], row["public_pem"], row["key_id"])


def ensure_signing_key(conn: sqlite3.Connection, organization_id: str) -> SigningKeyPair:
    """The organization's RSA-2048 key pair, made the first time it is needed.

    Made lazily (inside a write transaction, so once) rather than with the
    organization: generating one costs ~0.1 s of CPU, which an organization that
    never uses webhooks should not pay. Once made it never changes.
    """
    pair = signing_key(conn, organization_id)
    if pair is None:
        pair = generate_key_pair()
        conn.execute(
            "INSERT INTO signing_keys VALUES (?, ?, ?, ?, ?)",
            (organization_id, pair.key_id, pair.private_pem, pair.public_pem, now_iso()),
        )
    return pair


def public_keys(db: Database) -> list[str]:
    """The public keys of every organization (the example receiver tries each)."""
    with db.read() as conn:
        return [r[0] for r in conn.execute("SELECT public_pem FROM signing_keys")]


def public_signing_key(pair: SigningKeyPair) -> SigningKey:
    return SigningKey(keyId=pair.key_id, algorithm=ALGORITHM, publicKeyPem=pair.public_pem)


# -- integrations ------------------------------------------------------------------


def integration_from_row(row: sqlite3.Row) -> Integration:
    headers: dict[str, str] = json.loads(row["headers"])
    return Integration(
        id=row["id"],
        name=row["name"],
        url=row["url"],
        organizationId=row["organization_id"],
        payloadVersion=row["payload_version"],
        headers={
            name: HeaderDigest(digest=header_digest(row["id"], name, value))
            for name, value in headers.items()
        },
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def get_integration(
    conn: sqlite3.Connection, integration_id: str, organization_id: str
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM webhook_integrations WHERE id = ? AND organization_id = ?",
        (integration_id, organization_id),
    ).fetchone()
    return row


INSERT_INTEGRATION = "INSERT INTO webhook_integrations VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def insert_integration(
    conn: sqlite3.Connection,
    organization_id: str,
    name: str,
    url: str,
    payload_version: str,
    headers: Mapping[str, str],
) -> sqlite3.Row:
    integration_id, now = new_id(), now_iso()
    row = (integration_id, organization_id, name, url, payload_version, json.dumps(headers))
    conn.execute(INSERT_INTEGRATION, (*row, now, now))
    return conn.execute(
        "SELECT * FROM webhook_integrations WHERE id = ?", (integration_id,)
    ).fetchone()


_INTEGRATION_COLUMNS = {"name": "name", "url": "url", "headers": "headers"}


def update_integration(
    conn: sqlite3.Connection, integration_id: str, changes: Mapping[str, Any]
) -> sqlite3.Row:
    """Sets the given fields; `headers` replaces the whole map."""
    values = {
        _INTEGRATION_COLUMNS[k]: json.dumps(v) if k == "headers" else v for k, v in changes.items()
    }
    if values:
        sets = ", ".join(f"{column} = ?" for column in values)
        conn.execute(
            f"UPDATE webhook_integrations SET {sets}, updated_at = ? WHERE id = ?",
            (*values.values(), now_iso(), integration_id),
        )
    return conn.execute(
        "SELECT * FROM webhook_integrations WHERE id = ?", (integration_id,)
    ).fetchone()


def delete_integration(conn: sqlite3.Connection, integration_id: str) -> None:
    """Its attachments and deliveries go with it (the foreign keys cascade)."""
    conn.execute("DELETE FROM webhook_integrations WHERE id = ?", (integration_id,))


def integration_target(conn: sqlite3.Connection, integration_id: str) -> tuple[str, dict[str, str]]:
    """Where a delivery goes now: the URL and custom headers (values) of the integration."""
    row = conn.execute(
        "SELECT url, headers FROM webhook_integrations WHERE id = ?", (integration_id,)
    ).fetchone()
    return row["url"], json.loads(row["headers"])


# -- attachments -------------------------------------------------------------------


def attachment_from_row(row: sqlite3.Row) -> Attachment:
    settings = json.loads(row["settings"])
    return Attachment(
        **settings,
        agentId=row["agent_id"],
        integrationId=row["integration_id"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def put_attachment(
    conn: sqlite3.Connection,
    organization_id: str,
    agent_id: str,
    integration_id: str,
    settings: AttachmentSettings,
) -> sqlite3.Row:
    """Creates or replaces; a replaced attachment keeps its creation time."""
    now = now_iso()
    conn.execute(
        "INSERT INTO webhook_attachments VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (agent_id, integration_id) "
        "DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at",
        (
            new_id(),
            organization_id,
            agent_id,
            integration_id,
            settings.model_dump_json(),
            now,
            now,
        ),
    )
    return conn.execute(
        "SELECT * FROM webhook_attachments WHERE agent_id = ? AND integration_id = ?",
        (agent_id, integration_id),
    ).fetchone()


def delete_attachment(conn: sqlite3.Connection, agent_id: str, integration_id: str) -> bool:
    cursor = conn.execute(
        "DELETE FROM webhook_attachments WHERE agent_id = ? AND integration_id = ?",
        (agent_id, integration_id),
    )
    return cursor.rowcount > 0


def attachments_of_agent(
    conn: sqlite3.Connection, agent_id: str
) -> list[tuple[str, AttachmentSettings]]:
    """(integration id, settings) of every attachment of an agent, oldest first."""
    rows = conn.execute(
        "SELECT integration_id, settings FROM webhook_attachments WHERE agent_id = ? "
        "ORDER BY created_at, id",
        (agent_id,),
    )
    return [(r[0], AttachmentSettings.model_validate_json(r[1])) for r in rows]


# -- deliveries --------------------------------------------------------------------


def delivery_from_row(row: sqlite3.Row) -> Delivery:
    return Delivery(
        id=row["id"],
        eventId=row["event_id"],
        event=row["event"],
        executionId=row["execution_id"],
        batchId=row["batch_id"],
        status=row["status"],
        attempts=row["attempts"],
        lastResponseStatus=row["last_response_status"],
        lastError=row["last_error"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def insert_delivery(
    conn: sqlite3.Connection,
    organization_id: str,
    integration_id: str,
    event: str,
    notification: Mapping[str, Any],
    unwrap: bool,
    execution_id: str | None = None,
    batch_id: str | None = None,
    delivery_id: str | None = None,
) -> str:
    """A pending delivery of `notification` (an envelope without its event_id:
    each attempt gets a new one, and the first one is chosen now)."""
    delivery_id = delivery_id or new_id()
    now = now_iso()
    conn.execute(
        "INSERT INTO webhook_deliveries VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, NULL, NULL, ?, ?)",
        (
            delivery_id,
            organization_id,
            integration_id,
            event,
            json.dumps(notification),
            int(unwrap),
            execution_id,
            batch_id,
            new_id(),
            now,
            now,
        ),
    )
    return delivery_id


def get_delivery(conn: sqlite3.Connection, delivery_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM webhook_deliveries WHERE id = ?", (delivery_id,)
    ).fetchone()
    return row


def record_attempt(
    conn: sqlite3.Connection,
    delivery_id: str,
    status: DeliveryStatus,
    response_status: int | None,
    error: str | None,
    event_id: str,
) -> None:
    """One attempt done: its outcome and the event_id it carried (what eventId shows)."""
    conn.execute(
        "UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, "
        "last_response_status = ?, last_error = ?, event_id = ?, updated_at = ? WHERE id = ?",
        (status, response_status, error, event_id, now_iso(), delivery_id),
    )
