"""`mirage judge train`: the shipped weights name exactly the committed training files (sha256), never a held-out
file; training is deterministic and its output is what the scorer loads."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mirage import artefacts
from mirage.judges.cli import judge
from mirage.judges.scorer import WEIGHTS, load_models
from mirage.judges.train import sha256_file, training_files


def test_shipped_weights_record_the_committed_training_files(root):
    doc = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    data = str(root / "data")
    expected = {Path(f).resolve().relative_to(root).as_posix(): sha256_file(f) for f in training_files(data)}
    recorded = {d["path"]: d["sha256"] for d in doc["data"]}
    assert recorded == expected, "retrain with `mirage judge train` after changing a training file"
    assert not any("heldout" in p for p in recorded)
    assert Path(artefacts.judge_realistic_heldout(data)).resolve().relative_to(root).as_posix() not in recorded
    assert set(doc["models"]) == {"en", "ar"}
    for m in doc["models"].values():
        assert 0.2 <= m["threshold"] <= 0.8 and m["n_tune"] > 0 and m["weights"]


def test_training_is_deterministic_and_loadable(tmp_path, root):
    rows = [json.loads(line) for line in open(root / "data/judge/train/t1.jsonl", encoding="utf-8")][:60]
    gold = tmp_path / "small.jsonl"
    gold.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    runner = CliRunner()
    outs = []
    for name in ("a.json", "b.json"):
        result = runner.invoke(judge, ["train", "--judge", "parse-v2", "--gold", str(gold), "--data-dir", str(root / "data"),
                                       "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert doc["data"] == [{"path": "small.jsonl", "sha256": sha256_file(gold), "rows": 60}]
    model = load_models(str(tmp_path / "a.json"))["en"]
    assert model.weights and 0.2 <= model.threshold <= 0.8


def test_train_needs_valid_gold(tmp_path, root):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "label": 3}\n', encoding="utf-8")
    result = CliRunner().invoke(judge, ["train", "--judge", "parse-v2", "--gold", str(bad), "--data-dir", str(root / "data"),
                                        "--out", str(tmp_path / "w.json")])
    assert result.exit_code == 2 and "bad.jsonl" in result.output and "label" in result.output
    assert not (tmp_path / "w.json").exists()


def test_no_training_text_is_a_near_copy_of_a_held_out_text(root):
    """The training writers never saw the gold sets; no training text shares more than half its words (Jaccard)
    with a held-out text, so the held-out score is not a memorisation score."""
    import re

    def words(text: str) -> frozenset[str]:
        return frozenset(re.findall(r"\w+", text.lower()))

    data = str(root / "data")
    held = [words(json.loads(line)["text"]) for line in open(artefacts.judge_realistic_heldout(data), encoding="utf-8")]
    train = [words(json.loads(line)["text"]) for f in artefacts.judge_training(data)
             for line in open(f, encoding="utf-8") if line.strip()]
    worst = max(len(h & t) / len(h | t) for h in held for t in train)
    assert worst < 0.5
