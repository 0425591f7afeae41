"""A fake of the few GitHub REST endpoints the gitops scripts call, on loopback,
keeping comments, issues, pull requests, workflow runs, their artifacts and their
deployment reviews in memory.

It answers as GitHub does where the scripts rely on it: an artifact belongs to one
workflow run (`workflow_run.id`, `head_sha`); a run has its workflow file (`path`),
its repository and the repository of the code it ran (`head_repository`: a fork's
pull request runs in the base repository on the fork's code), `head_sha`, `event`,
`status` and `conclusion`; `GET /actions/workflows/{file}/runs` lists only that
workflow's runs in this repository, filtered by `head_sha` and `event`, newest
first; `GET /commits/{sha}/pulls` lists the pull requests merged as that commit or
whose head it is; artifact downloads redirect to storage that takes no token."""

from __future__ import annotations

import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TOKEN = "fake-token"
REPO = "team/infra"


@dataclass
class State:
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # newest first
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # newest first
    approvals: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # run id -> reviews
    blobs: dict[int, bytes] = field(default_factory=dict)
    blob_auth: list[str | None] = field(default_factory=list)  # Authorization on downloads
    next_id: int = 100

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["issue"] == number]

    def open_pull(self, number: int, head_sha: str, body: str = "") -> None:
        self.pulls[number] = {
            "number": number,
            "state": "open",
            "merged_at": None,
            "merge_commit_sha": None,
            "head": {"sha": head_sha},
            "body": body,
        }

    def merge_pull(self, number: int, merge_sha: str) -> None:
        """Merged now: later than every pull request merged before it."""
        at = datetime(2024, 5, 1, 12, tzinfo=UTC) + timedelta(seconds=self.new_id())
        merged = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.pulls[number].update(state="closed", merged_at=merged, merge_commit_sha=merge_sha)

    def run(
        self,
        head_sha: str,
        path: str = ".github/workflows/agentform-plan.yml",
        event: str = "pull_request",
        conclusion: str | None = "success",
        head_repo: str = REPO,
    ) -> dict[str, Any]:
        """A finished workflow run of this repository (`head_repo`: whose code it ran)."""
        run_id = self.new_id()
        run = {
            "id": run_id,
            "path": path,
            "event": event,
            "head_sha": head_sha,
            "status": "completed" if conclusion else "in_progress",
            "conclusion": conclusion,
            "created_at": f"2024-05-01T12:00:{run_id % 60:02d}Z",
            "repository": {"id": 1, "full_name": REPO},
            "head_repository": {"id": 1 if head_repo == REPO else 2, "full_name": head_repo},
        }
        self.runs.insert(0, run)
        return run

    def upload(self, run: dict[str, Any], name: str, files: dict[str, bytes]) -> None:
        """actions/upload-artifact in `run`."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zipped:
            for member, data in files.items():
                zipped.writestr(member, data)
        artifact_id = self.new_id()
        self.blobs[artifact_id] = buffer.getvalue()
        self.artifacts.insert(
            0,
            {
                "id": artifact_id,
                "name": name,
                "expired": False,
                "workflow_run": {
                    "id": run["id"],
                    "repository_id": run["repository"]["id"],
                    "head_repository_id": run["head_repository"]["id"],
                    "head_sha": run["head_sha"],
                },
            },
        )

    def approve(self, run_id: int, environment: str = "production", user: str = "lead") -> None:
        """A required reviewer approves the run's deployment to `environment`."""
        self.approvals.setdefault(run_id, []).insert(
            0,
            {
                "state": "approved",
                "comment": "",
                "user": {"login": user},
                "environments": [{"id": 7, "name": environment}],
            },
        )


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
            if rest == "/pulls" and method == "GET":  # sort=updated: merged ones, newest first
                closed = [p for p in state.pulls.values() if p["state"] == query.get("state")]
                return paged(sorted(closed, key=lambda p: p["merged_at"] or "", reverse=True))
            if (hit := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "GET":
                return self._send(200, state.pulls[int(hit.group(1))])
            if (hit := re.fullmatch(r"/commits/(\w+)/pulls", rest)) and method == "GET":
                sha = hit.group(1)
                return self._send(
                    200,
                    [
                        p
                        for p in state.pulls.values()
                        if sha in (p["merge_commit_sha"], p["head"]["sha"])
                    ],
                )
            if (hit := re.fullmatch(r"/actions/workflows/([^/]+)/runs", rest)) and method == "GET":
                found = [
                    r
                    for r in state.runs
                    if r["path"] == f".github/workflows/{hit.group(1)}"
                    and r["head_sha"] == query.get("head_sha", r["head_sha"])
                    and r["event"] == query.get("event", r["event"])
                ]
                return self._send(
                    200, {"total_count": len(found), "workflow_runs": found[:per_page]}
                )
            if (hit := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest)) and method == "GET":
                download = f"{base[0]}/repos/{REPO}/actions/artifacts"
                found = [
                    {**a, "archive_download_url": f"{download}/{a['id']}/zip"}
                    for a in state.artifacts
                    if a["workflow_run"]["id"] == int(hit.group(1))
                    and a["name"] == query.get("name", a["name"])
                ]
                return self._send(200, {"total_count": len(found), "artifacts": found[:per_page]})
            if (hit := re.fullmatch(r"/actions/runs/(\d+)/approvals", rest)) and method == "GET":
                return self._send(200, state.approvals.get(int(hit.group(1)), []))
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
