# MIRAGE workflow: corpus -> render -> generate (per model) -> label -> metrics -> report, plus the logit-lens probe.
# Targets: `all` (full benchmark, default), `lite` (stratified 15% split), `demo` (CPU run on the embedded model,
# ending with a one-row leaderboard page).
#   snakemake --cores all --resources gpu=8          # full matrix on a GPU node
#   snakemake --cores all demo                       # minutes on a laptop, no GPU or API key
import os
import time

from snakemake.utils import min_version

min_version("9.0")


configfile: "params.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/corpus.smk"
include: "workflow/rules/render.smk"
include: "workflow/rules/generate.smk"
include: "workflow/rules/label.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/probe.smk"
include: "workflow/rules/pilot.smk"
include: "workflow/rules/judge.smk"
include: "workflow/rules/leaderboard.smk"


rule all:
    input:
        lambda wildcards: slice_targets("full"),


rule lite:
    input:
        lambda wildcards: slice_targets("lite"),


rule demo:
    input:
        lambda wildcards: slice_targets("demo"),


# The closing lines of a run that built a slice target: time, samples, where the report is.
START = time.monotonic()


onsuccess:
    from mirage.report.summary import closing_summary

    for slice_name in finished_slices(workflow):
        print(closing_summary(slice_name, slice_models(slice_name), time.monotonic() - START), flush=True)
