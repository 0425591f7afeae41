"""The Sensitive type and the run's registry: a value that cannot be shown by
accident, marks that survive parsing and planning, export that writes secret()
calls and plans clean, and scrubbing in every encoding."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from markupsafe import escape

from agentform.config.loader import load_workspace
from agentform.core.secrets import Secrets
from agentform.core.sensitive import MASK, SecretRef, Sensitive, reveal
from agentform.engine.export import export_live
from agentform.engine.planfile import dump_plan
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView
from agentform.output.yaml_view import workspace_yaml
from tests.provisioner.harness import Service, write_workspace

VALUE = 'tok-"ü\\1234'


def test_a_sensitive_value_cannot_be_shown_by_accident() -> None:
    secret = Sensitive(VALUE, (SecretRef("T"),))
    assert str(secret) == repr(secret) == f"{secret}" == f"{secret:>3}".strip() == MASK
    with pytest.raises(TypeError):
        json.dumps({"x": secret})
    with pytest.raises(TypeError):
        _ = "Bearer " + secret  # type: ignore[operator]
    assert secret == VALUE and hash(secret) == hash(VALUE)  # it diffs as its value
    assert reveal({"a": [secret]}) == {"a": [VALUE]}
    assert secret.source() == '{{ secret("T") }}' and secret.marked() == "((secret:T))"


def test_secret_values_never_enter_the_rendered_text_and_come_out_marked(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            # plain, single- and double-quoted, inside text: the value's quote and
            # backslash would break the YAML if the value were rendered into it
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: {{ secret('TOKEN') }}\n"
            "    fields:\n"
            "      - {type: text, label: A, required: true, hint: 'x {{ secret(\"TOKEN\") }} y'}\n"
            "      - {type: text, label: B, required: true, hint: \"{{ secret('TOKEN') }}\"}\n",
        },
    )
    workspace = load_workspace(ws, environ={"TOKEN": VALUE})
    (item,) = workspace.declared["vaultTemplates"]
    model: Any = item.model
    assert isinstance(model.description, Sensitive) and model.description == VALUE
    hints = [f.hint for f in model.fields]
    assert [type(h) for h in hints] == [Sensitive, Sensitive]
    assert hints[0] == f"x {VALUE} y" and hints[0].source() == 'x {{ secret("TOKEN") }} y'
    assert workspace.secrets.values == {"TOKEN": VALUE}


def test_a_filter_that_changes_a_secret_is_refused(ws: Path) -> None:
    from agentform.core.errors import DiagnosticsError

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"{{ secret('TOKEN') | upper }}\"\n"
            "    fields: [{type: text, label: A, required: true}]\n",
        },
    )
    with pytest.raises(
        DiagnosticsError,
        match=r"a secret\(\) value can only be placed in text, not given to \|upper",
    ):
        load_workspace(ws, environ={"TOKEN": VALUE})


def test_a_secret_in_a_key_is_refused_at_the_key_without_its_token(ws: Path) -> None:
    """The message names the mapping and the line of the key; the token that stands for
    the value while the file is parsed is agentform's, never shown."""
    from agentform.core.errors import DiagnosticsError

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "h.yaml": "webhooks:\n  - name: w\n    url: https://hooks.example.com/x\n"
            "    headers:\n      \"{{ secret('TOKEN') }}\": v\n",
        },
    )
    with pytest.raises(DiagnosticsError) as caught:
        load_workspace(ws, environ={"TOKEN": VALUE})
    text = "\n".join(d.render() for d in caught.value.diagnostics)
    key = 'webhooks.0.headers.{{ secret("TOKEN") }}'
    assert f"h.yaml:5:7: error: {key}: a secret() value cannot be a key" in text
    assert "agentform-secret" not in text and VALUE not in text


def test_export_writes_secret_calls_that_plan_clean(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"token {{ secret('TOKEN') }}\"\n"
            "    fields: [{type: text, label: A, required: true}]\n",
        },
    )
    env = {"TOKEN": VALUE}
    workspace = load_workspace(ws, environ=env)

    async def apply_then_export(api: Any) -> dict[str, Any]:
        from agentform.engine.apply import apply_plan
        from agentform.engine.planner import make_plan

        assert (await apply_plan(await make_plan(workspace, api, "t"), api)).ok
        return await export_live(load_workspace(ws, environ=env), api)

    documents = service.run(apply_then_export)
    text = workspace_yaml(documents)
    assert VALUE not in text and 'token {{ secret("TOKEN") }}' in text
    (ws / "t.yaml").unlink()
    for kind, items in documents.items():
        (ws / f"{kind}.yaml").write_text(workspace_yaml({kind: items}))
    assert not service.plan(ws, environ=env).has_changes


def test_a_rotated_secret_is_masked_before_and_after(service: Service, ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"token {{ secret('TOKEN') }}\"\n"
            "    fields: [{type: text, label: A, required: true, hint: old-one-too}]\n",
        },
    )
    old, new = "old-value-1234", "new-value-5678"

    async def apply_with(api: Any, value: str) -> Any:
        from agentform.engine.apply import apply_plan
        from agentform.engine.planner import make_plan

        workspace = load_workspace(ws, environ={"TOKEN": value})
        plan = await make_plan(workspace, api, "t")
        await apply_plan(plan, api)
        return workspace, plan

    service.run(lambda api: apply_with(api, old))
    plan = service.plan(ws, environ={"TOKEN": new})
    # planning learned the earlier value from the live template
    secrets = plan_secrets(service, ws, new)
    assert secrets.previous == {"TOKEN": {old}}
    shown = TextView(scrub=secrets.scrub).plan(plan) + dump_plan(plan)
    assert old not in shown and new not in shown
    assert "description: (sensitive, changed)" in shown


def plan_secrets(service: Service, ws: Path, value: str) -> Secrets:
    from agentform.engine.planner import make_plan

    workspace = load_workspace(ws, environ={"TOKEN": value})
    service.run(lambda api: make_plan(workspace, api, "t"))
    return workspace.secrets


@pytest.mark.parametrize("value", ["plain-Value-99", "ünï-cödé-7", 'q"u\\o/te+&=?'])
def test_scrub_finds_a_value_in_every_encoding(value: str) -> None:
    from urllib.parse import quote, quote_plus

    secrets = Secrets()
    secrets.add("X", value)
    wrapped = base64.b64encode(b"{'k': '" + value.encode() + b"'}").decode()
    for form in (
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value),
        repr(value)[1:-1],
        wrapped,
        yaml.dump(value).strip().strip('"'),
        str(escape(value)),  # in a page (the console, `test --html`)
        str(escape(json.dumps(value)[1:-1])),  # in a JSON payload shown in a page
    ):
        assert secrets.is_sensitive(f"before {form} after"), form
        assert value not in secrets.scrub(f"before {form} after")
    assert secrets.scrub_bytes(b"x " + value.encode() + b" y") == f"x {MASK} y".encode()


def test_export_writes_declared_header_values_as_the_files_write_them(
    service: Service, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "hooks.yaml": "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
            "    headers: {Authorization: \"Bearer {{ secret('TOKEN') }}\", X-Team: payments}\n",
        },
    )
    env = {"TOKEN": 'hdr-"q\\1234'}  # a header value is printable ASCII
    assert service.apply(ws, environ=env).ok
    documents = service.run(lambda api: export_live(load_workspace(ws, environ=env), api))
    text = workspace_yaml(documents)
    assert env["TOKEN"] not in text and "payments" not in text  # header values never read back
    assert "Authorization: 'Bearer {{ secret(\"TOKEN\") }}'" in text
    assert "X-Team: '{{ secret(\"H_X_TEAM\") }}'" in text  # a plain value: its placeholder


def test_shown_data_is_scrubbed_of_secrets_and_records_also_of_plain_header_values() -> None:
    secrets = Secrets()
    secrets.add("TOKEN", "tok-5e6f7a8b")
    secrets.add("webhooks/h/headers/X-Team", "payments", marks=False)
    text = "token tok-5e6f7a8b, team payments"
    assert secrets.scrub(text) == f"token {MASK}, team {MASK}"  # cassettes, logs, errors
    assert secrets.scrub_shown(text) == f"token {MASK}, team payments"  # plans, exports


def test_an_unset_secret_names_a_set_variable_it_may_be_mistyped_as(ws: Path) -> None:
    """Variable names are not secret: the hint names the close one that is set,
    never its value."""
    from agentform.core.errors import DiagnosticsError

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"{{ secret('OPS_WEBHOOK_TOKEN') }} "
            "{{ env('AGENTFORM_VAR_REGION') }}\"\n"
            "    fields: [{type: text, label: A, required: true}]\n",
        },
    )
    environ = {"OPS_WEBHOOK_TOKN": VALUE, "AGENTFORM_VAR_REGOIN": "eu-west-1"}
    with pytest.raises(DiagnosticsError) as caught:
        load_workspace(ws, environ=environ)
    text = str(caught.value)
    assert (
        "secret OPS_WEBHOOK_TOKEN: environment variable is not set "
        "(did you mean 'OPS_WEBHOOK_TOKN'?)" in text
    )
    unset = "environment variable AGENTFORM_VAR_REGION is not set"
    assert f"{unset} (did you mean 'AGENTFORM_VAR_REGOIN'?)" in text
    assert VALUE not in text and "eu-west-1" not in text


def test_a_common_secret_value_leaves_the_plan_readable(service: Service, ws: Path) -> None:
    """Views mask by type only: a field that is not sensitive is shown as written,
    even where its text holds a secret's value; plan warns that such a value
    protects nothing there (and, short, nothing in cassettes and logs)."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: acme-prod\n",
            "pools.yaml": "profilePools:\n  - {name: checkout-prod, members: [bot-1]}\n"
            "profileGroups:\n  - {name: prod-bots, members: [bot-2]}\n",
            "hooks.yaml": "webhooks:\n  - name: hook-payments-team\n"
            "    url: https://hooks.example.com/x\n"
            "    headers: {X-Env: \"{{ secret('ENV') }}\", X-Team: \"{{ secret('TEAM') }}\"}\n",
        },
    )
    env = {"ENV": "prod", "TEAM": "payments-team"}
    workspace = load_workspace(ws, environ=env)
    plan = service.plan(ws, environ=env)
    shown = TextView().plan(plan) + MarkdownView().plan(plan) + dump_plan(plan)
    for written in ("checkout-prod", "prod-bots", "acme-prod", "hook-payments-team"):
        assert written in shown
    assert 'headers: {"X-Env": "(sensitive)", "X-Team": "(sensitive)"}' in TextView().plan(plan)
    warnings = [w.render() for w in workspace.warnings]
    assert warnings == [
        "hooks.yaml:4:15: warning: secret ENV is shorter than 8 characters and fills "
        "webhooks.0.headers.X-Env alone: it is masked in every view, but too short to be "
        "scrubbed from cassettes and logs",
        "hooks.yaml:2:5: warning: the value of secret TEAM also appears in fields that are "
        "not secret: they are shown as written, and only cassettes and logs mask it there",
    ]


@pytest.mark.parametrize(("value", "empty"), [("", True), ("tök-ü", False)])
def test_an_empty_secret_is_not_set(ws: Path, value: str, empty: bool) -> None:
    """CI passes '' for a secret that does not exist: an empty value is unset
    (plan refuses naming it and saying why; validate lists it as not set here)."""
    from agentform.core.errors import DiagnosticsError

    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n  - name: T\n    kind: custom\n"
            "    description: \"x {{ secret('OPS_TOK') }}\"\n"
            "    fields: [{type: text, label: A, required: true}]\n",
        },
    )
    environ = {"OPS_TOK": value}
    checked = load_workspace(ws, environ=environ, unset_secrets_allowed=True)
    assert ("OPS_TOK" in checked.unset_secrets) is empty
    if not empty:
        assert load_workspace(ws, environ=environ).unset_secrets == frozenset()
        return
    with pytest.raises(DiagnosticsError) as caught:
        load_workspace(ws, environ=environ)
    assert (
        "t.yaml:4:24: error: secret OPS_TOK: environment variable is empty "
        "(an empty value is treated as not set)" in str(caught.value)
    )
