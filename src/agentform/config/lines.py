"""Mapping lines of a rendered file back to the files and lines they came from,
and a failed render to the file and line where it failed.

A Jinja2 loop or condition makes the rendered text longer or shorter than the
file, and `{% include %}` brings in the lines of another file, so a YAML position
in the rendered text is not a line of the file. Jinja2 keeps no source map, so
one is made: the file, and every file it includes, is rendered a second time with
a mark at the start of each line of its plain text (never inside a `{{ }}`,
`{% %}` or `{# #}` tag, and never where whitespace control would strip the
newline before it). A mark names the file (by its index among the files marked)
and the line. A rendered line comes from the last mark on it (an included file's
first line follows its include tag on the including line); a line with no mark
(made by an expression, a value holding newlines) from the mark before it.

Limits: a line built by a macro of an imported file comes from the line that
calls the macro's text, wherever that is; a value computed from an included
file's variables is placed where it is written out, not where it was set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import TracebackType

import jinja2

_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_STRIPPED_AFTER = re.compile(r"-(%\}|\}\}|#\})[ \t]*$")
_STRIPS_BEFORE = re.compile(r"^[ \t]*\{(%|\{|#)-")
_MARK = re.compile("\x1e([0-9]+)\\.([0-9]+)\x1f")

SourceLine = tuple[str, int]  # a file's name and a line of it


def _mark(file: int, line: int) -> str:
    return f"\x1e{file}.{line}\x1f"


def instrument(source: str, file: int = 0) -> str:
    """`source` with a mark of file `file`'s line number at the start of each line
    of plain text."""
    tags = [m.span() for m in _TAG.finditer(source)]
    lines = source.split("\n")
    out = [] if _STRIPS_BEFORE.match(lines[0]) else [_mark(file, 1)]
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
            out.append(_mark(file, number + 1))
        offset += 1
    return "".join(out)


def line_map(
    instrumented_output: str, plain_output: str, files: list[str]
) -> Callable[[int], SourceLine]:
    """A function from a line of `plain_output` to the file (of `files`, by the
    marks' indexes) and line that made it; the first file's same line when the two
    renders do not agree."""
    if _MARK.sub("", instrumented_output) != plain_output:
        return lambda line: (files[0], line)
    sources: list[SourceLine] = []
    current: SourceLine = (files[0], 1)
    for text in instrumented_output.split("\n"):
        marks = _MARK.findall(text)
        if marks:
            file, line = marks[-1]
            current = (files[int(file)], int(line))
        sources.append(current)

    def source_line(line: int) -> SourceLine:
        return sources[line - 1] if 1 <= line <= len(sources) else (files[0], line)

    return source_line


def template_place(exc: BaseException, names: Mapping[str, str]) -> tuple[str, int] | None:
    """The workspace file and line where rendering failed: the innermost template of
    the traceback (Jinja2 rewrites its frames to template lines), so an error in an
    included file is at that file's line."""
    if isinstance(exc, jinja2.TemplateSyntaxError) and exc.filename in names:
        return names[str(exc.filename)], exc.lineno or 0
    place = None
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        name = names.get(tb.tb_frame.f_code.co_filename)
        if name is not None:
            place = (name, tb.tb_lineno)
        tb = tb.tb_next
    return place
