"""Mapping lines of a rendered file back to the lines of its source.

A Jinja2 loop or condition makes the rendered text longer or shorter than the
file, so a YAML position in the rendered text is not a line of the file. To map
them, the source is rendered a second time with a mark after each newline of
its plain text (never inside a `{{ }}`, `{% %}` or `{# #}` tag, and never where
whitespace control would strip that newline): every rendered line then starts
with the mark of the source line it comes from. A line made by an expression
(a value holding newlines) belongs to the line before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_STRIPPED_AFTER = re.compile(r"-(%\}|\}\}|#\})[ \t]*$")
_STRIPS_BEFORE = re.compile(r"^[ \t]*\{(%|\{|#)-")
_MARK = re.compile("\x1e([0-9]+)\x1f")


def instrument(source: str) -> str:
    """`source` with a mark of its line number after each newline of plain text."""
    tags = [m.span() for m in _TAG.finditer(source)]
    lines = source.split("\n")
    out = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        out.append(line)
        offset += len(line)
        if number == len(lines):
            break
        out.append("\n")
        inside = any(start <= offset < end for start, end in tags)
        strips = _STRIPPED_AFTER.search(line) or _STRIPS_BEFORE.match(lines[number])
        if not inside and not strips:
            out.append(f"\x1e{number + 1}\x1f")
        offset += 1
    return "".join(out)


def line_map(instrumented_output: str, plain_output: str) -> Callable[[int], int]:
    """A function from a line of `plain_output` to the source line that made it
    (identity when the two renders do not agree)."""
    if _MARK.sub("", instrumented_output) != plain_output:
        return lambda line: line
    sources: list[int] = []
    for text in instrumented_output.split("\n"):
        marks = _MARK.findall(text)
        sources.append(int(marks[0]) if marks else (sources[-1] if sources else 1))

    def source_line(line: int) -> int:
        return sources[line - 1] if 1 <= line <= len(sources) else line

    return source_line
