"""Draw the stratified spot-validation sample and mask identity mentions (paper App. H)."""

from __future__ import annotations

import math
import re
from collections import defaultdict

from mirage.hashing import rank_key

ITEM_COLUMNS = ["item_id", "template", "condition", "prompt", "reasoning", "response", "annotator", "violent", "notes"]
KEY_COLUMNS = ["item_id", "key", "model", "template", "condition", "identity", "language", "judge", "judge_violent"]


def draw_sample(labels: list[dict], fraction: float, seed: int) -> list[dict]:
    """ceil(fraction * n) labelled rows per template x identity x condition cell, chosen by a seeded hash order."""
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for row in labels:
        if row.get("violent") is not None:
            cells[(row["template"], row["identity"], row["condition"])].append(row)
    out = []
    for cell in sorted(cells):
        rows = sorted(cells[cell], key=lambda r: rank_key(seed, r["key"]))
        out.extend(rows[: math.ceil(fraction * len(rows))])
    return sorted(out, key=lambda r: rank_key(seed, "order", r["key"]))


def identity_pattern(forms: set[str]) -> re.Pattern:
    """Whole-word, case-insensitive alternation of identity surface forms, longest first."""
    alts = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE)


def mask_prompt(corpus_row: dict, mask: str) -> str:
    """The corpus prompt with its swap span replaced by `mask`."""
    a, b = corpus_row["swap_span"]
    return corpus_row["text"][:a] + mask + corpus_row["text"][b:]


def mask_text(text: str | None, pattern: re.Pattern, mask: str) -> str:
    return "" if not text else pattern.sub(mask, text)
