"""The pieces of GitHub-flavoured markdown the markdown views are made of: the
marker a pipeline finds its comment by, the title, code spans that hold any text,
table cells and tables of counts, alerts, fences and HTML-escaped text."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import quote

SHOWN_CHARS = 500  # of a line of a violation


def short(line: str) -> str:
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


def marker(what: str, workspace: str, environment: str | None = None) -> str:
    """`<!-- agentform:plan workspace=NAME -->` (and ` environment=NAME` when there is
    one): what a pipeline searches its comments for."""
    env = f" environment={quote(environment, safe='._-')}" if environment else ""
    return f"<!-- agentform:{what} workspace={quote(workspace, safe='._-')}{env} -->"


def title(what: str, workspace: str, environment: str | None = None) -> str:
    """`### agentform plan: workspace `shop`, environment `prod``."""
    env = f", environment {code(environment)}" if environment else ""
    return f"### agentform {what}: workspace {code(workspace)}{env}"


def code(text: str) -> str:
    """An inline code span that holds any text (backticks included)."""
    text = text.replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cell(text: str) -> str:
    """Text for a table cell: GitHub ends a cell at any `|`, even one inside a code
    span, unless it is escaped."""
    return text.replace("|", "\\|")


def table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---", *["---:"] * (len(header) - 1)]) + "|",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def count_table(
    pairs: Iterable[tuple[str, str]], columns: list[str], headers: list[str]
) -> list[str]:
    """A table of how many (kind, column) pairs there are, a row per kind in order
    of first appearance; nothing when there are none."""
    counted = Counter(pairs)
    kinds = list(dict.fromkeys(kind for kind, _ in counted))
    if not kinds:
        return []
    rows = [[code(k), *(str(counted[(k, c)]) for c in columns)] for k in kinds]
    return [*table(["kind", *headers], rows), ""]


def alerts(kind: str, messages: list[str]) -> list[str]:
    if not messages:
        return []
    lines = [f"> [!{kind}]"]
    lines += [f"> - {m}" for m in messages]
    return [*lines, ""]


def fence_for(texts: list[str]) -> str:
    longest = max((len(m) for text in texts for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
