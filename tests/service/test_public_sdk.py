"""The public SDK (`asteroid-odyssey` 1.9.167), unmodified, against the service over real
HTTP on loopback: it stages a file, executes, lists, reads, pauses, resumes and cancels
executions, and parses every answer into its own models."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from agentform.service import create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings
from tests.public_sdk import sdk
from tests.service.execution_support import EXEC_KEY, EXEC_ORG, EXEC_SEED, event_log, event_names

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:asteroid_odyssey")


class LoopbackService:
    """The app under uvicorn on 127.0.0.1 (a port the OS picks), in a thread, on a
    manual clock that `advance` moves on the server's own loop."""

    def __init__(self, directory: Path) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.host = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.clock = ManualClock()
        self.app = create_app(
            directory / "service.db",
            seed=EXEC_SEED,
            clock=self.clock,
            # where file links point
            settings=ServiceSettings(platform_url=f"{self.host}/agents/v2"),
        )
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning"))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_until_complete,
            args=(self.server.serve(sockets=[self.socket]),),
            daemon=True,
        )

    def __enter__(self) -> LoopbackService:
        self.thread.start()
        for _ in range(500):
            if self.server.started:
                break
            threading.Event().wait(0.01)
        assert self.server.started, "the service did not start"
        return self

    def advance(self, seconds: float) -> None:
        asyncio.run_coroutine_threadsafe(self.clock.advance(seconds), self.loop).result(30)

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.loop.close()  # its selector and self-pipe sockets with it
        self.socket.close()
        self.app.state.db.close()


@pytest.fixture(scope="module")
def loopback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackService]:
    with LoopbackService(tmp_path_factory.mktemp("sdk")) as service:
        yield service


@pytest.fixture(scope="module")
def client(loopback: LoopbackService) -> Iterator[sdk.ApiClient]:
    config = sdk.Configuration(host=loopback.host)
    config.api_key["ApiKeyAuth"] = EXEC_KEY
    with sdk.ApiClient(config) as api_client:
        yield api_client


@pytest.fixture(scope="module")
def agent_ids(loopback: LoopbackService) -> dict[str, str]:
    # Read plainly: the SDK's agent model is not one of the operations under test here.
    page = httpx.get(
        f"{loopback.host}/agents/v2/agents", headers={"X-Api-Key": EXEC_KEY}, timeout=10
    ).json()
    return {a["name"]: a["id"] for a in page["items"]}


def test_the_sdk_stages_a_file_and_executes_with_it(
    client: sdk.ApiClient, agent_ids: dict[str, str]
) -> None:
    files = sdk.FilesApi(client)
    # The contract answers 201 (docs/service/contract.md#staged-files; the public
    # service's status); this SDK maps only 200 to its model, so `temp_files_upload`
    # returns None for a body it does not look at...
    assert files.temp_files_upload(files=[("first.csv", b"1")]) is None
    # ...and the same call with its HTTP info gives the body its model parses.
    answer = files.temp_files_upload_with_http_info(files=[("orders.csv", b"a,b\n1,2\n")])
    assert answer.status_code == 201
    staged = sdk.AgentsFilesTempFilesResponse.from_json(answer.raw_data.decode())
    assert staged is not None
    (temp_file,) = staged.temp_files
    assert temp_file.name == "orders.csv"
    request = sdk.AgentsAgentExecuteAgentRequest(
        inputs={"order": "SDK-1"},
        metadata={"source": "sdk"},
        temp_files=[sdk.AgentsFilesTempFile(id=temp_file.id, name=temp_file.name)],
        execution_options=sdk.AgentsAgentExecutionOptions(soft_timeout_mins=5, variant_key="eu"),
        version=3,
    )
    created = sdk.AgentsApi(client).agent_execute_post(agent_ids["scripted"], request)
    assert isinstance(created, sdk.AgentsAgentExecuteAgentResponse)
    assert created.status == sdk.AgentsExecutionStatus.STARTING
    got = sdk.ExecutionApi(client).execution_get(created.execution_id)
    assert isinstance(got, sdk.AgentsExecutionListItem)
    assert got.id == created.execution_id and got.workflow_id == agent_ids["scripted"]
    assert got.agent_name == got.workflow_name == "scripted"
    assert got.inputs == {"order": "SDK-1"} and got.metadata == {"source": "sdk"}
    assert got.human_labels == [] and got.comments == [] and got.has_been_rerun is False


def test_the_sdks_deprecated_stage_call_stages_a_file_for_its_organization(
    client: sdk.ApiClient,
) -> None:
    files = sdk.FilesApi(client)
    staged = files.temp_files_stage(EXEC_ORG, files=[("stage.csv", b"x,y\n")])
    assert isinstance(staged, sdk.AgentsFilesTempFilesResponse)
    (temp_file,) = staged.temp_files
    assert temp_file.name == "stage.csv"
    other = "22222222-2222-4222-8222-222222222222"  # not the key's organization
    with pytest.raises(sdk.ApiException) as refused:
        files.temp_files_stage(other, files=[("stage.csv", b"x")])
    assert refused.value.status == 403


def test_the_sdk_follows_an_execution_through_pause_resume_and_its_end(
    client: sdk.ApiClient, loopback: LoopbackService, agent_ids: dict[str, str]
) -> None:
    executions = sdk.ExecutionApi(client)
    request = sdk.AgentsAgentExecuteAgentRequest(
        on_capacity_limit=sdk.AgentsAgentOnCapacityLimit.QUEUE
    )
    execution_id = (
        sdk.AgentsApi(client).agent_execute_post(agent_ids["steady"], request).execution_id
    )
    loopback.advance(0.5)
    paused = executions.execution_pause(execution_id)
    assert isinstance(paused, sdk.AgentsExecutionExecutionStatusChange)
    assert paused.status == sdk.AgentsExecutionUpdateableStatus.PAUSED
    loopback.advance(10)
    assert executions.execution_get(execution_id).status == sdk.AgentsExecutionStatus.PAUSED
    resumed = executions.execution_resume(execution_id)
    assert resumed.status == sdk.AgentsExecutionUpdateableStatus.RUNNING
    loopback.advance(3)
    done = executions.execution_get(execution_id)
    assert done.status == sdk.AgentsExecutionStatus.COMPLETED
    assert done.execution_result is not None and done.execution_result.outcome == "success"
    assert done.execution_result.result == {"steady": True}
    assert done.started_at is not None and done.terminal_at is not None
    assert "EXECUTION_RESUMED" in event_names(loopback.app, execution_id)


def test_the_sdk_cancels_and_reads_a_409_as_an_api_exception(
    client: sdk.ApiClient, loopback: LoopbackService, agent_ids: dict[str, str]
) -> None:
    executions = sdk.ExecutionApi(client)
    created = sdk.AgentsApi(client).agent_execute_post(
        agent_ids["steady"], sdk.AgentsAgentExecuteAgentRequest()
    )
    cancelled = executions.execution_cancel(created.execution_id)
    assert cancelled.status == sdk.AgentsExecutionUpdateableStatus.CANCELLED
    with pytest.raises(sdk.ApiException) as refused:
        executions.execution_cancel(created.execution_id)
    assert refused.value.status == 409


def test_the_sdk_lists_executions_with_its_filters(
    client: sdk.ApiClient, loopback: LoopbackService, agent_ids: dict[str, str]
) -> None:
    agents, executions = sdk.AgentsApi(client), sdk.ExecutionApi(client)
    mine = [
        agents.agent_execute_post(
            agent_ids["plain"], sdk.AgentsAgentExecuteAgentRequest(metadata={"batch": "sdk-list"})
        ).execution_id
        for _ in range(3)
    ]
    loopback.advance(1)
    page = executions.executions_list(
        agent_id=agent_ids["plain"],
        status=[sdk.AgentsExecutionStatus.COMPLETED],
        metadata_key="batch",
        metadata_value="sdk-list",
        page_size=2,
        page=1,
    )
    assert isinstance(page, sdk.ExecutionsList200Response)
    assert page.total == 3 and page.page_size == 2
    assert [e.id for e in page.items] == mine[:2]
    assert all(e.status == sdk.AgentsExecutionStatus.COMPLETED for e in page.items)
    everything = executions.executions_list(page_size=100)
    assert {e.id for e in everything.items} >= set(mine)


def test_a_produced_files_presigned_link_is_served_over_http(
    client: sdk.ApiClient, loopback: LoopbackService, agent_ids: dict[str, str]
) -> None:
    request = sdk.AgentsAgentExecuteAgentRequest(inputs={"order": "LINK-1"})
    execution_id = sdk.AgentsApi(client).agent_execute_post(agent_ids["scripted"], request)
    loopback.advance(2)
    (payload,) = [
        p
        for n, p in event_log(loopback.app, execution_id.execution_id)
        if n == "EXECUTION_FILE_ADDED"
    ]
    assert payload["presigned_url"].startswith(loopback.host + "/execution-files/")
    got = httpx.get(payload["presigned_url"], timeout=10)  # no API key
    assert got.status_code == 200 and got.content == b"report of LINK-1"
    sdk.ExecutionApi(client).execution_cancel(execution_id.execution_id)
