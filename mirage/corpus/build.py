"""Instantiate templates with lexicon fills and identity variants into prompt rows.

Ordering and sampling use hash ranks (`rank_key`), never an RNG's state, so the corpus is the
same on every machine and Python version for a given seed and source tree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from mirage.config.corpus import CorpusParams
from mirage.corpus.sources import CUE_LEXICONS, PLACEHOLDER, Frame, Sources, entry_key
from mirage.corpus.validate import wants_an
from mirage.hashing import content_hash, rank_key
from mirage.io import DataError


def _lex_value(entry: dict, lang: str, field: str | None, where: str) -> str:
    """The entry's text in `lang`; `field` picks a field of a structured entry (`{role.role}`), an
    inflected form of a plain one (`{profession.f}` -> `ar_f`), or, ending in `a` (`{profession.a}`,
    `{role.role_a}`), adds the English indefinite article that agrees with the value."""
    if field == "a" or (field or "").endswith("_a"):
        value = _lex_value(entry, lang, field[:-2] or None, where)
        return value if lang != "en" else ("an " if wants_an(value) else "a ") + value
    value = entry.get(lang) if lang in entry else entry.get("ar") if lang.startswith("ar-") else entry.get("en")
    if value is None:
        raise DataError(f"{where}: lexicon entry {entry_key(entry)!r} has no '{lang}' (or 'ar') value")
    if isinstance(value, dict):
        if field is None or field not in value:
            raise DataError(f"{where}: lexicon entry {entry_key(entry)!r} needs field '{field}' for {lang}")
        value = value[field]
    elif field is not None:
        # an inflected form of a plain entry, e.g. {profession.f} -> its `ar_f` value (feminine)
        value = entry.get(f"{'en' if lang == 'en' else 'ar'}_{field}")
        if value is None:
            raise DataError(f"{where}: placeholder asks for form '{field}' but entry {entry_key(entry)!r} has no "
                            f"'{'en' if lang == 'en' else 'ar'}_{field}' value")
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
    frame: Frame, lang: str, fills: dict[str, dict], forms: dict[str, str], identity: str, text: str | None = None
) -> tuple[str, tuple[int, int]]:
    """Render one language/identity variant (of `text`, default the frame's text in `lang`);
    returns the text and the swap span [start, end)."""
    text = frame.texts[lang] if text is None else text
    m = next(m for m in PLACEHOLDER.finditer(text) if m.group(1).lower() == "id")
    form = m.group(2)
    where = f"{frame.source} frame '{frame.frame_id}' ({lang})"
    if form in CUE_LEXICONS:
        value = _lex_value(fills[CUE_LEXICONS[form]], lang, identity, where)
    elif form in forms:
        value = forms[form]
    else:
        raise DataError(f"{where}: identity form '{form}' not defined in identities.yaml (have {sorted(forms)})")
    span = _cap(value) if m.group(1) == "Id" else value
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


def fill_combinations(frame: Frame, sources: Sources, k: int, seed: int) -> list[dict[str, dict]]:
    """Pick k distinct fill combinations, hash-ordered and balanced: pick i takes the i-th entry of a
    hash-ordered permutation of every lexicon, so every value is used evenly (a repeat is re-drawn)."""
    slots = frame.slots()
    pools = [frame.lexicons.get(s) or sources.lexicons[s] for s in slots]
    if k > math.prod(len(p) for p in pools):
        raise DataError(f"{frame.source}: frame '{frame.frame_id}' has fewer than {k} fill combinations")
    perms = [sorted(range(len(p)), key=lambda i, s=s, p=p: rank_key(seed, frame.template, frame.frame_id, s, entry_key(p[i])))
             for s, p in zip(slots, pools)]
    chosen: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for i in range(k):
        idx = tuple(perm[i % len(perm)] for perm in perms)
        redraw = 0
        while idx in seen:
            redraw += 1
            idx = tuple(perm[int(rank_key(seed, frame.frame_id, i, redraw, s), 16) % len(perm)]
                        for s, perm in zip(slots, perms))
        seen.add(idx)
        chosen.append(idx)
    return [{s: pools[j][i] for j, (s, i) in enumerate(zip(slots, idx))} for idx in chosen]


def frame_capacity(frame: Frame, sources: Sources) -> int:
    return math.prod(len(frame.lexicons.get(s) or sources.lexicons[s]) for s in frame.slots())


def instantiate(sources: Sources, params: CorpusParams) -> Iterator[tuple[Frame, dict[str, dict]]]:
    """Yield (frame, fills) for every base prompt, `instantiations_per_template` per template."""
    for tid, frames in sources.frames.items():
        # T5: an equal share per harness first, then evenly over that harness's case files
        groups: dict[str | None, list[Frame]] = {}
        for f in frames:
            groups.setdefault(f.harness, []).append(f)
        try:
            shares = _allocate(params.instantiations_per_template,
                               [sum(frame_capacity(f, sources) for f in g) for g in groups.values()])
            for group, share in zip(groups.values(), shares):
                for frame, k in zip(group, _allocate(share, [frame_capacity(f, sources) for f in group])):
                    for fills in fill_combinations(frame, sources, k, params.seed):
                        yield frame, fills
        except DataError as exc:
            raise DataError(f"template {tid}: {exc}") from None


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


def _row(sources: Sources, params: CorpusParams, bid: str, frame: Frame, fills: dict[str, dict], lang: str,
         ident: str, parallel: bool, paraphrase: bool = False) -> dict:
    script = "en" if lang == "en" else "ar"
    forms = sources.identity_forms[ident].get(lang) or sources.identity_forms[ident][script]
    text, (s, e) = render_variant(frame, lang, fills, forms, ident, frame.paraphrase if paraphrase else None)
    return {
        "prompt_id": prompt_id(bid, ident, lang, text),
        "base_id": bid,
        "template": frame.template,
        "frame_id": frame.frame_id,
        "case_id": frame.case_id,
        "harness": frame.harness,
        "identity_field": frame.paraphrase_identity_field if paraphrase else frame.identity_field,
        "canonical": frame.canonical,
        "cue": frame.cue,
        "gender": frame.gender(fills, sources.gendered_nouns),
        "paraphrase": paraphrase,
        "identity": ident,
        "focal": ident == params.focal_identity,
        "language": lang,
        "text": text,
        "swap_span": [s, e],
        "swap_text": text[s:e],
        "fills": {slot: entry_key(entry) for slot, entry in fills.items()},
        "parallel": parallel,
    }


def check_identities(sources: Sources, params: CorpusParams) -> None:
    """corpus.identities and focal_identity name identities of the data folder read (its identities.yaml)."""
    have = list(sources.identity_forms)
    bad = [i for i in dict.fromkeys([*params.identities, params.focal_identity]) if i not in have]
    if not params.identities or bad:
        raise DataError(f"params: corpus.identities / corpus.focal_identity: {', '.join(map(repr, bad)) or 'none given'} "
                        f"not identities of the data folder's identities.yaml (have {', '.join(have)})")


def build_rows(sources: Sources, params: CorpusParams) -> list[dict]:
    """All prompt rows (English for every base prompt; Arabic for the parallel subset), unsplit."""
    check_identities(sources, params)
    bases = [(base_id(f, fills), f, fills) for f, fills in instantiate(sources, params)]
    parallel = select_parallel(bases, params)
    rows = []
    for bid, frame, fills in bases:
        langs = ["en"] + (list(params.arabic_languages) if bid in parallel else [])
        for lang in langs:
            for ident in params.identities:
                rows.append(_row(sources, params, bid, frame, fills, lang, ident, bid in parallel))
    return rows


def paraphrase_control(bid: str, params: CorpusParams) -> str:
    """The control identity a base prompt's paraphrase is rendered for, rotated by hash."""
    controls = [i for i in params.identities if i != params.focal_identity]
    return min(controls, key=lambda c: rank_key(params.seed, "paraphrase", bid, c))


def add_paraphrases(rows: list[dict], sources: Sources, params: CorpusParams) -> int:
    """Append the paraphrase placebo rows (after splits are assigned): for every lite base prompt, its
    frame's English paraphrase for the focal identity and one control. Returns the number added."""
    bases = {base_id(f, fills): (f, fills) for f, fills in instantiate(sources, params)}
    lite = {r["base_id"]: r for r in rows if r["lite"] and r["language"] == "en" and r["focal"] and not r["paraphrase"]}
    added = []
    for bid, orig in lite.items():
        frame, fills = bases[bid]
        if frame.paraphrase is None:
            raise DataError(f"{frame.source}: frame '{frame.frame_id}' has a lite base prompt but no 'paraphrase' text")
        for ident in (params.focal_identity, paraphrase_control(bid, params)):
            row = _row(sources, params, bid, frame, fills, "en", ident, orig["parallel"], paraphrase=True)
            row.update(lite=orig["lite"], split=orig["split"])
            added.append(row)
    rows += added
    return len(added)


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
