"""The service's settings: one typed object, built once by `create_app`.

Every setting the service reads is a field here, with its default, so a
misspelt one is an error when the app is made (`extra="forbid"`), not a
setting silently ignored; the app keeps it as `app.state.settings` and the
runtime hands it to every job (`RunContext.settings`). `agentform service run`
sets the platform URL, the read timeout and the private-webhooks switch from
its options (docs/service/running.md); tests set the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Literal, Protocol, runtime_checkable

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agentform.rules.paths import API_PATH, DEFAULT_PORT

WEBHOOK_TIMEOUT_SECONDS = 10.0
"""How long one delivery attempt may take."""
TEST_WAIT_MARGIN_SECONDS = 2.0
"""`POST .../test` waits for the attempt's timeout and this margin (recording it)."""
READ_TIMEOUT_SECONDS = 30.0
"""For a request's headers, and between two parts of a body (docs/service/limits.md)."""
RETAIN = timedelta(days=30)
"""How long finished history (deliveries, routing decisions, events, executions) is
kept unless configured (`service run --retain`; docs/service/choices.md#retention)."""
TEMP_FILES_QUOTA_BYTES = 1024 * 1024 * 1024
"""The bytes of staged files one organization may keep: 1 GiB unless configured."""


@runtime_checkable
class SecondsClock(Protocol):
    """What console sessions read of a clock (service/clock.py's clocks are ones)."""

    def seconds(self) -> float: ...


class ServiceSettings(BaseModel):
    """What the service is told when it is made; frozen, every field declared."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    platform_url: str = f"http://127.0.0.1:{DEFAULT_PORT}{API_PATH}"
    """Where links in notifications and file links point (the server's own base URL)."""
    webhook_timeout_seconds: float = Field(WEBHOOK_TIMEOUT_SECONDS, gt=0)
    webhook_test_wait_seconds: float | None = Field(None, ge=0)
    """How long `POST /webhook-integrations/{id}/test` waits for its attempt;
    None: the attempt's timeout and a margin (`test_wait`)."""
    webhook_transport: httpx.AsyncBaseTransport | None = None
    """Carries webhook deliveries instead of the network (`agentform test`'s receivers)."""
    webhook_resolver: Callable[[str, int], Awaitable[list[str]]] | None = None
    """Resolves a delivery's host to the addresses checked and connected to
    (delivery/connecting.py); None: the machine's resolver. Tests inject theirs."""
    allow_private_webhooks: bool = False
    """Webhook URLs may name link-local and cloud-metadata addresses."""
    read_timeout_seconds: float = Field(READ_TIMEOUT_SECONDS, gt=0)
    temp_files_quota_bytes: int = Field(TEMP_FILES_QUOTA_BYTES, ge=0)
    retain: timedelta | None = RETAIN
    """Finished history older than this is forgotten (upkeep/retention.py); None: kept."""
    console: Literal["loopback", "any", "off"] = "loopback"
    """The web console (service/http/binding.py): for loopback clients only, for every
    client (the service is bound elsewhere), or not served."""
    console_clock: SecondsClock | None = None
    """What console sessions expire on; None: the wall clock (tests: a ManualClock)."""

    @property
    def test_wait(self) -> float:
        """Seconds a webhook test waits for its first attempt to be recorded."""
        if self.webhook_test_wait_seconds is not None:
            return self.webhook_test_wait_seconds
        return self.webhook_timeout_seconds + TEST_WAIT_MARGIN_SECONDS
