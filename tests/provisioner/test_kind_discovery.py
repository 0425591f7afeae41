"""Kinds are found by walking the `agentform.kinds` package, and each carries the
docs of its fields: adding a kind is adding its module, with no list to edit."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import Field

from agentform.cli.main import cli
from agentform.cli.schema_cmd import UndocumentedFields, render_schema
from agentform.config.document import document_model
from agentform.kinds import Kind, discover, kinds_in_order
from agentform.kinds.context import LiveRead
from agentform.kinds.model import ApiCall, DesiredModel, LiveObject, State


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Kind]]:
    """A copy of the registry for the test: the kinds it defines go when it ends."""
    copy = dict(Kind.registry)
    monkeypatch.setattr(Kind, "registry", copy)
    document_model.cache_clear()
    yield copy
    document_model.cache_clear()


def test_discovery_finds_the_five_kinds_in_dependency_order() -> None:
    found = [(k.name, k.parent) for k in kinds_in_order()]
    assert found == [
        ("profileGroups", None),
        ("profilePools", None),
        ("vaultTemplates", None),
        ("webhooks", None),
        ("batches", None),  # its items name pools
        ("webhookAttachments", "webhooks"),  # written inside a webhook
    ]


def test_a_module_added_to_a_kinds_package_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: dict[str, Kind]
) -> None:
    """A kind module and a helper module dropped in: the kind registers, the helper
    registers nothing, and neither needed a line anywhere else."""
    package = tmp_path / "morekinds"
    (package / "parts").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "parts" / "__init__.py").write_text("")
    (package / "parts" / "colours.py").write_text("COLOURS = ('red', 'blue')\n")
    (package / "shelves.py").write_text(
        textwrap.dedent(
            """
            from morekinds.parts.colours import COLOURS
            from tests.provisioner.test_kind_discovery import Toys

            class Shelves(Toys):
                name = "shelves"
                label = "shelf"
                summary = "Shelves, in " + " or ".join(COLOURS) + "."
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(registry)
    try:
        modules = discover("morekinds")
    finally:
        for name in [m for m in sys.modules if m.startswith("morekinds")]:
            monkeypatch.delitem(sys.modules, name)
    assert [m.__name__ for m in modules] == [
        "morekinds.parts",
        "morekinds.parts.colours",
        "morekinds.shelves",
    ]
    assert set(registry) - before == {"shelves"}
    assert registry["shelves"].summary == "Shelves, in red or blue."


def test_two_kinds_of_one_name_are_refused(registry: dict[str, Kind]) -> None:
    with pytest.raises(TypeError, match="two kinds are named 'webhooks'"):

        class Webhooks(Toys):
            name = "webhooks"


class ToyDesired(DesiredModel):
    name: str = Field(description="The toy's name.")
    colour: str | None = None  # described by field_docs, or by nothing in the tests


class ToyState(State):
    name: str


class Toys(Kind):
    """A kind with nothing to it but its docs (never registered outside a test)."""

    label = "toy"
    collection = "/toys"
    desired_model = ToyDesired

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        return []

    def desired_state(self, declared: Any, ctx: Any, live: LiveObject | None) -> State | None:
        return ToyState(name=declared.model.name)

    def create_calls(self, desired: State) -> list[ApiCall]:
        return []

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        return []


def _toys(**docs: Any) -> None:
    """Defines (so registers) a `toys` kind with the given summary and field_docs."""
    type("ToyKind", (Toys,), {"name": "toys", **docs})


def test_a_kind_that_documents_its_fields_is_in_the_schema(registry: dict[str, Kind]) -> None:
    _toys(summary="Toys.", field_docs={"ToyDesired.colour": ("Its colour.", ["red"])})
    schema = render_schema()
    assert '"description": "Toys."' in schema and '"description": "Its colour."' in schema


def test_a_kind_missing_its_field_docs_is_refused(registry: dict[str, Kind]) -> None:
    _toys(summary="Toys.")
    with pytest.raises(UndocumentedFields, match=r"ToyDesired\.colour \(kind toys\)"):
        render_schema()
    refused = CliRunner().invoke(cli, ["schema", "--check"])
    assert refused.exit_code == 1
    assert "fields without a description: ToyDesired.colour (kind toys)" in refused.output


def test_a_kind_missing_its_summary_is_refused(registry: dict[str, Kind]) -> None:
    _toys(field_docs={"ToyDesired.colour": ("Its colour.", [])})
    with pytest.raises(UndocumentedFields, match="kind toys has no summary"):
        render_schema()


def test_docs_of_a_field_that_does_not_exist_are_refused(registry: dict[str, Kind]) -> None:
    _toys(summary="Toys.", field_docs={"ToyDesired.color": ("Its colour.", [])})
    with pytest.raises(UndocumentedFields, match=r"ToyDesired\.color: the schema has no such"):
        render_schema()
