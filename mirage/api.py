"""The Python API: every pipeline stage as a function on pandas frames. The `mirage` commands call these
functions and add only file handling, so a notebook gets exactly what the pipeline computes.

    from mirage import api

    params = api.load_params("params.yaml")
    prompts = api.corpus(params)                                   # the prompt table (nothing written)
    prompts, refused = api.own_corpus(params, "my_prompts.jsonl")  # ... or your own prompts, every identity variant
    requests = api.requests(params, prompts)                       # condition -> request rows
    views = api.generate(params, "smollm2-135m", "demo", "C1", requests["C1"])   # one row per sample
    labels = api.label(params, views)                              # violence labels, decisions, refusals
    table, per_prompt = api.metrics(params, labels)                # metrics.csv and per_prompt.csv

Generation goes through the model's content-addressed store (default: the pipeline's), so a call repeated
from a notebook sends nothing new. Errors are `mirage.io.DataError` / `mirage.params.ParamsError`.
"""

from __future__ import annotations

import pandas as pd

from mirage import artefacts
from mirage.io import DataError
from mirage.params import Params, load_params

__all__ = ["load_params", "corpus", "own_corpus", "requests", "generate", "label", "metrics"]


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a frame as the stages read them from JSONL: missing values as None, not NaN."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def corpus(params: Params, data_dir: str = artefacts.DATA, private_dir: str | None = None) -> pd.DataFrame:
    """The prompt table (`mirage corpus` writes it as JSONL)."""
    from mirage.corpus.table import corpus_rows

    return pd.DataFrame(corpus_rows(params, data_dir, private_dir))


def own_corpus(params: Params, path: str, data_dir: str = artefacts.DATA) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(prompt table, refused prompts with line, id, reason and detail) of a user's prompts file."""
    from mirage.corpus.table import own_corpus_rows

    rows, refused = own_corpus_rows(params, path, data_dir)
    return pd.DataFrame(rows), pd.DataFrame([vars(r) for r in refused], columns=["line", "id", "reason", "detail"])


def requests(params: Params, prompts: pd.DataFrame, data_dir: str = artefacts.DATA) -> dict[str, pd.DataFrame]:
    """Condition -> rendered request rows for every slice (`mirage render` writes them as JSONL)."""
    from mirage.render.build import build, load_render_sources

    src, _ = load_render_sources(params.render, artefacts.harness_dir(data_dir), artefacts.news(data_dir),
                                 artefacts.mitigation_texts(data_dir), artefacts.cot_translations(data_dir))
    return {c: pd.DataFrame(r) for c, r in build(records(prompts), params.render, src, "prompts").items()}


def generate(params: Params, model: str, slice_name: str, condition: str, request_rows: pd.DataFrame,
             store_dir: str | None = None) -> pd.DataFrame:
    """One view row per (request row of the slice, sample), sending only what the model's store lacks."""
    from mirage.generate.runner import GenerationRun, settings_for
    from mirage.generate.store import Store

    if model not in params.models:
        raise DataError(f"unknown model {model!r}; registry has {', '.join(sorted(params.models))}")
    sl = getattr(params.slices, slice_name)
    rows = [r for r in records(request_rows) if slice_name in r["slices"] and r["condition"] == condition]
    st = settings_for(params.generate, sl.n_samples, sl.max_tokens, condition)
    with Store.open(store_dir or artefacts.store(model), partition=slice_name) as store, \
            store.locked(condition, params.generate.lock_wait_s):
        run = GenerationRun(model, params.models[model], st, rows, store, where=f"{condition} requests")
        try:
            run.run(params.generate.retry_rounds, params.generate.max_attempts)
        finally:
            run.close()
        store.reload()
        return pd.DataFrame(run.view())


def label(params: Params, views: pd.DataFrame, data_dir: str = artefacts.DATA, judge: str | list[str] | None = None) -> pd.DataFrame:
    """Violence labels, parsed C3 decisions, refusals and CoT pathways for generation view rows."""
    from mirage.label.labeler import label_batches

    return pd.DataFrame(label_batches(params, [("views", records(views))], data_dir, judge)[0])


def metrics(params: Params, labels: pd.DataFrame, figures=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(metrics table, per-prompt table) from label rows, with the statistics of params.metrics; with `figures`
    (mirage.metrics.correction.figures_for) that hold usable Se/Sp also the judge-error-corrected V_corrected /
    dV_corrected rows and their columns (without, the table is the one `mirage leaderboard` recomputes and verifies)."""
    from mirage.metrics.correction import metric_tables

    return metric_tables(labels, params.metrics, figures)
