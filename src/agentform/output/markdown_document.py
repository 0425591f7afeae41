"""A markdown document cut to a size cap: its head, then one collapsible
`<details>` section per kind holding a `diff` block, cut between two entries
(never inside one), every open block closed, and a last line saying what was
left out and where the whole of it is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agentform.core.words import counted
from agentform.output.markdown_blocks import fence_for, html

GITHUB_LIMIT = 65_536
NOTE_ROOM = 600  # kept free for the line saying what was cut


@dataclass
class Section:
    """One `<details>` block: a summary and `count` entries (each the lines of one
    change), made only as far as they are shown."""

    kind: str
    summary: str
    count: int
    entries: Iterable[list[str]]


def capped(
    head: list[str], sections: list[Section], limit: int | None, whole: str, noun: str = "change"
) -> str:
    """`head`, then each section as a `<details>` block, the whole at most `limit`
    characters; what is left out is said last, with `whole`: where to see all of it."""
    out = "\n".join(head) + "\n"
    budget = None if limit is None else limit - NOTE_ROOM
    size = len(out)
    left_out: dict[str, int] = {}
    for section in sections:
        if left_out:
            left_out[section.kind] = section.count
            continue
        opening = f"<details><summary>{html(section.summary)}</summary>\n\n"
        size += len(opening) + len("```diff\n```\n\n</details>\n\n")
        body: list[str] = []
        for entry in section.entries:
            text = "\n".join(entry) + "\n"
            if budget is not None and size + len(text) > budget:
                break
            body.append(text)
            size += len(text)
        if len(body) < section.count:
            left_out[section.kind] = section.count - len(body)
        if body:
            fence = fence_for(body)
            out += f"{opening}{fence}diff\n{''.join(body)}{fence}\n\n</details>\n\n"
    if left_out:
        total = sum(left_out.values())
        detail = ", ".join(f"{kind}: {n}" for kind, n in left_out.items())
        out += (
            f"**{counted(total, f'more {noun}', 'were left out')}** ({detail}): "
            f"this text is limited to "
            f"{limit:,} characters. To see all of it, {whole}.\n"
        )
    return out
