"""Workspace files are data, never code: what a pull request's author can write
into a template is refused at its file:line, offline, with nothing run and with
bounded time and memory (config/sandbox.py, config/sandbox_bounds.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli
from agentform.config import sandbox_bounds
from agentform.config.loader import load_workspace
from agentform.config.sandbox_bounds import MAX_RENDERED, MAX_STEPS, MAX_VALUE, MAX_WIDTH
from agentform.core.bounds import MAX_FILE_BYTES
from agentform.core.errors import DiagnosticsError
from tests.provisioner.harness import write_workspace

ROOT = "workspace: hostile\n"


def problems(ws: Path, pools: str, **files: str) -> list[str]:
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": pools, **files})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ={})
    return [d.render() for d in info.value.diagnostics]


def named(expression: str) -> str:
    return f'profilePools:\n  - name: "{{{{ {expression} }}}}"\n'


@pytest.mark.parametrize(
    ("expression", "refused"),
    [
        ("cycler.__init__.__globals__.os.popen('touch PWNED').read()", "'__init__' of a type"),
        ("joiner.__init__.__globals__", "'__init__' of a type"),
        ("''.__class__.__mro__[1].__subclasses__()", "'__class__' of a str"),
        ("range.__globals__['os']", "'__globals__' of a function"),
        ("self.__init__", "'__init__' of a TemplateReference"),
        ("vars.__class__", "'__class__' of a dict"),
        ("cycler|attr('__init__')", "'__init__' of a type"),
        ("range.__self__", "'__self__' of a function"),
        ("vars._private", "'_private' of a dict"),
        ("(1)._x", "'_x' of an int"),  # the article of the type's name
    ],
)
def test_a_template_reaches_no_python_internals(
    ws: Path, expression: str, refused: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ws.parent)
    found = problems(ws, named(expression))
    assert found == [
        f"pools.yaml:2:1: error: the attribute {refused}: not allowed in workspace files"
    ]
    assert not (ws.parent / "PWNED").exists() and not (ws / "PWNED").exists()


def test_validate_refuses_code_and_runs_nothing(ws: Path) -> None:
    """The offline command of the pre-commit hook and the PR job: exit 1, nothing run."""
    marker = ws.parent / "PWNED"
    expression = f"cycler.__init__.__globals__.os.popen('touch {marker}').read()"
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": named(expression)})
    result = CliRunner().invoke(cli, ["validate", "-C", str(ws)])
    assert result.exit_code == 1
    assert "not allowed in workspace files" in result.output
    assert "Traceback" not in result.output and not marker.exists()


def test_namespace_is_not_offered(ws: Path) -> None:
    found = problems(ws, "{% set ns = namespace(s='') %}" + named("ns.s"))
    assert found and all("'namespace' is undefined" in f for f in found)


@pytest.mark.parametrize(
    ("expression", "refused"),
    [
        ("'a' * 2000000000", f"a value longer than {MAX_VALUE:,} characters"),
        ("2000000000 * 'a'", f"a value longer than {MAX_VALUE:,} characters"),
        ("['a'] * 2000000000", f"a value longer than {MAX_VALUE:,} characters"),
        ("('a' * 1000) ~ ('b' * 1048000)", f"a value longer than {MAX_VALUE:,} characters"),
        ("'a'|center(2000000000)", f"a width or count over {MAX_WIDTH:,}"),
        ("'a'.ljust(2000000000)", f"a width or count over {MAX_WIDTH:,}"),
        ("'%2000000000s' % 'a'", f"a format width over {MAX_WIDTH:,}"),
        ("'%2000000000s'|format('a')", f"a format width over {MAX_WIDTH:,}"),
        ("'{:2000000000}'.format('a')", f"a format width over {MAX_WIDTH:,}"),
        ("('x' * 100000)|replace('x', 'y' * 1000)", f"a value longer than {MAX_VALUE:,}"),
        ("('x' * 100000).replace('x', 'y' * 1000)", f"a value longer than {MAX_VALUE:,}"),
        ("2 ** 100000000", "a number over 4,096 bits"),
        ("((10 ** 64) ** 64) ** 64", "a number over 4,096 bits"),
    ],
)
def test_a_template_computes_no_huge_value(ws: Path, expression: str, refused: str) -> None:
    found = problems(ws, named(expression))
    assert len(found) == 1 and found[0].startswith("pools.yaml:2:1: error: "), found
    assert refused in found[0] and found[0].endswith("not allowed in workspace files")


def test_loops_and_calls_are_counted(ws: Path) -> None:
    nested = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    found = problems(ws, nested + "\nprofilePools: []\n")
    assert found == [
        f"pools.yaml:1:1: error: more than {MAX_STEPS:,} loop iterations and calls: "
        "not allowed in workspace files"
    ]


def test_macros_recursing_exponentially_are_counted(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2**61 calls uncounted; the bound lowered to a tenth so the test takes a moment
    (the loops above reach the bound itself)."""
    monkeypatch.setattr(sandbox_bounds, "MAX_STEPS", MAX_STEPS // 10)
    macro = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
    found = problems(ws, macro + "{{ f(60) }}\nprofilePools: []\n")
    assert len(found) == 1
    assert f"more than {MAX_STEPS // 10:,} loop iterations and calls" in found[0]


def test_the_rendered_file_is_bounded(ws: Path) -> None:
    loop = "{% for i in range(100000) %}# {{ 'x' * 1000 }}\n{% endfor %}"
    found = problems(ws, loop + "profilePools: []\n")
    assert found == [
        f"pools.yaml:1:1: error: a rendered file longer than {MAX_RENDERED:,} characters: "
        "not allowed in workspace files"
    ]


def test_ordinary_templates_still_render(ws: Path) -> None:
    """The bounds leave room for what workspaces do: loops over thousands, filters,
    formats, macros, includes of shared files."""
    shared = "{% macro pool(n) %}  - {name: 'p-{{ '%05d' % n }}', members: []}\n{% endmacro %}"
    pools = (
        "{% import 'shared/macros.j2' as m %}profilePools:\n"
        "{% for i in range(3000) %}{{ m.pool(i) }}{% endfor %}"
        "  - name: \"{{ 'Eu'|upper ~ '-' ~ ('x' * 3)|replace('x', 'y') }}\"\n"
        "  - name: \"{{ '{:>6}'.format('r')|trim }}-{{ (2 ** 10)|string|center(8)|trim }}\"\n"
    )
    (ws / "shared").mkdir(parents=True)
    (ws / "shared" / "macros.j2").write_text(shared)
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": pools})
    names = [
        d.model.model_dump()["name"]
        for d in load_workspace(ws, environ={}).declared["profilePools"]
    ]
    assert len(names) == 3002 and names[0] == "p-00000" and names[-2:] == ["EU-yyy", "r-1024"]


@pytest.mark.parametrize(
    "include",
    ["../outside.yaml", "/etc/hostname", "shared/../../outside.yaml", "link/hostname"],
)
def test_includes_stay_inside_the_workspace(ws: Path, include: str) -> None:
    (ws.parent / "outside.yaml").write_text("profilePools: [{name: stolen}]\n")
    ws.mkdir(parents=True, exist_ok=True)
    os.symlink("/etc", ws / "link")
    found = problems(ws, f"{{% include '{include}' %}}\n")
    assert len(found) == 1 and "stolen" not in found[0]
    assert found[0].endswith(
        f"'{include}' leads outside the workspace: not allowed in workspace files"
    )


def test_a_symlink_inside_the_workspace_is_followed(ws: Path) -> None:
    (ws / "shared").mkdir(parents=True)
    (ws / "shared" / "pools.j2").write_text("profilePools: [{name: shared}]\n")
    os.symlink(ws / "shared", ws / "common")
    write_workspace(ws, {"agentform.yaml": ROOT, "pools.yaml": "{% include 'common/pools.j2' %}\n"})
    declared = load_workspace(ws).declared["profilePools"]
    assert [d.model.model_dump()["name"] for d in declared] == ["shared"]


# -- env() and secret(): no credentials, only the variables a workspace declares ---


def loaded(ws: Path, pools: str, environ: dict[str, str], root: str = ROOT) -> list[str]:
    write_workspace(ws, {"agentform.yaml": root, "pools.yaml": pools})
    try:
        workspace = load_workspace(ws, environ=environ)
    except DiagnosticsError as exc:
        return [d.render() for d in exc.diagnostics]
    return [d.model.model_dump()["name"] for d in workspace.declared["profilePools"]]


@pytest.mark.parametrize("function", ["env", "secret"])
def test_a_workspace_file_cannot_read_the_api_key(ws: Path, function: str) -> None:
    """Not by env() (its value would be shown in the plan, posted on the pull
    request), nor by secret() (it would be sent to the service as a header)."""
    root = ROOT + "allowEnv: [AGENTFORM_API_KEY]\n"
    found = loaded(
        ws, named(f"{function}('AGENTFORM_API_KEY')"), {"AGENTFORM_API_KEY": "k3y"}, root
    )
    assert found == [
        "pools.yaml:2:15: error: AGENTFORM_API_KEY holds agentform's API key: "
        "not allowed in workspace files"
    ]


def test_env_reads_only_the_variables_the_workspace_allows(ws: Path) -> None:
    environ = {"GITHUB_TOKEN": "ghs_x", "AGENTFORM_VAR_REGION": "eu", "TEAM": "pay"}
    assert loaded(ws, named("env('GITHUB_TOKEN')"), environ) == [
        "pools.yaml:2:15: error: env('GITHUB_TOKEN'): a workspace file reads only variables "
        "named AGENTFORM_VAR_* or listed in allowEnv (agentform.yaml)"
    ]
    pools = named("env('AGENTFORM_VAR_REGION') ~ '-' ~ env('TEAM')")
    assert loaded(ws, pools, environ, ROOT + "allowEnv: [TEAM]\n") == ["eu-pay"]


def test_allow_env_belongs_in_agentform_yaml(ws: Path) -> None:
    found = loaded(ws, "allowEnv: [X]\n" + named("'a'"), {})
    assert found == [
        "pools.yaml:1:1: error: 'allowEnv' is a workspace setting: it belongs in agentform.yaml"
    ]


def test_secret_reads_any_other_variable(ws: Path) -> None:
    """A secret() value is never shown: it may come from any variable but the key."""
    hooks = (
        "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
        "    headers: {Authorization: \"{{ secret('GITHUB_TOKEN') }}\"}\n"
    )
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": hooks})
    workspace = load_workspace(ws, environ={"GITHUB_TOKEN": "ghs_x"})
    assert workspace.secrets.values["GITHUB_TOKEN"] == "ghs_x"


@pytest.mark.parametrize(
    "expression",
    [
        "secret('T')|upper",
        "secret('T')|reverse",
        "secret('T')[1:]",
        "secret('T')[0]",
        "secret('T').lower()",
        "secret('T') * 2",
        "secret('T')|replace('a', 'b')",
    ],
)
def test_a_secret_can_only_be_placed_in_text(ws: Path, expression: str) -> None:
    """A transform would need the value, which no template ever sees (secret() gives
    a token): each is refused at its line, never rendered as something else."""
    hooks = (
        "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
        f'    headers: {{X-A: "{{{{ {expression} }}}}"}}\n'
    )
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": hooks})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws, environ={"T": "s3cret-value"})
    (found,) = [d.render() for d in info.value.diagnostics]
    assert found.startswith("hooks.yaml:4:") and "s3cret" not in found
    assert "a secret() value can only be placed in text" in found


def test_a_secret_placed_in_text_renders(ws: Path) -> None:
    hooks = (
        "webhooks:\n  - name: h\n    url: https://hooks.example.com/x\n"
        "    headers: {X-A: \"Bearer {{ secret('T') ~ '-x' }}{{ secret('T')|string }}\"}\n"
    )
    write_workspace(ws, {"agentform.yaml": ROOT, "hooks.yaml": hooks})
    workspace = load_workspace(ws, environ={"T": "s3cret"})
    (hook,) = workspace.declared["webhooks"]
    assert hook.model.model_dump()["headers"]["X-A"].reveal() == "Bearer s3cret-xs3cret"


# -- files: inside the workspace, of a size a run can afford ----------------------

BATCH = (
    "batches:\n  - name: b\n    agent: support-agent\n    startAt: 2030-01-01T00:00:00Z\n"
    "    config: {type: timeBatching, batchSize: 1, batchInterval: 60}\n"
    "    itemsFile: ITEMS\n"
)


@pytest.mark.parametrize("items", ["../outside.csv", "/etc/passwd", "link/passwd"])
def test_an_items_file_stays_inside_the_workspace(ws: Path, items: str) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws.parent / "outside.csv").write_text("inputs.secret\nstolen\n")
    os.symlink("/etc", ws / "link")
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH.replace("ITEMS", items)})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        f"b.yaml:6:16: error: itemsFile '{items}' leads outside the workspace: "
        "not allowed in workspace files"
    ]


def test_an_items_file_of_more_items_than_a_batch_holds_is_refused_unread(ws: Path) -> None:
    """A million rows: refused from the count, without building a million items."""
    rows = "\n".join(str(n) for n in range(1_000_000))
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH.replace("ITEMS", "big.csv")})
    (ws / "big.csv").write_text("inputs.n\n" + rows + "\n")
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        "b.yaml:6:16: error: itemsFile big.csv: has more than 10,000 items, the most a batch holds"
    ]


@pytest.mark.parametrize("name", ["pools.yaml", "big.csv"])
def test_a_file_larger_than_a_workspace_file_may_be_is_refused_unread(ws: Path, name: str) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "b.yaml": BATCH.replace("ITEMS", "big.csv")})
    with (ws / name).open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no 16 MiB written
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    found = [d.render() for d in info.value.diagnostics]
    assert any(f"is {MAX_FILE_BYTES + 1:,} bytes, over the 16 MiB" in f for f in found), found


def test_a_workspace_file_linked_from_outside_is_refused(ws: Path) -> None:
    """A checked-in symlink named like a workspace file must not read /etc/passwd or
    another repository's YAML."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws.parent / "elsewhere.yaml").write_text("profilePools: [{name: from-outside}]\n")
    os.symlink(ws.parent / "elsewhere.yaml", ws / "pools.yaml")
    write_workspace(ws, {"agentform.yaml": ROOT})
    with pytest.raises(DiagnosticsError) as info:
        load_workspace(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        "pools.yaml: error: 'pools.yaml' leads outside the workspace: "
        "not allowed in workspace files"
    ]


def test_lipsum_is_not_offered(ws: Path) -> None:
    """lipsum(n) made n paragraphs: 1,000,000 took a minute and 1.75 GB."""
    found = problems(ws, named("lipsum(1000000)|length"))
    assert found and "'lipsum' is undefined" in found[0]


@pytest.mark.parametrize(
    "expression",
    [
        "[s, s, s]",
        "[[s]] * 1000",
        "[s, s]|join('-')",
        "[s, s]|string",
        "'a' ~ [s, s]",
        "{'a': s, 'b': s}|tojson",
    ],
)
def test_a_collection_of_repeated_values_is_bounded_as_text(ws: Path, expression: str) -> None:
    """A list holding one 1 MB text many times costs little until it is written out:
    `{{ [s] * 1000 }}` would make a gigabyte in one go. Its size is what it reads
    as text, all of it."""
    found = problems(ws, "{% set s = 'x' * 1000000 %}" + named(expression))
    assert len(found) == 1 and f"a value longer than {MAX_VALUE:,} characters" in found[0]
