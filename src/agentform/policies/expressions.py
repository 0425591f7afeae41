"""CEL: compiling a rule's expressions once, evaluating them, and reading the names
they select.

The runtime is Google's CEL (cel-expr-python, the C++ runtime's bindings), chosen by
measurement (docs/performance.md). Its guarantees are why a rule may be run on a
pull request's plan: no loops but comprehensions over given lists, no I/O, and an
iteration budget per evaluation (10,000 comprehension iterations, the runtime's own,
enforced in C++): a rule that needs more is that rule's error, never a hang. What
the budget leaves (expression size, nesting) is bounded here: an expression longer
than MAX_EXPRESSION_CHARS is refused at load, and the parser refuses nesting deeper
than 32.

Values a rule sees are plain data (policies/values.py); a secret's value is never
among them, only a token that `isSecret`, `isSensitive` and `isSet` recognise.
"""

from __future__ import annotations

import functools
import re
import secrets
from dataclasses import dataclass
from typing import Any

import re2
from cel_expr_python import cel

from agentform.core.errors import AgentformError
from agentform.core.problems import did_you_mean
from agentform.core.sensitive import MASK

MAX_EXPRESSION_CHARS = 4_000
VARIABLES = ("change", "plan", "workspace", "environment", "organization")
# How a sensitive value stands in CEL: with a nonce of the run, so no plain value of a
# file can pass for one (a literal header "(secret)" is not a secret()).
_NONCE = secrets.token_hex(8)
SECRET = f"(secret {_NONCE})"  # a value holding a secret()
SENSITIVE = f"(sensitive {_NONCE})"  # another sensitive value (a live header's)


def _said(error: str) -> str:
    """A runtime's error in the rule's words (its status code off, `matches` as written)."""
    return masked_tokens(_STATUS.sub("", error.strip()).replace(_MATCHES, "matches"))


def masked_tokens(text: str) -> str:
    """`text` with the tokens of sensitive values shown as the mask, as everywhere."""
    return text.replace(SECRET, MASK).replace(SENSITIVE, MASK)


_T = cel.Type


def _overloads(name: str, test: Any) -> cel.FunctionDecl:
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(f"{name}_{t.name()}", _T.BOOL, [t], impl=test)
            for t in (_T.STRING, _T.NULL, _T.INT, _T.BOOL, _T.DOUBLE, _T.LIST, _T.MAP)
        ],
    )


# `matches` is RE2's partial match, as CEL's own; the runtime compiles the pattern at
# each evaluation (about 100 us), so it runs here, each pattern compiled once.
_MATCHES = "re2mtch"  # the same length as "matches": positions in errors stay right
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False
_RE2_OPTIONS.max_mem = 8 << 20  # RE2's own default, written out: a pattern's bound


@functools.lru_cache(maxsize=1_024)
def _pattern(pattern: str) -> Any:
    return re2.compile(pattern, _RE2_OPTIONS)


def _matches(text: str, pattern: str) -> bool:
    try:
        return _pattern(pattern).search(text) is not None
    except re2.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


_FUNCTIONS = [
    cel.FunctionDecl(
        _MATCHES,
        [
            cel.Overload(
                f"{_MATCHES}_member", _T.BOOL, [_T.STRING] * 2, is_member=True, impl=_matches
            ),
            cel.Overload(f"{_MATCHES}_global", _T.BOOL, [_T.STRING] * 2, impl=_matches),
        ],
    ),
    _overloads("isSecret", lambda v: v == SECRET),
    _overloads("isSensitive", lambda v: v in (SECRET, SENSITIVE)),
    _overloads("isSet", lambda v: v is not None and v != "" and v != [] and v != {}),
]
_ENV = cel.NewEnv(variables={n: _T.DYN for n in VARIABLES}, functions=_FUNCTIONS)

_ERROR_AT = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*?)(?:\n|$)")
_STATUS = re.compile(r"^[A-Z_]+: | \[[A-Z_]+\]$")


class CelError(AgentformError):
    """An expression that does not compile: the message, and where in it (from 1)."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line, self.column = line, column


@dataclass(frozen=True)
class Expression:
    source: str
    program: Any  # cel.Expression

    @property
    def gives(self) -> str:
        """The type the checker gives the expression: `bool`, `string`, `dyn`..."""
        return str(self.program.return_type().name()).lower()

    def evaluate(self, values: Any) -> tuple[Any, str | None]:
        """(the value, None), or (None, why it could not be evaluated). `values`: an
        activation() (made once for every rule of a change)."""
        try:
            result = self.program.eval(values)
        except RuntimeError as exc:  # the iteration budget, a failing function
            return None, _said(str(exc))
        if result.type() == _T.ERROR:
            return None, _said(str(result.value()))
        return result.plain_value(), None


def compile_expression(source: str) -> Expression:
    """The compiled expression; a CelError at the problem's line and column."""
    if len(source) > MAX_EXPRESSION_CHARS:
        raise CelError(f"the expression is longer than {MAX_EXPRESSION_CHARS:,} characters")
    return _compiled(source)


def _compiled(source: str) -> Expression:
    try:
        return Expression(source, _ENV.compile(_own_matches(source)))
    except RuntimeError as exc:
        text = str(exc).replace(_MATCHES, "matches")
        found = _ERROR_AT.search(text)
        if found:
            said = _in_words(found[3].strip(), source)
            raise CelError(said, int(found[1]), int(found[2])) from None
        raise CelError(_STATUS.sub("", text.strip().splitlines()[0])) from None


_UNDECLARED = re.compile(r"undeclared reference to '([^']+)' \(in container ''\)")
FUNCTIONS = (
    *("size", "has", "matches", "startsWith", "endsWith", "contains", "exists", "all"),
    *("exists_one", "map", "filter", "int", "uint", "double", "string", "bool", "dyn"),
    *("isSecret", "isSensitive", "isSet"),
)
"""The functions a rule may call (CEL's own that rules use, and ours)."""


def _in_words(message: str, source: str) -> str:
    """CEL's "undeclared reference to 'X' (in container '')" said as the other names
    are: what X is not, and the closest name or function it may be a typo of."""
    found = _UNDECLARED.fullmatch(message)
    if found is None:
        return message
    name = found[1]
    if re.search(rf"(?<![\w.]){re.escape(name)}\s*\(|\.{re.escape(name)}\s*\(", source):
        return f"no function {name}{did_you_mean(name, FUNCTIONS)}"
    return f"no name {name}{did_you_mean(name, VARIABLES)}"


@functools.lru_cache(maxsize=256)
def combined(expressions: tuple[Expression, ...]) -> Expression | None:
    """One expression giving the list of `expressions`' values (compiled once per
    set of rules); None when they do not compile together (their nesting)."""
    if len(expressions) < 2:
        return None
    try:
        return _compiled("[" + ",\n".join(f"({e.source})" for e in expressions) + "]")
    except CelError:
        return None


def activation(data: dict[str, Any]) -> Any:
    """The values of `data` converted once for the runtime, for every rule on them."""
    return _ENV.Activation(data)


# -- the names an expression selects -----------------------------------------------

TOKEN = re.compile(
    r"""(?P<string>[rRbB]{0,2}(?:'''(?:\\.|.)*?'''|\"\"\"(?:\\.|.)*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
    |(?P<comment>//[^\n]*)
    |(?P<chain>(?<![\w.])[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)
    |(?P<member>\.\s*[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)  # after a value: `).kind`
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)


def _own_matches(source: str) -> str:
    """`source` with each call of `matches` (outside strings and comments) calling the
    RE2 matcher that compiles each pattern once."""
    out = []
    for match in TOKEN.finditer(source):
        text = match[0]
        if match["chain"] and source[match.end() :].lstrip().startswith("("):
            text = re.sub(r"\bmatches$", _MATCHES, text)
        out.append(text)
    return "".join(out)


def line_column(source: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of `offset` in `source`."""
    before = source[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1
