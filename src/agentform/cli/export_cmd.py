"""`agentform export`: the live workspace as YAML (a plan on it shows no changes)."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from ..engine.export import export_live, secrets_named
from ..kinds import Kind
from .common import Options, guarded, load, with_api, workspace_options


@click.command("export")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write one <kind>.yaml per kind into (default: print).",
)
@click.option(
    "--kinds",
    "kinds",
    multiple=True,
    type=click.Choice(sorted(Kind.registry)),
    help="Only these kinds (repeatable; default: all).",
)
@workspace_options
@guarded
def export(opts: Options, out: Path | None, kinds: tuple[str, ...]) -> int:
    """Write the live workspace as YAML."""
    workspace = load(opts)

    documents = with_api(
        opts, workspace, lambda api: export_live(workspace, api, list(kinds) or None)
    )
    needed = secrets_named(documents)
    if needed:
        click.echo(
            "Header values are never read back; the export names them with secret(): "
            f"set {', '.join(needed)} before planning it.",
            err=True,
        )
    if out is None:
        click.echo(yaml.safe_dump(documents, sort_keys=False, allow_unicode=True), nl=False)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for kind, items in documents.items():
        path = out / f"{kind}.yaml"
        path.write_text(yaml.safe_dump({kind: items}, sort_keys=False, allow_unicode=True))
        click.echo(f"wrote {len(items)} {kind} to {path}")
    root = out / "agentform.yaml"
    if not root.exists():
        settings = {
            "workspace": workspace.settings.workspace,
            "endpoint": opts.endpoint or workspace.settings.endpoint,
        }
        root.write_text(yaml.safe_dump(settings, sort_keys=False))
        click.echo(f"wrote {root}")
    return 0
