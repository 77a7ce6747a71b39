"""Leave one source out, for real: parse-v3's learned layer rebuilt on a small copy of the gold files; a source's LOSO
labels cannot depend on that source's own gold labels, the weights never train on a held-out source, and `--loso` is
refused for a judge that cannot be retrained."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.judges.cli import judge
from mirage.judges.eval.gold import read_gold


def _copy(src: Path, dst: Path, n: int, keep=lambda r: True) -> None:
    rows = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [r for r in rows if keep(r)][:n]),
                   encoding="utf-8")


@pytest.fixture(scope="module")
def small(root, tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("loso") / "data"
    (data / "judge").mkdir(parents=True)
    shutil.copy(root / "data/identities.yaml", data / "identities.yaml")
    judge_dir = root / "data/judge"
    _copy(judge_dir / "train/t1.jsonl", data / "judge/train/t1.jsonl", 40)
    _copy(judge_dir / "realistic/dev.jsonl", data / "judge/realistic/dev.jsonl", 30, lambda r: r.get("language", "en") == "en")
    _copy(judge_dir / "realistic/dev_extra.jsonl", data / "judge/realistic/dev_extra.jsonl", 10,
          lambda r: r.get("language", "en") == "en")
    _copy(judge_dir / "gold.jsonl", data / "judge/gold.jsonl", 60, lambda r: r.get("language", "en") == "en")
    real = [json.loads(line) for line in (judge_dir / "real/real.jsonl").read_text(encoding="utf-8").splitlines()]
    picked = []
    for source in ("decodingtrust", "crows-pairs", "openai-moderation", "bbq"):
        picked += [r for r in real if r["source"] == source][:24]
    (data / "judge/real").mkdir()
    (data / "judge/real/real.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked),
                                                encoding="utf-8")
    return data


def test_training_never_sees_a_held_out_source_and_reports_loso(small):
    out = small.parent / "w.json"
    res = CliRunner().invoke(judge, ["train", "--judge", "parse-v3", "--data-dir", str(small), "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    model = doc["models"]["en"]
    assert set(model["loso_by_source"]) == {"decodingtrust", "crows-pairs", "openai-moderation"}  # bbq is held out
    assert model["n_real"] == 72 and 0 < model["threshold"] < 1 and set(model["left_out_f1"]) == {"realistic", "single"}
    assert not any("bbq" in d["path"] for d in doc["data"]) and any(d["path"].endswith("real.jsonl") for d in doc["data"])


def test_a_sources_loso_labels_do_not_depend_on_its_own_gold_labels(small):
    from mirage.judges.train3 import loso_labels

    weights = small.parent / "w.json"
    if not weights.exists():
        test_training_never_sees_a_held_out_source_and_reports_loso(small)
    real = small / "judge/real/real.jsonl"
    items = [it for it in read_gold(real, small) if it.extra["source"] == "crows-pairs"]
    before = loso_labels(items, str(small), str(weights))
    rows = [json.loads(line) for line in real.read_text(encoding="utf-8").splitlines()]
    flipped = [r | {"label": 1 - r["label"]} if r["source"] == "crows-pairs" else r for r in rows]
    real.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in flipped), encoding="utf-8")
    try:
        assert loso_labels(items, str(small), str(weights)) == before
    finally:
        real.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_loso_needs_a_trainable_judge(root, tmp_path):
    res = CliRunner().invoke(judge, ["eval", "--judge", "lexicon-v1", "--loso", "--gold",
                                     str(root / "data/judge/real/real.jsonl"), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "only the trainable judge parse-v3" in res.output


def test_writer_rounds_are_scored_by_models_that_never_saw_them(small):
    from mirage.judges.train3 import Row, featurised, training_data, writer_rounds

    _, rows = training_data(str(small))
    feats = [f for _, f, _ in featurised(rows, str(small))]
    before = writer_rounds(rows, feats, 1.0)
    assert before and {rows[i].file for i in before} == {"t1.jsonl"}
    flipped = [Row(r.text, 1 - r.label, r.family, r.source, r.file) if r.file == "t1.jsonl" else r for r in rows]
    assert writer_rounds(flipped, feats, 1.0) == before


def test_the_standard_error_of_f1_is_zero_only_without_errors():
    from mirage.judges.train3 import bootstrap_se

    assert bootstrap_se([1, 0, 1, 0] * 10, [1, 0, 1, 0] * 10) == 0.0
    assert 0.0 < bootstrap_se([1, 0, 1, 0] * 10, [1, 1, 0, 0] * 10) < 0.5
