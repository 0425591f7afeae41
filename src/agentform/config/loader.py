"""Loading a workspace: agentform.yaml plus every other *.yaml, rendered, parsed with
positions, validated, merged; every problem reported at once, before any API call."""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..gcpause import collector_paused
from ..kinds import Kind, kinds_in_order
from ..kinds.base import Declared, top_level_kinds
from .diagnostics import Diagnostic, Diagnostics, Position, relative
from .document import SETTINGS, allowed_keys, document_model
from .files import IGNORE_FILE, root_file, workspace_files
from .render import Renderer, Secrets
from .yamlpos import Located, parse

ROOT_FILE = "agentform.yaml"


@dataclass
class Settings:
    workspace: str
    endpoint: str = "local"
    organization_id: str | None = None
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

    def sensitive_values(self) -> dict[str, str]:
        """The sensitive values a plan's slots name (webhook header values), by name;
        they are also among `secrets`, so every output scrubs them."""
        out: dict[str, str] = {}
        for kind in kinds_in_order():
            out.update(kind.sensitive_values(self.declared[kind.name]))
        return out


def load_workspace(
    root: Path,
    cli_vars: Mapping[str, Any] | None = None,
    var_files: list[Path] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Workspace:
    """The validated workspace, or DiagnosticsError listing every problem."""
    with collector_paused():
        return _load(root, cli_vars, var_files, environ)


def _load(
    root: Path,
    cli_vars: Mapping[str, Any] | None,
    var_files: list[Path] | None,
    environ: Mapping[str, str] | None,
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
    renderer = Renderer(root, environ)
    declared: dict[str, list[Declared]] = {k.name: [] for k in kinds_in_order()}
    settings: Settings | None = None
    digest = hashlib.sha256()
    files = workspace_files(root)
    for path in files:
        name = relative(path, root)
        workspace = settings.workspace if settings else None
        problems_before = len(diags.items)
        text = renderer.render(path, variables, workspace, diags)
        if text is None or len(diags.items) > problems_before:
            continue  # values rendered from missing variables would only add noise
        digest.update(name.encode() + b"\0" + renderer.secrets.scrub(text).encode() + b"\0")
        doc = _parse(text, name, diags)
        if doc is None:
            continue
        if path != root_path and doc.data and not set(doc.data) & _known_keys():
            diags.error(
                "not a workspace file: none of its keys is a kind or a setting "
                f"(if it is not one, list it in {IGNORE_FILE})",
                Position(name, 1, 1),
            )
            continue
        if path != root_path:
            for key in SETTINGS:
                if key in doc.data:
                    line, col = doc.where((key,))
                    diags.error(
                        f"'{key}' is a workspace setting: it belongs in {root_path.name}",
                        Position(name, line, col),
                    )
        model = _validate(doc, name, diags)
        if model is None:
            continue
        if path == root_path:
            settings = _settings(model, name, diags)
        for kind in top_level_kinds():
            for i, item in enumerate(getattr(model, kind.name) or []):
                line, col = doc.where((kind.name, i))
                written = Declared(item, Position(name, line, col))
                parent, read = kind.expand(written, path.parent, diags)
                for extra, content in read:
                    digest.update(relative(extra, root).encode() + b"\0" + content + b"\0")
                declared[kind.name].append(parent)
                _declare_children(kind, parent, (kind.name, i), doc, name, declared, diags)
    _check_unique(declared, diags)
    for kind in kinds_in_order():
        kind.check(declared[kind.name], diags)
        for name, value in kind.sensitive_values(declared[kind.name]).items():
            renderer.secrets.add(name, value)  # scrubbed wherever secret() values are
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


def _declare_children(
    kind: Kind,
    parent: Declared,
    path: tuple[str | int, ...],
    doc: Located,
    file: str,
    declared: dict[str, list[Declared]],
    diags: Diagnostics,
) -> None:
    """A parent's children (attachments of a webhook) become declarations of their kind."""
    for field_name, child_kind in kind.children.items():
        items = getattr(parent.model, field_name, None) or []
        if items and not parent.present:
            line, col = doc.where((*path, field_name))
            diags.error(
                f"{kind.label} {getattr(parent.model, 'name', '')} is declared absent: "
                f"its {field_name} cannot be declared",
                Position(file, line, col),
            )
            continue
        for j, child in enumerate(items):
            line, col = doc.where((*path, field_name, j))
            declared[child_kind].append(Declared(child, Position(file, line, col), parent))


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
        except (OSError, yaml.YAMLError) as exc:
            diags.error(f"cannot read var file: {exc}", Position(str(path)))
            continue
        if not isinstance(data, dict):
            diags.error("a var file must be a mapping of names to values", Position(str(path)))
            continue
        merged.update(data)
    merged.update(cli_vars)
    return merged


def _parse(text: str, name: str, diags: Diagnostics) -> Located | None:
    try:
        doc = parse(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        diags.error(f"invalid YAML: {exc.problem or exc.context}", Position(name, line, col))
        return None
    except yaml.YAMLError as exc:
        diags.error(f"invalid YAML: {exc}", Position(name))
        return None
    for key, line, col in doc.duplicates:
        diags.error(f"duplicate key '{key}'", Position(name, line, col))
    if not isinstance(doc.data, dict):
        diags.error("a workspace file must be a mapping of kind lists", Position(name, 1, 1))
        return None
    return doc


def _validate(doc: Located, name: str, diags: Diagnostics) -> Any:
    try:
        return document_model().model_validate(doc.data)
    except ValidationError as exc:
        errors = exc.errors()
        inner = {tuple(e["loc"]) for e in errors}
        for err in errors:
            loc = tuple(err["loc"])
            if err["type"] == "too_short" and any(o[: len(loc)] == loc != o for o in inner):
                continue  # a list emptied by its own bad entries: those entries say why
            line, col = doc.where(loc, at_key=err["type"] == "extra_forbidden")
            diags.error(_message(err, loc), Position(name, line, col))
        return None


def _message(err: Any, loc: tuple[Any, ...]) -> str:
    where = ".".join(str(p) for p in loc)
    if err["type"] == "extra_forbidden":
        key = str(loc[-1])
        message = f"unknown key '{key}'"
        close = difflib.get_close_matches(key, allowed_keys(loc), n=1)
        return f"{message} at {where}" + (f" (did you mean '{close[0]}'?)" if close else "")
    if err["type"] == "literal_error" and isinstance(err.get("input"), str):
        choices = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
        close = difflib.get_close_matches(err["input"], choices, n=1)
        if close:
            return (
                f"{where}: '{err['input']}' is not one of {', '.join(choices)} "
                f"(did you mean '{close[0]}'?)"
            )
    return f"{where}: {err['msg']}"


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
