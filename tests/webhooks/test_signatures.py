"""agentform.rules.signatures: sign and verify over the exact bytes; the deduplication key."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

from agentform.rules import signatures as webhooks
from agentform.rules.signatures import dedupe_key, generate_key_pair, sign, verify

PAIR = generate_key_pair()
OTHER = generate_key_pair()
BODY = '{"type":"execution","info":{"agent_name":"café"}}'.encode()


def test_a_signature_verifies_with_the_public_key() -> None:
    assert verify(BODY, sign(BODY, PAIR.private_pem), PAIR.public_pem)
    assert verify(BODY, sign(BODY, PAIR.private_pem), PAIR.public_pem.encode())


def test_the_signature_is_rsa_pkcs1v15_sha256_base64() -> None:
    public = serialization.load_pem_public_key(PAIR.public_pem.encode())
    raw = base64.b64decode(sign(BODY, PAIR.private_pem))
    assert len(raw) == 256  # RSA-2048
    public.verify(raw, BODY, padding.PKCS1v15(), hashes.SHA256())  # type: ignore[union-attr, call-arg, arg-type]


@pytest.mark.parametrize(
    "changed",
    [
        BODY + b" ",  # whitespace is part of the bytes
        BODY.replace(b'"type":"execution",', b'"type": "execution", '),
        BODY.replace("café".encode(), b"caf\\u00e9"),  # same JSON, other bytes
    ],
)
def test_any_other_bytes_fail(changed: bytes) -> None:
    assert not verify(changed, sign(BODY, PAIR.private_pem), PAIR.public_pem)


def test_another_key_fails() -> None:
    assert not verify(BODY, sign(BODY, OTHER.private_pem), PAIR.public_pem)


@pytest.mark.parametrize("signature", [None, "", "not base64!", "AAAA", "  "])
def test_missing_or_malformed_signatures_are_false_not_errors(signature: str | None) -> None:
    assert verify(BODY, signature, PAIR.public_pem) is False


def test_a_bad_public_key_is_a_setup_error() -> None:
    with pytest.raises(ValueError, match="not a PEM public key"):
        verify(BODY, "AAAA", "-----BEGIN NOTHING-----")
    ec_pem = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(ValueError, match="not an RSA key"):
        verify(BODY, "AAAA", ec_pem)


def test_key_pairs_are_rsa_2048_with_distinct_ids() -> None:
    assert PAIR.key_id != OTHER.key_id
    assert PAIR.key_id == webhooks.key_id_of(PAIR.public_pem)
    assert webhooks.load_public_key(PAIR.public_pem).key_size == 2048


def envelope(event: str, ts: str = "2026-01-01T00:00:00.000000Z", **payload: object) -> dict:  # type: ignore[type-arg]
    return {
        "type": "execution",
        "event_id": "changes-every-attempt",
        "timestamp": ts,
        "info": {"event": event, "execution_id": "e1", "payload": payload},
    }


def test_dedupe_key_ignores_event_id() -> None:
    a, b = envelope("EXECUTION_COMPLETED"), envelope("EXECUTION_COMPLETED")
    b["event_id"] = "another"
    assert dedupe_key(a) == dedupe_key(b)
    assert dedupe_key(a)[:2] == ("e1", "EXECUTION_COMPLETED")  # type: ignore[index]


def test_dedupe_key_tells_repeated_events_apart() -> None:
    first = envelope("EXECUTION_STEP_STARTED", step=1)
    second = envelope("EXECUTION_STEP_STARTED", step=2)
    later = envelope("EXECUTION_STEP_STARTED", "2026-01-01T00:00:01.000000Z", step=1)
    assert len({dedupe_key(first), dedupe_key(second), dedupe_key(later)}) == 3


def test_dedupe_key_of_batches_and_unwrapped_results() -> None:
    batch = {"type": "execution_batch", "info": {"event": "BATCH_STARTED", "batch_id": "b1"}}
    assert dedupe_key(batch)[:2] == ("b1", "BATCH_STARTED")  # type: ignore[index]
    assert dedupe_key({"order": "A-1"}) is None
