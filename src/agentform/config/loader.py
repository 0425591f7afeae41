"""Loading a workspace: agentform.yaml plus every other *.yaml, rendered, parsed with
positions, validated, merged; every problem reported at once, before any API call."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agentform.config.document import SETTINGS, allowed_keys, document_model
from agentform.config.files import IGNORE_FILE, root_file, workspace_files
from agentform.config.protect import check_protected
from agentform.config.render import Renderer
from agentform.config.secret_tokens import substitute
from agentform.core.diagnostics import Diagnostic, Diagnostics, Position, relative
from agentform.core.gcpause import collector_paused
from agentform.core.problems import AT, describe, did_you_mean, own_errors
from agentform.core.secrets import MIN_SEARCHED, Secrets
from agentform.core.sensitive import Sensitive
from agentform.core.yamlpos import Located, PathKey, parse
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.base import Declared, top_level_kinds

ROOT_FILE = "agentform.yaml"
# errors about a Sensitive value that its type allowed (a length, a pattern)
SENSITIVE_OK = ("string_too_long", "string_too_short", "string_pattern_mismatch")


@dataclass
class Settings:
    workspace: str
    endpoint: str = "local"
    organization_id: str | None = None
    organization_from: str = f"organizationId in {ROOT_FILE}"  # where the id was given
    prune: list[str] = field(default_factory=list)
    protect: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Workspace:
    root: Path
    settings: Settings
    declared: dict[str, list[Declared]]
    secrets: Secrets
    inputs_digest: str
    files: list[str]
    warnings: list[Diagnostic] = field(default_factory=list)

    def sensitive_values(self) -> dict[str, str | Sensitive]:
        """The sensitive values a plan's slots name (webhook header values), by name;
        they are also among `secrets`, so every output scrubs them."""
        out: dict[str, str | Sensitive] = {}
        for kind in kinds_in_order():
            out.update(kind.sensitive_values(self.declared[kind.name]))
        return out


def load_workspace(
    root: Path,
    cli_vars: Mapping[str, Any] | None = None,
    var_files: list[Path] | None = None,
    environ: Mapping[str, str] | None = None,
    secrets: Secrets | None = None,
    unset_secrets_allowed: bool = False,
) -> Workspace:
    """The validated workspace, or DiagnosticsError listing every problem.

    `secrets`: the run's registry, filled with the values secret() finds.
    `unset_secrets_allowed`: an unset secret is not an error (export writes it
    as a placeholder); its values are Sensitive but unresolved."""
    with collector_paused():
        return _load(root, cli_vars, var_files, environ, secrets, unset_secrets_allowed)


def _load(
    root: Path,
    cli_vars: Mapping[str, Any] | None,
    var_files: list[Path] | None,
    environ: Mapping[str, str] | None,
    secrets: Secrets | None,
    unset_secrets_allowed: bool,
) -> Workspace:
    diags = Diagnostics()
    root = root.resolve()
    if not root.is_dir():
        diags.error(f"no workspace directory {root} (agentform init creates one)")
        diags.raise_if_errors()
    root_path = root_file(root)
    if root_path is None:
        diags.error(f"no {ROOT_FILE} in {root} (agentform init creates one)")
        diags.raise_if_errors()
    assert root_path is not None
    variables = _variables(root_path, cli_vars or {}, var_files or [], diags)
    renderer = Renderer(root, environ, secrets, unset_secrets_allowed)
    declared: dict[str, list[Declared]] = {k.name: [] for k in kinds_in_order()}
    settings: Settings | None = None
    digest = hashlib.sha256()
    files = workspace_files(root, var_files or [])
    for path in files:
        name = relative(path, root)
        workspace = settings.workspace if settings else None
        rendered = renderer.render(path, variables, workspace, diags)
        if rendered is None:
            continue  # values rendered from missing variables would only add noise
        digest.update(name.encode() + b"\0" + renderer.tokens.replace(rendered.text).encode())
        digest.update(b"\0")
        where = _Where(name, rendered.source_line, rendered.text)
        doc = _parse(rendered.text, where, diags)
        if doc is None:
            continue
        where.doc = doc
        if renderer.tokens.loose.search(rendered.text):  # the file calls secret()
            short: list[tuple[tuple[str | int, ...], set[str]]] = []
            doc.data, problems = substitute(doc.data, renderer.tokens, short=short)
            for at, message in problems:
                shown = renderer.tokens.replace(_dotted(at), "source")  # never the token
                diags.error(f"{shown}: {message}", where(at))
            for at, names in short:
                diags.warning(
                    f"secret {', '.join(sorted(names))} is shorter than {MIN_SEARCHED} "
                    f"characters and fills {_dotted(at)} alone: it is masked in every view, "
                    "but too short to be scrubbed from cassettes and logs",
                    where(at),
                )
        if path != root_path and doc.data and not meant_for_agentform(doc.data):
            diags.error(
                "not a workspace file: none of its keys is a kind or a setting "
                f"(if it is not one, list it in {IGNORE_FILE})",
                Position(name, 1, 1),
            )
            continue
        if path != root_path:
            for key in SETTINGS:
                if key in doc.data:
                    diags.error(
                        f"'{key}' is a workspace setting: it belongs in {root_path.name}",
                        where((key,)),
                    )
        model = _validate(doc, where, diags)
        if model is None:
            continue
        if path == root_path:
            settings = _settings(model, name, diags)
        for kind in top_level_kinds():
            for i, item in enumerate(getattr(model, kind.name) or []):
                written = Declared(item, where((kind.name, i)), locate=where.inside(kind.name, i))
                parent, read = kind.expand(written, path.parent, diags)
                for extra, content in read:
                    digest.update(relative(extra, root).encode() + b"\0" + content + b"\0")
                declared[kind.name].append(parent)
                _declare_children(kind, parent, (kind.name, i), where, declared, diags)
        where.doc = None  # positions asked for later parse the text again (errors only)
    _check_unique(declared, diags)
    if settings is not None:
        check_protected(settings.protect, declared, diags)
    for kind in kinds_in_order():
        kind.check(declared[kind.name], diags)
        for name, value in kind.sensitive_values(declared[kind.name]).items():
            renderer.secrets.add(name, value, marks=False)  # scrubbed as secret() values are
    diags.raise_if_errors()
    assert settings is not None
    return Workspace(
        root,
        settings,
        declared,
        renderer.secrets,
        digest.hexdigest(),
        [relative(f, root) for f in files],
        diags.warnings,
    )


def _known_keys() -> set[str]:
    return set(SETTINGS) | {k.name for k in top_level_kinds()}


def meant_for_agentform(data: dict[str, Any]) -> bool:
    """Whether a file has a key that is, or is a misspelling of, a kind or a setting
    (a misspelt one is then reported as an unknown key, with its suggestion)."""
    known = _known_keys()
    return any(str(k) in known or did_you_mean(str(k), known) for k in data)


def _declare_children(
    kind: Kind,
    parent: Declared,
    path: tuple[str | int, ...],
    where: _Where,
    declared: dict[str, list[Declared]],
    diags: Diagnostics,
) -> None:
    """A parent's children (attachments of a webhook) become declarations of their kind."""
    for field_name, child_kind in kind.children.items():
        items = getattr(parent.model, field_name, None) or []
        if items and not parent.present:
            diags.error(
                f"{kind.label} {getattr(parent.model, 'name', '')} is declared absent: "
                f"its {field_name} cannot be declared",
                where((*path, field_name)),
            )
            continue
        for j, child in enumerate(items):
            at = (*path, field_name, j)
            child_declared = Declared(child, where(at), parent, locate=where.inside(*at))
            declared[child_kind].append(child_declared)


class _Where:
    """Positions in one file: lines of the rendered text mapped to the file's lines.
    The parsed document is kept while the file is loaded; a position asked for
    later (a plan-time error inside an object) parses the rendered text again."""

    def __init__(self, file: str, source_line: Callable[[int], int], text: str) -> None:
        self.file = file
        self.source_line = source_line
        self.text = text
        self.doc: Located | None = None

    def line(self, line: int, column: int = 1) -> Position:
        return Position(self.file, self.source_line(line), column)

    def __call__(self, path: PathKey, at_key: bool = True) -> Position:
        if self.doc is None:
            self.doc = parse(self.text)
        line, column = self.doc.where(path, at_key=at_key)
        return self.line(line, column)

    def inside(self, *base: str | int) -> Callable[[PathKey], Position]:
        """Where values inside the object at `base` were written (by their path in it)."""
        return lambda path: self((*base, *path), at_key=False)


def _dotted(path: PathKey) -> str:
    return ".".join(str(p) for p in path)


def _variables(
    root_path: Path, cli_vars: Mapping[str, Any], var_files: list[Path], diags: Diagnostics
) -> dict[str, Any]:
    """vars of agentform.yaml, then --var-file files, then --var (later wins)."""
    merged: dict[str, Any] = {}
    try:
        raw = yaml.safe_load(root_path.read_text()) or {}
        if isinstance(raw, dict) and isinstance(raw.get("vars"), dict):
            merged.update(raw["vars"])
    except yaml.YAMLError:
        pass  # reported with its position when the file is parsed
    for path in var_files:
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except OSError as exc:
            diags.error(f"cannot read var file: {exc.strerror or exc}", Position(str(path)))
            continue
        except yaml.YAMLError as exc:
            message, line_column = _yaml_problem(exc)
            at = Position(str(path), *line_column) if line_column else Position(str(path))
            diags.error(f"invalid YAML in var file: {message}", at)
            continue
        if not isinstance(data, dict):
            diags.error("a var file must be a mapping of names to values", Position(str(path)))
            continue
        merged.update(data)
    merged.update(cli_vars)
    return merged


def _parse(text: str, where: _Where, diags: Diagnostics) -> Located | None:
    try:
        doc = parse(text)
    except yaml.YAMLError as exc:
        message, line_column = _yaml_problem(exc)
        position = where.line(*line_column) if line_column else Position(where.file)
        diags.error(f"invalid YAML: {message}", position)
        return None
    for key, line, col in doc.duplicates:
        diags.error(f"duplicate key '{key}'", where.line(line, col))
    if not isinstance(doc.data, dict):
        diags.error("a workspace file must be a mapping of kind lists", where.line(1, 1))
        return None
    return doc


def _yaml_problem(exc: yaml.YAMLError) -> tuple[str, tuple[int, int] | None]:
    """PyYAML's problem in one line, and its (line, column) from 1 when it has one
    (its own text adds several lines of context)."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        message = str(exc.problem or exc.context)
        return message, (mark.line + 1, mark.column + 1) if mark else None
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__, None


def _validate(doc: Located, where: _Where, diags: Diagnostics) -> Any:
    try:
        return document_model().model_validate(doc.data)
    except ValidationError as exc:
        for err in own_errors(exc.errors()):  # not a list emptied by its own bad entries
            loc = tuple(err["loc"])
            for part, detail in (err.get("ctx") or {}).get(AT, ()):  # a rule's, part by part
                inner = (*loc, *part)
                diags.error(f"{'.'.join(str(p) for p in inner)}: {detail}", where(inner, True))
            if not (err.get("ctx") or {}).get(AT):
                at_key = err["type"] == "extra_forbidden"
                diags.error(_message(err, loc), where(loc, at_key=at_key))
        return None


def _message(err: Any, loc: tuple[Any, ...]) -> str:
    where = ".".join(str(p) for p in loc)
    if isinstance(err.get("input"), Sensitive) and err["type"] not in SENSITIVE_OK:
        return (
            f"{where}: a secret() value cannot be used here: only in text fields "
            "(descriptions, hints, instructions, members, header values), not in names, "
            "labels, keys or choices"
        )
    if err["type"] == "extra_forbidden":  # the path ends with the key: named once
        return f"{where}: unknown key" + did_you_mean(str(loc[-1]), allowed_keys(loc))
    if err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        # pydantic's message names the model class, which is no concern of the files
        return f"{where}: should be a mapping (key: value lines), not {_kind_of(err.get('input'))}"
    return f"{where}: {describe(err, where)}"  # the service's words, its "did you mean"


def _kind_of(value: Any) -> str:
    """What a YAML value is, in the files' terms."""
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return "a single value" if not isinstance(value, dict) else "a mapping"


def _settings(model: Any, name: str, diags: Diagnostics) -> Settings | None:
    if not model.workspace:
        diags.error(
            f"'workspace' (the workspace's name) is required in {ROOT_FILE}", Position(name, 1, 1)
        )
        return None
    return Settings(
        workspace=model.workspace,
        endpoint=model.endpoint or "local",
        organization_id=str(model.organizationId) if model.organizationId else None,
        prune=list(model.prune or []),
        protect=dict(model.protect or {}),
    )


def _check_unique(declared: dict[str, list[Declared]], diags: Diagnostics) -> None:
    for kind, items in declared.items():
        first: dict[Any, Declared] = {}
        for item in items:
            key = Kind.registry[kind].key_of(item)
            if key in first:
                diags.error(
                    f"{kind}: '{key}' is declared twice (first at {first[key].position})",
                    item.position,
                )
            else:
                first[key] = item
