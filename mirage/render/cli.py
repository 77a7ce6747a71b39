"""`mirage render`: write the requests of each condition (C1, C2, C3), the count table and a manifest."""

from __future__ import annotations

from pathlib import Path

import click

from mirage import artefacts
from mirage.io import DataError, atomic_write, read_jsonl, write_json, write_jsonl
from mirage.params import ParamsError, load_params, section_hash
from mirage.protocol import SLICE_NAMES
from mirage.provenance import code_version

AXES = ["condition", "rag_pool", "mitigation", "language"]


def count_frame(rows: list[dict]):
    """Requests per condition x rag_pool x mitigation x language, one column per slice."""
    import pandas as pd

    df = pd.DataFrame([{**{a: r[a] for a in AXES}, **{s: s in r["slices"] for s in SLICE_NAMES}} for r in rows])
    if df.empty:
        return pd.DataFrame(columns=AXES + list(SLICE_NAMES))
    return df.groupby(AXES, sort=True)[list(SLICE_NAMES)].sum().reset_index()


def markdown(df) -> str:
    """A pipe table (avoids pandas' optional `tabulate` dependency)."""
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


@click.command()
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), default=artefacts.corpus(), show_default=True,
              help="Prompt table written by `mirage corpus`.")
@click.option("--harness-dir", type=click.Path(file_okay=False), default=artefacts.harness_dir(), show_default=True,
              help="H*.yaml harnesses (rubric and production instruction for C3).")
@click.option("--news", type=click.Path(dir_okay=False), default=artefacts.news(), show_default=True,
              help="Dated news corpus for the RAG layer (format and how to plug in your own: the README beside the default file).")
@click.option("--mitigation-texts", type=click.Path(dir_okay=False), default=artefacts.mitigation_texts(), show_default=True,
              help="Mitigation texts M1-M4 and the structural placeholder (replace to audit your own).")
@click.option("--cot-translations", type=click.Path(dir_okay=False), default=artefacts.cot_translations(), show_default=True,
              help="C2 suffix per non-English language.")
@click.option("--out-dir", type=click.Path(file_okay=False), default=artefacts.requests_dir(), show_default=True,
              help="Output folder.")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="full", show_default=True,
              help="Write only this slice's rows (demo, lite, test) instead of all of them (full).")
def render(params_path: str, corpus_path: str, harness_dir: str, news: str, mitigation_texts: str, cot_translations: str,
           out_dir: str, slice_name: str) -> None:
    """Render the requests every model receives: C1 (raw prompt), C2 (+ CoT suffix), C3 (T5 case
    files in harnesses H1-H4), the time-coupled RAG layer (pools empty/neutral/historical/recent,
    assigned by date relative to render.rag.eval_date) and the mitigations M1-M4 and structural.

    Writes {out-dir}/C1.jsonl, C2.jsonl, C3.jsonl, counts.csv, counts.md and manifest.json, and
    prints the count table (condition x pool x mitigation x language, per slice).
    """
    from mirage.corpus.splits import check_disjoint
    from mirage.render.build import CORPUS_FIELDS, build, load_render_sources

    try:
        params = load_params(params_path)
        p = params.render
        corpus = corpus_path
        if not Path(corpus).exists():
            raise DataError(f"{corpus}: not found; run `mirage corpus` first")
        rows = list(read_jsonl(corpus, required=CORPUS_FIELDS))
        check_disjoint(rows, corpus)  # a base prompt in two splits would leak the held-out split into public slices
        src, pools = load_render_sources(p, harness_dir, news, mitigation_texts, cot_translations)
        by_condition = build(rows, p, src, corpus)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None

    out = Path(out_dir)
    tables = {k: out / Path(v).name for k, v in artefacts.request_tables().items()}
    # `full` writes every rendered row (the held-out test rows too, tagged only `test`); a slice writes its rows.
    written = {c: [r for r in cr if slice_name == "full" or slice_name in r["slices"]] for c, cr in by_condition.items()}
    for c, cr in written.items():
        write_jsonl(out / Path(artefacts.requests(c)).name, cr)
    counts = count_frame([r for cr in written.values() for r in cr])
    with atomic_write(tables["counts"]) as fh:
        counts.to_csv(fh, index=False)
    table = markdown(counts)
    with atomic_write(tables["counts_md"]) as fh:
        fh.write(f"# Request counts ({slice_name} rows written)\n\n{table}\n")
    write_json(tables["manifest"], {
        "slice_written": slice_name,
        "code_version": code_version(),
        "params_hash": section_hash(params, "render"),
        "corpus": corpus,
        "eval_date": p.rag.eval_date.isoformat(),
        "pools": {name: sorted(i.id for i in items) for name, items in pools.items()},
        "rows": {c: len(cr) for c, cr in written.items()},
    })
    click.echo(table)
    total = sum(len(cr) for cr in written.values())
    demo = int(counts["demo"].sum()) if len(counts) else 0
    sizes = ", ".join(f"{k} {len(v)}" for k, v in pools.items())
    click.echo(f"news pools at eval_date {p.rag.eval_date}: {sizes}")
    distinct = {c: len({r["request_id"] for r in cr}) for c, cr in written.items()}
    click.echo(f"wrote {total} request rows ({sum(distinct.values())} distinct requests) for slice {slice_name} to {out}: "
               + ", ".join(f"{c} {len(cr)} rows / {distinct[c]} requests" for c, cr in written.items()))
    click.echo(f"demo slice: {demo} request rows. A request row is prompt x condition x pool x mitigation; rows with the same "
               "input share one request; `mirage estimate` and `mirage generate` count samples and calls from these.")
