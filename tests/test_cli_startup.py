"""Start-up: a command imports only what it uses. Checked through `sys.modules` of a
fresh interpreter, not with a timer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentform.cli.main import COMMANDS, cli

QUICKSTART = Path(__file__).parents[1] / "examples" / "quickstart"

# The service (FastAPI, Starlette, uvicorn), the HTTP client and cassette recording.
HEAVY = ("fastapi", "starlette", "uvicorn", "vcr", "httpx")

PROBE = """
import json, sys
from agentform.cli.main import cli
try:
    cli.main(sys.argv[1:], prog_name="agentform")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def imported_by(*args: str) -> tuple[int, set[str]]:
    """Runs `agentform ARGS` in a new interpreter: its exit code and top-level modules."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], set(result["modules"])


@pytest.fixture(scope="module")
def small_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small")
    (root / "agentform.yaml").write_text("workspace: small\n")
    (root / "pools.yaml").write_text("profilePools:\n  - {name: a, members: [bot-1]}\n")
    return root


@pytest.fixture(scope="module")
def validated(small_workspace: Path) -> tuple[int, set[str]]:
    """`validate` of the small workspace, run once for the tests that read it (an
    interpreter costs a second of processor time)."""
    return imported_by("validate", "-C", str(small_workspace))


@pytest.fixture(scope="module")
def planned(small_workspace: Path) -> tuple[int, set[str]]:
    """`plan` of the small workspace on the local endpoint, run once likewise."""
    return imported_by("plan", "-C", str(small_workspace))


def test_version_imports_nothing_heavy() -> None:
    code, modules = imported_by("--version")
    assert code == 0
    assert modules.isdisjoint(HEAVY), modules & set(HEAVY)


# What `validate` has no use for beyond HEAVY: the event loop (it calls nothing),
# signing keys (it signs nothing), the live progress display (it applies nothing).
UNUSED_OFFLINE = ("asyncio", "cryptography", "rich")


def test_validate_imports_nothing_heavy(validated: tuple[int, set[str]]) -> None:
    """bench/startup.py measures what this keeps: validate within 1.5x the import
    line of the libraries it needs (docs/performance.md)."""
    code, modules = validated
    assert code == 0
    unused = {*HEAVY, *UNUSED_OFFLINE}
    assert modules.isdisjoint(unused), modules & unused
    assert "yaml" in modules and "pydantic" in modules  # it did load the workspace


# A workspace's optional parts, each imported only where the workspace has it: the
# policies' runtime (CEL, RE2) with a policies/ file, pathspec with .agentformignore.
POLICY_RUNTIME = ("cel_expr_python", "re2")


def test_validate_imports_the_policy_runtime_only_with_policies(
    small_workspace: Path, validated: tuple[int, set[str]], tmp_path: Path
) -> None:
    """CEL and RE2 were imported by every validate and plan, with policies or not."""
    code, modules = validated  # the same workspace, before its policies
    assert code == 0
    assert modules.isdisjoint({*POLICY_RUNTIME, "pathspec"}), modules & {*POLICY_RUNTIME}
    shutil.copytree(small_workspace, tmp_path, dirs_exist_ok=True)
    (tmp_path / "policies").mkdir()
    shutil.copy(QUICKSTART / "policies" / "quickstart.yaml", tmp_path / "policies")
    (tmp_path / ".agentformignore").write_text("pools.yaml\n")
    code, modules = imported_by("validate", "-C", str(tmp_path))
    assert code == 0
    assert {*POLICY_RUNTIME, "pathspec"} <= modules  # (the probe sees them come)


def test_plan_without_policies_imports_no_policy_runtime(planned: tuple[int, set[str]]) -> None:
    code, modules = planned
    assert code == 0
    assert modules.isdisjoint(POLICY_RUNTIME), modules & set(POLICY_RUNTIME)


MAIN_PROBE = """
import gc, json, os, sys
from agentform.cli.main import main
sys.argv = ["agentform", *sys.argv[1:]]
collections = [0]
gc.callbacks.append(lambda phase, info: collections.__setitem__(0, collections[0] + 1))
try:
    main()
except SystemExit:
    pass
plugins = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
modules = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({
    "plugins": plugins, "frozen": gc.get_freeze_count(), "modules": modules,
    "collections": collections[0] // 2, "collector": gc.isenabled(),
}))
"""


def run_main(*args: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Runs `agentform ARGS` through `main()`, the program, in a new interpreter."""
    argv = [sys.executable, "-c", MAIN_PROBE, *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("given", [None, "logfire"])
def test_the_program_skips_what_no_command_uses(small_workspace: Path, given: str | None) -> None:
    """`agentform` (main) neither searches the installed distributions for pydantic
    plugins (unless the environment names some itself) nor has the interpreter scan
    its objects for cycles as it exits: they are frozen (docs/performance.md)."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env |= {"PYDANTIC_DISABLE_PLUGINS": given} if given else {}
    result = run_main("validate", "-C", str(small_workspace), env=env)
    assert result["plugins"] == (given or "__all__")
    assert result["frozen"] > 10_000  # the run's objects, not only the probe's


ENTRY_PROBE = """
import gc, json, sys
collections = [0]
gc.callbacks.append(lambda phase, info: collections.__setitem__(0, collections[0] + 1))
sys.argv = ["agentform", *sys.argv[1:]]
from agentform.cli.start import run
try:
    run()
except SystemExit:
    pass
print(json.dumps({"collections": collections[0] // 2, "collector": gc.isenabled()}))
"""


def run_entry(*args: str) -> dict[str, Any]:
    """Runs `agentform ARGS` from the program's entry point (the `agentform` script,
    `python -m agentform`) in a new interpreter, counting the collector's runs."""
    argv = [sys.executable, "-c", ENTRY_PROBE, *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_collector_skips_the_start_up() -> None:
    """Start-up makes long-lived objects and no garbage cycles: the collector ran
    about 88 times over them while `validate` of the quickstart started and ran.
    The entry point turns it off before the command line is imported, until the
    command is; then what start-up made is frozen and it runs again for the command
    (a server runs with it)."""
    result = run_entry("validate", "-C", str(QUICKSTART))
    assert result["collector"] is True
    assert result["collections"] < 10, result["collections"]  # (88 with it on)
    assert run_entry("--version")["collector"] is False  # (no command: it stays off)
    from_main = run_main("validate", "-C", str(QUICKSTART))  # main() alone pauses it too
    assert from_main["collector"] is True and from_main["collections"] < 10


# What httpx's own command line (httpx._main) imports, when installed.
HTTPX_CLI = ("rich", "pygments")


def test_the_program_imports_no_http_command_line(tmp_path: Path) -> None:
    """validate asks httpx whether it would connect to a webhook's URL, and `import
    httpx` imported its command line, rich and pygments with it (a ninth of
    validate's instructions): `main()` keeps it out; httpx is loaded all the same."""
    workspace = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, workspace, ignore=shutil.ignore_patterns(".agentform"))
    modules = set(run_main("validate", "-C", str(workspace))["modules"])
    assert "httpx" in modules  # (it did check the webhooks' URLs)
    assert modules.isdisjoint(HTTPX_CLI), modules & set(HTTPX_CLI)
    code, modules = imported_by("validate", "-C", str(workspace))  # without main()
    assert code == 0 and {"httpx", *HTTPX_CLI} <= modules  # (the probe sees them come)


def test_validating_a_workspace_with_tests_imports_no_service(tmp_path: Path) -> None:
    """validate checks the test files (tests/*.yaml) as `agentform test` reads them,
    their seeds included, without the service they run on: they add no event loop,
    no FastAPI, no database, no console to what validating the workspace imports."""
    workspace = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, workspace, ignore=shutil.ignore_patterns(".agentform", "tests"))
    code, without = imported_by("validate", "-C", str(workspace))
    assert code == 0
    shutil.copytree(QUICKSTART / "tests", workspace / "tests")
    code, modules = imported_by("validate", "-C", str(workspace))
    assert code == 0
    service = {"fastapi", "starlette", "uvicorn", "asyncio", "sqlite3"}
    assert (modules - without).isdisjoint({*service, *UNUSED_OFFLINE}), modules - without
    assert modules.isdisjoint(service), modules & service
    (workspace / "tests" / "zz.yaml").write_text("tests: [{name: t, stepz: []}]\n")
    code, modules = imported_by("validate", "-C", str(workspace))
    assert code == 1  # it did read the test files
    assert modules.isdisjoint(service), modules & service


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_env_diff_imports_nothing_heavy(tmp_path: Path, fmt: str) -> None:
    """Offline, like validate: the markdown view imported the apply engine (httpx,
    rich) for a type annotation, a tenth of env diff's time."""
    (tmp_path / "agentform.yaml").write_text(
        "workspace: envs\nenvironments: {a: {vars: {n: 1}}, b: {vars: {n: 2}}}\n"
    )
    (tmp_path / "pools.yaml").write_text("profilePools:\n  - {name: a, members: [bot-1]}\n")
    code, modules = imported_by("env", "diff", "a", "b", "-C", str(tmp_path), "--format", fmt)
    assert code == 0
    assert modules.isdisjoint(HEAVY), modules & set(HEAVY)


def test_plan_on_the_local_endpoint_does_load_the_service(planned: tuple[int, set[str]]) -> None:
    """The probe sees imports when they happen (so the tests above can fail)."""
    code, modules = planned
    assert code == 0
    assert {"fastapi", "httpx"} <= modules and "vcr" not in modules


def test_every_command_is_listed_and_loads() -> None:
    from click.testing import CliRunner

    help_text = CliRunner().invoke(cli, ["--help"]).output
    for name in COMMANDS:
        assert f"  {name} " in help_text
        assert cli.get_command(None, name) is not None  # type: ignore[arg-type]


BUILT_PROBE = """
import json, sys
from pydantic import BaseModel
from agentform.cli.main import cli
try:
    cli.main(sys.argv[1:], prog_name="agentform")
except SystemExit as exc:
    code = exc.code
built = sorted(
    f"{m.__module__}.{m.__qualname__}"
    for name, module in list(sys.modules.items()) if name.startswith("agentform")
    for m in vars(module).values()
    if isinstance(m, type) and issubclass(m, BaseModel) and m.__pydantic_complete__
)
print(json.dumps({"code": code, "built": built, "modules": sorted(sys.modules)}))
"""

SEED_FORMAT = ("agentform.service.startup.seed_file", "agentform.service.executions.script")


def models_built_by(*args: str) -> tuple[int, set[str], set[str]]:
    """Runs `agentform ARGS` in a new interpreter: its exit code, the agentform
    pydantic models whose validators it built and the modules it imported."""
    argv = [sys.executable, "-c", BUILT_PROBE, *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], set(result["built"]), set(result["modules"])


def test_validating_tests_on_the_demo_seed_builds_no_seed(tmp_path: Path) -> None:
    """Tests that name no seed run on the demo seed, and validate needs only its
    agents' names: the demo seed (its scripts, the seed's and the script's models)
    was read and validated at every import of the seed's format, which validate
    imports only for a test file that gives a seed of its own."""
    workspace = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, workspace, ignore=shutil.ignore_patterns(".agentform"))
    code, built, modules = models_built_by("validate", "-C", str(workspace))
    assert code == 0
    assert "agentform.testing.model.TestFile" in built  # the test files were read
    assert "agentform.testing.model.Step" not in built  # (inside TestFile's validator)
    assert not {m for m in built if m.startswith(SEED_FORMAT)}, built
    assert modules.isdisjoint(SEED_FORMAT), modules & set(SEED_FORMAT)
    (workspace / "tests" / "own.yaml").write_text(
        "seed: {organizations: [{name: o, agents: [{name: a}]}]}\n"
        "tests: [{name: t, steps: [{execute: {agent: a}}]}]\n"
    )
    code, built, modules = models_built_by("validate", "-C", str(workspace))
    assert "agentform.service.startup.seed_file.Seed" in built  # (the probe sees it)


def test_the_demo_agents_are_the_demo_seeds() -> None:
    from agentform.rules.demo import DEMO_AGENTS
    from agentform.service.startup.seed_file import DEMO_SEED, demo_seed
    from agentform.testing.parse import seed_agents

    assert seed_agents(demo_seed()) == DEMO_AGENTS and DEMO_SEED is demo_seed()


def test_validating_policies_imports_no_plan_model(tmp_path: Path) -> None:
    """Checking a policy's names needs the plan's model (engine/model.py) only for a
    rule that reads plan.summary: validate of the quickstart's policy imported it."""
    workspace = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, workspace, ignore=shutil.ignore_patterns(".agentform", "tests"))
    code, _, modules = models_built_by("validate", "-C", str(workspace))
    assert code == 0 and "agentform.policies.loading" in modules
    assert "agentform.engine.model" not in modules
    (workspace / "policies" / "more.yaml").write_text(
        "rules:\n  - {name: big, level: advisory, scope: plan, message: \"'big'\",\n"
        "     deny: 'plan.summary.creat > 1'}\n"
    )
    code, _, modules = models_built_by("validate", "-C", str(workspace))
    assert code == 1 and "agentform.engine.model" in modules  # (it did check the name)


# What only `validate --all` uses: finding a repository's workspaces, their overlaps.
ALL_WORKSPACES = ("agentform.config.repository", "agentform.repository.pairs")


def test_validating_one_workspace_imports_no_repository_search(small_workspace: Path) -> None:
    code, _, modules = models_built_by("validate", "-C", str(small_workspace))
    assert code == 0
    assert modules.isdisjoint(ALL_WORKSPACES), modules & set(ALL_WORKSPACES)
    code, _, modules = models_built_by("validate", "--all", str(small_workspace))
    assert code == 0 and set(ALL_WORKSPACES) <= modules  # (the probe sees them come)
