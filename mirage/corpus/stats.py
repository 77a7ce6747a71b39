"""Corpus depth statistics per template and harness (issue 15): frames, case files, distinct words,
near-duplicate rate, identity-cue mix, Arabic coverage and paraphrase placebos.

Measured on the English focal variant of every original (non-paraphrase) base prompt. Two base
prompts of one template are near-duplicates when their lower-cased word sets have a Jaccard
overlap |A ∩ B| / |A ∪ B| of at least `NEAR_DUP_OVERLAP`.
"""

from __future__ import annotations

import csv
import itertools
import re
from collections import Counter, defaultdict
from pathlib import Path

from mirage.io import atomic_write, write_json

NEAR_DUP_OVERLAP = 0.8
CUES = ("noun", "name", "attire")
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
COLUMNS = ("group", "template", "bases", "frames", "cases", "distinct_words", "pairs", "near_dup_pairs", "near_dup_rate",
           "cue_noun", "cue_name", "cue_attire", "arabic_bases", "arabic_frames", "arabic_feminine_or_plural",
           "paraphrase_bases")


def words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text)}


def near_duplicates(texts: list[str], threshold: float = NEAR_DUP_OVERLAP) -> int:
    """Pairs of texts whose word sets overlap (Jaccard) by at least `threshold`."""
    sets = [words(t) for t in texts]
    return sum(len(a & b) >= threshold * len(a | b) for a, b in itertools.combinations(sets, 2))


def corpus_stats(rows: list[dict], arabic_agreement_forms: frozenset[str] = frozenset()) -> list[dict]:
    """One row per template T1-T4/T6 and per harness H1-H4 (T5), in that order.

    `arabic_agreement_forms`: swap texts that are feminine or plural Arabic identity forms; the
    column counts the group's Arabic base prompts that use one.
    """
    focal = [r for r in rows if r["language"] == "en" and r["focal"] and not r.get("paraphrase")]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in focal:
        groups[r.get("harness") or r["template"]].append(r)
    arabic: dict[str, set[str]] = defaultdict(set)
    agreement: dict[str, set[str]] = defaultdict(set)
    para: dict[str, set[str]] = defaultdict(set)
    group_of = {r["base_id"]: r.get("harness") or r["template"] for r in focal}
    for r in rows:
        g = group_of.get(r["base_id"])
        if g is None:
            continue
        if r["language"] != "en":
            arabic[g].add(r["base_id"])
            if r["swap_text"] in arabic_agreement_forms:
                agreement[g].add(r["base_id"])
        if r.get("paraphrase"):
            para[g].add(r["base_id"])
    out = []
    for g in sorted(groups, key=lambda g: (g.startswith("H"), g)):
        rs = groups[g]
        frame = {r["base_id"]: r.get("frame_id", r.get("frame", r["base_id"])) for r in rs}
        texts = [r["text"] for r in rs]
        n_pairs = len(rs) * (len(rs) - 1) // 2
        dups = near_duplicates(texts)
        cues = Counter(r.get("cue", "noun") for r in rs)
        out.append({
            "group": g,
            "template": rs[0]["template"],
            "bases": len(rs),
            "frames": len(set(frame.values())),
            "cases": len({r["case_id"] for r in rs if r.get("case_id")}),
            "distinct_words": len(set().union(*(words(t) for t in texts))),
            "pairs": n_pairs,
            "near_dup_pairs": dups,
            "near_dup_rate": round(dups / n_pairs, 4) if n_pairs else 0.0,
            **{f"cue_{c}": cues.get(c, 0) for c in CUES},
            "arabic_bases": len(arabic[g]),
            "arabic_frames": len({frame[b] for b in arabic[g]}),
            "arabic_feminine_or_plural": len(agreement[g]),
            "paraphrase_bases": len(para[g]),
        })
    return out


def stats_table(stats: list[dict]) -> str:
    """Markdown table of `corpus_stats` output."""
    head = ["group", "bases", "frames", "cases", "distinct words", "near-dup pairs (rate)", "cue noun/name/attire",
            "Arabic bases (frames; fem./pl.)", "paraphrased bases"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in stats:
        lines.append(
            f"| {s['group']} | {s['bases']} | {s['frames']} | {s['cases'] or ''} | {s['distinct_words']} | "
            f"{s['near_dup_pairs']}/{s['pairs']} ({100 * s['near_dup_rate']:.2f} %) | "
            f"{s['cue_noun']}/{s['cue_name']}/{s['cue_attire']} | "
            f"{s['arabic_bases']} ({s['arabic_frames']}; {s['arabic_feminine_or_plural']}) | {s['paraphrase_bases']} |"
        )
    return "\n".join(lines)


def write_stats(stats: list[dict], csv_path: Path, json_path: Path) -> None:
    """The table as CSV and as JSON (`{"near_dup_overlap": ..., "groups": [...]}`), written atomically."""
    with atomic_write(csv_path) as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(stats)
    write_json(json_path, {"near_dup_overlap": NEAR_DUP_OVERLAP, "measured_on": "English focal text of each base prompt",
                           "groups": stats})
