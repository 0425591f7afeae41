"""The two servers `service_floor.py` compares, each run as a script on a loopback port.

`ours DB PORT`: the Agent Service over DB as `service run` serves it (the same app,
the same uvicorn protocol), but with no runtime, so the server's CPU is the
requests' alone (an execution's steps would otherwise run between them).

`floor DB PORT`: a bare FastAPI app on a copy of the same database, with none of
agentform's code path: one endpoint reads the same page of the same table and
returns it through the same response model (`Page[ProfileSet]`), another takes
the same execute body (`ExecuteRequest`) and inserts the same execution row,
answering `ExecutionCreated`. Served by plain uvicorn with the same HTTP protocol
(h11), so the two differ by what agentform does on top and nothing else.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, Header, HTTPException, Query

from agentform.rules.execute import ExecuteRequest
from agentform.service import Seed
from agentform.service.models.executions import ExecutionCreated
from agentform.service.models.pages import Page
from agentform.service.models.profile_sets import ProfileSet

KEY = "bench-admin-key-0001"
ORG_ID = "5f0c9f7e-0000-4000-8000-00000000b001"
SMALL_KEY = "bench-admin-key-0002"  # an organization whose pools fit in one page
SMALL_ORG_ID = "5f0c9f7e-0000-4000-8000-00000000b002"
ORGS = {KEY: ORG_ID, SMALL_KEY: SMALL_ORG_ID}
AGENT_ID = "5f0c9f7e-0000-4000-8000-00000000a001"
SEED = Seed.model_validate(
    {
        "organizations": [
            {
                "name": "bench",
                "id": ORG_ID,
                # Every execution created stays active (no runtime): never at capacity.
                "maxConcurrentExecutions": 1_000_000,
                "apiKeys": [{"name": "admin", "key": KEY, "role": "admin"}],
                "agents": [
                    {
                        "name": "instant",
                        "id": AGENT_ID,
                        "script": {"steps": [], "end": {"result": {}}},
                    }
                ],
            },
            {
                "name": "small",
                "id": SMALL_ORG_ID,
                "apiKeys": [{"name": "admin", "key": SMALL_KEY, "role": "admin"}],
            },
        ]
    }
)
# The program agentform compiles for the agent above: the floor stores it as given.
PROGRAM = json.dumps([{"after": 0, "end": {"result": {}}}])
BASE = "/agents/v2"


def floor_app(db: Path) -> FastAPI:
    app = FastAPI()
    local = threading.local()

    def connection() -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            local.conn = conn
        return conn

    def organization(key: str) -> str:
        if key not in ORGS:
            raise HTTPException(401)
        return ORGS[key]

    @app.get(BASE + "/context")
    async def context() -> dict[str, str]:
        return {}

    @app.get(BASE + "/agent-profile-pools", response_model=Page[ProfileSet])
    def pools(
        x_api_key: Annotated[str, Header()],
        page: Annotated[int, Query(ge=1)] = 1,
        pageSize: Annotated[int, Query(ge=1, le=100)] = 50,
    ) -> Any:
        org_id, conn = organization(x_api_key), connection()
        where = "collection = 'pool' AND organization_id = ?"
        conn.execute("BEGIN")
        try:
            total = conn.execute(f"SELECT count(*) FROM profile_sets WHERE {where}", (org_id,))
            rows = conn.execute(
                f"SELECT * FROM profile_sets WHERE {where} ORDER BY created_at, id"
                " LIMIT ? OFFSET ?",
                (org_id, pageSize, (page - 1) * pageSize),
            ).fetchall()
            count = total.fetchone()[0]
        finally:
            conn.execute("COMMIT")
        items = [
            {
                "id": r["id"],
                "name": r["name"],
                "organizationId": r["organization_id"],
                "selectionStrategy": r["selection_strategy"],
                "allowConcurrentUse": bool(r["allow_concurrent_use"]),
                "createdAt": r["created_at"],
                "updatedAt": r["updated_at"],
            }
            for r in rows
        ]
        return {"items": items, "page": page, "pageSize": pageSize, "total": count}

    @app.post(BASE + "/agents/{agentId}/execute", status_code=202, response_model=ExecutionCreated)
    def execute(
        agentId: uuid.UUID,
        x_api_key: Annotated[str, Header()],
        body: Annotated[ExecuteRequest | None, Body()] = None,
    ) -> Any:
        org_id = organization(x_api_key)
        body = body or ExecuteRequest()
        conn, execution_id = connection(), str(uuid.uuid4())
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        conn.execute("BEGIN IMMEDIATE")
        try:
            agent = conn.execute(
                "SELECT name, published_version FROM agents WHERE id = ? AND organization_id = ?",
                (str(agentId), org_id),
            ).fetchone()
            if agent is None:
                raise HTTPException(404)
            conn.execute(
                "INSERT INTO executions (id, organization_id, agent_id, agent_name, version,"
                " status, inputs, metadata, request, program, temp_files, started_at, pc,"
                " wake_at, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, 'starting', ?, ?, ?, ?, '[]', ?, 0, ?, ?, ?)",
                (
                    execution_id,
                    org_id,
                    str(agentId),
                    agent["name"],
                    agent["published_version"],
                    json.dumps(body.inputs or {}),
                    json.dumps(body.metadata or {}),
                    body.model_dump_json(exclude_unset=True),
                    PROGRAM,
                    now,
                    now,
                    now,
                    now,
                ),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return {"executionId": execution_id, "status": "starting"}

    return app


def serve_ours(db: Path, port: int) -> None:
    from agentform.service import create_app
    from agentform.service.http.timeouts import TimedConfig

    app = create_app(db, seed=SEED, runtime=False)
    config = TimedConfig(app, host="127.0.0.1", port=port, log_level="warning")
    uvicorn.Server(config).run()


def main() -> None:
    mode, db, port = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if mode == "ours":
        serve_ours(db, port)
    else:
        uvicorn.run(floor_app(db), host="127.0.0.1", port=port, http="h11", log_level="warning")


if __name__ == "__main__":
    main()
