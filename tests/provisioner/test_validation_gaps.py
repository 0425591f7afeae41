"""Validation before any call (issue 10, defect 7): protect against ensure: absent
offline, the service's template rules offline with the service's own words,
reference errors at the member with a "did you mean", source lines after a
Jinja2 loop, and every undefined name of a file at once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentform.api.client import ApiClient
from agentform.config.loader import load_workspace
from agentform.core.errors import DiagnosticsError
from tests.provisioner.harness import Service, write_workspace


def problems(ws: Path, environ: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ=environ or {})
    return [d.render() for d in info.value.diagnostics]


def test_absent_on_a_protected_name_fails_validate_without_a_live_object(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\nprotect:\n  profilePools: ['prod-*']\n",
            "pools.yaml": "profilePools:\n  - {name: prod-eu, ensure: absent}\n"
            "  - {name: dev, ensure: absent}\n",
        },
    )
    assert problems(ws) == [
        "pools.yaml:2:5: error: profilePools prod-eu is declared absent but protected "
        "(protect in agentform.yaml)"
    ]


STEP = {"key": "a", "title": "t", "fieldKeys": ["USER"]}
BAD_TEMPLATES: list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]] = [
    ("duplicate step keys", [{"label": "User"}], [STEP, {**STEP, "fieldKeys": []}]),
    ("two labels, one key", [{"label": "User"}, {"label": "user"}], [STEP]),
    ("a label with no key", [{"label": "!!"}], []),
    ("a step naming no field", [{"label": "User"}], [{**STEP, "fieldKeys": ["USR"]}]),
    ("a field in two steps", [{"label": "User"}], [STEP, {**STEP, "key": "b"}]),
    ("an empty step", [{"label": "User"}], [{"key": "a", "title": "t", "fieldKeys": []}]),
]


@pytest.mark.parametrize(
    ("fields", "steps"), [(f, s) for _, f, s in BAD_TEMPLATES], ids=[n for n, *_ in BAD_TEMPLATES]
)
def test_template_rules_are_refused_offline_as_the_service_refuses_them(
    service: Service, ws: Path, fields: list[dict[str, Any]], steps: list[dict[str, Any]]
) -> None:
    body = {
        "kind": "custom",
        "name": "T",
        "fields": [{"type": "text", "required": True, **f} for f in fields],
        "steps": steps,
    }

    async def create(api: ApiClient) -> tuple[int, Any]:
        response = await api.sender.send("POST", "/vault/templates", body)
        return response.status_code, response.json()

    status, answer = service.run(create)
    assert status == 400
    said_by_service = sorted(f"{e['parameter']}: {e['detail']}" for e in answer["errors"])

    write_workspace(
        ws,
        {"agentform.yaml": "workspace: w\n", "t.yaml": "vaultTemplates:\n  - " + json.dumps(body)},
    )
    offline = sorted(
        re.sub(r"^.*error: vault template T: ", "", p)
        for p in problems(ws)
        if "vault template T:" in p
    )
    assert offline == said_by_service


def test_template_problems_point_at_the_value_at_fault(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "t.yaml": "vaultTemplates:\n"
            "  - name: T\n"
            "    kind: login\n"
            "    fields:\n"
            "      - {type: username, label: User, required: true}\n"
            "    steps:\n"
            "      - key: a\n"
            "        title: A\n"
            "        fieldKeys: [USER]\n"
            "      - key: a\n"
            "        title: B\n"
            "        fieldKeys: [USR]\n",
        },
    )
    assert problems(ws) == [
        "t.yaml:10:14: error: vault template T: steps.1.key: 'a' is already used by steps.0",
        "t.yaml:12:21: error: vault template T: steps.1.fieldKeys.0: 'USR' is not a field "
        "of the template (did you mean 'USER'?)",
    ]


def test_an_unknown_member_is_shown_at_the_member_with_a_suggestion(
    service: Service, ws: Path
) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n  - name: p\n    members:\n"
            "      - bot-1\n      - bto-2\n",
        },
    )
    with pytest.raises(DiagnosticsError) as info:
        service.plan(ws)
    assert str(info.value) == (
        "pools.yaml:5:9: error: pool p: members.1: no profile named 'bto-2' (did you mean 'bot-2'?)"
    )


def test_line_numbers_after_a_loop_are_lines_of_the_file(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "{% for region in ['eu', 'us', 'ap'] %}\n"
            "  - name: pool-{{ region }}\n"
            "    selectionStrategy: least_recently_used\n"
            "{% endfor %}\n"
            "  - name: last\n"
            "    colour: red\n",
        },
    )
    assert problems(ws) == ["pools.yaml:7:5: error: profilePools.3.colour: unknown key"]


def test_lines_inside_a_loop_and_after_whitespace_control(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "{%- for region in ['eu', 'us'] %}\n"
            "  - name: pool-{{ region }}\n"
            "    allowConcurrentUse: {{ 'sometimes' if region == 'us' else 'false' }}\n"
            "{%- endfor %}\n"
            "  - {name: last, colour: red}\n",
        },
    )
    found = problems(ws)
    assert found[0].startswith("pools.yaml:4:")  # the line of the field, in the loop
    assert "profilePools.1.allowConcurrentUse" in found[0]
    assert found[1].startswith("pools.yaml:6:")


def test_every_undefined_name_of_a_file_is_reported_at_once(ws: Path) -> None:
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "pools.yaml": "profilePools:\n"
            "  - name: '{{ vars.first }}'\n"
            "  - name: '{{ vars.second.deeper }}'\n"
            "  - name: '{{ env(\"AGENTFORM_VAR_TEST_UNSET_A\") }}'\n"
            "  - name: x\n"
            "    members: ['{{ secret(\"AGENTFORM_TEST_UNSET_B\") }}']\n"
            "{% for p in vars.pools %}\n  - name: '{{ p }}'\n{% endfor %}\n",
        },
    )
    assert problems(ws) == [
        f"pools.yaml:2:1: error: template error: variable 'first' is not set {SET}",
        f"pools.yaml:3:1: error: template error: variable 'second' is not set {SET}",
        "pools.yaml:4:15: error: environment variable AGENTFORM_VAR_TEST_UNSET_A is not set",
        "pools.yaml:6:19: error: secret AGENTFORM_TEST_UNSET_B: environment variable is not set",
        f"pools.yaml:7:1: error: template error: variable 'pools' is not set {SET}",
    ]


SET = "(set it under vars: in agentform.yaml, in a var file or with --var NAME=VALUE)"


def test_a_misspelt_variable_names_the_one_that_is_set(ws: Path) -> None:
    """Not Jinja2's "'dict object' has no attribute 'regoin'": the variable, and the
    set one it is close to. A missing key of a variable's own mapping keeps Jinja2's
    words."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\nvars: {region: eu, labels: {team: t}}\n",
            "pools.yaml": "profilePools:\n  - name: '{{ vars.regoin }}'\n"
            "  - name: '{{ vars.labels.taem }}'\n",
        },
    )
    assert problems(ws) == [
        "pools.yaml:2:1: error: template error: variable 'regoin' is not set "
        "(did you mean 'region'?)",
        "pools.yaml:3:1: error: template error: 'dict object' has no attribute 'taem'",
    ]


def test_an_undefined_name_given_to_tojson_is_reported_as_undefined(ws: Path) -> None:
    """`tojson` serialises the value itself: an undefined one is an undefined name
    at its line, not Python's "Object of type RecordingUndefined is not JSON
    serializable"."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "groups.yaml": "profileGroups:\n  - name: g\n"
            "    members: {{ vars.members | tojson }}\n"
            "  - name: h\n    members: {{ [vars.more] | tojson }}\n",
        },
    )
    assert problems(ws) == [
        f"groups.yaml:3:1: error: template error: variable 'members' is not set {SET}",
        f"groups.yaml:5:1: error: template error: variable 'more' is not set {SET}",
    ]


def test_an_unset_secret_does_not_hide_the_files_other_problems(ws: Path) -> None:
    """A secret left unset is one problem among the file's others, not the only one
    shown: the file is still read (the value unknown), so a misspelt event beside it
    is reported in the same run."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "hooks.yaml": "webhooks:\n"
            "  - name: hook\n"
            "    url: https://example.com/x\n"
            "    headers: {Authorization: \"Bearer {{ secret('AGENTFORM_TEST_UNSET_C') }}\"}\n"
            "    attachments:\n"
            "      - {agent: checkout-agent, eventRules: [EXECUTION_COMPLETD]}\n",
        },
    )
    found = problems(ws)
    assert found[0] == (
        "hooks.yaml:4:41: error: secret AGENTFORM_TEST_UNSET_C: environment variable is not set"
    )
    assert len(found) == 2 and "did you mean 'EXECUTION_COMPLETED'?" in found[1], found


@pytest.mark.parametrize("value", ["v", "{{ secret('TOKEN') }}"])
def test_header_problems_name_each_header_once_at_its_line(ws: Path, value: str) -> None:
    """A webhook's header map with two bad names: one diagnostic per header, at its
    key, not the whole map's problems doubled under `headers: headers.X ...`."""
    write_workspace(
        ws,
        {
            "agentform.yaml": "workspace: w\n",
            "hooks.yaml": "webhooks:\n  - name: h\n    url: https://h.example/\n"
            f'    headers:\n      "X A": "{value}"\n      Host: h\n',
        },
    )
    assert problems(ws, {"TOKEN": "a-long-t0ken"}) == [
        "hooks.yaml:5:7: error: webhooks.0.headers.X A: 'X A' is not a valid header name "
        "(letters, digits and !#$%&'*+-.^_`|~ only, at least one)",
        "hooks.yaml:6:7: error: webhooks.0.headers.Host: 'Host' is set by the service and "
        "cannot be a custom header",
    ]
