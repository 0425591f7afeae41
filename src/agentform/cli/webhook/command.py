"""`agentform webhook verify|listen|test|explain|deliveries|resend`: tools for the
receiving end of webhooks, and for operating their deliveries."""

from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.views import format_option
from agentform.core.errors import AgentformError

if TYPE_CHECKING:
    from agentform.api.connect import Endpoint


@click.group("webhook")
def webhook() -> None:
    """Verify, receive and test webhook notifications."""


def _read_key(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentformError(f"cannot read the public key {path}: {exc}") from None


@webhook.command("verify")
@click.option(
    "--public-key",
    "public_key",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The organization's public key (PEM), as GET /webhook-signing-key serves it.",
)
@click.option(
    "--signature",
    help="The X-Service-Signature value. Without it, BODYFILE is a capture "
    "(headers, blank line, body) such as `webhook listen --save` writes.",
)
@click.argument("bodyfile", type=click.File("rb"))
@guarded
def verify_cmd(public_key: Path, signature: str | None, bodyfile: IO[bytes]) -> int:
    """Check a notification's signature against the exact bytes of BODYFILE ('-': stdin).

    Exit 0 when it verifies, 1 when it does not.
    """
    from agentform.cli.webhook.listen import read_capture
    from agentform.output.webhook_lines import verify_line
    from agentform.rules.signatures import SIGNATURE_HEADER, verify

    pem = _read_key(public_key)
    name = getattr(bodyfile, "name", "-")
    name = "stdin" if name in ("-", "<stdin>") else name
    data = bodyfile.read()
    body = data
    if signature is None:
        capture = read_capture(data)
        signature = capture[0].get(SIGNATURE_HEADER.lower()) if capture else None
        if capture is None or signature is None:
            raise AgentformError(
                f"no --signature given and {name} is not a capture with an "
                f"{SIGNATURE_HEADER} header"
            )
        body = capture[1]
    try:
        ok = verify(body, signature, pem)
    except ValueError as exc:
        raise AgentformError(f"{public_key}: {exc}") from None
    click.echo(verify_line(ok, len(body), name))
    return 0 if ok else 1


NO_SERVICE = (
    "no agentform.yaml in {where}: run this in a workspace (-C DIR) or give the service "
    "with --endpoint URL (or 'local')"
)


def _service(run: RunContext) -> Endpoint:
    """The endpoint of the workspace (with --endpoint, no workspace is needed: these
    commands manage nothing)."""
    return run.service(NO_SERVICE.format(where=run.opts.workspace_dir.resolve()))


def _check_save(save_dir: Path | None, save_unverified: bool) -> None:
    """--save names a directory that is not a symbolic link; --save-unverified needs it."""
    if save_unverified and save_dir is None:
        raise click.UsageError("--save-unverified saves into the directory --save names: give it")
    if save_dir is not None and save_dir.is_symlink():
        raise AgentformError(
            f"--save {save_dir} is a symbolic link: captures are never written through "
            "one; name the directory itself"
        )


@webhook.command("listen")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535))
@click.option("--forward-to", metavar="URL", help="Also POST each notification here, as received.")
@click.option(
    "--public-key",
    "public_key",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Verify with this PEM key instead of fetching the organization's from the service.",
)
@click.option(
    "--save",
    "save_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each verified request (headers, blank line, exact body) to a new "
    "DIR/NNNNN.http, never over a file or through a symbolic link.",
)
@click.option(
    "--save-unverified",
    is_flag=True,
    help="With --save: also save requests whose signature does not verify.",
)
@workspace_options
@guarded
def listen(
    run: RunContext,
    host: str,
    port: int,
    forward_to: str | None,
    public_key: Path | None,
    save_dir: Path | None,
    save_unverified: bool,
) -> int:
    """Receive notifications locally: verify, print one line each, optionally forward."""
    from agentform.cli.webhook.listen import Listener, bind
    from agentform.cli.webhook.listen import run as serve
    from agentform.output.webhook_lines import listening_lines
    from agentform.rules.signatures import load_public_key

    if forward_to and not forward_to.startswith(("http://", "https://")):
        from agentform.api.endpoint_url import shown_endpoint

        raise click.BadParameter(
            f"must be an http(s) URL, not {shown_endpoint(forward_to)!r}",
            param_hint="'--forward-to'",
        )
    _check_save(save_dir, save_unverified)
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise AgentformError(str(exc)) from None
    try:
        local_db = None
        if public_key is not None:
            pem, source = _read_key(public_key), str(public_key)
        else:
            endpoint = _service(run)
            key = run.with_api(lambda api: api.request("GET", "/webhook-signing-key"))
            pem, source = key["publicKeyPem"], f"signing key {key['keyId']}"
            if endpoint.url == "local":
                from agentform.service.store.database import DEFAULT_DB_PATH

                local_db = run.root / DEFAULT_DB_PATH
        try:
            load_public_key(pem)
        except ValueError as exc:
            raise AgentformError(f"{source}: {exc}") from None
        if save_dir is not None:
            save_dir.mkdir(parents=True, exist_ok=True)
        listener = Listener(pem, click.echo, forward_to, save_dir, save_unverified)
        bound = sock.getsockname()
        url = f"http://{host if ':' not in host else f'[{host}]'}:{bound[1]}/"
        for line in listening_lines(url, source, local_db, forward_to):
            click.echo(line)
    except BaseException:
        sock.close()
        raise
    serve(listener, sock)
    return 0


@webhook.command("test")
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

    _service(run)
    # On `local` the in-process service's runtime makes the attempt (and any other due work).
    outcome = run.with_api(lambda api: send_test(api, name, wait), runtime=True)
    click.echo(delivery_line(outcome.name, outcome.url, outcome.delivery))
    notice = failing_line(outcome.name, outcome.health)
    if notice:
        click.echo(notice)
    if not outcome.settled:
        click.echo(WAIT_HINT)
    return 0 if outcome.delivered else 1


@webhook.command("explain")
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
    shown = _service(run).shown
    answer = run.with_own(lambda own: explain(own, execution_id, shown))
    click.echo(view.show(Routing(answer)), nl=False)
    return 0


@webhook.command("deliveries")
@click.argument("name")
@click.option("--status", type=click.Choice(["pending", "delivered", "failed"]), help="Only these.")
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
    _service(run)

    async def listed() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with run.api() as api, run.own() as own:
            return await list_deliveries(api, own, name, status, since, limit)

    integration, found = run.call(listed)
    notice = failing_line(integration["name"], integration.get("health"))
    for line in [*([notice] if notice else []), *deliveries_lines(integration["name"], found)]:
        click.echo(line)
    return 0


@webhook.command("resend")
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
    _service(run)
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
