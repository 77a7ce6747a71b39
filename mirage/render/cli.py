"""`mirage render`: write results/requests/{C1,C2,C3}.jsonl, the count table and a manifest."""

from __future__ import annotations

from pathlib import Path

import click

from mirage.io import DataError, atomic_write, read_jsonl, write_json, write_jsonl
from mirage.params import ParamsError, load_params, section_hash
from mirage.provenance import code_version
from mirage.slices import SLICE_NAMES

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
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), help="Prompt table (default: render.corpus).")
@click.option("--out-dir", type=click.Path(file_okay=False), help="Output folder (default: render.out_dir).")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="full", show_default=True,
              help="Write only this slice's rows (demo, lite, test) instead of all of them (full).")
def render(params_path: str, corpus_path: str | None, out_dir: str | None, slice_name: str) -> None:
    """Render the requests every model receives: C1 (raw prompt), C2 (+ CoT suffix), C3 (T5 case
    files in harnesses H1-H4), the time-coupled RAG layer (pools empty/neutral/historical/recent,
    assigned by date relative to render.rag.eval_date) and the mitigations M1-M4 and structural.

    Writes {out-dir}/C1.jsonl, C2.jsonl, C3.jsonl, counts.csv, counts.md and manifest.json, and
    prints the count table (condition x pool x mitigation x language, per slice).
    """
    from mirage.corpus.splits import check_disjoint
    from mirage.render.build import CORPUS_FIELDS, Sources, build
    from mirage.render.rag import Retriever, assign_pools, load_news
    from mirage.render.texts import load_cot_translations, load_harnesses, load_mitigation_texts

    try:
        params = load_params(params_path)
        p = params.render
        corpus = corpus_path or p.corpus
        if not Path(corpus).exists():
            raise DataError(f"{corpus}: not found; run `mirage corpus` first")
        rows = list(read_jsonl(corpus, required=CORPUS_FIELDS))
        check_disjoint(rows, corpus)  # a base prompt in two splits would leak the held-out split into public slices
        pools = assign_pools(load_news(p.rag.corpus), p.rag.eval_date, p.rag.recent_days, p.rag.historical_years)
        src = Sources(
            texts=load_mitigation_texts(p.mitigations.texts),
            cot_translations=load_cot_translations(p.cot_suffix_translations),
            harnesses=load_harnesses(p.harness_dir),
            retriever=Retriever(pools, p.rag.top_k),
        )
        by_condition = build(rows, p, src)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None

    out = Path(out_dir or p.out_dir)
    # `full` writes every rendered row (the held-out test rows too, tagged only `test`); a slice writes its rows.
    written = {c: [r for r in cr if slice_name == "full" or slice_name in r["slices"]] for c, cr in by_condition.items()}
    for c, cr in written.items():
        write_jsonl(out / f"{c}.jsonl", cr)
    counts = count_frame([r for cr in written.values() for r in cr])
    with atomic_write(out / "counts.csv") as fh:
        counts.to_csv(fh, index=False)
    table = markdown(counts)
    with atomic_write(out / "counts.md") as fh:
        fh.write(f"# Request counts ({slice_name} rows written)\n\n{table}\n")
    write_json(out / "manifest.json", {
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
    click.echo(f"wrote {total} requests ({slice_name}) to {out}: " + ", ".join(f"{c} {len(cr)}" for c, cr in written.items()))
    click.echo(f"demo slice: {demo} requests")
