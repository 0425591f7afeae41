"""`agentform import KIND/KEY...`: live objects brought under management.

Their YAML (as `export` writes it: header values as secret() calls) goes into a
new workspace file, `imported.yaml` at the workspace root unless `--out` names
another; the next plan shows no change for them (in another environment that reads
the file, the plan creates them where they do not exist: said). An existing file is never
replaced (whoever wrote it: replacing an earlier import would drop objects the
workspace manages), and the file is read back as part of the workspace before
the command succeeds: on any problem it is removed, so nothing is written.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.init_cmd import MODELINE
from agentform.cli.schema_cmd import SCHEMA_FILE
from agentform.config.files import SUFFIXES
from agentform.config.loader import Workspace
from agentform.core.errors import AgentformError
from agentform.core.words import counted
from agentform.engine.export import secrets_named
from agentform.engine.importing import import_documents, parse_addresses
from agentform.kinds.base import Kind
from agentform.kinds.keys import Key
from agentform.output.yaml_view import workspace_yaml

DEFAULT_FILE = "imported.yaml"


def _target(workspace: Workspace, out: Path | None) -> Path:
    """The file to write: new, a .yaml file, inside the workspace."""
    path = (out if out is not None else workspace.root / DEFAULT_FILE).absolute()
    if path.suffix not in SUFFIXES:
        raise AgentformError(f"{path}: a workspace file ends with .yaml or .yml")
    try:
        path.resolve().relative_to(workspace.root)
    except ValueError:
        raise AgentformError(
            f"{path} is outside the workspace {workspace.root}: the imported objects "
            f"would not be managed (name a file inside it{_meant(workspace, out)})"
        ) from None
    if not path.parent.is_dir():
        raise AgentformError(f"{path.parent} is not a directory of the workspace")
    if path.exists() or path.is_symlink():
        raise AgentformError(
            f"{path} exists: import writes a new file and never replaces one "
            "(name another with --out)"
        )
    return path


def _meant(workspace: Workspace, out: Path | None) -> str:
    """The hint for a relative --out meant from the workspace (`-C ws import --out
    x.yaml`): it is read from the current directory, as every --out is."""
    if out is None or out.is_absolute():
        return ""
    inside = (workspace.root / out).resolve()
    if not inside.is_relative_to(workspace.root):
        return ""
    shown = os.path.relpath(inside)
    return f"; --out is read from the current directory: --out {shlex.quote(shown)} names it"


def _check_read_back(run: RunContext, path: Path, wanted: list[tuple[Kind, Key]]) -> None:
    """The workspace with the new file loads and declares every imported object."""
    workspace = run.load(unset_secrets_allowed=True)
    missing = [
        f"{kind.name}/{key}"
        for kind, key in wanted
        if key not in {kind.key_of(d) for d in workspace.declared[kind.name]}
    ]
    if missing:
        raise AgentformError(
            f"{path} is not read as a workspace file (hidden, ignored in .agentformignore, "
            f"or inside another workspace): {', '.join(missing)} would not be managed; "
            "name another file with --out"
        )


def _elsewhere(run: RunContext, wanted: list[tuple[Kind, Key]]) -> str:
    """The other environments that now declare the imported objects too (the file is
    read in every environment): their plans create them where they do not exist."""
    others = []
    for name in sorted(set(run.environment_names()) - {run.opts.env}):
        try:
            declared = run.load_environment(name, unset_secrets_allowed=True).declared
        except AgentformError:
            continue  # its own problems are for its own plan
        if any(key in {kind.key_of(d) for d in declared[kind.name]} for kind, key in wanted):
            others.append(name)
    if not others:
        return ""
    listed = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
    return (
        f". Every environment reads the file: in {listed}, plan creates them "
        "where they do not exist"
    )


@click.command("import")
@click.argument("addresses", nargs=-1, required=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"New workspace file to write (default: {DEFAULT_FILE} in the workspace).",
)
@workspace_options
@guarded
def import_objects(run: RunContext, addresses: tuple[str, ...], out: Path | None) -> int:
    """Bring live objects (KIND/NAME; a batch KIND/AGENT/NAME) under management."""
    workspace = run.load(unset_secrets_allowed=True)
    wanted = parse_addresses(list(addresses), workspace)
    path = _target(workspace, out)
    warnings: list[str] = []
    documents = run.with_api(lambda api: import_documents(workspace, api, wanted, warnings))
    for warning in warnings:
        click.echo(workspace.secrets.scrub(f"Warning: {warning}"), err=True)
    schema = Path(os.path.relpath(workspace.root / SCHEMA_FILE, path.parent)).as_posix()
    text = MODELINE.replace(SCHEMA_FILE, schema) + workspace_yaml(documents)
    try:
        with path.open("x", encoding="utf-8") as handle:  # never one that appeared meanwhile
            handle.write(workspace.secrets.scrub_shown(text))
    except OSError as exc:
        raise AgentformError(f"cannot write {path}: {exc.strerror}") from None
    try:
        _check_read_back(run, path, wanted)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    plan = "agentform plan" + (f" --env {run.opts.env}" if run.opts.env else "")
    click.echo(
        f"wrote {counted(len(wanted), 'object')} to {path}; "
        f"`{plan}` shows no change for them{_elsewhere(run, wanted)}"
    )
    needed = secrets_named(documents)
    if needed:
        click.echo(
            "Header values are never read back; the file names them with secret(): "
            f"set {', '.join(needed)} before planning.",
            err=True,
        )
    return 0
