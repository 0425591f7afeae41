"""Seeded databases built once per test process and copied per test.

Building a service's database (the migrations, the presets, the seed) costs about
five times what copying a built one does, and most service tests start from one of
a few seeds. `seeded_app(path, seed, ...)` is `create_app(path, seed, ...)` on a copy
of a template: a database `create_app` built once, in this process, for the same
seed and the same clock start (the seed's rows carry the clock's time, so a test on
a manual clock sees exactly what a fresh build would have written). A path that
already exists (a restart) is opened as it is.

`snapshot(build)` goes one step further for a test module whose tests all start
from the same state (tests/service/test_auth.py): the state is made once, and each
test gets a copy of its database.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from agentform.service import Seed, create_app
from agentform.service.clock import Clock, ManualClock, WallClock

_TEMPLATES: dict[tuple[str, str], Path] = {}
_FOLDER: list[Path] = []


def _folder() -> Path:
    if not _FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="agentform-templates-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _FOLDER.append(folder)
    return _FOLDER[0]


def _start(clock: Clock | None) -> str:
    """What of the clock the template depends on: a manual clock's start; on the wall
    clock, nothing (the seed's times are whatever now was)."""
    return clock.now().isoformat() if isinstance(clock, ManualClock) else "wall"


def copy_database(source: Path, target: Path) -> Path:
    """`source`, a closed database (no -wal file), copied to `target` with its mode."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return target


def close(app: FastAPI) -> Path:
    """Closes the app's database, checkpointed into its one file; that file's path."""
    app.state.db.close()
    path: Path = app.state.db.path
    assert not path.with_name(path.name + "-wal").exists(), "a connection is still open"
    return path


def template(seed: Seed | None, clock: Clock | None = None) -> Path:
    """The template database of `seed` on this clock's start, built on first use."""
    key = (seed.model_dump_json() if seed is not None else "", _start(clock))
    if key not in _TEMPLATES:
        moment = ManualClock(clock.now()) if isinstance(clock, ManualClock) else WallClock()
        path = _folder() / f"template-{len(_TEMPLATES)}.db"
        _TEMPLATES[key] = close(create_app(path, seed=seed, clock=moment, runtime=False))
    return _TEMPLATES[key]


def seeded_app(path: Path, seed: Seed | None, **options: Any) -> FastAPI:
    """`create_app(path, seed=seed, **options)`, on a copy of the seed's template when
    `path` does not exist yet."""
    if not path.exists():
        copy_database(template(seed, options.get("clock")), path)
    return create_app(path, seed=seed, **options)


def snapshot(folder: Path, seed: Seed, build: Callable[[FastAPI], Any]) -> tuple[Path, Any]:
    """A state made once: `build(app)` run on a fresh app (runtime off), its database
    closed; the database's path (to copy per test) and what `build` answered."""
    app = seeded_app(folder / "snapshot.db", seed, runtime=False)
    made = build(app)
    return close(app), made
