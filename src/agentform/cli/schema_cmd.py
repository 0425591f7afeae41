"""`agentform schema`: the JSON Schema of the workspace format, from the same models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..config.document import document_model

SCHEMA_FILE = "agentform.schema.json"


def workspace_schema() -> dict[str, Any]:
    schema = document_model().model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def render_schema() -> str:
    return json.dumps(workspace_schema(), indent=2, sort_keys=True) + "\n"


@click.command("schema")
@click.option(
    "--out", default="schemas", show_default=True, type=click.Path(file_okay=False, path_type=Path)
)
def schema(out: Path) -> None:
    """Write the JSON Schema of workspace files (for editors)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / SCHEMA_FILE).write_text(render_schema())
    click.echo(f"wrote {out / SCHEMA_FILE}")
