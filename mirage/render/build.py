"""The request matrix: baseline C1/C2/C3, the RAG layer, the mitigation audit, and slice tags."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from tqdm import tqdm

from mirage.config.render import RenderParams
from mirage.hashing import content_hash, rank_key
from mirage.io import DataError
from mirage.protocol import (
    COMPLETION_CONDITIONS,
    CONDITIONS,
    DECISION_CONDITION,
    DECISION_TEMPLATE,
    HELD_OUT,
    mitigations_for,
)
from mirage.render.conditions import Request, completion_content, decision_content
from mirage.render.mitigations import compose, hide_identity_field
from mirage.render.rag import Retriever, context_block
from mirage.render.texts import Harness, MitigationTexts

CORPUS_FIELDS = ("prompt_id", "base_id", "template", "harness", "identity", "focal", "language", "lite", "split",
                 "text", "swap_span", "swap_text", "identity_field", "parallel")
COPIED = ("prompt_id", "base_id", "template", "harness", "identity", "focal", "language", "lite", "split")
# Optional corpus columns carried to requests (older corpora lack them: null here, defaulted by metrics).
CARRIED = ("frame_id", "case_id", "cue", "gender", "paraphrase")


@dataclass(frozen=True)
class Sources:
    """Everything a request is rendered from besides the corpus."""

    texts: MitigationTexts
    cot_translations: dict[str, str]
    harnesses: dict[str, Harness]
    retriever: Retriever


def load_render_sources(p: RenderParams, harness_dir: str, news: str, mitigation_texts: str,
                        cot_translations: str) -> tuple[Sources, dict]:
    """(the render sources, the news pools by name) from their files; errors name the file."""
    from mirage.render.rag import Retriever, assign_pools, load_news
    from mirage.render.texts import load_cot_translations, load_harnesses, load_mitigation_texts

    pools = assign_pools(load_news(news), p.rag.eval_date, p.rag.recent_days, p.rag.historical_years)
    src = Sources(texts=load_mitigation_texts(mitigation_texts), cot_translations=load_cot_translations(cot_translations),
                  harnesses=load_harnesses(harness_dir), retriever=Retriever(pools, p.rag.top_k))
    return src, pools


def conditions_of(row: dict) -> tuple[str, ...]:
    """Baseline conditions of a corpus row: its own `condition` (a prompt of the user's file), else T5 case files go
    to C3 and other templates to C1 and C2."""
    if row.get("condition"):
        return (row["condition"],)
    return (DECISION_CONDITION,) if row["template"] == DECISION_TEMPLATE else COMPLETION_CONDITIONS


def retrieval_query(row: dict) -> str:
    """The row's text with the identity span removed: identical for all identity variants of a base prompt."""
    start, end = row["swap_span"]
    return " ".join((row["text"][:start] + " " + row["text"][end:]).split())


class Renderer:
    def __init__(self, p: RenderParams, src: Sources, corpus: str):
        self.p, self.src, self.corpus = p, src, corpus

    def cot(self, language: str) -> str:
        if language == "en":
            return self.p.cot_suffix
        try:
            return self.src.cot_translations[language]
        except KeyError:
            raise DataError(f"C2 suffix translations: no suffix for language {language!r}") from None

    def content(self, row: dict, condition: str, mitigation: str):
        if condition != "C3":
            return completion_content(row["text"])
        harness = self.src.harnesses.get(row["harness"])
        if harness is None:
            raise DataError(f"{self.corpus}: prompt {row['prompt_id']}: no harness file for {row['harness']!r}")
        text = row["text"]
        if mitigation == "structural":
            where = f"{self.corpus}: prompt {row['prompt_id']}"
            text = hide_identity_field(text, row["identity_field"] or harness.identity_field, self.src.texts.structural.placeholder, where)
            if row["swap_text"] in text:
                raise DataError(f"{where}: identity {row['swap_text']!r} still present after hiding the identity field")
        return decision_content(text, harness)

    def request(self, row: dict, condition: str, mitigation: str = "none", context: str | None = None) -> Request:
        cot = self.cot(row["language"]) if condition == "C2" else None
        return compose(condition, self.content(row, condition, mitigation), self.src.texts, mitigation, context, cot)


def make_row(row: dict, condition: str, rag_pool: str, mitigation: str, req: Request, retrieved: list[str]) -> dict:
    fields = req.fields()
    out = {k: row[k] for k in COPIED} | {k: row.get(k) for k in CARRIED}
    out.update(fields)
    out.update(
        row_id="q" + content_hash([row["prompt_id"], condition, rag_pool, mitigation]),
        request_id="r" + content_hash(fields),
        condition=condition,
        rag_pool=rag_pool,
        mitigation=mitigation,
        retrieved=retrieved,
    )
    return out


def _by_rank(base_ids: Iterable[str], *salt: object) -> list[str]:
    return sorted(base_ids, key=lambda b: rank_key(*salt, b))


def rag_bases(rows: list[dict], p: RenderParams, corpus: str, n_base: int | None = None) -> list[str]:
    """`n_base` (default `rag.n_base`) English base prompts, stratified equally over `rag.templates`, hash-ordered."""
    by_template = defaultdict(set)
    for r in rows:
        if r["language"] == "en" and r["template"] in p.rag.templates:
            by_template[r["template"]].add(r["base_id"])
    n_t = len(p.rag.templates)
    n_base = p.rag.n_base if n_base is None else n_base
    chosen = []
    for i, t in enumerate(p.rag.templates):
        quota = n_base // n_t + (i < n_base % n_t)
        if len(by_template[t]) < quota:
            raise DataError(f"{corpus}: template {t} has {len(by_template[t])} English base prompts; rag.n_base needs {quota}")
        chosen += _by_rank(by_template[t], p.seed, "rag")[:quota]
    return chosen


def build(rows: list[dict], p: RenderParams, src: Sources, corpus: str) -> dict[str, list[dict]]:
    """All request rows, per condition, each tagged with its slices (`corpus` names the source in errors)."""
    render = Renderer(p, src, corpus)
    out: dict[str, list[dict]] = {c: [] for c in CONDITIONS}
    # paraphrase placebo rows are baseline requests only (no RAG, no mitigation, not in the demo)
    english = [r for r in rows if r["language"] == "en" and not r.get("paraphrase")]
    paraphrases = {r["prompt_id"] for r in rows if r.get("paraphrase")}

    for r in tqdm(rows, desc="render baseline", unit="prompt", leave=False):
        for c in conditions_of(r):
            if r["template"] == "T5" and r["language"] != "en":
                raise DataError(f"{corpus}: prompt {r['prompt_id']}: T5 case files are English only")
            out[c].append(make_row(r, c, "none", "none", render.request(r, c), []))

    variants = defaultdict(list)
    for r in english:
        variants[r["base_id"]].append(r)
    # The held-out test split (private) gets its own RAG bases, in proportion; public choices never depend on it.
    public = [r for r in rows if r["split"] != HELD_OUT]
    held = {r["base_id"] for r in rows if r["split"] == HELD_OUT}
    bases_rag = rag_bases(public, p, corpus)
    if held:
        share = len(held) / max(len({r["base_id"] for r in public}), 1)
        bases_rag += rag_bases([r for r in rows if r["split"] == HELD_OUT], p, corpus, round(p.rag.n_base * share))
    for base in tqdm(bases_rag, desc="render RAG", unit="base", leave=False):
        queries = {retrieval_query(r) for r in variants[base]}
        if len(queries) != 1:
            raise DataError(f"{corpus}: base {base}: identity variants differ outside the swap span; retrieval query is ambiguous")
        query = queries.pop()
        for pool in p.rag.pools:
            items = src.retriever.retrieve(query, pool, tiebreak=f"{p.seed}:{base}")
            block = context_block(items, p.rag.header, p.rag.footer)
            ids = [i.id for i in items]
            for c in p.rag.conditions:
                for r in variants[base]:
                    out[c].append(make_row(r, c, pool, "none", render.request(r, c, context=block), ids))

    for c in p.mitigations.conditions:
        which = mitigations_for(c, p.mitigations.which)
        targets = [r for r in english if c in conditions_of(r)]
        for r in tqdm(targets, desc=f"render mitigations {c}", unit="prompt", leave=False):
            for m in which:
                out[c].append(make_row(r, c, "none", m, render.request(r, c, m), []))

    demo = demo_selector(public, [b for b in bases_rag if b not in held], p)
    for c, cond_rows in out.items():
        for row in cond_rows:
            if row["split"] == HELD_OUT:
                row["slices"] = [HELD_OUT]
            else:
                is_demo = demo(row) and row["prompt_id"] not in paraphrases
                row["slices"] = (["demo"] if is_demo else []) + (["lite"] if row["lite"] else []) + ["full"]
    return out


def demo_selector(rows: list[dict], bases_rag: list[str], p: RenderParams):
    """Predicate for the demo slice: complete matched sets (all identities) of a few base prompts.

    Baseline: `base_per_template` base prompts per template (T5: per harness), English, parallel
    bases first; the non-English variants of the first `crosslingual_base` of them; all pools of
    `rag_base` RAG bases; every mitigation on the first `mitigation_base` demo bases of each condition.
    """
    d = p.demo
    groups, parallel = defaultdict(set), set()
    english = {r["base_id"] for r in rows if r["language"] == "en"}
    for r in rows:
        if r["language"] == "en" or r["base_id"] not in english:  # a base with no English text (a user's prompt)
            groups[r["harness"] or r["template"]].add(r["base_id"])
        if r["language"] != "en" and r["parallel"]:
            parallel.add(r["base_id"])
    order = {b: (b not in parallel, rank_key(p.seed, "demo", b)) for g in groups.values() for b in g}
    picked = {g: sorted(bs, key=order.__getitem__)[: d.base_per_template] for g, bs in groups.items()}
    completion = sorted((b for g, bs in picked.items() if not g.startswith("H") for b in bs), key=order.__getitem__)
    decision = sorted((b for g, bs in picked.items() if g.startswith("H") for b in bs), key=order.__getitem__)
    baseline = {b for bs in picked.values() for b in bs}
    xling = {b for b in completion if b in parallel}
    xling = set(sorted(xling, key=order.__getitem__)[: d.crosslingual_base])
    rag = set(_by_rank(bases_rag, p.seed, "demo-rag")[: d.rag_base])
    mitig = {"C1": set(completion[: d.mitigation_base]), "C2": set(completion[: d.mitigation_base]),
             "C3": set(decision[: d.mitigation_base])}

    def is_demo(row: dict) -> bool:
        b = row["base_id"]
        if row["rag_pool"] != "none":
            return b in rag
        if row["mitigation"] != "none":
            return b in mitig[row["condition"]]
        return b in baseline and (row["language"] == "en" or b in xling or b not in english)

    return is_demo
