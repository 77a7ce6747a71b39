"""Turn generation rows into label rows (the label files of docs/artefacts.md)."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack

from mirage.artefacts import DATA
from mirage.io import DataError
from mirage.judges.refusal import is_refusal
from mirage.judges.registry import Judge, build_judge
from mirage.label.decisions import Harness, load_harnesses, parse_choice, parse_score
from mirage.label.pathways import tag_pathways
from mirage.params import Params
from mirage.protocol import COMPLETION_CONDITIONS

ID_COLUMNS: tuple[str, ...] = (
    "key", "row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity", "focal", "language",
    "condition", "rag_pool", "mitigation", "lite", "split", "model", "sample_index",
)
REQUIRED: tuple[str, ...] = (*ID_COLUMNS, "text", "answer")
# Copied when present: which model revision made the sample, and when (provenance for metrics/report),
# and the corpus design columns (frame for clustered intervals, paraphrase for the placebo).
PROVENANCE_COLUMNS: tuple[str, ...] = ("provider", "model_id", "revision", "created")
DESIGN_COLUMNS: tuple[str, ...] = ("frame_id", "case_id", "cue", "gender", "paraphrase")


def _failed(row: dict) -> bool:
    return bool(row.get("error")) or row.get("finish_reason") == "error"


#: A jury member's own labels of a row (label rows' `votes`: member name -> these fields).


def label_rows(rows: list[dict], harnesses: dict[str, Harness], judge: Judge, data_dir: str = "data",
               source: str = "generations") -> list[dict]:
    """Label every row; failed generations get error=True and null labels (never dropped). A jury's rows also keep
    each member's own labels (`votes`: member -> VOTE_FIELDS)."""
    out = [{**{c: row[c] for c in ID_COLUMNS}, **{c: row.get(c) for c in (*PROVENANCE_COLUMNS, *DESIGN_COLUMNS)}} for row in rows]
    todo = [i for i, row in enumerate(rows) if not _failed(row)]
    items = []
    for i in todo:
        row = rows[i]
        reasoning = row.get("reasoning") if row["condition"] == "C2" else None
        items.append((reasoning, row["answer"] or "", row["condition"] in COMPLETION_CONDITIONS))
    for i in todo:
        if rows[i]["condition"] == "C3" and rows[i]["harness"] not in harnesses:
            raise DataError(f"{source}: row {rows[i]['row_id']}: field harness: unknown harness {rows[i]['harness']!r} "
                            f"(known: {', '.join(sorted(harnesses))})")
    summaries = [i for i in todo if rows[i]["condition"] == "C3" and harnesses[rows[i]["harness"]].kind == "summary"
                 and not is_refusal(rows[i]["answer"] or "")]
    texts = [rows[i]["answer"] or "" for i in summaries]
    vote = getattr(judge, "vote", None)  # a jury: the majority's labels and each member's own, every member asked once
    verdicts, favours, members = vote(items, texts) if vote else (judge.label_violence(items), judge.score_summaries(texts), {})
    verdict, favour = dict(zip(todo, verdicts, strict=True)), dict(zip(summaries, favours, strict=True))
    own = {name: (dict(zip(todo, v, strict=True)), dict(zip(summaries, f, strict=True))) for name, (v, f) in members.items()}
    for i, (row, lab) in enumerate(zip(rows, out)):
        lab.update(violent=None, violent_reasoning=None, decision=None, score=None, parse_ok=False,
                   refusal=False, error=_failed(row), pathways=[], judge=judge.name)
        if lab["error"]:
            continue
        lab.update(_judged(row, verdict[i], favour.get(i), harnesses.get(row["harness"])))
        if row["condition"] == "C2":
            lab["pathways"] = tag_pathways(row.get("reasoning"), lab["violent"], data_dir)
        if own:
            lab["votes"] = {name: _judged(row, v[i], f.get(i), harnesses.get(row["harness"])) for name, (v, f) in own.items()}
    return out


def _judged(row: dict, verdict: tuple[int | None, int | None, bool], favour: str | None, harness: Harness | None) -> dict:
    """VOTE_FIELDS of one generated row from a judge's violence verdict and (C3 summaries) its favour score."""
    v_ans, v_rea, refusal = verdict
    out = {"violent": v_ans, "violent_reasoning": v_rea, "decision": None, "score": None, "parse_ok": False,
           "refusal": bool(refusal) or is_refusal(row["answer"] or "")}
    if row["condition"] != "C3":
        return out | {"parse_ok": v_ans is not None}
    if harness.kind == "choice":
        decision = parse_choice(row["answer"] or "", harness.options, harness.scores)
    elif harness.kind == "score":
        decision = parse_score(row["answer"] or "", harness.lo, harness.hi)
    else:
        decision = favour
    if decision is not None and harness.kind != "summary":
        out["refusal"] = False  # a parsed decision is not a refusal, whatever disclaimer surrounds it
    if decision is not None and not out["refusal"]:
        out.update(decision=decision, score=harness.normalise(decision), parse_ok=True)
    return out


def label_batches(params: Params, batches: Iterable[tuple[str, list[dict]]], data_dir: str = DATA,
                  judge: str | list[str] | None = None, judge_store: str | None = None,
                  params_path: str = "params.yaml", judge_partition: str | None = None) -> tuple[list[dict], str]:
    """(label rows, judge name) for (source, view rows) batches, with the configured judge (or `judge`) built once;
    what `mirage label` writes. An LLM judge's new replies go to store partition `judge_partition` (default `judge`)."""
    p = params.label
    harnesses = load_harnesses(data_dir)
    with ExitStack() as stack:
        labeler = build_judge(judge or p.judge, stack, params_path, p.window, data_dir, p.judge_max_tokens, p.judge_batch,
                              judge_store, judge_partition)
        out = [row for source, views in batches for row in label_rows(views, harnesses, labeler, data_dir, source=source)]
        return out, labeler.name
