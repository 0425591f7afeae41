"""The layers of agentform, and no import across them upwards or in a circle.

Every module under src/agentform is read as a syntax tree, so imports inside
functions (made there to keep startup fast) and under TYPE_CHECKING count as
much as those at the top: each one is a dependency all the same. A failure
names each offending import as `module -> imported (file:line)`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).parents[1] / "src"


@dataclass(frozen=True)
class Layers:
    """Who may import whom, by the first name under the package (`core`, `cli`...)."""

    stack: tuple[str, ...]  # bottom to top: each may import those below it
    beside: dict[str, tuple[str, ...]] = field(default_factory=dict)  # off the stack
    entry: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the package's own modules
    root: str = "agentform"  # the package whose layers these are

    def layer(self, module: str) -> str:
        """The first name under `root`: in `agentform`, `agentform.engine.apply` is in
        `engine`; in `agentform.service`, `agentform.service.store.jobs` is in `store`."""
        parts = module.split(".")
        depth = len(self.root.split("."))
        return parts[depth] if len(parts) > depth else ""

    def holds(self, module: str) -> bool:
        return module == self.root or module.startswith(self.root + ".")

    def may_import(self, importer: str, imported: str) -> bool:
        if importer == imported or importer == self.stack[-1]:
            return True  # within a layer; the top layer wires everything together
        if importer in self.entry:
            return imported in self.entry[importer]
        if importer in self.beside:
            return imported in self.beside[importer]
        if importer in self.stack and imported in self.stack:
            return self.stack.index(imported) < self.stack.index(importer)
        return False


AGENTFORM = Layers(
    # config sits above api: the files' `endpoint:` is checked by the client's own rule
    # of what an endpoint is (api/endpoint_url.py, which parses it as httpx does).
    # policies judge a plan the engine made; the views show the verdicts the plan holds.
    stack=(
        "core",
        "rules",
        "api",
        "kinds",
        "config",
        "engine",
        "policies",
        "output",
        "repository",
        "cli",
    ),
    # The embedded service enforces the shared rules and never the provisioner's code.
    # `agentform test` drives the provisioner's engine against the embedded service:
    # below the command line, above both halves.
    beside={
        "service": ("core", "rules"),
        "testing": (
            "core",
            "rules",
            "api",
            "kinds",
            "config",
            "engine",
            "policies",
            "output",
            "service",
        ),
    },
    # `agentform` itself holds the version and imports nothing; `python -m` runs the CLI.
    entry={"": (), "__main__": ("cli",)},
)


@dataclass(frozen=True)
class Import:
    module: str
    imported: str
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.module} -> {self.imported} ({self.file}:{self.line})"


def modules_of(src: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `src`, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imports_of(src: Path, package: str) -> list[Import]:
    """Every import of one module of `package` by another, wherever it is written."""
    modules = modules_of(src, package)
    found = []
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _names(node, module, is_package, modules):
                if name == package or name.startswith(package + "."):
                    found.append(Import(module, name, path.relative_to(src.parent), node.lineno))
    return found


def _names(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict[str, Path]
) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative (ruff bans them here, but a checker should not miss one)
        anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
        base = ".".join([*anchor, base] if base else anchor)
    # `from pkg import mod` imports the module mod; `from mod import name`, mod
    named = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return list(dict.fromkeys(named))


def layer_of(module: str) -> str:
    """The first name under the package: `agentform.engine.apply` is in `engine`."""
    return AGENTFORM.layer(module)


def upward(imports: Iterable[Import], layers: Layers) -> list[Import]:
    """The imports between two modules of `layers.root` that point up a layer, or to a
    layer the importer may not use."""
    return [
        i
        for i in imports
        if layers.holds(i.module)
        and layers.holds(i.imported)
        and not layers.may_import(layers.layer(i.module), layers.layer(i.imported))
    ]


def cycles(imports: Iterable[Import], packages: set[str]) -> list[list[Import]]:
    """The imports that close a cycle between sibling packages (`a.b` and `a.c`, not a
    package and one inside it): for each cycle, the imports between its packages."""
    arrows: dict[tuple[str, str], list[Import]] = {}
    for i in imports:
        pair = _siblings(_package_of(i.module, packages), _package_of(i.imported, packages))
        if pair:
            arrows.setdefault(pair, []).append(i)
    graph: dict[str, set[str]] = {}
    for a, b in arrows:
        graph.setdefault(a, set()).add(b)
    return [
        [i for (a, b), found in sorted(arrows.items()) if a in ring and b in ring for i in found]
        for ring in _rings(graph)
    ]


def module_cycles(imports: Iterable[Import], unchecked: tuple[str, ...] = ()) -> list[list[Import]]:
    """The imports that close a circle between modules, for each circle; a circle
    all of whose modules are inside an `unchecked` package is left out."""
    arrows: dict[tuple[str, str], list[Import]] = {}
    for i in imports:
        if i.module != i.imported:
            arrows.setdefault((i.module, i.imported), []).append(i)
    graph: dict[str, set[str]] = {}
    for a, b in arrows:
        graph.setdefault(a, set()).add(b)

    def inside(module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in unchecked)

    return [
        [i for (a, b), found in sorted(arrows.items()) if a in ring and b in ring for i in found]
        for ring in _rings(graph)
        if not all(inside(m) for m in ring)
    ]


def _package_of(module: str, packages: set[str]) -> str:
    return module if module in packages else module.rpartition(".")[0]


def _siblings(a: str, b: str) -> tuple[str, str] | None:
    """The two sibling packages that hold `a` and `b`, or None when one holds the other."""
    left, right = a.split("."), b.split(".")
    common = 0
    while common < min(len(left), len(right)) and left[common] == right[common]:
        common += 1
    if common == len(left) or common == len(right):
        return None
    return ".".join(left[: common + 1]), ".".join(right[: common + 1])


def _rings(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected sets of more than one node (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    rings: list[set[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            ring = set()
            while True:
                member = stack.pop()
                ring.add(member)
                if member == node:
                    break
            if len(ring) > 1:
                rings.append(ring)

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return rings


def shown(found: Iterable[Import]) -> str:
    return "\n".join(str(i) for i in found)


def packages_of(src: Path, package: str) -> set[str]:
    return {m for m, path in modules_of(src, package).items() if path.name == "__init__.py"}


SERVICE_LAYERS = Layers(
    # The service's own order, bottom up (docs/service/internals.md#layers): the
    # clock under the store (which stamps rows with it), the runtime on the store,
    # each behaviour on the runtime, the routes on `http` (the gate, auth, paging
    # every route is built on); the modules that wire it all at the top: the job
    # handlers' registry, the app, and what runs an app (uvicorn, the OpenAPI export).
    stack=(
        "models",
        "errors",
        "start_errors",
        "settings",
        "clock",
        "store",
        "runtime",
        "delivery",
        "executions",
        "batches",
        "upkeep",
        "startup",
        "http",
        "routes",
        "console",  # pages on the stores and the API's own operations (routes)
        "job_handlers",
        "app",
        "openapi_export",
        "server",
    ),
    # The package names its entry points for those who import it, loaded on first use.
    entry={"": ("app", "startup")},
    root="agentform.service",
)


# -- agentform ---------------------------------------------------------------------


@functools.cache
def agentform_imports() -> list[Import]:
    """Read once per process, by the first test that needs it (not at collection, where
    every xdist worker read all of src again, 0.6 s each, whatever tests it ran)."""
    return imports_of(SRC, "agentform")


MODULE_CIRCLES_UNCHECKED: tuple[str, ...] = ()
"""Packages whose modules are not checked for circles between modules: none, the
service's included since its own order was made (issue 25)."""


def test_the_reading_finds_the_imports_written_in_functions_too() -> None:
    """Guards the checker's input: a function-level import the CLI makes to start fast."""
    assert any(
        i.module == "agentform.cli.context" and i.imported == "agentform.cli.endpoint"
        for i in agentform_imports()
    )
    assert {layer_of(m) for m in modules_of(SRC, "agentform")} >= {
        *AGENTFORM.stack,
        *AGENTFORM.beside,
    }


def test_no_import_points_up_a_layer() -> None:
    found = upward(agentform_imports(), AGENTFORM)
    assert not found, "imports up a layer (layers in tests/test_layering.py):\n" + shown(found)


def test_no_import_points_up_the_services_own_order() -> None:
    found = upward(agentform_imports(), SERVICE_LAYERS)
    assert not found, "imports up the service's order (SERVICE_LAYERS):\n" + shown(found)


def test_every_module_of_the_service_has_its_place_in_its_order() -> None:
    placed = {*SERVICE_LAYERS.stack, *SERVICE_LAYERS.entry}
    found = {
        SERVICE_LAYERS.layer(m) for m in modules_of(SRC, "agentform") if SERVICE_LAYERS.holds(m)
    }
    assert found == placed


def test_no_import_cycle_between_packages() -> None:
    found = cycles(agentform_imports(), packages_of(SRC, "agentform"))
    assert not found, "import cycles:\n" + "\n\n".join(shown(ring) for ring in found)


def test_no_import_circle_between_modules() -> None:
    """Function-level and TYPE_CHECKING imports count: each is a dependency all the
    same (core/errors <-> core/diagnostics ran through a TYPE_CHECKING import)."""
    found = module_cycles(agentform_imports(), MODULE_CIRCLES_UNCHECKED)
    assert not found, "import circles:\n" + "\n\n".join(shown(ring) for ring in found)


# -- the checker, on a package planted with what it must catch -------------------


def plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


PLANTED = Layers(stack=("low", "high"), beside={"side": ("low",)}, entry={"": ()}, root="pkg")
CLEAN = {
    "pkg/__init__.py": "",
    "pkg/low/__init__.py": "",
    "pkg/low/base.py": "X = 1\n",
    "pkg/high/__init__.py": "from pkg.low.base import X\n",
    "pkg/side/__init__.py": "",
    "pkg/side/one/__init__.py": "",
    "pkg/side/one/a.py": "from pkg.low import base\n",
    "pkg/side/two/__init__.py": "",
    "pkg/side/two/b.py": "import pkg.side.one.a\n",
}


def test_the_checker_passes_a_package_that_keeps_its_layers(tmp_path: Path) -> None:
    src = plant(tmp_path, CLEAN)
    found = imports_of(src, "pkg")
    assert {(i.module, i.imported) for i in found} == {
        ("pkg.high", "pkg.low.base"),
        ("pkg.side.one.a", "pkg.low.base"),
        ("pkg.side.two.b", "pkg.side.one.a"),
    }
    assert upward(found, PLANTED) == []
    assert cycles(found, packages_of(src, "pkg")) == []


def test_the_checker_catches_a_planted_upward_arrow(tmp_path: Path) -> None:
    """An import in a function, up the stack, and one from beside into the stack's top."""
    src = plant(
        tmp_path,
        {
            **CLEAN,
            "pkg/low/base.py": "X = 1\n\n\ndef late():\n    from pkg.high import thing\n",
            "pkg/side/one/a.py": "from pkg.low import base\nimport pkg.high\n",
        },
    )
    found = upward(imports_of(src, "pkg"), PLANTED)
    assert [str(i) for i in found] == [
        f"pkg.low.base -> pkg.high ({Path(tmp_path.name, 'pkg/low/base.py')}:5)",
        f"pkg.side.one.a -> pkg.high ({Path(tmp_path.name, 'pkg/side/one/a.py')}:2)",
    ]


def test_the_checker_catches_a_planted_cycle(tmp_path: Path) -> None:
    """side.one -> side.two -> side.one, the second arrow a relative import."""
    src = plant(
        tmp_path,
        {**CLEAN, "pkg/side/one/c.py": "from ...side.two import b\n"},
    )
    found = cycles(imports_of(src, "pkg"), packages_of(src, "pkg"))
    assert [[(i.module, i.imported, i.line) for i in ring] for ring in found] == [
        [("pkg.side.one.c", "pkg.side.two.b", 1), ("pkg.side.two.b", "pkg.side.one.a", 1)]
    ]
    assert upward(imports_of(src, "pkg"), PLANTED) == []  # a cycle within one layer


def test_the_checker_catches_a_planted_circle_between_modules(tmp_path: Path) -> None:
    """Two modules of one package, one import under TYPE_CHECKING, one in a function;
    the same circle inside an unchecked package is left out."""
    circle = {
        "a.py": "import typing\n\nif typing.TYPE_CHECKING:\n    from pkg.low.b import Y\n",
        "b.py": "def late():\n    from pkg.low import a\n",
    }
    src = plant(tmp_path, {**CLEAN, **{f"pkg/low/{n}": t for n, t in circle.items()}})
    found = module_cycles(imports_of(src, "pkg"))
    assert [[(i.module, i.imported, i.line) for i in ring] for ring in found] == [
        [("pkg.low.a", "pkg.low.b", 4), ("pkg.low.b", "pkg.low.a", 2)]
    ]
    assert module_cycles(imports_of(src, "pkg"), ("pkg.low",)) == []
    assert module_cycles(imports_of(plant(tmp_path / "clean", CLEAN), "pkg")) == []


def test_the_checker_reads_the_layers_of_a_package_inside_the_package(tmp_path: Path) -> None:
    """`pkg.side`'s own order: `two` above `one`; an import from `one` up to `two` is
    caught, and imports leaving `pkg.side` are none of its business."""
    src = plant(
        tmp_path, {**CLEAN, "pkg/side/one/c.py": "import pkg.side.two.b\nimport pkg.high\n"}
    )
    inner = Layers(stack=("one", "two"), root="pkg.side")
    found = upward(imports_of(src, "pkg"), inner)
    assert [(i.module, i.imported) for i in found] == [("pkg.side.one.c", "pkg.side.two.b")]


CONSOLE = "agentform.service.console"


def test_the_console_is_a_layer_of_its_own_on_top_of_the_service() -> None:
    """The console reads the stores and calls the API's own operations; nothing of the
    service but the app that mounts it imports the console. `agentform test --html`
    (testing/pages.py) renders its views into static pages."""
    into = [
        i
        for i in agentform_imports()
        if i.imported.startswith(CONSOLE)
        and not i.module.startswith(CONSOLE)
        and i.module not in ("agentform.service.app", "agentform.testing.pages")
    ]
    assert not into, "imports of the console:\n" + shown(into)
    out = [
        i
        for i in agentform_imports()
        if i.module.startswith(CONSOLE)
        and not i.imported.startswith(
            (CONSOLE, "agentform.service", "agentform.rules", "agentform.core")
        )
    ]
    assert not out, "the console imports outside the service:\n" + shown(out)
