"""Spot-validation: blind export from real files, import, and Cohen's kappa against hand computation."""

from __future__ import annotations

import csv
import json
import math

from click.testing import CliRunner

from mirage.validation.cli import validate
from mirage.validation.kappa import kappa


def test_kappa_hand_computed():
    # table [[20, 5], [10, 15]]: p_o = 0.7, p_e = (25*30 + 25*20) / 50^2 = 0.5, kappa = 0.4
    a = [0] * 25 + [1] * 25
    b = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
    assert abs(kappa(a, b) - 0.4) < 1e-12


def test_export_import_roundtrip(tmp_path, corpus_rows, root):
    t1 = [r for r in corpus_rows if r["template"] == "T1" and r["language"] == "en"][:50]
    labels, gens = [], []
    for i, c in enumerate(t1):
        for k in range(2):
            key = f"k{i}-{k}"
            answer = f"The {c['swap_text']} neighbours then left the cafe." if k else "They left."
            labels.append({"key": key, "prompt_id": c["prompt_id"], "template": "T1", "identity": c["identity"], "condition": "C1",
                           "language": "en", "violent": i % 3 == 0, "judge": "lexicon-v1"})
            gens.append({"key": key, "answer": answer, "reasoning": None})
    (tmp_path / "labels" / "toy").mkdir(parents=True)
    (tmp_path / "labels" / "toy" / "demo.jsonl").write_text("".join(json.dumps(r | {"violent": int(r["violent"])}) + "\n" for r in labels))
    (tmp_path / "gen" / "toy" / "demo" / "C1").mkdir(parents=True)
    (tmp_path / "gen" / "toy" / "demo" / "C1" / "none-none.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gens))
    corpus = tmp_path / "prompts.jsonl"
    corpus.write_text("".join(json.dumps(c) + "\n" for c in t1))
    params = tmp_path / "params.yaml"
    params.write_text("label:\n  validation:\n    fraction: 0.1\n")
    res = CliRunner().invoke(validate, ["export", "--slice", "demo", "--model", "toy", "--params", str(params),
                                        "--labels", str(tmp_path / "labels" / "toy" / "demo.jsonl"),
                                        "--view", str(tmp_path / "gen" / "toy" / "demo" / "C1" / "none-none.jsonl"),
                                        "--corpus", str(corpus), "--data-dir", str(root / "data"),
                                        "--out-dir", str(tmp_path / "val" / "demo" / "toy")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "val" / "demo" / "toy"
    items = list(csv.DictReader(open(out / "items.csv", encoding="utf-8")))
    assert len(items) == 5 * 2  # ceil(10% of 20) per identity cell, 5 identities
    text = (out / "items.csv").read_text(encoding="utf-8") + (out / "tasks.json").read_text(encoding="utf-8")
    for form in ("Muslim", "Christian", "Jewish", "Hindu", "secular", "identity"):
        assert form not in text  # blind: identity masked in prompt and response, identity column only in key.csv
    assert "[GROUP]" in text
    key = {r["item_id"]: r for r in csv.DictReader(open(out / "key.csv", encoding="utf-8"))}
    # two annotators: A agrees with the judge everywhere, B flips the first two items
    for name, flip in (("A", set()), ("B", set(list(key)[:2]))):
        with open(tmp_path / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=["item_id", "annotator", "violent"])
            w.writeheader()
            for item, r in key.items():
                y = int(r["judge_violent"])
                w.writerow({"item_id": item, "annotator": name, "violent": ["non-violent", "violent"][1 - y if item in flip else y]})
    res = CliRunner().invoke(validate, ["import", str(tmp_path / "A.csv"), str(tmp_path / "B.csv"), "--key", str(out / "key.csv")])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "kappa.json").read_text())
    # majority with ties -> non-violent; reference kappa from the same rule computed by hand here
    judge = [int(key[i]["judge_violent"]) for i in key]
    human = [y if i not in list(key)[:2] else (y and 0) for i, y in zip(key, judge)]
    assert report["judge_vs_human"]["overall"]["kappa"] == round(kappa(judge, human), 6)
    b = [1 - y if i in list(key)[:2] else y for i, y in zip(key, judge)]
    assert report["annotators"]["A|B"]["overall"]["kappa"] == round(kappa(judge, b), 6)
    assert report["annotators"]["A|B"]["overall"]["n"] == 10
    # per identity (control variants must be judged as accurately as focal ones): same kappa, computed per subset
    by_id = report["judge_vs_human_by_identity"]
    idents = {"muslim", "christian", "jewish", "hindu", "secular"}
    assert set(by_id) == idents | {"overall"} and sum(by_id[i]["n"] for i in idents) == 10
    for ident in idents:
        sub = [n for n, i in enumerate(key) if key[i]["identity"] == ident]
        expected = kappa([judge[n] for n in sub], [human[n] for n in sub])
        assert by_id[ident]["kappa"] == (None if math.isnan(expected) else round(expected, 6))
    assert "per identity" in res.output and "muslim" in res.output
    # the judge's sensitivity / specificity against the majority human label (what `mirage metrics` corrects with)
    (acc,) = report["judge_accuracy"]
    tp = sum(j == 1 and h == 1 for j, h in zip(judge, human))
    tn = sum(j == 0 and h == 0 for j, h in zip(judge, human))
    assert (acc["model"], acc["overall"]["tp"], acc["overall"]["tn"], acc["overall"]["n"]) == ("toy", tp, tn, 10)
    assert set(acc["by_language_condition"]) == {"en/C1"} and "Se=" in res.output


def test_import_rejects_bad_value(tmp_path):
    (tmp_path / "key.csv").write_text("item_id,key,model,template,condition,identity,language,judge,judge_violent\nv00001,k,m,T1,C1,muslim,en,x,1\n")
    (tmp_path / "a.csv").write_text("item_id,annotator,violent\nv00001,A,maybe\n")
    res = CliRunner().invoke(validate, ["import", str(tmp_path / "a.csv")])
    assert res.exit_code != 0 and "a.csv:2: field violent" in res.output


def test_export_masks_every_identity_term(tmp_path, corpus_rows, root):
    """Responses that name every term the data knows (and derived forms, other languages' spellings, Arabic
    clitics) come out of the export with none of them left: the scan is an independent prefix match per term."""
    import re

    from mirage.validation.export import identity_terms

    terms = sorted(identity_terms(root / "data"))
    derived = ["Judaism", "Hinduism", "Islam", "Sharia", "Jesus", "muslimen", "Islamic", "Islamist", "Christianity", "Jewry",
               "Islamophobia", "Quranic", "secularism", "Muslima", "Moslems", "Juden", "والمسلمين", "للمسلمين", "اليهودية", "بالإسلام"]
    assert {"judaism", "hinduism", "islam", "sharia", "jesus", "mecca", "مسلم", "يهود", "moslem", "juden"} <= {t.lower() for t in terms}
    c = next(r for r in corpus_rows if r["template"] == "T1" and r["language"] == "en")
    chunks = [terms[i:i + 12] for i in range(0, len(terms), 12)] + [derived]
    labels, gens = [], []
    for i, chunk in enumerate(chunks):  # fraction 1.0 below: every row is exported
        key = f"k{i}"
        labels.append({"key": key, "prompt_id": c["prompt_id"], "template": "T1", "identity": c["identity"], "condition": "C2",
                       "language": "en", "violent": 0, "judge": "lexicon-v1"})
        gens.append({"key": key, "answer": "They talked about " + ", ".join(chunk) + ".",
                     "reasoning": "Both " + " and ".join(t.upper() for t in chunk) + " were there."})
    (tmp_path / "labels" / "toy").mkdir(parents=True)
    (tmp_path / "labels" / "toy" / "demo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    (tmp_path / "gen" / "toy" / "demo" / "C2").mkdir(parents=True)
    (tmp_path / "gen" / "toy" / "demo" / "C2" / "none-none.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gens), encoding="utf-8")
    corpus = tmp_path / "prompts.jsonl"
    corpus.write_text(json.dumps(c) + "\n", encoding="utf-8")
    params = tmp_path / "params.yaml"
    params.write_text("label:\n  validation:\n    fraction: 1.0\n")
    res = CliRunner().invoke(validate, ["export", "--slice", "demo", "--model", "toy", "--params", str(params),
                                        "--labels", str(tmp_path / "labels" / "toy" / "demo.jsonl"),
                                        "--view", str(tmp_path / "gen" / "toy" / "demo" / "C2" / "none-none.jsonl"),
                                        "--corpus", str(corpus), "--data-dir", str(root / "data"),
                                        "--out-dir", str(tmp_path / "val" / "demo" / "toy")])
    assert res.exit_code == 0, res.output
    out = tmp_path / "val" / "demo" / "toy"
    items = list(csv.DictReader(open(out / "items.csv", encoding="utf-8")))
    assert len(items) == len(chunks)
    exported = (out / "items.csv").read_text(encoding="utf-8") + json.dumps(json.loads((out / "tasks.json").read_text(encoding="utf-8")), ensure_ascii=False)
    for term in [*terms, *derived]:
        if re.search(r"[\u0600-\u06FF]", term):
            assert term not in exported, term
        else:
            assert not re.search(rf"(?<!\w){re.escape(term)}", exported, re.IGNORECASE), term
    assert exported.count("[GROUP]") >= len(terms) + len(derived)
    assert "They talked about" in exported  # the rest of the text is kept
