"""Organizations and their API keys; the key lookup every request makes.

Keys are stored hashed (SHA-256): the database never holds a usable key. The
lookup is served from an in-memory map of hash -> key, loaded on first use and
reloaded after every commit that changes a key or an organization, so
authenticating a request costs a dict lookup and never touches SQLite (no
blocking call on the event loop). One service process per database file: a
key changed behind the service's back by another process is not seen.
"""

from __future__ import annotations

import hashlib
import re
import threading
import uuid
from dataclasses import dataclass

from agentform.service.store.database import Conn, Database

KEYS_CHANGED = "api_keys"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class ApiKey:
    """A valid (not revoked) key and the organization it belongs to."""

    id: str
    name: str
    role: str
    organization_id: str
    organization_name: str


class KeyCache:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._by_hash: dict[str, ApiKey] | None = None
        self._lock = threading.Lock()
        db.listen(KEYS_CHANGED, self.reload)

    def reload(self) -> None:
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT k.id, k.name, k.role, k.key_hash, o.id AS org_id, o.name AS org_name "
                "FROM api_keys k JOIN organizations o ON o.id = k.organization_id "
                "WHERE NOT k.revoked"
            ).fetchall()
        by_hash = {
            r["key_hash"]: ApiKey(r["id"], r["name"], r["role"], r["org_id"], r["org_name"])
            for r in rows
        }
        with self._lock:
            self._by_hash = by_hash

    def get(self, key: str) -> ApiKey | None:
        if self._by_hash is None:
            self.reload()
        assert self._by_hash is not None
        return self._by_hash.get(hash_key(key))

    def get_by_id(self, key_id: str) -> ApiKey | None:
        """The valid key of this id (a console session's key), or None once revoked."""
        if self._by_hash is None:
            self.reload()
        assert self._by_hash is not None
        return next((k for k in self._by_hash.values() if k.id == key_id), None)


@dataclass(frozen=True)
class ServiceUser:
    """The user an organization's keys act as, and who made its agents
    (docs/service/contract.md#authentication-and-organizations, #agents-and-profiles).

    Derived from the organization, so it is the same on every start and needs no row."""

    id: str
    email: str


def service_user_id(org_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentform-service-user:{org_id}"))


def service_user(org_id: str, org_name: str) -> ServiceUser:
    slug = re.sub(r"[^a-z0-9]+", "-", org_name.lower()).strip("-") or "organization"
    return ServiceUser(service_user_id(org_id), f"service@{slug}.agentform.invalid")


def key_cache(db: Database) -> KeyCache:
    return db.cache("api_keys", lambda: KeyCache(db))


def find_key(db: Database, key: str) -> ApiKey | None:
    """The valid key `key` is, or None: in memory once loaded (see `load_keys`)."""
    return key_cache(db).get(key)


def find_key_id(db: Database, key_id: str) -> ApiKey | None:
    """The valid key whose id is `key_id`, or None (revoked, or never was)."""
    return key_cache(db).get_by_id(key_id)


def load_keys(db: Database) -> None:
    """Loads the key map now (at start), so no request ever waits for it."""
    key_cache(db).reload()


def _keys_changed(conn: Conn) -> None:
    conn.database.notify_after_commit(conn, KEYS_CHANGED)


def ensure_organization(conn: Conn, org_id: str, name: str) -> tuple[str, bool]:
    """The id of the organization named `name`, created with `org_id` when missing;
    whether it was created."""
    inserted = conn.execute(
        "INSERT OR IGNORE INTO organizations VALUES (?, ?, ?)", (org_id, name, conn.now_iso())
    )
    if inserted.rowcount:
        _keys_changed(conn)
    row = conn.execute("SELECT id FROM organizations WHERE name = ?", (name,)).fetchone()
    return str(row[0]), inserted.rowcount > 0


def ensure_key(conn: Conn, key_id: str, org_id: str, name: str, key: str, role: str) -> None:
    """Adds the key unless the organization has one of that name (or it exists)."""
    inserted = conn.execute(
        "INSERT OR IGNORE INTO api_keys VALUES (?, ?, ?, ?, ?, 0)",
        (key_id, org_id, name, hash_key(key), role),
    )
    if inserted.rowcount:
        _keys_changed(conn)


def revoke_key(conn: Conn, org_id: str, name: str) -> bool:
    """Revokes the organization's key of that name; False when there is none."""
    changed = conn.execute(
        "UPDATE api_keys SET revoked = 1 WHERE organization_id = ? AND name = ?", (org_id, name)
    )
    _keys_changed(conn)
    return changed.rowcount > 0
