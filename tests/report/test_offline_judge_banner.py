"""A real audit labelled by an offline judge says so at the top of its report, with that judge's figures on real text
(`by_source_split` of its judge_eval.json), or that they were not measured; the demo and an LLM judge do not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import synthetic  # noqa: E402
from test_outputs import _html_text  # noqa: E402

from mirage.report.cli import report  # noqa: E402
from mirage.report.protocol import load_judge, offline_judge_banner  # noqa: E402

REAL = {"heldout": {"overall": {"f1": 0.61, "precision": 0.7, "recall": 0.54, "n": 212, "rows": 212}},
        "dev": {"f1": 0.73, "precision": 0.8, "recall": 0.67, "n": 90}}


def _report(root: Path, slice_name: str) -> tuple[int, str, str]:
    """The synthetic run's report for `slice_name` (that slice given the demo's models, samples and tokens)."""
    text = synthetic.params_yaml(root)
    demo = text[text.index("  demo:\n"):].split("\n\n")[0]
    params = root / "params.yaml"
    params.write_text(text.replace(demo, demo + "\n" + demo.replace("  demo:", f"  {slice_name}:")) if slice_name != "demo"
                      else text, encoding="utf-8")
    judge = root / "judge" / synthetic.JUDGE / "judge_eval.json"
    result = CliRunner().invoke(report, ["--slice", slice_name, "--params", str(params), *synthetic.report_args(root, slice_name),
                                         "--requests-dir", str(root / "requests"), "--judge-eval", str(judge)])
    page = root / "report" / slice_name / "index.html"
    return result.exit_code, result.output, _html_text(page.read_text(encoding="utf-8")) if page.exists() else ""


def _with_real_text(root: Path, by_source_split: dict | None) -> None:
    path = root / "judge" / synthetic.JUDGE / "judge_eval.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.pop("by_source_split", None)
    if by_source_split is not None:
        doc["by_source_split"] = by_source_split
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_lite_labelled_offline_opens_with_the_judges_real_text_figures(tmp_path):
    synthetic.write_run(tmp_path, "lite", probe=False)
    _with_real_text(tmp_path, REAL)
    code, out, text = _report(tmp_path, "lite")
    assert code == 0, out
    start = text.index("Labelled by an offline judge")
    banner = text[start:text.index("Content warning", start)]
    assert "This lite audit was labelled by an offline judge" in banner
    assert ("lexicon-v1: held-out sources F1 0.61 (n = 212 rows, 212 texts, precision 0.70, recall 0.54); "
            "dev sources (training data of a trainable judge) F1 0.73 (n = 90, precision 0.80, recall 0.67)") in banner
    assert "slices.lite.judge" in banner
    assert text.index("Labelled by an offline judge") < text.index("Headline: bias beyond the placebo floor")


def test_without_real_text_figures_the_banner_says_not_measured(tmp_path):
    synthetic.write_run(tmp_path, "lite", probe=False)
    _with_real_text(tmp_path, None)
    code, out, text = _report(tmp_path, "lite")
    assert code == 0, out
    start = text.index("Labelled by an offline judge")
    banner = text[start:text.index("Content warning", start)]
    assert "lexicon-v1: not measured on real text" in banner and "F1 0.61" not in banner


def test_the_demo_has_no_banner(tmp_path):
    synthetic.write_run(tmp_path, "demo", probe=False)
    _with_real_text(tmp_path, REAL)
    code, out, text = _report(tmp_path, "demo")
    assert code == 0, out
    assert "Labelled by an offline judge" not in text and "Content warning" in text


def test_banner_only_for_offline_judges_and_bad_figures_are_named(tmp_path):
    path = tmp_path / "judge_eval.json"
    path.write_text(json.dumps({"judge": "gpt-4.1", "overall": {"f1": 0.9}, "by_source_split": REAL}), encoding="utf-8")
    llm = load_judge("gpt-4.1", path)
    assert offline_judge_banner("lite", [llm], {"gpt-4.1": object()}) is None, "an LLM judge (a registry model): no banner"
    assert "gpt-4.1: held-out sources F1 0.61" in offline_judge_banner("full", [llm], {})
    path.write_text(json.dumps({"overall": {"f1": 0.9}, "by_source_split": {"heldout": {"f1": "high"}}}), encoding="utf-8")
    try:
        load_judge("parse-v2", path)
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        assert f"{path}: field by_source_split.heldout.f1: expected a number, got 'high'" in str(exc)
    else:
        raise AssertionError("a non-numeric real-text figure was accepted")
