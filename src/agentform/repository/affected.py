"""`agentform affected`: the pairs whose outcome may differ between a base commit and
the working tree, and why.

A pair is affected when its rendered desired state, its settings or its tests
(and their seeds) differ, or when it is new or deleted; each pair is compared as
snapshot.py renders it, never by file globs. A pair none of whose inputs changed
(the files it read, every file under its workspace directory, the repository
file) is not loaded at the base: it renders the same. A pair that does not load
on one side cannot be compared: it is affected, with the reason.

Every reason starts with one of REASON_WORDS, so a program can tell a pair that
only needs testing (every reason `tests only:`) from one to plan.
"""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentform.config.files import ROOT_NAMES
from agentform.config.repository_file import REPOSITORY_FILE, Repository, read_repository
from agentform.core.cpus import usable_cpus
from agentform.core.errors import DiagnosticsError
from agentform.repository.pairs import Pair, pairs_of
from agentform.repository.snapshot import Snapshot, snapshot

MAX_REASONS = 50  # per pair: past it, a count
PARALLEL_FROM = 16  # pairs to compare: from this many, one process per core
REASON_WORDS = ("new:", "deleted:", "cannot compare:", "settings:", "objects:", "tests only:")
KEPT_LIVE = "(its objects stay until they are deleted by hand or another workspace owns them)"


@dataclass(frozen=True)
class Affected:
    pair: Pair
    reasons: tuple[str, ...]

    @property
    def tests_only(self) -> bool:
        return all(r.startswith("tests only:") for r in self.reasons)

    @property
    def deleted(self) -> bool:
        """Gone since the base: nothing to test, plan or apply (it deletes nothing)."""
        return any(r.startswith("deleted:") for r in self.reasons)

    def as_json(self) -> dict[str, Any]:
        return {**self.pair.as_json(), "reasons": list(self.reasons)}


class ChangedFiles:
    """Which files (named from the root) differ between the two trees, each read once."""

    def __init__(self, work: Path, base: Path) -> None:
        self.work, self.base = work, base
        self.known: dict[str, bool] = {}

    def differs(self, name: str) -> bool:
        if name not in self.known:
            self.known[name] = _bytes(self.work / name) != _bytes(self.base / name)
        return self.known[name]

    def under(self, folder: str) -> list[str]:
        """The files under `folder` (hidden ones aside) that differ or exist on one side."""
        names: set[str] = set()
        for top in (self.work, self.base):
            start = top / folder
            if start.is_dir():
                names |= {
                    p.relative_to(top).as_posix()
                    for p in start.rglob("*")
                    if not any(part.startswith(".") for part in p.relative_to(start).parts)
                    and (p.is_file() or not p.exists())
                }
        return sorted(n for n in names if self.differs(n))


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def affected(work: Repository, base_root: Path | None) -> list[Affected]:
    """The affected pairs, sorted. `base_root`: the repository's directory at the base
    commit (None when it did not exist then)."""
    base: Repository | None = None
    if base_root is not None and (base_root / REPOSITORY_FILE).is_file():
        try:
            base = read_repository(base_root)
        except DiagnosticsError as exc:
            why = f"cannot compare: {REPOSITORY_FILE} at the base: {exc.diagnostics[0].summary}"
            return [Affected(pair, (why,)) for pair in pairs_of(work)]
    mine = pairs_of(work)
    theirs = pairs_of(base) if base is not None else []
    out = [Affected(pair, (_new(pair, theirs),)) for pair in mine if pair not in theirs]
    out += [Affected(pair, (_deleted(pair, mine, work),)) for pair in theirs if pair not in mine]
    if base is not None:
        both = [pair for pair in mine if pair in theirs]
        out += [Affected(p, reasons) for p, reasons in _compare_all(work, base, both) if reasons]
    return sorted(out, key=lambda a: (a.pair.workspace, a.pair.environment or ""))


Compared = list[tuple[Pair, tuple[str, ...]]]


def _compare_some(work: Repository, base: Repository, pairs: list[Pair]) -> Compared:
    changed = ChangedFiles(work.root, base.root)
    return [(pair, _compared(work, base, pair, changed)) for pair in pairs]


def _compare_all(work: Repository, base: Repository, pairs: list[Pair]) -> Compared:
    """Each pair compared; over PARALLEL_FROM pairs, in one forked process per core
    (each pair is loaded apart from the others: rendering is CPU-bound Python)."""
    workers = min(usable_cpus(), 8)
    if len(pairs) < PARALLEL_FROM or workers < 2 or "fork" not in mp.get_all_start_methods():
        return _compare_some(work, base, pairs)
    shares = [pairs[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        done = pool.map(_compare_some, [work] * workers, [base] * workers, shares)
        return [found for share in done for found in share]


def _new(pair: Pair, theirs: list[Pair]) -> str:
    if any(p.workspace == pair.workspace for p in theirs):
        return "new: an environment new at this commit (its plan creates what it declares)"
    return "new: a workspace new at this commit (its plan creates what it declares)"


def _deleted(pair: Pair, mine: list[Pair], work: Repository) -> str:
    """Why a pair of the base is gone: its environment, the globs or its files."""
    if any(p.workspace == pair.workspace for p in mine):
        why, what = "the workspace no longer declares this environment", "an environment"
    elif any((work.root / pair.workspace / name).is_file() for name in ROOT_NAMES):
        why = (
            "no longer a workspace of the repository: no glob of workspaces: in "
            f"{REPOSITORY_FILE} names it"
        )
        what = "a workspace"
    else:
        why, what = "its files are gone at this commit", "a workspace"
    return f"deleted: {why}; deleting {what} deletes nothing live {KEPT_LIVE}"


def _compared(
    work: Repository, base: Repository, pair: Pair, changed: ChangedFiles
) -> tuple[str, ...]:
    now = snapshot(work, pair)
    read_changed = sorted(name for name in now.inputs if changed.differs(name))
    if (
        now.problem is None
        and not read_changed
        and not changed.under(pair.workspace)
        and not changed.differs(REPOSITORY_FILE)
    ):
        return ()  # nothing it reads changed: it renders the same
    then = snapshot(base, pair)
    if now.problem or then.problem:
        if now.problem == then.problem:
            return (f"cannot compare: it does not load, here or at the base: {now.problem}",)
        side = f"here: {now.problem}" if now.problem else f"at the base: {then.problem}"
        return (f"cannot compare: it does not load {side}",)
    causes = sorted({*read_changed, *changed.under(pair.workspace)})
    causes += [REPOSITORY_FILE] if changed.differs(REPOSITORY_FILE) else []
    reasons = [*_settings(now, then, causes), *_objects(now, then, causes, changed)]
    tests = sorted(n for n in {*now.tests, *then.tests} if now.tests.get(n) != then.tests.get(n))
    if tests:
        word = "tests only:" if not reasons else "tests:"
        reasons.append(f"{word} {', '.join(tests)} changed")
    if len(reasons) > MAX_REASONS:
        reasons[MAX_REASONS:] = [f"objects: and {len(reasons) - MAX_REASONS} more differences"]
    return tuple(reasons)


def _settings(now: Snapshot, then: Snapshot, causes: list[str]) -> list[str]:
    names = [k for k in now.settings if now.settings[k] != then.settings.get(k)]
    if not names:
        return []
    files = [c for c in causes if c.endswith(("agentform.yaml", "agentform.yml"))]
    files += [REPOSITORY_FILE] if REPOSITORY_FILE in causes else []
    return [f"settings: {', '.join(names)} ({', '.join(files or causes[:3])})"]


def _objects(now: Snapshot, then: Snapshot, causes: list[str], changed: ChangedFiles) -> list[str]:
    out = []
    for address in [*now.objects, *(a for a in then.objects if a not in now.objects)]:
        mine, theirs = now.objects.get(address), then.objects.get(address)
        if mine == theirs:
            continue
        if theirs is None:
            out.append(f"objects: {address} declared ({_why(now.where(address), causes, changed)})")
        elif mine is None:
            out.append(f"objects: {address} no longer declared (was at {then.where(address)})")
        else:
            names = [n for n in {**theirs, **mine} if mine.get(n) != theirs.get(n)]
            where = now.where(address, names[0]) if names[0] in mine else now.where(address)
            out.append(f"objects: {address} {', '.join(names)} ({_why(where, causes, changed)})")
    return out


def _why(where: str, causes: list[str], changed: ChangedFiles) -> str:
    """Where the value is written, and, when that file did not change, the changed
    files it read (a var file, a macro, an itemsFile) that made it differ."""
    file = where.rsplit(":", 1)[0] if where.rsplit(":", 1)[-1].isdigit() else where
    if changed.differs(file):
        return where
    others = [c for c in causes if c != file]
    listed = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
    return f"{where}, from {listed}" if others else where
