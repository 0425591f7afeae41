"""A fake of the few GitHub REST endpoints the gitops scripts call, on loopback,
keeping comments, issues, commit-to-pull-request links and artifacts in memory."""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TOKEN = "fake-token"


@dataclass
class State:
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    pulls_of_commit: dict[str, list[int]] = field(default_factory=dict)
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # newest first
    blobs: dict[int, bytes] = field(default_factory=dict)
    blob_auth: list[str | None] = field(default_factory=list)  # Authorization on downloads
    next_id: int = 100

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["issue"] == number]

    def upload(self, name: str, files: dict[str, bytes]) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zipped:
            for member, data in files.items():
                zipped.writestr(member, data)
        artifact_id = self.new_id()
        self.blobs[artifact_id] = buffer.getvalue()
        self.artifacts.insert(0, {"id": artifact_id, "name": name, "expired": False})


def _handler(state: State, base: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(
            self, status: int, body: Any = None, headers: dict[str, str] | None = None
        ) -> None:
            data = (
                b""
                if body is None
                else (body if isinstance(body, bytes) else json.dumps(body).encode())
            )
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length)) if length else None

        def _route(self, method: str) -> None:
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            path = url.path
            blob = re.fullmatch(r"/blob/(\d+)", path)
            if blob:  # storage: no token needed (and none should be sent)
                state.blob_auth.append(self.headers.get("Authorization"))
                return self._send(200, state.blobs[int(blob.group(1))])
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._send(401, {"message": "Bad credentials"})
            m = re.fullmatch(r"/repos/[^/]+/[^/]+(/.*)", path)
            if not m:
                return self._send(404, {"message": "Not Found"})
            rest = m.group(1)
            page, per_page = int(query.get("page", 1)), int(query.get("per_page", 30))

            def paged(items: list[Any]) -> None:
                self._send(200, items[(page - 1) * per_page : page * per_page])

            if (hit := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "GET":
                return paged(
                    [
                        {"id": i, "body": c["body"]}
                        for i, c in state.comments.items()
                        if c["issue"] == int(hit.group(1))
                    ]
                )
            if (hit := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "POST":
                cid = state.new_id()
                state.comments[cid] = {"issue": int(hit.group(1)), "body": self._body()["body"]}
                return self._send(201, {"id": cid})
            if (hit := re.fullmatch(r"/issues/comments/(\d+)", rest)) and method == "PATCH":
                state.comments[int(hit.group(1))]["body"] = self._body()["body"]
                return self._send(200, {"id": int(hit.group(1))})
            if rest == "/issues" and method == "GET":
                label = query.get("labels")
                found = [
                    {"number": n, **i}
                    for n, i in sorted(state.issues.items())
                    if i["state"] == query.get("state", "open")
                    and (not label or label in i["labels"])
                ]
                return paged(found)
            if rest == "/issues" and method == "POST":
                number = state.new_id()
                body = self._body()
                state.issues[number] = {**body, "state": "open"}
                return self._send(201, {"number": number})
            if (hit := re.fullmatch(r"/issues/(\d+)", rest)) and method == "PATCH":
                state.issues[int(hit.group(1))].update(self._body())
                return self._send(200, {"number": int(hit.group(1))})
            if (hit := re.fullmatch(r"/commits/(\w+)/pulls", rest)) and method == "GET":
                return self._send(
                    200, [{"number": n} for n in state.pulls_of_commit.get(hit.group(1), [])]
                )
            if rest == "/actions/artifacts" and method == "GET":
                found = [
                    {**a, "archive_download_url": f"{base[0]}{path}/{a['id']}/zip"}
                    for a in state.artifacts
                    if a["name"] == query.get("name")
                ]
                return self._send(200, {"total_count": len(found), "artifacts": found[:per_page]})
            if (hit := re.fullmatch(r"/actions/artifacts/(\d+)/zip", rest)) and method == "GET":
                return self._send(302, None, {"Location": f"{base[0]}/blob/{hit.group(1)}"})
            return self._send(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PATCH(self) -> None:
            self._route("PATCH")

    return Handler


@contextmanager
def fake_github() -> Iterator[tuple[str, State]]:
    """(API base URL, state) of a fake GitHub on 127.0.0.1, on a port the OS picks."""
    state = State()
    base: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state, base))
    base.append(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base[0], state
    finally:
        server.shutdown()
        server.server_close()
