"""The violence token set V, built per model vocabulary from stems and an editable exclusion list (App. E.2)."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from mirage.hashing import content_hash
from mirage.io import DataError

_WORD = re.compile(r"^[a-z]+$")


def read_word_list(path: str | os.PathLike) -> list[str]:
    """Lower-case words, one per line; `#` starts a comment. A non-alphabetic entry raises DataError (file:line)."""
    words: list[str] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{path}: not found") from None
    for lineno, line in enumerate(lines, 1):
        word = line.split("#", 1)[0].strip().lower()
        if not word:
            continue
        if not _WORD.match(word):
            raise DataError(f"{path}:{lineno}: '{word}' is not a single alphabetic word")
        words.append(word)
    return words


def surface_form(text: str) -> str:
    """A token's word form: decoded text without surrounding whitespace, lower-cased ('' if not alphabetic)."""
    form = text.strip().lower()
    return form if _WORD.match(form) else ""


def build_token_set(tokenizer: Any, stems: list[str], exclusions: list[str], max_forms_per_stem: int | None) -> dict:
    """Scan the whole vocabulary (special tokens skipped) and return V with everything needed to review it.

    A token matches the longest stem its word form starts with. Word forms on the exclusion list are
    dropped. Per stem, forms are ranked by their lowest token id (BPE merge rank, a frequency proxy)
    and the first `max_forms_per_stem` are kept with all their variants (leading space, capitalised).
    """
    if not stems:
        raise DataError("the stems list is empty")
    special = set(tokenizer.all_special_ids)
    ids = [i for i in range(len(tokenizer)) if i not in special]
    texts = tokenizer.batch_decode([[i] for i in ids], clean_up_tokenization_spaces=False)
    raw = tokenizer.convert_ids_to_tokens(ids)
    by_longest = sorted(stems, key=lambda s: (-len(s), s))
    excluded_forms = set(exclusions)
    forms: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    excluded: list[dict] = []
    for token_id, text, token in zip(ids, texts, raw):
        form = surface_form(text)
        stem = next((s for s in by_longest if form.startswith(s)), None) if form else None
        if stem is None:
            continue
        entry = {"id": token_id, "token": token, "text": text, "form": form, "stem": stem}
        (excluded if form in excluded_forms else forms[stem][form]).append(entry)
    kept: list[dict] = []
    beyond_cap: list[dict] = []
    for stem in stems:
        ranked = sorted(forms[stem].items(), key=lambda kv: min(e["id"] for e in kv[1]))
        for rank, (_, entries) in enumerate(ranked):
            (kept if max_forms_per_stem is None or rank < max_forms_per_stem else beyond_cap).extend(entries)
    if not kept:
        raise DataError(f"no vocabulary token matches the stems {stems} after exclusions")
    kept.sort(key=lambda e: e["id"])
    return {
        "tokenizer": getattr(tokenizer, "name_or_path", ""),
        "vocab_size": len(tokenizer),
        "stems": stems,
        "max_forms_per_stem": max_forms_per_stem,
        "stems_without_tokens": [s for s in stems if not any(e["stem"] == s for e in kept)],
        "token_ids": [e["id"] for e in kept],
        "tokens": kept,
        "excluded": sorted(excluded, key=lambda e: e["id"]),
        "beyond_cap": sorted(beyond_cap, key=lambda e: e["id"]),
        "hash": content_hash([e["id"] for e in kept]),
    }
