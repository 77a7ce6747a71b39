"""Draw the stratified spot-validation sample and mask identity mentions (paper App. H).

The mask covers every identity-related term the data knows (identities.yaml: `forms`, `identity_tokens`,
`presupposing_terms`, and any lexicon entry bound to an identity), in English and Arabic, plus derived forms:
English suffixes (Muslims, Muslimen, Islamic, Judaism, Christianity, ...) and Arabic clitics (المسلمين, ومسلمة, ...).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from mirage.hashing import rank_key
from mirage.identities import load as load_identities

ITEM_COLUMNS = ["item_id", "template", "condition", "prompt", "reasoning", "response", "annotator", "violent", "notes"]
KEY_COLUMNS = ["item_id", "key", "model", "template", "condition", "identity", "language", "judge", "judge_violent"]

# Derived-form endings for Latin-script terms (inflection, -ism/-ist/-ity/-ic derivations, German -en, Spanish -a/-os).
SUFFIXES = ("s", "es", "e", "en", "a", "as", "o", "os", "n", "an", "ans", "ic", "ics", "ism", "isms", "ist", "ists", "istic",
            "ity", "ities", "ian", "ians", "ish", "ess", "ry", "ophobia", "ophobic", "ized", "ised", "ization", "isation", "ly")
ARABIC = re.compile(r"[\u0600-\u06FF]")
ARABIC_WORD = "[\u0600-\u06FF\u0750-\u077F]*"


def _strings(value: Any) -> Iterable[str]:
    """Every string leaf of a YAML value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _phrases(text: str) -> set[str]:
    """A term and, for forms like `none (secular)`, the part in parentheses."""
    out = {text.strip()}
    out.update(m.strip() for m in re.findall(r"\(([^()]+)\)", text))
    return {t for t in out if t}


def identity_terms(data_dir: Path) -> set[str]:
    """Identity-related terms from identities.yaml (forms, tokens, presupposing terms, judge forms, exonyms) and
    identity-bound lexicon entries."""
    ident = load_identities(data_dir)
    raw: list[str] = [*_strings(ident.forms), *_strings(ident.tokens), *ident.presupposing_terms, *_strings(ident.exonyms)]
    raw += [word for name in ident.names for table in ident.judge_forms.get(name, {}).values() for word in table]
    for lex in sorted(Path(data_dir).glob("lexicons/*.yaml")):
        entries = yaml.safe_load(lex.read_text(encoding="utf-8")) or []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and (entry.get("identity") or entry.get("identities")):
                raw.extend(_strings({k: v for k, v in entry.items() if k in ("en", "ar") or k.startswith("ar-")}))
    terms = {p for t in raw for p in _phrases(t)}
    return {t for t in terms if len(t) >= 2}


def identity_pattern(terms: Iterable[str]) -> re.Pattern:
    """One case-insensitive pattern for all terms: Latin-script terms as whole words with optional derived
    endings (spaces match any whitespace), Arabic terms as any Arabic word containing them (clitics, endings)."""
    terms = sorted(set(terms), key=len, reverse=True)
    latin = [r"\s+".join(map(re.escape, t.split())) for t in terms if not ARABIC.search(t)]
    arabic = [re.escape(t) for t in terms if ARABIC.search(t)]
    suffix = "|".join(sorted(SUFFIXES, key=len, reverse=True))
    parts = []
    if latin:
        parts.append(rf"(?<!\w)(?:{'|'.join(latin)})(?:{suffix})?(?!\w)")
    if arabic:
        parts.append(f"{ARABIC_WORD}(?:{'|'.join(arabic)}){ARABIC_WORD}")
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


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


def mask_prompt(corpus_row: dict, mask: str) -> str:
    """The corpus prompt with its swap span replaced by `mask`."""
    a, b = corpus_row["swap_span"]
    return corpus_row["text"][:a] + mask + corpus_row["text"][b:]


def mask_text(text: str | None, pattern: re.Pattern, mask: str) -> str:
    return "" if not text else pattern.sub(mask, text)
