"""The sample browser at the window widths people use, 1024 to 1920 px, in headless Chromium (issue 35): with a
long model name (as `mirage audit` makes them) every column, the label included, is in view without scrolling the
list sideways, and the page itself never scrolls sideways."""

from __future__ import annotations

import pytest
import synthetic
from click.testing import CliRunner
from test_browser import assert_real_screenshot, browser, pytestmark, wait_state  # noqa: F401 - fixture, marks

from mirage.report.cli import report

LONG = "audit-openai-smollm2-135m-instruct-5059a951"


@pytest.fixture(scope="module")
def long_named_run(tmp_path_factory):
    """One run and report for every width (the test only reads them)."""
    root = tmp_path_factory.mktemp("long-named") / "run"
    synthetic.write_run(root)
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".csv", ".json", ".yaml"):
            path.write_text(path.read_text(encoding="utf-8").replace("model-a", LONG), encoding="utf-8")
    for folder in sorted(root.rglob("model-a"), reverse=True):
        folder.rename(folder.with_name(LONG))
    params = root / "params.yaml"
    params.write_text(synthetic.params_yaml(root).replace("model-a", LONG), encoding="utf-8")
    args = [a.replace("model-a", LONG) for a in synthetic.report_args(root, "demo")]
    res = CliRunner().invoke(report, ["--slice", "demo", "--params", str(params), *args, "--requests-dir", str(root / "requests"),
                                      "--judge-eval", str(root / "judge" / synthetic.JUDGE / "judge_eval.json")])
    assert res.exit_code == 0, res.output
    return root


@pytest.mark.parametrize("width", [1024, 1400, 1920])
def test_every_column_in_view_at_common_widths(long_named_run, browser, tmp_path, width):  # noqa: F811
    from selenium.webdriver.common.by import By

    browser.set_window_size(width, 1300)
    browser.get((long_named_run / "report" / "demo" / "samples.html").as_uri())
    assert wait_state(browser) == "ready"
    assert browser.execute_script("return document.querySelector('#samples tbody td').textContent") == LONG
    box = browser.execute_script("return document.querySelector('.list').getBoundingClientRect().right")
    for th in browser.find_elements(By.CSS_SELECTOR, "#samples thead th"):
        right = browser.execute_script("return arguments[0].getBoundingClientRect().right", th)
        assert right <= box + 0.5, (width, th.text, right, box)
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), width
    shot = tmp_path / f"samples-{width}.png"
    assert browser.save_screenshot(str(shot))
    assert_real_screenshot(shot)
