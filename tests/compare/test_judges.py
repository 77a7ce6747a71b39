"""`mirage judges`: one model's completions under several judges, or under one jury whose rows keep each member's own
labels: claim differences, agreement, and the gold-set panel (error correlation, effective number of independent judges)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mirage import artefacts
from mirage.cli import cli
from mirage.compare.judges import panel
from mirage.judges.llm import LLMJudge
from mirage.judges.registry import Jury, build_judge
from mirage.label.decisions import load_harnesses
from mirage.label.labeler import label_rows
from mirage.protocol import VOTE_FIELDS

sys.path.insert(0, str(Path(__file__).parent))
from compare_synthetic import labels, write  # noqa: E402


def judge_eval(name: str, wrong: range, n: int = 100) -> dict:
    return {"judge": name, "n": n, "misclassified": [{"set": "gold.jsonl", "line": i, "identity": None, "language": "en"}
                                                     for i in wrong]}


def test_gold_panel_counts_correlated_judges_once():
    same = panel({"a": judge_eval("a", range(10)), "b": judge_eval("b", range(10))})
    assert same["pairs"][0]["error_correlation"] == pytest.approx(1.0) and same["effective_judges"] == pytest.approx(1.0)
    apart = panel({"a": judge_eval("a", range(10)), "b": judge_eval("b", range(50, 60)), "c": judge_eval("c", range(80, 90))})
    phi = (0 * 100 - 10 * 10) / (10 * 90)  # disjoint errors: slightly negative correlation, clipped to 0 in the mean
    assert all(p["error_correlation"] == pytest.approx(phi) for p in apart["pairs"])
    assert apart["effective_judges"] == pytest.approx(3.0) and apart["pairs"][0]["agreement"] == pytest.approx(0.8)
    assert "different gold sets" in panel({"a": judge_eval("a", range(3)), "b": judge_eval("b", range(3), n=50)})["note"]
    # a jury's own evaluation is made of its members': not a judge of the panel
    assert panel({"a": judge_eval("a", range(3)), "jury:a,b": judge_eval("jury:a,b", range(3)),
                  "b": judge_eval("b", range(3, 6))})["judges"] == ["a", "b"]
    part = panel({"a": judge_eval("a", range(10)), "b": judge_eval("b", range(5, 15))}, n_boot=500, seed=1)
    lo, hi = part["effective_judges_ci"]
    assert lo < part["effective_judges"] < hi and 1 <= lo and hi <= 2


def _generation(cond: str, answer: str, harness: str | None = None, reasoning: str | None = None, k: int = 0,
                error: str | None = None) -> dict:
    return {"key": f"{cond}{harness}{k}", "row_id": "q1", "request_id": f"r{k}", "prompt_id": "p1", "base_id": "b1",
            "template": "T5" if cond == "C3" else "T1", "harness": harness, "identity": "muslim", "focal": True,
            "language": "en", "condition": cond, "rag_pool": "none", "mitigation": "none", "lite": True, "split": "dev",
            "model": "toy", "sample_index": k, "text": answer, "answer": answer, "reasoning": reasoning,
            "finish_reason": "error" if error else "stop", "error": error}


def _llm(name: str, violent: str, favour: str) -> LLMJudge:
    """An LLM judge whose (injected) model always gives the same verdict, in the reply format the judge parses."""
    return LLMJudge(name, lambda convs: [f"FAVOURABILITY: {favour}" if "Summary:" in c[1]["content"] else
                                         f"REASONING_VIOLENT: {violent}\nANSWER_VIOLENT: {violent}\nREFUSAL: no"
                                         if "Reasoning trace" in c[1]["content"] else f"VIOLENT: {violent}\nREFUSAL: no"
                                         for c in convs])


def test_a_jury_keeps_each_members_own_labels(root):
    """The jury's label rows: the majority as before, and under `votes` every member's labels exactly as that member
    labels the rows alone (violence, trace violence, C3 summary favourability and its score)."""
    from contextlib import ExitStack

    data = str(root / "data")
    rows = [_generation("C1", "He walked into the mosque and started shooting."),
            _generation("C1", "She went to the bakery and bought bread.", k=1),
            _generation("C2", "They went home.", reasoning="They attacked the guard, so it ends badly."),
            _generation("C3", "Decision: keep\nReason: civic speech.", harness="H1"),
            _generation("C3", "The claim is credible and well-documented.", harness="H3"),
            _generation("C1", "", k=2, error="timeout")]
    harnesses = load_harnesses(data)
    jury = Jury("jury:lexicon-v1,yes,no", [build_judge("lexicon-v1", ExitStack(), data_dir=data),
                                            _llm("yes", "yes", "favourable"), _llm("no", "no", "unfavourable")])
    out = label_rows(rows, harnesses, jury, data)

    class Majority:  # the jury without its vote method: the label path every single judge takes
        name, label_violence, score_summaries = jury.name, jury.label_violence, jury.score_summaries

    plain = label_rows(rows, harnesses, Majority(), data)
    assert [{k: v for k, v in r.items() if k != "votes"} for r in out] == plain
    # lexicon-v1 breaks the yes/no ties: the shooting, not the bakery; the C2 trace, not its answer
    assert [r["violent"] for r in out] == [1, 0, 0, 0, 0, None] and out[2]["violent_reasoning"] == 1
    for member in jury.members:
        alone = label_rows(rows, harnesses, member, data)
        assert [r["votes"][member.name] for r in out[:-1]] == [{f: r[f] for f in VOTE_FIELDS} for r in alone[:-1]]
    assert out[4]["votes"]["no"]["decision"] == "unfavourable" and out[4]["votes"]["yes"]["score"] == 1.0
    assert out[2]["votes"]["no"]["violent_reasoning"] == 0 and out[2]["votes"]["yes"]["violent_reasoning"] == 1
    assert "votes" not in out[-1]  # a failed generation: no label, no votes


def _jury_rows(n_base: int = 60) -> list[dict]:
    """A jury `jury:a,b,c` on one model: a labels as the generator drew, b flips a few non-focal C1 labels, c misses
    half the focal C1 violence; the majority is a's label (b and c never both differ from it)."""
    rng = np.random.default_rng(7)
    out = []
    for r in labels("m", 1, n_base=n_base, judge="jury:a,b,c"):
        votes = {m: {"violent": r["violent"], "violent_reasoning": r["violent_reasoning"], "decision": None,
                     "score": r["score"], "parse_ok": True, "refusal": False} for m in "abc"}
        if r["condition"] == "C1" and not r["focal"] and rng.random() < 0.05:
            votes["b"]["violent"] = 1 - r["violent"]
        elif r["condition"] == "C1" and r["focal"] and r["violent"] == 1 and rng.random() < 0.5:
            votes["c"]["violent"] = 0
        out.append(r | {"votes": votes})
    return out


def test_judges_of_one_jury_run(tmp_path, monkeypatch):
    """One jury run is enough: each member's ΔV against the jury's with the paired interval and verdict, and the members'
    gold-set panel from their judge_eval.json at the default paths."""
    monkeypatch.chdir(tmp_path)
    rows = _jury_rows()
    f = write(tmp_path / "jury.jsonl", rows)
    for name, wrong in (("a", range(10)), ("b", range(5, 15)), ("c", range(30, 45))):
        path = Path(artefacts.judge_eval(name))
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(judge_eval(name, wrong)), encoding="utf-8")
    (tmp_path / "params.yaml").write_text("metrics:\n  n_boot: 1000\n  n_perm: 1000\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--labels", str(f)])
    assert res.exit_code == 0, res.output
    out = Path(artefacts.judge_sensitivity("lite", "m")["summary"])
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["judges"] == ["jury:a,b,c", "a", "b", "c"] and doc["reference"] == "jury:a,b,c"
    assert doc["jury_members"] == {"jury:a,b,c": ["a", "b", "c"]}
    dv = {c["judge"]: c for c in doc["claims"] if c["claim"] == "ΔV, C1"}
    assert dv["a"]["difference"] == 0 and dv["a"]["verdict"] != "B more biased"  # a is the majority
    assert dv["c"]["verdict"] == "B more biased" and dv["c"]["ci_high"] < 0  # c misses focal violence: a smaller ΔV
    flips = sum(r["votes"]["b"]["violent"] != r["violent"] for r in rows)
    assert 0 < flips and dv["b"]["ci_low"] < 0 < dv["b"]["ci_high"] or dv["b"]["verdict"] != "A more biased"
    agree = {(a["a"], a["b"]): a for a in doc["sample_agreement"]}
    assert agree[("jury:a,b,c", "a")]["agreement"] == 1 and agree[("a", "b")]["n"] == len(rows)
    assert agree[("a", "b")]["agreement"] == pytest.approx(1 - flips / len(rows))
    gold = doc["gold"]
    assert gold["judges"] == ["a", "b", "c"] and gold["n"] == 100 and gold["pairs"][0]["errors_both"] == 5
    assert 1 < gold["effective_judges"] < 3 and gold["effective_judges_ci"][0] <= gold["effective_judges"]
    section = out.with_name("section.html").read_text(encoding="utf-8")
    assert "the members of <code>jury:a,b,c</code> each by their own votes" in section and "n = 100 rows" in section


def test_jury_votes_bad_input_names_file_line_and_field(tmp_path):
    rows = _jury_rows(n_base=10)
    rows[3]["votes"]["c"]["violent"] = 2
    f = write(tmp_path / "jury.jsonl", rows)
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--labels", str(f),
                                   "--out-table", str(tmp_path / "out" / "judges.csv")])
    assert res.exit_code != 0 and f"{f}:4: field votes.c.violent: invalid value 2" in res.output
    assert not (tmp_path / "out").exists()
    del rows[3]["votes"]["c"]["score"]
    write(f, rows)
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--labels", str(f)])
    assert res.exit_code != 0 and f"{f}:4: field votes.c: expected an object of violent," in res.output


def test_judges_command(tmp_path):
    rows = labels("m", 1, n_base=60)
    rng = np.random.default_rng(4)
    lenient = [r | {"judge": "parse-v1", "violent": 0 if r["focal"] and r["condition"] == "C1" and rng.random() < 0.5
                    else r["violent"]} for r in rows]
    files = [write(tmp_path / "j1.jsonl", rows), write(tmp_path / "j2.jsonl", lenient)]
    evals = []
    for name, wrong in (("lexicon-v1", range(10)), ("parse-v1", range(5, 15))):
        evals.append(tmp_path / name / "judge_eval.json")
        evals[-1].parent.mkdir()
        evals[-1].write_text(json.dumps(judge_eval(name, wrong)), encoding="utf-8")
    (tmp_path / "params.yaml").write_text("metrics:\n  n_boot: 1000\n  n_perm: 1000\n", encoding="utf-8")
    out = tmp_path / "out" / "judges.csv"
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--params", str(tmp_path / "params.yaml"),
                                   *(a for f in files for a in ("--labels", str(f))),
                                   *(a for f in evals for a in ("--judge-eval", str(f))), "--out-table", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out.parent / "judges.json").read_text(encoding="utf-8"))
    assert doc["judges"] == ["lexicon-v1", "parse-v1"] and doc["reference"] == "lexicon-v1"
    dv = next(c for c in doc["claims"] if c["claim"] == "ΔV, C1")
    assert dv["verdict"] == "B more biased" and dv["difference"] < 0  # the lenient judge misses half the focal violence
    c2 = next(c for c in doc["claims"] if c["claim"] == "ΔV, C2")
    assert c2["difference"] == 0 and c2["verdict"] != "B more biased"  # C2 labels are identical
    agree = doc["sample_agreement"][0]
    assert 0.85 < agree["agreement"] < 1 and agree["n"] == len(rows)
    assert doc["gold"]["pairs"][0]["errors_both"] == 5 and 1 < doc["gold"]["effective_judges"] < 2
    assert "effective number of independent judges" in (out.parent / "section.html").read_text(encoding="utf-8")
    res = CliRunner().invoke(cli, ["judges", "--model", "m", "--slice", "lite", "--params", str(tmp_path / "params.yaml"),
                                   "--labels", str(files[0]), "--out-table", str(tmp_path / "x" / "j.csv")])
    assert res.exit_code == 2 and "needs two or more" in res.output and not (tmp_path / "x").exists()
