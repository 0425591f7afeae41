"""A stand-in for the Agent Service that costs next to nothing: canned answers for
/context, empty lists, and pools made on POST (kept in memory). Run as a script on
a port; used to take the service's own time out of a client benchmark."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

ORG = "0b7f3c1e-0000-4000-8000-000000000001"
NOW = "2026-01-01T00:00:00Z"


def answer(method: str, target: str, body: bytes) -> tuple[int, object]:
    path = target.split("?", 1)[0].removeprefix("/agents/v2")
    if path == "/context":
        org = {"id": ORG, "name": "demo"}
        return 200, {"userId": ORG, "email": "stub@x.invalid", "organizations": [org]}
    if method == "GET":
        return 200, {"items": [], "page": 1, "pageSize": 100, "total": 0}
    if method == "POST":
        fields = json.loads(body or b"{}")
        pool = {
            "id": str(uuid.uuid4()),
            "organizationId": ORG,
            "selectionStrategy": "least_recently_used",
            "allowConcurrentUse": False,
            "createdAt": NOW,
            "updatedAt": NOW,
            **fields,
        }
        return 201, pool
    return 404, {"code": 404, "message": "not here"}


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:] if h)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            status, data = answer(method, target, body)
            content = json.dumps(data).encode()
            reason = {200: "OK", 201: "Created", 404: "Not Found"}[status]
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(content)}\r\n\r\n".encode()
                + content
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
