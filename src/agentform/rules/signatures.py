"""Webhook signatures, for the people on the receiving end
(docs/service/contract.md#signatures, #webhook-integrations).

A delivery's `X-Service-Signature` header is the Base64 of an RSA PKCS#1 v1.5
signature over the SHA-256 digest of the exact body bytes. Verify against the
raw bytes you received, before parsing them:

    from agentform.rules.signatures import verify
    if not verify(raw_body, request.headers.get("X-Service-Signature"), public_key_pem):
        return 401

The service signs with the same functions (`sign`), so both sides share one
definition of the signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # cryptography is imported when a key is used: the workspace's
    # webhook rules read SIGNATURE_HEADER, and `validate` signs nothing
    from cryptography.hazmat.primitives.asymmetric import rsa

SIGNATURE_HEADER = "X-Service-Signature"
ALGORITHM = "RSA-PKCS1v15-SHA256"
KEY_SIZE = 2048

PemKey = str | bytes


@dataclass(frozen=True)
class SigningKeyPair:
    """An organization's key pair as PEM text; `key_id` names the public key."""

    private_pem: str
    public_pem: str
    key_id: str


def _pem_bytes(pem: PemKey) -> bytes:
    return pem.encode() if isinstance(pem, str) else pem


def key_id_of(public_pem: PemKey) -> str:
    """A short, stable name of a public key: the start of its SHA-256 fingerprint."""
    from cryptography.hazmat.primitives import serialization

    public = _load_public(_pem_bytes(public_pem))
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(der).hexdigest()[:32]


def generate_key_pair() -> SigningKeyPair:
    """A new RSA-2048 key pair (about 50 ms of CPU)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=KEY_SIZE)
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return SigningKeyPair(private_pem, public_pem, key_id_of(public_pem))


# Parsing a PEM key costs more than a signature check; keys are few and reused.
@lru_cache(maxsize=64)
def _load_private(pem: bytes) -> rsa.RSAPrivateKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the signing key is not an RSA private key")
    return key


@lru_cache(maxsize=64)
def _load_public(pem: bytes) -> rsa.RSAPublicKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError:
        raise ValueError("not a PEM public key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise ValueError("the public key is not an RSA key")
    return key


def load_public_key(pem: PemKey) -> rsa.RSAPublicKey:
    """The RSA public key of PEM text; ValueError when it is not one."""
    return _load_public(_pem_bytes(pem))


def sign(body: bytes, private_key_pem: PemKey) -> str:
    """The `X-Service-Signature` value of `body`: Base64(RSA PKCS#1 v1.5, SHA-256)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signature = _load_private(_pem_bytes(private_key_pem)).sign(
        body, padding.PKCS1v15(), hashes.SHA256()
    )
    return base64.b64encode(signature).decode("ascii")


def verify(body: bytes, signature: str | None, public_key_pem: PemKey) -> bool:
    """Whether `signature` is the service's signature of exactly these bytes.

    False for a missing, malformed or wrong signature; ValueError only when the
    public key itself is not an RSA public key in PEM form (a setup mistake).
    """
    key = load_public_key(public_key_pem)
    if not signature:
        return False
    try:
        raw = base64.b64decode(signature.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    try:
        key.verify(raw, body, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def dedupe_key(notification: Mapping[str, Any]) -> tuple[str, ...] | None:
    """What identifies a notification across redeliveries
    (docs/service/contract.md#webhook-delivery, docs/guide/webhooks.md#deduplicating).

    `event_id` changes from one attempt to the next, so the key is made of
    stable fields: `info.execution_id` (or `info.batch_id`) and `info.event`,
    plus the event's `timestamp` and a digest of its payload, because an
    execution emits most events more than once (a step, an action, a message
    each time). None for a body that is not an envelope (an unwrapped result),
    which a receiver deduplicates on its own fields.
    """
    info = notification.get("info")
    if not isinstance(info, Mapping):
        return None
    subject = info.get("execution_id") or info.get("batch_id")
    event = info.get("event")
    if not isinstance(subject, str) or not isinstance(event, str):
        return None
    payload = json.dumps(info.get("payload"), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(payload.encode()).hexdigest()[:32]
    return subject, event, str(notification.get("timestamp", "")), digest
