"""`agentform webhook deliveries` and `webhook resend` against a workspace's local
service, and `webhook test`'s failing notice."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentform.cli.webhook.deliveries import service_since, since_time
from agentform.core.errors import AgentformError
from agentform.output.delivery_lines import deliveries_lines
from agentform.service.store.database import DEFAULT_DB_PATH
from tests.webhooks.receiver import running_receiver
from tests.webhooks.test_cli_with_service import call, run, workspace  # noqa: F401


def test_deliveries_lists_attempts_and_resend_sends_again(workspace: Path) -> None:  # noqa: F811
    with running_receiver(204) as rx:
        call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": rx.url})
        assert run("webhook", "test", "ops", "-C", str(workspace)).exit_code == 0
        listed = run("webhook", "deliveries", "ops", "-C", str(workspace))
        none = run("webhook", "deliveries", "ops", "--status", "failed", "-C", str(workspace))
        delivery_id = listed.output.splitlines()[1].split()[-1]
        resent = run("webhook", "resend", delivery_id, "-C", str(workspace))
        again = run("webhook", "deliveries", "ops", "--since", "1h", "-C", str(workspace))
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    assert lines[0] == "1 delivery to ops, newest first:"
    assert "  delivered  EXECUTION_TEST  -  " in lines[1]
    assert lines[2].startswith("    #1  ") and "  204  " in lines[2]
    assert none.output == "no deliveries to ops match\n"
    assert resent.exit_code == 0, resent.output
    assert resent.output.startswith(f"resent 1 delivery (of {delivery_id}):\n")
    assert again.output.startswith("2 deliveries to ops, newest first:")


def test_resend_refuses_what_is_not_a_delivery(workspace: Path) -> None:  # noqa: F811
    bad = run("webhook", "resend", "../../agents", "-C", str(workspace))
    neither = run("webhook", "resend", "-C", str(workspace))
    typo = run("webhook", "resend", "--failed-since", "2hours", "-C", str(workspace))
    unknown = run("webhook", "resend", "0b6f3f0e-4a4e-4f55-9d1b-0f3c2f1d9a11", "-C", str(workspace))
    assert bad.exit_code == 1 and "'../../agents' is not a delivery id" in bad.output
    assert neither.exit_code == 1 and "give a DELIVERY_ID or --failed-since T" in neither.output
    assert unknown.exit_code == 1 and "not found" in unknown.output
    assert typo.exit_code == 1 and "--failed-since '2hours': give a time" in typo.output
    assert "Traceback" not in bad.output + unknown.output


def test_resend_failed_since_resends_nothing_when_nothing_failed(workspace: Path) -> None:  # noqa: F811
    call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": "http://x/"})
    result = run(
        "webhook", "resend", "--failed-since", "2d", "--integration", "ops", "-C", str(workspace)
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("nothing to resend: failed since ")


def test_webhook_test_says_when_the_integration_is_failing(workspace: Path) -> None:  # noqa: F811
    with running_receiver(500) as rx:
        made = call(workspace, "POST", "/webhook-integrations", {"name": "ops", "url": rx.url})
        with sqlite3.connect(workspace / DEFAULT_DB_PATH) as db:  # as 5 failed deliveries leave it
            db.execute(
                "INSERT INTO webhook_health VALUES (?, 5, '2026-01-01T00:00:00.000000Z', NULL)",
                (made["id"],),
            )
        result = run("webhook", "test", "ops", "-C", str(workspace))
        listed = run("webhook", "deliveries", "ops", "-C", str(workspace))
    notice = (
        "ops is failing since 2026-01-01T00:00:00.000000Z (5 failed deliveries in a row): "
        "one attempt at a time, 30 s apart, until one succeeds"
    )
    assert result.exit_code == 1
    assert notice in result.output.splitlines()
    assert listed.output.splitlines()[0] == notice


@pytest.mark.parametrize("text", ["yesterday", "2026-01-01T00:00:00", "5w"])
def test_since_wants_a_zoned_time_or_an_age(text: str) -> None:
    with pytest.raises(AgentformError, match="give a time with its zone"):
        since_time(text)


def test_since_counts_an_age_back_from_now() -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert since_time("90m", now) == "2026-03-01T10:30:00Z"
    assert since_time("2026-03-01T09:00:00+01:00") == "2026-03-01T09:00:00+01:00"


def test_an_answers_first_bytes_cannot_drive_the_terminal() -> None:
    attempt = {
        "number": 1,
        "at": "t",
        "responseStatus": 500,
        "durationMs": 3,
        "responseHead": "oops\x1b[2J\x9b31m héllo",
    }
    delivery = {
        "createdAt": "t",
        "status": "failed",
        "event": "E",
        "id": "d",
        "attempts": [attempt],
    }
    [_, _, line] = deliveries_lines("ops", [delivery])
    assert "\x1b" not in line and "\x9b" not in line
    assert '"oops\\u001b[2J\\u009b31m héllo"' in line


class _ClockAt:
    """An API client whose service's clock stands at `now` (a manual clock moved on)."""

    def __init__(self, now: str) -> None:
        self.now = now
        self.asked: list[str] = []

    async def request(self, method: str, path: str, **kw: object) -> dict[str, str]:
        self.asked.append(f"{method} {path}")
        return {"now": self.now, "kind": "manual"}


def test_an_age_counts_back_from_the_services_clock_not_this_machines() -> None:
    # `service run --clock manual` moved 10 days on: "2h" means the service's last 2 hours.
    api = _ClockAt("2030-01-11T12:00:00.500000Z")
    assert asyncio.run(service_since(api, "2h")) == "2030-01-11T10:00:00Z"  # type: ignore[arg-type]
    assert api.asked == ["GET /clock"]  # of the own() client, based at /agentform/v1
    written = asyncio.run(service_since(api, "2026-03-01T09:00:00Z"))  # type: ignore[arg-type]
    assert written == "2026-03-01T09:00:00+00:00" and len(api.asked) == 1  # a time: no call
