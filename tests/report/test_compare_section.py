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


def test_a_run_labelled_by_a_jury_gets_its_judge_sensitivity_section(tmp_path):
    """No section given: the report computes `mirage judges` for a model whose rows a jury labelled (members' votes)."""
    import json

    synthetic.write_run(tmp_path)
    (path,) = (tmp_path / "labels").glob("*/demo.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    fields = ("violent", "violent_reasoning", "decision", "score", "parse_ok", "refusal")
    for i, r in enumerate(rows):
        own = {f: r[f] for f in fields}
        r["votes"] = {"lexicon-v1": own, "parse-v1": own | ({"violent": 1 - r["violent"]} if i % 9 == 0 else {})}
        r["judge"] = "jury:lexicon-v1,parse-v1"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out = run_report(tmp_path, judge_eval=False)  # the jury itself was not evaluated on the gold sets
    assert code == 0, out
    page = next(tmp_path.rglob("index.html")).read_text(encoding="utf-8")
    model = rows[0]["model"]
    assert page.count(f'<section id="judges-{model}">') == 1 and 'id="comparisons-h"' in page
    assert "<code>jury:lexicon-v1,parse-v1</code>, <code>lexicon-v1</code>, <code>parse-v1</code>" in page
    # a judges section given for the model is shown instead, not computed twice
    given = tmp_path / "judges.html"
    given.write_text(f'<section id="judges-{model}"><h2>Judge sensitivity (given)</h2></section>\n', encoding="utf-8")
    code, out = run_report(tmp_path, judge_eval=False, extra=("--compare-section", str(given)))
    page = next(tmp_path.rglob("index.html")).read_text(encoding="utf-8")
    assert code == 0 and page.count(f'<section id="judges-{model}">') == 1 and "Judge sensitivity (given)" in page
