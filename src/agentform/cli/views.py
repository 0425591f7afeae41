"""Picking and building the view of a --format (text, markdown, JSON) for a command:
the only place that reads the format's name (RunContext.view calls it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import yaml

from agentform.cli.conventions import FORMATS, SuggestingChoice
from agentform.cli.options import Options
from agentform.config.settings import ROOT_FILE
from agentform.core.yamlpos import parse
from agentform.output.view import DocumentsOnly, View


def format_option(
    formats: tuple[str, ...] = FORMATS, what: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--format, one of `formats` (the views the command's documents have)."""
    uses = {
        "text": "text for a terminal",
        "markdown": "markdown for a pull request or an issue",
        "junit": "junit for CI test reports",
        "json": "json for programs",
    }
    return click.option(
        "--format",
        "fmt",
        type=SuggestingChoice(formats),
        default="text",
        show_default=True,
        help=what or ", ".join(uses[f] for f in formats) + ".",
    )


def view_of(
    opts: Options, fmt: str, saved: Path | None = None, limit: bool = True, whole: str = ""
) -> View:
    """The view of a --format: colour and -v as the options say; a markdown document
    cut at GitHub's comment size says where the whole of it is (`whole`; `saved`:
    the plan file that holds it)."""
    if fmt not in FORMATS:  # a command's own format (junit, github-matrix)
        return DocumentsOnly(fmt)
    if fmt == "json":
        from agentform.output.json_view import JsonView

        return JsonView()
    if fmt == "markdown":
        from agentform.output.markdown import MarkdownView
        from agentform.output.markdown_document import GITHUB_LIMIT

        if saved is not None and not whole:
            whole = (
                f"see the saved plan `{saved.name}` (a pipeline uploads it as an artifact): "
                f"`agentform show {saved.name}`"
            )
        elif not whole:
            whole = (
                "run `agentform plan`, or save it with `--out FILE` and run `agentform show FILE`"
            )
        return MarkdownView(
            limit=GITHUB_LIMIT if limit else None, whole=whole, verbose=opts.verbose
        )
    from agentform.output.text import TextView

    return TextView(opts.use_color, opts.verbose)


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
