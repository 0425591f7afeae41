"""Jinja2 rendering of workspace files (strict undefined).

Templates see `vars`, `workspace`, `env('NAME')` and `secret('NAME')`. A missing
environment variable does not stop rendering: it is recorded with its line so
every problem of every file is reported at once. Values that came through
`secret()` are remembered, so they can be scrubbed from anything shown or saved.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2

from .diagnostics import Diagnostics, Position, relative

_NEWLINES = re.compile(r"\r\n|\r|\n")  # what Jinja2 turns into "\n"


class Secrets:
    """The sensitive values of a run; `scrub` hides them in any text."""

    MASK = "(sensitive)"

    def __init__(self) -> None:
        self.values: dict[str, str] = {}  # NAME -> value

    def add(self, name: str, value: str) -> None:
        self.values[name] = value

    def is_sensitive(self, text: str) -> bool:
        return any(v and v in text for v in self.values.values())

    def scrub(self, text: str) -> str:
        for value in sorted(self.values.values(), key=len, reverse=True):
            if value:
                text = text.replace(value, self.MASK)
        return text


class Renderer:
    def __init__(self, root: Path, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.environ = os.environ if environ is None else environ
        self.secrets = Secrets()
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(root)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
        )
        env = self.env
        self.markers = (env.variable_start_string, env.block_start_string, env.comment_start_string)

    def render(
        self,
        path: Path,
        variables: Mapping[str, Any],
        workspace: str | None,
        diagnostics: Diagnostics,
    ) -> str | None:
        """The rendered text of `path`, or None when it could not be rendered."""
        name = relative(path, self.root)
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            diagnostics.error(
                f"not UTF-8 text (byte {exc.start}): workspace files are UTF-8", Position(name)
            )
            return None
        if not any(mark in source for mark in self.markers):
            # Nothing to render: the text as Jinja2 would give it back, without the cost of
            # compiling a template (a large plain file takes longer to compile than to parse).
            return _NEWLINES.sub("\n", source) if "\r" in source else source
        try:
            template = self.env.get_template(Path(name).as_posix())
        except jinja2.TemplateSyntaxError as exc:
            diagnostics.error(f"template error: {exc.message}", Position(name, exc.lineno or 0, 1))
            return None
        filename = template.filename or ""

        def line_here() -> Position:
            frame = sys._getframe(2)
            while frame is not None:
                if frame.f_code.co_filename == filename:
                    return Position(name, template.get_corresponding_lineno(frame.f_lineno), 1)
                frame = frame.f_back  # type: ignore[assignment]
            return Position(name)

        def env(var: str, default: str | None = None) -> str:
            value = self.environ.get(var, default)
            if value is None:
                diagnostics.error(f"environment variable {var} is not set", line_here())
                return ""
            return value

        def secret(var: str) -> str:
            value = self.environ.get(var)
            if value is None:
                diagnostics.error(f"secret {var}: environment variable is not set", line_here())
                return ""
            self.secrets.add(var, value)
            return value

        context = {"vars": dict(variables), "env": env, "secret": secret}
        if workspace is not None:
            context["workspace"] = workspace
        try:
            return template.render(context)
        except jinja2.TemplateError as exc:
            line = _template_line(exc.__traceback__, filename)
            message = self.secrets.scrub(getattr(exc, "message", None) or str(exc))
            diagnostics.error(f"template error: {message}", Position(name, line, 1))
            return None


def _template_line(tb: TracebackType | None, filename: str) -> int:
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
