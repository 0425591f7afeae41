"""Reading markdown as GitHub would: parse it with markdown-it-py (CommonMark plus
tables) and return its structure, so tests check what a reader sees, not strings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

PARSER = MarkdownIt("commonmark").enable("table")


@dataclass
class Section:
    summary: str
    info: str = ""  # the info string of its code block
    code: str = ""  # the code block's content


@dataclass
class Structure:
    marker: str | None = None  # the HTML comment opening the document
    headings: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)  # text of blockquotes
    tables: list[list[list[str]]] = field(default_factory=list)  # rows of cells, header first
    sections: list[Section] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    stray_code: int = 0  # code blocks outside a <details> section


def structure(text: str) -> Structure:
    tokens = PARSER.parse(text)
    out = Structure()
    open_section: Section | None = None
    depth_quote = 0
    table: list[list[str]] | None = None
    row: list[str] | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "html_block":
            content = tok.content.strip()
            if i == 0 and content.startswith("<!--"):
                out.marker = content
            for m in re.finditer(r"<details><summary>(.*?)</summary>|</details>", content):
                if m.group(0) == "</details>":
                    assert open_section is not None, "a </details> closes nothing"
                    out.sections.append(open_section)
                    open_section = None
                else:
                    assert open_section is None, "<details> inside <details>"
                    open_section = Section(m.group(1))
        elif tok.type == "heading_open":
            out.headings.append(tokens[i + 1].content)
        elif tok.type == "blockquote_open":
            depth_quote += 1
        elif tok.type == "blockquote_close":
            depth_quote -= 1
        elif tok.type == "inline" and depth_quote:
            out.alerts.append(tok.content)
        elif tok.type == "paragraph_open" and not depth_quote:
            out.paragraphs.append(tokens[i + 1].content)
        elif tok.type == "fence":
            if open_section is None:
                out.stray_code += 1
            else:
                open_section.info, open_section.code = tok.info.strip(), tok.content
        elif tok.type == "table_open":
            table = []
        elif tok.type == "table_close":
            assert table is not None
            out.tables.append(table)
            table = None
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close":
            assert table is not None and row is not None
            table.append(row)
        elif (
            tok.type == "inline"
            and row is not None
            and tokens[i - 1].type in ("th_open", "td_open")
        ):
            row.append(tok.content)
    assert open_section is None, "a <details> section is never closed"
    return out
