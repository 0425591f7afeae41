"""Golden cases of `agentform test`: each directory under cases/ is a workspace
with its tests/ (and `args`, the command's arguments, when not the plain run),
and `expected.txt`, the command's whole output word for word (timings written
as `(… s)`, ids the service made as `<id>`) followed by its exit code. A case
runs on a copy of its directory, which must hold exactly the same files
afterwards: a run leaves nothing behind.

UPDATE_GOLDEN=1 writes expected.txt from the run (then read the diff).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli

CASES = Path(__file__).parent / "cases"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMING = re.compile(r"\(\d+\.\d\d s\)|time=\"\d+\.\d+\"|\"seconds\": \d+(\.\d+)?")


def normalised(text: str) -> str:
    text = UUID.sub("<id>", text)  # ids the service made: new in each run
    return TIMING.sub(lambda m: "(… s)" if m.group().startswith("(") else "time", text)


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_case(case: str, tmp_path: Path) -> None:
    source = CASES / case
    root = tmp_path / case
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("expected.txt", "args"))
    before = files_under(root)
    args_file = source / "args"
    args = shlex.split(args_file.read_text()) if args_file.is_file() else []
    result = CliRunner().invoke(cli, ["-C", str(root), "test", *args], catch_exceptions=False)
    got = normalised(result.output) + f"exit {result.exit_code}\n"
    expected_file = source / "expected.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(got)
    assert got == expected_file.read_text()
    assert files_under(root) == before  # no database, no report, nothing left behind
