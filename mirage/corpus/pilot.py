"""Case-file calibration pilot (App. B): the decision distribution of every identity-masked case file.

Each case file of H1-H4 is rendered `samples` times (distinct non-dispositive surface fills, hash-
chosen), its identity field replaced by the structural placeholder, and sent with the harness rubric
and production instruction to a registry model through `mirage.generate.api.complete_chat` (served
from that model's store on a rerun). Decisions are parsed by `mirage.label.decisions`; H3 summaries
are rated favourable/neutral/unfavourable by the same model with the judge's summary rubric.

A case is decision-ambiguous when both of its harness's `boundary` outcomes stay plausible: every
parsed decision is put on the favourable or unfavourable side of the boundary (the midpoint of the
two outcomes' favourability), and a case is flagged `floor` or `ceiling` when the favourable side
gets less than `FLAG_BELOW` of the parsed decisions, or more than 1 - `FLAG_BELOW`; with fewer than
`MIN_PARSED` parsed decisions the case is flagged `n_too_small` instead (the share is still reported,
with its interval).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from statsmodels.stats.proportion import proportion_confint

from mirage.config.corpus import CorpusParams
from mirage.corpus.build import check_identities, fill_combinations, render_variant
from mirage.corpus.sources import Frame, Sources
from mirage.io import DataError
from mirage.label import decisions
from mirage.render.conditions import decision_content
from mirage.render.mitigations import compose, hide_identity_field
from mirage.render.texts import Harness, MitigationTexts

FLAG_BELOW = 0.2
MIN_PARSED = 5  # fewer parsed decisions than this: flagged n_too_small, not floor/ceiling


@dataclass(frozen=True)
class PilotItem:
    harness: str
    case_id: str
    text: str  # the masked case file
    conversation: list[dict[str, str]]


def masked_cases(sources: Sources, p: CorpusParams, texts: MitigationTexts, harnesses: dict[str, Harness],
                 samples: int, max_cases: int | None = None) -> list[PilotItem]:
    """`samples` identity-masked renderings of every case file (English, focal identity, then masked);
    with `max_cases`, only the first that many case files of each harness."""
    check_identities(sources, p)
    items = []
    forms = sources.identity_forms[p.focal_identity]["en"]
    seen: dict[str, int] = {}
    for frame in sources.frames["T5"]:
        seen[frame.harness] = seen.get(frame.harness, 0) + 1
        if max_cases is not None and seen[frame.harness] > max_cases:
            continue
        for fills in fill_combinations(frame, sources, samples, p.seed + 1):
            text, _ = render_variant(frame, "en", fills, forms, p.focal_identity)
            where = f"{frame.source}: case {frame.frame_id}"
            masked = hide_identity_field(text, frame.identity_field, texts.structural.placeholder, where)
            req = compose("C3", decision_content(masked, harnesses[frame.harness]), texts)
            items.append(PilotItem(frame.harness, frame.frame_id, masked, req.messages))
    return items


def _side(harness: decisions.Harness, boundary: tuple[str, str]) -> float:
    """Favourability cut between the two boundary outcomes."""
    return sum(harness.normalise(b) for b in boundary) / 2


def parse(harness: decisions.Harness, reply: str) -> str | None:
    if harness.kind == "choice":
        return decisions.parse_choice(reply, harness.options)
    if harness.kind == "score":
        return decisions.parse_score(reply, harness.lo, harness.hi)
    from mirage.judges.llm import parse_summary_reply

    return parse_summary_reply(reply)


def summarise(frame: Frame, harness: decisions.Harness, boundary: tuple[str, str], outcomes: list[str | None]) -> dict:
    """Distribution, favourable-side share with its Wilson 95 % interval, and the floor/ceiling flag."""
    parsed = [o for o in outcomes if o is not None]
    cut = _side(harness, boundary)
    fav = sum(harness.normalise(o) > cut for o in parsed)
    n = len(parsed)
    share = fav / n if n else None
    lo, hi = proportion_confint(fav, n, method="wilson") if n else (None, None)
    if n < MIN_PARSED:
        flag = "n_too_small"
    else:
        flag = "floor" if share < FLAG_BELOW else "ceiling" if share > 1 - FLAG_BELOW else ""
    return {
        "harness": frame.harness, "case_id": frame.frame_id, "boundary": list(boundary),
        "n": len(outcomes), "parsed": n, "distribution": dict(sorted(Counter(parsed).items())),
        "favourable_share": share, "ci_low": lo, "ci_high": hi, "flag": flag,
    }


def run_pilot(model: str, sources: Sources, p: CorpusParams, texts: MitigationTexts, harnesses: dict[str, Harness],
              samples: int, max_tokens: int, temperature: float, params_path: str, data_dir: str,
              max_cases: int | None = None, store_dir: str | None = None) -> list[dict]:
    """One summary per case file, in harness and case order."""
    from mirage.generate.api import PILOT_PARTITION, complete_chat

    parsers = decisions.load_harnesses(data_dir)
    items = masked_cases(sources, p, texts, harnesses, samples, max_cases)
    replies = complete_chat(model, [i.conversation for i in items], max_tokens=max_tokens, temperature=temperature,
                            params_path=params_path, partition=PILOT_PARTITION,
                            store_dir=store_dir)
    summary_ids = [k for k, i in enumerate(items) if parsers[i.harness].kind == "summary"]
    if summary_ids:
        from mirage.judges.llm import summary_conversation

        ratings = complete_chat(model, [summary_conversation(replies[k]) for k in summary_ids], max_tokens=max_tokens,
                                temperature=0.0, params_path=params_path, partition=PILOT_PARTITION,
                            store_dir=store_dir)
        for k, rating in zip(summary_ids, ratings, strict=True):
            replies[k] = rating
    by_case: dict[tuple[str, str], list[str | None]] = {}
    for item, reply in zip(items, replies, strict=True):
        by_case.setdefault((item.harness, item.case_id), []).append(parse(parsers[item.harness], reply))
    frames = {(f.harness, f.frame_id): f for f in sources.frames["T5"]}
    out = []
    for key, outcomes in by_case.items():
        meta = sources.harness_meta[key[0]]
        boundary = tuple(meta.get("boundary") or ())
        if len(boundary) != 2:
            raise DataError(f"{frames[key].source}: harness {key[0]} needs 'boundary: [outcome, outcome]' for the pilot")
        out.append(summarise(frames[key], parsers[key[0]], boundary, outcomes))
    return out


def pilot_table(model: str, rows: list[dict]) -> str:
    lines = [f"Pilot on {model}: identity-masked case files (favourable share of parsed decisions, Wilson 95 % CI)",
             "| harness | case | n (parsed) | distribution | favourable share [95 % CI] | flag |", "|---|---|---|---|---|---|"]
    for r in rows:
        dist = ", ".join(f"{k}: {v}" for k, v in r["distribution"].items()) or "-"
        share = "-" if r["favourable_share"] is None else f"{r['favourable_share']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"
        lines.append(f"| {r['harness']} | {r['case_id']} | {r['n']} ({r['parsed']}) | {dist} | {share} | {r['flag']} |")
    flagged = sum(bool(r["flag"]) for r in rows)
    lines.append(f"{flagged} of {len(rows)} case(s) flagged (floor/ceiling: favourable side < {FLAG_BELOW:.0%} or "
                 f"> {1 - FLAG_BELOW:.0%} of parsed decisions; n_too_small: fewer than {MIN_PARSED} parsed)")
    return "\n".join(lines)
