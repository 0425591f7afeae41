"""`agentform schema`: the JSON Schema of the workspace format, from the same models.

`--check` compares instead of writing (exit 1 when a file is missing or stale): the
`agentform-schema` pre-commit hook runs it on the schema files a commit touches.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import click

from agentform.config.document import document_model
from agentform.core.errors import AgentformError
from agentform.kinds import kinds_in_order
from agentform.kinds.base import FieldDocs
from agentform.rules.paths import API_PATH

SCHEMA_FILE = "agentform.schema.json"
SCHEMA_ID = "urn:agentform:workspace-schema:1"
EXAMPLE = {
    "workspace": "payments-prod",
    "endpoint": f"https://agents.example.com{API_PATH}",
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


# The settings' descriptions that their model (config/document.py) carries nowhere;
# each kind carries its own (Kind.summary, Kind.field_docs).
SETTING_DOCS: FieldDocs = {
    "WorkspaceFile.organizationId": (
        "The organization this workspace manages (a UUID); optional when the API key "
        "belongs to one organization.",
        ["5b6c0000-0000-4000-8000-000000000001"],
    ),
}


class UndocumentedFields(AgentformError):
    """A field of the workspace format has no description: every field editors show
    needs one (a kind gives it in its models or in its summary and field_docs)."""


def field_docs() -> FieldDocs:
    """The settings' docs and every kind's: its list's summary and its field_docs."""
    docs = dict(SETTING_DOCS)
    for kind in kinds_in_order():
        if kind.parent is None:
            summary = getattr(kind, "summary", None)
            if not summary:
                raise UndocumentedFields(
                    f"kind {kind.name} has no summary: say what its list holds "
                    f"(Kind.summary), the description of WorkspaceFile.{kind.name}"
                )
            docs[f"WorkspaceFile.{kind.name}"] = (summary, [])
        docs.update(kind.field_docs)
    return docs


def _documented(schema: dict[str, Any]) -> None:
    """Descriptions and examples from the docs where a model carries none; a doc of
    no field, or a field with no description, is refused (with the kinds at fault)."""
    models = {"WorkspaceFile": schema, **schema.get("$defs", {})}
    for dotted, (description, examples) in field_docs().items():
        model, _, name = dotted.partition(".")
        prop = models.get(model, {}).get("properties", {}).get(name)
        if prop is None:
            raise UndocumentedFields(f"field docs of {dotted}: the schema has no such field")
        prop.setdefault("description", description)
        if examples:
            prop.setdefault("examples", examples)
    missing = [
        f"{model}.{name}"
        for model, node in models.items()
        for name, prop in (node.get("properties") or {}).items()
        if not prop.get("description")
    ]
    if missing:
        raise UndocumentedFields(
            "fields without a description: "
            + ", ".join(f"{m} ({_owner(m)})" for m in missing)
            + "; give each a Field(description=...) or an entry in its kind's field_docs"
        )


def _owner(dotted: str) -> str:
    """Which kind's models hold the model of `dotted` ("Model.field"), for messages."""
    model = dotted.partition(".")[0]
    if model == "WorkspaceFile":
        return "the workspace settings"
    for kind in kinds_in_order():
        schema = kind.desired_model.model_json_schema()
        if model in (schema.get("title"), *schema.get("$defs", {})):
            return f"kind {kind.name}"
    return "no kind"


def _title(name: str) -> str:
    """`selectionStrategy` -> `Selection strategy`."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).split()
    acronyms = {"id": "ID", "url": "URL", "api": "API", "ids": "IDs"}
    text = " ".join(acronyms.get(w.lower(), w if w.isupper() else w.lower()) for w in words)
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
    _documented(schema)
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
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write agentform.schema.json into (default: schemas).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Do not write: exit 1 when the schema file (or each FILE given) is not current.",
)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
def schema(out: Path | None, check: bool, files: tuple[Path, ...]) -> None:
    """Write the JSON Schema of workspace files (for editors), or check it is current.

    `--check` with no FILE checks DIR/agentform.schema.json (--out), else the one of
    the current directory (a workspace made by `init`) or of schemas/.
    """
    try:
        expected = render_schema()
    except UndocumentedFields as exc:
        raise click.ClickException(str(exc)) from None
    if not check:
        if files:
            raise click.UsageError("FILE arguments are for --check; use --out DIR to write")
        out = out or Path("schemas")
        out.mkdir(parents=True, exist_ok=True)
        (out / SCHEMA_FILE).write_text(expected)
        click.echo(f"wrote {out / SCHEMA_FILE}")
        return
    found = [p for p in (Path(SCHEMA_FILE), Path("schemas") / SCHEMA_FILE) if p.is_file()]
    targets = list(files) or ([out / SCHEMA_FILE] if out else found or [Path(SCHEMA_FILE)])
    stale = [p for p in targets if not p.is_file() or p.read_text() != expected]
    for path in stale:
        fix = shlex.join(["agentform", "schema", "--out", str(path.parent)])
        click.echo(f"{path}: not the current schema; rewrite it with: {fix}", err=True)
    if stale:
        click.get_current_context().exit(1)
    click.echo(f"current: {', '.join(str(p) for p in targets)}")
