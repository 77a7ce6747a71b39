"""The probe computation, independent of files: pairs x layers λ, its summary and the Table 7 row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mirage.config.probe import ProbeParams
from mirage.probe.lens import lens_log_mass
from mirage.probe.onset import onsets, summarise
from mirage.probe.pairs import Pair


@dataclass
class ProbeResult:
    pairs: pd.DataFrame  # pairs.csv: one row per pair x layer
    summary: pd.DataFrame  # lambda.csv
    onset: dict  # n_layers, early_elevation_layer, final_suppression_layer, final_suppression_offset


def pair_lambdas(
    model: Any, tokenizer: Any, pairs: Sequence[Pair], token_ids: Sequence[int], batch_size: int, progress: bool = True
) -> pd.DataFrame:
    """λ(l) = log ΣV P_l(v|focal) − log ΣV P_l(v|control) for every pair and layer (pairs.csv)."""
    texts = [p.focal_text for p in pairs] + [p.control_text for p in pairs]
    mass = lens_log_mass(model, tokenizer, texts, token_ids, batch_size, progress)
    focal, control = mass[: len(pairs)], mass[len(pairs) :]
    n_layers = mass.shape[1]
    meta = pd.DataFrame(
        [(p.index, p.base_id, p.template, p.control_identity, p.focal_prompt_id, p.control_prompt_id) for p in pairs],
        columns=["pair", "base_id", "template", "control_identity", "focal_prompt_id", "control_prompt_id"],
    )
    rows = meta.loc[meta.index.repeat(n_layers)].reset_index(drop=True)
    rows["layer"] = np.tile(np.arange(n_layers), len(pairs))
    rows["log_mass_focal"] = focal.ravel()
    rows["log_mass_control"] = control.ravel()
    rows["lambda"] = (focal - control).ravel()
    return rows


def probe(model: Any, tokenizer: Any, pairs: Sequence[Pair], token_ids: Sequence[int], p: ProbeParams, progress: bool = True) -> ProbeResult:
    """Run the lens on all pairs and derive lambda.csv and the onsets."""
    rows = pair_lambdas(model, tokenizer, pairs, token_ids, p.batch_size, progress)
    lam = rows.pivot(index="pair", columns="layer", values="lambda").to_numpy()
    summary = summarise(lam, p.n_resamples, p.confidence_level, p.ci_method, p.seed)
    onset = onsets(summary, p.elevation_fraction, p.elevation_min_lambda, p.elevation_min_run, p.suppression_fraction)
    return ProbeResult(rows, summary, onset)
