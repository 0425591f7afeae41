"""One load of a workspace (config/loader.py starts it): each file read under the
budget (rendered, digested, parsed, its secret() values substituted, validated, its
objects declared), then the checks across the files, every problem reported at once.
A file beside agentform.yaml is a workspace file only when it is meant for agentform
(`meant_for_agentform`).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentform.config.declarations import check_unique, declare_children
from agentform.config.document import SETTINGS
from agentform.config.environments import EnvironmentSpec, override
from agentform.config.file_parse import Where, dotted, parse_document, validate_document
from agentform.config.files import IGNORE_FILE
from agentform.config.moved import check_moves, read_moves
from agentform.config.owns import check_owned
from agentform.config.protect import check_protected
from agentform.config.render import Renderer
from agentform.config.secret_tokens import substitute
from agentform.config.settings import ROOT_FILE, Settings, settings_of
from agentform.core.bounds import Bounds, resolved
from agentform.core.budget import BudgetExceeded, metered
from agentform.core.diagnostics import Diagnostics, Position, relative
from agentform.core.errors import DiagnosticsError, InvalidWorkspace
from agentform.core.problems import did_you_mean
from agentform.core.secrets import MIN_SEARCHED
from agentform.core.sensitive import plain_texts
from agentform.core.yamlpos import Located
from agentform.kinds import kinds_in_order
from agentform.kinds.model import Declared
from agentform.kinds.order import top_level_kinds


class Loading:
    """One load of a workspace: the files read so far, what they declare, the
    settings (from the root file, read first) and the digest of every input."""

    def __init__(
        self,
        bounds: Bounds,
        root_path: Path,
        renderer: Renderer,
        diags: Diagnostics,
        environment: EnvironmentSpec | None = None,
        defaults: Mapping[str, Any] | None = None,
    ):
        self.environment = environment
        self.bounds = bounds
        self.root = bounds.workspace
        self.defaults = defaults or {}  # the repository's, for settings the file leaves out
        self.root_path = root_path
        self.renderer = renderer
        self.diags = diags
        self.declared: dict[str, list[Declared]] = {k.name: [] for k in kinds_in_order()}
        self.settings: Settings | None = None
        # the environment is an input like the files: two environments whose files
        # render alike still make plans that cannot pass for each other
        self.digest = hashlib.sha256(f"environment\0{environment or ''}\0".encode())
        self.items_files: set[Path] = set()
        self.file_digests: dict[str, str] = {}

    def read(self, path: Path, variables: Mapping[str, Any]) -> None:
        """One file: rendered, parsed, its secrets substituted, validated, declared,
        all of it under the budget (core/budget.py)."""
        try:
            with metered():
                self._read(path, variables)
        except BudgetExceeded as exc:
            self.diags.error(str(exc), Position(relative(path, self.root), 1, 1))

    def _read(self, path: Path, variables: Mapping[str, Any]) -> None:
        name = relative(path, self.root)
        workspace = self.settings.workspace if self.settings else None
        rendered = self.renderer.render(path, variables, workspace, self.diags)
        if rendered is None:
            return  # values rendered from missing variables would only add noise
        tokens = self.renderer.tokens
        part = name.encode() + b"\0" + tokens.replace(rendered.text).encode()
        self.digest.update(part)
        self.digest.update(b"\0")
        self.file_digests[name] = hashlib.sha256(part).hexdigest()
        where = Where(name, rendered.source_line, rendered.text)
        doc = parse_document(rendered.text, where, self.diags)
        if doc is None:
            return
        where.doc = doc
        if tokens.loose.search(rendered.text):  # the file calls secret()
            self._substitute_secrets(doc, where)
        if path != self.root_path and not self._fits_beside_the_root(doc, where):
            return
        model = validate_document(doc, where, self.diags)
        if model is None:
            return
        if path == self.root_path:
            self.settings = settings_of(model, name, self.diags, self.defaults)
            if self.settings is not None and self.environment is not None:
                override(self.settings, model, self.environment, ROOT_FILE)
            if self.settings is not None and model.moved:
                self.settings.moves = read_moves(model.moved, where, self.diags)
        self._declare(model, path, where)
        where.doc = None  # positions asked for later parse the text again (errors only)

    def _substitute_secrets(self, doc: Located, where: Where) -> None:
        """The secret() tokens of `doc` become Sensitive values, or problems."""
        tokens = self.renderer.tokens
        short: list[tuple[tuple[str | int, ...], set[str]]] = []
        doc.data, problems = substitute(doc.data, tokens, short=short)
        for at, message in problems:
            shown = tokens.replace(dotted(at), "source")  # never the token
            self.diags.error(f"{shown}: {message}", where(at))
        for at, names in short:
            self.diags.warning(
                f"secret {', '.join(sorted(names))} is shorter than {MIN_SEARCHED} "
                f"characters and fills {dotted(at)} alone: it is masked in every view, "
                "but too short to be scrubbed from cassettes and logs",
                where(at),
            )

    def _fits_beside_the_root(self, doc: Located, where: Where) -> bool:
        """Whether a file other than agentform.yaml is a workspace file; a setting in
        it is an error, reported as the file is read on."""
        if doc.data and not meant_for_agentform(doc.data):
            self.diags.error(
                "not a workspace file: none of its keys is a kind or a setting "
                f"(if it is not one, list it in {IGNORE_FILE})",
                Position(where.file, 1, 1),
            )
            return False
        for key in SETTINGS:
            if key in doc.data:
                self.diags.error(
                    f"'{key}' is a workspace setting: it belongs in {self.root_path.name}",
                    where((key,)),
                )
        return True

    def _declare(self, model: Any, path: Path, where: Where) -> None:
        """The objects of a validated file, with their children, and the digest of
        the files they read (an items file)."""
        for kind in top_level_kinds():
            for i, item in enumerate(getattr(model, kind.name) or []):
                written = Declared(item, where((kind.name, i)), locate=where.inside(kind.name, i))
                parent, read = kind.expand(written, path.parent, self.bounds, self.diags)
                for extra, content in read:
                    self.items_files.add(resolved(extra))
                    part = self.bounds.name(extra).encode() + b"\0" + content
                    self.digest.update(part + b"\0")
                    self.file_digests[self.bounds.name(extra)] = hashlib.sha256(part).hexdigest()
                self.declared[kind.name].append(parent)
                declare_children(kind, parent, (kind.name, i), where, self.declared, self.diags)

    def check(self) -> None:
        """The checks across files; DiagnosticsError with every problem found."""
        check_unique(self.declared, self.diags)
        if self.settings is not None:
            check_protected(self.settings.protect, self.declared, self.diags)
            check_owned(self.settings.owns, self.declared, self.diags)
            check_moves(self.settings.moves, self.declared, self.settings.owns, self.diags)
        for kind in kinds_in_order():
            kind.check(self.declared[kind.name], self.diags)
            for name, value in kind.sensitive_values(self.declared[kind.name]).items():
                # scrubbed as secret() values are
                self.renderer.secrets.add(name, value, marks=False)
        self._warn_of_secrets_shown_elsewhere()
        self._name_the_workspace()
        try:
            self.diags.raise_if_errors()
        except DiagnosticsError as exc:
            raise InvalidWorkspace(exc.diagnostics, self.settings) from None

    def _name_the_workspace(self) -> None:
        """A problem in a file of the repository outside the workspace (a shared
        include) is at that file's line, and names the workspace that read it: the
        same file may be fine in another."""
        reader = self.bounds.workspace.relative_to(self.bounds.limit).as_posix()
        for i, found in enumerate(self.diags.items):
            if found.position is not None and self.bounds.shared(found.position.file):
                summary = f"{found.summary} (read by workspace {reader})"
                self.diags.items[i] = dataclasses.replace(found, summary=summary)

    def _warn_of_secrets_shown_elsewhere(self) -> None:
        """Views mask by type, so a secret's value that the files also write in a field
        that is not secret is shown there: said once a secret, where it first shows."""
        values = self.renderer.secrets.values
        named = self.renderer.tokens.names  # secret('NAME') calls, not header values
        searched = {n: values[n] for n in named if len(values.get(n, "")) >= MIN_SEARCHED}
        if not searched:
            return  # no text of any object needs reading (10,000 objects: a second)
        warned: set[str] = set()
        for kind in top_level_kinds():
            for item in self.declared[kind.name]:
                texts = list(plain_texts(item.model.model_dump()))
                for name in sorted(searched.keys() - warned):
                    if any(searched[name] in text for text in texts):
                        warned.add(name)
                        self.diags.warning(
                            f"the value of secret {name} also appears in fields that are not "
                            "secret: they are shown as written, and only cassettes and logs "
                            "mask it there",
                            item.position,
                        )

    def inputs(self, files: list[Path], var_files: list[Path]) -> frozenset[Path]:
        """Every file this load read, resolved."""
        included = [
            self.bounds.inside(name)
            for env in (self.renderer.env, self.renderer.marked_env)
            if env is not None
            for name in env.workspace_loader.sources
        ]
        found = [*files, *var_files, *self.items_files, *(p for p in included if p)]
        return frozenset(resolved(path) for path in found)


def _known_keys() -> set[str]:
    return set(SETTINGS) | {k.name for k in top_level_kinds()}


def meant_for_agentform(data: dict[str, Any]) -> bool:
    """Whether a file has a key that is, or is a misspelling of, a kind or a setting
    (a misspelt one is then reported as an unknown key, with its suggestion)."""
    known = _known_keys()
    # a little closer than a suggestion: a workflow's `on:` is not a misspelt `owns:`
    return any(str(k) in known or did_you_mean(str(k), known, cutoff=0.7) for k in data)
