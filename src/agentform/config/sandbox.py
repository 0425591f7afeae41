"""The Jinja2 sandbox workspace files render in: data, never code.

Workspace files are written by whoever opens a pull request, and CI renders
them next to the credentials (`validate` in a pre-commit hook, `plan` in the PR
job). So a template:
- reaches no Python internals: Jinja2's immutable sandbox refuses every
  attribute starting with `_` and every unsafe one (`__globals__`, `mro`, frames,
  `gi_code`…), and no mutating method; `namespace` (the one mutable accumulator)
  is not offered;
- reads no file outside the workspace (or, for a workspace of a repository, outside
  the repository's root): `{% include %}` and `{% import %}` names are written from
  the workspace's root and resolved after resolving symlinks (core/bounds.py);
- reads no credential: `env()` reads only variables named AGENTFORM_VAR_* or
  listed in `allowEnv` (agentform.yaml) (its value is shown in plans, which are
  posted on pull requests), and neither `env()` nor `secret()` reads the API key;
- does bounded work: at most MAX_STEPS loop iterations and calls, no single
  value over MAX_VALUE characters (`*`, `~`, `+`, `%`, `**`, widths given to
  formats and filters), and no rendered file over MAX_RENDERED characters.
Breaking a rule raises `NotAllowed` (a SecurityError), reported at the
template's line. The bounds and checks of what a template computes are
config/sandbox_bounds.py; where its files come from, config/template_files.py.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agentform.config.sandbox_bounds import (
    MAX_RENDERED,
    Budget,
    NotAllowed,
    SecretToken,
    bounded,
    check_counts,
    check_operands,
    check_replace,
    check_widths,
    checked_filter,
    refuse_transform,
    sliced,
    type_name,
    with_article,
    written,
)
from agentform.config.template_files import COMPILED, WorkspaceLoader
from agentform.core.bounds import NOT_ALLOWED, Bounds
from agentform.core.secrets import API_KEY_VARIABLE

ENV_PREFIX = "AGENTFORM_VAR_"  # env() reads these without listing them, as Terraform's TF_VAR_
CREDENTIALS = frozenset({API_KEY_VARIABLE})

_BUDGET = "agentform_step"  # the global the loops are rewritten to go through
_CONCAT = "agentform_concat"
_SLICED = "agentform_sliced"  # slices bypass the sandbox's getitem: checked apart


def credential_refusal(name: str, keys: Collection[str] = ()) -> str | None:
    """Why a workspace file may not read the variable `name` at all, or None (`keys`:
    the variables the environments name as holding their API key)."""
    if name in CREDENTIALS or name in keys:
        return f"{name} holds agentform's API key: {NOT_ALLOWED}"
    return None


def env_refusal(name: str, allowed: Collection[str], keys: Collection[str] = ()) -> str | None:
    """Why `env(name)` may not read the variable, or None."""
    if refused := credential_refusal(name, keys):
        return refused
    if name.startswith(ENV_PREFIX) or name in allowed:
        return None
    return (
        f"env('{name}'): a workspace file reads only variables named {ENV_PREFIX}* "
        "or listed in allowEnv (agentform.yaml)"
    )


def _json_default(value: Any) -> Any:
    """What `tojson` writes for a value JSON has no form for: an undefined name is
    used as text (recorded, or raised, as any use of it is) and written as null."""
    if isinstance(value, jinja2.Undefined):
        str(value)
        return None
    raise TypeError(f"{with_article(type(value).__name__)} cannot be written as JSON")


class WorkspaceSandbox(ImmutableSandboxedEnvironment):
    """The environment every workspace file renders in (see the module's docstring)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(
        self,
        bounds: Bounds,
        undefined: type[jinja2.Undefined],
        transform: Callable[[int, str], str] | None = None,
    ) -> None:
        self.workspace_loader = WorkspaceLoader(bounds, transform)
        super().__init__(
            loader=self.workspace_loader,
            undefined=undefined,
            keep_trailing_newline=True,
            autoescape=False,
            bytecode_cache=COMPILED,
        )
        self.budget = Budget()
        self.includes_found: dict[str, list[tuple[str, int]]] = {}  # includes.py's, by file
        del self.globals["namespace"]
        del self.globals["lipsum"]  # lipsum(n) makes n paragraphs: unbounded work
        self.globals[_BUDGET] = lambda items: self.budget.counted(items)
        self.globals[_CONCAT] = lambda *parts: "".join(str(written(p)) for p in parts)
        self.finalize = written  # what `{{ … }}` writes, before it is made text
        self.globals[_SLICED] = sliced
        # `tojson` hands its value to json.dumps, which knows no Undefined: without
        # this, an undefined name reads "Object of type RecordingUndefined is not JSON
        # serializable" instead of being reported as the undefined name it is.
        self.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}
        for name, original in list(self.filters.items()):
            self.filters[name] = checked_filter(name, original)

    def fresh_budget(self) -> None:
        self.budget = Budget()

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, SecretToken):
            refuse_transform(f"given to .{attribute}")
        if attribute.startswith("_"):  # whether the object has it or not
            raise NotAllowed(f"the attribute {attribute!r} of {with_article(type_name(obj))}")
        if attribute in ("format", "format_map"):  # the sandbox wraps str.format itself
            check_widths(obj)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, SecretToken):
            refuse_transform("indexed or sliced")
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        raise NotAllowed(f"the attribute {attribute!r} of {with_article(type_name(obj))}")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.budget.step()
        if not isinstance(getattr(__obj, "__self__", None), str):
            return super().call(__context, __obj, *args, **kwargs)
        # A str method (center, ljust, zfill, format, replace, join…): bounded widths
        # and counts before it runs, a bounded result after.
        check_counts([*args, *kwargs.values()])
        check_widths(__obj.__self__)
        if __obj.__name__ == "replace" and len(args) >= 2:
            check_replace(__obj.__self__, args[0], args[1])
        return bounded(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        check_operands(operator, left, right)
        return bounded(super().call_binop(context, operator, left, right))

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """The template's tree with every loop counted and every `~` bounded."""
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.Name(_BUDGET, "load"), [loop.iter], [], None, None)
        for item in tree.find_all(nodes.Getitem):
            if isinstance(item.arg, nodes.Slice):
                item.node = nodes.Call(nodes.Name(_SLICED, "load"), [item.node], [], None, None)
        for concat in list(tree.find_all(nodes.Concat)):
            call = nodes.Call(nodes.Name(_CONCAT, "load"), concat.nodes, [], None, None)
            concat.nodes = [call]
        return tree


def render_bounded(template: jinja2.Template, context: dict[str, Any]) -> str:
    """The template's text, stopped once it passes MAX_RENDERED characters."""
    environment = template.environment
    if isinstance(environment, WorkspaceSandbox):
        environment.fresh_budget()
    parts: list[str] = []
    total = 0
    for part in template.generate(context):
        total += len(part)
        if total > MAX_RENDERED:
            raise NotAllowed(f"a rendered file longer than {MAX_RENDERED:,} characters")
        parts.append(part)
    return "".join(parts)
