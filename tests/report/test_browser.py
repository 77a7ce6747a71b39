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
    from selenium.webdriver.support.ui import WebDriverWait

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
    click(browser, link)  # a Table 3 cell opens its drill-down (on the hashchange event, which comes a moment later)
    WebDriverWait(browser, 5).until(lambda b: target.get_attribute("open") is not None)

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


def wait_state(browser, want: str = "ready", timeout: float = 20) -> str:
    """Wait until the sample browser reports `want` (or an error) in <html data-state>."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, timeout).until(lambda b: b.execute_script("return document.documentElement.dataset.state") in (want, "error"))
    return browser.execute_script("return document.documentElement.dataset.state")


def test_sample_browser_in_chromium(built, browser, tmp_path):
    """Filter the sample list, open one sample and its matched variants, as a reviewer would."""
    import json

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    root, _ = built
    labels = [json.loads(line) for line in (root / "labels" / "model-a" / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    browser.get((root / "report" / "demo" / "index.html").as_uri())
    click(browser, browser.find_element(By.CSS_SELECTOR, 'nav a[href="samples.html"]'))
    assert "MIRAGE samples" in browser.title
    assert wait_state(browser) == "ready"
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
    WebDriverWait(browser, 10).until(lambda b: "SYNTH-FOCAL completion" in detail.text)  # its text chunk loaded on demand
    assert "SYNTH-PROMPT C2" in detail.text and "step one; step two" in detail.text
    assert "<b>" in detail.text  # prompt text shown as text, not markup

    click(browser, browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr .pair-btn")[0])
    WebDriverWait(browser, 10).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#variants .variant")) == 3)
    variants = [v for v in browser.find_elements(By.CSS_SELECTOR, "#variants .variant") if v.is_displayed()]
    assert len(variants) == 3  # the focal sample and its two control variants
    assert variants[0].get_attribute("data-identity") == "muslim" and "focal" in variants[0].get_attribute("class")
    assert {v.get_attribute("data-identity") for v in variants[1:]} == {"christian", "jewish"}
    assert "SYNTH-CONTROL completion" in variants[1].text

    search = browser.find_element(By.ID, "f-text")  # text search reads the text chunks of the filtered samples
    search.send_keys("bake sale")  # only control completions say it
    assert wait_state(browser) == "ready"
    assert browser.find_element(By.ID, "count").text == f"0 of {len(labels)} samples"
    assert browser.find_element(By.ID, "none").is_displayed()
    Select(browser.find_element(By.ID, "f-identity")).select_by_value("")
    assert wait_state(browser) == "ready"
    n_control_c2 = sum(r["condition"] == "C2" and not r["focal"] for r in labels)
    assert browser.find_element(By.ID, "count").text == f"{n_control_c2} of {len(labels)} samples"
    assert all(r.find_elements(By.TAG_NAME, "td")[4].text != "muslim" for r in browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr"))
    shot = tmp_path / "samples.png"
    assert browser.save_screenshot(str(shot))
    assert_real_screenshot(shot)


HOSTILE = ['<img src=x onerror="window.__pwned=1">', "</script><script>window.__pwned=1</script>", "<!--",
           "<svg onload=window.__pwned=1>", "\u2028'\"`${window.__pwned=1}\\"]


def test_sample_browser_escapes_hostile_text_and_works_copied(tmp_path, browser):
    """Completions, reasoning and prompts full of markup and script are shown as text and run nothing; the report
    folder copied elsewhere (page + samples/ shards) still opens from file:// and loads its texts."""
    import json
    import shutil

    import synthetic
    from conftest import run_report
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from mirage.io import write_jsonl

    run = tmp_path / "run"
    synthetic.write_run(run, probe=False)
    for cond in ("C1", "C2", "C3"):
        view = run / "generations" / "model-a" / "demo" / cond / "none-none.jsonl"
        rows = [json.loads(line) for line in view.read_text(encoding="utf-8").splitlines()]
        for i, r in enumerate(rows):
            r["text"] = f"HOSTILE {HOSTILE[i % len(HOSTILE)]} end"
            r["reasoning"] = HOSTILE[(i + 1) % len(HOSTILE)] if cond == "C2" else None
        write_jsonl(view, rows)
        req = run / "requests" / f"{cond}.jsonl"
        reqs = [json.loads(line) for line in req.read_text(encoding="utf-8").splitlines()]
        for r in reqs:
            r["messages"] = [{"role": "user", "content": "PROMPT " + HOSTILE[1]}]
        write_jsonl(req, reqs)
    code, out = run_report(run)
    assert code == 0, out
    copied = tmp_path / "elsewhere" / "report copy"
    shutil.copytree(run / "report" / "demo", copied)
    shutil.rmtree(run / "report")  # only the copy exists now

    browser.get((copied / "samples.html").as_uri())
    assert wait_state(browser) == "ready"
    Select(browser.find_element(By.ID, "f-condition")).select_by_value("C2")
    wait_state(browser)
    rows = browser.find_elements(By.CSS_SELECTOR, "#samples tbody tr")
    for row in rows[:len(HOSTILE)]:
        click(browser, row)
        detail = browser.find_element(By.ID, "detail")
        WebDriverWait(browser, 10).until(lambda b: "HOSTILE" in detail.text)
        texts = browser.execute_script("return Array.from(arguments[0].querySelectorAll('.text'), e => e.textContent)", detail)
        assert texts[0] == "[user] PROMPT " + HOSTILE[1]  # byte for byte, as text
        assert any(t.startswith("HOSTILE ") and t.endswith(" end") and t[8:-4] in HOSTILE for t in texts), texts
    click(browser, rows[0].find_element(By.CSS_SELECTOR, ".pair-btn"))
    WebDriverWait(browser, 10).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#variants .variant")) == 3)
    assert browser.execute_script("return window.__pwned") is None
    assert not browser.find_elements(By.CSS_SELECTOR, "#detail img, #detail svg, #variants img, #variants svg, #detail script")
    browser.find_element(By.ID, "f-text").send_keys("<svg onload")
    assert wait_state(browser) == "ready"
    assert browser.find_element(By.ID, "count").text.split(" of ")[0] != "0"
    assert browser.execute_script("return window.__pwned") is None


def test_sample_browser_says_when_its_data_folder_is_missing(built, browser, tmp_path):
    """samples.html copied without its samples/ folder says what is missing instead of showing an empty list."""
    import shutil

    from selenium.webdriver.common.by import By

    root, _ = built
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(root / "report" / "demo" / "samples.html", alone)
    browser.get((alone / "samples.html").as_uri())
    assert wait_state(browser, "error") == "error"
    message = browser.find_element(By.ID, "load-error")
    assert message.is_displayed() and "samples/" in message.text
