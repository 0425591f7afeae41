"""Which workspace files a file includes or imports, and whether they include each
other in a cycle.

`{% include %}`, `{% import %}`, `{% from … import %}` and `{% extends %}` with a
name written as text are followed before a file is rendered, so a cycle is one
diagnostic naming the chain (`a.yaml:2 -> b.yaml:1 -> a.yaml`), not a recursion
error. A name computed at render time cannot be followed here: a cycle through
one still ends, at Python's recursion limit, as "templates nest too deep".
Every file is parsed once, and at most MAX_FILES files are followed.
"""

from __future__ import annotations

import re

import jinja2
from jinja2 import nodes

from agentform.config.sandbox import WorkspaceSandbox

MAX_FILES = 1_000  # files followed from one file: beyond it, the render's own bounds hold

Step = tuple[str, int]  # a file, and the line of its include (0 for the cycle's end)
_INCLUDING = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)
_INCLUDING_TAG = re.compile(r"\{%[-+]?\s*(?:include|import|from|extends)\b")


def includes_of(env: WorkspaceSandbox, name: str) -> list[Step]:
    """(name included, line of the tag) for each literal include of the file `name`;
    [] when it cannot be read or parsed (rendering reports that, at its place).
    Each file is parsed once a load (the environment is the load's)."""
    known = env.includes_found.get(name)
    if known is None:
        known = env.includes_found[name] = _parsed_includes(env, name)
    return known


def _parsed_includes(env: WorkspaceSandbox, name: str) -> list[Step]:
    try:
        source, _, _ = env.workspace_loader.get_source(env, name)
        if not _INCLUDING_TAG.search(source):
            return []  # most files include nothing: not parsed a second time
        tree = env.parse(source, name)
    except (jinja2.TemplateError, OSError):
        return []
    out = []
    for node in tree.find_all(_INCLUDING):
        target = node.template  # type: ignore[attr-defined]  # each of _INCLUDING has one
        names = target.items if isinstance(target, nodes.List | nodes.Tuple) else [target]
        for item in names:  # `{% include ['a', 'b'] %}` names every candidate
            if isinstance(item, nodes.Const) and isinstance(item.value, str):
                out.append((item.value, node.lineno))
    return out


def included_files(env: WorkspaceSandbox, names: list[str]) -> set[str]:
    """The files that the workspace files of `names` include or import by a name
    written as text, directly or through other files: parts of those files, not
    workspace files of their own (read alone, a part is rarely a whole document,
    and read twice its objects would be declared twice). Files that only include
    each other are no one's part: each is read, and reports the cycle."""
    normalised = env.workspace_loader.normalised
    graph = {name: [normalised(i) for i, _ in _literal_includes(env, name)] for name in names}
    included_by_another = {i for name, found in graph.items() for i in found if i != name}
    queue = [name for name in names if name not in included_by_another]
    seen: set[str] = set(queue)
    while queue and len(seen) < MAX_FILES:
        name = queue.pop()
        found = graph.get(name)
        if found is None:  # not a workspace file (a .j2 part): its own includes
            found = [normalised(i) for i, _ in includes_of(env, name)]
        for included in found:
            if included not in seen:
                seen.add(included)
                queue.append(included)
    roots = {name for name in names if name not in included_by_another}
    return {name for name in seen - roots}


def _literal_includes(env: WorkspaceSandbox, name: str) -> list[Step]:
    """includes_of a file that has a tag at all (most workspace files have none, and
    are not parsed here)."""
    try:
        source, _, _ = env.workspace_loader.get_source(env, name)
    except (jinja2.TemplateError, OSError):
        return []
    return includes_of(env, name) if "{%" in source else []


def include_cycle(env: WorkspaceSandbox, name: str) -> list[Step] | None:
    """The chain of includes from `name` back to a file already in it, or None."""
    done: set[str] = set()
    chain: list[Step] = []

    def visit(file: str) -> list[Step] | None:
        if len(done) >= MAX_FILES:
            return None
        for included, line in includes_of(env, file):
            chain.append((file, line))
            if any(step[0] == included for step in chain):
                return [*chain, (included, 0)]
            if included not in done and (found := visit(included)) is not None:
                return found
            chain.pop()
        done.add(file)
        return None

    return visit(name)
