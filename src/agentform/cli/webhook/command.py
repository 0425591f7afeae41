"""`agentform webhook verify|listen|test|explain|deliveries|resend`: tools for the
receiving end of webhooks (`verify`, `listen`, here), and for operating their
deliveries (`test`, `explain`, `deliveries`, `resend`: cli/webhook/operate.py)."""

from __future__ import annotations

from pathlib import Path
from typing import IO

import click

from agentform.cli.common import guarded, workspace_options
from agentform.cli.context import RunContext
from agentform.cli.webhook.operate import (
    deliveries_cmd,
    explain_cmd,
    resend_cmd,
    service_of,
    test_cmd,
)
from agentform.core.errors import AgentformError


@click.group("webhook")
def webhook() -> None:
    """Verify, receive and test webhook notifications."""


for _command in (test_cmd, explain_cmd, deliveries_cmd, resend_cmd):
    webhook.add_command(_command)


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
            endpoint = service_of(run)
            key = run.with_api(lambda api: api.request("GET", "/webhook-signing-key"))
            pem, source = key["publicKeyPem"], f"signing key {key['keyId']}"
            if endpoint.url == "local":
                local_db = run.local_state
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
