"""`agentform webhook verify` and `webhook listen` as a user runs them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from agentform.cli.main import cli
from agentform.cli.webhook.listen import Listener, read_capture
from agentform.rules.signatures import generate_key_pair, sign
from agentform.service.delivery.envelope import encode, execution_envelope
from tests.webhooks.receiver import HANG, listen_process, running_receiver

KEYS = generate_key_pair()
OTHER = generate_key_pair()
BODY = encode(
    execution_envelope(
        "EXECUTION_COMPLETED",
        event_id="ev",
        timestamp="2026-01-01T00:00:00.000000Z",
        execution_id="4a0c1d2e-0000-4000-8000-000000000001",
        agent_id="ag",
        agent_name="checkout-agent",
        payload={"result": {"total": "12 €"}, "reasoning": "", "outcome": "success"},
        metadata=None,
        platform_url="http://x",
    )
)


def run(*args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "key.pem"
    path.write_text(KEYS.public_pem)
    return path


@pytest.fixture
def body_file(tmp_path: Path) -> Path:
    path = tmp_path / "body.json"
    path.write_bytes(BODY)
    return path


def test_verify_a_body_with_its_signature(key_file: Path, body_file: Path) -> None:
    result = run(
        "webhook",
        "verify",
        "--public-key",
        str(key_file),
        "--signature",
        sign(BODY, KEYS.private_pem),
        str(body_file),
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"verified: the signature matches the {len(BODY)} bytes")


def test_verify_fails_on_a_changed_body_or_another_key(key_file: Path, body_file: Path) -> None:
    other_sig = sign(BODY, OTHER.private_pem)
    result = run(
        "webhook", "verify", "--public-key", str(key_file), "--signature", other_sig, str(body_file)
    )
    assert result.exit_code == 1 and "NOT verified" in result.output
    body_file.write_bytes(BODY + b"\n")
    result = run(
        "webhook",
        "verify",
        "--public-key",
        str(key_file),
        "--signature",
        sign(BODY, KEYS.private_pem),
        str(body_file),
    )
    assert result.exit_code == 1 and "NOT verified" in result.output


def test_verify_reads_stdin(key_file: Path) -> None:
    result = run(
        "webhook",
        "verify",
        "--public-key",
        str(key_file),
        "--signature",
        sign(BODY, KEYS.private_pem),
        "-",
        input=BODY,
    )
    assert result.exit_code == 0, result.output


def test_verify_without_signature_needs_a_capture(key_file: Path, body_file: Path) -> None:
    result = run("webhook", "verify", "--public-key", str(key_file), str(body_file))
    assert result.exit_code == 1
    assert "not a capture with an X-Service-Signature header" in result.output
    assert "Traceback" not in result.output


def test_verify_a_bad_key_file_is_a_clear_error(tmp_path: Path, body_file: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("hello")
    result = run(
        "webhook", "verify", "--public-key", str(bad), "--signature", "AAAA", str(body_file)
    )
    assert result.exit_code == 1 and "not a PEM public key" in result.output
    result = run(
        "webhook",
        "verify",
        "--public-key",
        str(tmp_path / "missing.pem"),
        "--signature",
        "AAAA",
        str(body_file),
    )
    assert result.exit_code == 1 and "cannot read the public key" in result.output


@pytest.fixture
def listening(tmp_path: Path, key_file: Path) -> Iterator[tuple[Any, str]]:
    """`agentform webhook listen` as a process, output piped, on a free port."""
    with running_receiver(202) as handler:
        args = (
            "--public-key",
            str(key_file),
            "--forward-to",
            handler.url,
            "--save",
            str(tmp_path / "saved"),
        )
        with listen_process(*args) as process:
            assert process.stdout.readline().startswith("Forwarding every notification to")
            process.handler = handler
            yield process, process.url


TEAM = "hdr-value-4b1c9e"


def test_listen_verifies_prints_answers_forwards_and_saves(
    listening: tuple[Any, str], tmp_path: Path, key_file: Path
) -> None:
    process, url = listening
    assert process.stdout is not None
    signature = sign(BODY, KEYS.private_pem)
    good = httpx.post(url, content=BODY, headers={"X-Service-Signature": signature, "X-Team": TEAM})
    assert good.status_code == 204
    line = process.stdout.readline()
    assert "EXECUTION_COMPLETED" in line and "verified" in line and "NOT" not in line
    assert "execution 4a0c1d2e-0000-4000-8000-000000000001" in line
    assert "agent checkout-agent" in line
    assert f"  {httpx.URL(url).path}  " in line  # where it came
    assert "202" in process.stdout.readline()  # the forward target's answer

    bad = httpx.post(url, content=BODY + b" ", headers={"X-Service-Signature": signature})
    assert bad.status_code == 401 and bad.json() == {"code": 401, "message": "invalid signature"}
    assert "NOT VERIFIED: bad signature" in process.stdout.readline()
    process.stdout.readline()
    missing = httpx.post(url, content=BODY)
    assert missing.status_code == 401
    assert "NOT VERIFIED: no signature" in process.stdout.readline()
    process.stdout.readline()

    forwarded = process.handler.wait_for(3)
    assert forwarded[0].body == BODY  # the exact bytes, with the headers that came
    assert forwarded[0].headers["X-Service-Signature"] == signature
    assert forwarded[0].headers["X-Team"] == TEAM  # forwarded as it came

    saved = sorted((tmp_path / "saved").iterdir())
    assert len(saved) == 1  # the verified one: the others are not saved
    headers, body = read_capture(saved[0].read_bytes())  # type: ignore[misc]
    assert body == BODY
    # an integration's header values are secrets: saved masked (verify needs none of them)
    assert headers["x-team"] == "(sensitive)" and TEAM.encode() not in saved[0].read_bytes()
    assert headers["x-service-signature"] == signature  # the service's own: as it came
    result = run("webhook", "verify", "--public-key", str(key_file), str(saved[0]))
    assert result.exit_code == 0, result.output


def test_listen_lines_name_the_path_each_notification_came_to() -> None:
    """Two integrations of one service (/events, /batches) get the same event: the
    lines say where each came, so it does not look delivered twice."""
    lines: list[str] = []
    listener = Listener(KEYS.public_pem, lines.append)
    signature = sign(BODY, KEYS.private_pem)
    for path in ("/events", "/batches"):
        status, _, verified = listener.receive({"x-service-signature": signature}, BODY, path)
        assert status == 204 and verified
    assert " /events " in lines[0] and " /batches " in lines[1], lines
    assert lines[0][8:].replace("/events", "/batches") == lines[1][8:]  # after the time


def test_listen_on_a_taken_port_is_a_clear_error(key_file: Path) -> None:
    with running_receiver() as taken:
        port = taken.url.split(":")[2].split("/")[0]
        result = run("webhook", "listen", "--port", port, "--public-key", str(key_file))
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "Traceback" not in result.output


def test_listen_saves_and_prints_custom_header_values_masked(
    listening: tuple[Any, str], tmp_path: Path, key_file: Path
) -> None:
    """An integration's custom header values are secrets (GUIDE): a capture keeps the
    header names and masks their values; the forwarded request keeps the values."""
    process, url = listening
    token = "tok-s3cr3t-9f2"
    signature = sign(BODY, KEYS.private_pem)
    headers = {"X-Service-Signature": signature, "X-Team-Token": token, "User-Agent": token}
    assert httpx.post(url, content=BODY, headers=headers).status_code == 204
    printed = [process.stdout.readline(), process.stdout.readline()]
    [forwarded] = process.handler.wait_for(1)
    assert forwarded.headers["X-Team-Token"] == token
    [saved] = sorted((tmp_path / "saved").iterdir())
    data = saved.read_bytes()
    assert token.encode() not in data
    head, body = read_capture(data)  # type: ignore[misc]
    assert head["x-team-token"] == head["user-agent"] == "(sensitive)"
    assert head["x-service-signature"] == signature and body == BODY
    assert token not in "".join(printed)
    result = run("webhook", "verify", "--public-key", str(key_file), str(saved))
    assert result.exit_code == 0, result.output


def test_listen_forwards_in_the_order_received(key_file: Path) -> None:
    """Forwards go one at a time, in the order the notifications came: the second is
    not sent while the handler has not answered the first (which hangs here)."""
    with running_receiver(202) as handler:
        handler.answer(HANG)
        args = ("--public-key", str(key_file), "--forward-to", handler.url)
        with listen_process(*args) as process:
            process.stdout.readline()  # "Forwarding every notification to ..."
            first, second = BODY, BODY.replace(b"EXECUTION_COMPLETED", b"EXECUTION_STARTED")
            for body in (first, second):
                signed = {"X-Service-Signature": sign(body, KEYS.private_pem)}
                answer = httpx.post(process.url, content=body, headers=signed)
                assert answer.status_code == 204  # the listener answers at once
                if body is first:
                    assert len(handler.wait_for(1)) == 1  # the first forward is in flight
            # Half a second for a wrong, concurrent forward to arrive while the first hangs.
            early = handler.wait_for(2, timeout=0.5)
            handler.release.set()
            received = handler.wait_for(2)
    assert len(early) == 1, "the second notification was forwarded before the first was answered"
    assert [r.event for r in received] == ["EXECUTION_COMPLETED", "EXECUTION_STARTED"]


def test_listen_save_into_a_directory_with_captures_keeps_them(
    tmp_path: Path, key_file: Path
) -> None:
    """A second `listen --save DIR` numbers its captures after those already there."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "00001.http").write_bytes(b"earlier")
    (saved / "notes.txt").write_text("mine")
    with listen_process("--public-key", str(key_file), "--save", str(saved)) as process:
        signed = {"X-Service-Signature": sign(BODY, KEYS.private_pem)}
        assert httpx.post(process.url, content=BODY, headers=signed).status_code == 204
        process.stdout.readline()
    assert (saved / "00001.http").read_bytes() == b"earlier"
    assert sorted(p.name for p in saved.iterdir()) == ["00001.http", "00002.http", "notes.txt"]
    assert read_capture((saved / "00002.http").read_bytes())[1] == BODY  # type: ignore[index]


def test_a_forward_url_that_is_not_http_is_a_usage_error_as_clicks_own(tmp_path: Path) -> None:
    result = run("webhook", "listen", "--port", "0", "--forward-to", "localhost:9000/hook")
    assert result.exit_code == 1
    assert (
        "Invalid value for '--forward-to': must be an http(s) URL, not 'localhost:9000/hook'"
        in result.output
    ), result.output
