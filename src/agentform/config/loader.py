"""Loading a workspace: agentform.yaml plus every other *.yaml, rendered, parsed with
positions, validated, merged; every problem reported at once, before any API call.

The loaded `Workspace` and `load_workspace` are here; one load reading its files and
checking them together is config/loading.py; the root file's settings, config/settings.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentform.config.environments import Inputs, every_var_file, raw_environments, selected
from agentform.config.file_parse import allowed_env, resolve_variables
from agentform.config.files import root_file, workspace_files
from agentform.config.includes import included_files
from agentform.config.loading import Loading
from agentform.config.render import Renderer
from agentform.config.repository_file import repository_of
from agentform.config.settings import ROOT_FILE, Settings
from agentform.core.bounds import Bounds
from agentform.core.diagnostics import Diagnostic, Diagnostics, relative
from agentform.core.gcpause import collector_paused
from agentform.core.secrets import Secrets
from agentform.core.sensitive import Sensitive
from agentform.kinds import kinds_in_order
from agentform.kinds.model import Declared


@dataclass
class Workspace:
    root: Path
    settings: Settings
    declared: dict[str, list[Declared]]
    secrets: Secrets
    inputs_digest: str
    files: list[str]
    warnings: list[Diagnostic] = field(default_factory=list)
    # the template variables the files were rendered with, and the part of them the
    # command line gave (--var-file, --var): what a saved plan records
    variables: dict[str, Any] = field(default_factory=dict)
    var_overrides: dict[str, Any] = field(default_factory=dict)
    # every file the load read (workspace files, includes, var files, itemsFiles),
    # resolved: what `affected` compares between two commits
    inputs: frozenset[Path] = frozenset()
    unset_secrets: frozenset[str] = frozenset()  # secret() names this workspace reads, not set
    # each file's part of inputs_digest, by name: a stale plan names the files changed
    input_digests: dict[str, str] = field(default_factory=dict)

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
    environment: str | None = None,
    template_name: str | None = None,
) -> Workspace:
    """The validated workspace, or DiagnosticsError listing every problem.

    `secrets`: the run's registry, filled with the values secret() finds.
    `unset_secrets_allowed`: an unset secret is not an error (export writes it
    as a placeholder); its values are Sensitive but unresolved.
    `environment`: the one of `environments:` to load (its settings and vars)."""
    inputs = Inputs(dict(cli_vars or {}), tuple(var_files or ()), environment, template_name)
    with collector_paused():  # not frozen: it leaves cycles (core/gcpause.py)
        return _load(root, inputs, environ, secrets, unset_secrets_allowed)


def _load(
    root: Path,
    inputs: Inputs,
    environ: Mapping[str, str] | None,
    secrets: Secrets | None,
    unset_secrets_allowed: bool,
) -> Workspace:
    diags = Diagnostics()
    root = root.resolve()
    root_path = _root_file(root, diags)
    repository = repository_of(root)
    bounds = repository.bounds(root) if repository else Bounds.of_workspace(root)
    defaults = repository.defaults if repository else {}
    environments = raw_environments(root_path)
    spec = selected(environments, inputs.environment, ROOT_FILE)
    variables, overrides = resolve_variables(bounds, root_path, spec, inputs, diags)
    key_variables = {s.api_key_env for s in environments.values()}
    allowed = allowed_env(root_path, tuple(defaults.get("allowEnv", ())))
    renderer = Renderer(
        root, environ, secrets, unset_secrets_allowed, allowed, key_variables, bounds
    )
    if spec is not None:
        renderer.env_name = inputs.template_name or spec.name
    loading = Loading(bounds, root_path, renderer, diags, spec, defaults)
    var_files = [*inputs.var_files, *every_var_file(bounds, environments)]
    files = workspace_files(root, var_files, bounds)
    names = [relative(f, root) for f in files]
    parts = included_files(renderer.env, names)  # read where they are included
    files = [f for f, name in zip(files, names, strict=True) if name not in parts or f == root_path]
    for path in files:
        loading.read(path, variables)
    loading.check()
    workspace = _workspace(loading, [relative(f, root) for f in files])
    workspace.variables, workspace.var_overrides = variables, overrides
    chosen = every_var_file(bounds, {spec.name: spec}) if spec is not None else []
    workspace.inputs = loading.inputs(files, [*inputs.var_files, *chosen])
    workspace.unset_secrets = frozenset(renderer.unset)
    return workspace


def _root_file(root: Path, diags: Diagnostics) -> Path:
    """The workspace's agentform.yaml; an error when there is none."""
    if not root.is_dir():
        diags.error(f"no workspace directory {root} (agentform init creates one)")
        diags.raise_if_errors()
    root_path = root_file(root)
    if root_path is None:
        diags.error(f"no {ROOT_FILE} in {root} (agentform init creates one)")
        diags.raise_if_errors()
    assert root_path is not None
    return root_path


def _workspace(loading: Loading, files: list[str]) -> Workspace:
    """The workspace `loading` read."""
    assert loading.settings is not None  # a root file without one is an error, raised
    return Workspace(
        loading.root,
        loading.settings,
        loading.declared,
        loading.renderer.secrets,
        loading.digest.hexdigest(),
        files,
        loading.diags.warnings,
        input_digests=dict(loading.file_digests),
    )
