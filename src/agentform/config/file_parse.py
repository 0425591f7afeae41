"""One workspace file's rendered text to a validated document, every problem at its
position: YAML parsed with positions, then the document model's validation, each
error said in the files' words at the line (of the file, not of the rendered
text) where it was written. And the variables the files are rendered with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agentform.config.document import allowed_keys, document_model
from agentform.config.environments import EnvironmentSpec, Inputs, var_file_paths
from agentform.config.undefined import Variables
from agentform.core.bounds import Bounds
from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.problems import AT, describe, did_you_mean, own_errors
from agentform.core.sensitive import Sensitive
from agentform.core.yamlpos import Located, PathKey, parse, problem_of

EXTENSION_PREFIX = "x-"
# errors about a Sensitive value that its type allowed (a length, a pattern)
SENSITIVE_OK = ("string_too_long", "string_too_short", "string_pattern_mismatch")


class Where:
    """Positions in one file: lines of the rendered text mapped to the lines they
    came from (of the file, or of a file it includes). The parsed document is kept
    while the file is loaded; a position asked for later (a plan-time error inside
    an object) parses the rendered text again."""

    def __init__(self, file: str, source_line: Callable[[int], tuple[str, int]], text: str) -> None:
        self.file = file
        self.source_line = source_line
        self.text = text
        self.doc: Located | None = None

    def line(self, line: int, column: int = 1) -> Position:
        return Position(*self.source_line(line), column)

    def __call__(self, path: PathKey, at_key: bool = True) -> Position:
        if self.doc is None:
            self.doc = parse(self.text)
        line, column = self.doc.where(path, at_key=at_key)
        return self.line(line, column)

    def inside(self, *base: str | int) -> Callable[[PathKey], Position]:
        """Where values inside the object at `base` were written (by their path in it)."""
        return lambda path: self((*base, *path), at_key=False)


def dotted(path: PathKey) -> str:
    return ".".join(str(p) for p in path)


def allowed_env(root_path: Path, inherited: tuple[str, ...] = ()) -> tuple[str, ...]:
    """`allowEnv` of agentform.yaml as written (read before any file is rendered, as
    its vars are, so the root file's own env() calls obey it), else `inherited` (the
    repository's default); a bad value is reported when the file is validated."""
    try:
        raw = parse(root_path.read_text()).data or {}
    except (OSError, yaml.YAMLError):
        return ()
    if not isinstance(raw, dict) or "allowEnv" not in raw:
        return inherited
    names = raw["allowEnv"]
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()


def read_variables(
    root_path: Path,
    cli_vars: Mapping[str, Any],
    var_files: list[Path],
    diags: Diagnostics,
    environment_vars: Mapping[str, Any] | None = None,
) -> Variables:
    """vars of agentform.yaml, then the environment's vars, then the var files (the
    environment's, then --var-file), then --var: a later one wins by top-level name."""
    merged = Variables()
    try:
        raw = parse(root_path.read_text()).data or {}
        if isinstance(raw, dict) and isinstance(raw.get("vars"), dict):
            merged.update(raw["vars"])
        elif not isinstance(raw, dict) or raw.get("vars") is not None:
            merged.complete = False  # reported when the file is validated
        if isinstance(raw, dict) and _unknown_keys(raw):
            merged.complete = False  # `varz:` may be the vars: reported as an unknown key
    except yaml.YAMLError:
        merged.complete = False  # reported with its position when the file is parsed
    merged.update(environment_vars or {})
    root = root_path.parent.resolve()
    for path in var_files:
        # A var file inside the workspace (an environment's) is named as its files are.
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        merged.update(read_var_file(path, diags, shown))
    merged.update(cli_vars)
    return merged


def _unknown_keys(root: dict[Any, Any]) -> bool:
    """Whether agentform.yaml has a top-level key it does not know (extensions aside)."""
    known = None
    for key in root:
        if isinstance(key, str) and key.startswith(EXTENSION_PREFIX):
            continue
        known = known or set(allowed_keys((key,)))
        if key not in known:
            return True
    return False


def read_var_file(path: Path, diags: Diagnostics, shown: str | None = None) -> dict[str, Any]:
    """One var file's mapping of names to values; {} and a problem when it has none,
    at `shown` (the path as given, by default)."""
    where = shown or str(path)
    try:
        data = parse(path.read_text()).data or {}
    except OSError as exc:
        diags.error(f"cannot read var file: {exc.strerror or exc}", Position(where))
        return {}
    except yaml.YAMLError as exc:
        message, line_column = problem_of(exc)
        at = Position(where, *line_column) if line_column else Position(where)
        diags.error(f"invalid YAML in var file: {message}", at)
        return {}
    if not isinstance(data, dict):
        diags.error("a var file must be a mapping of names to values", Position(where))
        return {}
    return data


def resolve_variables(
    bounds: Bounds,
    root_path: Path,
    spec: EnvironmentSpec | None,
    inputs: Inputs,
    diags: Diagnostics,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The variables the files are rendered with, and the part the command line gave:
    the workspace's vars, the environment's vars, its var files, --var-file, --var,
    a later one winning by top-level name."""
    env_files = var_file_paths(bounds, spec, diags, root_path.name)
    from_files = read_variables(root_path, {}, env_files, diags, spec.vars if spec else None)
    overrides: dict[str, Any] = {}
    for path in inputs.var_files:
        overrides.update(read_var_file(path, diags))
    overrides.update(inputs.cli_vars)
    return Variables.of({**from_files, **overrides}, from_files.complete), overrides


def parse_document(text: str, where: Where, diags: Diagnostics) -> Located | None:
    try:
        doc = parse(text)
    except yaml.YAMLError as exc:
        message, line_column = problem_of(exc)
        position = where.line(*line_column) if line_column else Position(where.file)
        diags.error(f"invalid YAML: {message}", position)
        return None
    for key, line, col in doc.duplicates:
        diags.error(f"duplicate key '{key}'", where.line(line, col))
    if not isinstance(doc.data, dict):
        diags.error("a workspace file must be a mapping of kind lists", where.line(1, 1))
        return None
    doc.data = {k: v for k, v in doc.data.items() if not is_extension(k)}
    return doc


def is_extension(key: str) -> bool:
    """A top-level `x-` key: a place for YAML anchors (`x-defaults: &d …`), ignored,
    as Docker Compose ignores its extension fields."""
    return key.startswith(EXTENSION_PREFIX)


def validate_document(doc: Located, where: Where, diags: Diagnostics) -> Any:
    try:
        return document_model().model_validate(doc.data)
    except ValidationError as exc:
        for err in own_errors(exc.errors()):  # not a list emptied by its own bad entries
            loc = tuple(err["loc"])
            a_key = loc[-1:] == ("[key]",)  # a mapping's key is wrong: said at the key
            loc = loc[:-1] if a_key else loc
            for part, detail in (err.get("ctx") or {}).get(AT, ()):  # a rule's, part by part
                inner = (*loc, *part)
                diags.error(f"{'.'.join(str(p) for p in inner)}: {detail}", where(inner, True))
            if not (err.get("ctx") or {}).get(AT):
                at_key = a_key or err["type"] == "extra_forbidden"
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
    if err["type"] in ("bool_type", "bool_parsing"):  # YAML 1.2's booleans, no yes/no/0
        return f"{where}: {_shown(err.get('input'))} is not a boolean: write true or false"
    if err["type"] in ("model_type", "model_attributes_type", "dict_type"):
        # pydantic's message names the model class, which is no concern of the files
        return f"{where}: should be a mapping (key: value lines), not {_kind_of(err.get('input'))}"
    return f"{where}: {describe(err, where)}"  # the service's words, its "did you mean"


def _shown(value: Any) -> str:
    """A short value as written: a word quoted, a number as it is."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind_of(value: Any) -> str:
    """What a YAML value is, in the files' terms."""
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return "a single value" if not isinstance(value, dict) else "a mapping"
