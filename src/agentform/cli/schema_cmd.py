"""`agentform schema`: the JSON Schema of the workspace format, from the same models.

`--check` compares instead of writing (exit 1 when a file is missing or stale): the
`agentform-schema` pre-commit hook runs it on the schema files a commit touches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click

from ..config.document import document_model

SCHEMA_FILE = "agentform.schema.json"
SCHEMA_ID = "urn:agentform:workspace-schema:1"
EXAMPLE = {
    "workspace": "payments-prod",
    "endpoint": "https://agents.example.com/agents/v2",
    "prune": ["profilePools"],
    "profilePools": [
        {
            "name": "checkout-eu",
            "selectionStrategy": "least_recently_used",
            "allowConcurrentUse": False,
            "members": ["bot-1", "bot-2"],
        }
    ],
}


def _title(name: str) -> str:
    """`selectionStrategy` -> `Selection strategy`."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).split()
    text = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)
    return text[:1].upper() + text[1:]


def _titled(node: Any) -> None:
    """Every property gets a title made from its name (pydantic's are run together)."""
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict):
                sub["title"] = _title(name)
        for sub in node.values():
            _titled(sub)
    elif isinstance(node, list):
        for sub in node:
            _titled(sub)


def workspace_schema() -> dict[str, Any]:
    schema = document_model().model_json_schema()
    _titled(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["description"] = (
        "A file of an agentform workspace: agentform.yaml holds the settings; "
        "any file may hold the kind lists."
    )
    schema["examples"] = [EXAMPLE]
    return schema


def render_schema() -> str:
    return json.dumps(workspace_schema(), indent=2, sort_keys=True) + "\n"


@click.command("schema")
@click.option(
    "--out", default="schemas", show_default=True, type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--check",
    is_flag=True,
    help="Do not write: exit 1 when the schema file (or each FILE given) is not current.",
)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
def schema(out: Path, check: bool, files: tuple[Path, ...]) -> None:
    """Write the JSON Schema of workspace files (for editors), or check it is current."""
    expected = render_schema()
    if not check:
        if files:
            raise click.UsageError("FILE arguments are for --check; use --out DIR to write")
        out.mkdir(parents=True, exist_ok=True)
        (out / SCHEMA_FILE).write_text(expected)
        click.echo(f"wrote {out / SCHEMA_FILE}")
        return
    targets = list(files) or [out / SCHEMA_FILE]
    stale = [p for p in targets if not p.is_file() or p.read_text() != expected]
    for path in stale:
        fix = f"agentform schema --out {path.parent}"
        click.echo(f"{path}: not the current schema; rewrite it with: {fix}", err=True)
    if stale:
        click.get_current_context().exit(1)
    click.echo(f"current: {', '.join(str(p) for p in targets)}")
