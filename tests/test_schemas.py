"""The checked-in JSON Schema of the workspace format is current, and the examples
validate against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from agentform.cli.schema_cmd import SCHEMA_FILE, render_schema
from agentform.config.environments import every_var_file, raw_environments
from agentform.config.files import workspace_files
from agentform.config.loader import load_workspace
from agentform.config.render import Renderer
from agentform.core.bounds import Bounds

ROOT = Path(__file__).parents[1]
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/agentform.yaml"))


def test_workspace_schema_is_up_to_date() -> None:
    assert (ROOT / "schemas" / SCHEMA_FILE).read_text() == render_schema(), (
        "schemas/agentform.schema.json is stale: run `make schemas`"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_validate_against_the_schema(example: Path) -> None:
    from agentform.core.diagnostics import Diagnostics

    schema = json.loads((ROOT / "schemas" / SCHEMA_FILE).read_text())
    renderer = Renderer(example)
    environments = raw_environments(example / "agentform.yaml")
    environment = next(iter(environments), None)  # its vars render the files
    loaded = load_workspace(example, environment=environment, unset_secrets_allowed=True)
    renderer.env_name = environment
    diags = Diagnostics()
    for path in workspace_files(
        example, every_var_file(Bounds.of_workspace(example), environments)
    ):
        rendered = renderer.render(path, loaded.variables, "example", diags)
        assert rendered is not None and not diags.items, diags.items
        jsonschema.validate(yaml.safe_load(rendered.text), schema)


def test_schema_rejects_an_unknown_key() -> None:
    schema = json.loads(render_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"profilePools": [{"name": "a", "colour": "red"}]}, schema)


def test_schema_allows_x_keys_at_the_top_only() -> None:
    """Editors accept what the loader ignores (`x-` keys holding anchors), no more."""
    schema = json.loads(render_schema())
    jsonschema.validate({"x-pool": {"anything": [1]}, "profilePools": [{"name": "a"}]}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"profilePools": [{"name": "a", "x-note": 1}]}, schema)


def _properties(node: object, path: str = "") -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    out = []
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            out.append((f"{path}.{name}", sub))
        for key, sub in node.items():
            out += _properties(sub, f"{path}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            out += _properties(sub, f"{path}[{i}]")
    return out


def test_schema_is_ready_for_editors() -> None:
    """An $id, and a title and a description on every field (what editors show on
    hover and completion), examples for the document and the main fields."""
    schema = json.loads(render_schema())
    assert schema["$id"] and schema["$schema"].endswith("2020-12/schema")
    props = _properties(schema)
    assert len(props) > 20
    missing = [p for p, sub in props if not sub.get("description") or not sub.get("title")]
    assert missing == [], f"fields without a title or description: {missing}"
    assert sum("examples" in sub for _, sub in props) >= 10
    for example in schema["examples"]:
        jsonschema.validate(example, schema)
    titles = {p: sub["title"] for p, sub in props}
    assert titles["/$defs/ProfileSetDesired.selectionStrategy"] == "Selection strategy"
    assert titles[".organizationId"] == "Organization ID"


def test_schema_check_finds_the_workspace_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from agentform.cli.main import cli

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["schema", "--check"]).exit_code == 1  # none yet
    assert runner.invoke(cli, ["schema", "--out", "."]).exit_code == 0
    assert runner.invoke(cli, ["schema", "--check"]).exit_code == 0
    (tmp_path / SCHEMA_FILE).write_text("{}")
    stale = runner.invoke(cli, ["schema", "--check"])
    assert stale.exit_code == 1 and "not the current schema" in stale.output
