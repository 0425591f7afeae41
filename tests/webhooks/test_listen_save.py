"""`webhook listen --save` (issue 20): only verified requests are saved unless
--save-unverified; a capture is a new file, never written over a file or through
a symbolic link; a body over the bound is refused unread, and neither saved nor
forwarded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.cli.webhook.listen import MAX_BODY_BYTES, Listener, read_capture
from agentform.rules.signatures import sign
from tests.webhooks.test_cli_tools import BODY, KEYS

SIGNED = {"x-service-signature": sign(BODY, KEYS.private_pem)}


def listener(folder: Path, lines: list[str], save_unverified: bool = False) -> Listener:
    folder.mkdir(exist_ok=True)
    return Listener(KEYS.public_pem, lines.append, save_dir=folder, save_unverified=save_unverified)


def test_only_verified_requests_are_saved_unless_asked(tmp_path: Path) -> None:
    lines: list[str] = []
    strict = listener(tmp_path / "strict", lines)
    assert strict.receive({}, BODY)[0] == 401
    assert strict.receive(SIGNED, BODY)[0] == 204
    assert [p.name for p in (tmp_path / "strict").iterdir()] == ["00001.http"]
    every = listener(tmp_path / "every", lines, save_unverified=True)
    every.receive({}, BODY)
    every.receive(SIGNED, BODY)
    assert sorted(p.name for p in (tmp_path / "every").iterdir()) == ["00001.http", "00002.http"]


def test_a_capture_never_goes_through_a_symlink_or_over_a_file(tmp_path: Path) -> None:
    saved, outside = tmp_path / "saved", tmp_path / "outside.txt"
    outside.write_text("keep me")
    lines: list[str] = []
    receiving = listener(saved, lines)  # numbering starts at 00001
    (saved / "00001.http").symlink_to(outside)  # made after it started
    (saved / "00002.http").symlink_to(tmp_path / "nowhere")  # leading nowhere
    (saved / "00003.http").write_text("someone else's")
    receiving.receive(SIGNED, BODY)
    assert outside.read_text() == "keep me" and not (tmp_path / "nowhere").exists()
    assert (saved / "00003.http").read_text() == "someone else's"
    assert read_capture((saved / "00004.http").read_bytes())[1] == BODY  # type: ignore[index]


async def _chunks(total: int) -> AsyncIterator[bytes]:
    for _ in range(total // 65536 + 1):
        yield b"x" * 65536


@pytest.mark.parametrize("length_given", [True, False])
def test_a_body_over_the_bound_is_refused_unsaved(tmp_path: Path, length_given: bool) -> None:
    lines: list[str] = []
    receiving = listener(tmp_path / "saved", lines, save_unverified=True)
    content = b"x" * (MAX_BODY_BYTES + 1) if length_given else _chunks(MAX_BODY_BYTES)

    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=receiving.asgi_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://l") as client:
            return await client.post("/hooks", content=content)

    answer = asyncio.run(post())
    assert answer.status_code == 413 and "over 4 MiB" in answer.json()["message"]
    assert list((tmp_path / "saved").iterdir()) == []
    assert len(lines) == 1 and "/hooks  refused: its body is over 4 MiB" in lines[0]


def test_save_into_a_symlink_or_unverified_without_save_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text(KEYS.public_pem)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    runner = CliRunner()
    args = ["webhook", "listen", "--port", "0", "--public-key", str(key)]
    result = runner.invoke(cli, [*args, "--save", str(tmp_path / "link")])
    assert result.exit_code == 1 and "is a symbolic link" in result.output
    result = runner.invoke(cli, [*args, "--save-unverified"])
    assert result.exit_code == 1 and "--save-unverified saves into" in result.output
