"""What a job handler is handed in every phase: the clock, the database, the
service's settings and the resources shared by the runner's jobs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from agentform.service.clock import Clock
from agentform.service.settings import ServiceSettings
from agentform.service.store.database import Database

log = logging.getLogger("agentform.service.runtime")
T = TypeVar("T")


class RunContext:
    """What every handler is handed: the clock, the database, settings, shared resources."""

    def __init__(self, clock: Clock, db: Database, settings: ServiceSettings) -> None:
        self.clock = clock
        self.db = db
        self.settings = settings
        self._resources: dict[str, Any] = {}

    def resource(self, name: str, factory: Callable[[], T]) -> T:
        """One object per runner (an HTTP client, say), made on first use; closed at stop
        (`aclose()` or `close()`, when it has one)."""
        if name not in self._resources:
            self._resources[name] = factory()
        return cast(T, self._resources[name])

    async def aclose(self) -> None:
        resources, self._resources = list(self._resources.values()), {}
        for resource in reversed(resources):
            try:
                if hasattr(resource, "aclose"):
                    await resource.aclose()
                elif hasattr(resource, "close"):
                    resource.close()
            except Exception:
                log.exception("closing a runtime resource failed")
