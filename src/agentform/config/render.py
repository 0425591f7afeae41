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
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from agentform.config.includes import Step, include_cycle
from agentform.config.lines import SourceLine, instrument, line_map, template_place
from agentform.config.sandbox import (
    WorkspaceSandbox,
    credential_refusal,
    env_refusal,
    render_bounded,
)
from agentform.config.sandbox_bounds import NotAllowed, SecretToken
from agentform.config.secret_tokens import SecretTokens
from agentform.config.undefined import RecordingUndefined, Variables, on_undefined
from agentform.core.bounds import Bounds, broken_link, too_large
from agentform.core.budget import budget_message
from agentform.core.diagnostics import Diagnostics, Position, relative
from agentform.core.secrets import Secrets

_NEWLINES = re.compile(r"\r\n|\r|\n")  # what Jinja2 turns into "\n"
__all__ = ["Rendered", "Renderer", "Secrets"]


@dataclass
class Rendered:
    text: str  # secrets as tokens
    source_line: Callable[[int], SourceLine]  # a line of `text` -> the file and line


class Renderer:
    def __init__(
        self,
        root: Path,
        environ: Mapping[str, str] | None = None,
        secrets: Secrets | None = None,
        unset_secrets_allowed: bool = False,
        allowed_env: Collection[str] = (),
        key_variables: Collection[str] = (),
        bounds: Bounds | None = None,
    ) -> None:
        self.root = root
        self.bounds = bounds or Bounds.of_workspace(root)
        self.allowed_env = frozenset(allowed_env)  # allowEnv of agentform.yaml
        self.key_variables = frozenset(key_variables)  # apiKeyEnv of each environment
        self.env_name: str | None = None  # the chosen environment's, seen as env_name
        self.environ = os.environ if environ is None else environ
        self.secrets = secrets if secrets is not None else Secrets()
        self.tokens = SecretTokens(self.secrets)
        self.unset_secrets_allowed = unset_secrets_allowed  # export: a placeholder is enough
        # the secrets this load's files read that are not set (the run's registry,
        # shared by every load of a run for masking, gathers every workspace's)
        self.unset: set[str] = set()
        self.env = WorkspaceSandbox(self.bounds, RecordingUndefined)
        self.marked_env: WorkspaceSandbox | None = None  # renders with line marks
        self.cycles_said: set[frozenset[Step]] = set()  # include cycles reported
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
        if why := broken_link(path) or too_large(path):
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
            return Rendered(text, lambda line: (name, line))
        try:
            template = self.env.get_template(Path(name).as_posix())
        except jinja2.TemplateSyntaxError as exc:
            message = self.tokens.replace(exc.message or str(exc), "source")
            diagnostics.error(f"template error: {message}", Position(name, exc.lineno or 0, 1))
            return None
        if cycle := include_cycle(self.env, name):
            self._say_cycle(cycle, diagnostics)
            return None
        rendering = _FileRendering(self, name, template, source, diagnostics)
        return rendering.rendered(variables, workspace)

    def _say_cycle(self, cycle: list[Step], diagnostics: Diagnostics) -> None:
        """One error naming the chain, once per cycle: files that include each other
        are each read (neither is the other's part), and each finds the same loop."""
        end = cycle[-1][0]
        loop = frozenset(cycle[next(i for i, s in enumerate(cycle) if s[0] == end) : -1])
        if loop in self.cycles_said:
            return
        self.cycles_said.add(loop)
        chain = " -> ".join(f"{file}:{line}" for file, line in cycle[:-1])
        at = Position(cycle[-2][0], cycle[-2][1], 1)
        diagnostics.error(f"template error: files include each other: {chain} -> {end}", at)

    def _mistyped(self, var: str) -> str:
        """A hint naming a set variable close to `var` (names are not secret; values
        are never shown). Close means a typo: the environment holds many names."""
        from agentform.core.problems import did_you_mean

        return did_you_mean(var, list(self.environ), cutoff=0.8)

    def _line_map(
        self, name: str, source: str, context: dict[str, Any], text: str
    ) -> Callable[[int], SourceLine]:
        source = _NEWLINES.sub("\n", source)
        if "{%" not in source and text.count("\n") == source.count("\n"):
            return lambda line: (name, line)
        quiet = {**context, "env": lambda var, default=None: self.environ.get(var, default) or ""}
        quiet["secret"] = self.tokens.token
        if self.marked_env is None:  # the files as compiled with line marks (lines.py)
            marks = lambda file, text: instrument(_NEWLINES.sub("\n", text), file)  # noqa: E731
            self.marked_env = WorkspaceSandbox(self.bounds, RecordingUndefined, marks)
        token = on_undefined.set(lambda message: None)
        try:
            marked = render_bounded(self.marked_env.get_template(name), quiet)
        except Exception:
            return lambda line: (name, line)
        finally:
            on_undefined.reset(token)
        return line_map(marked, text, list(self.marked_env.workspace_loader.sources))


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
        self.names = renderer.env.workspace_loader.names  # every template's, by filename
        self.source = source
        self.diagnostics = diagnostics
        self.seen: set[tuple[str, str, int]] = set()
        self.unknown_values = 0  # problems that leave a value unknown, not the text wrong
        self.unread = False  # a name of agentform.yaml's vars, which could not be read

    def undefined(self, message: str | None) -> None:
        if message is None:
            self.unread = True
        else:
            self.problem(f"template error: {message}")

    def rendered(self, variables: Mapping[str, Any], workspace: str | None) -> Rendered | None:
        context: dict[str, Any] = {
            "vars": Variables.of(variables),
            "env": self.env,
            "secret": self.secret,
        }
        if workspace is not None:
            context["workspace"] = workspace
        if self.renderer.env_name is not None:
            context["env_name"] = self.renderer.env_name
        errors_before = len(self.diagnostics.items)
        token = on_undefined.set(self.undefined)
        try:
            text = render_bounded(self.template, context)
        except Exception as exc:  # a template may fail in any way: it is the user's input
            file, line = template_place(exc, self.names) or (self.name, 0)
            message = _message(exc)
            renderer = self.renderer
            message = renderer.tokens.replace(renderer.secrets.scrub(message), "source")
            if (budget := budget_message(exc)) is not None:
                self.diagnostics.error(budget, Position(file, line or 1, 1))
            elif isinstance(exc, NotAllowed):  # the whole file's, when no line is to blame
                self.diagnostics.error(message, Position(file, line or 1, 1))
            else:
                self.diagnostics.error(f"template error: {message}", Position(file, line, 1))
            return None
        finally:
            on_undefined.reset(token)
        if self.unread or len(self.diagnostics.items) - self.unknown_values > errors_before:
            return None  # values rendered from missing names would only add noise
        return Rendered(text, self.renderer._line_map(self.name, self.source, context, text))

    def line_here(self, call: str | None) -> Position:
        """Where the template is now (the file included last, when in one); at the
        column of `call` (a function's name) when that line holds it once."""
        frame = sys._getframe(2)
        loader = self.renderer.env.workspace_loader
        while frame is not None:
            name = self.names.get(frame.f_code.co_filename)
            if name is not None:
                template = self.renderer.env.get_template(name)  # compiled: from the cache
                line = template.get_corresponding_lineno(frame.f_lineno)
                lines = loader.sources.get(name, "").splitlines()
                text = lines[line - 1] if 0 < line <= len(lines) else ""
                found = [m.start() for m in re.finditer(rf"\b{call}\(", text)] if call else []
                return Position(name, line, found[0] + 1 if len(found) == 1 else 1)
            frame = frame.f_back  # type: ignore[assignment]
        return Position(self.name)

    def problem(self, message: str, value_unknown: bool = False, call: str | None = None) -> None:
        where = self.line_here(call)
        if (message, where.file, where.line) not in self.seen:
            self.seen.add((message, where.file, where.line))
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
        # CI gives '' for a secret that does not exist (or is withheld from a fork's
        # pull request): an empty value is no credential, so it is not set.
        if not value:
            renderer.secrets.unset.add(var)
            renderer.unset.add(var)
            if not renderer.unset_secrets_allowed:
                # The run stops before any call, but the file is still read with the
                # value unknown (as export reads it), so its other problems show too.
                message = f"secret {var}: environment variable is not set"
                if value is not None:
                    message = f"secret {var}: environment variable is empty"
                    message += " (an empty value is treated as not set)"
                problem = message + (renderer._mistyped(var) if value is None else "")
                self.problem(problem, value_unknown=True, call="secret")
        else:
            renderer.secrets.add(var, value)
        return SecretToken(renderer.tokens.token(var))


def _message(exc: BaseException) -> str:
    """An exception in the files' words: a missing include names what was asked for,
    and Python's recursion limit is a nesting of includes or macros too deep."""
    if isinstance(exc, jinja2.TemplateNotFound):
        if exc.message and exc.message != exc.name:  # found, but not readable (template_files.py)
            return exc.message
        return f"no file {exc.name} to include (names are from the workspace's root)"
    if isinstance(exc, RecursionError):
        return "templates nest too deep (an include or a macro that calls itself?)"
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__
