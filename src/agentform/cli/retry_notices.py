"""Saying on stderr that the run is waiting on the service, so that a slow or
refusing service is never silence: with -v, every retry and every pause the
service asks for, one line each; without, one line the first time the run
retries and one the first time it pauses (a flaky service must not flood the
output of a pipeline), each saying that -v shows the rest."""

from __future__ import annotations

import click

from agentform.api.notices import Notices


def _seconds(wait: float) -> str:
    return f"{wait:.1f} s" if wait < 10 else f"{wait:.0f} s"


class StderrNotices(Notices):
    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.retried = False
        self.paused = False

    def retrying(self, call: str, why: str, wait: float) -> None:
        if self.verbose:
            click.echo(f"retrying {call} in {_seconds(wait)}: {why}", err=True)
        elif not self.retried:
            click.echo(
                f"retrying failed requests ({call}: {why}); -v shows each retry",
                err=True,
            )
        self.retried = True

    def pausing(self, call: str, why: str, wait: float) -> None:
        if self.verbose:
            click.echo(
                f"waiting {_seconds(wait)}: the service asked to ({why} on {call})", err=True
            )
        elif not self.paused:
            click.echo(
                f"waiting {_seconds(wait)} for the service's rate limit ({why} on {call}); "
                "-v shows each wait",
                err=True,
            )
        self.paused = True
