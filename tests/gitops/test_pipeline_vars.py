"""Template variables in the pipeline's settings.toml: the scripts pass no --var, so
`[vars]` gives them for every environment and `[vars.NAME]` for environment NAME
(a table under [vars] named as one of [environments])."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.gitops.test_pipeline import EXAMPLE

ECHO = f"{shlex.quote(sys.executable)} -c 'import json, sys; print(json.dumps(sys.argv[1:]))'"


@pytest.fixture
def pipeline(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(EXAMPLE / "scripts"))
    import pipeline as module

    monkeypatch.setenv("AGENTFORM", ECHO)
    monkeypatch.setattr(module, "ENVIRONMENTS", {"staging": {}, "prod": {}})
    monkeypatch.setattr(
        module,
        "VARS",
        {"team": "payments ü", "limits": {"max": 3}, "prod": {"team": "payments-prod"}},
    )
    yield module
    sys.modules.pop("pipeline", None)


def test_each_environment_gets_the_common_vars_and_its_own(pipeline: ModuleType) -> None:
    def argv(env_name: str | None) -> list[str]:
        env = {"AGENTFORM_ENV": env_name} if env_name else {}
        done = pipeline.agentform(
            pipeline.Pair("teams/a", env_name), "plan", env={"PATH": "/usr/bin:/bin", **env}
        )
        found: list[str] = json.loads(done.stdout)
        return found

    assert argv("prod")[2:] == [
        '--var=team="payments-prod"',
        '--var=limits={"max": 3}',
        "plan",
    ]
    assert argv("staging")[2:] == ['--var=team="payments ü"', '--var=limits={"max": 3}', "plan"]
    assert argv(None)[2:] == ['--var=team="payments ü"', '--var=limits={"max": 3}', "plan"]
