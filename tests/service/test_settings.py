"""The service's settings: one typed object, every setting declared, built once by create_app."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

import agentform.service as service_package
from agentform.service import create_app
from agentform.service.settings import TEST_WAIT_MARGIN_SECONDS, ServiceSettings
from tests.service.conftest import TEST_SEED


def test_a_misspelt_setting_is_refused_not_ignored() -> None:
    with pytest.raises(ValidationError, match="platfrom_url"):
        ServiceSettings(platfrom_url="https://platform.example")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "field, value",
    [("webhook_timeout_seconds", 0), ("read_timeout_seconds", -1), ("temp_files_quota_bytes", -1)],
)
def test_a_setting_out_of_its_range_is_refused(field: str, value: float) -> None:
    with pytest.raises(ValidationError, match=field):
        ServiceSettings.model_validate({field: value})


def test_the_webhook_test_waits_for_the_attempts_own_timeout_and_a_margin() -> None:
    assert ServiceSettings().test_wait == 10 + TEST_WAIT_MARGIN_SECONDS
    slow = ServiceSettings(webhook_timeout_seconds=25)
    assert slow.test_wait == 25 + TEST_WAIT_MARGIN_SECONDS
    assert ServiceSettings(webhook_timeout_seconds=25, webhook_test_wait_seconds=0).test_wait == 0


def test_create_app_keeps_one_settings_object_for_the_routes_and_the_runtime(
    tmp_path: Path,
) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(204))
    settings = ServiceSettings(platform_url="https://platform.example/agents/v2")
    app = create_app(
        tmp_path / "s.db", seed=TEST_SEED, settings=settings, webhook_transport=transport
    )
    try:
        kept = app.state.settings
        assert isinstance(kept, ServiceSettings)
        assert kept.platform_url == "https://platform.example/agents/v2"
        assert kept.webhook_transport is transport
        assert app.state.runner.context.settings is kept
    finally:
        app.state.db.close()


def _is_settings(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "settings") or (
        isinstance(node, ast.Attribute) and node.attr == "settings"
    )


def reads_by_name(source: str) -> list[int]:
    """The lines of `source` that read `settings.get(...)` or `settings[...]`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Subscript) and _is_settings(node.value)) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_settings(node.func.value)
        ):
            found.append(node.lineno)
    return found


def test_the_check_finds_a_setting_read_by_name() -> None:
    source = "x = request.app.state.settings.get('a')\ny = settings['b']\nz = row['settings']\n"
    assert reads_by_name(source) == [1, 2]


def test_no_module_of_the_service_reads_a_setting_by_name() -> None:
    """`settings.get("x")` or `settings["x"]` would be a setting nobody declared."""
    found = [
        f"{path.name}:{line}"
        for path in sorted(Path(service_package.__file__).parent.rglob("*.py"))
        for line in reads_by_name(path.read_text(encoding="utf-8"))
    ]
    assert not found
