"""The report shows the sections of `mirage compare` (and over-time, judges) it is given, under 'Comparisons'."""

from __future__ import annotations

from conftest import run_report, synthetic


def test_comparison_sections_are_inlined(tmp_path):
    synthetic.write_run(tmp_path)
    section = tmp_path / "section.html"
    section.write_text("<section id=\"compare-x\"><h2>Comparison: A = <code>m1</code></h2><p>A &amp; B</p></section>\n",
                       encoding="utf-8")
    code, out = run_report(tmp_path, extra=("--compare-section", str(section)))
    assert code == 0, out
    page = next(tmp_path.rglob("index.html")).read_text(encoding="utf-8")
    assert 'id="comparisons-h"' in page and '<section id="compare-x"><h2>Comparison: A = <code>m1</code>' in page
    assert "A &amp; B" in page  # inlined as written, not escaped twice
    code, out = run_report(tmp_path)
    assert code == 0 and 'id="comparisons-h"' not in next(tmp_path.rglob("index.html")).read_text(encoding="utf-8")
