"""What the workflow scripts share: the settings (settings.toml beside this file),
running agentform with a minimal environment, failing with one clear line, and
writing to the job's summary and outputs (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT).

agentform never sees the job's environment: it gets PATH, HOME, the locale, a CA
bundle if one is set, AGENTFORM_ENDPOINT / AGENTFORM_RATE_LIMIT, the one API key
the step may use (as AGENTFORM_API_KEY), and the variables settings.toml lists for
secret() and env(). So GITHUB_TOKEN and every other secret of the job stay out of
reach of a workspace template (`env('GITHUB_TOKEN')` is "not set").

With `environments` in settings.toml (the workspace's agentform.yaml declares
them), each step runs once per environment with `--env NAME`: the read key of
environment NAME is AGENTFORM_READ_API_KEY_NAME (upper case), the write key is
AGENTFORM_API_KEY of the GitHub environment NAME, and agentform gets it under the
variable the environment's `apiKeyEnv` names (`agentform env list`).

Environment: AGENTFORM_OUT (where plans and reports are written, default
`agentform-out`), AGENTFORM (the command, default `agentform`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

HERE = Path(__file__).resolve().parent
_settings_file = HERE / "settings.toml"
SETTINGS: dict[str, Any] = (
    tomllib.loads(_settings_file.read_text(encoding="utf-8")) if _settings_file.exists() else {}
)
WORKSPACE: str = SETTINGS.get("workspace", "workspace")
SECRETS: list[str] = list(SETTINGS.get("secrets", []))
PLAIN_ENV: list[str] = list(SETTINGS.get("env", []))
ENVIRONMENTS: list[str] = list(SETTINGS.get("environments", []))
# [vars]: template variables for every step (the scripts pass no --var); a table under
# it named as one of ENVIRONMENTS ([vars.prod]) holds that environment's own, which win.
VARS: dict[str, Any] = dict(SETTINGS.get("vars", {}))
OUT = Path(os.environ.get("AGENTFORM_OUT", "agentform-out"))

READ_KEY = "AGENTFORM_READ_API_KEY"  # plan, drift, the apply workflow's prepare job
WRITE_KEY = "AGENTFORM_API_KEY"  # only in the job gated by the `production` environment

# Passed through when set: what a process needs to run and reach the service.
_BASE = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
_AGENTFORM = ("AGENTFORM_ENDPOINT", "AGENTFORM_RATE_LIMIT")

_WHERE = {
    READ_KEY: "a repository secret (Settings > Secrets and variables > Actions): "
    "an API key of the service that may only read",
    WRITE_KEY: "a secret of the `production` environment (Settings > Environments > "
    "production): the service's API key that may write",
}


class Missing(Exception):
    """A setting the job needs is not there: one line naming it."""


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def required(name: str) -> str:
    """The value of an environment variable the step must have; a secret that does not
    exist reaches a step as an empty string, so empty counts as missing."""
    value = os.environ.get(name, "")
    if not value.strip():
        where = _WHERE.get(name) or (
            f"a secret named {name} (the workspace files use secret('{name}')), "
            "passed in the `env:` of this step"
            if name in SECRETS
            else "passed in the `env:` of this step"
        )
        raise Missing(f"{name} is not set: it must be {where}")
    return value


def read_key_of(name: str | None) -> str:
    """The variable of the read-only key: AGENTFORM_READ_API_KEY, or for environment
    `staging` AGENTFORM_READ_API_KEY_STAGING when the step has it (the plan step, which
    plans every environment), else AGENTFORM_READ_API_KEY (a job of one environment)."""
    if name is None:
        return READ_KEY
    own = f"{READ_KEY}_{re.sub(r'[^A-Z0-9]', '_', name.upper())}"
    return own if own in os.environ or READ_KEY not in os.environ else READ_KEY


def key_variable(name: str) -> str:
    """The variable agentform reads environment `name`'s key from (its apiKeyEnv)."""
    listed = agentform("env", "list", "--format", "json", env=environment(None, False))
    for entry in json.loads(listed.stdout or "{}").get("environments", []):
        if entry.get("name") == name:
            return str(entry["apiKeyEnv"])
    raise Missing(f"environment {name} (settings.toml) is not in the workspace's agentform.yaml")


def environment(
    key: str | None, secrets: bool = True, env_name: str | None = None
) -> dict[str, str]:
    """The whole environment agentform runs with. `key`: the variable holding the API
    key this step may use (READ_KEY or WRITE_KEY), None for offline commands;
    `secrets`: False for validate, which needs no secret() value and gets none;
    `env_name`: the workspace's environment the step works on."""
    env = {name: os.environ[name] for name in (*_BASE, *_AGENTFORM) if os.environ.get(name)}
    env["NO_COLOR"] = "1"
    if env_name is not None:
        env["AGENTFORM_ENV"] = env_name
    if key is not None:
        env["AGENTFORM_API_KEY"] = required(key)
        if env_name is not None:
            env[key_variable(env_name)] = env["AGENTFORM_API_KEY"]
        endpoint = os.environ.get("AGENTFORM_ENDPOINT", "").strip()
        if in_actions() and endpoint in ("", "local"):
            # `endpoint: local` on a runner is an empty service that vanishes with the job
            raise Missing(
                "AGENTFORM_ENDPOINT is not set: it must be a repository variable "
                "(Settings > Secrets and variables > Actions > Variables) holding the "
                "service's base URL"
            )
    for name in SECRETS if secrets else ():
        env[name] = required(name)
    for name in PLAIN_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def var_options(env_name: str | None) -> list[str]:
    """`--var NAME=VALUE` for settings.toml's [vars] and the environment's own
    [vars.NAME], each value written as JSON (which agentform reads as YAML)."""
    common = {k: v for k, v in VARS.items() if k not in ENVIRONMENTS}
    own = VARS.get(env_name, {}) if env_name in ENVIRONMENTS else {}
    merged = {**common, **(own if isinstance(own, dict) else {})}
    return [
        f"--var={name}={json.dumps(value, ensure_ascii=False)}" for name, value in merged.items()
    ]


def agentform(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs agentform on the workspace with exactly `env` (and the variables of
    settings.toml for its environment); stdout is captured, stderr goes to the log."""
    variables = var_options(env.get("AGENTFORM_ENV"))
    command = [
        *shlex.split(os.environ.get("AGENTFORM", "agentform")),
        *("-C", WORKSPACE, *variables, *args),
    ]
    print("$ " + " ".join(shlex.quote(c) for c in command), file=sys.stderr, flush=True)
    return subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, env=env)


def plan_file(env_name: str | None) -> str:
    """plan.json, or plan-NAME.json for an environment."""
    return "plan.json" if env_name is None else f"plan-{env_name}.json"


def plan_markdown(
    env: dict[str, str], env_name: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`agentform plan` as markdown on stdout, saved as OUT/plan.json and OUT/plan.md
    (plan-NAME.json and plan-NAME.md for an environment); exit 2 when it has changes."""
    OUT.mkdir(parents=True, exist_ok=True)
    saved = plan_file(env_name)
    plan = agentform(
        "plan",
        "--format",
        "markdown",
        "--out",
        str(OUT / saved),
        "--detailed-exitcode",
        env=env,
    )
    write_out(saved.removesuffix(".json") + ".md", plan.stdout)
    return plan


def error(line: str) -> None:
    """One line in the log (an annotation on GitHub), and in the job summary."""
    print(f"::error title=agentform::{line}" if in_actions() else f"error: {line}", file=sys.stderr)
    summary(f"> [!CAUTION]\n> {line}")


def workspace_name() -> str:
    """The `workspace:` of the workspace's agentform.yaml (for comment markers when
    agentform could not run), or the directory's name."""
    for name in ("agentform.yaml", "agentform.yml"):
        path = Path(WORKSPACE) / name
        if path.exists():
            found = re.search(
                r"""^workspace:\s*["']?([^"'#\s]+)""", path.read_text(encoding="utf-8"), re.M
            )
            if found:
                return found.group(1)
    return Path(WORKSPACE).resolve().name


def marker(what: str, workspace: str | None = None, env_name: str | None = None) -> str:
    """`<!-- agentform:WHAT workspace=NAME -->` (` environment=NAME` for one), as
    agentform writes it."""
    name = quote(workspace or workspace_name(), safe="._-")
    env = f" environment={quote(env_name, safe='._-')}" if env_name else ""
    return f"<!-- agentform:{what} workspace={name}{env} -->"


def write_out(name: str, text: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    path.write_text(text)
    return path


def summary(markdown: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path and markdown:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(markdown + "\n")


def output(name: str, value: str) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{name}={value}\n")


def workspace_of(marker: str) -> str:
    """NAME from `<!-- agentform:drift workspace=NAME -->`."""
    return unquote(marker.split("workspace=", 1)[-1].removesuffix("-->").strip())
