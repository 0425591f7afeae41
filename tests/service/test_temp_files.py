"""Staged files (docs/service/contract.md#staged-files): `POST /temp-files`, parts
`files` or `file`, 25 MiB a file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agentform.service import create_app
from agentform.service.store.temp_files import MAX_FILE_BYTES
from tests.service.conftest import (
    ACME,
    ADMIN_KEY,
    BASE,
    OTHER,
    READ_KEY,
    TEST_SEED,
    Api,
    assert_error,
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    application = create_app(tmp_path_factory.mktemp("temp-files") / "service.db", seed=TEST_SEED)
    yield application
    application.state.db.close()


@pytest.fixture(scope="module")
def api(app: FastAPI) -> Api:
    return Api(TestClient(app))


def test_files_parts_are_staged_with_id_name_and_size(api: Api) -> None:
    r = api.post(
        "/temp-files",
        files=[("files", ("orders.csv", b"a,b\n1,2\n")), ("files", ("notes.txt", "é".encode()))],
    )
    assert r.status_code == 201, r.text
    staged = r.json()["tempFiles"]
    assert [(f["name"], f["size"]) for f in staged] == [("orders.csv", 8), ("notes.txt", 2)]
    assert len({f["id"] for f in staged}) == 2


def test_a_part_named_file_works_too(api: Api) -> None:
    r = api.post("/temp-files", files=[("file", ("one.pdf", b"%PDF"))])
    assert r.status_code == 201
    assert r.json()["tempFiles"][0]["name"] == "one.pdf"


def test_both_key_headers_and_the_organization_parameter(api: Api) -> None:
    service_key = api.as_key(ADMIN_KEY, header="X-Service-Agents-Api-Key")
    assert service_key.post("/temp-files", files=[("files", ("a", b"1"))]).status_code == 201
    ok = api.post("/temp-files", params={"organizationId": ACME}, files=[("files", ("a", b"1"))])
    assert ok.status_code == 201
    other = api.post(
        "/temp-files", params={"organizationId": OTHER}, files=[("files", ("a", b"1"))]
    )
    assert_error(other, 403)


def test_a_read_key_may_not_stage(api: Api) -> None:
    assert_error(api.as_key(READ_KEY).post("/temp-files", files=[("files", ("a", b"1"))]), 403)


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"files": [("other", ("a.txt", b"1"))]}, "other"),
        ({"data": {"files": "not a file"}}, "body"),
        ({"json": {"files": []}}, "body"),
        ({"files": [("files", ("", b"1"))]}, "files"),
    ],
)
def test_wrong_bodies_are_400_naming_the_part(api: Api, kwargs: dict, parameter: str) -> None:  # type: ignore[type-arg]
    err = assert_error(api.post("/temp-files", **kwargs), 400)
    assert err["errors"][0]["parameter"] == parameter


def test_a_multipart_body_without_files_is_400(api: Api) -> None:
    body = b"--b\r\n--b--\r\n"
    r = api.post(
        "/temp-files", content=body, headers={"Content-Type": "multipart/form-data; boundary=b"}
    )
    assert_error(r, 400)


def test_a_file_of_25_mib_is_accepted_and_one_byte_more_is_not(api: Api) -> None:
    exactly = api.post("/temp-files", files=[("files", ("max.bin", b"x" * MAX_FILE_BYTES))])
    assert exactly.status_code == 201 and exactly.json()["tempFiles"][0]["size"] == MAX_FILE_BYTES
    over = api.post("/temp-files", files=[("files", ("big.bin", b"x" * (MAX_FILE_BYTES + 1)))])
    err = assert_error(over, 400, "25 MiB")
    assert err["errors"][0]["parameter"] == "files"


def test_a_too_large_file_is_refused_before_the_body_is_read_in_full(app: FastAPI) -> None:
    """The upload streams in 1 MiB chunks; the answer comes long before the last one."""
    chunk = b"y" * (1024 * 1024)
    total_chunks = 40
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'--b\r\nContent-Disposition: form-data; name="files"; filename="big"\r\n\r\n'
        for _ in range(total_chunks):
            sent += 1
            yield chunk
        yield b"\r\n--b--\r\n"

    async def upload() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://svc") as client:
            return await client.post(
                BASE + "/temp-files",
                content=body(),
                headers={
                    "X-Api-Key": ADMIN_KEY,
                    "Content-Type": "multipart/form-data; boundary=b",
                },
            )

    response = asyncio.run(upload())
    assert_error(response, 400, "25 MiB")
    assert sent < total_chunks


def test_nothing_is_staged_when_one_file_is_refused(api: Api, app: FastAPI) -> None:
    def count() -> int:
        with app.state.db.read() as conn:
            return int(conn.execute("SELECT count(*) FROM temp_files").fetchone()[0])

    before = count()
    r = api.post(
        "/temp-files",
        files=[("files", ("ok.txt", b"1")), ("files", ("big", b"x" * (MAX_FILE_BYTES + 1)))],
    )
    assert_error(r, 400)
    assert count() == before
