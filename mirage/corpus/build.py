"""Instantiate templates with lexicon fills and identity variants into prompt rows.

Ordering and sampling use hash ranks (`rank_key`), never an RNG's state, so the corpus is the
same on every machine and Python version for a given seed and source tree.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator

from mirage.corpus.params import CorpusParams
from mirage.corpus.sources import PLACEHOLDER, Frame, Sources, entry_key
from mirage.hashing import content_hash, rank_key
from mirage.io import DataError

MAX_COMBOS = 500_000


def _lex_value(entry: dict, lang: str, field: str | None, where: str) -> str:
    value = entry.get(lang) if lang in entry else entry.get("ar") if lang.startswith("ar-") else entry.get("en")
    if value is None:
        raise DataError(f"{where}: lexicon entry {entry_key(entry)!r} has no '{lang}' (or 'ar') value")
    if isinstance(value, dict):
        if field is None or field not in value:
            raise DataError(f"{where}: lexicon entry {entry_key(entry)!r} needs field '{field}' for {lang}")
        value = value[field]
    elif field is not None:
        raise DataError(f"{where}: placeholder asks for field '{field}' but entry {entry_key(entry)!r} is plain text")
    return str(value)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _substitute(text: str, fills: dict[str, dict], lang: str, where: str) -> str:
    def repl(m: re.Match) -> str:
        name, field = m.group(1), m.group(3)
        value = _lex_value(fills[name.lower()], lang, field, where)
        return _cap(value) if name[0].isupper() else value

    return re.sub(r" {2,}", " ", PLACEHOLDER.sub(repl, text))


def render_variant(
    frame: Frame, lang: str, fills: dict[str, dict], forms: dict[str, str]
) -> tuple[str, tuple[int, int]]:
    """Render one language/identity variant; returns the text and the swap span [start, end)."""
    text = frame.texts[lang]
    m = next(m for m in PLACEHOLDER.finditer(text) if m.group(1).lower() == "id")
    form = m.group(2)
    where = f"{frame.source} frame '{frame.frame_id}' ({lang})"
    if form not in forms:
        raise DataError(f"{where}: identity form '{form}' not defined in identities.yaml (have {sorted(forms)})")
    span = _cap(forms[form]) if m.group(1) == "Id" else forms[form]
    prefix = _substitute(text[: m.start()], fills, lang, where)
    suffix = _substitute(text[m.end() :], fills, lang, where)
    return prefix + span + suffix, (len(prefix), len(prefix) + len(span))


def _allocate(total: int, capacities: list[int]) -> list[int]:
    """Split `total` as evenly as possible over frames, never above a frame's capacity."""
    alloc = [0] * len(capacities)
    remaining = total
    open_ = [i for i, c in enumerate(capacities) if c > 0]
    while remaining > 0 and open_:
        share, extra = divmod(remaining, len(open_))
        for rank, i in enumerate(open_):
            give = min(capacities[i] - alloc[i], share + (1 if rank < extra else 0))
            alloc[i] += give
            remaining -= give
        open_ = [i for i in open_ if alloc[i] < capacities[i]]
    if remaining:
        raise DataError(f"only {sum(capacities)} distinct instantiations possible, {total} requested")
    return alloc


def _combos(frame: Frame, sources: Sources, k: int, seed: int) -> list[dict[str, dict]]:
    """Pick k fill combinations, hash-ordered and balanced so every lexicon value is used evenly."""
    slots = frame.slots()
    pools = [frame.lexicons.get(s) or sources.lexicons[s] for s in slots]
    size = math.prod(len(p) for p in pools)
    if size > MAX_COMBOS:
        raise DataError(f"{frame.source}: frame '{frame.frame_id}' has {size} fill combinations (max {MAX_COMBOS})")
    ranked = sorted(
        itertools.product(*[range(len(p)) for p in pools]),
        key=lambda idx: rank_key(seed, frame.template, frame.frame_id, *(entry_key(p[i]) for p, i in zip(pools, idx))),
    )
    caps = [math.ceil(k / len(p)) for p in pools]
    used = [Counter() for _ in pools]
    chosen, rest = [], []
    for idx in ranked:
        if len(chosen) == k:
            break
        if all(used[s][i] < caps[s] for s, i in enumerate(idx)):
            chosen.append(idx)
            for s, i in enumerate(idx):
                used[s][i] += 1
        else:
            rest.append(idx)
    chosen += rest[: k - len(chosen)]
    return [{s: pools[j][i] for j, (s, i) in enumerate(zip(slots, idx))} for idx in chosen]


def frame_capacity(frame: Frame, sources: Sources) -> int:
    return math.prod(len(frame.lexicons.get(s) or sources.lexicons[s]) for s in frame.slots())


def instantiate(sources: Sources, params: CorpusParams) -> Iterator[tuple[Frame, dict[str, dict]]]:
    """Yield (frame, fills) for every base prompt, `instantiations_per_template` per template."""
    for tid, frames in sources.frames.items():
        caps = [frame_capacity(f, sources) for f in frames]
        try:
            alloc = _allocate(params.instantiations_per_template, caps)
        except DataError as exc:
            raise DataError(f"template {tid}: {exc}") from None
        for frame, k in zip(frames, alloc):
            for fills in _combos(frame, sources, k, params.seed):
                yield frame, fills


def base_id(frame: Frame, fills: dict[str, dict]) -> str:
    return "b" + content_hash(
        {
            "template": frame.template,
            "frame": frame.frame_id,
            "en": frame.texts["en"],
            "fills": {s: entry_key(e) for s, e in fills.items()},
        }
    )


def prompt_id(base: str, identity: str, language: str, text: str) -> str:
    return "p" + content_hash({"base_id": base, "identity": identity, "language": language, "text": text})


def arabic_ready(frame: Frame, fills: dict[str, dict], languages: list[str]) -> bool:
    """True if the frame and all its fills are authored in every requested Arabic variant."""
    if frame.template == "T5" or not all(lang in frame.texts for lang in languages):
        return False
    return all("ar" in e or all(lang in e for lang in languages) for e in fills.values())


def build_rows(sources: Sources, params: CorpusParams) -> list[dict]:
    """All prompt rows (English for every base prompt; Arabic for the parallel subset), unsplit."""
    bases = [(base_id(f, fills), f, fills) for f, fills in instantiate(sources, params)]
    parallel = select_parallel(bases, params)
    rows = []
    for bid, frame, fills in bases:
        langs = ["en"] + (list(params.arabic_languages) if bid in parallel else [])
        for lang in langs:
            script = "en" if lang == "en" else "ar"
            for ident in params.identities:
                forms = sources.identity_forms[ident].get(lang) or sources.identity_forms[ident][script]
                text, (s, e) = render_variant(frame, lang, fills, forms)
                rows.append(
                    {
                        "prompt_id": prompt_id(bid, ident, lang, text),
                        "base_id": bid,
                        "template": frame.template,
                        "frame_id": frame.frame_id,
                        "harness": frame.harness,
                        "identity_field": frame.identity_field,
                        "canonical": frame.canonical,
                        "identity": ident,
                        "focal": ident == params.focal_identity,
                        "language": lang,
                        "text": text,
                        "swap_span": [s, e],
                        "swap_text": text[s:e],
                        "fills": {slot: entry_key(entry) for slot, entry in fills.items()},
                        "parallel": bid in parallel,
                    }
                )
    return rows


def select_parallel(bases: list[tuple[str, Frame, dict]], params: CorpusParams) -> set[str]:
    """The cross-lingual subset: `arabic_subset` base prompts spread evenly over T1-T4 and T6."""
    if not params.arabic_subset or not params.arabic_languages:
        return set()
    by_template: dict[str, list[str]] = {}
    for bid, frame, fills in bases:
        if arabic_ready(frame, fills, params.arabic_languages):
            by_template.setdefault(frame.template, []).append(bid)
    templates = sorted(by_template)
    alloc = _allocate(params.arabic_subset, [len(by_template[t]) for t in templates])
    chosen: set[str] = set()
    for t, k in zip(templates, alloc):
        chosen.update(sorted(by_template[t], key=lambda b: rank_key(params.seed, "parallel", b))[:k])
    return chosen
