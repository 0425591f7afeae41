"""The documentation that ships: docs/reference/ is what the command tree generates,
and every relative link in README.md, CONTRIBUTING.md and docs/ reaches a file of
the repository (and, with an #anchor, a heading of it). Links are read with
markdown-it-py, as a renderer reads them."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentform.cli.reference import pages

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
PARSER = MarkdownIt("commonmark").enable("table")


def documents() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_reference_is_what_the_command_tree_generates() -> None:
    wanted = pages()
    present = {path.name: path.read_text(encoding="utf-8") for path in REFERENCE.glob("*.md")}
    missing = sorted(set(wanted) - set(present))
    extra = sorted(set(present) - set(wanted))
    stale = sorted(name for name in set(wanted) & set(present) if wanted[name] != present[name])
    assert not (missing or extra or stale), (
        f"docs/reference/ is out of date (missing {missing}, not generated {extra}, "
        f"stale {stale}): run `make docs`"
    )


def test_reference_has_a_page_per_command_and_subcommand() -> None:
    names = set(pages())
    assert {"index.md", "plan.md", "service-run.md", "webhook-verify.md"} <= names


def _inline_tokens(tokens: list[Token]) -> list[Token]:
    found = []
    for token in tokens:
        found.append(token)
        if token.children:
            found.extend(_inline_tokens(token.children))
    return found


def links(path: Path) -> list[str]:
    tokens = _inline_tokens(PARSER.parse(path.read_text(encoding="utf-8")))
    out = []
    for token in tokens:
        if token.type == "link_open":
            out.append(str(token.attrs.get("href", "")))
        elif token.type == "image":
            out.append(str(token.attrs.get("src", "")))
    return out


def slug(text: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces
    to hyphens."""
    text = text.strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -_" or category[0] in "LN":
            kept.append(char)
    return re.sub(" ", "-", "".join(kept))


def anchors(path: Path) -> set[str]:
    tokens = PARSER.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for i, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[i + 1]
        text = "".join(child.content for child in inline.children or [])
        base = slug(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


@pytest.mark.parametrize("document", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document: Path) -> None:
    broken = []
    for href in links(document):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith("mailto:"):
            continue
        target = (document.parent / unquote(parts.path)).resolve() if parts.path else document
        if not target.is_relative_to(ROOT) or not target.exists():
            broken.append(f"{href}: no such file in the repository")
            continue
        if parts.fragment:
            if target.suffix != ".md":
                broken.append(f"{href}: an anchor into a file that is not markdown")
            elif parts.fragment not in anchors(target):
                broken.append(f"{href}: no heading #{parts.fragment} in {target.name}")
    assert not broken, f"{document.relative_to(ROOT)}: " + "; ".join(broken)


ABSENT_SOURCES = re.compile(r"API\.md|DESIGN\.md|[Ss]eed §|\.\./shared")
"""Citations of files that are not in the repository: the service's specification and
design notes. (Written so that this line does not match itself.)"""


@pytest.mark.parametrize("document", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documents_stand_on_their_own(document: Path) -> None:
    """Everything a user needs is in the repository: no document cites the design
    notes and specifications kept outside it."""
    cited = ABSENT_SOURCES.findall(document.read_text(encoding="utf-8"))
    assert not cited, f"{document.relative_to(ROOT)} cites {sorted(set(cited))}"


CITING_SUFFIXES = (".py", ".md", ".yml", ".sh")


def tracked_files() -> list[Path]:
    """Every file git tracks (so nothing under .git, .venv or build output)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_cites_a_file_outside_the_repository() -> None:
    """Comments, docstrings, docs, examples and scripts cite only files of the
    repository: a section of docs/ instead of the specification it came from."""
    citing = []
    for path in tracked_files():
        if path.suffix not in CITING_SUFFIXES or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if found := ABSENT_SOURCES.findall(line):
                citing.append(f"{path.relative_to(ROOT)}:{number}: {sorted(set(found))}")
    assert not citing, "cites files outside the repository:\n" + "\n".join(citing)
