"""`agentform init [DIR]`: a new workspace, ready for git and for editors.

Writes agentform.yaml and an example pools.yaml (each with a yaml-language-server
modeline pointing at the JSON Schema written beside them), the schema itself, an
example test (tests/smoke.yaml, which `agentform test` runs and which passes against
the starter files), and a .gitignore for agentform's local state and artifacts (an
existing one gets the missing lines added). It never overwrites a file unless
`--force`: it lists what exists and exits 1.
"""

from __future__ import annotations

import re
import shlex
import uuid
from pathlib import Path

import click
import yaml

from agentform.cli.conventions import check_endpoint_option
from agentform.cli.options import merged_globals
from agentform.cli.schema_cmd import SCHEMA_FILE, render_schema
from agentform.config.environments import NAME_PATTERN
from agentform.config.files import IGNORE_FILE, ROOT_NAMES, workspace_files
from agentform.config.repository_file import find_repository
from agentform.core.errors import AgentformError
from agentform.repository.new_workspace import check_new, root_text

MODELINE = f"# yaml-language-server: $schema={SCHEMA_FILE}\n"

ROOT = """\
workspace: {name}
endpoint: {endpoint}
{organization}prune: []                # kinds whose undeclared live objects are deleted
protect: {{}}              # e.g. profilePools: ["prod-*"]
vars: {{}}
"""

POOLS = """\
profilePools:
  - name: example-pool
    selectionStrategy: least_recently_used
    allowConcurrentUse: false
    members: [bot-1, bot-2]
"""

EXAMPLE_POOLS = """\
profilePools: []
  # - name: checkout-pool
  #   selectionStrategy: least_recently_used
  #   members: [profile-name]
"""

SMOKE = """\
# A test of what this workspace does: `agentform test` applies the workspace to a
# fresh embedded service (the demo seed: agents checkout-agent, support-agent and
# refund-agent, profiles bot-1 to bot-6) on a manual clock, then runs the steps.
tests:
  - name: the example pool runs an execution, and the files still match after
    steps:
      - execute: {agent: support-agent, pool: example-pool, as: first}
      - advance: 1m                       # the test's clock: due work runs in order
      - expect: {execution: first, status: completed, pool: example-pool}
      - expect: {plan: empty}
"""

EXAMPLE_SMOKE = """\
# A test of what this workspace does: `agentform test` applies the workspace to a
# fresh embedded service (never to the endpoint above) on a manual clock, then runs
# the steps. The demo seed has agents checkout-agent, support-agent, refund-agent.
tests:
  - name: the files apply, and still match after
    steps:
      - expect: {plan: empty}
"""

GITIGNORE_LINES = (
    ".agentform/",
    "# agentform artifacts: saved plans, reports and recorded cassettes",
    "*.plan.json",
    "plan.json",
    "plan.md",
    "*.cassette.yaml",
    "cassettes/",
)


def _organization(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise click.BadParameter(f"must be a UUID, not {value!r}") from None


def _environment_names(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str]:
    names = [n.strip() for n in (value or "").split(",") if n.strip()]
    for name in names:
        if not re.fullmatch(NAME_PATTERN, name):
            raise click.BadParameter(
                f"{name!r} is not an environment's name (letters, digits, _, . and -, up to 63)"
            )
    if len(set(names)) != len(names):
        raise click.BadParameter("an environment is named twice")
    return names


@click.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--endpoint",
    default="local",
    show_default=True,
    callback=check_endpoint_option,
    help="'local' (the embedded service) or the service's base URL (…/agents/v2).",
)
@click.option("--organization-id", help="The organization the workspace manages (a UUID).")
@click.option("--force", is_flag=True, help="Overwrite files that exist already.")
@click.option(
    "--env",
    "environments",
    callback=_environment_names,
    metavar="NAMES",
    help="Environments to declare, comma-separated (staging,prod).",
)
def init(
    directory: Path | None,
    endpoint: str,
    organization_id: str | None,
    force: bool,
    environments: list[str],
) -> None:
    """Scaffold a workspace (agentform.yaml, pools.yaml, the JSON Schema, .gitignore,
    tests/smoke.yaml).

    Inside a repository (agentform-repository.yaml), the workspace is wired to it: its
    settings inherited, owns made from its name; a directory the repository's globs do
    not name, or a name whose globs overlap another workspace's, is refused."""
    if directory is None:
        directory = merged_globals({}).get("workspace_dir") or Path(".")
    org = _organization(organization_id)
    name = directory.resolve().name or "workspace"
    root = _root_text(directory, name, endpoint, org, environments)
    pools = POOLS if endpoint == "local" else EXAMPLE_POOLS
    smoke = SMOKE if endpoint == "local" else EXAMPLE_SMOKE
    if find_repository(directory) is not None:  # its pools are named as it owns them
        pools, smoke = (text.replace("example-pool", f"{name}-pool") for text in (pools, smoke))
    files = {
        "agentform.yaml": MODELINE + root,
        "pools.yaml": MODELINE + pools,
        SCHEMA_FILE: render_schema(),
        ".gitignore": "\n".join(GITIGNORE_LINES) + "\n",
        "tests/smoke.yaml": smoke,
    }
    merged = {".gitignore"}  # init adds its lines to these, keeping the file's own
    existing = [n for n in (*files, *ROOT_NAMES) if n not in merged and (directory / n).exists()]
    existing = list(dict.fromkeys(existing))
    if existing and not force:
        listed = "\n".join(f"  {directory / n}" for n in existing)
        raise click.ClickException(
            f"these files exist already; nothing was written (use --force to overwrite):\n{listed}"
        )
    foreign = _foreign_yaml(directory, set(files))
    directory.mkdir(parents=True, exist_ok=True)
    for stale in ROOT_NAMES[1:]:
        if force and (directory / stale).exists():
            (directory / stale).unlink()  # one root file only
    for file_name, text in files.items():
        path = directory / file_name
        if file_name in merged and path.exists():
            text = _merged_gitignore(path.read_text())
        path.parent.mkdir(exist_ok=True)  # tests/
        path.write_text(text)
    click.echo(f"Created a workspace in {directory}: {', '.join(files)}")
    if foreign:
        _ignore(directory / IGNORE_FILE, foreign)
        click.echo(
            f"YAML files that are not workspace files, now in {IGNORE_FILE}: {', '.join(foreign)}"
        )
    click.echo(f"Next: {_next_command(directory, environments)}")


def _next_command(directory: Path, environments: list[str]) -> str:
    """The plan to run next, pasteable: with environments declared, plan refuses to
    run without one, so the first is named."""
    here = directory.resolve() == Path.cwd().resolve()
    chosen = ["--env", environments[0]] if environments else []
    return shlex.join(["agentform", *([] if here else ["-C", str(directory)]), "plan", *chosen])


def _root_text(
    directory: Path, name: str, endpoint: str, org: str | None, environments: list[str]
) -> str:
    """agentform.yaml: wired to the repository the directory is in, if any."""
    repository = find_repository(directory)
    if repository is not None:
        try:
            check_new(repository, directory, name)
        except AgentformError as exc:
            raise click.ClickException(str(exc)) from None
        return root_text(repository, directory, name, environments, endpoint)
    organization = (
        f"organizationId: {org}\n"
        if org
        else "# organizationId: ...    # optional when the key has one organization\n"
    )
    text = ROOT.format(name=name, endpoint=endpoint, organization=organization)
    if environments:
        text += "environments:\n" + "".join(f"  {e}: {{}}\n" for e in environments)
    return text


def _foreign_yaml(directory: Path, written: set[str]) -> list[str]:
    """The YAML files already in `directory` that the workspace would read and that are
    not workspace files (a compose file, manifests): none of their documents has a key
    that is, or is close to, a kind or a setting. A file that does not parse is left to
    the loader's error."""
    from agentform.config.loading import meant_for_agentform  # the loader's own test of a file
    from agentform.core.yamlpos import parse_all  # and its reading: keys as written

    foreign = []
    for path in workspace_files(directory):
        relative = path.relative_to(directory).as_posix()
        if relative in written or relative in ROOT_NAMES:
            continue
        try:
            documents = [d for d in parse_all(path.read_text()) if d is not None]
        except (yaml.YAMLError, UnicodeDecodeError, OSError):
            continue
        if documents and not any(isinstance(d, dict) and meant_for_agentform(d) for d in documents):
            foreign.append(relative)
    return foreign


def _ignore(path: Path, relatives: list[str]) -> None:
    """Adds the files to .agentformignore (anchored at the root), keeping its lines."""
    current = path.read_text() if path.exists() else ""
    sep = "" if not current or current.endswith("\n") else "\n"
    path.write_text(current + sep + "".join(f"/{r}\n" for r in relatives))


def _merged_gitignore(current: str) -> str:
    """An existing .gitignore keeps its lines; agentform's are added when missing."""
    have = set(current.splitlines())
    missing = [line for line in GITIGNORE_LINES if line not in have]
    if not missing:
        return current
    sep = "" if not current or current.endswith("\n") else "\n"
    return current + sep + "\n".join(missing) + "\n"
