"""The few GitHub REST calls the agentform workflows make, with the standard library
only: one sticky comment per pull request (and one per pair for a re-plan or an
apply report) and one open issue per drifted pair, each found again by the HTML
comment marker first in its markdown.

Also where the apply workflow finds the plan reviewed in a pull request: an artifact
of a successful run of the plan workflow, of this repository, for the pull request's
head commit; anything else is refused (reviewed_plan).

Environment (set by GitHub Actions): GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN.
"""

from __future__ import annotations

import contextlib
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


class GitHubError(Exception):
    """A call GitHub refused: one line, `METHOD PATH: STATUS message`."""


class GitHub:
    def __init__(self) -> None:
        self.api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        self.repo = os.environ.get("GITHUB_REPOSITORY", "")
        self.token = os.environ.get("GITHUB_TOKEN", "")
        if not self.repo or not self.token:
            missing = "GITHUB_TOKEN" if self.repo else "GITHUB_REPOSITORY"
            raise GitHubError(f"{missing} is not set: pass `${{{{ github.token }}}}` to this step")

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
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                data = answer.read()
        except urllib.error.HTTPError as exc:
            message = exc.read().decode("utf-8", "replace")[:200]
            with contextlib.suppress(ValueError):
                message = json.loads(message).get("message", message)
            where = url.removeprefix(self.api).split("?")[0]
            raise GitHubError(f"GitHub refused {method} {where}: {exc.code} {message}") from None
        except urllib.error.URLError as exc:
            raise GitHubError(f"cannot reach GitHub at {self.api}: {exc.reason}") from None
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

    # -- the plan reviewed in a merged pull request ----------------------------------------
    def pull_request_merged_as(self, sha: str) -> dict[str, Any] | None:
        """The pull request whose merge made commit `sha` (merged, merge_commit_sha is
        `sha`), or None: a direct push, or a commit that only contains a merge."""
        for pull in self.call("GET", f"/commits/{sha}/pulls") or []:
            if pull.get("merged_at") and pull.get("merge_commit_sha") == sha:
                return dict(pull)
        return None

    def merged_pulls(self, limit: int = 30) -> list[dict[str, Any]]:
        """The pull requests merged most recently, newest first (at most `limit`)."""
        closed = self.call(
            "GET", f"/pulls?state=closed&sort=updated&direction=desc&per_page={limit}"
        )
        merged = [dict(p) for p in closed or [] if p.get("merged_at")]
        return sorted(merged, key=lambda p: str(p["merged_at"]), reverse=True)

    def refusal(self, run: dict[str, Any], workflow_path: str, head_sha: str) -> str | None:
        """Why a workflow run cannot vouch for a reviewed plan, or None."""
        own = self.repo.lower()
        if (run.get("path") or "").split("@")[0] != workflow_path:
            return f"it is a run of {run.get('path')}, not of {workflow_path}"
        if (run.get("repository") or {}).get("full_name", "").lower() != own:
            return "it is a run of another repository"
        if ((run.get("head_repository") or {}).get("full_name") or "").lower() != own:
            return "it ran on a fork's code (its workflow and scripts were the fork's)"
        if run.get("head_sha") != head_sha:
            return f"it is for commit {run.get('head_sha')}, not {head_sha}"
        if run.get("event") != "pull_request":
            return f"it ran on {run.get('event')}, not pull_request"
        if run.get("conclusion") != "success":
            return f"it did not succeed ({run.get('conclusion') or run.get('status')})"
        return None

    def reviewed_plan(
        self, workflow_file: str, head_sha: str, artifact: str, member: str
    ) -> tuple[bytes | None, list[str]]:
        """The file `member` of the artifact `artifact` of the newest successful run of
        .github/workflows/`workflow_file` in this repository for `head_sha`, and the
        reasons other runs and artifacts were refused (for the log)."""
        workflow_path = f".github/workflows/{workflow_file}"
        found = self.call(
            "GET",
            f"/actions/workflows/{workflow_file}/runs?head_sha={head_sha}"
            "&event=pull_request&per_page=100",
        )
        runs = sorted(
            found.get("workflow_runs", []),
            key=lambda r: (r.get("created_at") or "", r.get("id") or 0),
            reverse=True,
        )
        refused: list[str] = []
        for run in runs:
            if why := self.refusal(run, workflow_path, head_sha):
                refused.append(f"run {run.get('id')} refused: {why}")
                continue
            artifacts = self.call("GET", f"/actions/runs/{run['id']}/artifacts?per_page=100")
            for item in artifacts.get("artifacts", []):
                origin = item.get("workflow_run") or {}
                if item.get("name") != artifact or item.get("expired"):
                    continue
                if origin.get("id") != run["id"] or origin.get("head_sha") != head_sha:
                    refused.append(f"artifact {item.get('id')} refused: not of run {run['id']}")
                    continue
                data = self.download(item["archive_download_url"], member)
                if data is None:
                    refused.append(f"artifact {item.get('id')} refused: it holds no {member}")
                    continue
                return data, refused
            refused.append(f"run {run['id']} has no artifact {artifact}")
            return None, refused  # the newest good run had none: an older one is outdated
        if not runs:
            refused.append(f"no run of {workflow_path} for commit {head_sha}")
        return None, refused

    def approvals(self, run_id: str, environment: str) -> list[str]:
        """Who approved the deployment of run `run_id` to `environment` (its review
        history), newest first."""
        history = self.call("GET", f"/actions/runs/{run_id}/approvals") or []
        return [
            (entry.get("user") or {}).get("login", "?")
            for entry in history
            if entry.get("state") == "approved"
            and any(e.get("name") == environment for e in entry.get("environments", []))
        ]

    def download(self, url: str, member: str) -> bytes | None:
        """The file `member` of the artifact archive at `url`, or None."""
        opener = urllib.request.build_opener(_NoRedirect)
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with opener.open(request, timeout=60) as answer:
                archive = answer.read()
        except urllib.error.HTTPError as redirect:
            if redirect.code not in (301, 302, 303, 307, 308):
                raise GitHubError(
                    f"GitHub refused the artifact download: {redirect.code}"
                ) from None
            with urllib.request.urlopen(redirect.headers["Location"], timeout=60) as answer:
                archive = answer.read()
        with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
            return zipped.read(member) if member in zipped.namelist() else None


def fail(line: str, number: int | None, marker: str) -> int:
    """Fails the step with one line (log, annotation, job summary) and, when there is a
    pull request, says it there too in the sticky comment `marker` starts. Returns 1."""
    from pipeline import error

    error(line)
    if number is not None:
        try:
            GitHub().upsert_comment(number, f"{marker}\n> [!CAUTION]\n> {line}\n")
        except GitHubError as exc:
            error(f"the pull request could not be told: {exc}")
    return 1
