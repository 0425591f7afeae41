"""Jinja2 rendering of workspace files (strict undefined).

Templates see `vars`, `workspace`, `env_name` (the chosen environment's name,
when agentform.yaml declares environments), `env('NAME')` and `secret('NAME')`. A
missing environment variable or an undefined variable does not stop rendering:
each is recorded with its line, so every problem of every file is reported at
once. `secret()` renders an opaque token, never the value (secret_tokens.py).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2

from agentform.config.lines import instrument, line_map
from agentform.config.sandbox import (
    NotAllowed,
    SecretToken,
    WorkspaceSandbox,
    credential_refusal,
    env_refusal,
    render_bounded,
)
from agentform.config.secret_tokens import SecretTokens
from agentform.core.bounds import too_large
from agentform.core.diagnostics import Diagnostics, Position, relative
from agentform.core.secrets import Secrets

_NEWLINES = re.compile(r"\r\n|\r|\n")  # what Jinja2 turns into "\n"
__all__ = ["Rendered", "Renderer", "Secrets"]

_on_undefined: ContextVar[Callable[[str], None] | None] = ContextVar("on_undefined", default=None)


class _RecordingUndefined(jinja2.StrictUndefined):
    """Strict, but a use is recorded and rendering goes on, so every undefined
    name of a file is reported, not only the first."""

    def _record(self) -> None:
        record = _on_undefined.get()
        if record is None:
            self._fail_with_undefined_error()
        else:
            record(self._undefined_message)

    def _fail_or_self(self, *args: Any, **kwargs: Any) -> Any:
        if _on_undefined.get() is None:
            return self._fail_with_undefined_error()
        self._record()
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail_or_self
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = _fail_or_self
    __mod__ = __rmod__ = __pos__ = __neg__ = __call__ = __getitem__ = _fail_or_self
    __lt__ = __le__ = __gt__ = __ge__ = __pow__ = __rpow__ = _fail_or_self

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return self._fail_or_self()

    def __str__(self) -> str:  # type: ignore[override]
        self._record()
        return ""

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        self._record()
        return iter(())

    def __len__(self) -> int:  # type: ignore[override]
        self._record()
        return 0

    def __bool__(self) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __eq__(self, other: object) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __ne__(self, other: object) -> bool:  # type: ignore[override]
        self._record()
        return True

    def __contains__(self, item: object) -> bool:  # type: ignore[override]
        self._record()
        return False

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)


@dataclass
class Rendered:
    text: str  # secrets as tokens
    source_line: Callable[[int], int]  # a line of `text` -> the line of the file


class Renderer:
    def __init__(
        self,
        root: Path,
        environ: Mapping[str, str] | None = None,
        secrets: Secrets | None = None,
        unset_secrets_allowed: bool = False,
        allowed_env: Collection[str] = (),
        key_variables: Collection[str] = (),
    ) -> None:
        self.root = root
        self.allowed_env = frozenset(allowed_env)  # allowEnv of agentform.yaml
        self.key_variables = frozenset(key_variables)  # apiKeyEnv of each environment
        self.env_name: str | None = None  # the chosen environment's, seen as env_name
        self.environ = os.environ if environ is None else environ
        self.secrets = secrets if secrets is not None else Secrets()
        self.tokens = SecretTokens(self.secrets)
        self.unset_secrets_allowed = unset_secrets_allowed  # export: a placeholder is enough
        self.env = WorkspaceSandbox(root, _RecordingUndefined)
        env = self.env
        self.markers = (env.variable_start_string, env.block_start_string, env.comment_start_string)

    def render(
        self,
        path: Path,
        variables: Mapping[str, Any],
        workspace: str | None,
        diagnostics: Diagnostics,
    ) -> Rendered | None:
        """The rendered text of `path`, or None when it could not be rendered."""
        name = relative(path, self.root)
        if why := too_large(path):
            diagnostics.error(why, Position(name))
            return None
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
            text = _NEWLINES.sub("\n", source) if "\r" in source else source
            return Rendered(text, lambda line: line)
        try:
            template = self.env.get_template(Path(name).as_posix())
        except jinja2.TemplateSyntaxError as exc:
            message = self.tokens.replace(exc.message or str(exc), "source")
            diagnostics.error(f"template error: {message}", Position(name, exc.lineno or 0, 1))
            return None
        rendering = _FileRendering(self, name, template, source, diagnostics)
        return rendering.rendered(variables, workspace)

    def _mistyped(self, var: str) -> str:
        """A hint naming a set variable close to `var` (names are not secret; values
        are never shown). Close means a typo: the environment holds many names."""
        from agentform.core.problems import did_you_mean

        return did_you_mean(var, list(self.environ), cutoff=0.8)

    def _line_map(self, source: str, context: dict[str, Any], text: str) -> Callable[[int], int]:
        source = _NEWLINES.sub("\n", source)
        if "{%" not in source and text.count("\n") == source.count("\n"):
            return lambda line: line
        quiet = {**context, "env": lambda var, default=None: self.environ.get(var, default) or ""}
        quiet["secret"] = self.tokens.token
        token = _on_undefined.set(lambda message: None)
        try:
            marked = render_bounded(self.env.from_string(instrument(source)), quiet)
        except Exception:
            return lambda line: line
        finally:
            _on_undefined.reset(token)
        return line_map(marked, text)


class _FileRendering:
    """One file's rendering: its template's functions (`env`, `secret`) and the
    problems they find, each recorded once at the template line being rendered."""

    def __init__(
        self,
        renderer: Renderer,
        name: str,
        template: jinja2.Template,
        source: str,
        diagnostics: Diagnostics,
    ) -> None:
        self.renderer = renderer
        self.name = name
        self.template = template
        self.filename = template.filename or ""
        self.source = source
        self.lines = source.splitlines()
        self.diagnostics = diagnostics
        self.seen: set[tuple[str, int]] = set()
        self.unknown_values = 0  # problems that leave a value unknown, not the text wrong

    def rendered(self, variables: Mapping[str, Any], workspace: str | None) -> Rendered | None:
        context: dict[str, Any] = {"vars": dict(variables), "env": self.env, "secret": self.secret}
        if workspace is not None:
            context["workspace"] = workspace
        if self.renderer.env_name is not None:
            context["env_name"] = self.renderer.env_name
        errors_before = len(self.diagnostics.items)
        token = _on_undefined.set(lambda message: self.problem(f"template error: {message}"))
        try:
            text = render_bounded(self.template, context)
        except Exception as exc:  # a template may fail in any way: it is the user's input
            line = _template_line(exc.__traceback__, self.filename)
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            renderer = self.renderer
            message = renderer.tokens.replace(renderer.secrets.scrub(message), "source")
            if isinstance(exc, NotAllowed):  # the whole file's, when no line is to blame
                self.diagnostics.error(message, Position(self.name, line or 1, 1))
            else:
                self.diagnostics.error(f"template error: {message}", Position(self.name, line, 1))
            return None
        finally:
            _on_undefined.reset(token)
        if len(self.diagnostics.items) - self.unknown_values > errors_before:
            return None  # values rendered from missing names would only add noise
        return Rendered(text, self.renderer._line_map(self.source, context, text))

    def line_here(self, call: str | None) -> Position:
        """Where the template is now; at the column of `call` (a function's name)
        when that line holds it once."""
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                line = self.template.get_corresponding_lineno(frame.f_lineno)
                text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
                found = [m.start() for m in re.finditer(rf"\b{call}\(", text)] if call else []
                return Position(self.name, line, found[0] + 1 if len(found) == 1 else 1)
            frame = frame.f_back  # type: ignore[assignment]
        return Position(self.name)

    def problem(self, message: str, value_unknown: bool = False, call: str | None = None) -> None:
        where = self.line_here(call)
        if (message, where.line) not in self.seen:
            self.seen.add((message, where.line))
            self.diagnostics.error(message, where)
            self.unknown_values += value_unknown

    def named(self, function: str, var: Any, extra: tuple[Any, ...]) -> bool:
        """Whether `var` names a variable; else a problem said in the files' terms
        (a Python TypeError would name this module's functions)."""
        if isinstance(var, str) and var and not extra:
            return True
        self.problem(f"{function}() needs the variable's name: {function}('NAME')", call=function)
        return False

    def env(self, var: Any = None, default: str | None = None, *extra: Any) -> str:
        if not self.named("env", var, extra):
            return ""
        if refused := env_refusal(var, self.renderer.allowed_env, self.renderer.key_variables):
            self.problem(refused, call="env")
            return ""
        value = self.renderer.environ.get(var, default)
        if value is None:
            mistyped = self.renderer._mistyped(var)
            self.problem(f"environment variable {var} is not set{mistyped}", call="env")
            return ""
        return value

    def secret(self, var: Any = None, *extra: Any) -> str:
        if not self.named("secret", var, extra):
            return ""
        if refused := credential_refusal(var, self.renderer.key_variables):
            self.problem(refused, call="secret")
            return ""
        renderer = self.renderer
        value = renderer.environ.get(var)
        if value is None:
            renderer.secrets.unset.add(var)
            if not renderer.unset_secrets_allowed:
                # The run stops before any call, but the file is still read with the
                # value unknown (as export reads it), so its other problems show too.
                message = f"secret {var}: environment variable is not set"
                problem = message + renderer._mistyped(var)
                self.problem(problem, value_unknown=True, call="secret")
        else:
            renderer.secrets.add(var, value)
        return SecretToken(renderer.tokens.token(var))


def _template_line(tb: TracebackType | None, filename: str) -> int:
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
