"""The contract both halves enforce is written once, in rules/ (read from the AST).

A field both halves model for one resource (the service's `service/models/<r>.py`
and the provisioner's `kinds/` modules of that resource) must take its limits
(`max_length=`, `min_length=`, `le=`, ...) and its default from rules/, never
from a literal: two literals are two places that drift apart. And no number
that rules/ names (a pool's name length 255, 100 ids per member call, ...)
may be written as a literal in the models or the kinds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import agentform

SRC = Path(agentform.__file__).parent
MODELS, KINDS, RULES = SRC / "service" / "models", SRC / "kinds", SRC / "rules"

# Each resource: its service model module and the kinds modules that model it.
RESOURCES = {
    "profile_sets": ("profile_sets", "profile_pools", "profile_groups"),
    "vault_templates": ("vault_templates",),
    "webhooks": ("webhooks", "webhook_attachments"),
    "batches": ("batches", "batch_model", "batch_items"),
}
LIMITS = {"max_length", "min_length", "le", "ge", "lt", "gt", "multiple_of"}


@dataclass(frozen=True)
class Literal:
    module: str
    line: int
    field: str
    what: str  # "max_length=255", "default 'v2'"


def _literal_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _literal_default(node: ast.AST | None) -> object:
    """The value a field's default is written as, when it is a literal (not None/...)."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Field":
        first = node.args[0] if node.args else None
        keyword = next((k.value for k in node.keywords if k.arg == "default"), None)
        node = keyword or first
    if isinstance(node, ast.Constant) and node.value not in (None, Ellipsis):
        return node.value
    return None


def field_literals(source: str, module: str) -> Iterator[Literal]:
    """Every literal limit or default of a class field in `source`."""
    for cls in ast.walk(ast.parse(source)):
        if not isinstance(cls, ast.ClassDef):
            continue
        for statement in cls.body:
            if not (
                isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
            ):
                continue
            field = statement.target.id
            for part in (statement.annotation, statement.value):
                for node in ast.walk(part) if part is not None else ():
                    if (
                        isinstance(node, ast.keyword)
                        and node.arg in LIMITS
                        and _literal_number(node.value)
                    ):
                        what = f"{node.arg}={ast.literal_eval(node.value)}"
                        yield Literal(module, statement.lineno, field, what)
            default = _literal_default(statement.value)
            if default is not None:
                yield Literal(module, statement.lineno, field, f"default {default!r}")


def rules_numbers() -> set[int | float]:
    """The numbers rules/ names at module level (above 1: 0 and 1 say little)."""
    found: set[int | float] = set()
    for path in RULES.glob("*.py"):
        for statement in ast.parse(path.read_text(encoding="utf-8")).body:
            value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
            if not isinstance(value, ast.Constant) or not _literal_number(value):
                continue
            if isinstance(value.value, int | float) and value.value > 1:
                found.add(value.value)
    return found


def numbers_in(source: str, module: str, named: set[int | float]) -> Iterator[Literal]:
    """Every literal in `source` equal to a number rules/ names."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and _literal_number(node) and node.value in named:
            yield Literal(module, node.lineno, "", repr(node.value))


def shared_duplicates(
    service: list[Literal], kinds: list[Literal], service_fields: set[str], kind_fields: set[str]
) -> list[Literal]:
    """The literals on a field that both halves model."""
    both = service_fields & kind_fields
    return [lit for lit in [*service, *kinds] if lit.field in both]


def class_fields(source: str) -> set[str]:
    return {
        statement.target.id
        for cls in ast.walk(ast.parse(source))
        if isinstance(cls, ast.ClassDef)
        for statement in cls.body
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
    }


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def duplicates_of(resource: str, service_source: str, kind_sources: dict[str, str]) -> list[str]:
    service = list(field_literals(service_source, f"service/models/{resource}.py"))
    kinds = [lit for name, src in kind_sources.items() for lit in field_literals(src, name)]
    kind_fields = set().union(*(class_fields(src) for src in kind_sources.values()))
    found = shared_duplicates(service, kinds, class_fields(service_source), kind_fields)
    return [f"{lit.module}:{lit.line}: {lit.field}: {lit.what}" for lit in found]


# -- the checks ---------------------------------------------------------------------


def test_a_field_both_halves_model_takes_its_limits_and_default_from_rules() -> None:
    found = []
    for resource, kind_modules in RESOURCES.items():
        kind_sources = {f"kinds/{m}.py": _read(KINDS / f"{m}.py") for m in kind_modules}
        found += duplicates_of(resource, _read(MODELS / f"{resource}.py"), kind_sources)
    assert not found, "write it once, in rules/:\n" + "\n".join(found)


def test_no_number_rules_names_is_written_again_in_the_models_or_the_kinds() -> None:
    named = rules_numbers()
    assert {255, 100}.issubset(named)  # the name length, the ids per member call
    found = [
        f"{lit.module}:{lit.line}: {lit.what}"
        for folder, prefix in ((MODELS, "service/models"), (KINDS, "kinds"))
        for path in sorted(folder.glob("*.py"))
        for lit in numbers_in(path.read_text(encoding="utf-8"), f"{prefix}/{path.name}", named)
    ]
    assert not found, "use the name rules/ gives it:\n" + "\n".join(found)


# -- the checks catch the duplicates they were written for ----------------------------

PLANTED_SERVICE = """
class ProfileSetCreate(Request):
    name: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    selectionStrategy: SelectionStrategy = "least_recently_used"
    allowConcurrentUse: bool = False
    description: str = Field(max_length=1000)  # the service's alone: not shared

class MembersRequest(Request):
    profileIds: Annotated[list[Id], Field(min_length=1, max_length=100)]
"""

PLANTED_KIND = """
class ProfileSetDesired(DesiredModel):
    name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH)
    members: list[Text] | None = Field(None, description="ids")

class ProfileSetState(State):
    selectionStrategy: Strategy = "least_recently_used"
    allowConcurrentUse: bool = DEFAULT_ALLOW_CONCURRENT_USE

def chunks(items: list[str], size: int = 100) -> list[list[str]]:
    return []
"""


def test_the_shared_field_check_catches_planted_duplicates() -> None:
    found = duplicates_of("profile_sets", PLANTED_SERVICE, {"kinds/profile_sets.py": PLANTED_KIND})
    assert found == [
        "service/models/profile_sets.py:3: name: min_length=1",
        "service/models/profile_sets.py:3: name: max_length=255",
        "service/models/profile_sets.py:4: selectionStrategy: default 'least_recently_used'",
        "service/models/profile_sets.py:5: allowConcurrentUse: default False",
        "kinds/profile_sets.py:3: name: min_length=1",
        "kinds/profile_sets.py:7: selectionStrategy: default 'least_recently_used'",
    ]


def test_the_number_check_catches_planted_numbers() -> None:
    named: set[int | float] = {255, 100}
    service = [lit.what for lit in numbers_in(PLANTED_SERVICE, "m", named)]
    kind = [lit.what for lit in numbers_in(PLANTED_KIND, "k", named)]
    assert sorted(service) == ["100", "255"]
    assert kind == ["100"]  # chunks' size: the ids per member call
