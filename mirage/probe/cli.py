"""`mirage probe`: the logit-lens probe of one open model on the fixed matched-pair probe set."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mirage import artefacts
from mirage.config.generate import ModelSpec
from mirage.config.probe import ProbeModelSpec
from mirage.io import DataError, atomic_write, write_json
from mirage.names import NAME
from mirage.params import Params, ParamsError, load_params, section_hash
from mirage.provenance import code_version

API_PROVIDERS = ("openai", "anthropic")


def resolve_model(params: Params, name: str, overrides: dict[str, Any]) -> ProbeModelSpec:
    """Model spec from the `models:` registry entry (when params has one), else `probe.fallback_models`,
    then CLI overrides (--model-id, --gguf-file, --revision). API-only models cannot be probed, and a registry model
    whose weights cannot fit on its declared GPUs is refused before loading (mirage.generate.memory.probe_refusal)."""
    registry = getattr(params, "models", None) or {}
    entry = registry.get(name) if hasattr(registry, "get") else getattr(registry, name, None)
    if entry is not None:
        fields = entry.model_dump() if hasattr(entry, "model_dump") else dict(entry)
        if fields.get("provider") in API_PROVIDERS:
            raise click.ClickException(f"model '{name}' is served by the {fields['provider']} API: the logit lens needs its weights")
        if isinstance(entry, ModelSpec) and not overrides.get("model_id"):
            from mirage.generate.memory import probe_refusal

            refusal = probe_refusal(name, entry)  # the GPU memory plan, before anything is loaded
            if refusal:
                raise click.ClickException(refusal)
        spec = {k: fields.get(k) for k in ("model_id", "revision", "gguf_file")} | {"gpus": fields.get("gpus") or 0}
    elif name in params.probe.fallback_models:
        spec = params.probe.fallback_models[name].model_dump()
    elif overrides.get("model_id"):
        spec = {"model_id": overrides["model_id"]}
    else:
        known = sorted(set(registry.keys() if hasattr(registry, "keys") else []) | set(params.probe.fallback_models))
        raise click.ClickException(f"unknown model '{name}'; known: {', '.join(known)} (or pass --model-id)")
    spec.update({k: v for k, v in overrides.items() if v is not None})
    return ProbeModelSpec(**spec)


def load_model(spec: ProbeModelSpec, dtype: str) -> tuple[Any, Any]:
    """CPU for gpus == 0; otherwise shard across the visible GPUs with device_map='auto'."""
    import torch

    from mirage.hf import ModelNotAvailable, load_causal_lm

    device_map = None
    if spec.gpus > 0:
        visible = torch.cuda.device_count()
        if visible < spec.gpus:
            raise click.ClickException(f"{spec.model_id} needs {spec.gpus} GPU(s); {visible} visible")
        device_map = "auto"
    try:
        return load_causal_lm(spec.model_id, spec.revision, spec.gguf_file, dtype=dtype, device_map=device_map)
    except (ModelNotAvailable, OSError) as exc:
        raise click.ClickException(f"cannot load {spec.model_id}: {exc}") from None


@click.command()
@click.option("--model", "name", required=True, type=NAME, help="Model name: a `models:` registry entry, or a probe.fallback_models key.")
@click.option("--out-dir", type=click.Path(file_okay=False), help=f"Output folder.  [default: {artefacts.probe_dir('{model}')}]")
@click.option("--params", "params_path", default="params.yaml", show_default=True, help="Run configuration.")
@click.option("--prompts", type=click.Path(dir_okay=False), default=artefacts.corpus(), show_default=True, help="Corpus table.")
@click.option("--stems", type=click.Path(dir_okay=False), default=artefacts.probe_stems(), show_default=True, help="Violence stems, one per line (App. E.2).")
@click.option("--exclusions", type=click.Path(dir_okay=False), default=artefacts.probe_exclusions(), show_default=True,
              help="Surface forms removed from the token set.")
@click.option("--model-id", help="Override the model's hub id / folder / pkg:// id.")
@click.option("--gguf-file", help="Override the GGUF file inside the model folder.")
@click.option("--revision", help="Override the pinned revision (hub sha, or sha256:<hex> of a GGUF).")
@click.option("--batch-size", type=click.IntRange(min=1), help="Prompts per forward pass (default: probe.batch_size).")
def probe(name: str, out_dir: str | None, params_path: str, prompts: str, stems: str, exclusions: str, model_id: str | None,
          gguf_file: str | None, revision: str | None, batch_size: int | None) -> None:
    """Logit-lens probe (paper §5, App. E) of one open model on 80 matched prompts.

    For 40 focal/control pairs (10 base prompts each from T1, T2, T4, T6), project every layer's
    last-position residual through the final norm and unembedding and compute
    λ(l) = log ΣV P_l(v|focal) − log ΣV P_l(v|control) over the violence token set V. Writes to
    <out-dir>: lambda.csv, pairs.csv, token_set.json, table7.csv, lambda.png, lambda.svg and
    provenance.json. See docs/probe.md for V and the onset rules.
    """
    import pandas as pd

    from mirage.probe.pairs import load_pairs
    from mirage.probe.plot import render, save
    from mirage.probe.run import probe as run_probe
    from mirage.probe.tokens import build_token_set, read_word_list

    try:
        params = load_params(params_path)
        p = params.probe if batch_size is None else params.probe.model_copy(update={"batch_size": batch_size})
        spec = resolve_model(params, name, {"model_id": model_id, "gguf_file": gguf_file, "revision": revision})
        pairs = load_pairs(prompts, p)
        stem_list, exclusion_list = read_word_list(stems), read_word_list(exclusions)
    except (ParamsError, DataError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{name}: {len(pairs)} pairs; loading {spec.model_id}", err=True)
    model, tokenizer = load_model(spec, p.dtype)
    try:
        token_set = build_token_set(tokenizer, stem_list, exclusion_list, p.max_forms_per_stem)
    except DataError as exc:
        raise click.ClickException(str(exc)) from None
    token_set["exclusions_file"] = exclusions
    result = run_probe(model, tokenizer, pairs, token_set["token_ids"], p, progress=sys.stderr.isatty())
    table7 = {"model": name} | {k: result.onset[k] for k in (
        "n_layers", "early_elevation_layer", "final_suppression_offset", "final_suppression_layer")}
    out = Path(out_dir or artefacts.probe_dir(name))
    figure = render(result.summary, result.onset, name, p.confidence_level)
    write_json(out / "token_set.json", token_set)
    for file, frame in (("pairs.csv", result.pairs), ("lambda.csv", result.summary), ("table7.csv", pd.DataFrame([table7]))):
        with atomic_write(out / file) as fh:
            frame.to_csv(fh, index=False, float_format="%.6g")
    save(figure, out / "lambda")
    write_json(out / "provenance.json", {
        "code_version": code_version(), "params_hash": section_hash(params, "probe"), "model": name,
        "model_id": spec.model_id, "revision": spec.revision, "gguf_file": spec.gguf_file,
        "token_set_hash": token_set["hash"], "n_pairs": len(pairs), "onset": result.onset,
    })
    shown = {k: ("-" if v is None else v) for k, v in table7.items()}
    click.echo(f"|V| = {len(token_set['token_ids'])}; L = {shown['n_layers']}; early elevation: layer {shown['early_elevation_layer']}; "
               f"final suppression: L-{shown['final_suppression_offset']} (layer {shown['final_suppression_layer']})")
    click.echo(f"wrote {out}/{{{','.join(artefacts.PROBE_FILES)}}}")
