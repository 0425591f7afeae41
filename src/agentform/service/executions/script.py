"""An agent's `script` in the seed file: what its executions do, step by step.

A script is ordered steps, each with any of: a node transition, reasoning, a
message, actions (each with an output or a failure), a generated Playwright
script, a produced file, a workflow update, a pause for confirmation and a
simulated duration; then an end, a result or a failure. Every string may use
the execution's inputs (`{{ inputs.order }}`, Jinja2); a string that is one
expression keeps the input's type. `when` (a Jinja2 expression) keeps a step or
an end only when it is true, so one agent can succeed or fail by input.

`render` makes the `RenderedScript` of a script and an execution's inputs: the
steps and the one end that apply. A template's typo is a seed error, not a failed run.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Annotated, Any

from jinja2 import StrictUndefined, Template, TemplateError, Undefined, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from agentform.core.budget import BudgetExceeded
from agentform.core.budget_worker import Worker
from agentform.core.errors import AgentformError

_ENV = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
_MISSING_NAME = re.compile(r"has no attribute '([^']+)'|'([^']+)' is undefined")
_ONE_EXPRESSION = re.compile(r"^\{\{(?P<expr>(?:(?!\{\{|\}\}).)*)\}\}$", re.DOTALL)

Seconds = Annotated[float, Field(ge=0, le=3600)]
DEFAULT_STEP_SECONDS = 1.0
DEFAULT_ACTION_SECONDS = 0.5


def _expression(value: str | None) -> str | None:
    if value is not None:
        try:
            _ENV.compile_expression(value)
        except TemplateError as exc:
            raise ValueError(f"when {value!r}: {exc}") from None
    return value


When = Annotated[str | None, AfterValidator(_expression)]
"""A Jinja2 expression over `inputs` (`inputs.card == 'declined'`): keep this only when true."""


class ScriptError(AgentformError):
    """The script cannot be rendered with these inputs (an input it needs is missing)."""


class _Strict(BaseModel):
    # A number substituted into a text field reads as text; built when first used.
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, defer_build=True)


def _check_templates(value: Any) -> Any:
    """Compiles every template string in `value`, so a syntax error shows at seed load."""
    if isinstance(value, str) and ("{{" in value or "{%" in value):
        try:
            _ENV.parse(value)
        except TemplateError as exc:
            raise ValueError(f"template {value!r}: {exc}") from None
    elif isinstance(value, dict):
        for item in value.values():
            _check_templates(item)
    elif isinstance(value, list):
        for item in value:
            _check_templates(item)
    return value


class _Templated(_Strict):
    @model_validator(mode="before")
    @classmethod
    def _templates_compile(cls, data: Any) -> Any:
        return _check_templates(data)


class OsError(_Templated):
    message: str


class ScriptAction(_Templated):
    """One action: its output, or its failure (optionally with an OS error)."""

    name: str
    arguments: dict[str, Any] = {}
    output: Any = None
    failure: str | None = None
    osError: OsError | None = None
    duration: Seconds = DEFAULT_ACTION_SECONDS

    @model_validator(mode="after")
    def _output_or_failure(self) -> ScriptAction:
        if self.failure is not None and self.output is not None:
            raise ValueError("an action has an output or a failure, not both")
        if self.osError is not None and self.failure is None:
            raise ValueError("osError belongs to a failed action (give failure too)")
        return self


class Transition(_Templated):
    toNode: str
    transitionType: str | None = None


class PlaywrightScript(_Templated):
    nodeName: str
    script: str
    context: Any = ""


class ProducedFile(_Templated):
    """A file the execution produces; its bytes are `content` (UTF-8 text)."""

    name: Annotated[str, Field(min_length=1)]
    content: str = ""
    mimeType: str = "application/octet-stream"
    source: str = "agent"


class ScriptStep(_Templated):
    when: When = None
    transition: Transition | None = None
    reasoning: str | None = None
    message: str | None = None
    actions: list[ScriptAction] = []
    playwright: PlaywrightScript | None = None
    file: ProducedFile | None = None
    workflowUpdate: list[Any] | None = None
    confirm: str | None = Field(
        default=None, description="Pause for confirmation with this reason until a user message."
    )
    duration: Seconds = DEFAULT_STEP_SECONDS


class ScriptEnd(_Templated):
    """How the execution ends: a result (completed) or a failure (failed)."""

    when: When = None
    result: dict[str, Any] | None = None
    reasoning: str = ""
    outcome: str = "success"
    failure: str | None = None

    @model_validator(mode="after")
    def _result_or_failure(self) -> ScriptEnd:
        if self.failure is not None and self.result is not None:
            raise ValueError("an end has a result or a failure, not both")
        return self


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, dict) else value


class Script(_Strict):
    """An agent's script; `inputs` are the defaults its executions start from.
    `end` is one end or a list of them: the first whose `when` holds applies."""

    inputs: dict[str, Any] = {}
    steps: list[ScriptStep] = []
    end: Annotated[list[ScriptEnd], BeforeValidator(_as_list)] = Field(  # (not at import)
        default_factory=lambda: [ScriptEnd()]
    )


@functools.cache
def _no_script() -> Script:
    """An agent without a script: one step, then completed with an empty result."""
    return Script(steps=[ScriptStep()])


class RenderedScript(BaseModel):
    """The steps and the end that apply to one execution, inputs substituted."""

    model_config = ConfigDict(defer_build=True)
    steps: list[ScriptStep]
    end: ScriptEnd


_WORKER = Worker(__name__)  # started on the first script with a template to render


def render(script: Script | None, inputs: dict[str, Any]) -> RenderedScript:
    """The script for these inputs (over its defaults); ScriptError if one is missing.
    A script's templates come from a seed file anyone may have written (a test file's
    inline seed in a pull request): they are rendered in the budget's worker
    (core/budget_worker.py), so no script takes more memory or time than the budget."""
    script = script or _no_script()
    if not _templated(script.model_dump()) or os.name != "posix":
        return render_here(script, inputs)
    try:
        text = _WORKER.call(f"{__name__}:rendered_json", script.model_dump_json(), inputs)
    except BudgetExceeded as exc:
        raise ScriptError(f"the agent's script {exc}") from None
    return RenderedScript.model_validate_json(text)


def rendered_json(script: str, inputs: dict[str, Any]) -> str:
    """What the worker computes: JSON in and out, which costs a tenth of pickling the
    models, and each script is parsed once."""
    return render_here(_parsed(script), inputs).model_dump_json()


@functools.lru_cache(maxsize=256)
def _parsed(script: str) -> Script:
    return Script.model_validate_json(script)


def prepare() -> None:
    """Starts the worker ahead of the first script (a service that will run them), so
    that rendering it does not wait for the worker's imports."""
    if os.name == "posix":
        _WORKER.start()


def _templated(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, dict):  # a `when` is an expression, whatever it holds
        return value.get("when") is not None or any(_templated(v) for v in value.values())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return False


def render_here(script: Script, inputs: dict[str, Any]) -> RenderedScript:
    """The script for these inputs, rendered in this process."""
    context = {"inputs": {**script.inputs, **inputs}}
    try:
        steps = [
            ScriptStep.model_validate(_render(step.model_dump(exclude={"when"}), context))
            for step in script.steps
            if _holds(step.when, context)
        ]
        end = next((e for e in script.end if _holds(e.when, context)), ScriptEnd())
        rendered_end = ScriptEnd.model_validate(_render(end.model_dump(exclude={"when"}), context))
    except UndefinedError as exc:
        missing = _MISSING_NAME.search(str(exc))
        name = missing and (missing.group(1) or missing.group(2))
        what = f"input '{name}'" if name else f"an input ({exc})"
        raise ScriptError(f"the agent's script needs {what}, which was not given") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ScriptError(f"the agent's script gives {where} a bad value: {first['msg']}") from None
    except (TemplateError, TypeError, ValueError) as exc:
        raise ScriptError(f"the agent's script failed on these inputs ({exc})") from None
    return RenderedScript(steps=steps, end=rendered_end)


def _evaluate(expression: str, context: dict[str, Any]) -> Any:
    value = _expression_of(expression)(**context)
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()
    return value


# Every execution renders its agent's script: compile each template once.
@functools.lru_cache(maxsize=4096)
def _expression_of(source: str) -> Any:
    return _ENV.compile_expression(source, undefined_to_none=False)


@functools.lru_cache(maxsize=4096)
def _template_of(source: str) -> Template:
    return _ENV.from_string(source)


def _holds(when: str | None, context: dict[str, Any]) -> bool:
    return when is None or bool(_evaluate(when, context))


def _render(value: Any, context: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        whole = _ONE_EXPRESSION.match(value.strip())
        if whole:
            return _evaluate(whole.group("expr"), context)
        return _template_of(value).render(**context)
    if isinstance(value, dict):
        return {k: _render(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, context) for v in value]
    return value
