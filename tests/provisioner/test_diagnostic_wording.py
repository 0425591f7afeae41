"""The words of workspace diagnostics: a suggestion is worded by the one rule
(`rules.problems.did_you_mean`) wherever it is made, a value not among the choices
in the service's words (`rules.problems.describe`), and every location is named
once (webhook headers, batch items in the YAML or an itemsFile, template fields)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agentform.config.loader import load_workspace
from agentform.core.errors import DiagnosticsError
from agentform.core.problems import AT, did_you_mean
from agentform.core.sensitive import Sensitive
from agentform.kinds.vault_templates import TemplateField
from agentform.kinds.webhooks import WebhookDesired
from tests.provisioner.harness import write_workspace
from tests.provisioner.test_items_file import BATCH as FILE_BATCH


def problems(ws: Path, files: dict[str, str], environ: dict[str, str] | None = None) -> list[str]:
    write_workspace(ws, {"agentform.yaml": "workspace: w\n", **files})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ=environ or {})
    return [d.render() for d in info.value.diagnostics]


@pytest.mark.parametrize("value", ["presnt", "gone"])
def test_a_value_not_among_the_choices_is_said_in_the_shared_words(ws: Path, value: str) -> None:
    (problem,) = problems(ws, {"p.yaml": f"profilePools:\n  - {{name: p, ensure: {value}}}\n"})
    choices = ["present", "absent"]
    assert problem == (
        f"p.yaml:2:23: error: profilePools.0.ensure: '{value}' is not one of present, absent"
        + did_you_mean(value, choices)
    )


BATCH = FILE_BATCH.replace("    itemsFile: rows.csv\n", "")  # items to follow


def test_each_bad_header_is_named_once_at_its_own_line(ws: Path) -> None:
    """Also beside a secret() value: every problem of the map, each at its header (a
    value of the wrong type is found before the header rules run)."""
    hooks = """\
webhooks:
  - name: w
    url: http://127.0.0.1:8787/x
    headers:
      X-Token: "{{ secret('TOKEN') }}"
      X-Count: 5
  - name: v
    url: http://127.0.0.1:8787/x
    headers:
      Host: "{{ secret('TOKEN') }}"
      Content-Type: text/plain
"""
    found = problems(ws, {"w.yaml": hooks}, environ={"TOKEN": "a-token-long-enough-to-scrub"})
    assert found == [
        "w.yaml:6:7: error: webhooks.0.headers.X-Count: Input should be a valid string",
        "w.yaml:10:7: error: webhooks.1.headers.Host: 'Host' is set by the service and cannot "
        "be a custom header",
        "w.yaml:11:7: error: webhooks.1.headers.Content-Type: 'Content-Type' is set by the "
        "service and cannot be a custom header",
    ]


def test_an_unknown_key_is_named_once(ws: Path) -> None:
    items = "    items:\n      - {inputs: {order: A-1}}\n      - {metadatas: {team: x}}\n"
    template = """\
vaultTemplates:
  - name: T
    kind: login
    fields:
      - {type: username, label: Username, required: true, hnt: x}
"""
    assert problems(
        ws, {"b.yaml": BATCH + items, "t.yaml": template, "x.yaml": "colour: red\n"}
    ) == [
        "b.yaml:8:10: error: batches.0.items.1.metadatas: unknown key (did you mean 'metadata'?)",
        "t.yaml:5:59: error: vaultTemplates.0.fields.0.hnt: unknown key (did you mean 'hint'?)",
        "x.yaml:1:1: error: not a workspace file: none of its keys is a kind or a setting "
        "(if it is not one, list it in .agentformignore)",
    ]


def test_an_unknown_field_of_a_file_item_is_named_once(ws: Path) -> None:
    files = {"b.yaml": BATCH + "    itemsFile: rows.json\n", "rows.json": '[{}, {"input": {}}]'}
    assert problems(ws, files) == [
        "rows.json:1:6: error: itemsFile item 2: input: unknown field (did you mean 'inputs'?)"
    ]


def test_a_secret_checked_by_its_value_is_in_no_part_of_the_error() -> None:
    """Values from secret() are checked with their values standing in: no text of the
    error (pydantic's own shows inputs) may carry one; each problem keeps its place."""
    secret = Sensitive("a-token-long-enough-to-scrub" * 20)  # a hint too long
    field = {"type": "text", "label": "Note", "required": False, "hint": secret}
    with pytest.raises(ValidationError) as info:
        TemplateField.model_validate(field)
    assert "a-token" not in str(info.value) + repr(info.value.errors())
    headers = {"X-Token": Sensitive("a-token-long-enough-to-scrub"), "X-Count": 5}
    with pytest.raises(ValidationError) as info:
        WebhookDesired.model_validate({"name": "w", "url": "http://x.test/", "headers": headers})
    assert "a-token" not in str(info.value) + repr(info.value.errors())
    assert info.value.errors()[0]["ctx"][AT] == [(("X-Count",), "Input should be a valid string")]


def test_a_value_that_is_not_a_uuid_is_said_in_the_shared_words(ws: Path) -> None:
    """As the service says it, not pydantic's 'invalid character: found 'n' at 0'."""
    found = problems(ws, {"agentform.yaml": "workspace: w\norganizationId: not-a-uuid\n"})
    assert found == ["agentform.yaml:2:17: error: organizationId: 'not-a-uuid' is not a UUID"]
