"""Policy files to compiled rules: YAML with positions, the rule format, each CEL
expression compiled once, and the names it selects checked against the values a
rule sees (a field the kind does not have is an error at its file:line:column with a
"did you mean"). Every problem of every file is reported together.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from pydantic import ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.problems import describe, did_you_mean, own_errors
from agentform.core.yamlpos import Located, PathKey, parse, problem_of
from agentform.kinds.base import Kind
from agentform.policies.expressions import CelError, compile_expression, line_column
from agentform.policies.names import fields_read, object_reads, unknown_names
from agentform.policies.rules import MAX_RULES, Message, PolicyFile, Rule, RuleModel, template_parts
from agentform.policies.sources import Source

_TEXT_HINT = (
    " (a message is a CEL expression: quote text, 'like this', or write text with "
    "{{ }} around the values in it)"
)


@dataclass(frozen=True)
class PolicySet:
    rules: tuple[Rule, ...]
    files: dict[str, str]  # file -> sha256 of its text

    @property
    def by_name(self) -> dict[str, Rule]:
        return {r.name: r for r in self.rules}


def load_policies(sources: list[Source]) -> PolicySet:
    """The rules of `sources`; a DiagnosticsError listing every problem."""
    diags = Diagnostics()
    rules: list[Rule] = []
    for source in sources:
        rules += _load_file(source, diags)
    seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.name in seen:
            first = seen[rule.name]
            diags.error(
                f"rule {rule.name} is also defined at {first.file}:{first.line}",
                Position(rule.file, rule.line, rule.column),
            )
        seen.setdefault(rule.name, rule)
    diags.raise_if_errors()
    return PolicySet(tuple(rules), {s.name: s.digest for s in sources})


def _load_file(source: Source, diags: Diagnostics) -> list[Rule]:
    if source.problem is not None:  # said with every other file's problems
        diags.error(source.problem, Position(source.name))
        return []
    try:
        doc = parse(source.text)
    except yaml.YAMLError as exc:
        message, at = problem_of(exc)
        diags.error(f"invalid YAML: {message}", Position(source.name, *(at or (0, 0))))
        return []
    for key, line, col in doc.duplicates:
        diags.error(f"duplicate key '{key}'", Position(source.name, line, col))
    if not isinstance(doc.data, dict):
        diags.error("a policy file is a mapping with a `rules:` list", Position(source.name, 1, 1))
        return []
    rules: list[Rule] = []
    for index, model in _models(doc, source, diags):
        if (rule := _rule(model, index, doc, source, diags)) is not None:
            rules.append(rule)
    return rules


def _models(doc: Located, source: Source, diags: Diagnostics) -> list[tuple[int, RuleModel]]:
    """Each rule that has the format, by its index; every problem of the others."""
    try:
        PolicyFile.model_validate({**doc.data, "rules": []})
    except ValidationError as exc:
        _report(exc, (), doc, source, diags)
        return []
    written = doc.data.get("rules")
    if not isinstance(written, list):
        diags.error("rules: a list of rules", Position(source.name, *doc.where(("rules",))))
        return []
    if len(written) > MAX_RULES:
        diags.error(
            f"rules: more than {MAX_RULES} rules", Position(source.name, *doc.where(("rules",)))
        )
        return []
    models = []
    for index, data in enumerate(written):
        try:
            models.append((index, RuleModel.model_validate(data)))
        except ValidationError as exc:
            _report(exc, ("rules", index), doc, source, diags)
    return models


def _report(
    exc: ValidationError, prefix: PathKey, doc: Located, source: Source, diags: Diagnostics
) -> None:
    for err in own_errors(exc.errors()):
        loc = (*prefix, *err["loc"])
        where = ".".join(str(p) for p in loc)
        at_key = err["type"] == "extra_forbidden"
        text = describe(err, where, _known_keys(loc))
        diags.error(f"{where}: {text}", Position(source.name, *doc.where(loc, at_key)))


def _known_keys(loc: PathKey) -> list[str]:
    if len(loc) >= 3 and loc[2] == "match":
        return ["kinds", "actions", "workspaces", "environments"]
    return list(RuleModel.model_fields) if len(loc) >= 2 else ["rules"]


def _rule(
    model: RuleModel, index: int, doc: Located, source: Source, diags: Diagnostics
) -> Rule | None:
    base: PathKey = ("rules", index)
    before = len(diags.errors)
    _check_kinds(model, base, doc, source, diags)
    pieces: list[tuple[str, int, PathKey]] = [(model.deny, 0, (*base, "deny"))]
    message: list[str | None] = []  # None: the next compiled expression
    for part in template_parts(model.message):
        if isinstance(part, str):
            message.append(part)
        else:
            pieces.append((part[0], part[1], (*base, "message")))
            message.append(None)
    compiled = []
    for text, offset, path in pieces:

        def at(inner: int, offset: int = offset, path: PathKey = path) -> Position:
            return Position(source.name, *_expression_at(doc, path, source.text, offset + inner))

        try:
            compiled.append(compile_expression(text))
        except CelError as exc:
            where = _offset_of(text, exc.line, exc.column)
            hint = _TEXT_HINT if path[-1] == "message" and "{{" not in model.message else ""
            diags.error(f"{path[-1]}: {exc}{hint}", at(where))
            continue
        shown = path[-1] == "message"
        for problem, inner in unknown_names(text, model.scope, model.match.kinds, shown):
            diags.error(f"{path[-1]}: {problem}", at(inner))
        if path[-1] == "deny" and compiled[-1].gives not in ("bool", "dyn"):
            diags.error(f"deny gives {compiled[-1].gives}, not true or false", at(0))
    if len(diags.errors) > before:
        return None
    deny, parts = compiled[0], iter(compiled[1:])
    return Rule(
        name=model.name,
        description=model.description,
        level=model.level,
        scope=model.scope,
        match=model.match,
        deny=deny,
        message=Message(tuple(next(parts) if p is None else p for p in message)),
        file=source.name,
        line=doc.where(base, at_key=False)[0],
        column=doc.where(base, at_key=False)[1],
        fields=fields_read(model.deny),
        reads=object_reads(text for text, _, _ in pieces),
        source=model.model_dump(),
    )


def _check_kinds(
    model: RuleModel, base: PathKey, doc: Located, source: Source, diags: Diagnostics
) -> None:
    known = sorted(Kind.registry)
    for i, kind in enumerate(model.match.kinds):
        if kind not in Kind.registry:
            where = doc.where((*base, "match", "kinds", i), at_key=False)
            diags.error(
                f"match.kinds: unknown kind '{kind}'{did_you_mean(kind, known)}",
                Position(source.name, *where),
            )


def _offset_of(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def _expression_at(doc: Located, path: PathKey, source: str, index: int) -> tuple[int, int]:
    """Where in the file (`source`) the character at `index` of the scalar at `path`
    is: exact for plain, quoted and block scalars without escapes or folding."""
    node = _node(doc.root, path)
    if not isinstance(node, ScalarNode):
        return doc.where(path, at_key=False)
    line, column = line_column(node.value, index)
    start = node.start_mark
    if node.style in ("|", ">"):
        lines = source.split("\n")
        first = lines[start.line + 1] if start.line + 1 < len(lines) else ""
        return start.line + 1 + line, len(first) - len(first.lstrip(" ")) + column
    if line == 1:
        return start.line + 1, start.column + column + (node.style in ("'", '"'))
    return start.line + line, column


def _node(node: Node | None, path: PathKey) -> Node | None:
    for part in path:
        if isinstance(node, MappingNode):
            node = next((v for k, v in reversed(node.value) if k.value == str(part)), None)
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
    return node
