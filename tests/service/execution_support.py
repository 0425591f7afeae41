"""What the execution tests share: a seed with scripted agents, an app per module on a
manual clock, and readers for events and statuses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.service import Seed
from agentform.service.models.execution_status import ACTIVE
from agentform.service.runtime import ManualClock
from agentform.service.store import events
from tests.service.conftest import Api, running
from tests.service.templates import seeded_app

EXEC_ORG = "33333333-3333-4333-8333-333333333333"
RIVAL_ORG = "44444444-4444-4444-8444-444444444444"
EXEC_KEY = "exec-admin-key-0001"
SMALL_KEY = "small-admin-key-0001"  # the "small" organization: at most 2 at once
EXEC_READ_KEY = "exec-read-key-0001"
RIVAL_KEY = "rival-admin-key-0001"

SCRIPTED = {
    "inputs": {"order": "A-1", "outcome": "ok"},
    "steps": [
        {
            "transition": {"toNode": "Start", "transitionType": "start"},
            "reasoning": "Order {{ inputs.order }} needs work.",
            "message": "Working on {{ inputs.order }}.",
            "actions": [
                {
                    "name": "navigate",
                    "arguments": {"order": "{{ inputs.order }}"},
                    "output": {"ok": True},
                    "duration": 0.5,
                }
            ],
            "duration": 0.5,
        },
        {
            "actions": [
                {
                    "name": "save",
                    "arguments": {},
                    "failure": "could not save",
                    "osError": {"message": "ENOSPC"},
                    "duration": 0.5,
                }
            ],
            "playwright": {"nodeName": "Start", "script": "await page.click('#go')"},
            "file": {
                "name": "report-{{ inputs.order }}.txt",
                "mimeType": "text/plain",
                "content": "report of {{ inputs.order }}",
            },
            "workflowUpdate": [{"op": "add_node", "node": "Check"}],
            "confirm": "Confirm order {{ inputs.order }}",
            "duration": 0.5,
        },
        {"transition": {"toNode": "Done"}, "duration": 1.0},
    ],
    "end": [
        {"when": "inputs.outcome == 'fail'", "failure": "order {{ inputs.order }} failed"},
        {"result": {"order": "{{ inputs.order }}"}, "reasoning": "all done", "outcome": "success"},
    ],
}
"""Runs 2 s, awaits confirmation, then 1 s more: STARTED at 0, awaiting at 2."""

STEADY = {
    "steps": [{"message": f"step {n}", "duration": 1.0} for n in (1, 2, 3)],
    "end": {"result": {"steady": True}},
}
"""Three steps of 1 s: completes 3 s after it starts, unless paused."""

EXEC_SEED = Seed.model_validate(
    {
        "organizations": [
            {
                "name": "exec",
                "id": EXEC_ORG,
                "maxConcurrentExecutions": 1000,
                "apiKeys": [
                    {"name": "admin", "key": EXEC_KEY, "role": "admin"},
                    {"name": "reader", "key": EXEC_READ_KEY, "role": "read"},
                ],
                "agents": [
                    {
                        "name": "scripted",
                        "versions": [1, 2, 3],
                        "publishedVersion": 2,
                        "script": SCRIPTED,
                    },
                    {"name": "steady", "script": STEADY},
                    {"name": "plain"},
                    {"name": "needs-input", "script": {"steps": [{"message": "{{ inputs.x }}"}]}},
                ],
                "profiles": [{"name": f"e{i}"} for i in range(1, 4)],
            },
            {
                "name": "small",
                "maxConcurrentExecutions": 2,
                "apiKeys": [{"name": "admin", "key": SMALL_KEY, "role": "admin"}],
                "agents": [
                    {"name": "steady", "script": STEADY},
                    {"name": "scripted", "script": SCRIPTED},
                    {"name": "plain"},
                ],
                "profiles": [{"name": f"s{i}"} for i in range(1, 4)],
            },
            {
                "name": "rival",
                "id": RIVAL_ORG,
                "apiKeys": [{"name": "admin", "key": RIVAL_KEY, "role": "admin"}],
                "agents": [{"name": "rival-agent"}],
                "profiles": [{"name": "rival-profile"}],
            },
        ]
    }
)


def make_app(directory: Path, seed: Seed = EXEC_SEED) -> FastAPI:
    return seeded_app(directory / "service.db", seed=seed, clock=ManualClock())


def module_app(name: str) -> Any:
    """A module-scoped `app` fixture: one service for the whole test module (made
    once, closed after), so a module's tests share it instead of each making one."""

    @pytest.fixture(scope="module")
    def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
        application = make_app(tmp_path_factory.mktemp(name))
        yield application
        application.state.db.close()

    return app


@contextmanager
def service(app: FastAPI, key: str = EXEC_KEY) -> Iterator[tuple[Api, Callable[[float], None]]]:
    with running(app, key) as (api, advance):
        yield api, advance


def event_log(app: FastAPI, execution_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, payload) of the execution, in the order appended."""
    with app.state.db.read() as conn:
        return [(e.event, e.payload) for e in events.list_events(conn, execution_id=execution_id)]


def event_names(app: FastAPI, execution_id: str) -> list[str]:
    return [name for name, _ in event_log(app, execution_id)]


def execute(api: Api, agent_id: str, **body: Any) -> str:
    r = api.post(f"/agents/{agent_id}/execute", json=body)
    assert r.status_code == 202, r.text
    return str(r.json()["executionId"])


def status_of(api: Api, execution_id: str) -> str:
    return str(api.get(f"/executions/{execution_id}").json()["status"])


def check_active_counts(app: FastAPI) -> None:
    """Each organization's kept count of executions holding capacity (migration 011's
    triggers) is `count(*)` of its executions in an ACTIVE status, now."""
    marks = ",".join("?" * len(ACTIVE))
    with app.state.db.read() as conn:
        counted = dict(
            conn.execute(
                f"SELECT organization_id, count(*) FROM executions WHERE status IN ({marks})"
                " GROUP BY organization_id",
                tuple(ACTIVE),
            ).fetchall()
        )
        orgs = [r[0] for r in conn.execute("SELECT id FROM organizations")]
        rows = conn.execute("SELECT organization_id, active FROM execution_active_counts")
        kept = dict(rows.fetchall())
    assert {org: kept.get(org, 0) for org in orgs} == {org: counted.get(org, 0) for org in orgs}
