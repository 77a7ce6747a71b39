"""The real-text gold set (data/judge/real/): size, balance, languages, kinds of source, provenance on every row, the
two blind passes and their kappa, the frozen held-out sources (SPLIT.md), and a learned layer that never trains on
them (README there)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from mirage import artefacts
from mirage.judges.eval.gold import read_gold
from mirage.validation.kappa import kappa

KINDS = {"llm-output", "news", "encyclopedic", "posts", "benchmark", "posts-ar", "news-ar"}


def rows(root) -> list[dict]:
    return [json.loads(line) for line in Path(artefacts.judge_real(str(root / "data"))).read_text(encoding="utf-8").splitlines()]


def test_size_balance_languages_and_kinds(root):
    data = rows(root)
    assert len(data) >= 1500
    assert sum(r["label"] for r in data) / len(data) >= 0.35
    assert sum(r["language"] != "en" for r in data) >= 200
    sources = {r["source"]: r["shape"] for r in data}
    assert len(sources) >= 6 and KINDS <= set(sources.values())
    assert len(read_gold(artefacts.judge_real(str(root / "data")), root / "data")) == len(data)  # a valid gold file


def test_every_row_names_its_source_commit_and_licence(root):
    for r in rows(root):
        assert r["repo"].count("/") == 1 and r["path"] and re.fullmatch(r"[0-9a-f]{40}", r["commit"]), r["id"]
        assert r["licence"] and "(" in r["licence"], r["id"]  # the licence and the file that states it
    readme = (root / "data/judge/real/README.md").read_text(encoding="utf-8")
    for source in {r["source"] for r in rows(root)}:
        assert f"| {source} |" in readme, source


def test_two_blind_passes_agree_and_disagreements_are_resolved(root):
    data = rows(root)
    first, second = [r["label_pass1"] for r in data], [r["label_pass2"] for r in data]
    assert kappa(first, second) >= 0.9
    for r in data:
        if r["label_pass1"] == r["label_pass2"]:
            assert r["label"] == r["label_pass1"] and "resolution" not in r, r["id"]
        else:
            assert r["resolution"].startswith(f"third blind pass: {r['label']}"), r["id"]
    assert len({r["id"] for r in data}) == len(data)


def test_held_out_sources_are_whole_and_frozen(root):
    data = rows(root)
    split = (root / "data/judge/real/SPLIT.md").read_text(encoding="utf-8")
    frozen = set(re.findall(r"\*\*(\w[\w-]*)\*\*", split.split("Every other source")[0]))
    assert len(frozen) >= 2
    by_source = Counter((r["source"], r["source_split"]) for r in data)
    for (source, s), _ in by_source.items():
        assert s == ("heldout" if source in frozen else "dev"), source
    assert {s for s, _ in by_source} - frozen, "dev sources remain"


def test_parse3_weights_never_saw_a_held_out_source(root):
    from mirage.judges.parse3 import WEIGHTS
    from mirage.judges.train import sha256_file
    from mirage.judges.train3 import training_data

    doc = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    files, train_rows = training_data(str(root / "data"))
    recorded = {d["path"]: d["sha256"] for d in doc["data"]}
    assert recorded == {Path(f).resolve().relative_to(root).as_posix(): sha256_file(f) for f in files}, \
        "retrain with `mirage judge train` after changing a training file"
    heldout = {r["source"] for r in rows(root) if r["source_split"] == "heldout"}
    assert heldout and not heldout & {r.source for r in train_rows}
    for m in doc["models"].values():
        assert not heldout & set(m["loso_by_source"])
