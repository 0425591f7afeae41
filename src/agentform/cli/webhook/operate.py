"""`agentform webhook test|explain|deliveries|resend`: operating an integration's
deliveries through the service (cli/webhook/command.py adds them to the group),
and the one rule of which service these commands talk to (`service_of`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.conventions import SuggestingChoice
from agentform.cli.views import format_option

if TYPE_CHECKING:
    from agentform.api.connect import Endpoint

NO_SERVICE = (
    "no agentform.yaml in {where}: run this in a workspace (-C DIR) or give the service "
    "with --endpoint URL (or 'local')"
)


def service_of(run: RunContext) -> Endpoint:
    """The endpoint of the workspace (with --endpoint, no workspace is needed: these
    commands manage nothing)."""
    return run.service(NO_SERVICE.format(where=run.opts.workspace_dir.resolve()))


@click.command("test")
@click.argument("name")
@click.option(
    "--wait",
    default=0.0,
    metavar="SECONDS",
    type=click.FloatRange(min=0),
    help="Follow the delivery through its retries for up to SECONDS, until it is "
    "delivered or failed. Without it: the first attempt, which the service waits for.",
)
@workspace_options
@guarded
def test_cmd(run: RunContext, name: str, wait: float) -> int:
    """Send the integration NAME's test event (EXECUTION_TEST) and show the delivery.

    Exit 0 when it was delivered (the receiver answered 2xx), 1 otherwise.
    """
    from agentform.cli.webhook.test import send_test
    from agentform.output.delivery_lines import failing_line
    from agentform.output.webhook_lines import WAIT_HINT, delivery_line

    service_of(run)
    # On `local` the in-process service's runtime makes the attempt (and any other due work).
    outcome = run.with_api(lambda api: send_test(api, name, wait), runtime=True)
    click.echo(delivery_line(outcome.name, outcome.url, outcome.delivery))
    notice = failing_line(outcome.name, outcome.health)
    if notice:
        click.echo(notice)
    if not outcome.settled:
        click.echo(WAIT_HINT)
    return 0 if outcome.delivered else 1


@click.command("explain")
@click.argument("execution_id")
@format_option(
    ("text", "json"), "text for a terminal, json for programs (the service's answer as it is)."
)
@workspace_options
@guarded
def explain_cmd(run: RunContext, execution_id: str, fmt: str) -> int:
    """Say, for each event of EXECUTION_ID and each webhook integration attached to its
    agent, whether a notification was sent and which rule decided.

    Needs the embedded agentform service (it records each decision as it makes it).
    """
    from agentform.cli.webhook.explain import explain
    from agentform.output.routing_lines import Routing

    view = run.view(fmt)
    shown = service_of(run).shown
    answer = run.with_own(lambda own: explain(own, execution_id, shown))
    click.echo(view.show(Routing(answer)), nl=False)
    return 0


@click.command("deliveries")
@click.argument("name")
@click.option(
    "--status", type=SuggestingChoice(["pending", "delivered", "failed"]), help="Only these."
)
@click.option(
    "--since", metavar="T", help="Only those made since T: a time (with zone) or an age (2h)."
)
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100))
@workspace_options
@guarded
def deliveries_cmd(
    run: RunContext, name: str, status: str | None, since: str | None, limit: int
) -> int:
    """List the integration NAME's newest deliveries, with their attempts (time, answer,
    duration, the answer's first bytes)."""
    from agentform.cli.webhook.deliveries import list_deliveries, since_time
    from agentform.output.delivery_lines import deliveries_lines, failing_line

    if since:
        since_time(since)  # a typo is said before any call
    service_of(run)

    async def listed() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with run.api() as api, run.own() as own:
            return await list_deliveries(api, own, name, status, since, limit)

    integration, found = run.call(listed)
    notice = failing_line(integration["name"], integration.get("health"))
    for line in [*([notice] if notice else []), *deliveries_lines(integration["name"], found)]:
        click.echo(line)
    return 0


@click.command("resend")
@click.argument("delivery_id", required=False)
@click.option(
    "--failed-since", metavar="T", help="Resend every failed delivery since T (time or age)."
)
@click.option("--integration", "name", metavar="NAME", help="With --failed-since: only NAME's.")
@workspace_options
@guarded
def resend_cmd(
    run: RunContext, delivery_id: str | None, failed_since: str | None, name: str | None
) -> int:
    """Send DELIVERY_ID's event again (a new delivery, signed anew), or every failed
    delivery since a time with --failed-since."""
    from agentform.cli.webhook.deliveries import resend_failed, resend_one, since_time
    from agentform.output.delivery_lines import resent_lines

    if (delivery_id is None) == (failed_since is None):
        raise click.UsageError("give a DELIVERY_ID or --failed-since T (one of them)")
    if delivery_id is not None and name is not None:
        raise click.UsageError("--integration goes with --failed-since")
    service_of(run)
    if delivery_id is not None:
        ids = run.with_own(lambda own: resend_one(own, delivery_id), runtime=True)
        what = f"of {delivery_id}"
    else:
        since = failed_since or ""
        since_time(since, option="--failed-since")  # a typo is said before any call

        async def resent() -> tuple[str, list[str]]:
            async with run.api() as api, run.own() as own:
                return await resend_failed(api, own, name, since)

        after, ids = run.call(resent, runtime=True)
        what = f"failed since {after}" + (f" to {name}" if name else "")
    for line in resent_lines(ids, what):
        click.echo(line)
    return 0
