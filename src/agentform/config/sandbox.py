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
template's line.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from agentform.core.bounds import NOT_ALLOWED, Bounds, leads_outside
from agentform.core.errors import AgentformError
from agentform.core.secrets import API_KEY_VARIABLE

MAX_STEPS = 1_000_000  # loop iterations and calls in one file's rendering
MAX_VALUE = 1 << 20  # characters of one value a template computes
MAX_RENDERED = 16 << 20  # characters of one rendered file
MAX_WIDTH = 10_000  # a width or count given to a format or a filter
ENV_PREFIX = "AGENTFORM_VAR_"  # env() reads these without listing them, as Terraform's TF_VAR_
CREDENTIALS = frozenset({API_KEY_VARIABLE})

_BUDGET = "agentform_step"  # the global the loops are rewritten to go through
_CONCAT = "agentform_concat"
_SLICED = "agentform_sliced"  # slices bypass the sandbox's getitem: checked apart
_WIDTHS = re.compile(r"[{%][^}%a-zA-Z]*?(\d+)")  # widths and precisions in a format


class SecretToken(str):
    """What `secret('NAME')` gives a template: a token standing for the value, which
    no template sees. Placing it in text is all a template may do with it."""


PLACING_FILTERS = frozenset({"string", "default", "d"})
"""Filters that give a secret() token back as it is."""


def _refuse_transform(how: str) -> None:
    raise NotAllowed(f"a secret() value can only be placed in text, not {how}")


class NotAllowed(AgentformError, SecurityError):
    """Something a workspace file may not do; the message says what."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}: {NOT_ALLOWED}")


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


class _Budget:
    """Steps left for one file's rendering."""

    def __init__(self) -> None:
        self.left = MAX_STEPS

    def step(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise NotAllowed(f"more than {MAX_STEPS:,} loop iterations and calls")

    def counted(self, items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            self.step()
            yield item


def size(value: Any, limit: int = MAX_VALUE) -> int:
    """The characters `value` reads as, as text: a collection counts everything it
    holds, each time it holds it (`[s] * 1000` is a thousand `s`); counting stops
    once past `limit`, so a huge collection costs no more than that to measure."""
    if isinstance(value, str):  # nearly every value a template writes: no stack needed
        return len(value)
    if isinstance(value, int | float | bool) or value is None:
        return 1
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += 1
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            total += 1
            stack.extend(item)
        else:
            total += 1
    return total


def _bounded(value: Any) -> Any:
    if size(value) > MAX_VALUE:
        raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")
    return value


def _what(item: Any) -> str:
    if callable(item) and not isinstance(item, type):
        return "a function"
    if isinstance(item, types.ModuleType):
        return "a module"
    return f"a {_type_name(item)} object"


def _written(value: Any) -> Any:
    """`value`, bounded, when it is data (text, numbers, lists and maps of them): what
    a template writes out as text; anything else would be written as its Python repr
    (an object's address, a function's name), which no file means to say."""
    _bounded(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str | int | float | range | jinja2.Undefined) or item is None:
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        else:
            raise NotAllowed(f"writing {_what(item)} as text (only data is written)")
    return value


def _check_widths(text: Any) -> None:
    if isinstance(text, str) and any(int(w) > MAX_WIDTH for w in _WIDTHS.findall(text)):
        raise NotAllowed(f"a format width over {MAX_WIDTH:,}")


def _check_counts(args: Iterable[Any]) -> None:
    if any(isinstance(a, int) and not isinstance(a, bool) and abs(a) > MAX_WIDTH for a in args):
        raise NotAllowed(f"a width or count over {MAX_WIDTH:,}")


_TEXT_OF_WHOLE = frozenset({"string", "join", "tojson", "pprint", "urlencode", "xmlattr"})
"""Filters that write a whole collection out as one text."""
_WIDTH_FILTERS = frozenset({"center", "indent", "wordwrap", "truncate", "format", "replace"})


def _check_operands(operator: str, left: Any, right: Any) -> None:
    """Refuses, before it is computed, a product or power too large to hold, and any
    arithmetic on a secret() token."""
    if isinstance(left, SecretToken) and operator != "+":
        _refuse_transform(f"used with {operator}")
    if operator == "*":
        count, repeated = (right, left) if isinstance(right, int) else (left, right)
        if isinstance(count, int) and size(repeated) * count > MAX_VALUE:
            raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        if abs(right) > 64 or left.bit_length() * abs(right) > 4096:
            raise NotAllowed("a number over 4,096 bits")
    elif operator == "%" and isinstance(left, str):
        _check_widths(left)
        _written(right)


def _sliced(value: Any) -> Any:
    if isinstance(value, SecretToken):
        _refuse_transform("indexed or sliced")
    return value


def _check_replace(text: Any, old: Any, new: Any) -> None:
    if isinstance(text, str) and str(old) and text.count(str(old)) * len(str(new)) > MAX_VALUE:
        raise NotAllowed(f"a value longer than {MAX_VALUE:,} characters")


def _type_name(obj: Any) -> str:
    """The type a template sees: the built-in one agentform's own types extend (`vars`
    is a dict to the files, whatever class holds it)."""
    kind = type(obj)
    if kind.__module__.startswith("agentform."):
        kind = next(t for t in kind.__mro__ if t.__module__ == "builtins")
    return kind.__name__


def _json_default(value: Any) -> Any:
    """What `tojson` writes for a value JSON has no form for: an undefined name is
    used as text (recorded, or raised, as any use of it is) and written as null."""
    if isinstance(value, jinja2.Undefined):
        str(value)
        return None
    raise TypeError(f"a {type(value).__name__} cannot be written as JSON")


class _WorkspaceLoader(jinja2.BaseLoader):
    """Templates by path from the workspace, symlinks resolved, within its bounds.
    It remembers each template's name in the workspace by its filename (what
    tracebacks and code objects carry), so a problem in an included file is
    reported at that file; `transform` (file's index, source) gives the text
    compiled (the line marks of lines.py)."""

    def __init__(self, bounds: Bounds, transform: Callable[[int, str], str] | None = None) -> None:
        self.bounds = bounds
        self.root = bounds.workspace
        self.transform = transform
        self.names: dict[str, str] = {}  # filename -> the name in the workspace
        self.sources: dict[str, str] = {}  # name in the workspace -> its text

    def normalised(self, template: str) -> str:
        """The name in the workspace of the file `template` names (`./a/../b.yaml`:
        `b.yaml`), as written when it leads outside."""
        path = self.bounds.inside(template)
        return self.bounds.name(path) if path is not None else template

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = self.bounds.inside(template)
        if path is None:
            raise NotAllowed(leads_outside(template, self.bounds.within))
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        if path.stat().st_size > MAX_RENDERED:
            raise NotAllowed(f"'{template}' is larger than {MAX_RENDERED:,} bytes")
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            why = f"{template} is not UTF-8 text (byte {exc.start}): workspace files are UTF-8"
            raise jinja2.TemplateNotFound(template, why) from exc
        except OSError as exc:
            why = f"cannot read {template} ({exc.strerror or exc})"
            raise jinja2.TemplateNotFound(template, why) from exc
        name = self.bounds.name(path)
        self.names[str(path)] = name
        self.sources[name] = source
        if self.transform is not None:
            source = self.transform(list(self.sources).index(name), source)
        mtime = path.stat().st_mtime
        return source, str(path), lambda: path.stat().st_mtime == mtime


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates, kept in memory for the process: a load that renders the
    same files again (`env diff` renders them three times, `validate` once per
    environment) compiles each file once. Jinja2 keys each by the file's path and
    checks its source's digest, so an edited file is compiled anew; every sandbox
    is configured alike, so one's code is another's. Bounded: the oldest go first."""

    MAX_BYTES = 64 << 20

    def __init__(self) -> None:
        self.codes: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.codes.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = bucket.bytecode_to_string()
        self.codes.pop(bucket.key, None)
        while self.codes and sum(map(len, self.codes.values())) + len(code) > self.MAX_BYTES:
            del self.codes[next(iter(self.codes))]
        if len(code) <= self.MAX_BYTES:
            self.codes[bucket.key] = code


COMPILED = _CompiledTemplates()


class WorkspaceSandbox(ImmutableSandboxedEnvironment):
    """The environment every workspace file renders in (see the module's docstring)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(
        self,
        bounds: Bounds,
        undefined: type[jinja2.Undefined],
        transform: Callable[[int, str], str] | None = None,
    ) -> None:
        self.workspace_loader = _WorkspaceLoader(bounds, transform)
        super().__init__(
            loader=self.workspace_loader,
            undefined=undefined,
            keep_trailing_newline=True,
            autoescape=False,
            bytecode_cache=COMPILED,
        )
        self.budget = _Budget()
        self.includes_found: dict[str, list[tuple[str, int]]] = {}  # includes.py's, by file
        del self.globals["namespace"]
        del self.globals["lipsum"]  # lipsum(n) makes n paragraphs: unbounded work
        self.globals[_BUDGET] = lambda items: self.budget.counted(items)
        self.globals[_CONCAT] = lambda *parts: "".join(str(_written(p)) for p in parts)
        self.finalize = _written  # what `{{ … }}` writes, before it is made text
        self.globals[_SLICED] = _sliced
        # `tojson` hands its value to json.dumps, which knows no Undefined: without
        # this, an undefined name reads "Object of type RecordingUndefined is not JSON
        # serializable" instead of being reported as the undefined name it is.
        self.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}
        for name, original in list(self.filters.items()):
            self.filters[name] = _checked_filter(name, original)

    def fresh_budget(self) -> None:
        self.budget = _Budget()

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, SecretToken):
            _refuse_transform(f"given to .{attribute}")
        if attribute.startswith("_"):  # whether the object has it or not
            raise NotAllowed(f"the attribute {attribute!r} of a {_type_name(obj)}")
        if attribute in ("format", "format_map"):  # the sandbox wraps str.format itself
            _check_widths(obj)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, SecretToken):
            _refuse_transform("indexed or sliced")
        return super().getitem(obj, argument)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        raise NotAllowed(f"the attribute {attribute!r} of a {_type_name(obj)}")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.budget.step()
        if not isinstance(getattr(__obj, "__self__", None), str):
            return super().call(__context, __obj, *args, **kwargs)
        # A str method (center, ljust, zfill, format, replace, join…): bounded widths
        # and counts before it runs, a bounded result after.
        _check_counts([*args, *kwargs.values()])
        _check_widths(__obj.__self__)
        if __obj.__name__ == "replace" and len(args) >= 2:
            _check_replace(__obj.__self__, args[0], args[1])
        return _bounded(super().call(__context, __obj, *args, **kwargs))

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_operands(operator, left, right)
        return _bounded(super().call_binop(context, operator, left, right))

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


def _checked_filter(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def checked(*args: Any, **kwargs: Any) -> Any:
        if name not in PLACING_FILTERS and any(isinstance(a, SecretToken) for a in args):
            _refuse_transform(f"given to |{name}")
        if name in _TEXT_OF_WHOLE:  # the whole value becomes text: measure it first
            args = _written_arguments(args, hasattr(original, "jinja_pass_arg"))
        if name not in _WIDTH_FILTERS:
            return original(*args, **kwargs)
        _check_counts([*args[1:], *kwargs.values()])
        if args and original.__name__ in ("do_format",):
            _check_widths(args[0])
        if original.__name__ == "do_replace" and len(args) >= 4:
            _check_replace(*args[1:4])
        return _bounded(original(*args, **kwargs))

    for attribute in ("jinja_pass_arg",):  # eval-context / environment filters
        if hasattr(original, attribute):
            setattr(checked, attribute, getattr(original, attribute))
    checked.__name__ = original.__name__
    return checked


def _written_arguments(args: tuple[Any, ...], passed: bool) -> tuple[Any, ...]:
    """The arguments of a filter that writes them out as text, each checked as data;
    an iterator (`map`, `select`) read into a list first, so its items are what is
    checked and written (`|map('upper')|join`). `passed`: the first is Jinja2's own."""
    own, given = (args[:1], args[1:]) if passed else ((), args)
    read = tuple(list(a) if isinstance(a, Iterator) else a for a in given)
    for arg in read:
        _written(arg)
    return (*own, *read)


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
