"""`agentform export`: the live workspace as YAML (a plan on it shows no changes).

With `--out DIR` it writes a complete workspace: one `<kind>.yaml` per kind, an
`agentform.yaml` naming the endpoint and organization, the JSON Schema and a
.gitignore, so `agentform -C DIR plan` is clean. It works without a workspace
(`--endpoint` names the service): the way to adopt a workspace built by hand.
"""

from __future__ import annotations

import shlex
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import click
import yaml

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.conventions import SuggestingChoice
from agentform.cli.init_cmd import GITIGNORE_LINES, MODELINE
from agentform.cli.safety import run_secrets
from agentform.cli.schema_cmd import SCHEMA_FILE, render_schema
from agentform.config.files import root_file
from agentform.config.loader import Workspace
from agentform.config.settings import Settings
from agentform.core.errors import AgentformError
from agentform.engine.export import export_organization, secrets_named
from agentform.kinds import kinds_in_order
from agentform.kinds.model import Declared
from agentform.kinds.order import top_level_kinds
from agentform.output.yaml_view import workspace_yaml


def _workspace(run: RunContext, out: Path | None) -> Workspace:
    """The workspace of -C, or, where there is none, one made of the options alone."""
    opts = run.opts
    if root_file(opts.workspace_dir) is not None:
        return run.load(unset_secrets_allowed=True)
    if not opts.endpoint:
        raise click.UsageError(
            f"no agentform.yaml in {opts.workspace_dir}: name the service with --endpoint "
            "(URL or 'local') to export from it"
        )
    name = (out or opts.workspace_dir).resolve().name or "workspace"
    settings = Settings(
        workspace=name, endpoint=opts.endpoint, organization_id=opts.organization_id
    )
    declared: dict[str, list[Declared]] = {k.name: [] for k in kinds_in_order()}
    return run.adopt(
        Workspace(opts.workspace_dir.resolve(), settings, declared, run_secrets(), "", [])
    )


@click.command("export")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write a complete workspace into (default: print the YAML).",
)
@click.option(
    "--kinds",
    "kinds",
    multiple=True,
    type=SuggestingChoice(sorted(k.name for k in top_level_kinds())),  # children go with parents
    help="Only these kinds (repeatable; default: all).",
)
@click.option("--force", is_flag=True, help="Overwrite files that exist already in --out.")
@workspace_options
@guarded
def export(run: RunContext, out: Path | None, kinds: tuple[str, ...], force: bool) -> int:
    """Write the live workspace as YAML."""
    workspace = _workspace(run, out)
    chosen = list(kinds) or None

    warnings: list[str] = []

    organization_id, documents = run.with_api(
        lambda api: export_organization(workspace, api, chosen, warnings)
    )
    for warning in warnings:
        click.echo(workspace.secrets.scrub(f"Warning: {warning}"), err=True)
    if out is None:
        click.echo(workspace.secrets.scrub_shown(workspace_yaml(documents)), nl=False)
        _say_secrets_needed(documents)
        return 0
    endpoint = run.opts.endpoint or workspace.settings.endpoint
    from agentform.api.endpoint_url import shown_endpoint

    settings = {
        "workspace": workspace.settings.workspace,
        "endpoint": shown_endpoint(endpoint),  # credentials stay out of the files
        "organizationId": organization_id,
    }
    files = {f"{kind}.yaml": {kind: items} for kind, items in documents.items()}
    texts = {
        name: MODELINE + workspace.secrets.scrub_shown(workspace_yaml(doc))
        for name, doc in files.items()
    }
    texts["agentform.yaml"] = MODELINE + yaml.safe_dump(settings, sort_keys=False)
    texts[SCHEMA_FILE] = render_schema()
    texts[".gitignore"] = "\n".join(GITIGNORE_LINES) + "\n"
    existing = [name for name in texts if (out / name).exists()]
    if existing and not force:
        listed = "\n".join(f"  {out / n}" for n in existing)
        raise click.ClickException(
            f"these files exist already; nothing was written (use --force to overwrite):\n{listed}"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            (out / name).write_text(text)
    except OSError as exc:
        raise AgentformError(f"cannot write the export to {out}: {exc.strerror}") from None
    for kind, items in documents.items():
        click.echo(f"wrote {len(items)} {kind} to {out / f'{kind}.yaml'}")
    if endpoint == "local":
        _copy_local_state(run.local_state, out)
    check = shlex.join(["agentform", "-C", str(out), "plan"])
    click.echo(f"wrote {out / 'agentform.yaml'}; check it with: {check}")
    _say_secrets_needed(documents)
    return 0


def _say_secrets_needed(documents: dict[str, list[dict[str, Any]]]) -> None:
    """Once the export is written: the variables its secret() calls need."""
    needed = secrets_named(documents)
    if needed:
        click.echo(
            "Header values are never read back; the export names them with secret(): "
            f"set {', '.join(needed)} before planning it.",
            err=True,
        )


def _copy_local_state(db: Path, out: Path) -> None:
    """The embedded service's state goes along, so the export (a workspace without
    environments) plans clean there too."""
    from agentform.cli.endpoint import local_state
    from agentform.service.store.database import create_private

    target = local_state(out)
    if not db.is_file() or db.resolve() == target.resolve():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in target.parent.glob(f"{target.name}*"):  # its -wal and -shm too
        leftover.unlink()
    create_private(target)  # never readable by others, not even while it is copied
    src, dst = sqlite3.connect(db), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    shutil.copymode(db, target)
