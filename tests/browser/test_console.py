"""The console in headless Chromium (tests/browser/conftest.py): signing in, every
page with axe-core finding no serious or critical violation, the filters, a new
execution arriving live, a resend and its attempt, a read key refused a resend,
another organization's execution answering 404, and the keyboard alone."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as seen
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import Served, axe_violations, keep_screenshot
from tests.service.execution_support import EXEC_KEY, EXEC_READ_KEY, RIVAL_KEY

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def sign_in(browser: Any, served: Served, key: str, path: str = "/console/") -> None:
    browser.get(served.root + path)
    field = browser.find_element(By.ID, "key")
    field.send_keys(key)
    field.submit()
    WebDriverWait(browser, 10).until(seen.presence_of_element_located((By.CSS_SELECTOR, ".who")))


def heading(browser: Any) -> str:
    return str(browser.find_element(By.TAG_NAME, "h1").text)


def assert_accessible(browser: Any) -> None:
    bad = axe_violations(browser)
    assert not bad, [(v["id"], v["impact"], v["help"], len(v["nodes"])) for v in bad]


def test_sign_in_and_every_page_is_accessible(browser: Any, served: Served) -> None:
    browser.get(served.root + "/console/")
    assert "Sign in" in heading(browser)
    assert_accessible(browser)
    keep_screenshot(browser, "sign-in")
    sign_in(browser, served, EXEC_KEY)
    made = served.made
    delivery = first_delivery(served)
    batch = served.api.post(
        "/execution-batches",
        json={
            "agentId": made.agent,
            "name": "nightly",
            "startAt": served.now(),
            "config": {"type": "timeBatching", "batchSize": 2, "batchInterval": 60},
            "items": [{"inputs": {"order": f"B-{i}"}} for i in range(5)],
        },
    )
    assert batch.status_code == 201, batch.text
    served.advance(130)
    pages = {
        "overview": "/console/",
        "executions": "/console/executions",
        "execution": f"/console/executions/{made.failed}",
        "deliveries": "/console/deliveries",
        "delivery": f"/console/deliveries/{delivery}",
        "batches": "/console/batches",
        "batch": f"/console/batches/{batch.json()['id']}",
        "webhooks": "/console/webhooks",
    }
    for name, path in pages.items():
        browser.get(served.root + path)
        assert browser.find_elements(By.TAG_NAME, "footer"), name  # the API call it shows
        assert_accessible(browser)
        keep_screenshot(browser, name)
    browser.get(served.root + pages["batch"])
    assert heading(browser) == "Batch nightly"
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.chart polyline")) == 2


def first_delivery(served: Served) -> str:
    alerts = served.made.integrations["alerts"]
    found = served.http.get(
        "/agentform/v1/webhook-deliveries",
        params={"integrationId": alerts},
        headers={"X-Api-Key": EXEC_KEY},
    ).json()["items"]
    return str(found[-1]["id"])


def test_the_filters_narrow_the_list(browser: Any, served: Served) -> None:
    sign_in(browser, served, EXEC_KEY, "/console/executions")
    Select(browser.find_element(By.ID, "f-status")).select_by_visible_text("failed")
    browser.find_element(By.ID, "f-status").submit()
    WebDriverWait(browser, 10).until(seen.url_contains("status=failed"))
    rows = browser.find_elements(By.CSS_SELECTOR, "#rows tr")
    assert len(rows) == 1 and "failed" in rows[0].text
    metadata = browser.find_element(By.ID, "f-metadata")
    metadata.send_keys("team=payments")
    Select(browser.find_element(By.ID, "f-status")).select_by_visible_text("any")
    metadata.submit()
    WebDriverWait(browser, 10).until(seen.url_contains("metadata=team"))
    (row,) = browser.find_elements(By.CSS_SELECTOR, "#rows tr")
    assert "completed" in row.text and "team=payments" in row.text


def test_a_new_execution_appears_without_a_reload(browser: Any, served: Served) -> None:
    sign_in(browser, served, EXEC_KEY, "/console/executions")
    before = len(browser.find_elements(By.CSS_SELECTOR, "#rows tr"))
    marker = browser.find_element(By.TAG_NAME, "h1")
    new = served.api.post(
        f"/agents/{served.made.agent}/execute", json={"metadata": {"arrived": "live"}}
    )
    execution = new.json()["executionId"]
    WebDriverWait(browser, 15).until(
        lambda b: len(b.find_elements(By.CSS_SELECTOR, "#rows tr")) > before
    )
    first = browser.find_element(By.CSS_SELECTOR, "#rows tr")
    assert execution[:8] in first.text and "arrived=live" in first.text
    assert marker.is_displayed()  # the same page: not reloaded


def test_a_resend_and_its_new_attempt(browser: Any, served: Served) -> None:
    sign_in(browser, served, EXEC_KEY, f"/console/deliveries/{first_delivery(served)}")
    browser.find_element(By.XPATH, "//button[text()='Resend']").click()
    WebDriverWait(browser, 10).until(
        seen.text_to_be_present_in_element((By.TAG_NAME, "main"), "No attempt yet")
    )
    served.advance(1)
    browser.refresh()
    cells = browser.find_elements(By.CSS_SELECTOR, "main table tbody tr td")
    assert [c.text for c in cells][:3][2] == "200"


def test_a_read_key_cannot_resend(browser: Any, served: Served) -> None:
    delivery = first_delivery(served)
    sign_in(browser, served, EXEC_READ_KEY, f"/console/deliveries/{delivery}")
    assert not browser.find_elements(By.XPATH, "//button[text()='Resend']")
    assert "A read key cannot resend" in browser.find_element(By.TAG_NAME, "main").text
    # The form a read key's page does not show, made by hand with the session's token.
    browser.execute_script(
        "const f = document.createElement('form'); f.method = 'post';"
        "f.action = arguments[0]; const t = document.querySelector('input[name=csrf]');"
        "f.appendChild(t.cloneNode()); document.body.appendChild(f); f.submit();",
        f"/console/deliveries/{delivery}/resend",
    )
    WebDriverWait(browser, 10).until(seen.text_to_be_present_in_element((By.TAG_NAME, "h1"), "403"))
    assert "may only read" in heading(browser)


def test_another_organizations_execution_is_not_found(browser: Any, served: Served) -> None:
    sign_in(browser, served, RIVAL_KEY, f"/console/executions/{served.made.failed}")
    assert heading(browser) == "404: execution not found"
    assert served.made.failed not in browser.page_source.split("<main", 1)[1].split("</main>")[0]


def test_the_keyboard_alone_signs_in_and_reaches_every_page(browser: Any, served: Served) -> None:
    browser.get(served.root + "/console/")
    # The field has the focus with no key pressed; Chrome applies `autofocus` in a
    # task after the load event, which a loaded machine may not have run yet.
    WebDriverWait(browser, 10).until(
        lambda driver: driver.switch_to.active_element.get_attribute("id") == "key"
    )
    browser.switch_to.active_element.send_keys(EXEC_KEY + Keys.ENTER)
    WebDriverWait(browser, 10).until(seen.presence_of_element_located((By.CSS_SELECTOR, ".who")))
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to content"
    reached = []
    for _ in range(12):
        browser.switch_to.active_element.send_keys(Keys.TAB)
        reached.append(browser.switch_to.active_element.text)
    for label in ("Overview", "Executions", "Deliveries", "Batches", "Webhook integrations"):
        assert label in reached, reached
    while browser.switch_to.active_element.text != "Executions":
        browser.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(seen.url_contains("/console/executions"))
    assert heading(browser) == "Executions"
