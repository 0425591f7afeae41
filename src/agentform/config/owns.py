"""`owns`: the part of the organization a workspace manages, as name globs per kind.

Without `owns` a workspace owns everything (as before it existed). With it, it
owns the objects a glob of their kind matches, and nothing of a kind it leaves
out. A glob matches the key's canonical form: a pool's, group's, template's or
webhook's name, a batch's `AGENT/NAME`; an attachment belongs to its webhook.

Only owned objects are planned: `prune` deletes, and "not managed" counts, only
owned ones; an object the files declare must be owned (checked here, offline,
at its file:line), so two workspaces sharing an organization cannot touch each
other's objects. `validate --all` checks that no two workspaces of a repository
own a common name (globs.overlap).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentform.config.globs import matches, overlap
from agentform.core.diagnostics import Diagnostics

if TYPE_CHECKING:
    from agentform.kinds.base import Kind
    from agentform.kinds.keys import Key
    from agentform.kinds.model import Declared

Owns = Mapping[str, Sequence[str]] | None
"""kind -> name globs; None: everything."""


def is_owned(owns: Owns, kind: Kind, key: Key) -> bool:
    """Whether the workspace owns the object `kind`/`key` (a child: its parent)."""
    if owns is None:
        return True
    if kind.parent is not None:
        from agentform.kinds import Kind as Kinds

        return is_owned(owns, Kinds.registry[kind.parent], kind.parent_key(key))
    return matches(owns, kind.name, str(key))


def owns_text(owns: Owns, kind: str) -> str:
    """What `owns` says of `kind`, for messages."""
    if owns is None:
        return "everything"
    globs = owns.get(kind)
    return ", ".join(repr(g) for g in globs) if globs else f"no {kind}"


def check_owned(
    owns: Owns, declared: Mapping[str, Sequence[Declared]], diagnostics: Diagnostics
) -> None:
    """An object the files declare (present or absent) must be owned."""
    if owns is None:
        return
    from agentform.kinds import Kind

    for kind_name, items in declared.items():
        kind = Kind.registry[kind_name]
        if kind.parent is not None:
            continue  # an attachment belongs to its webhook, checked as the webhook
        for item in items:
            key = kind.key_of(item)
            if not is_owned(owns, kind, key):
                diagnostics.error(
                    f"{kind_name}/{key} is not owned by this workspace (owns in "
                    f"agentform.yaml gives {owns_text(owns, kind_name)} for {kind_name}): "
                    "add a glob that matches it, or declare it in the workspace that owns it",
                    item.position,
                )


def shared_names(first: Owns, second: Owns, kinds: Sequence[str]) -> list[str]:
    """Where two workspaces' `owns` can both match a name: `kind: 'a*' and 'ab*'`
    for each pair of globs that overlap (nothing when they are disjoint)."""
    found = []
    for kind in kinds:
        for a, said_a in _globs(first, kind):
            for b, said_b in _globs(second, kind):
                if overlap(a, b):
                    found.append(f"{kind}: {said_a} and {said_b}")
    return found


def _globs(owns: Owns, kind: str) -> list[tuple[str, str]]:
    """The globs `owns` gives `kind`, each with how a message names it."""
    if owns is None:
        return [("*", "everything (no owns)")]
    return [(glob, repr(glob)) for glob in owns.get(kind, ())]
