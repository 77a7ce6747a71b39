"""Open the built page in headless Chromium: figures load, tables render, a drill-down opens on click."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists() or shutil.which(DRIVER) is None,
                       reason="needs Debian packages chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver)"),
]


@pytest.fixture
def browser(tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs the pip package selenium")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,2000",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=opts)
    yield driver
    driver.quit()


def click(browser, element) -> None:
    """Scroll the element to mid-screen (clear of the sticky nav bar) and click it like a user."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def test_page_in_chromium(built, browser, tmp_path):
    from selenium.webdriver.common.by import By

    root, _ = built
    browser.get((root / "report" / "demo" / "index.html").as_uri())
    assert "MIRAGE report" in browser.title
    images = browser.find_elements(By.CSS_SELECTOR, "figure img")
    assert len(images) == 6
    for img in images:  # every inlined figure decoded to a real bitmap
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 200
        assert img.get_attribute("src").startswith("data:image/png;base64,")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tables table")) == 10
    assert browser.find_element(By.ID, "warning").is_displayed()

    cell = browser.find_element(By.ID, "drill-model-a-C1")
    assert cell.get_attribute("open") is None
    quote = cell.find_element(By.CSS_SELECTOR, ".side.focal blockquote")
    assert not quote.is_displayed()  # collapsed by default
    click(browser, cell.find_element(By.TAG_NAME, "summary"))
    assert cell.get_attribute("open") is not None and quote.is_displayed()
    assert quote.text.startswith("SYNTH-FOCAL completion")

    link = browser.find_element(By.CSS_SELECTOR, '#table3_rates_by_condition a[href="#drill-model-a-C2"]')
    target = browser.find_element(By.ID, "drill-model-a-C2")
    assert target.get_attribute("open") is None
    click(browser, link)  # a Table 3 cell opens its drill-down
    assert target.get_attribute("open") is not None

    browser.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
