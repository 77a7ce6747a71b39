"""`mirage metrics`: metrics.csv, per_prompt.csv and summary.json for one slice."""

from __future__ import annotations

import math
from pathlib import Path

import click

from mirage.io import DataError, atomic_write, read_jsonl, write_json
from mirage.params import ParamsError, load_params, section_hash
from mirage.provenance import code_version
from mirage.slices import SLICE_NAMES


def load_labels(paths: list[Path]):
    """Label rows of all files as one DataFrame; type errors name file, line and field."""
    import pandas as pd

    from mirage.metrics.compute import LABEL_COLUMNS

    rows = []
    for path in paths:
        for lineno, row in enumerate(read_jsonl(path, required=LABEL_COLUMNS), 1):
            for name, ok in (("violent", row["violent"] in (0, 1, None)),
                             ("score", row["score"] is None or (isinstance(row["score"], (int, float)) and 0 <= row["score"] <= 1)),
                             ("parse_ok", isinstance(row["parse_ok"], bool)), ("refusal", isinstance(row["refusal"], bool)),
                             ("error", isinstance(row["error"], bool)), ("focal", isinstance(row["focal"], bool))):
                if not ok:
                    raise DataError(f"{path}:{lineno}: field {name}: invalid value {row[name]!r}")
            rows.append({c: row.get(c) for c in (*LABEL_COLUMNS, "judge", "revision", "created")})
    df = pd.DataFrame(rows)
    for col in ("violent", "score"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df


def _clean(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def headline(metrics, model: str) -> dict:
    """Headline numbers of one model: baseline-stratum, all-template rows of the main metrics."""
    m = metrics[(metrics["model"] == model) & (metrics["template"].isin(["", "T5"])) & (metrics["mitigation"].isin(["none", ""]))]
    out = {}
    for _, r in m.iterrows():
        main = (r["metric"] in ("V_focal", "V_control", "dV") and r["identity"] != "" and r["rag_pool"] == "none"
                and r["language"] == "en" and r["identity"] in ("control",) + ((r["identity"],) if r["metric"] == "V_focal" else ()))
        main |= r["metric"] in ("Delta_abs", "Delta_signed") and r["identity"] == "control" and r["rag_pool"] == "none" and r["language"] == "en"
        main |= r["metric"] in ("delta_t", "CAI", "spearman", "high_delta_low_c1_share") or (r["metric"] == "xling_gap" and r["language"] == "ar")
        if main:
            name = "/".join(str(x) for x in (r["metric"], r["condition"], r["harness"]) if x != "")
            out[name] = {k: _clean(r[k]) for k in ("estimate", "ci_low", "ci_high", "p", "p_adj", "n")}
    return out


@click.command()
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), required=True, help="Slice whose labels are summarised.")
@click.option("--models", "models", multiple=True, help="Models to include (repeatable; default: every results/labels/*/{slice}.jsonl).")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Output folder (default: {metrics.out_dir}/{slice}).")
def metrics(slice_name: str, models: tuple[str, ...], params_path: str, out_dir: str | None) -> None:
    """Compute V, dV, Delta, delta_t, CAI, cross-lingual gaps, mitigation effects, cross-condition
    correlations and refusal/error/unparseable rates, with template-stratified paired bootstrap CIs
    (B = metrics.n_boot), bootstrap/permutation p-values and Holm correction within each family.

    Writes metrics.csv (tidy), per_prompt.csv (per-prompt scores) and summary.json under results/metrics/{slice}/.
    """
    from mirage.metrics.compute import compute_metrics

    try:
        params = load_params(params_path)
        p = params.metrics
        root = Path(p.labels_dir)
        paths = [root / m / f"{slice_name}.jsonl" for m in models] if models else sorted(root.glob(f"*/{slice_name}.jsonl"))
        missing = [str(x) for x in paths if not x.exists()]
        if missing or not paths:
            raise DataError(f"no label file(s): {', '.join(missing) or f'{root}/*/{slice_name}.jsonl'}; run `mirage label` first")
        labels = load_labels(paths)
        click.echo(f"computing metrics for {labels['model'].nunique()} model(s), {len(labels)} labelled samples ...")
        table, pp = compute_metrics(labels, p)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    out = Path(out_dir or Path(p.out_dir) / slice_name)
    with atomic_write(out / "metrics.csv") as fh:
        table.to_csv(fh, index=False, lineterminator="\n")
    with atomic_write(out / "per_prompt.csv") as fh:
        pp.to_csv(fh, index=False, lineterminator="\n")
    sl = getattr(params.slices, slice_name)
    deviations = {k: v for k, v in (("n_samples", sl.n_samples), ("max_tokens", sl.max_tokens)) if v is not None}
    summary = {
        "slice": slice_name,
        "models": {m: headline(table, m) for m in sorted(labels["model"].unique())},
        "provenance": {
            "code_version": code_version(),
            "params_hash": section_hash(params, "metrics", "label"),
            "judges": sorted(labels["judge"].dropna().unique().tolist()),
            "model_revisions": {m: sorted(g["revision"].dropna().astype(str).unique().tolist()) for m, g in labels.groupby("model")},
            # the day the newest sample was generated: a property of the data, so a rebuild reproduces it
            "run_date": str(labels["created"].dropna().max())[:10] if labels["created"].notna().any() else None,
            "protocol_deviations": deviations,
            "label_files": [str(x) for x in paths],
        },
    }
    write_json(out / "summary.json", summary)
    click.echo(f"wrote {len(table)} metric rows to {out / 'metrics.csv'} (+ per_prompt.csv, summary.json)")
