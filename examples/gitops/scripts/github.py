"""The few GitHub REST calls the agentform workflows make, with the standard library
only: one sticky comment per pull request and one open issue per workspace, each
found again by the HTML comment marker agentform puts first in its markdown.

Environment (set by GitHub Actions): GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN.
"""

from __future__ import annotations

import io
import json
import os
import urllib.error
import urllib.request
import zipfile
from typing import Any


def first_line(markdown: str) -> str:
    """The marker: `<!-- agentform:plan workspace=NAME -->`."""
    return markdown.split("\n", 1)[0].strip()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # artifact downloads redirect to storage: follow without the token


class GitHub:
    def __init__(self) -> None:
        self.api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        self.repo = os.environ["GITHUB_REPOSITORY"]
        self.token = os.environ["GITHUB_TOKEN"]

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = path if path.startswith("http") else f"{self.api}/repos/{self.repo}{path}"
        request = urllib.request.Request(
            url,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            data = answer.read()
        return json.loads(data) if data else None

    def pages(self, path: str) -> list[Any]:
        out: list[Any] = []
        sep = "&" if "?" in path else "?"
        for page in range(1, 1000):
            items = self.call("GET", f"{path}{sep}per_page=100&page={page}")
            out += items
            if len(items) < 100:
                return out
        return out

    # -- one sticky comment on a pull request ----------------------------------
    def upsert_comment(self, number: int, markdown: str) -> int:
        """Updates the comment that starts with the same marker, or adds one."""
        marker = first_line(markdown)
        for comment in self.pages(f"/issues/{number}/comments"):
            if first_line(comment["body"] or "") == marker:
                self.call("PATCH", f"/issues/comments/{comment['id']}", {"body": markdown})
                return int(comment["id"])
        return int(self.call("POST", f"/issues/{number}/comments", {"body": markdown})["id"])

    # -- one issue while drift lasts ------------------------------------------------
    def find_issue(self, marker: str, label: str) -> dict[str, Any] | None:
        for issue in self.pages(f"/issues?state=open&labels={label}"):
            if first_line(issue.get("body") or "") == marker:
                return dict(issue)
        return None

    def open_or_update_issue(self, title: str, markdown: str, label: str) -> int:
        issue = self.find_issue(first_line(markdown), label)
        if issue is not None:
            self.call("PATCH", f"/issues/{issue['number']}", {"body": markdown})
            return int(issue["number"])
        created = self.call(
            "POST", "/issues", {"title": title, "body": markdown, "labels": [label]}
        )
        return int(created["number"])

    def close_issue(self, marker: str, label: str, note: str) -> int | None:
        issue = self.find_issue(marker, label)
        if issue is None:
            return None
        self.call("POST", f"/issues/{issue['number']}/comments", {"body": note})
        self.call("PATCH", f"/issues/{issue['number']}", {"state": "closed"})
        return int(issue["number"])

    # -- the saved plan of a merged pull request ----------------------------------------
    def merged_pull_request(self, sha: str) -> int | None:
        pulls = self.call("GET", f"/commits/{sha}/pulls")
        return int(pulls[0]["number"]) if pulls else None

    def download_artifact(self, name: str, member: str) -> bytes | None:
        """The file `member` of the newest artifact called `name`, or None."""
        found = self.call("GET", f"/actions/artifacts?name={name}&per_page=1")
        artifacts = [a for a in found.get("artifacts", []) if not a.get("expired")]
        if not artifacts:
            return None
        opener = urllib.request.build_opener(_NoRedirect)
        request = urllib.request.Request(
            artifacts[0]["archive_download_url"],
            headers={"Authorization": f"Bearer {self.token}"},
        )
        try:
            with opener.open(request, timeout=60) as answer:
                archive = answer.read()
        except urllib.error.HTTPError as redirect:
            if redirect.code not in (301, 302, 303, 307, 308):
                raise
            with urllib.request.urlopen(redirect.headers["Location"], timeout=60) as answer:
                archive = answer.read()
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            return zipped.read(member) if member in zipped.namelist() else None
