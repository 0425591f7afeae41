"""The console in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`) driven by Selenium, against the service served by uvicorn on
loopback, on a manual clock.

Without Chromium the tests are skipped, and say why; with
`AGENTFORM_BROWSER_REQUIRED=1` (CI sets it) they fail instead. A failing test
saves a screenshot of the page it was on in `test-results/browser/`. With
`AGENTFORM_SCREENSHOTS=DIR` the tests that show a page save it there too
(`make screenshots` writes the guide's, docs/guide/images/).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from agentform.service.server import listening_socket
from tests.service.conftest import Api
from tests.service.console.world import Made, Receiver, populate, service_app
from tests.service.execution_support import EXEC_KEY

ROOT = Path(__file__).parents[2]
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
FAILURES = ROOT / "test-results" / "browser"
CHROMIUM = ("chromium", "chromedriver")


def _missing() -> str | None:
    absent = [name for name in CHROMIUM if shutil.which(name) is None]
    try:
        import selenium  # noqa: F401
    except ImportError:
        absent.append("selenium (pip)")
    if not absent:
        return None
    return (
        f"browser tests skipped: {', '.join(absent)} not installed "
        "(apt-get install chromium chromium-driver)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    why = _missing()
    if why is None:
        return
    for item in items:
        if "browser" in item.keywords:
            if os.environ.get("AGENTFORM_BROWSER_REQUIRED"):
                raise pytest.UsageError(f"AGENTFORM_BROWSER_REQUIRED is set, but {why}")
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    driver = getattr(item, "funcargs", {}).get("browser")
    if report.failed and driver is not None:
        FAILURES.mkdir(parents=True, exist_ok=True)
        path = FAILURES / f"{item.name}.png"
        driver.save_screenshot(str(path))
        report.sections.append(("browser", f"screenshot of the failure: {path}"))


class Served:
    """The service on a loopback port, populated, and an API client to it."""

    def __init__(self, directory: Path) -> None:
        self.receiver = Receiver()
        self.app = service_app(directory, self.receiver)
        sock = listening_socket("127.0.0.1", 0)
        self.root = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]})
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        self.http = httpx.Client(base_url=self.root, timeout=30)
        self.api = Api(self.http, EXEC_KEY)  # type: ignore[arg-type]
        self.made: Made = populate(self.api, self.advance)

    def advance(self, seconds: float) -> None:
        """Moves the service's manual clock through its API (as `service advance`)."""
        moved = self.http.post(
            "/agentform/v1/clock/advance",
            json={"duration": f"{seconds:g}s"},
            headers={"X-Api-Key": EXEC_KEY},
        )
        assert moved.status_code == 200, moved.text

    def now(self) -> str:
        clock = self.http.get("/agentform/v1/clock", headers={"X-Api-Key": EXEC_KEY})
        return str(clock.json()["now"])

    def close(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(30)
        self.app.state.db.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    service = Served(tmp_path_factory.mktemp("browser"))
    yield service
    service.close()


@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,900",
        "--disable-dev-shm-usage",
        "--no-proxy-server",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


@pytest.fixture
def browser(chrome: Any) -> Any:
    chrome.delete_all_cookies()
    return chrome


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page the driver shows."""
    driver.execute_script(AXE.read_text())
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document).then(r => done(JSON.stringify(r.violations)))"
        ".catch(e => done(JSON.stringify("
        "[{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}])));"
    )
    violations: list[dict[str, Any]] = json.loads(found)
    return [v for v in violations if v.get("impact") in ("serious", "critical")]


def keep_screenshot(driver: Any, name: str) -> None:
    """The page as it is, for the guide, when AGENTFORM_SCREENSHOTS names a directory."""
    target = os.environ.get("AGENTFORM_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(target) / f"console-{name}.png"))
