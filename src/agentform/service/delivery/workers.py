"""The delivery workers of `agentform service run --delivery-workers N`: started with
the service, restarted when one dies, stopped with it.

Each worker is `python -m agentform.service.delivery.worker` in its own session
(a Ctrl-C reaches the service alone, which then stops them) with a pipe on its
standard input: when the service is gone, even killed with -9, the pipe closes
and the worker drains and exits, so none is left behind. A worker that dies has
its claims freed at once, and a new one takes its place (after a pause that
doubles while they keep dying soon after starting, up to `MAX_PAUSE_SECONDS`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agentform.service.clock import MANUAL_START, wall_now
from agentform.service.delivery.worker import SHARED_SETTINGS, STOP_GRACE_SECONDS
from agentform.service.settings import ServiceSettings

log = logging.getLogger("agentform.service.delivery")

CHECK_SECONDS = 0.2
"""How often the supervisor looks whether a worker has died."""
MAX_PAUSE_SECONDS = 30.0


@dataclass
class Slot:
    """One worker's place: its current process and how soon to restart it."""

    number: int
    process: subprocess.Popen[bytes] | None = None
    worker_id: str = ""
    pause: float = 0.0
    started: datetime = MANUAL_START


class WorkerPool:
    def __init__(
        self,
        count: int,
        db_path: Path,
        settings: ServiceSettings,
        release: Callable[[str], None],
        *,
        manual: bool = False,
        say: Callable[[str], None] = log.warning,
    ) -> None:
        self.slots = [Slot(n + 1) for n in range(count)]
        self.db_path = db_path
        self.settings = json.dumps(settings.model_dump(mode="json", include=set(SHARED_SETTINGS)))
        self.release = release  # frees a dead worker's claims
        self.manual = manual
        self.say = say
        self._stopping = threading.Event()
        self._monitor: threading.Thread | None = None

    @property
    def pids(self) -> list[int]:
        return [s.process.pid for s in self.slots if s.process and s.process.poll() is None]

    @property
    def shown_pids(self) -> str:
        return " ".join(map(str, self.pids))

    def start(self) -> None:
        for slot in self.slots:
            self._spawn(slot)
        self._monitor = threading.Thread(target=self._supervise, name="delivery-workers")
        self._monitor.daemon = True
        self._monitor.start()

    def _spawn(self, slot: Slot) -> None:
        slot.worker_id = f"{slot.number}-{uuid.uuid4().hex[:8]}"
        command = [sys.executable, "-m", "agentform.service.delivery.worker"]
        command += ["--db", str(self.db_path), "--id", slot.worker_id]
        command += ["--clock", "manual" if self.manual else "wall", "--settings", self.settings]
        slot.process = subprocess.Popen(command, stdin=subprocess.PIPE, start_new_session=True)
        slot.started = wall_now()

    def _supervise(self) -> None:
        while not self._stopping.wait(CHECK_SECONDS):
            for slot in self.slots:
                if slot.process is not None and slot.process.poll() is not None:
                    self._replace(slot)

    def _replace(self, slot: Slot) -> None:
        assert slot.process is not None
        code = slot.process.returncode
        self._close(slot)
        with contextlib.suppress(Exception):  # a busy database: its leases run out anyway
            self.release(slot.worker_id)
        if (wall_now() - slot.started).total_seconds() > MAX_PAUSE_SECONDS:
            slot.pause = 0.0  # it had been running a while: not a worker that cannot start
        if self._stopping.wait(slot.pause):
            return
        slot.pause = min(MAX_PAUSE_SECONDS, max(0.5, slot.pause * 2))
        self._spawn(slot)
        assert slot.process is not None
        self.say(
            f"delivery worker {slot.number} exited (code {code}); "
            f"started another (pid {slot.process.pid})"
        )

    def _close(self, slot: Slot) -> None:
        if slot.process is not None and slot.process.stdin is not None:
            with contextlib.suppress(OSError):
                slot.process.stdin.close()

    def terminate(self) -> None:
        """Tells every worker to stop (SIGTERM), without waiting; none is restarted."""
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join()
        for slot in self.slots:
            if slot.process is not None and slot.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    slot.process.terminate()

    def stop(self) -> None:
        """Tells every worker to stop, waits for them, kills those that do not exit."""
        self.terminate()
        running = [s for s in self.slots if s.process is not None]
        for slot in running:
            assert slot.process is not None
            try:  # its pipe stays open meanwhile: closed, it would drain (worker.py)
                slot.process.wait(STOP_GRACE_SECONDS + 10)
            except subprocess.TimeoutExpired:
                slot.process.kill()
                slot.process.wait()
            self._close(slot)
            with contextlib.suppress(Exception):
                self.release(slot.worker_id)
