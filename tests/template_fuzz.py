"""The template fuzzer's parts: templates composed from what the sandbox allows
(filters, tests, methods, operators, loops) over large operands, and a harness that
validates each in a child process and measures it from outside.

The harness is a process of its own (`python -c "…serve()"`, so no thread of the
caller is forked): for each template it writes a workspace and forks a child that
loads it (what `validate` does), then reads the child's peak memory and processor
time from wait4. A template passes when the child ended with a verdict (valid, or
diagnostics: never a crash) and stayed within the budget it ran under. Used by
tests/provisioner/test_template_fuzz.py (few examples, a low budget) and
bench/template_fuzz.py (many, the real budget).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

BIG = [0, 1, 3, 100, 3000, 100_000, 10_000_000, 2_500_000_000]
TEXTS = ["'x'", "'\\t'", "'{0:{1}}'", "'%s%s'", "'a,b'", "'{}'", "'é\"\\\\'"]
FILTERS = [
    "join({0})", "slice({1})", "batch({1})", "center({1})", "indent({1})", "wordwrap({1})",
    "truncate({1})", "replace('x', {0})", "format({0}, {1})", "list", "sort", "unique",
    "reverse", "string", "tojson", "pprint", "length", "sum", "map('string')", "first",
    "last", "title", "upper", "trim", "wordcount", "int", "abs", "max", "min", "items",
    "dictsort", "urlencode", "attr('upper')", "select('odd')", "batch({1}, 'y')",
    "default({0})", "e", "filesizeformat", "round", "striptags",
]  # fmt: skip
METHODS = [
    "format({0}, {1})", "expandtabs({1})", "center({1})", "ljust({1})", "zfill({1})",
    "join({0})", "replace('x', {0})", "split()", "count('x')", "upper()", "rjust({1})",
    "splitlines()", "partition(',')", "items()", "keys()", "get('a')", "index(1)",
]  # fmt: skip
OPERATORS = ["*", "+", "~", "%", "**", "//", "-", "in", "==", "and", "or"]
TESTS = ["divisibleby(3)", "string", "number", "sequence", "mapping", "odd", "in([1])"]


def _atom() -> st.SearchStrategy[str]:
    numbers = st.sampled_from(BIG).map(str)
    texts = st.sampled_from(TEXTS)
    made = st.builds(lambda t, n: f"({t}*{n})", texts, st.sampled_from(BIG[:6]))
    ranges = st.sampled_from(BIG[:6]).map(lambda n: f"range({n})")
    others = st.sampled_from(["[1,2]", "{'a': 'b'}", "vars", "[[1],[2]]", "env", "cycler"])
    return st.one_of(numbers, texts, made, ranges, others)


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    arguments = st.tuples(inner, st.sampled_from(BIG).map(str))
    filtered = st.builds(
        lambda e, f, a: f"({e})|{f.format(*a)}", inner, st.sampled_from(FILTERS), arguments
    )
    called = st.builds(
        lambda e, m, a: f"({e}).{m.format(*a)}", inner, st.sampled_from(METHODS), arguments
    )
    operated = st.builds(
        lambda a, o, b: f"({a}) {o} ({b})", inner, st.sampled_from(OPERATORS), inner
    )
    tested = st.builds(lambda e, t: f"({e}) is {t}", inner, st.sampled_from(TESTS))
    return st.one_of(filtered, called, operated, tested)


EXPRESSIONS = st.recursive(_atom(), _grow, max_leaves=6)


@st.composite
def templates(draw: st.DrawFn) -> str:
    """A template: an expression written out, set then used, or in loops."""
    expression = draw(EXPRESSIONS)
    shape = draw(st.sampled_from(["out", "set", "loop", "nested"]))
    if shape == "set":
        return f"{{% set s = {expression} %}}{{{{ (s ~ s)|length }}}}"
    if shape == "loop":
        return f"{{% for i in {expression} %}}{{{{ i }}}}{{% endfor %}}"
    if shape == "nested":
        n = draw(st.sampled_from(BIG[:6]))
        loops = f"{{% for a in range({n}) %}}{{% for b in range({n}) %}}"
        return f"{loops}{{{{ {expression} }}}}{{% endfor %}}{{% endfor %}}"
    return f"{{{{ {expression} }}}}"


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "valid", "diagnostics", or "crash: …"
    said: str  # the first diagnostic, when any
    grown: int  # bytes of peak resident memory past the harness's own
    cpu: float  # processor seconds


class Harness:
    """The harness process (see the module's docstring), under `limits`."""

    def __init__(self, memory: int, cpu_seconds: float, wall_seconds: float) -> None:
        self.limits = (memory, cpu_seconds, wall_seconds)
        code = "from tests.template_fuzz import serve; serve()"
        root = str(Path(__file__).parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *sys.path])}
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(self.limits)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def validate(self, template: str) -> Verdict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(template) + "\n")
        self.process.stdin.flush()
        return Verdict(**json.loads(self.process.stdout.readline()))

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process.wait(timeout=30)


def _resident() -> int:
    with open("/proc/self/statm", "rb") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load(root: Path, said: int) -> None:
    from agentform.config.loader import load_workspace
    from agentform.core.errors import DiagnosticsError

    try:
        load_workspace(root, environ={})
        outcome: dict[str, Any] = {"outcome": "valid", "said": ""}
    except DiagnosticsError as exc:
        outcome = {"outcome": "diagnostics", "said": exc.diagnostics[0].render()}
    except BaseException as exc:  # what the fuzzer looks for
        outcome = {"outcome": f"crash: {type(exc).__name__}: {exc}"[:300], "said": ""}
    os.write(said, json.dumps(outcome).encode())
    os._exit(0)


def serve() -> None:
    """The harness's loop: a template in, its verdict out."""
    from agentform.config.loader import load_workspace  # imported before any fork
    from agentform.core import bounds

    del load_workspace
    bounds.BUDGET_MEMORY, bounds.BUDGET_CPU_SECONDS, bounds.BUDGET_WALL_SECONDS = json.loads(
        sys.argv[1]
    )
    root = Path(tempfile.mkdtemp(prefix="agentform-fuzz-"))
    (root / "agentform.yaml").write_text("workspace: fuzz\n")
    while line := sys.stdin.readline():
        body = json.dumps(json.loads(line))  # a YAML double-quoted scalar is JSON's
        (root / "t.yaml").write_text(
            f"vaultTemplates:\n  - name: t\n    kind: login\n    description: {body}\n"
        )
        reading, writing = os.pipe()
        before = _resident()
        pid = os.fork()
        if pid == 0:
            os.close(reading)
            _load(root, writing)
        os.close(writing)
        _, status, usage = os.wait4(pid, 0)
        with os.fdopen(reading) as said:
            told = said.read()
        verdict = json.loads(told) if told else {"outcome": f"crash: status {status}", "said": ""}
        verdict["grown"] = max(0, usage.ru_maxrss * 1024 - before)
        verdict["cpu"] = usage.ru_utime + usage.ru_stime
        print(json.dumps(verdict), flush=True)
