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
    assert len(images) == 7
    for img in images:  # every inlined figure decoded to a real bitmap
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) > 200
        assert img.get_attribute("src").startswith("data:image/png;base64,")
    computed = sorted((root / "tables" / "demo").glob("*.md"))  # every computed table renders, none twice
    assert len(computed) >= 14 and len(browser.find_elements(By.CSS_SELECTOR, "#tables table")) == len(computed)
    for stem in ("table3_rates_by_condition", "table15_compute"):  # wide tables scroll inside their box, not the page
        box = browser.find_element(By.CSS_SELECTOR, f"#{stem} .scroll")
        assert browser.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth", box)
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    nc = browser.find_element(By.CSS_SELECTOR, "#table4_delta_by_mitigation td.nc")
    assert nc.text == "not computed" and nc.value_of_css_property("font-style") == "italic"
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
    assert browser.save_screenshot(str(shot))
    assert_real_screenshot(shot)


def assert_real_screenshot(path: Path) -> None:
    """A screenshot of the window's size that shows a page, not a blank or single-colour image."""
    import numpy as np
    from PIL import Image

    img = Image.open(path).convert("RGB")
    assert img.size[0] >= 1000 and img.size[1] >= 1000, img.size
    px = np.asarray(img.resize((160, 250))).reshape(-1, 3)
    colours = len(np.unique(px, axis=0))
    white = float((px.min(axis=1) > 245).mean())
    assert colours > 50 and white < 0.97, (colours, white)


def test_sample_browser_in_chromium(built, browser, tmp_path):
    """Filter the sample list, open one sample and its matched variants, as a reviewer would."""
    import json

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    root, _ = built
    labels = [json.loads(line) for line in (root / "labels" / "model-a" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    browser.get((root / "report" / "demo" / "index.html").as_uri())
    click(browser, browser.find_element(By.CSS_SELECTOR, 'nav a[href="samples.html"]'))
    assert "MIRAGE samples" in browser.title
    rows = browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr")
    assert len(rows) == len(labels)
    Select(browser.find_element(By.ID, "f-condition")).select_by_value("C2")
    Select(browser.find_element(By.ID, "f-identity")).select_by_value("muslim")
    want = [r for r in labels if r["condition"] == "C2" and r["identity"] == "muslim"]
    rows = [r for r in browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr") if r.is_displayed()]
    assert len(rows) == len(want) and all(r.find_elements(By.TAG_NAME, "td")[4].text == "muslim" for r in rows)
    assert browser.find_element(By.ID, "count").text == f"{len(want)} of {len(labels)} samples"
    violent = Select(browser.find_element(By.ID, "f-label"))
    violent.select_by_value("violent")
    n_violent = sum(r["violent"] == 1 for r in want)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr")) == n_violent
    violent.select_by_value("")

    click(browser, browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr")[0])
    detail = browser.find_element(By.ID, "detail")
    assert "SYNTH-PROMPT C2" in detail.text and "SYNTH-FOCAL completion" in detail.text and "step one; step two" in detail.text
    assert "<b>" in detail.text  # prompt text shown as text, not markup

    click(browser, browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr .pair-btn")[0])
    variants = [v for v in browser.find_elements(By.CSS_SELECTOR, "#variants .variant") if v.is_displayed()]
    assert len(variants) == 3  # the focal sample and its two control variants
    assert variants[0].get_attribute("data-identity") == "muslim" and "focal" in variants[0].get_attribute("class")
    assert {v.get_attribute("data-identity") for v in variants[1:]} == {"christian", "jewish"}
    assert "SYNTH-CONTROL completion" in variants[1].text
    shot = tmp_path / "samples.png"
    assert browser.save_screenshot(str(shot))
    assert_real_screenshot(shot)
