"""What the page says about how this run differs from the paper's protocol, and how good its judge is."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mirage import artefacts
from mirage.io import DataError
from mirage.judges.eval import quality
from mirage.judges.eval.evaluate import ARABIC_ALL
from mirage.metric_names import KAPPA

TEMPLATES = ("T1", "T2", "T3", "T4", "T5", "T6")
CONDITION_WORDS = {"C1": "direct completion (C1)", "C2": "chain of thought (C2)", "C3": "agentic decisions (C3)"}


@dataclass
class Deviation:
    """One way this run differs from the paper's protocol, in plain words."""

    what: str
    protocol: str
    ours: str


@dataclass
class JudgeInfo:
    """The judge that labelled V and its measured quality (None when not evaluated): the held-out realistic split
    (`heldout`, mirage.judges.eval.quality), the single-sentence gold set (`single`) and the whole file's figures."""

    name: str
    path: str
    n: int | None = None
    f1: float | None = None
    f1_arabic: float | None = None
    arabic_parts: dict[str, float] = field(default_factory=dict)
    invariance: float | None = None
    invariance_rows: int | None = None
    kappa: float | None = None
    heldout: dict | None = None
    single: dict | None = None
    several_sets: bool = False  # the file mixes several named sets, so its overall figures are no one set's
    real_text: dict = field(default_factory=dict)  # `by_source_split` of judge_eval.json: split -> figures on real text

    @property
    def evaluated(self) -> bool:
        return self.f1 is not None

    def sentence(self) -> str:
        """`V labelled by X: held-out realistic F1 ..., single-sentence gold F1 ..., identity invariance ...` or why
        no quality figure is known."""
        if not self.evaluated:
            return (f"V labelled by {self.name}; this judge has not been evaluated against the gold sets "
                    f"(no {self.path}; run `mirage judge eval --judge {self.name}`), so its error rate is unknown.")
        parts = ([self._real_text()] if self.real_text else []) + [self._heldout_text()]
        if self.several_sets:
            parts.append(f"single-sentence gold F1 {_f(self.single.get('f1'))} (n = {_n(self.single)})"
                         if self.single else "single-sentence gold F1 not measured")
        else:  # one set: the file's own figures are that set's
            parts.append(f"{'single-sentence gold' if self.single else 'gold-set'} F1 {self.f1:.2f} (n = {_count(self.n)})")
            if self.f1_arabic is not None:
                parts.append(f"Arabic F1 {self.f1_arabic:.2f}")
            elif self.arabic_parts:
                parts.append("Arabic F1 " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(self.arabic_parts.items())))
            else:
                parts.append("Arabic F1 not measured")
        parts.append(f"identity invariance {100 * self.invariance:.0f}% of {self.invariance_rows} [ID] rows"
                     if self.invariance is not None else "identity invariance not measured")
        if self.kappa is not None and not self.several_sets:
            parts.append(f"κ vs gold {self.kappa:.2f}")
        return f"V labelled by {self.name}: " + ", ".join(parts) + "."

    def _real_text(self) -> str:
        """Real text first: the judge's F1 on the frozen held-out sources of the real-text gold set (and the dev sources)."""
        out = []
        for split, words in REAL_TEXT_SPLITS:
            m = self.real_text.get(split)
            if m:
                ci = m.get("f1_ci") or [None, None]
                interval = f" [{_f(ci[0])}, {_f(ci[1])}]" if None not in ci and ci[0] != ci[1] else ""
                out.append(f"real-text F1 on {words} {_f(m.get('f1'))}{interval} (n = {_n(m)}; precision "
                           f"{_f(m.get('precision'))}, recall {_f(m.get('recall'))})")
        return ", ".join(out)

    def _heldout_text(self) -> str:
        if self.heldout is None:
            return f"held-out realistic F1 not measured (no held-out split in {Path(self.path).name})"
        o = self.heldout["overall"]
        ci = o.get("f1_ci") or [None, None]
        interval = f" [{_f(ci[0])}, {_f(ci[1])}]" if None not in ci and ci[0] != ci[1] else ""
        inner = [f"n = {_n(o)}", f"precision {_f(o.get('precision'))}, recall {_f(o.get('recall'))}, "
                             f"specificity {_f(o.get('specificity'))}"]
        langs = self.heldout.get("by_language") or {}
        arabic = langs.get(ARABIC_ALL) or langs.get("ar")
        named = [f"{word} {_f(m.get('f1'))}" for word, m in (("English", langs.get("en")), ("Arabic", arabic)) if m]
        if named:
            inner.append(", ".join(named))
        return f"held-out realistic F1 {_f(o.get('f1'))}{interval} ({'; '.join(inner)})"


def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.2f}"


def _count(x: Any) -> str:
    return "not recorded" if x is None else f"{int(x):,}"


def _n(stats: dict) -> str:
    """'323 rows, 1,615 texts' (gold rows and the texts they expand into, one per identity), or the texts alone."""
    n = _count(stats.get("n"))
    return f"{_count(stats['rows'])} rows, {n} texts" if stats.get("rows") is not None else n


def _num(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"{where}: expected a number, got {value!r}")
    return float(value)


def load_judge(name: str, path: Path) -> JudgeInfo:
    """Read `judge_eval.json` (written by `mirage judge eval`) for the judge `name`; absent file -> not evaluated.
    Files without splits or sets (older `mirage judge eval`) keep their figures; the held-out split reads as not
    measured."""
    info = JudgeInfo(name, str(path))
    if not path.exists():
        return info
    try:
        ev = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(ev, dict) or not isinstance(ev.get("overall"), dict):
        raise DataError(f"{path}: field overall: expected an object with precision, recall, f1, accuracy, kappa")
    if ev.get("judge") not in (None, name):
        raise DataError(f"{path}: field judge: evaluates {ev.get('judge')!r}, but the labels were made by {name!r}")
    info.n = int(ev["n"]) if isinstance(ev.get("n"), int) else None
    info.f1 = _num(ev["overall"].get("f1"), f"{path}: field overall.f1")
    info.kappa = _num(ev["overall"].get(KAPPA), f"{path}: field overall.kappa")
    langs = ev.get("by_language") or {}
    for lang, m in langs.items() if isinstance(langs, dict) else ():
        if str(lang).startswith("ar") and isinstance(m, dict) and m.get("f1") is not None:
            f1 = _num(m["f1"], f"{path}: field by_language.{lang}.f1")
            if lang == "ar":
                info.f1_arabic = f1
            elif lang != ARABIC_ALL:
                info.arabic_parts[str(lang)] = f1
    if ARABIC_ALL in langs and isinstance(langs[ARABIC_ALL], dict) and info.f1_arabic is None:
        info.f1_arabic = _num(langs[ARABIC_ALL].get("f1"), f"{path}: field by_language.{ARABIC_ALL}.f1")
    inv = ev.get("invariance") or {}
    if isinstance(inv, dict):
        info.invariance = _num(inv.get("rate"), f"{path}: field invariance.rate")
        info.invariance_rows = inv.get("rows")
    info.heldout = quality.heldout(ev, str(path))
    info.single = quality.single_sentence(ev, str(path))
    info.several_sets = isinstance(ev.get("by_set"), dict) and len(ev["by_set"]) > 1
    by_source = ev.get("by_source_split") or {}
    if not isinstance(by_source, dict):
        raise DataError(f"{path}: field by_source_split: expected an object of splits (heldout, dev)")
    for split, block in by_source.items():
        figures = block.get("overall", block) if isinstance(block, dict) else None
        if not isinstance(figures, dict):
            raise DataError(f"{path}: field by_source_split.{split}: expected an object of figures (f1, precision, recall, n)")
        for key in ("f1", "precision", "recall"):
            _num(figures.get(key), f"{path}: field by_source_split.{split}.{key}")
        info.real_text[str(split)] = figures
    return info


#: The real-text splits the banner reports, in order, with their words.
#: A trainable judge (parse-v3) learned from the dev sources, so only the held-out sources' figure is out of sample.
REAL_TEXT_SPLITS = (("heldout", "held-out sources"), ("dev", "dev sources (training data of a trainable judge)"))


def offline_judge_banner(slice_name: str, judges: list[JudgeInfo], registry: Any) -> str | None:
    """The line the report opens with when a real audit (any slice but the demo) was labelled by an offline judge
    (one that is not a registry model), with that judge's figures on real text (`by_source_split` of its
    judge_eval.json: held-out and dev sources), or that they were not measured. None otherwise."""
    offline = [j for j in judges if j.name not in registry and not j.name.startswith("jury:")]
    if slice_name == "demo" or not offline:
        return None
    parts = []
    for j in offline:
        measured = [f"{words} F1 {_f(j.real_text[split].get('f1'))} (n = {_n(j.real_text[split])}, precision "
                    f"{_f(j.real_text[split].get('precision'))}, recall {_f(j.real_text[split].get('recall'))})"
                    for split, words in REAL_TEXT_SPLITS if split in j.real_text]
        parts.append(f"{j.name}: " + ("; ".join(measured) if measured else f"not measured on real text ({j.path})"))
    return (f"This {slice_name} audit was labelled by an offline judge, not by the paper's LLM judge with a human "
            f"validation sample. Its figures on real text: {' | '.join(parts)}. Set slices.{slice_name}.judge to an LLM "
            f"judge (the default) and validate a sample (`mirage validate`) before publishing.")


def judges_of(labels: pd.DataFrame, configured: str) -> list[str]:
    """Judges named in the label rows (the `judge` column), else the configured one."""
    if not labels.empty and "judge" in labels.columns:
        names = sorted({str(j) for j in labels["judge"].dropna()})
        if names:
            return names
    return [configured]


def _tokens(d: dict[str, int]) -> str:
    return "; ".join(f"{d[c]} tokens for {CONDITION_WORDS.get(c, c)}" for c in sorted(d))


def sampling_settings(params: Any, slice_name: str) -> pd.DataFrame:
    """Per model of the slice, how it samples: temperature, top_p, max_tokens per condition (slice overrides applied),
    seed policy, server kind and the extra fields sent in the request body (as validated: what is sent)."""
    from mirage.config.dialects import dialect_for
    from mirage.generate.runner import settings_for

    sl = getattr(params.slices, slice_name)
    gen = params.generate
    rows = []
    for name in sl.models:
        spec = params.models[name]
        st = {c: settings_for(gen, sl.n_samples, sl.max_tokens, c) for c in CONDITION_WORDS}
        dialect = dialect_for(spec)
        seed = (f"per sample: hash(seed {gen.seed}, request, sample index)" if dialect.seed
                else f"none: {dialect.no_seed}")
        rows.append({"model": name, "provider": spec.provider,
                     "server_kind": spec.server_kind if spec.provider == "openai" else "",
                     "temperature": gen.temperature, "top_p": gen.top_p, "n_samples": st["C1"].n_samples,
                     **{f"max_tokens {c}": st[c].max_tokens for c in st}, "seed": seed,
                     "sampling_extra": json.dumps(spec.sampling_extra, sort_keys=True) if spec.sampling_extra else "none"})
    return pd.DataFrame(rows)


def deviations(params: Any, slice_name: str, labels: pd.DataFrame, metrics: pd.DataFrame, judges: list[JudgeInfo],
               declared: list[str], news: str) -> list[Deviation]:
    """Every known difference from the protocol (paper §3, App. H, J) with the protocol value beside ours
    (`news`: the news corpus the requests were rendered with)."""
    sl = getattr(params.slices, slice_name)
    gen = params.generate
    out: list[Deviation] = []
    judge_text = "; ".join(j.name + (" (offline rules)" if j.name.startswith("lexicon") else "") for j in judges)
    quality = " ".join(j.sentence() for j in judges)
    out.append(Deviation("Violence judge", "GPT-4 zero-shot violence classifier (Abid et al. protocol)", f"{judge_text}. {quality}"))
    has_kappa = bool((metrics["metric"] == KAPPA).any()) if not metrics.empty else False
    if not has_kappa:
        out.append(Deviation("Human validation", "10% of outputs spot-validated by annotators (κ = 0.84, App. H)",
                             "none in this run (no kappa rows; `mirage validate export` / `import` produce them)"))
    n = sl.n_samples or gen.n_samples
    if n != 5:
        out.append(Deviation("Samples per request", "5 samples at temperature 0.7", f"{n} sample{'s' if n != 1 else ''} at temperature {gen.temperature}"))
    elif gen.temperature != 0.7:
        out.append(Deviation("Sampling temperature", "0.7", str(gen.temperature)))
    protocol_tokens = {"C1": 256, "C2": 1024, "C3": 256}
    ours = {**dict(gen.max_tokens), **(sl.max_tokens or {})}
    if ours != protocol_tokens:
        out.append(Deviation("Maximum response length", _tokens(protocol_tokens), _tokens(ours)))
    out.extend(_dialect_deviations(params, sl.models))
    out.append(Deviation("News corpus for retrieval (RAG pools)", "curated real news, dated relative to the evaluation date",
                         "fictional illustrative news items written for this harness (see the README beside them)"
                         if Path(news).resolve() == Path(artefacts.news()).resolve()
                         else f"user-supplied corpus {news} (its provenance is not checked by the harness)"))
    out.append(Deviation("Arabic prompts", "parallel translations in MSA, Egyptian, Levantine and Maghrebi Arabic",
                         "machine-drafted translations not yet reviewed by native speakers (see the corpus README)"))
    if not labels.empty and {"template", "base_id"} <= set(labels.columns):
        counts = labels.groupby("template")["base_id"].nunique()
        ours_bases = ", ".join(f"{t}: {int(counts.get(t, 0))}" for t in TEMPLATES)
        if any(int(counts.get(t, 0)) != 200 for t in TEMPLATES):
            out.append(Deviation("Base prompts per template", "200 per template (1,200 in all)", f"{ours_bases} (slice {slice_name})"))
    covered = ("n_samples", "max_tokens", "params slices")
    out.extend(Deviation("Recorded by `mirage metrics`", "—", d) for d in declared if not d.startswith(covered))
    return out


def _dialect_deviations(params: Any, models: list[str]) -> list[Deviation]:
    """What an endpoint's dialect (mirage.config.dialects) changes against the protocol: no seed sent,
    thinking spent inside the output budget."""
    from mirage.config.dialects import dialect_for

    out = []
    for name in models:
        dialect = dialect_for(params.models[name])
        if not dialect.seed:
            out.append(Deviation(f"Seeds ({name})", "one seed per sample", dialect.no_seed))
        if dialect.thinking_in_budget:
            held = ", ".join(f"{k} {v}" for k, v in dialect.reasoning.items())
            out.append(Deviation(f"Thinking ({name})", "the whole output budget is the answer's",
                                 f"thinking held to the least the model allows ({held}) but spent inside max_tokens; "
                                 "each record's note says how many tokens it took, and a reply left without "
                                 "visible text is a failed call, never a stored answer"))
    return out
