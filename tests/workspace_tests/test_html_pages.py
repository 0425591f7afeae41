"""`agentform test --html DIR`: one self-contained page per test, with its steps,
the executions each started, their timelines with every routing decision, and
every delivery with its attempts; the markdown and JUnit reports link to them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentform.cli.main import cli

FAILING = "tests/receivers.yaml"


def run_with_pages(
    quickstart: Path, *args: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    """`agentform test --html pages ARGS` run from the workspace (relative paths are
    the caller's, as a CI job gives them)."""
    monkeypatch.chdir(quickstart)
    receivers = quickstart / FAILING  # its first test now expects 2 attempts: it fails
    text = receivers.read_text()
    receivers.write_text(
        text.replace("status: delivered, attempts: 3", "status: delivered, attempts: 2")
    )
    result = CliRunner().invoke(
        cli,
        ["-C", str(quickstart), "test", "--filter", "receivers", "--html", "pages", *args],
        catch_exceptions=False,
    )
    return result.exit_code, result.output


@pytest.mark.slow
def test_each_test_gets_a_page_that_shows_why_it_failed(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _ = run_with_pages(quickstart, "--junit-xml", "junit.xml", monkeypatch=monkeypatch)
    assert code == 1
    pages = quickstart / "pages"
    names = sorted(p.name for p in pages.iterdir())
    assert len(names) == 4 and "index.html" in names  # three tests and their index
    (failed,) = [n for n in names if "fails-twice" in n]
    page = (pages / failed).read_text()
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "Why it failed: expect deliveries" in text
    assert "EXECUTION_STARTED took 3 attempts, expected 2" in text
    assert "tests/receivers.yaml:7:9 execute: started question" in text
    assert "Execution question" in text
    assert "ops-alerts: EXECUTION_STARTED sent, delivered after 3 attempts" in text
    assert re.search(r'<h3 id="delivery-[0-9a-f-]+">Delivery [0-9a-f]{8}: EXECUTION_STARTED', page)
    assert text.count(" 500 ") >= 2  # the two failed attempts, then the one delivered
    index = (pages / "index.html").read_text()
    assert f'href="{failed}"' in index and index.count("<tr>") == 4
    junit = (quickstart / "junit.xml").read_text()
    assert f'<property name="html" value="pages/{failed}" />' in junit


@pytest.mark.slow
def test_a_page_asks_nothing_of_any_server(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_with_pages(quickstart, monkeypatch=monkeypatch)
    for page in (quickstart / "pages").iterdir():
        html = page.read_text()
        assert "<script" not in html and "<link" not in html and " src=" not in html, page
        assert not re.search(r'href="(?!#)(?![\w.-]+\.html")', html), page  # in-page or a sibling
        assert "default-src 'none'" in html and "unsafe-inline" not in html


@pytest.mark.slow
def test_the_markdown_report_links_the_pages(
    quickstart: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = run_with_pages(quickstart, "--format", "markdown", monkeypatch=monkeypatch)
    assert code == 1
    assert "Every test's page: [pages/index.html](pages/index.html)" in output
    assert re.search(r"Its page: \[pages/[\w-]+fails-twice[\w-]*\.html\]\(pages/", output)


def test_a_page_says_an_execution_the_test_started_was_pruned(tmp_path: Path) -> None:
    """Before: retention forgot the execution, and its page said the test started
    none while its step linked to a section that was not there."""
    case = Path(__file__).parent / "cases" / "016-pruned-execution"
    root = tmp_path / "ws"
    shutil.copytree(case, root, ignore=shutil.ignore_patterns("expected.txt"))
    pages = tmp_path / "pages"
    args = ["-C", str(root), "test", "--filter", "a control", "--html", str(pages)]
    CliRunner().invoke(cli, args, catch_exceptions=False)
    (page,) = [p for p in pages.iterdir() if p.name != "index.html"]
    html = page.read_text()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "execute: started question" in text and "started no execution" not in text
    (anchor,) = re.findall(r'href="#(execution-[0-9a-f-]+)"', html)
    assert f'<section id="{anchor}"' in html
    assert "Execution question" in text and "Pruned: the service's retention forgot it" in text
