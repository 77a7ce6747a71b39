"""The judge figures the report and the leaderboard print, read from a judge_eval.json (`mirage judge eval`): the
held-out realistic split (the number to trust) and the single-sentence gold set beside it (docs/judge.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mirage import artefacts
from mirage.io import DataError
from mirage.judges.eval.evaluate import ARABIC_ALL
from mirage.judges.eval.gold import derive_condition
from mirage.protocol import ARABIC

HELDOUT = "heldout"
#: The named sets (file names, as `by_set` keys them) of the held-out realistic split and the single-sentence gold set.
HELDOUT_SET = Path(artefacts.judge_realistic_heldout()).name
SINGLE_SENTENCE_SET = Path(artefacts.judge_gold()).name
#: What the leaderboard manifest keeps of the held-out block.
MANIFEST_KEYS = ("n", "overall", "by_language", "by_condition", "by_shape", "invariance")
#: The figures of a stats dict that must be numbers (or null), and the groups of stats dicts in a block.
NUMBERS = ("n", "rows", "positives", "precision", "recall", "specificity", "f1")
GROUPS = ("by_language", "by_condition", "by_shape", "by_language_condition")


def _object(value: Any, where: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DataError(f"{where}: expected an object")
    return value


def _stats(value: Any, where: str) -> dict | None:
    """A stats dict ({n, rows, precision, recall, specificity, f1, f1_ci, ...}) whose figures are numbers or null."""
    stats = _object(value, where)
    for key in NUMBERS if stats is not None else ():
        v = stats.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise DataError(f"{where}.{key}: expected a number, got {v!r}")
    ci = (stats or {}).get("f1_ci")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in ci)):
        raise DataError(f"{where}.f1_ci: expected [low, high], got {ci!r}")
    return stats


def heldout(doc: dict, where: str = "judge_eval.json") -> dict | None:
    """The held-out realistic figures: `by_split.heldout` (n, overall, by_language, by_condition, by_shape,
    by_language_condition, invariance), else the set named heldout.jsonl in `by_set` (its overall scores only),
    else None (not measured)."""
    splits = _object(doc.get("by_split"), f"{where}: field by_split") or {}
    field = f"{where}: field by_split.{HELDOUT}"
    block = _object(splits.get(HELDOUT), field)
    if block is None:
        sets = _object(doc.get("by_set"), f"{where}: field by_set") or {}
        stats = _stats(sets.get(HELDOUT_SET), f"{where}: field by_set.{HELDOUT_SET}")
        return None if stats is None else {"n": stats.get("n"), "overall": stats}
    return check_block(block, field)


def check_block(block: Any, where: str) -> dict:
    """`block` if it is a held-out block whose every stats dict holds numbers (or null), else DataError naming the
    field (a judge_eval.json, or the `judge.heldout` of a leaderboard manifest someone sent us)."""
    block = _object(block, where)
    if block is None or _stats(block.get("overall"), f"{where}.overall") is None:
        raise DataError(f"{where}.overall: expected an object with precision, recall, f1")
    for group in GROUPS:
        for key, stats in (_object(block.get(group), f"{where}.{group}") or {}).items():
            _stats(stats, f"{where}.{group}.{key}")
    return block


def check_sets(sets: Any, where: str) -> dict:
    """`sets` if it maps set names to stats dicts (judge_eval.json `by_set`), else DataError naming the field."""
    for key, stats in (_object(sets, where) or {}).items():
        if _stats(stats, f"{where}.{key}") is None:
            raise DataError(f"{where}.{key}: expected an object")
    return sets


def single_sentence(doc: dict, where: str = "judge_eval.json") -> dict | None:
    """The scores of the single-sentence gold set (`by_set` gold.jsonl) when it was one of the evaluated sets."""
    sets = _object(doc.get("by_set"), f"{where}: field by_set") or {}
    return _stats(sets.get(SINGLE_SENTENCE_SET), f"{where}: field by_set.{SINGLE_SENTENCE_SET}")


def manifest_heldout(doc: dict, where: str = "judge_eval.json") -> dict | None:
    """The held-out block as a leaderboard manifest carries it: overall, per language, condition and shape."""
    block = heldout(doc, where)
    return None if block is None else {k: block[k] for k in MANIFEST_KEYS if k in block}


def strata(block: dict) -> list[tuple[str, dict]]:
    """(label, stats) of a held-out block in reading order: overall; each language (en, Arabic pooled, each
    dialect); each condition followed by its shapes."""
    out = [("overall", block["overall"])]
    langs = block.get("by_language") or {}
    order = ["en", ARABIC_ALL, *ARABIC]
    out += [(f"language {k}", langs[k]) for k in sorted(langs, key=lambda k: (order.index(k) if k in order else len(order), k))]
    conds, shapes = block.get("by_condition") or {}, block.get("by_shape") or {}
    for c in sorted(set(conds) | {derive_condition(s) for s in shapes if s != "none"}):
        if c in conds:
            out.append((f"condition {c}", conds[c]))
        out += [(f"shape {s} ({c})", shapes[s]) for s in sorted(shapes) if s != "none" and derive_condition(s) == c]
    if "none" in shapes:
        out.append(("shape none (rows without one)", shapes["none"]))
    return out
