"""Text that UTF-8 cannot encode (a lone surrogate such as `\\ud800`, which JSON's
`\\u` escapes and YAML's can write) is refused at the door, wherever text enters;
rows stored before that rule are served with the code points replaced, never a 500.

Before: an execute with such an input was 202, and from then on every `GET
/executions` of the organization answered 500.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.rules.values import replace_unencodable, unencodable_at
from agentform.service.startup.seed_file import SeedError, read_seed
from tests.service.conftest import Api, assert_error

LONE = "\ud800"
JSON = {"Content-Type": "application/json"}


def _raw(api: Api, method: str, path: str, body: str | bytes) -> Any:
    data = body.encode() if isinstance(body, str) else body
    return api.request(method, path, content=data, headers=JSON)


def _agent(api: Api) -> str:
    return api.ids("/agents")["checkout-agent"]


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ('{"inputs": {"s": "\\ud800"}}', "inputs.s"),
        ('{"metadata": {"k": "a\\udfff"}}', "metadata.k"),
        ('{"inputs": {"\\ud800": 1}}', "inputs"),
        (b'{"inputs": {"s": "\xed\xa0\x80"}}', "inputs.s"),  # the surrogate as raw bytes
    ],
)
def test_an_execute_with_a_lone_surrogate_is_400_and_the_list_still_answers(
    api: Api, body: str | bytes, parameter: str
) -> None:
    r = _raw(api, "POST", f"/agents/{_agent(api)}/execute", body)
    assert_error(r, 400, parameter, "U+D")
    assert r.json()["errors"][0]["parameter"] == parameter
    assert api.get("/executions").status_code == 200


def test_a_batch_item_or_a_name_with_a_lone_surrogate_is_400(api: Api) -> None:
    item = '{"inputs": {"s": "\\ud800"}}'
    batch = (
        f'{{"agentId": "{_agent(api)}", "name": "b", "startAt": "2030-01-01T00:00:00Z",'
        f' "config": {{"type": "timeBatching", "batchSize": 1, "batchInterval": 60}},'
        f' "items": [{item}]}}'
    )
    assert_error(_raw(api, "POST", "/execution-batches", batch), 400, "items.0.inputs.s")
    assert_error(_raw(api, "POST", "/profiles", '{"name": "p\\ud800"}'), 400, "name")
    pair = _raw(api, "POST", "/profiles", '{"name": "smile \\ud83d\\ude00"}')
    assert pair.status_code == 201 and pair.json()["name"] == "smile \U0001f600"


def test_a_query_value_that_is_not_utf8_is_400_naming_it(api: Api) -> None:
    r = api.get("/executions?metadataKey=k&metadataValue=%ED%A0%80")
    assert_error(r, 400, "metadataValue")
    assert_error(api.get("/profiles?searchName=%FF"), 400, "searchName")
    assert api.get("/profiles?searchName=%C3%A9").status_code == 200


def test_a_key_header_that_is_not_utf8_is_401_not_500(api: Api) -> None:
    r = api.client.get("/agents/v2/agents", headers={"X-Api-Key": b"\xed\xa0\x80"})
    assert_error(r, 401)


def test_a_stored_row_with_a_lone_surrogate_is_served_replaced(api: Api, app: FastAPI) -> None:
    created = api.post(f"/agents/{_agent(api)}/execute", json={"inputs": {"s": "ok"}})
    execution = created.json()["executionId"]
    with app.state.db.write() as conn:  # as a release before this rule stored it
        stored = json.dumps({"s": "a" + LONE, LONE: "b"})
        conn.execute("UPDATE executions SET inputs = ?, metadata = ?", (stored, stored))
    listed = api.get("/executions")
    assert listed.status_code == 200, listed.text
    one = api.get(f"/executions/{execution}").json()
    assert one["inputs"] == {"s": "a\ufffd", "\ufffd": "b"}
    assert one["metadata"] == one["inputs"]


def test_a_seed_with_a_lone_surrogate_is_refused_at_its_line(tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(
        'organizations:\n  - name: acme\n    profiles:\n      - name: "p\\ud800"\n',
        encoding="utf-8",
    )
    with pytest.raises(SeedError) as caught:
        read_seed(seed)
    assert "seed.yaml:4:" in str(caught.value) and "U+D800" in str(caught.value)


def test_the_rule_finds_and_replaces_every_lone_surrogate() -> None:
    value = {"a": [1, {"b": "x\udc00y"}], "ok": "\U0001f600"}
    found = unencodable_at(value)
    assert found is not None and found[0] == "a.1.b" and "U+DC00 at 1" in found[1]
    assert unencodable_at({"ok": "\U0001f600 é"}) is None
    assert replace_unencodable(value) == {"a": [1, {"b": "x\ufffdy"}], "ok": "\U0001f600"}


def test_a_path_segment_that_is_not_utf8_is_400_as_a_query_value_is(api: Api) -> None:
    """It was a 404 echoing U+FFFD ("agent '\ufffd' not found"): Starlette decodes
    the path with replacement characters before routing."""
    for path in ("/agents/%FF", "/agents/%ED%A0%80/webhooks", "/profiles/x%C3"):
        body = assert_error(api.get(path), 400, "must be UTF-8 text, percent-encoded")
        assert "\ufffd" not in body["message"], body
    assert_error(api.get("/agents/%C3%A9"), 400, "agentId: 'é' is not a UUID")  # UTF-8
    unknown = api.get("/no-such-path/%FF")  # no route: nothing of the path is said
    assert unknown.status_code == 404 and "\ufffd" not in unknown.text, unknown.text
