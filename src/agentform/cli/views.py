"""Picking and building a view (text, markdown, JSON) for a workspace command."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import yaml

from agentform.cli.common import Options
from agentform.cli.conventions import FORMATS, SuggestingChoice
from agentform.config.loader import ROOT_FILE, Workspace
from agentform.core.errors import AgentformError, DiagnosticsError
from agentform.core.yamlpos import parse
from agentform.output.markdown import MarkdownView
from agentform.output.text import TextView


def format_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format",
        "fmt",
        type=SuggestingChoice(FORMATS),
        default="text",
        show_default=True,
        help="text for a terminal, markdown for a pull request or an issue, json for programs.",
    )(command)


def text_view(opts: Options, workspace: Workspace) -> TextView:
    return TextView(opts.use_color, opts.verbose)


def markdown_view(opts: Options, workspace: Workspace, saved: Path | None = None) -> MarkdownView:
    if saved is not None:
        whole = (
            f"see the saved plan `{saved.name}` (a pipeline uploads it as an artifact): "
            f"`agentform show {saved.name}`"
        )
    else:
        whole = "run `agentform plan`, or save it with `--out FILE` and run `agentform show FILE`"
    return MarkdownView(whole=whole, verbose=opts.verbose)


@contextmanager
def markdown_errors(opts: Options, fmt: str, what: str) -> Iterator[None]:
    """With --format markdown, an error is also printed as markdown on stdout, so a
    pipeline that posts the output posts the reason the run failed."""
    try:
        yield
    except AgentformError as exc:
        if fmt == "markdown":
            if isinstance(exc, DiagnosticsError):
                messages = [d.render() for d in exc.diagnostics]
            else:
                messages = [str(exc)]
            name = workspace_name(opts.workspace_dir)
            click.echo(MarkdownView().error(what, name, messages, opts.env), nl=False)
        raise


def workspace_name(root: Path) -> str:
    """The workspace's name for a marker even when the files do not load: the
    `workspace:` of agentform.yaml if it can be read, else the directory's name."""
    try:
        data = parse((root / ROOT_FILE).read_text()).data
        if isinstance(data, dict) and isinstance(data.get("workspace"), str):
            return str(data["workspace"])
    except (OSError, yaml.YAMLError):
        pass
    return root.resolve().name
