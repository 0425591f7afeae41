"""Benchmark: how big the service's database grows, with retention and without.

In-process, on the manual clock, with deliveries answered 204 by an in-process
receiver (an httpx MockTransport), so only the database's growth is measured:

- the database size per 10,000 deliveries (5 per execution: an agent of one step,
  one attachment taking every event), retention off;
- a month of traffic (EXECUTIONS_A_DAY executions spread over each day), its size
  at the end of each week, with retention off and with `--retain 7d` (short, so
  the month shows it flat: from the second week on, a day's history is forgotten
  as a new day's is written, and SQLite reuses the freed pages).

Sizes are the database file after a WAL checkpoint (what `ls` shows once the
service stops).

    .venv/bin/python bench/retention.py [EXECUTIONS_A_DAY]
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from agentform.service import Seed, create_app
from agentform.service.runtime import ManualClock
from agentform.service.settings import ServiceSettings

KEY = "bench-retention-key"
SEED = Seed.model_validate(
    {
        "organizations": [
            {
                "name": "bench",
                "maxConcurrentExecutions": 100000,
                "apiKeys": [{"name": "admin", "key": KEY, "role": "admin"}],
                "agents": [
                    {
                        "name": "one-step",
                        "script": {
                            "steps": [{"message": "step {{ inputs.n }}", "duration": 1}],
                            "end": {"result": {"n": "{{ inputs.n }}"}, "outcome": "success"},
                        },
                    }
                ],
            }
        ]
    }
)
PER_EXECUTION = 5  # STARTED; STEP_STARTED, MESSAGE_ADDED, STEP_PROCESSED; COMPLETED
DAY = 86400.0


class Service:
    """The service over a fresh file, its clock moved through the app's own loop."""

    def __init__(self, path: Path, retain: timedelta | None) -> None:
        receiver = httpx.MockTransport(lambda _: httpx.Response(204, stream=httpx.ByteStream(b"")))
        settings = ServiceSettings(retain=retain, webhook_transport=receiver)
        self.path = path
        self.app = create_app(path, seed=SEED, clock=ManualClock(), settings=settings)
        self.client = TestClient(self.app, headers={"X-Api-Key": KEY}).__enter__()
        base = "/agents/v2"
        self.agent = self.client.get(f"{base}/agents").json()["items"][0]["id"]
        hook = self.client.post(
            f"{base}/webhook-integrations", json={"name": "h", "url": "https://r.example/h"}
        ).json()["id"]
        self.client.put(f"{base}/agents/{self.agent}/webhooks/{hook}", json={"eventRules": ["*"]})

    def run(self, executions: int, over: float) -> None:
        """`executions` started evenly over `over` seconds of the clock, all run."""
        gap = over / executions
        for n in range(executions):
            answer = self.client.post(
                f"/agents/v2/agents/{self.agent}/execute", json={"inputs": {"n": str(n)}}
            )
            assert answer.status_code == 202, answer.text
            self.advance(gap)

    def advance(self, seconds: float) -> None:
        assert self.client.portal is not None
        self.client.portal.call(self.app.state.clock.advance, seconds)

    def size(self) -> int:
        with sqlite3.connect(self.path) as other:  # folds the WAL into the file
            other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        other.close()
        return self.path.stat().st_size

    def deliveries(self) -> int:
        with self.app.state.db.read() as conn:
            return int(conn.execute("SELECT count(*) FROM webhook_deliveries").fetchone()[0])

    def close(self) -> None:
        self.client.__exit__(None, None, None)
        self.app.state.db.close()


def per_10000(directory: Path) -> None:
    service = Service(directory / "per.db", None)
    empty = service.size()
    service.run(10_000 // PER_EXECUTION, 3600.0)
    service.advance(60)
    grown, count = service.size() - empty, service.deliveries()
    service.close()
    per = grown / count * 10_000 / 1e6
    print(f"{count} deliveries: +{grown / 1e6:.2f} MB, {per:.2f} MB per 10,000")


def month(directory: Path, a_day: int) -> None:
    sizes: dict[str, list[float]] = {}
    for label, retain in (("retention off", None), ("--retain 7d", timedelta(days=7))):
        service = Service(directory / f"{label[:3]}.db", retain)
        weekly = []
        for day in range(1, 29):
            service.run(a_day, DAY)
            if day % 7 == 0:
                weekly.append(service.size() / 1e6)
        sizes[label] = weekly
        service.close()
    print(f"a month at {a_day} executions ({a_day * PER_EXECUTION} deliveries) a day, size in MB:")
    print(f"  {'':14} {'week 1':>8} {'week 2':>8} {'week 3':>8} {'week 4':>8}")
    for label, weekly in sizes.items():
        print(f"  {label:14} " + " ".join(f"{mb:8.2f}" for mb in weekly))


def main() -> None:
    a_day = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory(prefix="agentform-retention-") as directory:
        per_10000(Path(directory))
        month(Path(directory), a_day)


if __name__ == "__main__":
    main()
