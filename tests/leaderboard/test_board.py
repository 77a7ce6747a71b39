"""The board built from accepted entries: JSON content, and the page in headless Chromium (sorting,
filtering, links, a screenshot that is not blank)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.cli import cli
from mirage.judges.eval import quality

sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
import gold_sets  # noqa: E402

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def board(run, tmp_path_factory) -> Path:
    """The real verified entry plus two more rows (lite and demo) derived from it, then `leaderboard build`."""
    board = tmp_path_factory.mktemp("board")
    result = CliRunner().invoke(cli, ["leaderboard", "verify", str(run["bundle"]), "--params", str(run["params"]),
                                      "--board", str(board), "--requests-dir", str(run["root"] / "requests")])
    assert result.exit_code == 0, result.output
    real = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    for model, split, dv in (("model-alpha", "lite", 0.31), ("model-beta", "demo", -0.12)):
        e = copy.deepcopy(real)
        e["id"], e["bundle"] = f"{model}--{split}", f"bundles/{model}--{split}.tar.gz"
        e["manifest"].update(model=model, split=split)
        e["manifest"]["headline"]["dV/C1"] = {"estimate": dv, "ci_low": dv - 0.1, "ci_high": dv + 0.1, "n": 5, "placebo": 0.02}
        (board / "entries" / f"{e['id']}.json").write_text(json.dumps(e), encoding="utf-8")
    report = board / "reports" / "model-alpha--lite.html"
    report.parent.mkdir(exist_ok=True)
    report.write_text("<!DOCTYPE html><title>alpha full report</title><h1>alpha report</h1>", encoding="utf-8")
    alpha = json.loads((board / "entries" / "model-alpha--lite.json").read_text(encoding="utf-8"))
    alpha["report"] = "reports/model-alpha--lite.html"
    (board / "entries" / "model-alpha--lite.json").write_text(json.dumps(alpha), encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(board)])
    assert result.exit_code == 0 and "(3 row(s))" in result.output, result.output
    return board


def test_json_has_one_row_per_model_and_split(board, run):
    doc = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    assert [(r["model"], r["split"]) for r in doc["rows"]] == [("smollm2-135m", "test"), ("model-alpha", "lite"),
                                                                ("model-beta", "demo")]
    real = doc["rows"][0]
    manifest = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))["manifest"]
    assert real["headline"] == manifest["headline"] and real["judge"]["name"] == "parse-v3"  # the default judge
    assert {c["key"] for c in doc["columns"]} >= {"dV/C1", "dV/C2", "Delta_abs/C3", "delta_t/C1", "CAI"}


def test_page_is_self_contained(board):
    html = (board / "index.html").read_text(encoding="utf-8")
    assert "<script src" not in html and "<link" not in html and "http" not in html.split("<script>")[1]
    assert "placebo floor 0.020" in html


def test_build_into_another_folder_keeps_links(board, tmp_path):
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(board), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "bundles" / "smollm2-135m--test.tar.gz").exists() and (out / "entries" / "smollm2-135m--test.html").exists()


def test_heldout_judge_f1_per_entry(board, tmp_path):
    """The board shows each entry's held-out judge F1 (or "not measured"); the entry page shows it per language and
    shape. The block is what `mirage leaderboard submit` puts in a manifest from a real `mirage judge eval`."""
    doc = gold_sets.evaluate_sets(tmp_path / "data", "lexicon-v1", tmp_path / "judge")
    shutil.copytree(board, tmp_path / "board")
    for path in (tmp_path / "board" / "entries").glob("*.json"):  # only model-alpha's and -beta's bundles have the
        e = json.loads(path.read_text(encoding="utf-8"))                 # figures; only alpha's were checked by the board
        alpha, beta = e["id"] == "model-alpha--lite", e["id"] == "model-beta--demo"
        e["manifest"]["judge"].update(heldout=quality.manifest_heldout(doc) if alpha or beta else None,
                                      sets=doc["by_set"] if alpha or beta else None)
        e["verified"]["judge_scores"] = "verified" if alpha else "unverified"
        path.write_text(json.dumps(e), encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(tmp_path / "board")])
    assert result.exit_code == 0, result.output
    o = doc["by_split"]["heldout"]["overall"]
    html = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert "Judge F1 held-out" in html
    cells = re.findall(r'<td class="judge-f1" data-sort="([^"]*)">(.*?)</td>', html)
    assert cells == [("", "not measured"), (repr(o["f1"]), f'{o["f1"]:.2f}<span class="ci">[{o["f1_ci"][0]:.2f}, '
                                                   f'{o["f1_ci"][1]:.2f}]</span><span class="n">10 rows, 50 texts</span>'),
                     ("", f'unverified<span class="ci">claimed {o["f1"]:.2f}</span>')]
    # rows: smollm2-135m (test), model-alpha (lite), model-beta (demo: the manifest's claim, not checked by the board)
    page = (tmp_path / "board" / "entries" / "model-alpha--lite.html").read_text(encoding="utf-8")
    egy = doc["by_split"]["heldout"]["by_language"]["ar-egy"]
    assert re.search(rf"<td>language ar-egy</td><td>1</td><td>5</td>.*?<td>{egy['recall']:.2f}</td>", page)
    assert "<td>shape c3-lending (C3)</td>" in page and "judge on heldout.jsonl" in page
    other = (tmp_path / "board" / "entries" / "smollm2-135m--test.html").read_text(encoding="utf-8")
    assert "Not measured: the bundle carries no held-out realistic evaluation" in other
    beta = (tmp_path / "board" / "entries" / "model-beta--demo.html").read_text(encoding="utf-8")
    assert "<strong>Unverified:</strong> this board has no evaluation of" in beta
    assert "judge on heldout.jsonl</dt><dd><strong>unverified</strong> · n = " in beta
    assert "judge on heldout.jsonl</dt><dd>n = " in page
    board_json = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    assert board_json["rows"][1]["judge"]["heldout"]["overall"] == o


def test_build_rejects_a_corrupt_entry(tmp_path):
    (tmp_path / "entries").mkdir()
    (tmp_path / "entries" / "x.json").write_text("{}", encoding="utf-8")
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--board", str(tmp_path)])
    assert result.exit_code == 2 and "x.json: not a board entry" in result.output


@pytest.fixture
def browser(tmp_path):
    if not Path(CHROMIUM).exists() or shutil.which(DRIVER) is None:
        pytest.skip("needs Debian packages chromium and chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs the pip package selenium")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=opts)
    yield driver
    driver.quit()


def _models(browser) -> list[str]:
    from selenium.webdriver.common.by import By

    return [r.find_element(By.CSS_SELECTOR, "a.model").text for r in browser.find_elements(By.CSS_SELECTOR, "#board tbody tr")
            if r.is_displayed()]


@pytest.mark.slow
def test_board_in_chromium(board, browser, tmp_path):
    from PIL import Image
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get((board / "index.html").as_uri())
    assert browser.title == "MIRAGE leaderboard"
    assert _models(browser) == ["smollm2-135m", "model-alpha", "model-beta"]
    lite = browser.find_element(By.CSS_SELECTOR, "tr.split-lite")
    assert lite.find_element(By.CSS_SELECTOR, ".badge.lite").text == "lite"
    assert "placebo floor 0.020" in lite.text

    header = browser.find_element(By.CSS_SELECTOR, 'th[data-key="dV/C1"] button')
    header.click()  # numbers sort descending first: 0.31, then the real run's dV (in [-1, 1]), then -0.12
    assert _models(browser)[0] == "model-alpha" and _models(browser)[-1] == "model-beta"
    assert browser.find_element(By.CSS_SELECTOR, 'th[data-key="dV/C1"]').get_attribute("aria-sort") == "descending"
    header.click()
    assert _models(browser)[0] == "model-beta" and _models(browser)[-1] == "model-alpha"
    browser.find_element(By.CSS_SELECTOR, "thead th:first-child button").click()
    assert _models(browser) == ["model-alpha", "model-beta", "smollm2-135m"]

    search = browser.find_element(By.ID, "filter")
    search.send_keys("beta")
    assert _models(browser) == ["model-beta"]
    assert browser.find_element(By.ID, "count").text == "1 of 3 rows"
    search.clear()
    search.send_keys(" ")  # fire input; blank query shows everything
    Select(browser.find_element(By.ID, "split-filter")).select_by_value("lite")
    assert _models(browser) == ["model-alpha"]
    Select(browser.find_element(By.ID, "split-filter")).select_by_value("test")
    assert _models(browser) == ["smollm2-135m"]
    Select(browser.find_element(By.ID, "split-filter")).select_by_value("")
    assert len(_models(browser)) == 3

    browser.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / "board.png"
    assert browser.save_screenshot(str(shot))
    img = Image.open(shot).convert("RGB")
    assert img.size[0] >= 1200 and img.size[1] >= 600
    colours = img.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50  # text, header band, shaded lite rows: not a blank page
    dark = sum(n for n, (r, g, b) in colours if r + g + b < 200)
    assert dark > 0.01 * img.size[0] * img.size[1]  # the header band and text

    # links: the report link of a row with a report, the details page of the real row, and back
    browser.find_element(By.CSS_SELECTOR, 'tr[data-split="lite"] a.report').click()
    assert browser.title == "alpha full report"
    browser.back()
    browser.find_element(By.LINK_TEXT, "smollm2-135m").click()
    assert browser.title == "MIRAGE leaderboard · smollm2-135m · test"
    assert "parse-v3" in browser.find_element(By.TAG_NAME, "body").text
    bundle_link = browser.find_element(By.LINK_TEXT, "bundle").get_attribute("href")
    assert Path(bundle_link.removeprefix("file://")).exists()
    browser.find_element(By.PARTIAL_LINK_TEXT, "leaderboard").click()
    assert browser.title == "MIRAGE leaderboard"
