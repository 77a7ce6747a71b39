"""The judge figures the report and the leaderboard print (mirage.judges.eval.quality), read from a judge_eval.json the
real `mirage judge eval` wrote for the three named gold sets; and the bootstrap over gold rows behind their CIs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mirage import artefacts
from mirage.io import DataError
from mirage.judges.eval import quality
from mirage.judges.eval.evaluate import scores

sys.path.insert(0, str(Path(__file__).parent))
import gold_sets  # noqa: E402


def test_the_pipeline_evaluates_four_named_sets():
    assert [Path(p).name for p in artefacts.judge_gold_sets()] == ["gold.jsonl", "dev.jsonl", "heldout.jsonl", "real.jsonl"]
    assert artefacts.judge_realistic_heldout() == "data/judge/realistic/heldout.jsonl"
    assert (quality.SINGLE_SENTENCE_SET, quality.HELDOUT_SET) == ("gold.jsonl", "heldout.jsonl")


def test_eval_of_the_three_sets_gives_dev_and_heldout(tmp_path):
    doc = gold_sets.evaluate_sets(tmp_path / "data", "lexicon-v1", tmp_path / "out")
    assert set(doc["by_set"]) == {"gold.jsonl", "dev.jsonl", "heldout.jsonl"} and set(doc["by_split"]) == {"dev", "heldout"}
    held = quality.heldout(doc)
    assert held is doc["by_split"]["heldout"] and held["overall"]["rows"] == len(gold_sets.REALISTIC)
    assert held["overall"]["n"] == 5 * len(gold_sets.REALISTIC)  # every row names an identity: one text per identity
    assert quality.single_sentence(doc) == doc["by_set"]["gold.jsonl"]
    assert quality.manifest_heldout(doc) == {k: held[k] for k in quality.MANIFEST_KEYS}
    labels = [name for name, _ in quality.strata(held)]
    assert labels == ["overall", "language en", "language ar (all dialects)", "language ar-msa", "language ar-egy",
                      "condition C1", "shape c1-continuation (C1)", "shape news (C1)", "shape story (C1)", "condition C2",
                      "shape c2-reasoning (C2)", "condition C3", "shape c3-lending (C3)"]


def test_a_file_without_heldout_is_not_measured():
    legacy = {"judge": "x", "n": 10, "overall": {"f1": 0.9}}
    assert quality.heldout(legacy) is None and quality.single_sentence(legacy) is None
    assert quality.manifest_heldout(legacy) is None


@pytest.mark.parametrize("doc, message", [
    ({"overall": {}, "by_split": {"heldout": []}}, "j.json: field by_split.heldout: expected an object"),
    ({"overall": {}, "by_split": {"heldout": {"n": 3}}}, "j.json: field by_split.heldout.overall: expected an object"),
    ({"overall": {}, "by_split": {"heldout": {"overall": {"f1": "0.9"}}}},
     "j.json: field by_split.heldout.overall.f1: expected a number, got '0.9'"),
    ({"overall": {}, "by_split": {"heldout": {"overall": {"f1": 0.9}, "by_shape": {"news": {"recall": True}}}}},
     "j.json: field by_split.heldout.by_shape.news.recall: expected a number"),
    ({"overall": {}, "by_split": {"heldout": {"overall": {"f1": 0.9, "f1_ci": [0.1]}}}},
     "j.json: field by_split.heldout.overall.f1_ci: expected [low, high]"),
    ({"overall": {}, "by_set": {"heldout.jsonl": {"f1": []}}}, "j.json: field by_set.heldout.jsonl.f1: expected a number"),
])
def test_malformed_heldout_figures_name_the_field(doc, message):
    with pytest.raises(DataError) as err:
        quality.heldout(doc, "j.json")
    assert str(err.value).startswith(message)


def test_identity_copies_of_a_row_do_not_narrow_the_interval():
    """Five texts of one [ID] row (one per identity) move together: the CI is the one of the rows themselves."""
    y, p = [1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1], [1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1]
    rows = scores(y, p)
    copies = scores([v for v in y for _ in range(5)], [v for v in p for _ in range(5)], [i for i in range(len(y)) for _ in range(5)])
    as_texts = scores([v for v in y for _ in range(5)], [v for v in p for _ in range(5)])
    assert (copies["rows"], copies["n"], rows["rows"], as_texts["rows"]) == (12, 60, 12, 60)
    assert copies["f1"] == rows["f1"] and copies["f1_ci"] == rows["f1_ci"] and copies["accuracy_ci"] == rows["accuracy_ci"]
    width = lambda s: s["f1_ci"][1] - s["f1_ci"][0]  # noqa: E731
    assert width(as_texts) < 0.7 * width(copies)  # treating copies as independent texts would narrow it
