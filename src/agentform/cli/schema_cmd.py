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


# Descriptions (and examples) of the fields whose models do not carry one, by
# "$defs model.field" ("WorkspaceFile.field" at the top). Every property of the
# schema must end up with a description: tests/test_schemas.py checks it.
FIELD_DOCS: dict[str, tuple[str, list[Any]]] = {
    "WorkspaceFile.organizationId": (
        "The organization this workspace manages (a UUID); optional when the API key "
        "belongs to one organization.",
        ["5b6c0000-0000-4000-8000-000000000001"],
    ),
    "WorkspaceFile.profilePools": ("Agent profile pools (API.md §6).", []),
    "WorkspaceFile.profileGroups": ("Profile groups (API.md §6).", []),
    "WorkspaceFile.vaultTemplates": ("Vault templates (API.md §7).", []),
    "WorkspaceFile.webhooks": ("Webhook integrations and their attachments (API.md §8).", []),
    "WorkspaceFile.batches": ("Scheduled execution batches (API.md §10).", []),
    "ProfileSetDesired.name": (
        "The name: the identity of the pool or group (unique in the organization).",
        ["checkout-eu"],
    ),
    "ProfileSetDesired.selectionStrategy": (
        "Which free profile an execution gets. Omit to leave it unmanaged.",
        ["least_recently_used"],
    ),
    "ProfileSetDesired.allowConcurrentUse": (
        "Whether one profile may serve several executions at once. Omit to leave it unmanaged.",
        [False],
    ),
    "VaultTemplateDesired.name": (
        "The name: the template's identity (unique in the organization).",
        ["Shop login"],
    ),
    "VaultTemplateDesired.kind": ("What the template holds; needed to create it.", ["login"]),
    "VaultTemplateDesired.description": (
        "Free text (at most 4,000 characters); null or empty clears it.",
        ["Sign-in for the shop's back office"],
    ),
    "VaultTemplateDesired.fields": (
        "The ordered fields; needed to create the template. Omit to leave them unmanaged.",
        [[{"type": "username", "label": "Username", "required": True}]],
    ),
    "VaultTemplateDesired.steps": (
        "The ordered steps (at most 20), each naming the keys of the fields it fills.",
        [[{"key": "sign-in", "title": "Sign in", "fieldKeys": ["USERNAME", "PASSWORD"]}]],
    ),
    "TemplateField.type": ("What the field holds.", ["password"]),
    "TemplateField.label": (
        "The label (1 to 200 characters); its UPPER_SNAKE form is the field's key.",
        ["API key"],
    ),
    "TemplateField.required": ("Whether a vault item must fill the field.", [True]),
    "TemplateField.hint": ("Help shown with the field (at most 500 characters).", []),
    "TemplateStep.key": ("A lower-case slug unique in the template.", ["sign-in"]),
    "TemplateStep.title": ("The step's title (1 to 200 characters).", ["Sign in"]),
    "TemplateStep.instructions": ("What to do in this step (at most 4,000 characters).", []),
    "TemplateStep.fieldKeys": (
        "Keys of the fields filled in this step (a field is in at most one step); may be "
        "empty only when there are instructions.",
        [["USERNAME", "PASSWORD"]],
    ),
}


def _documented(schema: dict[str, Any]) -> None:
    """Descriptions and examples from FIELD_DOCS where a model carries none."""
    models = {"WorkspaceFile": schema, **schema.get("$defs", {})}
    for dotted, (description, examples) in FIELD_DOCS.items():
        model, _, name = dotted.partition(".")
        prop = models.get(model, {}).get("properties", {}).get(name)
        if prop is None:
            continue  # a kind not in this build (its entry waits for it)
        prop.setdefault("description", description)
        if examples:
            prop.setdefault("examples", examples)


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
    expected = render_schema()
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
