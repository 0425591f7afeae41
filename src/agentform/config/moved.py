"""`moved`: renames, as Terraform's `moved` blocks. `{from: KIND/OLD, to: KIND/NEW}`
says the live object OLD is the one the files now declare as NEW: the plan
renames it in place (it keeps its id, members and attachments) instead of
deleting OLD and creating NEW.

Checked here, offline, at each entry's file:line: both addresses name one kind
the files can declare, `to` is declared present and `from` is not declared, no
two entries share a `from` or a `to`, and no entry moves what another moved
(a chain A -> B -> C is written A -> C; a cycle has no meaning). The planner
(engine/moves.py) decides what each entry does against the live objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentform.config.owns import Owns, is_owned, owns_text
from agentform.core.diagnostics import Diagnostics, Position
from agentform.core.problems import did_you_mean
from agentform.kinds.keys import Key, address, parse_address

if TYPE_CHECKING:
    from agentform.kinds.model import Declared


@dataclass(frozen=True)
class Move:
    kind: str
    source: Key  # the live object's key before (as written)
    target: Key  # its key in the files
    position: Position

    @property
    def source_address(self) -> str:
        return address(self.kind, self.source)

    @property
    def target_address(self) -> str:
        return address(self.kind, self.target)


def read_moves(entries: Sequence[Any], where: Any, diagnostics: Diagnostics) -> list[Move]:
    """The validated `moved` entries of agentform.yaml as Moves (`where` gives
    positions); an entry naming no kind or two kinds is an error."""
    from agentform.kinds.order import top_level_kinds

    kinds = [k.name for k in top_level_kinds()]
    moves = []
    for i, entry in enumerate(entries):
        position = where(("moved", i))
        parsed = []
        for side in ("from", "to"):
            text = getattr(entry, "from_" if side == "from" else "to")
            try:
                parsed.append(parse_address(text))
            except ValueError:
                diagnostics.error(f"moved.{i}.{side}: {text!r} is not KIND/NAME", position)
                continue
            if parsed[-1][0] not in kinds:
                diagnostics.error(
                    f"moved.{i}.{side}: {parsed[-1][0]!r} is not a kind that can be moved"
                    + did_you_mean(parsed[-1][0], kinds),
                    position,
                )
        if len(parsed) != 2 or any(kind not in kinds for kind, _ in parsed):
            continue
        (kind, source), (other, target) = parsed
        if kind != other:
            diagnostics.error(
                f"moved.{i}: from is a {kind}, to a {other}: an object keeps its kind", position
            )
        elif source == target:
            diagnostics.error(f"moved.{i}: from and to are the same ({kind}/{source})", position)
        else:
            moves.append(Move(kind, source, target, position))
    return moves


def check_moves(
    moves: Sequence[Move],
    declared: Mapping[str, Sequence[Declared]],
    owns: Owns,
    diagnostics: Diagnostics,
) -> None:
    """The rules between the entries, and between them and the declarations."""
    from agentform.kinds import Kind

    keys = {
        kind: {Kind.registry[kind].key_of(d): d for d in items}
        for kind, items in declared.items()
        if Kind.registry[kind].parent is None
    }
    sources: dict[str, Move] = {}
    targets: dict[str, Move] = {}
    for move in moves:
        kind = Kind.registry[move.kind]
        for key, side in ((move.source, "from"), (move.target, "to")):
            if not is_owned(owns, kind, key):
                diagnostics.error(
                    f"moved: {move.kind}/{key} ({side}) is not owned by this workspace "
                    f"(owns gives {owns_text(owns, move.kind)} for {move.kind})",
                    move.position,
                )
        _check_declared(move, keys[move.kind], diagnostics)
        _check_unique(move, sources, targets, diagnostics)
    for move in moves:
        later = sources.get(move.target_address)
        if later is not None:
            what = "a cycle" if later.target_address == move.source_address else "a chain"
            diagnostics.error(
                f"moved: {move.source_address} -> {move.target_address} -> "
                f"{later.target_address} is {what}: each entry moves the live object "
                f"straight to its name in the files"
                + (
                    f" (write from: {move.source_address}, to: {later.target_address})"
                    if what == "a chain"
                    else ""
                ),
                move.position,
            )


def _check_declared(move: Move, declared: Mapping[Key, Declared], diagnostics: Diagnostics) -> None:
    target = declared.get(move.target)
    if target is None or not target.present:
        near = did_you_mean(str(move.target), [str(k) for k, d in declared.items() if d.present])
        diagnostics.error(
            f"moved: to {move.target_address} is not declared in the files{near}: "
            "a move names the object as the files now declare it",
            move.position,
        )
    source = declared.get(move.source)
    if source is not None:
        diagnostics.error(
            f"moved: from {move.source_address} is still declared (at {source.position}): "
            "remove it, or remove the moved entry",
            move.position,
        )


def _check_unique(
    move: Move, sources: dict[str, Move], targets: dict[str, Move], diagnostics: Diagnostics
) -> None:
    for seen, name, side in (
        (sources, move.source_address, "from"),
        (targets, move.target_address, "to"),
    ):
        first = seen.get(name)
        if first is not None:
            diagnostics.error(
                f"moved: two entries have {side} {name} (the first at {first.position})",
                move.position,
            )
        else:
            seen[name] = move
