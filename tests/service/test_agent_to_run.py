"""What an execute reads of its agent (`lifecycle.agent_to_run`): parsed once per stored
content, and a new published version or script is what the next execute runs, whoever
wrote it (a seed loaded again, another process), with no stale copy."""

from __future__ import annotations

from fastapi import FastAPI

from agentform.service.executions import lifecycle
from agentform.service.store import agent_scripts
from tests.service.execution_support import EXEC_ORG, RIVAL_KEY, execute, module_app, service

app = module_app("agent_to_run")


def test_an_agent_is_parsed_once_per_stored_content(app: FastAPI) -> None:
    with service(app) as (api, _):
        agents = api.ids("/agents")
    with app.state.db.read() as conn:
        first = lifecycle.agent_to_run(conn, EXEC_ORG, agents["steady"])
        again = lifecycle.agent_to_run(conn, EXEC_ORG, agents["steady"])
        other = lifecycle.agent_to_run(conn, EXEC_ORG, agents["plain"])
    assert again is first
    assert other.id == agents["plain"] and other.script is None


def test_a_new_published_version_and_script_are_what_the_next_execute_runs(app: FastAPI) -> None:
    with service(app) as (api, advance):
        agent = api.ids("/agents")["plain"]
        before = execute(api, agent)
        advance(1)
        with app.state.db.write() as conn:  # what a seed loaded again writes
            conn.execute(
                "UPDATE agents SET versions = '[1, 2]', published_version = 2 WHERE id = ?",
                (agent,),
            )
            script = '{"steps": [], "end": {"result": {"from": "version 2 ☃ \\"q\\""}}}'
            agent_scripts.set_agent_script(conn, EXEC_ORG, "plain", script)
        after = execute(api, agent)
        advance(1)
        old, new = api.get(f"/executions/{before}").json(), api.get(f"/executions/{after}").json()
        assert (old["version"], new["version"]) == (1, 2)
        assert old.get("result") != new["result"] == {"from": 'version 2 ☃ "q"'}
        with app.state.db.write() as conn:  # and the script removed again
            agent_scripts.set_agent_script(conn, EXEC_ORG, "plain", None)
            assert lifecycle.agent_to_run(conn, EXEC_ORG, agent).script is None


def test_another_organizations_agent_is_not_found(app: FastAPI) -> None:
    with service(app) as (api, _):
        agent = api.ids("/agents")["plain"]
    with service(app, RIVAL_KEY) as (rival, _):
        r = rival.post(f"/agents/{agent}/execute", json={})
    assert r.status_code == 404, r.text
