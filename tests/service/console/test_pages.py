"""The console's pages on a small world (tests/service/console/world.py): what each
shows, that user values are text, the filters, live rows, resend, and that a
session sees its own organization only, with the API's rules."""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from markupsafe import escape

from agentform.rules.signatures import verify
from agentform.service.delivery.envelope import encode
from tests.service.console.support import csrf_of
from tests.service.console.world import HOSTILE, World, make_world
from tests.service.execution_support import EXEC_KEY, EXEC_READ_KEY, RIVAL_KEY


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from make_world(Path(tmp_path_factory.mktemp("console")))


def text_of(page: str) -> str:
    """The page's text as a reader sees it: tags out, entities decoded, spaces folded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def shown(world: World, path: str, key: str = EXEC_KEY, status: int = 200) -> str:
    answer = world.console.signed_in(key).get(path)
    assert answer.status_code == status, answer.text[:2000]
    return answer.text


def test_a_hostile_value_is_shown_as_text_everywhere(world: World) -> None:
    for path in ("/executions", f"/executions/{world.failed}", "/"):
        page = shown(world, path)
        assert HOSTILE not in page and "<script>alert" not in page
        if path != "/":
            assert str(escape(HOSTILE)) in page  # shown, as text
    delivery = first_delivery(world, "alerts")
    page = shown(world, f"/deliveries/{delivery}")
    assert "<script>alert" not in page
    assert "down &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


def test_the_list_filters_as_the_api_does(world: World) -> None:
    assert world.failed in shown(world, "/executions?status=failed")
    assert world.completed not in shown(world, "/executions?status=failed")
    page = shown(world, "/executions?metadata=team%3Dpayments")
    assert world.completed in page and world.failed not in page
    api = re.search(r'<a href="(/agents/v2/executions\?[^"]+)"', page)
    assert api is not None
    answer = world.api.client.get(html.unescape(api.group(1)), headers={"X-Api-Key": EXEC_KEY})
    assert [e["id"] for e in answer.json()["items"]] == [world.completed]
    page = shown(world, "/executions?metadata=nonsense", status=400)
    assert "metadata: key=value" in page
    assert "an ISO 8601 time" in shown(world, "/executions?from=yesterday", status=400)


def test_the_id_box_opens_the_execution(world: World) -> None:
    answer = world.console.signed_in(EXEC_KEY).get(f"/executions?id={world.failed}")
    assert answer.headers["location"] == f"/console/executions/{world.failed}"


def test_an_execution_page_says_why_each_webhook_was_or_was_not_sent(world: World) -> None:
    page = text_of(shown(world, f"/executions/{world.failed}"))
    assert "Status failed" in page and "order F-1 failed" in page
    assert "EXECUTION_FAILED" in page and "EXECUTION_STARTED" in page
    glance = page.split("Webhooks at a glance", 1)[1].split("Timeline", 1)[0]
    assert "alerts: EXECUTION_FAILED sent, delivered after 2 attempts" in glance
    assert "alerts: 21 events not sent" in glance and "audit: 22 events not sent" in glance
    assert (
        "alerts: sent, delivered after 2 attempts "
        "(eventRules: the event rules list EXECUTION_FAILED)" in page
    )
    assert (
        "audit: not sent (metadataFilter.team: metadataFilter.team wanted 'payments', "
        f"the execution's was '{HOSTILE}')"
    ) in page
    assert f"GET /agentform/v1/executions/{world.failed}/routing" in page


def first_delivery(world: World, integration: str) -> str:
    with world.app.state.db.read() as conn:
        row = conn.execute(
            "SELECT id FROM webhook_deliveries WHERE integration_id = ? ORDER BY created_at",
            (world.integrations[integration],),
        ).fetchone()
    return str(row[0])


def test_a_delivery_page_shows_attempts_a_signature_that_verifies_and_the_body(
    world: World,
) -> None:
    delivery = first_delivery(world, "alerts")
    page = shown(world, f"/deliveries/{delivery}")
    text = text_of(page)
    assert "1 " in text and " 500 " in text and " 200 " in text
    signature = re.search(r"X-Service-Signature: ([A-Za-z0-9+/=]+)", text)
    bodies = re.findall(r"<pre>(.*?)</pre>", page, re.S)
    body = json.loads(html.unescape(bodies[-1]))
    assert body["info"]["event"] == "EXECUTION_FAILED"
    public = world.api.get("/webhook-signing-key").json()["publicKeyPem"]
    assert signature is not None and verify(encode(body), signature.group(1), public)
    assert "Resend" in page


def test_resend_makes_a_new_delivery_and_its_attempt(world: World) -> None:
    delivery = first_delivery(world, "alerts")
    console = world.console.signed_in(EXEC_KEY)
    page = console.get(f"/deliveries/{delivery}").text
    answer = console.post(f"/deliveries/{delivery}/resend", {"csrf": csrf_of(page)})
    assert answer.status_code == 303
    new = answer.headers["location"].rsplit("/", 1)[1]
    assert new != delivery
    assert "No attempt yet" in console.get(f"/deliveries/{new}").text
    world.advance(1)
    assert text_of(console.get(f"/deliveries/{new}").text).count(" 200 ") == 1


def test_an_action_without_its_token_is_refused(world: World) -> None:
    delivery = first_delivery(world, "alerts")
    console = world.console.signed_in(EXEC_KEY)
    for token in ({}, {"csrf": "forged"}):
        assert console.post(f"/deliveries/{delivery}/resend", token).status_code == 403


def test_a_read_key_sees_but_cannot_resend_or_move_the_clock(world: World) -> None:
    delivery = first_delivery(world, "alerts")
    console = world.console.signed_in(EXEC_READ_KEY)
    page = console.get(f"/deliveries/{delivery}").text
    assert "A read key cannot resend" in page and ">Resend<" not in page
    refused = console.post(f"/deliveries/{delivery}/resend", {"csrf": csrf_of(page)})
    assert refused.status_code == 403 and "may only read" in refused.text
    before = world.app.state.clock.now()
    moved = console.post("/clock/advance", {"csrf": csrf_of(page), "duration": "1h"})
    assert moved.status_code == 403 and world.app.state.clock.now() == before


def test_an_admin_moves_the_manual_clock(world: World) -> None:
    before = world.app.state.clock.now()
    console = world.console.signed_in(EXEC_KEY)
    page = console.get("/").text
    assert "manual clock" in page
    answer = console.post("/clock/advance", {"csrf": csrf_of(page), "duration": "90s"})
    assert answer.status_code == 200 and "The clock moved 90 s" in answer.text
    assert (world.app.state.clock.now() - before).total_seconds() == 90
    bad = console.post("/clock/advance", {"csrf": csrf_of(page), "duration": "soon"})
    assert bad.status_code == 400 and "did not move" in bad.text


@pytest.mark.parametrize(
    "path", ["/executions/{failed}", "/deliveries/{delivery}", "/batches/{random}"]
)
def test_another_organization_sees_nothing_of_this_one(world: World, path: str) -> None:
    target = path.format(
        failed=world.failed, delivery=first_delivery(world, "alerts"), random=uuid.uuid4()
    )
    page = shown(world, target, key=RIVAL_KEY, status=404)
    assert "not found" in page
    assert world.failed not in shown(world, "/executions", key=RIVAL_KEY)
    assert "alerts" not in shown(world, "/webhooks", key=RIVAL_KEY)


def test_new_executions_arrive_as_rows(world: World) -> None:
    console = world.console.signed_in(EXEC_KEY)
    page = console.get("/executions?status=queued&status=running").text
    live = re.search(r'data-live="([^"]+)" data-after="([^"]*)"', page)
    assert live is not None
    url, after = html.unescape(live.group(1)), live.group(2)
    rows = world.api.client.get(url, params={"after": after})
    assert rows.status_code == 200
    newest = rows.headers.get("x-console-newest")
    new = world.api.post(f"/agents/{world.agent}/execute", json={"metadata": {"n": "new"}})
    execution = new.json()["executionId"]
    rows = world.api.client.get("/console/executions/rows", params={"after": newest or after})
    assert execution in rows.text and rows.headers["x-console-newest"] > (newest or "")
    again = world.api.client.get(
        "/console/executions/rows", params={"after": rows.headers["x-console-newest"]}
    )
    assert execution not in again.text and "x-console-newest" not in again.headers


def test_the_webhooks_and_overview_pages(world: World) -> None:
    page = text_of(shown(world, "/webhooks"))
    assert "alerts" in page and "https://hooks.example.test/alerts" in page
    assert "EXECUTION_FAILED" in page and "scripted" in page and "payments" in page
    overview = text_of(shown(world, "/"))
    assert "exec" in overview and "failed" in overview and "delivered" in overview


def test_every_page_names_its_api_call_and_it_answers(world: World) -> None:
    for path in (
        "/",
        "/executions",
        f"/executions/{world.failed}",
        "/deliveries",
        "/webhooks",
        f"/deliveries/{first_delivery(world, 'alerts')}",
        "/batches",
    ):
        page = shown(world, path)
        found = re.search(r'<footer>.*?<a href="([^"]+)"', page, re.S)
        assert found is not None, path
        answer = world.api.client.get(
            html.unescape(found.group(1)), headers={"X-Api-Key": EXEC_KEY}
        )
        assert answer.status_code == 200, (path, answer.text)


def test_a_long_list_says_more_than_it_counts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentform.service.console import executions as listing

    monkeypatch.setattr(listing, "COUNTED", 1)
    page = text_of(shown(world, "/executions"))
    assert "More than 1 executions match, newest first" in page
    assert "Executions (page 1)" in page  # no "of N": N is not known


def test_the_deliveries_list_tells_its_rows_apart_by_their_shown_ids(world: World) -> None:
    """Delivery ids are time-ordered (UUID version 7): their first 8 digits are the
    instant's, shared by every delivery of a burst, so the list shows their tail."""
    page = shown(world, "/deliveries")
    rows = re.findall(r'href="[^"]*/deliveries/([0-9a-f-]{36})" class="mono">([^<]+)<', page)
    assert len(rows) >= 2
    assert len({short for _, short in rows}) == len(rows), rows
    assert all(delivery.endswith(short) for delivery, short in rows)


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/executions?page=-1", "page"),
        ("/executions?page=abc", "page"),
        ("/batches?page=0", "page"),
        ("/deliveries?status=x", "status"),
    ],
)
def test_a_bad_query_is_a_console_page_naming_the_parameter(
    world: World, path: str, said: str
) -> None:
    """It was the API's JSON error, in the browser."""
    answer = world.console.signed_in(EXEC_KEY).get(path)
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["content-security-policy"]
    assert f"{said}:" in text_of(answer.text)
    assert "one of ," not in answer.text  # no empty choice listed
