"""`{% include %}` and `{% import %}` of files inside the workspace (issue 18): what
they bring in is read as part of the including file, and every problem is reported
at the included file's own line (template, YAML and schema problems alike); files
that include each other are one diagnostic naming the chain."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentform.core.errors import DiagnosticsError
from tests.provisioner.harness import load, write_workspace

ROOT = "workspace: w\n"
TEAM = 'profilePools:\n  - name: own\n{% include "shared/pools.yaml" %}\n  - name: after\n'


def problems(ws: Path, files: dict[str, str]) -> list[str]:
    write_workspace(ws, {"agentform.yaml": ROOT, **files})
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    return [d.render() for d in info.value.diagnostics]


def test_an_included_file_is_part_of_the_file_that_includes_it(ws: Path) -> None:
    shared = "  - name: shared-a\n    members: [bot-1]\n"
    write_workspace(ws, {"agentform.yaml": ROOT, "team.yaml": TEAM, "shared/pools.yaml": shared})
    loaded = load(ws)
    names = [p.model.name for p in loaded.declared["profilePools"]]  # type: ignore[attr-defined]
    assert names == ["own", "shared-a", "after"]
    assert loaded.files == ["agentform.yaml", "team.yaml"]  # the part is not read alone
    assert str(loaded.declared["profilePools"][1].position) == "shared/pools.yaml:1:5"


def test_schema_problems_of_included_text_are_at_the_included_lines(ws: Path) -> None:
    team = (
        "profilePools:\n{% for region in ['eu', 'us'] %}\n"
        '  {% include "shared/pool.yaml" %}\n{% endfor %}\n  - name: last\n    colour: red\n'
    )
    shared = "- name: pool-{{ region }}\n    membrs: [bot-1]\n"
    assert problems(ws, {"team.yaml": team, "shared/pool.yaml": shared}) == [
        "shared/pool.yaml:2:5: error: profilePools.0.membrs: unknown key (did you mean 'members'?)",
        "shared/pool.yaml:2:5: error: profilePools.1.membrs: unknown key (did you mean 'members'?)",
        "team.yaml:6:5: error: profilePools.2.colour: unknown key",
    ]


def test_a_yaml_error_in_included_text_is_at_the_included_line(ws: Path) -> None:
    shared = "  - name: a\n  - name: b\n   members: [bot-1]\n"
    said = problems(ws, {"team.yaml": TEAM, "shared/pools.yaml": shared})
    assert len(said) == 1 and said[0].startswith("shared/pools.yaml:3:"), said


@pytest.mark.parametrize(
    ("shared", "expected"),
    [
        (
            "  - name: a\n    members: [{{ vars.nope }}]\n",
            "shared/pools.yaml:2:1: error: template error:",
        ),
        (
            "  - name: a\n    members: [{{ 1 + }}]\n",
            "shared/pools.yaml:2:1: error: template error: ",
        ),
        (
            "\n\n  - name: {{ 1 / 0 }}\n",
            "shared/pools.yaml:3:1: error: template error: division by zero",
        ),
        (
            "  - name: a\n{% include '../../outside.yaml' %}\n",
            "shared/pools.yaml:2:1: error: '../../outside.yaml' leads outside the workspace",
        ),
        (
            "  - name: a\n{% include 'shared/nope.yaml' %}\n",
            "shared/pools.yaml:2:1: error: template error: no file shared/nope.yaml to include",
        ),
        (
            "  - name: a\n    members: [{{ env('HOME') }}]\n",
            "shared/pools.yaml:2:18: error: env('HOME'): a workspace file reads only",
        ),
    ],
)
def test_template_problems_in_an_included_file_are_at_its_own_line(
    ws: Path, shared: str, expected: str
) -> None:
    said = problems(ws, {"team.yaml": TEAM, "shared/pools.yaml": shared})
    assert len(said) == 1 and said[0].startswith(expected), said


def test_a_problem_in_an_imported_macro_is_at_the_macro_file(ws: Path) -> None:
    macros = (
        "{% macro pool(name) %}\n  - name: {{ name }}\n    size: {{ 1 // 0 }}\n{% endmacro %}\n"
    )
    team = '{% import "lib/macros.j2" as m %}\nprofilePools:\n{{ m.pool("a") }}\n'
    said = problems(ws, {"team.yaml": team, "lib/macros.j2": macros})
    assert said == ["lib/macros.j2:3:1: error: template error: integer division or modulo by zero"]


def test_files_that_include_each_other_are_one_problem_with_the_chain(ws: Path) -> None:
    files = {
        "team.yaml": TEAM,
        "shared/pools.yaml": "  - name: a\n\n{% include 'shared/more.yaml' %}\n",
        "shared/more.yaml": "{% include 'shared/pools.yaml' %}\n",
    }
    assert problems(ws, files) == [
        "shared/more.yaml:1:1: error: template error: files include each other: "
        "team.yaml:3 -> shared/pools.yaml:3 -> shared/more.yaml:1 -> shared/pools.yaml"
    ]


def test_two_files_that_include_each_other_are_one_problem(ws: Path) -> None:
    """Neither is the other's part, so both are read; the cycle they make is still
    one problem, said by the first read, not once per file."""
    files = {
        "team.yaml": "profileGroups:\n  - name: t\n{% include 'shared/groups.yaml' %}\n",
        "shared/groups.yaml": "  - name: g\n{% include 'team.yaml' %}\n",
    }
    assert problems(ws, files) == [
        "team.yaml:3:1: error: template error: files include each other: "
        "shared/groups.yaml:2 -> team.yaml:3 -> shared/groups.yaml"
    ]


def test_a_file_that_includes_itself_is_a_cycle(ws: Path) -> None:
    said = problems(ws, {"team.yaml": "{% include 'team.yaml' %}\n"})
    assert said == [
        "team.yaml:1:1: error: template error: files include each other: team.yaml:1 -> team.yaml"
    ]


def test_a_cycle_through_a_computed_name_ends_as_too_deep(ws: Path) -> None:
    said = problems(ws, {"team.yaml": "{% include ['team' ~ '.yaml'] | first %}\n"})
    assert len(said) == 1 and "templates nest too deep" in said[0], said


def test_an_included_file_that_is_not_utf8_says_so_at_the_include(ws: Path) -> None:
    write_workspace(ws, {"agentform.yaml": ROOT, "team.yaml": TEAM})
    (ws / "shared").mkdir()
    (ws / "shared/pools.yaml").write_bytes(b"\xff\xfe  - name: x\n")
    with pytest.raises(DiagnosticsError) as info:
        load(ws)
    assert [d.render() for d in info.value.diagnostics] == [
        "team.yaml:3:1: error: template error: shared/pools.yaml is not UTF-8 text (byte 0): "
        "workspace files are UTF-8"
    ]


@pytest.mark.parametrize("target", ["../missing/shared.yaml", "gone.yaml", "/nonexistent"])
def test_a_workspace_file_linking_nowhere_is_said_with_the_other_problems(
    ws: Path, target: str
) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "broken-link.yaml").symlink_to(target)
    said = problems(ws, {"pools.yaml": "profilePools:\n  - {name: a, membres: [x]}\n"})
    assert said[0] == "broken-link.yaml: error: a link to a file that does not exist", said
    assert len(said) == 2 and said[1].startswith("pools.yaml:2:"), said


@pytest.mark.parametrize(
    "links", [{"self.yaml": "self.yaml"}, {"a.yaml": "b.yaml", "b.yaml": "a.yaml"}]
)
def test_a_workspace_file_in_a_link_loop_is_said_with_the_other_problems(
    ws: Path, links: dict[str, str]
) -> None:
    """A loop (`ln -s self.yaml self.yaml`) resolves to no file: said at each link, as
    a link loop, never a crash."""
    ws.mkdir(parents=True, exist_ok=True)
    for name, target in links.items():
        (ws / name).symlink_to(target)
    said = problems(ws, {"pools.yaml": "profilePools:\n  - {name: a, membres: [x]}\n"})
    loops = [f"{name}: error: a link loop (the link leads back to itself)" for name in links]
    assert [line for line in said if not line.startswith("pools.yaml:2:")] == loops, said
    assert len(said) == len(links) + 1, said


def test_an_include_of_a_link_loop_is_said_at_the_include(ws: Path) -> None:
    (ws / "parts").mkdir(parents=True)
    (ws / "parts/loop.j2").symlink_to("loop.j2")
    said = problems(ws, {"hooks.yaml": 'webhooks:\n{% include "parts/loop.j2" %}\n'})
    assert said == [
        "hooks.yaml:2:1: error: template error: "
        "'parts/loop.j2' is a link loop (the link leads back to itself)"
    ], said
