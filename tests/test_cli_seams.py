"""The command line's seams, read from its syntax trees: a command gets its clients
and its view from the run context (cli/context.py) and nothing else.

- No command module branches on the name of a --format: the view of the format
  answers (`run.view(fmt)`); only cli/views.py, which builds the views, reads it.
- No command module builds a view (TextView, MarkdownView, JsonView) itself.
- No module but the run context opens a client or starts an event loop for one:
  both clients are paced, timed, announced and recorded there alone.
- No module spells agentform's own operations' path (`/agentform/v1`) or climbs
  out of the API's base (`/../`): the own() client is based there.
- `testing/` reaches the service only as a client does, never through `app.state`.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "agentform"
CLI = SRC / "cli"
FORMAT_NAMES = {"text", "markdown", "json", "junit"}
VIEW_CLASSES = {"TextView", "MarkdownView", "JsonView", "DocumentsOnly"}
CLIENT_MAKERS = {"open_client", "local_service", "ApiClient"}


def modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def shown(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', 0)}"


def called_names(tree: ast.AST) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            found.append((name, node))
    return found


def code_strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are not docstrings (an expression statement alone)."""
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def test_no_command_branches_on_the_format() -> None:
    found = []
    for path in modules(CLI):
        if path.name == "views.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Constant) and s.value in FORMAT_NAMES for s in sides):
                    found.append(shown(path, node))
    assert found == []


def test_no_command_builds_a_view_itself() -> None:
    found = [
        shown(path, call)
        for path in modules(CLI)
        if path.name not in ("views.py", "context.py")
        for name, call in called_names(ast.parse(path.read_text()))
        if name in VIEW_CLASSES
    ]
    assert found == []


def test_only_the_run_context_opens_a_client() -> None:
    allowed = {CLI / "context.py", CLI / "endpoint.py"}
    found = [
        f"{shown(path, call)} {name}"
        for path in modules(CLI)
        if path not in allowed
        for name, call in called_names(ast.parse(path.read_text()))
        if name in CLIENT_MAKERS
        or (name == "connect" and isinstance(call.func, ast.Name))  # api.connect's, not sqlite3's
        or (name == "run" and "asyncio" in ast.unparse(call.func))
    ]
    # `webhook listen` serves; it opens no client
    assert [f for f in found if "cli/webhook/listen.py" not in f] == []


def strings_holding(text: str) -> list[str]:
    """Where code outside the service spells `text` (the service has its own routers)."""
    return [
        shown(path, node)
        for path in modules(SRC)
        if "service" not in path.relative_to(SRC).parts
        for node in code_strings(ast.parse(path.read_text()))
        if text in str(node.value)
    ]


def test_the_own_operations_path_is_written_once() -> None:
    lines = (SRC / "rules" / "paths.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("OWN_PATH = "))
    assert strings_holding("/agentform/v1") == [f"agentform/rules/paths.py:{line}"]


def test_no_path_climbs_out_of_the_clients_base() -> None:
    assert strings_holding("/../") == []


# Known, and not yet through the seam: `test --html` (testing/pages.py, issue 29)
# renders the console's views from the test service's database, as the console's
# routes do in-process. Listed so that no other use of the state goes unseen.
STATE_READS_OF_THE_PAGES = ["with service.app.state.db.read() as conn:"] * 2


def test_testing_reaches_the_service_as_a_client_does() -> None:
    """Its clock is moved and its routing read by HTTP, as the commands do; the
    state is touched to close the database a seed template was written with, and
    by the pages of `test --html` (above)."""
    found = []
    for path in modules(SRC / "testing"):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "state"
                and getattr(node.value, "attr", getattr(node.value, "id", "")) == "app"
            ):
                found.append(f"{path.name}: {lines[node.lineno - 1].strip()}")
    expected = [f"pages.py: {line}" for line in STATE_READS_OF_THE_PAGES]
    assert sorted(found) == sorted([*expected, "session.py: app.state.db.close()"])
