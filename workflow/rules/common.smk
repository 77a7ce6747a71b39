# Validate params.yaml once (errors name the key and allowed values) and derive the job matrix from it.
# Every path comes from mirage.artefacts: this file only says which artefacts each rule reads and writes.
import os
import sys

from mirage import artefacts
from mirage.generate.readiness import NotReady
from mirage.names import judge_members
from mirage.params import MODEL_SET_ENV, params_hash, validate_params
from mirage.protocol import API_PROVIDERS, CONDITIONS, SLICE_NAMES, WEIGHT_PROVIDERS
from mirage.readiness import check_slice, slice_refusals

PARAMS = validate_params(config, "params.yaml")
# `--config model_set=current` chose the set in `config`; the commands the rules run read params.yaml, so they
# learn the same set from the environment (mirage.params.load_params).
os.environ[MODEL_SET_ENV] = PARAMS.model_set
# Built from containers/Dockerfile.gpu (see containers/README.md); used with `--sdm apptainer`.
GPU_CONTAINER = "docker://mirage-bench/mirage:0.1.0-gpu"
# Cluster partitions (workflow/profiles/slurm): model jobs that declare GPUs go to GPU_PARTITION.
GPU_PARTITION, CPU_PARTITION = "gpu", "cpu"
# GPU jobs (generate, probe) start their command with `python -m mirage devices --gpus {resources.gpu} --`, which
# gives each that many GPUs no other job holds as its CUDA_VISIBLE_DEVICES (Snakemake's `gpu` only counts them).


def slice_models(slice_name):
    return list(getattr(PARAMS.slices, slice_name).models)


def model_spec(name):
    return PARAMS.models[name]


def model_gpus(wildcards):
    return model_spec(wildcards.model).gpus


def model_partition(wildcards):
    return GPU_PARTITION if model_gpus(wildcards) else CPU_PARTITION


def model_api_slots(wildcards):
    """API models take one slot of the `api` resource; cap it with --resources api=N."""
    return 1 if model_spec(wildcards.model).provider in API_PROVIDERS else 0


def judge_api_slots(wildcards):
    """A label (or judge_eval) job whose judge has an API member takes one slot of the `api` resource."""
    judge = PARAMS.judge_of(wildcards.slice) if hasattr(wildcards, "slice") else wildcards.judge
    return int(any(m in PARAMS.models and model_spec(m).provider in API_PROVIDERS for m in judge_members(judge)))


def views_of(condition):
    """The view shards one generation job writes (wildcards model and slice left open)."""
    return [artefacts.view("{model}", "{slice}", condition, s) for s in artefacts.view_shards(PARAMS.render, condition)]


def slice_views(wildcards):
    return artefacts.views(PARAMS.render, wildcards.model, wildcards.slice)


def slice_labels(wildcards):
    return [artefacts.labels(m, wildcards.slice) for m in slice_models(wildcards.slice)]


def probe_models(slice_name):
    """Open-weight models of a slice get the logit-lens probe; the lite split skips it (App. J: a cheaper rerun)."""
    if slice_name == "lite":
        return []
    return [m for m in slice_models(slice_name) if model_spec(m).provider in WEIGHT_PROVIDERS]


def ready_models(slice_name):
    """The slice's models and its LLM judge, checked at DAG time (mirage.readiness): a model that would
    have to send requests it cannot send (retired, unpinned, no key), or an open model its GPUs cannot hold (GPU
    memory plan, mirage.generate.memory), is refused before any job starts, naming what it lacks; one whose store
    already holds every sample (the judge: every reply) runs without a key. Before the requests are rendered only
    models with an empty store can be refused here; the generation and label jobs check again before any call. A
    dry run warns. The refusal ends the run with its message alone (exit 1): raised from an input function, an
    exception would come wrapped in Snakemake's InputFunctionException and traceback frames."""
    names = slice_models(slice_name)
    problems = [f"params.yaml: the GPU memory plan refuses {r}; nothing was started"
                for r in slice_refusals(PARAMS, names, slice_name)]  # `mirage estimate` prints the whole plan
    try:
        check_slice(PARAMS, names, slice_name, judges=True)
    except NotReady as exc:
        problems.insert(0, str(exc))
    if problems and not workflow.dryrun:
        sys.exit("\n".join(problems))
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return names


def slice_targets(slice_name):
    """What a slice target builds: report, estimate, probes; the demo also runs the case-file pilot (App. B) and
    ends with a one-row leaderboard built from its own verified submission."""
    models = ready_models(slice_name)
    extras = [*(artefacts.pilot(m) for m in models), artefacts.board_page()["page"]] if slice_name == "demo" else []
    return [artefacts.report(slice_name), artefacts.estimate(slice_name), *extras] + [
        artefacts.probe(m)["table7"] for m in probe_models(slice_name)
    ]


def judge_evaluation(wildcards):
    """The evaluation of the slice's judge (slices.SLICE.judge, else label.judge) on the named gold sets, made on every
    run (one judge; a jury's members are evaluated one by one)."""
    judge = PARAMS.judge_of(wildcards.slice) if hasattr(wildcards, "slice") else PARAMS.label.judge
    return [artefacts.judge_eval(judge)] if isinstance(judge, str) and ":" not in judge else []


def validation_reports(wildcards):
    """Imported human validation results of the slice's models (`mirage validate import`): made by people, not by a
    rule, so only those present are inputs (metrics reruns when one appears or changes)."""
    paths = [artefacts.validation_report(wildcards.slice, m) for m in slice_models(wildcards.slice)]
    return [p for p in paths if os.path.exists(p)]


def compare_pair(wildcards):
    """The params entry of a pair; its slice must be the one in the path."""
    pair = PARAMS.compare.pairs[wildcards.pair]
    if pair.slice != wildcards.slice:
        raise ValueError(f"compare pair {wildcards.pair} is for slice {pair.slice}, not {wildcards.slice}")
    return pair


def compare_labels(wildcards):
    """The label files of the models of both sides (side syntax: MODEL[@REVISION][/mitigation=M][/judge=J])."""
    from mirage.config.compare import parse_side

    pair = compare_pair(wildcards)
    models = dict.fromkeys(parse_side(s).model for s in (pair.a, pair.b))
    return [artefacts.labels(m, wildcards.slice) for m in models]


def compare_series(wildcards):
    """The params entry of a series (`compare.series`); its slice must be the one in the path."""
    series = PARAMS.compare.series[wildcards.series]
    if series.slice != wildcards.slice:
        raise ValueError(f"compare series {wildcards.series} is for slice {series.slice}, not {wildcards.slice}")
    return series


def series_labels(wildcards):
    """The label files of the models of every snapshot of a series."""
    from mirage.config.compare import parse_side

    models = dict.fromkeys(parse_side(s.side).model for s in compare_series(wildcards).snapshots)
    return [artefacts.labels(m, wildcards.slice) for m in models]


def judge_run(wildcards):
    """The `compare.judges` entry of (slice, model)."""
    runs = [r for r in PARAMS.compare.judges.values() if (r.slice, r.model) == (wildcards.slice, wildcards.model)]
    if not runs:
        raise ValueError(f"compare.judges names no entry for model {wildcards.model} on slice {wildcards.slice}")
    return runs[0]


def judge_run_labels(wildcards):
    """The model's label file of the slice, then the further judges' label files the entry names."""
    return [artefacts.labels(wildcards.model, wildcards.slice), *judge_run(wildcards).labels]


def judge_run_evaluations(wildcards):
    """The gold-set evaluation of each judge the slice's judge setting names (each jury member on its own): the judges
    section's error correlation and effective number of independent judges."""
    return [artefacts.judge_eval(m) for m in judge_members(PARAMS.judge_of(wildcards.slice))]


def compare_sections(wildcards):
    """The report sections of the comparisons, series and judge sets named for this slice (the report shows them
    under 'Comparisons')."""
    c = PARAMS.compare
    return ([artefacts.compare(wildcards.slice, name)["section"] for name, p in c.pairs.items() if p.slice == wildcards.slice]
            + [artefacts.series(wildcards.slice, name)["section"] for name, s in c.series.items() if s.slice == wildcards.slice]
            + [artefacts.judge_sensitivity(wildcards.slice, r.model)["section"] for r in c.judges.values()
               if r.slice == wildcards.slice])


def compare_targets():
    """Every comparison, series and judge set named in params.yaml `compare`."""
    c = PARAMS.compare
    return ([artefacts.compare(p.slice, name)["summary"] for name, p in c.pairs.items()]
            + [artefacts.series(s.slice, name)["summary"] for name, s in c.series.items()]
            + [artefacts.judge_sensitivity(r.slice, r.model)["summary"] for r in c.judges.values()])


def finished_slices(wf):
    """The slices whose target (`demo`, `lite`, `all` = full) this run was asked for."""
    asked = {rule.name for rule in getattr(wf.dag, "targetrules", ())}  # no summary rather than a traceback if Snakemake renames it
    return [name for name, rule in (("demo", "demo"), ("lite", "lite"), ("full", "all")) if rule in asked]


def repeat(option, paths):
    """`--option a --option b ...` for a list of declared files."""
    return " ".join(f"{option} {p}" for p in paths)


wildcard_constraints:
    slice="|".join(SLICE_NAMES),
    condition="|".join(CONDITIONS),
    model="[A-Za-z0-9._-]+",
