"""Disjoint splits over base prompts: `lite` and `dev` (public) and the held-out `test` split (private).

The public corpus (data/) is split per stratum (templates, and harnesses within T5) into the 15%
`lite` split and the `dev` split (the rest), by proportional quotas with largest remainders (ties
broken by hash), so the totals are exact. A base prompt's identity and language variants always share
its split.

The `test` split is held out: its base prompts are instantiated from a private data folder (named by
the environment variable MIRAGE_PRIVATE_DIR) that is not in the repository. The folder holds a secret
`salt` (required) and optionally `templates/T*.yaml` (private frames that replace the public frames of
that template for the test split) and `lexicons/*.yaml` (private fills, added to or replacing public
lexicons). Fill combinations are drawn with a seed derived from the secret salt, and any base prompt
that is also public is excluded, so `test`, `lite` and `dev` are disjoint by construction;
`check_disjoint` verifies it on every build.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections import defaultdict
from pathlib import Path

import yaml

from mirage.config.corpus import CorpusParams
from mirage.corpus.sources import TEMPLATE_IDS, Sources, _check_lexicon, _frame_from
from mirage.hashing import content_hash, rank_key
from mirage.io import DataError

PRIVATE_ENV = "MIRAGE_PRIVATE_DIR"
SPLITS: tuple[str, ...] = ("dev", "lite", "test")


def stratum(row: dict) -> str:
    return row["harness"] or row["template"]


def proportional_quota(sizes: dict[str, int], fraction: float, seed: int, purpose: str) -> dict[str, int]:
    """Largest-remainder allocation of round(fraction * total) across strata."""
    total = round(fraction * sum(sizes.values()))
    exact = {s: fraction * n for s, n in sizes.items()}
    quota = {s: math.floor(x) for s, x in exact.items()}
    order = sorted(sizes, key=lambda s: (-(exact[s] - quota[s]), rank_key(seed, purpose, s)))
    for s in order[: total - sum(quota.values())]:
        quota[s] += 1
    return quota


def draw(bases_by_stratum: dict[str, list[str]], fraction: float, seed: int | str, purpose: str) -> set[str]:
    sizes = {s: len(b) for s, b in bases_by_stratum.items()}
    quota = proportional_quota(sizes, fraction, seed, purpose)
    chosen: set[str] = set()
    for s, bases in bases_by_stratum.items():
        chosen.update(sorted(bases, key=lambda b: rank_key(seed, purpose, b))[: quota[s]])
    return chosen


def _bases_by_stratum(rows: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row["language"] == "en" and row["focal"]:
            out[stratum(row)].append(row["base_id"])
    return out


def assign_splits(rows: list[dict], lite_fraction: float, seed: int) -> None:
    """Set `split` ('lite' | 'dev') and `lite` (bool) on every public row, in place."""
    lite = draw(_bases_by_stratum(rows), lite_fraction, seed, "lite")
    for row in rows:
        row["lite"] = row["base_id"] in lite
        row["split"] = "lite" if row["lite"] else "dev"


def check_disjoint(rows: list[dict], source: str = "corpus") -> None:
    """Raise DataError if a base prompt is in more than one split (or `lite` disagrees with `split`).
    Rows without a `split` field (an unsplit file under --check) are not checked."""
    seen: dict[str, set[str]] = defaultdict(set)
    for i, row in enumerate(rows, 1):
        if "split" not in row:
            continue
        split = row["split"]
        if split not in SPLITS:
            raise DataError(f"{source}: row {i} (prompt {row.get('prompt_id')}): field split: {split!r} is not one of {', '.join(SPLITS)}")
        if bool(row.get("lite")) != (split == "lite"):
            raise DataError(f"{source}: row {i} (prompt {row.get('prompt_id')}): field lite: {row.get('lite')!r} contradicts split {split!r}")
        seen[row["base_id"]].add(split)
    overlap = {b: sorted(s) for b, s in seen.items() if len(s) > 1}
    if overlap:
        shown = "; ".join(f"{b} in {'+'.join(s)}" for b, s in sorted(overlap.items())[:20])
        more = f" (and {len(overlap) - 20} more)" if len(overlap) > 20 else ""
        raise DataError(f"{source}: {len(overlap)} base prompt(s) in more than one split: {shown}{more}")


def private_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """The private data folder (argument, else $MIRAGE_PRIVATE_DIR), or None when the test split is unavailable."""
    value = explicit if explicit is not None else os.environ.get(PRIVATE_ENV)
    if not value:
        return None
    path = Path(value)
    if not path.is_dir():
        raise DataError(f"{path}: private data folder ({PRIVATE_ENV}) does not exist")
    return path


def _secret_seed(root: Path, seed: int) -> str:
    salt_path = root / "salt"
    if not salt_path.is_file():
        raise DataError(f"{salt_path}: missing; the private folder needs a secret `salt` file (any long random string)")
    salt = salt_path.read_text(encoding="utf-8").strip()
    if len(salt) < 16:
        raise DataError(f"{salt_path}: the salt must be at least 16 characters (got {len(salt)})")
    return content_hash([seed, salt], length=32)


def private_sources(public: Sources, root: Path) -> tuple[Sources, set[str]]:
    """Public sources overlaid with the private frames and lexicons; also the templates with private frames."""
    lexicons = dict(public.lexicons)
    for path in sorted((root / "lexicons").glob("*.yaml")):
        lexicons[path.stem] = _check_lexicon(path.stem, yaml.safe_load(path.read_text(encoding="utf-8")), str(path))
    frames = dict(public.frames)
    private = set()
    for tid in TEMPLATE_IDS:
        path = root / "templates" / f"{tid}.yaml"
        if not path.exists():
            continue
        if tid == "T5":
            raise DataError(f"{path}: T5 case files come from harnesses; private T5 frames are not supported")
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise DataError(f"{path}: not valid YAML: {exc}") from None
        frames[tid] = [_frame_from(tid, f, str(path)) for f in raw.get("frames", [])]
        if not frames[tid]:
            raise DataError(f"{path}: template {tid} has no frames")
        private.add(tid)
        for fr in frames[tid]:
            for slot in fr.slots():
                if slot not in lexicons:
                    raise DataError(f"{path}: frame '{fr.frame_id}' uses {{{slot}}} but no lexicon '{slot}' exists")
    return dataclasses.replace(public, lexicons=lexicons, frames=frames), private


def held_out_rows(public: Sources, params: CorpusParams, public_rows: list[dict], root: Path) -> list[dict]:
    """English rows of the held-out test split: round(test_fraction * instantiations_per_template) base
    prompts per template, instantiated with the secret salt, none of them public."""
    from mirage.corpus.build import build_rows

    n_test = round(params.test_fraction * params.instantiations_per_template)
    if n_test == 0:
        return []
    secret = _secret_seed(root, params.seed)
    sources, private = private_sources(public, root)
    public_bases = {r["base_id"] for r in public_rows}
    seed = int(secret[:15], 16)
    rows: list[dict] = []
    for tid in TEMPLATE_IDS:
        if tid not in sources.frames:
            continue
        # Public frames: draw enough extra combinations to survive removing the public ones.
        n = n_test if tid in private else n_test + params.instantiations_per_template
        sub = dataclasses.replace(sources, frames={tid: sources.frames[tid]})
        p = params.model_copy(update={"seed": seed, "instantiations_per_template": n, "arabic_subset": 0})
        try:
            built = [r for r in build_rows(sub, p) if r["base_id"] not in public_bases]
        except DataError as exc:
            raise DataError(f"{root}: template {tid}: cannot instantiate {n_test} held-out base prompts: {exc}") from None
        by_stratum = _bases_by_stratum(built)
        total = sum(len(b) for b in by_stratum.values())
        if total < n_test:
            raise DataError(f"{root}: template {tid}: only {total} base prompts not already public, {n_test} needed; "
                            f"add private frames or lexicon entries")
        chosen = draw(by_stratum, n_test / total, secret, "test")
        rows += [r for r in built if r["base_id"] in chosen]
    for row in rows:
        row["lite"] = False
        row["split"] = "test"
    return rows
