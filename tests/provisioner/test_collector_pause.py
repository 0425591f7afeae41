"""Bulk work runs with Python's cyclic collector paused (it makes hundreds of
thousands of objects and no garbage cycles; the collector would rescan them over
and over), and the collector is back on afterwards, whatever happened."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest

from agentform.config.loader import load_workspace
from agentform.core.errors import ReadError
from agentform.engine.live import read_live
from tests.provisioner.harness import write_workspace


class RecordingApi:
    """Answers /context and empty lists; notes whether the collector ran during each."""

    def __init__(self, fail: bool = False) -> None:
        self.collector_on: list[bool] = []
        self.fail = fail

    async def request(self, method: str, path: str, **_: Any) -> Any:
        self.collector_on.append(gc.isenabled())
        return {"organizationId": "o", "organizationName": "o"}

    async def list_all(self, path: str, params: Any = None) -> list[Any]:
        self.collector_on.append(gc.isenabled())
        await asyncio.sleep(0)
        if self.fail:
            raise ReadError("the list changed")
        return []

    async def list_and_read(self, path: str, wanted: Any, read: Any) -> Any:
        return await self.list_all(path), {}


@pytest.mark.parametrize("fail", [False, True])
def test_live_state_is_read_with_the_collector_paused(tmp_path: Path, fail: bool) -> None:
    write_workspace(tmp_path, {"agentform.yaml": "workspace: w\n"})
    workspace = load_workspace(tmp_path)
    api = RecordingApi(fail)
    assert gc.isenabled()
    if fail:
        with pytest.raises(ReadError):
            asyncio.run(read_live(workspace, api))
    else:
        asyncio.run(read_live(workspace, api))
    assert api.collector_on and not any(api.collector_on)
    assert gc.isenabled()
