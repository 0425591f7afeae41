"""Export: the live workspace as YAML documents that plan to no changes.

Secrets stay secrets: a live value in a field the files fill with secret(), or
a live value that holds a declared secret's value (current or earlier), is
exported as a Sensitive, which the YAML view writes as its `secret()` call.
Where the files' secret is not set, or the live value is not the secret's
current value, the field is still exported as the `secret()` call, with a
warning (a plan on the export will show the difference).
"""

from __future__ import annotations

import re
from typing import Any

from agentform.config.loader import Workspace
from agentform.config.owns import is_owned
from agentform.core.diagnostics import Diagnostics
from agentform.core.frozen import thaw
from agentform.core.sensitive import SecretRef, Sensitive
from agentform.engine.live import Everything, LiveState, read_live
from agentform.kinds import Kind, kinds_in_order
from agentform.kinds.context import PlanContext
from agentform.kinds.keys import Key
from agentform.kinds.model import Declared, LiveObject


async def export_live(
    workspace: Workspace,
    api: Any,
    kinds: list[str] | None = None,
    warnings: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """kind -> the YAML of each live object of it (see `export_organization`)."""
    return (await export_organization(workspace, api, kinds, warnings))[1]


async def export_organization(
    workspace: Workspace,
    api: Any,
    kinds: list[str] | None = None,
    warnings: list[str] | None = None,
) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """The id of the organization read (as the run resolved it from /context, in
    either service's shape), and kind -> the YAML of each live object of it
    (presets left out, children written inside their parents), sorted by key.
    What export could not write as it is live is added to `warnings`."""
    organization_id, keyed = await export_keyed(workspace, api, kinds, warnings)
    return organization_id, {kind: list(docs.values()) for kind, docs in keyed.items()}


async def export_keyed(
    workspace: Workspace,
    api: Any,
    kinds: list[str] | None = None,
    warnings: list[str] | None = None,
) -> tuple[str, dict[str, dict[Key, dict[str, Any]]]]:
    """As `export_organization`, each object's YAML by its key (what `import` picks
    from); only the objects the workspace owns (`owns`)."""
    chosen = _chosen(kinds)
    live = await read_live(
        workspace,
        api,
        depth={k.name: Everything() for k in chosen},
        references={r for k in chosen for r in (*k.references, *k.key_references)},
    )
    writer = _Writer(workspace, live, chosen, warnings if warnings is not None else [])
    children = writer.children()
    owns = workspace.settings.owns
    return live.organization_id, {
        k.name: {
            key: writer.exported(k, key, obj, children.get((k.name, key), {}))
            for key, obj in sorted(live.objects[k.name].items())
            if k.exports(obj) and is_owned(owns, k, key)
        }
        for k in chosen
        if k.parent is None
    }


def _chosen(kinds: list[str] | None) -> list[Kind]:
    """The kinds exported, in order: those named (all without names), with their children."""
    return [
        k
        for k in kinds_in_order()
        if kinds is None or k.name in kinds or (k.parent is not None and k.parent in kinds)
    ]


class _Writer:
    """Writes live objects of the chosen kinds as the files would: a value the
    files fill with secret() as its secret() call, warnings where it is not live."""

    def __init__(
        self, workspace: Workspace, live: LiveState, chosen: list[Kind], warnings: list[str]
    ) -> None:
        self.workspace = workspace
        self.live = live
        self.chosen = chosen
        self.warnings = warnings
        self.ctx = PlanContext(live.references, Diagnostics(), live=live.objects)
        self.declared = {
            k.name: {
                k.key_of(d, live.references): d for d in workspace.declared[k.name] if d.present
            }
            for k in chosen
        }

    def children(self) -> dict[tuple[str, Key], dict[str, list[dict[str, Any]]]]:
        """The YAML of each child object, by its parent's (kind, key) and its kind."""
        out: dict[tuple[str, Key], dict[str, list[dict[str, Any]]]] = {}
        for kind in self.chosen:
            if kind.parent is None:
                continue
            for key, obj in sorted(self.live.objects[kind.name].items()):
                owner = (kind.parent, kind.parent_key(key))
                out.setdefault(owner, {}).setdefault(kind.name, []).append(
                    self.exported(kind, key, obj, {})
                )
        return out

    def exported(
        self, kind: Kind, key: Key, obj: LiveObject, inside: dict[str, Any]
    ) -> dict[str, Any]:
        """One live object's YAML, with `inside` (its children's) under their fields."""
        ctx, said = self.ctx, self.warnings
        # plain dicts and lists (states are frozen): what YAML writers and people expect
        shown: dict[str, Any] = thaw(kind.export(obj, ctx, inside))
        item = self.declared[kind.name].get(key)
        desired = kind.desired_state(item, ctx, obj) if item is not None else None
        if desired is not None:
            where = f"{kind.name}/{key}"
            shown = _as_declared(shown, kind.show(desired, ctx), where, said)
        if item is not None:
            shown = _declared_maps(kind, item, shown)
        shown = self.workspace.secrets.mark(shown)
        _warn_earlier(shown, f"{kind.name}/{key}", said)
        return shown


_SECRET = re.compile(r"""secret\(["']([^"']+)["']\)""")


def secrets_named(documents: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The secret() names an export writes where a value cannot be read back (header
    values): the variables a plan of the export needs."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.update(_SECRET.findall(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(documents)
    return sorted(found)


def _as_declared(live: Any, wanted: Any, where: str, warnings: list[str], at: str = "") -> Any:
    """`live` with the declared Sensitive at each place the files fill with secret()."""
    if isinstance(wanted, Sensitive) and isinstance(live, str):
        names = ", ".join(sorted(wanted.secret_names()))
        if not wanted.resolved:
            warnings.append(
                f"{where} {at}: secret {names} is not set; exported as its secret() call, "
                "not compared with the live value"
            )
        elif wanted != live:
            warnings.append(
                f"{where} {at}: the live value is not the current value of secret {names}; "
                "exported as its secret() call (a plan will update it)"
            )
        return wanted
    if isinstance(wanted, dict) and isinstance(live, dict):
        return {
            k: _as_declared(v, wanted.get(k), where, warnings, f"{at}.{k}".lstrip("."))
            for k, v in live.items()
        }
    same_length = isinstance(wanted, list | tuple) and isinstance(live, list | tuple)
    if same_length and len(wanted) == len(live):
        return [
            _as_declared(v, w, where, warnings, f"{at}[{i}]")
            for i, (v, w) in enumerate(zip(live, wanted, strict=True))
        ]
    return live


def _declared_maps(kind: Kind, item: Declared, shown: dict[str, Any]) -> dict[str, Any]:
    """A map of values the service never answers (header values) is exported as its
    placeholders, except where the files write a value with secret(): there, as the
    files write it."""
    out = dict(shown)
    for field in kind.sensitive_fields:
        written = getattr(item.model, field, None)
        if isinstance(written, dict) and isinstance(out.get(field), dict):
            out[field] = {
                k: written[k] if isinstance(written.get(k), Sensitive) else v
                for k, v in out[field].items()
            }
    return out


def _warn_earlier(value: Any, where: str, warnings: list[str]) -> None:
    if isinstance(value, Sensitive):
        parts = value.parts or ()
        earlier = sorted({p.name for p in parts if isinstance(p, SecretRef) and p.previous})
        if earlier:
            warnings.append(
                f"{where}: a live value holds an earlier value of secret {', '.join(earlier)}; "
                "exported as its secret() call (a plan will update it)"
            )
    elif isinstance(value, dict):
        for v in value.values():
            _warn_earlier(v, where, warnings)
    elif isinstance(value, list | tuple):
        for v in value:
            _warn_earlier(v, where, warnings)
