"""The console's own files: few, small, and all it loads (no third-party script, no
build step); the templates escape every value."""

from __future__ import annotations

from importlib import resources

from agentform.service.console.assets import ASSETS

LIMIT = 200 * 1024


def test_all_the_assets_together_stay_under_200_kb() -> None:
    static = resources.files("agentform.service.console") / "static"
    files = sorted(p.name for p in static.iterdir())
    assert files == sorted(ASSETS)  # every file is served; nothing else is
    assert sum(len((static / name).read_bytes()) for name in files) < LIMIT


def test_no_template_marks_a_value_safe_or_loads_from_elsewhere() -> None:
    templates = resources.files("agentform.service.console") / "templates"
    for page in templates.iterdir():
        text = page.read_text()
        assert "|safe" not in text.replace(" ", "") and "autoescape false" not in text, page
        assert "http://" not in text and "https://" not in text, page
        assert "<script>" not in text and " style=" not in text, page  # the CSP allows neither
