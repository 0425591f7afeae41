"""agentform's own delivery routes (/agentform/v1/webhook-deliveries): lists with
attempts, resends, each within the caller's organization; on a manual clock with a
receiver on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI

from agentform.rules.signatures import verify
from agentform.service import create_app
from agentform.service.runtime import ManualClock
from tests.service.conftest import (
    ACME,
    ADMIN_KEY,
    OTHER_KEY,
    READ_KEY,
    TEST_SEED,
    Api,
    assert_error,
    running,
)
from tests.service.test_delivery_fairness import SETTINGS, attach, emit
from tests.webhooks.receiver import Receiver, running_receiver

OWN = "/agentform/v1/webhook-deliveries"


class Service:
    def __init__(self, app: FastAPI, api: Api, advance: Callable[[float], None]) -> None:
        self.app, self.api, self.advance = app, api, advance
        self.agent = api.ids("/agents")["checkout-agent"]

    def own(self, method: str, path: str = "", key: str | None = None, **kw: Any) -> Any:
        headers = {"X-Api-Key": key or ADMIN_KEY}
        return self.api.client.request(method, OWN + path, headers=headers, **kw)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    path = tmp_path_factory.mktemp("operations") / "s.db"
    app = create_app(path, seed=TEST_SEED, clock=ManualClock(), settings=SETTINGS)
    with running(app) as (api, advance):
        yield Service(app, api, advance)
    app.state.db.close()


def failed_once_then_delivered(service: Service, rx: Receiver) -> str:
    """An integration with one failed delivery (3 attempts answered 500) and one
    delivered; its id."""
    hook = attach(service.api, rx.url, service.agent)
    rx.answer(500, 500, 500)
    emit(service.app, ACME, service.agent, "EXECUTION_FAILED")
    for attempt, seconds in enumerate((0, 1, 2), start=1):
        service.advance(seconds)
        rx.wait_for(attempt)
    service.advance(0)
    emit(service.app, ACME, service.agent, "EXECUTION_STARTED")
    service.advance(0)
    rx.wait_for(4)
    service.advance(0)
    return hook


def test_deliveries_are_listed_newest_first_with_their_attempts(service: Service) -> None:
    with running_receiver() as rx:
        hook = failed_once_then_delivered(service, rx)
        listed = service.own("GET", params={"integrationId": hook}).json()["items"]
        failed = service.own("GET", params={"integrationId": hook, "status": "failed"}).json()
        later = service.own(
            "GET", params={"integrationId": hook, "since": "2099-01-01T00:00:00Z"}
        ).json()
    assert [d["event"] for d in listed] == ["EXECUTION_STARTED", "EXECUTION_FAILED"]
    assert [d["status"] for d in listed] == ["delivered", "failed"]
    attempts = listed[1]["attempts"]
    assert [a["number"] for a in attempts] == [1, 2, 3]
    assert [a["responseStatus"] for a in attempts] == [500, 500, 500]
    assert all(a["error"] == "answered 500" and a["durationMs"] >= 0 for a in attempts)
    assert attempts[0]["at"] < attempts[1]["at"] < attempts[2]["at"]
    assert [d["id"] for d in failed["items"]] == [listed[1]["id"]]
    assert later["items"] == []


def test_a_resend_is_a_new_delivery_of_the_same_event_signed_anew(service: Service) -> None:
    with running_receiver() as rx:
        hook = failed_once_then_delivered(service, rx)
        [_, failed] = service.own("GET", params={"integrationId": hook}).json()["items"]
        answer = service.own("POST", f"/{failed['id']}/resend")
        assert answer.status_code == 201, answer.text
        [new_id] = answer.json()["deliveryIds"]
        service.advance(0)
        got = rx.wait_for(5)[-1]
        service.advance(0)
        public = service.api.get("/webhook-signing-key").json()["publicKeyPem"]
        listed = service.own("GET", params={"integrationId": hook}).json()["items"]
    assert new_id != failed["id"]
    assert got.event == "EXECUTION_FAILED"
    assert got.json()["info"]["execution_id"] == failed["executionId"]
    assert got.json()["event_id"] != failed["eventId"]  # an execution event's is new
    assert verify(got.body, got.headers["X-Service-Signature"], public)
    assert (listed[0]["id"], listed[0]["status"]) == (new_id, "delivered")
    assert listed[2]["status"] == "failed"  # the original stays as it was


def test_failed_deliveries_since_a_time_are_resent_together(service: Service) -> None:
    with running_receiver() as rx:
        hook = failed_once_then_delivered(service, rx)
        answer = service.own(
            "POST", "/resend", json={"integrationId": hook, "since": "2000-01-01T00:00:00Z"}
        )
        assert answer.status_code == 201, answer.text
        assert len(answer.json()["deliveryIds"]) == 1
        none = service.own(
            "POST", "/resend", json={"integrationId": hook, "since": "2099-01-01T00:00:00+00:00"}
        )
        service.advance(0)
        rx.wait_for(5)
    assert none.json()["deliveryIds"] == []
    assert rx.events()[-1] == "EXECUTION_FAILED"


def test_another_organizations_deliveries_are_not_found(service: Service) -> None:
    with running_receiver() as rx:
        hook = failed_once_then_delivered(service, rx)
        [delivered, _] = service.own("GET", params={"integrationId": hook}).json()["items"]
        assert_error(service.own("POST", f"/{delivered['id']}/resend", key=OTHER_KEY), 404)
        assert_error(service.own("GET", params={"integrationId": hook}, key=OTHER_KEY), 404)
        theirs = service.own("GET", key=OTHER_KEY).json()["items"]
        body = {"integrationId": hook, "since": "2000-01-01T00:00:00Z"}
        assert_error(service.own("POST", "/resend", key=OTHER_KEY, json=body), 404)
    assert theirs == []


@pytest.mark.parametrize("since", ["yesterday", "2026-01-01T00:00:00", "x" * 65])
def test_a_time_without_a_zone_is_refused(service: Service, since: str) -> None:
    assert_error(service.own("GET", params={"since": since}), 400)
    assert_error(service.own("POST", "/resend", json={"since": since}), 400)


def test_an_unknown_delivery_is_not_found(service: Service) -> None:
    assert_error(service.own("POST", f"/{uuid.uuid4()}/resend"), 404)


def test_a_read_key_lists_but_does_not_resend(service: Service) -> None:
    listed = service.own("GET", key=READ_KEY)
    assert listed.status_code == 200
    assert_error(service.own("POST", f"/{uuid.uuid4()}/resend", key=READ_KEY), 403)
