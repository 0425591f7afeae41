"""Staged files are streamed into the store (memory stays flat whatever the upload)
and bounded by a per-organization quota (docs/service/limits.md#uploads): one upload
of 20 files of 24 MiB took the service from 98 to 628 MB, and nothing bounded what an
organization could keep."""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import create_app
from agentform.service.settings import TEMP_FILES_QUOTA_BYTES, ServiceSettings
from agentform.service.store import temp_files
from tests.service.conftest import ACME, OTHER, OTHER_KEY, TEST_SEED, Api, assert_error

QUOTA = 100_000


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    settings = ServiceSettings(temp_files_quota_bytes=QUOTA)
    directory = tmp_path_factory.mktemp("staged")
    application = create_app(directory / "service.db", seed=TEST_SEED, settings=settings)
    yield application
    application.state.db.close()


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Api:
    return Api(TestClient(app))


def _stored(app: FastAPI, org: str) -> dict[str, bytes]:
    with app.state.db.read() as conn:
        rows = conn.execute(
            "SELECT name, content FROM temp_files WHERE organization_id = ?", (org,)
        ).fetchall()
    return {row["name"]: bytes(row["content"]) for row in rows}


def test_the_bytes_stored_are_the_bytes_sent(api: Api, app: FastAPI) -> None:
    big = bytes(range(256)) * 200  # 51,200 bytes: spooled to disk, copied in chunks
    files = [("files", ("big.bin", big)), ("files", ("one.txt", b"1")), ("file", ("e", b""))]
    answer = api.post("/temp-files", files=files)
    assert answer.status_code == 201, answer.text
    assert [f["size"] for f in answer.json()["tempFiles"]] == [len(big), 1, 0]
    stored = _stored(app, ACME)
    assert stored["big.bin"] == big and stored["one.txt"] == b"1" and stored["e"] == b""


def test_files_past_the_quota_are_a_413_and_nothing_is_staged(api: Api, app: FastAPI) -> None:
    before = _stored(app, ACME)
    files = [("files", ("a.bin", b"a" * 30_000)), ("files", ("b.bin", b"b" * 30_000))]
    answer = api.post("/temp-files", files=files)
    assert_error(answer, 413, "quota", f"{QUOTA:,}")
    assert _stored(app, ACME) == before


def test_the_quota_is_per_organization(api: Api, app: FastAPI) -> None:
    other = api.as_key(OTHER_KEY)
    answer = other.post("/temp-files", files=[("files", ("o.bin", b"o" * 60_000))])
    assert answer.status_code == 201, answer.text
    assert set(_stored(app, OTHER)) == {"o.bin"}


def test_staging_a_large_file_copies_it_in_chunks(tmp_path: Path) -> None:
    size = 8 * 1024 * 1024
    source = tmp_path / "upload.bin"
    with source.open("wb") as handle:
        for block in range(size // 65536):
            handle.write(hashlib.sha256(str(block).encode()).digest() * 2048)
    application = create_app(tmp_path / "service.db", seed=TEST_SEED)
    try:
        with source.open("rb") as content:
            upload = temp_files.Upload("upload.bin", size, content)
            tracemalloc.start()
            with application.state.db.write() as conn:
                temp_files.stage_files(conn, ACME, [upload], TEMP_FILES_QUOTA_BYTES)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 3 * temp_files.CHUNK_BYTES, peak  # not the file's 8 MiB
        assert _stored(application, ACME)["upload.bin"] == source.read_bytes()
    finally:
        application.state.db.close()
