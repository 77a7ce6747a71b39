"""`mirage metrics`: metrics.csv, per_prompt.csv and summary.json for one slice."""

from __future__ import annotations

import math
from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, atomic_write, read_jsonl, write_json
from mirage.metric_names import (
    CAI,
    CAI_REASONING,
    DELTA_ABS,
    DELTA_ABS_UNBIASED,
    DELTA_REFUSAL_ADVERSE,
    DELTA_REFUSAL_FAVOURABLE,
    DELTA_SIGNED,
    DELTA_T,
    DELTA_T_DID,
    DV,
    DV_COT,
    DV_REFUSAL_MISSING,
    DV_REFUSAL_VIOLENT,
    HIGH_DELTA_LOW_C1,
    REASONING,
    REFUSAL_GAP,
    SPEARMAN,
    UNPARSEABLE_GAP,
    V_CONTROL,
    V_FOCAL,
    XLING_GAP,
)
from mirage.params import ParamsError, load_params, section_hash
from mirage.protocol import SLICE_NAMES
from mirage.provenance import code_version

_CHECKS = {
    "violent": lambda v: v in (0, 1, None), "violent_reasoning": lambda v: v in (0, 1, None),
    "score": lambda v: v is None or (isinstance(v, (int, float)) and 0 <= v <= 1),
    "parse_ok": lambda v: isinstance(v, bool), "refusal": lambda v: isinstance(v, bool), "error": lambda v: isinstance(v, bool),
    "focal": lambda v: isinstance(v, bool), "paraphrase": lambda v: v in (None, True, False),
}


def _invalid(row: dict, fields) -> str | None:
    """The first of `fields` whose value in `row` is not a valid label value, else None."""
    return next((f for f in fields if not _CHECKS[f](row.get(f))), None)


def load_labels(paths: list[Path], votes: bool = False):
    """Label rows of all files as one DataFrame; type errors and duplicate samples name file, line and field.
    `votes`: also keep a jury's per-member labels (column `votes`: member -> its own label fields, else None)."""
    import pandas as pd

    from mirage.metrics.compute import LABEL_COLUMNS, OPTIONAL_COLUMNS
    from mirage.protocol import VOTE_FIELDS

    rows = []
    seen: dict[tuple, str] = {}
    keep = (*LABEL_COLUMNS, *OPTIONAL_COLUMNS, "judge", "revision", "created", *(("votes",) if votes else ()))
    for path in paths:
        for lineno, row in enumerate(read_jsonl(path, required=LABEL_COLUMNS), 1):
            if row.get("sample_index") is not None:  # one sample of one request row: counted once
                ident = tuple(row.get(c) for c in ("model", "condition", "rag_pool", "mitigation", "prompt_id", "row_id", "sample_index"))
                if ident in seen:
                    raise DataError(f"{path}:{lineno}: field sample_index: duplicate label row (model {row['model']}, "
                                    f"prompt {row['prompt_id']}, {row['condition']}/{row['rag_pool']}/{row['mitigation']}, "
                                    f"sample {row['sample_index']}) first seen at {seen[ident]}")
                seen[ident] = f"{path}:{lineno}"
            if name := _invalid(row, ("violent", "score", "parse_ok", "refusal", "error", "focal", "paraphrase")):
                raise DataError(f"{path}:{lineno}: field {name}: invalid value {row.get(name)!r}")
            if votes and not isinstance(row.get("votes") or {}, dict):
                raise DataError(f"{path}:{lineno}: field votes: expected an object of member -> labels, got {row['votes']!r}")
            for member, own in (row.get("votes") or {}).items() if votes else ():
                if not isinstance(own, dict) or set(own) != set(VOTE_FIELDS):
                    raise DataError(f"{path}:{lineno}: field votes.{member}: expected an object of {', '.join(VOTE_FIELDS)}")
                if name := _invalid(own, ("violent", "violent_reasoning", "score", "parse_ok", "refusal")):
                    raise DataError(f"{path}:{lineno}: field votes.{member}.{name}: invalid value {own.get(name)!r}")
            rows.append({c: row.get(c) for c in keep})
    df = pd.DataFrame(rows)
    for col in ("violent", "score"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df


SENSITIVITY = (DV_REFUSAL_VIOLENT, DV_REFUSAL_MISSING, DELTA_REFUSAL_ADVERSE, DELTA_REFUSAL_FAVOURABLE)


def _clean(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def headline(metrics, model: str) -> dict:
    """Headline numbers of one model: baseline-stratum, all-template rows of the main metrics (the claims among them
    are under `claims` with their Holm decision; these are the numbers beside them)."""
    m = metrics[(metrics["model"] == model) & (metrics["template"].isin(["", "T5"])) & (metrics["mitigation"].isin(["none", ""]))
                & (metrics["placebo_kind"] != "paraphrase")]
    out = {}
    for _, r in m.iterrows():
        base = r["rag_pool"] == "none" and r["language"] == "en"
        main = (r["metric"] in (V_FOCAL, V_CONTROL, DV, DV + REASONING, *SENSITIVITY) and base
                and r["identity"] in ("control",) + ((r["identity"],) if r["metric"] == V_FOCAL else ()))
        main |= (r["metric"] in (DELTA_ABS, DELTA_ABS_UNBIASED, DELTA_SIGNED, REFUSAL_GAP, UNPARSEABLE_GAP)
                 and r["identity"] == "control" and base)
        main |= r["metric"] in (DELTA_T, DELTA_T_DID, CAI, CAI_REASONING, DV_COT, SPEARMAN,
                                HIGH_DELTA_LOW_C1) or (r["metric"] == XLING_GAP and r["language"] == "ar")
        if main:
            name = "/".join(str(x) for x in (r["metric"], r["condition"], r["harness"]) if x != "")
            out[name] = {k: _clean(r[k]) for k in ("estimate", "ci_low", "ci_high", "p", "p_adj", "n", "placebo", "excess",
                                                   "excess_ci_low", "excess_ci_high", "excess_p", "flag")}
    return out


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice whose labels are summarised.")
@click.option("--labels", "label_files", multiple=True, type=click.Path(dir_okay=False),
              help=f"Label files (repeatable).  [default: {artefacts.labels('{model}', '{slice}')} for every model of the slice]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--out-table", type=click.Path(dir_okay=False), help=f"metrics.csv.  [default: {artefacts.metrics('{slice}')['table']}]")
@click.option("--out-per-prompt", type=click.Path(dir_okay=False), help="per_prompt.csv.  [default: next to metrics.csv]")
@click.option("--out-summary", type=click.Path(dir_okay=False), help="summary.json.  [default: next to metrics.csv]")
@click.option("--judge-eval", "judge_evals", multiple=True, type=click.Path(dir_okay=False),
              help="judge_eval.json of the judge that labelled the run (repeatable): its held-out Se/Sp per language x "
                   f"condition correct V and dV.  [default: {artefacts.judge_eval('{judge}')} of each judge named in the "
                   "labels, when present]")
@click.option("--validation", "validations", multiple=True, type=click.Path(dir_okay=False),
              help="kappa.json of `mirage validate import` (repeatable): the judge's Se/Sp on the human validation "
                   f"sample, used before the gold set's.  [default: {artefacts.validation_report('{slice}', '{model}')} "
                   "of each model, when present]")
def metrics(slice_name: str, label_files: tuple[str, ...], params_path: str, out_table: str | None,
            out_per_prompt: str | None, out_summary: str | None, judge_evals: tuple[str, ...],
            validations: tuple[str, ...]) -> None:
    """Compute V, dV, Delta, delta_t, CAI, cross-lingual gaps, mitigation effects, refusal and unparseable
    gaps (with refusal-bound sensitivity rows), cross-condition correlations and refusal/error/unparseable
    rates. Intervals: cluster bootstrap over sentence frames within template (Rao-Wu, t quantiles, BCa
    with a frame jackknife; B = metrics.n_boot). p-values: relabelling identities (or the two conditions)
    within frames, studentised. Every bias metric gets its placebo floor (each control as pseudo-focal;
    paraphrase variants where the corpus has them) and the excess over it, whose CI inverts its test.
    Each model's headline claims share one Holm correction (docs/metrics.md).

    V and dV are also corrected for judge error (V_corrected, dV_corrected, with Se, Sp and their source) from
    the human validation sample (--validation) or else the judge's held-out gold figures (--judge-eval); their
    CIs redraw the validation items in every bootstrap replicate. Without either source, summary.json says why
    there are no corrected rows.

    Writes metrics.csv (tidy), per_prompt.csv (per-prompt scores) and summary.json (per model: the claims
    with their Holm decision, and the headline numbers; the judge-error correction's sources).
    """
    from mirage.metrics.claims import summarise
    from mirage.metrics.correction import figures_for, metric_tables
    from mirage.metrics.correction import summary as correction_summary

    try:
        params = load_params(params_path)
        paths = [Path(x) for x in label_files] or [Path(artefacts.labels(m, slice_name)) for m in getattr(params.slices, slice_name).models]
        missing = [str(x) for x in paths if not x.exists()]
        if missing or not paths:
            raise DataError(f"no label file(s): {', '.join(missing) or 'none given'}; run `mirage label` first")
        labels = load_labels(paths)
        judges = {str(m): sorted({str(j) for j in g["judge"].dropna()}) for m, g in labels.groupby("model")}
        evals = [Path(x) for x in judge_evals] or [f for j in sorted({j for v in judges.values() for j in v})
                                                   if (f := Path(artefacts.judge_eval(j.replace("/", "_")))).exists()]
        reports = [Path(x) for x in validations] or [f for m in judges
                                                     if (f := Path(artefacts.validation_report(slice_name, m))).exists()]
        figures = figures_for(judges, evals, reports)
        click.echo(f"computing metrics for {labels['model'].nunique()} model(s), {len(labels)} labelled samples ...")
        table, pp = metric_tables(labels, params.metrics, figures)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    default = artefacts.metrics(slice_name)
    outs = {"table": Path(out_table or default["table"])}
    outs["per_prompt"] = Path(out_per_prompt or outs["table"].with_name(Path(default["per_prompt"]).name))
    outs["summary"] = Path(out_summary or outs["table"].with_name(Path(default["summary"]).name))
    with atomic_write(outs["table"]) as fh:
        table.to_csv(fh, index=False, lineterminator="\n")
    with atomic_write(outs["per_prompt"]) as fh:
        pp.to_csv(fh, index=False, lineterminator="\n")
    sl = getattr(params.slices, slice_name)
    deviations = {k: v for k, v in (("n_samples", sl.n_samples), ("max_tokens", sl.max_tokens)) if v is not None}
    summary = {
        "slice": slice_name,
        "models": {m: {"claims": summarise(table, m, params.metrics.alpha), "numbers": headline(table, m)}
                   for m in sorted(labels["model"].unique())},
        "provenance": {
            "code_version": code_version(),
            "params_hash": section_hash(params, "metrics", "label"),
            "judges": sorted(labels["judge"].dropna().unique().tolist()),
            "model_revisions": {m: sorted(g["revision"].dropna().astype(str).unique().tolist()) for m, g in labels.groupby("model")},
            # the day the newest sample was generated: a property of the data, so a rebuild reproduces it
            "run_date": str(labels["created"].dropna().max())[:10] if labels["created"].notna().any() else None,
            "protocol_deviations": deviations,
            "label_files": [str(x) for x in paths],
            "judge_figures": [str(x) for x in [*evals, *reports]],
        },
        "judge_correction": correction_summary(figures, table),
    }
    write_json(outs["summary"], summary)
    for model, note in sorted(figures.notes.items()):
        click.echo(f"judge-error correction, {model}: {note}")
    click.echo(f"wrote {len(table)} metric rows to {outs['table']} (+ {outs['per_prompt'].name}, {outs['summary'].name})")
