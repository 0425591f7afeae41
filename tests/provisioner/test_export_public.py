"""`agentform export` against the public service's /context, over real HTTP: it
answers `{userId, email, organizations}` (no `organizationId`), so the exported
agentform.yaml names the organization the run resolved, not a field only the
embedded service adds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentform.cli.main import cli
from agentform.service import DEMO_ADMIN_KEY, create_app
from tests.loopback import serving
from tests.provisioner.test_public_shapes import only_public, shape_of

OTHER_ORG = {"id": "0b7f3c1e-0000-4000-8000-0000000000ff", "name": "elsewhere"}


class PublicContext:
    """The embedded service, with /context answered in the public shape; `several`
    adds a second organization the key reaches."""

    def __init__(self, app: ASGIApp, several: bool) -> None:
        self.app = app
        self.several = several
        self.lists: list[str] = []  # the query of every list read

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.endswith("/context"):
            if scope["type"] == "http" and scope["method"] == "GET":
                self.lists.append(f"{path}?{scope['query_string'].decode()}")
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []

        async def keep(message: Message) -> None:
            messages.append(message)

        await self.app(scope, receive, keep)
        body: dict[str, Any] = json.loads(b"".join(m.get("body", b"") for m in messages[1:]))
        shown = only_public(shape_of("GET", "/context"), body)
        if self.several:
            shown["organizations"].append(OTHER_ORG)
        content = json.dumps(shown).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": content})


@pytest.mark.parametrize("several", [False, True])
def test_export_names_the_organization_resolved_from_the_public_context(
    tmp_path: Path, several: bool
) -> None:
    service = create_app(tmp_path / "service.db")
    app = PublicContext(service, several)
    out = tmp_path / "exported"
    env = {"AGENTFORM_API_KEY": DEMO_ADMIN_KEY}
    with serving(app) as origin:
        endpoint = f"{origin}/agents/v2"
        ours = httpx.get(f"{endpoint}/context", headers={"X-Api-Key": DEMO_ADMIN_KEY}).json()
        org = ours["organizations"][0]["id"]
        args = ["export", "--endpoint", endpoint, "--out", str(out), "-C", str(tmp_path)]
        if several:
            args += ["--organization-id", org]
        result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load((out / "agentform.yaml").read_text())["organizationId"] == org
    lists = [q for q in app.lists if q.split("?")[0].endswith(("-pools", "-groups", "templates"))]
    assert lists and all((f"organizationId={org}" in q) == several for q in lists), lists
