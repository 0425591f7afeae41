"""What the workflow scripts share: the settings (settings.toml beside this file),
the pair a job works on, running agentform with a minimal environment, failing with
one clear line, and writing to the job's summary and outputs.

A pair is a workspace of the repository (its directory from the repository's root,
as `agentform affected` names it) and one of its environments (None when it declares
none). Every job of a matrix works on one pair, given as the arguments WORKSPACE
[ENVIRONMENT] of its script.

agentform never sees the job's environment: it gets PATH, HOME, the locale, a CA
bundle if one is set, AGENTFORM_RATE_LIMIT, AGENTFORM_ENDPOINT only when the pair's
files give no endpoint of their own (a fallback), the one API key the step may use
(as AGENTFORM_API_KEY, and under the environment's `apiKeyEnv`), and the variables
settings.toml lists for secret() and env(). So GITHUB_TOKEN and every other secret
of the job stay out of reach of a workspace template.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
_settings_file = HERE / "settings.toml"
SETTINGS: dict[str, Any] = (
    tomllib.loads(_settings_file.read_text(encoding="utf-8")) if _settings_file.exists() else {}
)
SECRETS: list[str] = list(SETTINGS.get("secrets", []))
PLAIN_ENV: list[str] = list(SETTINGS.get("env", []))
# [environments.NAME]: the secrets holding NAME's keys, its GitHub environment.
ENVIRONMENTS: dict[str, dict[str, Any]] = dict(SETTINGS.get("environments", {}))
# [vars]: template variables for every step (the scripts pass no --var); a table under
# it named as an environment ([vars.prod]) holds that environment's own, which win.
VARS: dict[str, Any] = dict(SETTINGS.get("vars", {}))
OUT = Path(os.environ.get("AGENTFORM_OUT", "agentform-out"))

READ_KEY = "AGENTFORM_READ_API_KEY"  # the variable a job's read key is in
WRITE_KEY = "AGENTFORM_API_KEY"  # the variable of the write key, only in an apply job

# Passed through when set: what a process needs to run and reach the service.
_BASE = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
ENDPOINT = "AGENTFORM_ENDPOINT"


class Missing(Exception):
    """A setting the job needs is not there: one line naming it."""


@dataclass(frozen=True)
class Pair:
    """A workspace (from the repository's root) and one of its environments."""

    workspace: str
    environment: str | None = None

    @classmethod
    def of(cls, args: list[str]) -> Pair:
        """From a script's arguments WORKSPACE [ENVIRONMENT] (an empty ENVIRONMENT is
        none: a matrix's null environment reaches the step as '')."""
        if not args or not args[0].strip():
            raise SystemExit("usage: WORKSPACE [ENVIRONMENT] (a pair of `agentform affected`)")
        return cls(args[0], (args[1] if len(args) > 1 else "") or None)

    @property
    def slug(self) -> str:
        """Its name in artifact and file names: `teams-payments--prod`."""
        name = re.sub(r"[^A-Za-z0-9._-]", "-", self.workspace.strip("/"))
        return name + (f"--{self.environment}" if self.environment else "")

    def __str__(self) -> str:
        return self.workspace + (f" {self.environment}" if self.environment else "")

    def setting(self, name: str, default: str) -> str:
        """A setting of its environment ([environments.NAME]), else the top level's."""
        own = ENVIRONMENTS.get(self.environment or "", {})
        return str(own.get(name) or SETTINGS.get(name) or default)

    def github_environment(self) -> str:
        """The GitHub environment gating its write key: [github_environments] maps
        "WORKSPACE ENVIRONMENT" (or "WORKSPACE"), else its environment's own, else
        `production`."""
        mapped = dict(SETTINGS.get("github_environments", {}))
        return str(mapped.get(str(self)) or self.setting("github_environment", "production"))

    def out(self) -> Path:
        """Its directory of plans and reports: $AGENTFORM_OUT/SLUG."""
        path = OUT / self.slug
        path.mkdir(parents=True, exist_ok=True)
        return path


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def required(name: str, where: str = "passed in the `env:` of this step") -> str:
    """The value of an environment variable the step must have; a secret that does not
    exist reaches a step as an empty string, so empty counts as missing."""
    value = os.environ.get(name, "")
    if not value.strip():
        if name in SECRETS:
            where = f"a secret named {name} (the workspace files use secret('{name}'))"
        raise Missing(f"{name} is not set: it must be {where}")
    return value


def listing(pair: Pair) -> dict[str, Any]:
    """The pair as `agentform list --all` reads it from the files (offline), that
    pair's alone (a job per pair listing every workspace would load the repository's
    N workspaces N times); empty when they do not load."""
    env = ("--env", pair.environment) if pair.environment else ()
    done = agentform(pair, "list", "--all", pair.workspace, *env, "--format", "json", env=_base())
    try:
        rows = json.loads(done.stdout or "[]")
    except ValueError:
        rows = []
    for row in rows:
        if row.get("workspace") == pair.workspace and row.get("environment") == pair.environment:
            return dict(row)
    return {}  # its files do not load: agentform's plan says why, at its file:line


def key_variable(pair: Pair) -> str | None:
    """The variable agentform reads the pair's environment's key from (apiKeyEnv)."""
    if pair.environment is None:
        return None
    listed = agentform(pair, "env", "list", "--format", "json", env=_base())
    for entry in json.loads(listed.stdout or "{}").get("environments", []):
        if entry.get("name") == pair.environment:
            return str(entry["apiKeyEnv"])
    return None


def _base() -> dict[str, str]:
    env = {name: os.environ[name] for name in _BASE if os.environ.get(name)}
    if os.environ.get("AGENTFORM_RATE_LIMIT"):
        env["AGENTFORM_RATE_LIMIT"] = os.environ["AGENTFORM_RATE_LIMIT"]
    env["NO_COLOR"] = "1"
    return env


def endpoint_of(pair: Pair) -> dict[str, str]:
    """AGENTFORM_ENDPOINT for a pair whose files name no endpoint (`local`, the
    default), which on GitHub must be given; nothing for one that names its own."""
    listed = listing(pair)
    if str(listed.get("endpoint") or "local") != "local":
        return {}
    fallback = os.environ.get(ENDPOINT, "").strip()
    if in_actions() and fallback in ("", "local") and listed:
        # `endpoint: local` on a runner is an empty service that vanishes with the job
        raise Missing(
            f"{ENDPOINT} is not set and {pair} names no endpoint: give the environment an "
            "`endpoint:` in agentform.yaml, or the repository variable AGENTFORM_ENDPOINT "
            "(Settings > Secrets and variables > Actions > Variables) the service's base URL"
        )
    return {ENDPOINT: fallback} if fallback else {}


def environment(pair: Pair, key: str | None, secrets: bool = True) -> dict[str, str]:
    """The whole environment agentform runs with for `pair`. `key`: the variable
    holding the API key this step may use (READ_KEY or WRITE_KEY), None for offline
    commands; `secrets`: False for validate and test, which need no secret() value."""
    env = _base()
    if pair.environment is not None:
        env["AGENTFORM_ENV"] = pair.environment
    if key is not None:
        secret = pair.setting("read_key" if key == READ_KEY else "write_key", key)
        env[WRITE_KEY] = required(
            key, f"the secret {secret} (settings.toml names it for {pair}), passed as {key}"
        )
        if variable := key_variable(pair):
            env[variable] = env[WRITE_KEY]
        env.update(endpoint_of(pair))
    for name in SECRETS if secrets else ():
        env[name] = required(name)
    for name in PLAIN_ENV:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def var_options(env_name: str | None) -> list[str]:
    """`--var NAME=VALUE` for settings.toml's [vars] and the environment's own
    [vars.NAME] (NAME one of [environments]), each value written as JSON (which
    agentform reads as YAML)."""
    own_tables = {*ENVIRONMENTS, env_name}
    common = {k: v for k, v in VARS.items() if k not in own_tables}
    own = VARS.get(env_name, {}) if env_name else {}
    merged = {**common, **(own if isinstance(own, dict) else {})}
    return [
        f"--var={name}={json.dumps(value, ensure_ascii=False)}" for name, value in merged.items()
    ]


def agentform(pair: Pair, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs agentform on the pair's workspace with exactly `env` (and the variables of
    settings.toml for its environment); stdout is captured, stderr goes to the log."""
    variables = var_options(env.get("AGENTFORM_ENV"))
    command = [
        *shlex.split(os.environ.get("AGENTFORM", "agentform")),
        *("-C", pair.workspace, *variables, *args),
    ]
    print("$ " + " ".join(shlex.quote(c) for c in command), file=sys.stderr, flush=True)
    return subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, env=env)


def error(line: str) -> None:
    """One line in the log (an annotation on GitHub), and in the job summary."""
    print(f"::error title=agentform::{line}" if in_actions() else f"error: {line}", file=sys.stderr)
    summary(f"> [!CAUTION]\n> {line}")


def marker(what: str, pair: Pair | None = None) -> str:
    """`<!-- agentform:WHAT workspace=DIR environment=NAME -->`: a comment of one
    pair, which no other pair's comment replaces; without a pair, the pull request's."""
    if pair is None:
        return f"<!-- agentform:{what} -->"
    env = f" environment={quote(pair.environment, safe='._-')}" if pair.environment else ""
    return f"<!-- agentform:{what} workspace={quote(pair.workspace, safe='._-/')}{env} -->"


def write_out(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
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
