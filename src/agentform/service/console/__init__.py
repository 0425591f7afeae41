"""The console: server-rendered pages of what the embedded service knows, under
`/console` (docs/guide/console.md).

`install_console(app)` adds its routes to the service's app, unless the app's
`console` setting is `off`. Each page module has a router of its own
(`access.page_router`, whose route class is `guard.ConsoleRoute`), added
here by name; they read the stores the API reads, and say which API call gives
the same data.
"""

from __future__ import annotations

from fastapi import FastAPI

from agentform.service.clock import WallClock
from agentform.service.console import (
    access,
    assets,
    batches,
    deliveries,
    executions,
    overview,
    webhooks,
)
from agentform.service.console.access import fallback
from agentform.service.console.sessions import Sessions
from agentform.service.http.binding import CONSOLE_OFF
from agentform.service.settings import ServiceSettings


def install_console(app: FastAPI) -> None:
    settings: ServiceSettings = app.state.settings
    if settings.console == CONSOLE_OFF:
        return
    app.state.console_sessions = Sessions(app.state.db, settings.console_clock or WallClock())
    # Each router's routes on the app's own router, as the API's (app._include_routes):
    # an included router is built again for each app, on the first request walking
    # past it (7 ms of CPU: a 404 walks past every one), and matched through a level.
    for page in (access, overview, executions, deliveries, batches, webhooks, assets):
        app.router.routes.extend(page.router.routes)
    app.router.routes.extend(fallback.routes)  # last: it takes every /console path
