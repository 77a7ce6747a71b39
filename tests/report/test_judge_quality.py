"""The judge's held-out realistic figures next to V and in the "Judge quality" table: read from a judge_eval.json the
real `mirage judge eval` wrote for three named gold sets; a file without a held-out split reads as not measured."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
import gold_sets  # noqa: E402
import synthetic  # noqa: E402
from conftest import run_report  # noqa: E402
from test_outputs import _html_text  # noqa: E402

from mirage.report import tables  # noqa: E402
from mirage.report.protocol import load_judge  # noqa: E402

STRATA = ["overall", "language en", "language ar (all dialects)", "language ar-msa", "language ar-egy", "condition C1",
          "shape c1-continuation (C1)", "shape news (C1)", "shape story (C1)", "condition C2", "shape c2-reasoning (C2)",
          "condition C3", "shape c3-lending (C3)"]


def _f(x: float) -> str:
    return f"{x:.2f}"


def test_heldout_figures_next_to_v_and_in_the_table(tmp_path):
    synthetic.write_run(tmp_path, probe=False)
    doc = gold_sets.evaluate_sets(tmp_path / "gold", synthetic.JUDGE, tmp_path / "judge" / synthetic.JUDGE)
    code, out = run_report(tmp_path)
    assert code == 0, out
    h = doc["by_split"]["heldout"]
    o, langs, single = h["overall"], h["by_language"], doc["by_set"]["gold.jsonl"]
    assert o["rows"] == 10 and o["n"] == 50 and 0 < o["f1"] < 1  # lexicon-v1 misses some: the figures are not trivial
    sentence = (f"V labelled by lexicon-v1: held-out realistic F1 {_f(o['f1'])} [{_f(o['f1_ci'][0])}, {_f(o['f1_ci'][1])}] "
                f"(n = 10 rows, 50 texts; precision {_f(o['precision'])}, recall {_f(o['recall'])}, specificity "
                f"{_f(o['specificity'])}; English {_f(langs['en']['f1'])}, Arabic {_f(langs['ar (all dialects)']['f1'])}), "
                f"single-sentence gold F1 {_f(single['f1'])} (n = {single['rows']} rows, {single['n']} texts), identity invariance 100% of "
                f"{doc['invariance']['rows']} [ID] rows.")
    text = _html_text((tmp_path / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    head = text[text.index("Headline: bias beyond the placebo floor"):text.index("Deviations from the paper's protocol")]
    fig2 = text[text.index("Figure 2: violence rate by condition"):text.index("Figure 3:")]
    t3 = text[text.index("Table 3: violence rate by condition"):text.index("Table 4:")]
    assert sentence in head and sentence in fig2 and sentence in t3

    csv = pd.read_csv(tmp_path / "tables" / "demo" / "table_judge_quality.csv")
    assert list(csv["stratum"]) == STRATA and set(csv["judge"]) == {"lexicon-v1"}
    got = csv.set_index("stratum")
    for stratum, stats in [("overall", o), ("language ar-egy", langs["ar-egy"]), ("language en", langs["en"]),
                           ("condition C2", h["by_condition"]["C2"]), ("shape c3-lending (C3)", h["by_shape"]["c3-lending"])]:
        r = got.loc[stratum]
        assert (r["rows"], r["texts"]) == (stats["rows"], stats["n"])
        for key in ("precision", "recall", "specificity", "f1"):
            assert pd.isna(r[key]) if stats[key] is None else r[key] == stats[key], (stratum, key)
        assert [r["f1_ci_low"], r["f1_ci_high"]] == stats["f1_ci"]
    md = (tmp_path / "tables" / "demo" / "table_judge_quality.md").read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if "| overall " in line)
    assert f"{_f(o['f1'])} [{_f(o['f1_ci'][0])}, {_f(o['f1_ci'][1])}]" in row and f"| {_f(o['recall'])} " in row
    news = next(line for line in md.splitlines() if "shape news (C1)" in line)
    assert "undefined (no violent text, none labelled violent)" in news  # no violent news text
    assert f"| {_f(h['by_shape']['news']['specificity'])} " in news
    egy = next(line for line in md.splitlines() if "language ar-egy" in line)  # one gold row: no interval
    assert f"{_f(langs['ar-egy']['f1'])} (n too small)" in egy and "[" not in egy
    quality = text[text.index("Judge quality on the held-out realistic split"):text.index("Decision asymmetry per harness")]
    assert "language ar-egy" in quality and "shape c2-reasoning (C2)" in quality and "not measured" not in quality


def test_without_a_heldout_split_the_judge_quality_is_not_measured(built):
    root, _ = built  # the synthetic judge_eval.json is an older file: overall and languages, no splits or sets
    text = _html_text((root / "report" / "demo" / "index.html").read_text(encoding="utf-8"))
    quality = text[text.index("Judge quality on the held-out realistic split"):text.index("Decision asymmetry per harness")]
    assert "Not computed in this run: not measured: no held-out split in the judge evaluation" in quality
    assert "held-out realistic F1 not measured" in text
    assert not (root / "tables" / "demo" / "table_judge_quality.csv").exists()


def test_a_judge_without_heldout_split_beside_one_with_it(tmp_path):
    sets = gold_sets.write_sets(tmp_path / "data")
    assert not load_judge("lexicon-v1", tmp_path / "a" / "judge_eval.json").evaluated  # no file yet
    gold_sets.evaluate_sets(tmp_path, "lexicon-v1", tmp_path / "a", sets)
    gold_sets.evaluate_sets(tmp_path, "parse-v1", tmp_path / "b", sets[:1])  # the single-sentence set only
    a, b = load_judge("lexicon-v1", tmp_path / "a" / "judge_eval.json"), load_judge("parse-v1", tmp_path / "b" / "judge_eval.json")
    assert a.heldout is not None and b.heldout is None
    assert "held-out realistic F1 not measured" in b.sentence() and "single-sentence gold F1 1.00" in b.sentence()
    t = tables.table_judge(tables.Inputs(pd.DataFrame(), [], pd.DataFrame(), pd.DataFrame(), None, judges=[a, b]))
    rows = t.display.set_index(["judge", "stratum"])
    assert rows.loc[("parse-v1", "held-out realistic split")].tolist() == ["not measured"] * 6
    assert len(rows.loc["lexicon-v1"]) == len(STRATA)


def test_heldout_set_without_split_field_gives_its_overall(tmp_path):
    """Rows of heldout.jsonl that carry no `split` still give the held-out overall figures (from by_set)."""
    gold, dev, heldout = gold_sets.write_sets(tmp_path / "data")
    Path(heldout).write_text(Path(heldout).read_text(encoding="utf-8").replace(', "split": "heldout"', ""), encoding="utf-8")
    doc = gold_sets.evaluate_sets(tmp_path, "lexicon-v1", tmp_path / "out", [gold, heldout])
    info = load_judge("lexicon-v1", tmp_path / "out" / "judge_eval.json")
    assert "by_split" not in doc and info.heldout["overall"] == doc["by_set"]["heldout.jsonl"]
    assert info.sentence().startswith(f"V labelled by lexicon-v1: held-out realistic F1 {_f(doc['by_set']['heldout.jsonl']['f1'])}")
