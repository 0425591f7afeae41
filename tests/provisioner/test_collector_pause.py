"""Bulk work runs with Python's cyclic collector paused (it makes hundreds of
thousands of objects and no garbage cycles; the collector would rescan them over
and over), and the collector is back on afterwards, whatever happened. What the
live read and the diff keep is frozen out of later collections when they succeed
(the first ones would scan all of it again), and only then."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

import pytest

from agentform.config.loader import load_workspace
from agentform.core.errors import ReadError
from agentform.core.gcpause import collector_paused
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
    gc.unfreeze()
    if fail:
        with pytest.raises(ReadError):
            asyncio.run(read_live(workspace, api))
    else:
        live = asyncio.run(read_live(workspace, api))
        assert not scanned(live.objects, live.references)  # what the run keeps
    assert api.collector_on and not any(api.collector_on)
    assert gc.isenabled()
    assert (gc.get_freeze_count() > 0) is not fail  # a failed read is not frozen


def test_a_load_freezes_nothing(tmp_path: Path) -> None:
    """The templates' environment a load leaves is a cycle the size of the files: it
    is left to the collector, not kept for the life of the process."""
    write_workspace(tmp_path, {"agentform.yaml": "workspace: w\n", "pools.yaml": POOLS})
    gc.unfreeze()
    workspace = load_workspace(tmp_path)
    assert len(workspace.declared["profilePools"]) == 50
    assert gc.get_freeze_count() == 0


POOLS = "profilePools:\n" + "".join(f"  - {{name: p{n}, members: [a]}}\n" for n in range(50))


def scanned(*kept: object) -> list[object]:
    """Those of `kept` a later collection would scan (in one of its generations)."""
    ids = {id(o) for o in gc.get_objects()}
    return [o for o in kept if id(o) in ids]


def test_what_kept_work_made_is_left_out_of_later_collections() -> None:
    gc.unfreeze()
    with collector_paused(keep=True):
        kept = [[n] for n in range(1000)]
    assert gc.isenabled()
    assert not scanned(*kept) and all(gc.is_tracked(k) for k in kept)
    assert gc.get_freeze_count() >= 1000


def test_work_not_kept_failed_or_inside_other_work_is_not_frozen() -> None:
    gc.unfreeze()
    with collector_paused():
        plain = [[n] for n in range(100)]
    with pytest.raises(ValueError), collector_paused(keep=True):
        failed = [[n] for n in range(100)]
        raise ValueError("stop")
    with collector_paused():
        with collector_paused(keep=True):
            inner = [[n] for n in range(100)]
        assert not gc.isenabled()  # the outer block's pause holds
        assert len(scanned(*inner)) == 100
    assert gc.isenabled()
    assert len(scanned(*plain, *failed, *inner)) == 300
    assert gc.get_freeze_count() == 0
