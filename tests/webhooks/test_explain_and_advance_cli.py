"""`agentform webhook explain` and `agentform service advance` against a service over
real HTTP on a manual clock (word for word), against one on the wall clock, and
against one without agentform's own operations (as the public service is)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner, Result
from fastapi import FastAPI

from agentform.cli.main import cli
from agentform.service import create_app
from tests.loopback import serving
from tests.service.execution_support import EXEC_KEY, EXEC_READ_KEY, EXEC_SEED, make_app
from tests.webhooks.receiver import Receiver, running_receiver


@pytest.fixture(scope="module")
def rx() -> Iterator[Receiver]:
    with running_receiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = make_app(tmp_path_factory.mktemp("explain"))  # a manual clock
    with serving(app) as url:
        yield url
    app.state.db.close()


def run(*args: str, key: str = EXEC_KEY) -> Result:
    env = {"AGENTFORM_API_KEY": key, "AGENTFORM_ENDPOINT": ""}
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def call(origin: str, method: str, path: str, body: Any = None) -> Any:
    r = httpx.request(
        method, f"{origin}/agents/v2{path}", json=body, headers={"X-Api-Key": EXEC_KEY}
    )
    assert r.status_code < 300, r.text
    return r.json() if r.content else None


@pytest.fixture(scope="module")
def execution(origin: str, rx: Receiver) -> str:
    """A `steady` execution (three steps of 1 s), metadata team=ops, weighed by two
    attachments, not yet run: the clock has not moved."""
    agents = {a["name"]: a["id"] for a in call(origin, "GET", "/agents?pageSize=100")["items"]}
    steady = agents["steady"]
    for name, settings in (
        ("ops-alerts", {"eventRules": ["EXECUTION_COMPLETED"]}),
        ("payments", {"eventRules": ["*"], "metadataFilter": {"team": "payments"}}),
    ):
        made = call(origin, "POST", "/webhook-integrations", {"name": name, "url": rx.url})
        call(origin, "PUT", f"/agents/{steady}/webhooks/{made['id']}", settings)
    answer = call(origin, "POST", f"/agents/{steady}/execute", {"metadata": {"team": "ops"}})
    return str(answer["executionId"])


def test_advance_until_the_execution_completes_then_explain_it(origin: str, execution: str) -> None:
    endpoint = f"{origin}/agents/v2"
    moved = run(
        "service",
        "advance",
        "until",
        f"executions/{execution}",
        "is",
        "completed",
        "--endpoint",
        endpoint,
    )
    assert moved.exit_code == 0, moved.output
    assert moved.output == (
        f"Clock moved 3s, now 2025-01-01T00:00:03.000000Z: executions/{execution} is completed\n"
    )
    explained = run("webhook", "explain", execution, "--endpoint", endpoint)
    assert explained.exit_code == 0, explained.output
    none = [
        "  ops-alerts: not sent (eventRules: the event rules (EXECUTION_COMPLETED)"
        " do not list {e})",
        "  payments: not sent (metadataFilter.team: metadataFilter.team wanted 'payments', "
        "the execution's was 'ops')",
    ]

    def at(event: str, second: int) -> list[str]:
        return [
            f"{event} at 2025-01-01T00:00:0{second}.000000Z",
            *(n.format(e=event) for n in none),
        ]

    steps = [
        line
        for second in (0, 1, 2)
        for line in [
            *(at("EXECUTION_STEP_PROCESSED", second) if second else []),
            *at("EXECUTION_STEP_STARTED", second),
            *at("EXECUTION_MESSAGE_ADDED", second),
        ]
    ]
    assert explained.output.splitlines() == [
        f"Execution {execution} (completed): 11 events",
        *at("EXECUTION_STARTED", 0),
        *steps,
        *at("EXECUTION_STEP_PROCESSED", 3),
        "EXECUTION_COMPLETED at 2025-01-01T00:00:03.000000Z",
        "  ops-alerts: sent, delivered after 1 attempt "
        "(eventRules: the event rules list EXECUTION_COMPLETED)",
        none[1],
    ]


def test_explain_as_json_is_the_services_answer(origin: str, execution: str) -> None:
    result = run(
        "webhook", "explain", execution, "--format", "json", "--endpoint", f"{origin}/agents/v2"
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["executionId"] == execution
    assert [len(e["decisions"]) for e in answer["events"]] == [2] * len(answer["events"])


def test_explain_of_an_unknown_execution(origin: str) -> None:
    result = run("webhook", "explain", "no-such-execution", "--endpoint", f"{origin}/agents/v2")
    assert result.exit_code == 1
    assert result.output == (
        "Error: no execution no-such-execution in the organization of this API key\n"
    )


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["90"], "Error: '90' is not a duration such as 90s, 2m, 1h30m or 1d (say the unit: 90s)"),
        (
            ["2", "m"],
            "Error: give one duration (90s, 2m, 1h30m, 1d), or until CONDITION; not '2 m'",
        ),
        (
            ["until", "batch/a/b", "is", "completed"],
            "Error: 'batch' is not a kind a condition names (executions, batches)"
            " (did you mean 'batches'?)",
        ),
        (["until"], "Error: until what? write until KIND/KEY is STATUS"),
        (
            ["untill", "executions/e-1", "is", "finished"],
            "Error: 'untill' is not a duration or until CONDITION (did you mean 'until'?)",
        ),
        (["Until"], "Error: 'Until' is not a duration or until CONDITION (did you mean 'until'?)"),
    ],
)
def test_advance_words_that_cannot_be_read(origin: str, words: list[str], said: str) -> None:
    result = run("service", "advance", *words, "--endpoint", f"{origin}/agents/v2")
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith(said), result.output


def test_advance_needs_a_running_services_url_and_an_admin_key(origin: str) -> None:
    nowhere = run("service", "advance", "1m")
    assert nowhere.exit_code == 1 and "Error: which service? give the URL" in nowhere.output
    local = run("service", "advance", "1m", "--endpoint", "local")
    assert (
        local.exit_code == 1 and "the local endpoint runs only while a command does" in local.output
    )
    reader = run("service", "advance", "1m", "--endpoint", f"{origin}/agents/v2", key=EXEC_READ_KEY)
    assert reader.exit_code == 1 and "403 this API key may only read" in reader.output


def test_a_condition_on_nothing_exits_1_without_moving_the_clock(origin: str) -> None:
    words = ["until", "batches/steady/none", "is", "running", "--within", "90s"]
    result = run("service", "advance", *words, "--endpoint", f"{origin}/agents/v2")
    assert result.exit_code == 1
    assert "no batch 'steady/none' in this organization" in result.output
    assert "the clock did not move" in result.output


def test_a_services_own_404_gives_no_hint_about_the_endpoint(origin: str) -> None:
    """Found by the trial: the service's 404 about a missing execution was followed by
    "(the endpoint is the service's base URL ...: did you mean .../agentform/v1/agents/v2?)",
    though the endpoint was right: the hint is for a path the server does not serve."""
    words = ["until", "executions/nope", "is", "finished"]
    result = run("service", "advance", *words, "--endpoint", f"{origin}/agents/v2")
    assert result.exit_code == 1
    assert result.output == (
        "Error: POST /clock/advance: 404 no execution 'nope' in this organization: "
        "nothing to wait for (the clock did not move)\n"
    )


def test_a_service_on_the_wall_clock_is_not_moved(tmp_path: Path) -> None:
    app = create_app(tmp_path / "wall.db", seed=EXEC_SEED)
    with serving(app) as url:
        result = run("service", "advance", "2m", "--endpoint", f"{url}/agents/v2")
    app.state.db.close()
    assert result.exit_code == 1
    assert result.output == (
        f"Error: the service at {url}/agents/v2 is not on a manual clock (it runs on the wall "
        "clock); start it with `agentform service run --clock manual`\n"
    )


def test_a_service_without_agentforms_operations_says_so() -> None:
    public = FastAPI()  # like the public service: its API, and nothing at /agentform/v1
    with serving(public) as url:
        explained = run("webhook", "explain", "e-1", "--endpoint", f"{url}/agents/v2")
        moved = run("service", "advance", "1m", "--endpoint", f"{url}/agents/v2")
    assert explained.exit_code == 1
    assert explained.output == (
        f"Error: the service at {url}/agents/v2 does not explain routing; the embedded "
        "agentform service does (agentform service run)\n"
    )
    assert moved.exit_code == 1
    assert "does not have a clock agentform can move" in moved.output
    assert "Traceback" not in explained.output + moved.output


def test_a_server_answering_405_on_the_clock_is_not_a_service_with_the_operations() -> None:
    """Found by the trial: a server that is not the embedded service and answers
    `GET /agentform/v1/clock` with 405 gave "405 Method Not Allowed", not the message
    a 404 there gives."""
    other = FastAPI()

    @other.post("/agentform/v1/clock")
    def clock() -> None: ...

    with serving(other) as url:
        moved = run("service", "advance", "1m", "--endpoint", f"{url}/agents/v2")
        pruned = run("service", "prune", "--older-than", "1d", "--endpoint", f"{url}/agents/v2")
    assert moved.exit_code == 1 and pruned.exit_code == 1
    assert moved.output == (
        f"Error: the service at {url}/agents/v2 does not have a clock agentform can move; "
        "the embedded agentform service does (agentform service run)\n"
    )
    assert pruned.output == (
        f"Error: the service at {url}/agents/v2 does not forget old history; "
        "the embedded agentform service does (agentform service run)\n"
    )


@pytest.mark.slow
def test_a_stopped_service_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run("service", "advance", "1m", "--endpoint", f"http://127.0.0.1:{port}/agents/v2")
    assert result.exit_code == 1
    # as every command: one notice that it retries, then the error
    *notices, error = result.output.splitlines()
    assert error.startswith("Error: GET /clock: cannot reach the service at ")
    assert [n.split(" (")[0] for n in notices] == ["retrying failed requests"]


def test_in_a_workspace_advance_takes_its_endpoint(origin: str, tmp_path: Path) -> None:
    """Found as a new user: inside a workspace whose agentform.yaml names the running
    service, `service advance 1m` asked "which service?"."""
    (tmp_path / "agentform.yaml").write_text(f"workspace: w\nendpoint: {origin}/agents/v2\n")
    result = run("service", "advance", "1s", "-C", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Clock moved 1s, now ")


def test_explain_records_a_cassette_as_every_command_does(
    origin: str, execution: str, tmp_path: Path
) -> None:
    """Its client was its own, outside the recording every other command's is in."""
    cassette = tmp_path / "explain.yaml"
    endpoint = f"{origin}/agents/v2"
    args = ["webhook", "explain", execution, "--format", "json", "--endpoint", endpoint]
    result = run(*args, "--record-cassette", str(cassette))
    assert result.exit_code == 0, result.output
    text = cassette.read_text()
    uris = [i["request"]["uri"] for i in yaml.safe_load(text)["interactions"]]
    assert uris == [f"{origin}/agentform/v1/executions/{execution}/routing"]
    assert EXEC_KEY not in text
