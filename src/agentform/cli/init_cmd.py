"""`agentform init [DIR]`: a new workspace on the local endpoint."""

from __future__ import annotations

from pathlib import Path

import click

ROOT = """\
workspace: {name}
endpoint: local          # the embedded Agent Service, state in .agentform/
# organizationId: ...    # optional when the key has one organization
prune: []                # kinds whose undeclared live objects are deleted
protect: {{}}              # e.g. profilePools: ["prod-*"]
vars: {{}}
"""

POOLS = """\
profilePools:
  - name: example-pool
    selectionStrategy: least_recently_used
    allowConcurrentUse: false
    members: [bot-1, bot-2]
"""


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Scaffold a workspace (local endpoint by default)."""
    root = directory / "agentform.yaml"
    if root.exists():
        raise click.ClickException(f"{root} exists already; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    name = directory.resolve().name or "workspace"
    root.write_text(ROOT.format(name=name))
    (directory / "pools.yaml").write_text(POOLS)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(".agentform/\n")
    click.echo(f"Created a workspace in {directory}: agentform.yaml, pools.yaml, .gitignore")
    click.echo(f"Next: agentform plan -C {directory}")
