"""The runner's group commit (service/runtime/grouped.py): steps queued together
share one write transaction, and a step that raises undoes only itself."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentform.service.runtime.grouped import GroupCommit
from agentform.service.store.database import Conn, Database


def test_steps_share_transactions_and_a_failing_one_undoes_only_itself(tmp_path: Path) -> None:
    db = Database(tmp_path / "g.db")
    with db.write() as conn:
        conn.execute("CREATE TABLE marks (n INTEGER)")
    transactions: list[int] = []

    async def in_thread(fn: Any, *args: Any) -> Any:
        transactions.append(len(args[1]))
        return await asyncio.to_thread(fn, *args)

    def mark(n: int) -> Any:
        def step(conn: Conn) -> int:
            conn.execute("INSERT INTO marks VALUES (?)", (n,))
            if n == 3:
                raise ValueError("step 3 fails")
            return n

        return step

    async def go() -> list[Any]:
        grouped = GroupCommit(db, in_thread)
        return await asyncio.gather(
            *(grouped.run(mark(n)) for n in range(6)), return_exceptions=True
        )

    results = asyncio.run(go())
    with db.read() as conn:
        kept = sorted(r[0] for r in conn.execute("SELECT n FROM marks"))
    db.close()
    assert results[:3] == [0, 1, 2]
    assert results[4:] == [4, 5]
    assert isinstance(results[3], ValueError)
    assert kept == [0, 1, 2, 4, 5]
    assert sum(transactions) == 6
    assert len(transactions) <= 2  # the first step alone, then the rest together


def test_a_transaction_that_cannot_be_made_fails_every_step_in_it(tmp_path: Path) -> None:
    db = Database(tmp_path / "g.db")

    async def broken(fn: Any, *args: Any) -> Any:
        raise OSError("disk gone")

    async def go() -> None:
        grouped = GroupCommit(db, broken)
        await grouped.run(lambda conn: 1)

    with pytest.raises(OSError, match="disk gone"):
        asyncio.run(go())
    db.close()


def test_a_group_commit_closes_on_a_later_loop_than_its_last_commit(tmp_path: Path) -> None:
    """An app's runner stops and starts again with each lifespan (a test's second
    TestClient): closing must not wait on the last loop's finished committer."""
    db = Database(tmp_path / "g.db")

    async def in_thread(fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    grouped = GroupCommit(db, in_thread)

    async def commit_and_close() -> None:
        await grouped.run(lambda conn: conn.execute("SELECT 1").fetchone())
        await grouped.aclose()

    asyncio.run(commit_and_close())
    asyncio.run(grouped.aclose())  # another loop, nothing committed on it
    db.close()
