"""Webhook integrations, their attachments to agents, and signing keys
(docs/service/contract.md#webhook-integrations).

Owns `webhook_integrations`, `webhook_attachments` and `signing_keys` (made
by migration 004). Header values are kept here and leave only on the wire of
a delivery: every read answers their digests.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentform.rules.signatures import ALGORITHM, SigningKeyPair, generate_key_pair
from agentform.rules.webhook_attachments import AttachmentSettings
from agentform.rules.webhook_integrations import header_digest
from agentform.service.errors import ServiceError, not_found
from agentform.service.models.pages import Page
from agentform.service.models.webhooks import Attachment, HeaderDigest, Integration, SigningKey
from agentform.service.store.common import fetch_owned, fetch_row, stored_json, unique_name
from agentform.service.store.database import Conn, Database, new_id
from agentform.service.store.pages import PageParams, PageRequest, read_page

T = TypeVar("T")


# -- integrations ------------------------------------------------------------------

LABEL = "webhook integration"


def integration_from_row(row: sqlite3.Row) -> Integration:
    headers: dict[str, str] = stored_json(row["headers"])
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


def _owned(conn: Conn, org_id: str, integration_id: object) -> sqlite3.Row:
    return fetch_owned(conn, "webhook_integrations", integration_id, org_id, LABEL)


def list_integrations(conn: Conn, org_id: str, request: PageRequest) -> Page[Integration]:
    return read_page(
        conn,
        "webhook_integrations",
        "organization_id = ?",
        [org_id],
        request,
        integration_from_row,
    )


def get_integration(conn: Conn, org_id: str, integration_id: object) -> Integration:
    return integration_from_row(_owned(conn, org_id, integration_id))


def create_integration(
    conn: Conn,
    org_id: str,
    name: str,
    url: str,
    payload_version: str,
    headers: Mapping[str, str],
) -> Integration:
    integration_id, now = new_id(), conn.now_iso()
    with unique_name(LABEL, name):
        conn.execute(
            "INSERT INTO webhook_integrations VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (integration_id, org_id, name, url, payload_version, json.dumps(headers), now, now),
        )
    return integration_from_row(fetch_row(conn, "webhook_integrations", integration_id))


def update_integration(
    conn: Conn, org_id: str, integration_id: object, changes: Mapping[str, Any]
) -> Integration:
    """Sets the given fields (`name`, `url`, `headers`); `headers` replaces the whole map."""
    row = _owned(conn, org_id, integration_id)
    values = {k: json.dumps(v) if k == "headers" else v for k, v in changes.items()}
    if values:
        assert set(values) <= {"name", "url", "headers"}
        sets = ", ".join(f"{column} = ?" for column in values)
        with unique_name(LABEL, changes.get("name")):
            conn.execute(
                f"UPDATE webhook_integrations SET {sets}, updated_at = ? WHERE id = ?",
                (*values.values(), conn.now_iso(), row["id"]),
            )
    return integration_from_row(fetch_row(conn, "webhook_integrations", row["id"]))


def delete_integration(conn: Conn, org_id: str, integration_id: object) -> None:
    """Its attachments and deliveries go with it (the foreign keys cascade)."""
    row = _owned(conn, org_id, integration_id)
    conn.execute("DELETE FROM webhook_integrations WHERE id = ?", (row["id"],))


def owned_integration_id(conn: Conn, org_id: str, integration_id: object) -> str:
    """The id of the organization's integration, else 404."""
    return str(_owned(conn, org_id, integration_id)["id"])


def integration_target(conn: Conn, integration_id: str) -> tuple[str, dict[str, str]] | None:
    """Where a delivery goes now: the integration's URL and custom headers (with
    their values), or None when the integration is gone."""
    row = conn.execute(
        "SELECT url, headers FROM webhook_integrations WHERE id = ?", (integration_id,)
    ).fetchone()
    return None if row is None else (row["url"], stored_json(row["headers"]))


# -- attachments -------------------------------------------------------------------


def attachment_from_row(row: sqlite3.Row) -> Attachment:
    return Attachment(
        **stored_json(row["settings"]),
        agentId=row["agent_id"],
        integrationId=row["integration_id"],
        createdAt=row["created_at"],
        updatedAt=row["updated_at"],
    )


def integration_page(
    conn: Conn,
    org_id: str,
    integration_id: object,
    table: str,
    paging: PageParams,
    convert: Callable[[sqlite3.Row], T],
) -> Page[T]:
    """A page of the rows of `table` that belong to the organization's integration."""
    owned = owned_integration_id(conn, org_id, integration_id)
    return read_page(conn, table, "integration_id = ?", [owned], PageRequest(paging), convert)


def list_integration_attachments(
    conn: Conn, org_id: str, integration_id: object, paging: PageParams
) -> Page[Attachment]:
    return integration_page(
        conn, org_id, integration_id, "webhook_attachments", paging, attachment_from_row
    )


def list_agent_attachments(
    conn: Conn, org_id: str, agent_id: object, paging: PageParams
) -> Page[Attachment]:
    agent = fetch_owned(conn, "agents", agent_id, org_id, "agent")
    return read_page(
        conn,
        "webhook_attachments",
        "agent_id = ?",
        [agent["id"]],
        PageRequest(paging),
        attachment_from_row,
    )


def _pair(conn: Conn, org_id: str, agent_id: object, integration_id: object) -> tuple[str, str]:
    agent = fetch_owned(conn, "agents", agent_id, org_id, "agent")
    return str(agent["id"]), owned_integration_id(conn, org_id, integration_id)


def put_attachment(
    conn: Conn,
    org_id: str,
    agent_id: object,
    integration_id: object,
    settings: AttachmentSettings,
) -> Attachment:
    """Creates or replaces; a replaced attachment keeps its creation time."""
    agent, integration = _pair(conn, org_id, agent_id, integration_id)
    now = conn.now_iso()
    conn.execute(
        "INSERT INTO webhook_attachments VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (agent_id, integration_id) "
        "DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at",
        (new_id(), org_id, agent, integration, settings.model_dump_json(), now, now),
    )
    row = conn.execute(
        "SELECT * FROM webhook_attachments WHERE agent_id = ? AND integration_id = ?",
        (agent, integration),
    ).fetchone()
    return attachment_from_row(row)


def delete_attachment(conn: Conn, org_id: str, agent_id: object, integration_id: object) -> None:
    agent, integration = _pair(conn, org_id, agent_id, integration_id)
    deleted = conn.execute(
        "DELETE FROM webhook_attachments WHERE agent_id = ? AND integration_id = ?",
        (agent, integration),
    )
    if not deleted.rowcount:
        raise not_found("attachment (this integration is not attached to this agent)")


def attachments_of_agent(conn: Conn, agent_id: str) -> list[tuple[str, AttachmentSettings]]:
    """(integration id, settings) of every attachment of an agent, oldest first."""
    rows = conn.execute(
        "SELECT integration_id, settings FROM webhook_attachments WHERE agent_id = ? "
        "ORDER BY created_at, id",
        (agent_id,),
    )
    return [(r[0], AttachmentSettings.model_validate_json(r[1])) for r in rows]


# -- signing keys ------------------------------------------------------------------


def signing_key(conn: Conn, org_id: str) -> SigningKeyPair | None:
    row = conn.execute("SELECT * FROM signing_keys WHERE organization_id = ?", (org_id,)).fetchone()
    if row is None:
        return None
    return SigningKeyPair(row["private_pem"], row["public_pem"], row["key_id"])


def ensure_signing_key(conn: Conn, org_id: str) -> SigningKeyPair:
    """The organization's RSA-2048 key pair, made the first time it is needed.

    Made lazily (in a write transaction, so exactly once) rather than with the
    organization: one costs ~0.1 s of CPU, which an organization that never
    uses webhooks need not pay. Once made it never changes.
    """
    pair = signing_key(conn, org_id)
    if pair is None:
        if conn.execute("SELECT 1 FROM organizations WHERE id = ?", (org_id,)).fetchone() is None:
            raise ServiceError(404, "organization not found")
        pair = generate_key_pair()
        conn.execute(
            "INSERT INTO signing_keys VALUES (?, ?, ?, ?, ?)",
            (org_id, pair.key_id, pair.private_pem, pair.public_pem, conn.now_iso()),
        )
    return pair


def public_signing_key(pair: SigningKeyPair) -> SigningKey:
    return SigningKey(keyId=pair.key_id, algorithm=ALGORITHM, publicKeyPem=pair.public_pem)


def public_keys(db: Database) -> list[str]:
    """The public keys of every organization (the example receiver tries each)."""
    with db.read() as conn:
        return [r[0] for r in conn.execute("SELECT public_pem FROM signing_keys")]
