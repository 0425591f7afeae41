"""`agentform env list` and `agentform env diff A B`: the environments of
agentform.yaml, and the desired state of two of them side by side (offline: no
service is called, no key is needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from agentform.cli.common import guarded, refuse_unused_offline, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.views import format_option
from agentform.config.environments import raw_environments, selected
from agentform.config.files import root_file
from agentform.config.settings import ROOT_FILE
from agentform.core.errors import AgentformError
from agentform.core.yamlpos import parse
from agentform.engine.env_diff import compare
from agentform.output.env_view import Compared, Environments

OFFLINE = "or run plan --env NAME to check one against its service"


@click.group("env")
def env() -> None:
    """The environments of agentform.yaml (staging, prod, ...)."""


@env.command("list")
@format_option(("text", "json"))
@workspace_options
@guarded
def list_environments(run: RunContext, fmt: str) -> int:
    """Each environment: its endpoint, organization and the variable holding its key."""
    rows = _rows(run.opts.workspace_dir)
    click.echo(run.view(fmt).show(Environments(rows, ROOT_FILE)), nl=False)
    return 0


def _rows(root: Path) -> list[dict[str, Any]]:
    """The environments as written (validate checks them, with positions)."""
    path = root_file(root)
    if path is None:
        raise AgentformError(f"no {ROOT_FILE} in {root.resolve()} (agentform init creates one)")
    try:
        raw = parse(path.read_text(encoding="utf-8")).data or {}
    except (UnicodeDecodeError, yaml.YAMLError):
        raise AgentformError(f"{ROOT_FILE} does not parse: agentform validate says where") from None
    raw = raw if isinstance(raw, dict) else {}
    declared = raw.get("environments")
    declared = declared if isinstance(declared, dict) else {}
    rows = []
    for name, spec in raw_environments(path).items():
        body = declared.get(name)
        body = body if isinstance(body, dict) else {}
        rows.append(
            {
                "name": name,
                "endpoint": str(body.get("endpoint") or raw.get("endpoint") or "local"),
                "organizationId": _text(body.get("organizationId") or raw.get("organizationId")),
                "apiKeyEnv": spec.api_key_env,
                "varFiles": list(spec.var_files),
            }
        )
    return rows


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@env.command("diff")
@click.argument("first")
@click.argument("second")
@format_option(what="text for a terminal, markdown for a pull request, json for programs.")
@workspace_options
@guarded
def diff(run: RunContext, first: str, second: str, fmt: str) -> int:
    """The desired state of two environments side by side, offline.

    Exit 0 when they differ only by their variables (what each environment declares),
    2 when a difference comes from the environment's name (env_name in a template)."""
    refuse_unused_offline("env diff", OFFLINE)
    path = root_file(run.opts.workspace_dir)
    if path is None:
        raise AgentformError(f"no {ROOT_FILE} in {run.opts.workspace_dir.resolve()}")
    declared = raw_environments(path)
    for name in (first, second):
        selected(declared, name, ROOT_FILE)  # an unknown name: refused, with did-you-mean
    a = run.load_environment(first, unset_secrets_allowed=True)
    b = run.load_environment(second, unset_secrets_allowed=True)
    control = run.load_environment(second, unset_secrets_allowed=True, template_name=first)
    result = compare(a, b, control)
    click.echo(run.view(fmt).show(Compared(result)), nl=False)
    return 0 if result.expected else 2
