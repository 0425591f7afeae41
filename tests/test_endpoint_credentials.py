"""Credentials written in the endpoint URL (`http://user:password@host/...`) appear in
no output: not in the plan's header, the saved plan, or the cassette (its URIs), in
any encoding; the password is a sensitive value of the run, the endpoint is shown
without its user and password."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.service import create_app
from agentform.service.startup.seed_file import Seed
from tests.loopback import serving
from tests.test_canaries import Canary, leaks

USER = "cnryUser-9"
PASSWORD = "cnryUrl-ü'é-4Z"  # non-ASCII and a quote
KEY = "endpoint-credentials-key"


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    seed = Seed.model_validate(
        {
            "organizations": [
                {
                    "name": "creds",
                    "apiKeys": [{"name": "admin", "key": KEY, "role": "admin"}],
                    "profiles": [{"name": "bot-1"}],
                }
            ]
        }
    )
    app = create_app(tmp_path_factory.mktemp("service") / "service.db", seed=seed)
    with serving(app) as served:
        yield served


def test_endpoint_credentials_appear_in_no_output(origin: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "agentform.yaml").write_text("workspace: ws\nendpoint: local\n")
    (ws / "pools.yaml").write_text("profilePools:\n  - {name: p, members: [bot-1]}\n")
    host = origin.removeprefix("http://")
    endpoint = f"http://{USER}:{PASSWORD}@{host}/agents/v2"
    cassette, saved = tmp_path / "c.yaml", tmp_path / "p.json"
    args = ["plan", "--endpoint", endpoint, "--record-cassette", str(cassette)]
    args += ["--out", str(saved), "-C", str(ws)]
    result = CliRunner().invoke(cli, args, env={"AGENTFORM_API_KEY": KEY})
    assert result.exit_code == 0, result.output
    assert f"on http://{host}/agents/v2" in result.stdout  # shown without user and password
    canary = Canary("endpoint", PASSWORD, quote(PASSWORD, safe="'"))
    produced = {
        "stdout": result.stdout.encode(),
        "stderr": result.stderr.encode(),
        "saved plan": saved.read_bytes(),
        "cassette": cassette.read_bytes(),
    }
    for where, blob in produced.items():
        assert not leaks(blob, canary), (where, leaks(blob, canary))
        assert USER.encode() not in blob, where
    assert f"http://{host}/agents/v2".encode() in produced["cassette"]  # URIs kept, bare
