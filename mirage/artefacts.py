"""The artefact contract: every file the pipeline reads or writes, spelled once.

Each function returns a path relative to the project root (a `str`, so Snakemake can take it as is).
Arguments may be Snakemake wildcards such as "{model}": the functions only format strings. The CLIs take
these paths as explicit options (defaults from here), the workflow declares them as rule inputs and
outputs (workflow/rules/common.smk), `mirage dvc-yaml` writes dvc.yaml from them, and docs/artefacts.md
documents their columns. params.yaml holds science settings only, never a path.
"""

from __future__ import annotations

from mirage.protocol import CONDITIONS, HARNESS_IDS, TEMPLATE_IDS, mitigations_for

DATA = "data"
RESULTS = "results"


def _part(name: str, judge: bool = False) -> str:
    """A name used as one path component: a Snakemake wildcard (`{model}`) or a name (mirage.names), so that every
    path built from a name stays under its root."""
    if name.startswith("{") and name.endswith("}") and name.count("{") == 1:
        return name
    from mirage.names import check_judge, check_name

    return check_judge(name, "judge name") if judge else check_name(name, "model name")


# --- sources under data/ -------------------------------------------------------------------------


def identities(data: str = DATA) -> str:
    return f"{data}/identities.yaml"


def template(tid: str, data: str = DATA) -> str:
    return f"{data}/templates/{tid}.yaml"


def templates(data: str = DATA) -> list[str]:
    return [template(t, data) for t in TEMPLATE_IDS]


def harness_dir(data: str = DATA) -> str:
    return f"{data}/harnesses"


def harnesses(data: str = DATA) -> list[str]:
    return [f"{harness_dir(data)}/{h}.yaml" for h in HARNESS_IDS]


def lexicon_dir(data: str = DATA) -> str:
    return f"{data}/lexicons"


def lexicons(data: str = DATA) -> list[str]:
    """Every lexicon file (the corpus reads all of them)."""
    from pathlib import Path

    return sorted(p.as_posix() for p in Path(lexicon_dir(data)).glob("*.yaml"))


def news(data: str = DATA) -> str:
    return f"{data}/news/news.jsonl"


def mitigation_texts(data: str = DATA) -> str:
    return f"{data}/mitigations/texts.yaml"


def cot_translations(data: str = DATA) -> str:
    return f"{data}/mitigations/cot_suffix.yaml"


def probe_stems(data: str = DATA) -> str:
    return f"{data}/probe/stems.txt"


def probe_exclusions(data: str = DATA) -> str:
    return f"{data}/probe/exclusions.txt"


def judge_gold(data: str = DATA) -> str:
    """The public single-sentence gold set."""
    return f"{data}/judge/gold.jsonl"


def judge_realistic_dev(data: str = DATA) -> list[str]:
    """The realistic gold set's frozen dev split and the judge developer's mechanism texts."""
    return [f"{data}/judge/realistic/dev.jsonl", f"{data}/judge/realistic/dev_extra.jsonl"]


def judge_realistic_heldout(data: str = DATA) -> str:
    """The realistic gold set's frozen held-out split (no rule or weight is fitted to it)."""
    return f"{data}/judge/realistic/heldout.jsonl"


def judge_real(data: str = DATA) -> str:
    """The real-text gold set: texts taken as they are from public sources, one row per text with its source
    (data/judge/real/README.md); `source_split` marks the frozen held-out sources."""
    return f"{data}/judge/real/real.jsonl"


def judge_gold_sets(data: str = DATA) -> list[str]:
    """The named gold sets the pipeline's judge stage evaluates together (`mirage judge eval --gold ...`): single
    sentences, the realistic dev split, the realistic held-out split and the real-text set."""
    return [judge_gold(data), judge_realistic_dev(data)[0], judge_realistic_heldout(data), judge_real(data)]


def judge_training(data: str = DATA) -> list[str]:
    """The training texts of parse-v2's learned scorer (data/judge/README.md)."""
    from pathlib import Path

    return sorted(p.as_posix() for p in Path(data, "judge", "train").glob("*.jsonl"))


# --- corpus and requests -------------------------------------------------------------------------


def corpus() -> str:
    return f"{RESULTS}/corpus/prompts.jsonl"


def corpus_stats() -> dict[str, str]:
    """`mirage corpus --stats`: frames, cases, distinct words, near-duplicates, cues, Arabic coverage."""
    d = f"{RESULTS}/corpus"
    return {"csv": f"{d}/stats.csv", "json": f"{d}/stats.json"}


def pilot(model: str) -> str:
    """`mirage corpus --pilot MODEL`: the decision distribution of every identity-masked case file (App. B)."""
    return f"{RESULTS}/corpus/pilot-{_part(model)}.json"


def requests_dir() -> str:
    return f"{RESULTS}/requests"


def requests(condition: str) -> str:
    return f"{requests_dir()}/{condition}.jsonl"


def request_tables() -> dict[str, str]:
    """The render stage's side outputs: count table (CSV, Markdown) and manifest."""
    d = requests_dir()
    return {"counts": f"{d}/counts.csv", "counts_md": f"{d}/counts.md", "manifest": f"{d}/manifest.json"}


def estimate(slice_name: str) -> str:
    return f"{RESULTS}/estimate/{slice_name}.json"


def calibration() -> str:
    """`mirage estimate --calibrate`: measured output tokens/s per model, reused by later estimates."""
    return f"{RESULTS}/estimate/calibration.json"


def power(slice_name: str) -> str:
    """`mirage estimate --power`: minimum detectable effects and base prompts needed."""
    return f"{RESULTS}/estimate/{slice_name}-power.json"


# --- generations: the completion store and its views --------------------------------------------


def generations_dir() -> str:
    """One folder per model below it: its store and its views."""
    return f"{RESULTS}/generations"


def model_dir(model: str, root: str | None = None) -> str:
    return f"{root or generations_dir()}/{_part(model)}"


def store(model: str, root: str | None = None) -> str:
    """A model's content-addressed store (below `root`, default generations_dir()); every partition below it is
    read, new records go to one."""
    return f"{model_dir(model, root)}/store"


def store_partition(model: str, partition: str) -> str:
    """The folder one slice's generation jobs (or `judge` for LLM-judge calls) append to; a DVC output."""
    return f"{store(model)}/{partition}"


def store_marker(model: str, slice_name: str, condition: str) -> str:
    """The explicit marker a generation job writes into its store partition: which store shards (and how many
    of their records) back its views. It makes the paid-for partition part of the DAG."""
    return f"{store_partition(model, slice_name)}/{condition}.manifest.json"


def judge_partition(slice_name: str) -> str:
    """The store partition a slice's LLM-judge calls go to (one per slice, so each DVC slice stage owns its own)."""
    return f"judge-{slice_name}"


def judge_marker(model: str) -> str:
    """Marker of the LLM-judge partition of `model` (judge calls are cached like generations)."""
    return f"{store_partition(model, 'judge')}/judge.manifest.json"


def slice_views_dir(model: str, slice_name: str) -> str:
    """Every view of a model x slice (one folder per condition below it)."""
    return f"{model_dir(model)}/{slice_name}"


def views_dir(model: str, slice_name: str, condition: str) -> str:
    return f"{slice_views_dir(model, slice_name)}/{condition}"


def view_shards(render, condition: str) -> list[str]:
    """Shard names `{rag_pool}-{mitigation}` that `render` (the params section) produces for `condition`."""
    shards = ["none-none"]
    if condition in render.rag.conditions:
        shards += [f"{pool}-none" for pool in render.rag.pools]
    if condition in render.mitigations.conditions:
        shards += [f"none-{m}" for m in mitigations_for(condition, render.mitigations.which)]
    return shards


def shard_of(row: dict) -> str:
    return f"{row['rag_pool']}-{row['mitigation']}"


def view(model: str, slice_name: str, condition: str, shard: str) -> str:
    return f"{views_dir(model, slice_name, condition)}/{shard}.jsonl"


def views(render, model: str, slice_name: str, conditions=CONDITIONS) -> list[str]:
    """Every view file a model x slice has, in condition then shard order (what label and report read)."""
    return [view(model, slice_name, c, s) for c in conditions for s in view_shards(render, c)]


def debug_views_dir(model: str, slice_name: str, condition: str, limit: int) -> str:
    """Where `mirage generate --limit N` writes: beside, never over, the pipeline's declared views."""
    return f"{model_dir(model)}/debug/{slice_name}-limit{limit}/{condition}"


# --- labels, metrics, report ---------------------------------------------------------------------


def labels(model: str, slice_name: str) -> str:
    return f"{RESULTS}/labels/{_part(model)}/{slice_name}.jsonl"


def metrics_dir(slice_name: str) -> str:
    return f"{RESULTS}/metrics/{slice_name}"


def metrics(slice_name: str) -> dict[str, str]:
    d = metrics_dir(slice_name)
    return {"table": f"{d}/metrics.csv", "per_prompt": f"{d}/per_prompt.csv", "summary": f"{d}/summary.json"}


def compare_dir(slice_name: str, name: str) -> str:
    """`mirage compare`: one folder per compared pair (a params `compare.pairs` name, or A--B on the command line)."""
    return f"{RESULTS}/compare/{slice_name}/{name}"


def compare(slice_name: str, name: str) -> dict[str, str]:
    """The files of one comparison: per-claim table, summary, figure (differences, intervals, margin band) and the
    report section (HTML with the figure inlined)."""
    d = compare_dir(slice_name, name)
    return {"table": f"{d}/compare.csv", "summary": f"{d}/compare.json", "figure": f"{d}/compare.png",
            "section": f"{d}/section.html"}


def series_dir(slice_name: str, name: str) -> str:
    return f"{RESULTS}/compare/{slice_name}/series/{name}"


def series(slice_name: str, name: str) -> dict[str, str]:
    """`mirage over-time NAME`: each headline claim of a model family's snapshots against release date (table, summary,
    figure, report section)."""
    d = series_dir(slice_name, name)
    return {"table": f"{d}/series.csv", "summary": f"{d}/series.json", "figure": f"{d}/series.png",
            "section": f"{d}/section.html"}


def judge_sensitivity_dir(slice_name: str, model: str) -> str:
    return f"{RESULTS}/compare/{slice_name}/judges/{_part(model)}"


def judge_sensitivity(slice_name: str, model: str) -> dict[str, str]:
    """`mirage judges --model M`: one model's completions under several judges (claims, agreement, gold-set panel)."""
    d = judge_sensitivity_dir(slice_name, model)
    return {"table": f"{d}/judges.csv", "summary": f"{d}/judges.json", "section": f"{d}/section.html"}


def figures_dir(slice_name: str) -> str:
    return f"{RESULTS}/figures/{slice_name}"


def tables_dir(slice_name: str) -> str:
    return f"{RESULTS}/tables/{slice_name}"


def report_dir(slice_name: str) -> str:
    return f"{RESULTS}/report/{slice_name}"


def report(slice_name: str) -> str:
    return f"{report_dir(slice_name)}/index.html"


def samples_page(slice_name: str) -> str:
    """The sample browser beside the report: every sample with filters and matched variants."""
    return f"{report_dir(slice_name)}/samples.html"


def samples_data(slice_name: str) -> str:
    """The sample browser's data folder beside it: per model x condition shards, loaded on demand (docs/report.md)."""
    return f"{report_dir(slice_name)}/samples"


def validation_dir(slice_name: str, model: str) -> str:
    return f"{RESULTS}/validation/{slice_name}/{_part(model)}"


def validation_report(slice_name: str, model: str) -> str:
    """`mirage validate import` output (kappa, and the judge's Se/Sp that `mirage metrics` corrects with)."""
    return f"{validation_dir(slice_name, model)}/kappa.json"


def audit_dir(name: str, slice_name: str) -> str:
    """`mirage audit`: its params, views, labels, metrics, figures, tables and report."""
    return f"{RESULTS}/audit/{_part(name)}/{slice_name}"


def judge_root() -> str:
    """`mirage judge eval` writes {judge_root}/{judge}/judge_eval.json."""
    return f"{RESULTS}/judge"


def judge_dir(judge: str) -> str:
    return f"{judge_root()}/{_part(judge, judge=True)}"


def judge_eval(judge: str) -> str:
    return f"{judge_dir(judge)}/judge_eval.json"


# --- leaderboard ---------------------------------------------------------------------------------


def board_dir() -> str:
    """The leaderboard: accepted entries/, bundles/, reports/, index.html and leaderboard.json."""
    return f"{RESULTS}/leaderboard"


def submission(model: str, split: str) -> str:
    return f"{board_dir()}/submissions/{_part(model)}--{split}.tar.gz"


def board_entry(model: str, split: str) -> str:
    return f"{board_dir()}/entries/{_part(model)}--{split}.json"


def board_page() -> dict[str, str]:
    return {"page": f"{board_dir()}/index.html", "json": f"{board_dir()}/leaderboard.json"}


# --- probe ---------------------------------------------------------------------------------------

PROBE_FILES = ("lambda.csv", "pairs.csv", "token_set.json", "table7.csv", "lambda.png", "lambda.svg", "provenance.json")


def probe_dir(model: str) -> str:
    return f"{RESULTS}/probe/{_part(model)}"


def probe(model: str) -> dict[str, str]:
    """Every file `mirage probe` writes, keyed by file name without extension (lambda_png, lambda_svg, ...)."""
    return {name.replace(".", "_").removesuffix("_csv").removesuffix("_json"): f"{probe_dir(model)}/{name}"
            for name in PROBE_FILES}


# --- logs ----------------------------------------------------------------------------------------


def log(stage: str, *parts: str) -> str:
    return "/".join([f"{RESULTS}/logs/{stage}", *parts]) + ".log" if parts else f"{RESULTS}/logs/{stage}.log"
