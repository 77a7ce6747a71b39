"""The fixed probe set: matched focal/control pairs drawn equally from the probe templates (App. E.1)."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

from mirage.config.probe import ProbeParams
from mirage.hashing import rank_key
from mirage.io import DataError, read_jsonl

REQUIRED = ("prompt_id", "base_id", "template", "identity", "language", "text")


@dataclass(frozen=True)
class Pair:
    """One matched pair: the same base prompt with the focal identity and one control identity."""

    index: int
    base_id: str
    template: str
    control_identity: str
    focal_prompt_id: str
    control_prompt_id: str
    focal_text: str
    control_text: str


def select_pairs(rows: list[dict], p: ProbeParams, source: str = "prompts") -> list[Pair]:
    """Per template (in `p.templates` order) take the first `bases_per_template` base prompts by
    rank_key(seed, "probe", base_id) among those with the focal and every control variant in
    `p.language`; the k-th selected base prompt overall is paired with control `controls[k % len]`."""
    if not p.focal_identity or not p.controls:
        raise DataError("params: probe.focal_identity / probe.controls: none given and no identities.yaml in the data folder "
                        "of the working folder to take them from (run from the project root)")
    variants: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in rows:
        if row["language"] == p.language and row["template"] in p.templates and not row.get("paraphrase"):
            variants[row["base_id"]][row["identity"]] = row
    needed = {p.focal_identity, *p.controls}
    by_template: dict[str, list[str]] = defaultdict(list)
    for base_id, ids in variants.items():
        if needed <= ids.keys():
            by_template[ids[p.focal_identity]["template"]].append(base_id)
    pairs: list[Pair] = []
    for template in p.templates:
        bases = sorted(by_template[template], key=lambda b: rank_key(p.seed, "probe", b))
        if len(bases) < p.bases_per_template:
            raise DataError(
                f"{source}: template {template} has {len(bases)} base prompt(s) in language '{p.language}' with all of "
                f"{sorted(needed)}; probe.bases_per_template needs {p.bases_per_template}"
            )
        for base_id in bases[: p.bases_per_template]:
            control = p.controls[len(pairs) % len(p.controls)]
            f, c = variants[base_id][p.focal_identity], variants[base_id][control]
            pairs.append(Pair(len(pairs), base_id, template, control, f["prompt_id"], c["prompt_id"], f["text"], c["text"]))
    return pairs


def load_pairs(path: str | os.PathLike, p: ProbeParams) -> list[Pair]:
    """Read the corpus table and select the probe pairs; missing file or fields raise DataError."""
    if not os.path.exists(path):
        raise DataError(f"{path}: not found; run `mirage corpus` first")
    return select_pairs(list(read_jsonl(path, required=REQUIRED)), p, str(path))
