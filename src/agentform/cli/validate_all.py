"""`agentform validate --all DIR...`: every workspace of a repository, validated as
`validate` validates one (problems shown with their paths from where it runs),
then checked for two workspaces owning a common name in one organization
(config/repository.py)."""

from __future__ import annotations

import dataclasses
import os
import posixpath
from pathlib import Path

import click

from agentform.cli.common import SHOWN_PROBLEMS, say_unset_and_warnings
from agentform.cli.context import RunContext
from agentform.cli.options import Options
from agentform.cli.validate_tests import TestFiles
from agentform.config.files import root_file
from agentform.config.repository import Member, find_workspaces, overlaps
from agentform.config.repository_file import REPOSITORY_FILE, find_repository
from agentform.config.settings import Settings
from agentform.core.diagnostics import Diagnostic, Position
from agentform.core.errors import AgentformError, DiagnosticsError, InvalidWorkspace
from agentform.core.words import counted
from agentform.repository.pairs import left_out, workspace_dirs


def _named(folder: Path) -> str:
    name = os.path.relpath(folder)
    return folder.as_posix() if name.startswith("..") else Path(name).as_posix()


def _rebased(diagnostic: Diagnostic, name: str) -> Diagnostic:
    """The diagnostic with its file named from where the command runs (a shared
    file, `../../common/alerts.j2` from the workspace, as `common/alerts.j2`)."""
    where = diagnostic.position or Position("")
    file = f"{name}/{where.file}" if where.file and name != "." else where.file or name
    file = posixpath.normpath(file) if file else file
    return dataclasses.replace(diagnostic, position=dataclasses.replace(where, file=file))


def _shown(name: str, environment: str | None) -> str:
    return name if environment is None else f"{name} (environment {environment})"


def _load_one(
    opts: Options, folder: Path, name: str, tests: bool
) -> tuple[list[Member], list[Diagnostic]]:
    """One workspace: each of its environments' settings for the overlap check (an
    environment may name its own organization and owns, and one with other problems
    is still checked), and the problems of each environment and of its test files
    (with `tests`), each said once."""
    here = RunContext(dataclasses.replace(opts, workspace_dir=folder))
    members: list[Member] = []
    problems: list[Diagnostic] = []
    found = root_file(folder)
    root = f"{name}/{found.name}" if found and name != "." else (found.name if found else name)
    try:
        environments: list[str | None] = [*here.environment_names()] or [None]
    except AgentformError as exc:
        return [], [Diagnostic(str(exc), Position(name))]
    test_files = TestFiles(folder)  # found once, checked in each environment
    for environment in environments:
        shown = _shown(name, environment)
        workspace = None
        try:
            workspace = here.load_environment(environment, True)
        except DiagnosticsError as exc:
            if isinstance(exc, InvalidWorkspace) and isinstance(exc.settings, Settings):
                members.append(Member(shown, root, exc.settings))
            problems += [_rebased(d, name) for d in exc.diagnostics]
        except AgentformError as exc:
            problems.append(Diagnostic(f"{shown}: {exc}", Position(name)))
            continue
        if tests:
            problems += [_rebased(d, name) for d in test_files.checked(workspace).problems]
        if workspace is not None:
            say_unset_and_warnings(workspace, prefix=f"{shown}: ")
            members.append(Member(shown, root, workspace.settings))
    return members, list(dict.fromkeys(problems))


def _workspaces(opts: Options, dirs: list[Path]) -> tuple[dict[Path, str], list[Diagnostic]]:
    """The workspaces under `dirs` (named from where it runs); without any, the
    repository's (found from -C, named from its root), else those under -C; and a
    warning for each one the repository leaves out."""
    repository = None if dirs else find_repository(opts.workspace_dir)
    if repository is None:
        dirs = dirs or [opts.workspace_dir]
        folders = find_workspaces(dirs)
        if not folders:
            raise AgentformError(
                f"no agentform.yaml under {', '.join(str(d) for d in dirs)} "
                "(hidden directories, node_modules and venv are not searched)"
            )
        return {folder: _named(folder) for folder in folders}, []
    folders = workspace_dirs(repository)
    if not folders:
        raise AgentformError(
            f"no workspace in the repository {_named(repository.root)}: no directory its "
            f"workspaces: globs ({', '.join(repository.globs)}) name holds an agentform.yaml"
        )
    warnings = [
        Diagnostic(
            "not a workspace of the repository: no glob of workspaces: in "
            f"{REPOSITORY_FILE} names it, so it is not validated, planned or applied",
            Position(
                f"{repository.name_of(folder)}/{found.name}" if (found := root_file(folder)) else ""
            ),
            "warning",
        )
        for folder in left_out(repository, folders)
    ]
    return {folder: repository.name_of(folder) for folder in folders}, warnings


def validate_all(opts: Options, dirs: list[Path], tests: bool = True) -> int:
    folders, problems = _workspaces(opts, dirs)
    members: list[Member] = []
    failing: set[str] = set()  # the workspaces with an error, to say "in 1 of 2"
    workspace_of: dict[str, str] = {}  # a root file, as an overlap is placed, -> its workspace
    for folder, name in folders.items():
        found_members, found = _load_one(opts, folder, name, tests)
        problems += found
        members += found_members
        workspace_of.update((m.root_file, name) for m in found_members)
        if any(p.severity == "error" for p in found):
            failing.add(name)
    for overlap in overlaps(members):
        problems.append(overlap)
        if overlap.position and overlap.position.file in workspace_of:
            failing.add(workspace_of[overlap.position.file])
    for problem in problems[:SHOWN_PROBLEMS]:
        click.echo(problem.render(), err=True)
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        click.echo(
            f"{counted(errors, 'problem')} in {len(failing)} of "
            f"{counted(len(folders), 'workspace')}; nothing was changed.",
            err=True,
        )
        return 1
    names = ", ".join(m.name for m in members)
    click.echo(f"Valid: {counted(len(folders), 'workspace')} ({names}), no two own a common name.")
    return 0
