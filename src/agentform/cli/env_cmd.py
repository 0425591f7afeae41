"""`agentform env list` and `agentform env diff A B`: the environments of
agentform.yaml, and the desired state of two of them side by side (offline: no
service is called, no key is needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from agentform.cli.common import (
    Options,
    guarded,
    load_environment,
    refuse_unused_offline,
    workspace_options,
)
from agentform.cli.conventions import SuggestingChoice
from agentform.config.environments import raw_environments, selected
from agentform.config.files import root_file
from agentform.config.loader import ROOT_FILE
from agentform.core.errors import AgentformError
from agentform.core.yamlpos import parse
from agentform.engine.env_diff import compare
from agentform.output import env_diff_view
from agentform.output.markdown import GITHUB_LIMIT

OFFLINE = "or run plan --env NAME to check one against its service"


@click.group("env")
def env() -> None:
    """The environments of agentform.yaml (staging, prod, ...)."""


@env.command("list")
@click.option("--format", "fmt", type=SuggestingChoice(("text", "json")), default="text")
@workspace_options
@guarded
def list_environments(opts: Options, fmt: str) -> int:
    """Each environment: its endpoint, organization and the variable holding its key."""
    rows = _rows(opts.workspace_dir)
    if fmt == "json":
        click.echo(json.dumps({"environments": rows}, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        click.echo(f"{ROOT_FILE} declares no environments.")
        return 0
    for row in rows:
        organization = row["organizationId"] or "(the only one the key reaches)"
        click.echo(
            f"{row['name']}: {row['endpoint']}, organization {organization}, "
            f"key from ${row['apiKeyEnv']}"
            + (f", var files {', '.join(row['varFiles'])}" if row["varFiles"] else "")
        )
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
@click.option(
    "--format",
    "fmt",
    type=SuggestingChoice(("text", "markdown", "json")),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull request, json for programs.",
)
@workspace_options
@guarded
def diff(opts: Options, first: str, second: str, fmt: str) -> int:
    """The desired state of two environments side by side, offline.

    Exit 0 when they differ only by their variables (what each environment declares),
    2 when a difference comes from the environment's name (env_name in a template)."""
    refuse_unused_offline("env diff", OFFLINE)
    path = root_file(opts.workspace_dir)
    if path is None:
        raise AgentformError(f"no {ROOT_FILE} in {opts.workspace_dir.resolve()}")
    declared = raw_environments(path)
    for name in (first, second):
        selected(declared, name, ROOT_FILE)  # an unknown name: refused, with did-you-mean
    a = load_environment(opts, first, unset_secrets_allowed=True)
    b = load_environment(opts, second, unset_secrets_allowed=True)
    control = load_environment(opts, second, unset_secrets_allowed=True, template_name=first)
    result = compare(a, b, control)
    if fmt == "json":
        click.echo(env_diff_view.as_json(result), nl=False)
    elif fmt == "markdown":
        text = env_diff_view.markdown(result, opts.verbose)
        assert len(text) <= GITHUB_LIMIT
        click.echo(text, nl=False)
    else:
        click.echo(env_diff_view.text(result, opts.verbose), nl=False)
    return 0 if result.expected else 2
