"""One process runs a database's due work: a second `service run` on the database is
refused before it says anything, and a holder killed with -9 leaves no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.service.runtime import exclusive

Held = tuple[Path, "subprocess.Popen[str]"]

HOLD = (
    "import sys; from pathlib import Path; from agentform.service.runtime import exclusive; "
    "exclusive.acquire(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
)


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Held]:
    """Another process holding the database's runner lock, as a running service does."""
    db = tmp_path / "service.db"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    with process:  # its pipes closed, and waited for, whatever the test did
        yield db, process
        process.kill()


def test_a_second_service_on_one_database_is_refused_before_a_word(holder: Held) -> None:
    db, process = holder
    result = CliRunner().invoke(cli, ["service", "run", "--port", "0", "--db", str(db)])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {db}: another Agent Service (pid {process.pid}) is running this "
        "database's work; stop it first, or give this one another --db\n"
    )
    assert not db.exists()  # refused before the database was created


def test_a_holder_killed_with_minus_9_leaves_the_database_free(holder: Held) -> None:
    db, process = holder
    with pytest.raises(exclusive.DatabaseInUse):
        exclusive.acquire(db)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    exclusive.acquire(db)  # the kernel let go of the dead process's lock
    exclusive.release(db)


def test_within_one_process_the_lock_is_counted_not_refused(tmp_path: Path) -> None:
    db = tmp_path / "service.db"
    exclusive.acquire(db)
    exclusive.acquire(db)  # a second app's runner on the same database, as tests start
    exclusive.release(db)
    probe = [sys.executable, "-c", HOLD, str(db)]
    still_held = subprocess.run(probe, input="", capture_output=True, text=True, timeout=60)
    assert "DatabaseInUse" in still_held.stderr  # one hold is left: still ours
    exclusive.release(db)
    free = subprocess.run(probe, input="", capture_output=True, text=True, timeout=60)
    assert free.returncode == 0 and free.stdout == "held\n"


def test_a_database_in_a_folder_not_yet_made_gets_its_folder(tmp_path: Path) -> None:
    """`service run` in a fresh directory (the default --db is .agentform/service.db)
    ended in a traceback: the lock's folder did not exist yet."""
    db = tmp_path / ".agentform" / "service.db"
    exclusive.acquire(db)
    exclusive.release(db)
    assert db.parent.is_dir()


def test_a_database_where_no_folder_can_be_made_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(
        cli, ["service", "run", "--port", "0", "--db", str(blocker / "service.db")]
    )
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {blocker / 'service.db'}: cannot ")
    assert "Traceback" not in result.output and len(result.output.splitlines()) == 1


def test_a_start_that_cannot_open_the_database_leaves_no_lock_file(tmp_path: Path) -> None:
    """`--db /etc/passwd` left `/etc/passwd.runner-lock` behind (found by a trial)."""
    not_a_database = tmp_path / "notes.txt"
    not_a_database.write_text("not a database\n" * 100)
    result = CliRunner().invoke(cli, ["service", "run", "--port", "0", "--db", str(not_a_database)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_lock_let_go_is_removed_and_a_removed_one_is_not_won(tmp_path: Path) -> None:
    db = tmp_path / "service.db"
    exclusive.acquire(db)
    assert exclusive.lock_path(db).exists()
    exclusive.release(db)
    assert not exclusive.lock_path(db).exists()
