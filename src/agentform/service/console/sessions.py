"""Console sessions: signing in with an API key, the session cookie, CSRF tokens, expiry.

A session is an API key's organization and role, kept in the server's memory
under the SHA-256 of a random token; the browser holds the token alone, in a
cookie that is HttpOnly, SameSite=Strict, limited to `/console`, and Secure
when the console is reached over https. The key itself is never kept: each
request looks the key up again by its id, so a revoked key ends its sessions.

A session ends when signed out, after IDLE_SECONDS without a request, or
SESSION_SECONDS after signing in, on the console's clock (the wall clock
unless a test hands another: `ServiceSettings.console_clock`). Its CSRF token goes in every
form that changes something and is compared in constant time. Signing in has
no session yet, so its form carries a token tied to a short-lived cookie
(double submit).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from agentform.service.settings import SecondsClock
from agentform.service.store.database import Database
from agentform.service.store.organizations import find_key, find_key_id

SESSION_COOKIE = "agentform_console"
SIGNIN_COOKIE = "agentform_console_signin"
COOKIE_PATH = "/console"
IDLE_SECONDS = 30 * 60
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 1000


@dataclass(frozen=True)
class Session:
    key_id: str
    key_name: str
    role: str
    organization_id: str
    organization_name: str
    csrf: str
    started: float
    seen: float

    @property
    def admin(self) -> bool:
        return self.role == "admin"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def same_token(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode()
    )


class Sessions:
    """The console's sessions, in memory (a restart signs everyone out)."""

    def __init__(self, db: Database, clock: SecondsClock) -> None:
        self._db = db
        self._clock = clock
        self._by_digest: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def sign_in(self, key: str) -> tuple[str, Session] | None:
        """A new session's token and the session, or None for a key that is not valid."""
        found = find_key(self._db, key)
        if found is None:
            return None
        now = self._clock.seconds()
        token = secrets.token_urlsafe(32)
        session = Session(
            found.id,
            found.name,
            found.role,
            found.organization_id,
            found.organization_name,
            secrets.token_urlsafe(32),
            now,
            now,
        )
        with self._lock:
            self._by_digest[_digest(token)] = session
            while len(self._by_digest) > MAX_SESSIONS:
                self._by_digest.popitem(last=False)  # the oldest sign-in goes first
        return token, session

    def find(self, token: str | None) -> Session | None:
        """The live session of `token` (its idle time restarted), or None."""
        if not token:
            return None
        digest, now = _digest(token), self._clock.seconds()
        with self._lock:
            session = self._by_digest.get(digest)
            if session is None:
                return None
            expired = now - session.seen > IDLE_SECONDS or now - session.started > SESSION_SECONDS
            key = find_key_id(self._db, session.key_id)
            if expired or key is None or key.role != session.role:
                del self._by_digest[digest]
                return None
            session = replace(session, seen=now)
            self._by_digest[digest] = session
            return session

    def sign_out(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._by_digest.pop(_digest(token), None)
