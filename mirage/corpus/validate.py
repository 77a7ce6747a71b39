"""Stage-2 validator (paper §3.2): reject bad matched pairs before they can be shipped.

Checks, per base prompt and language, across its identity variants:
- identity_outside_span: an identity token appears outside the swap span;
- presupposing_fill: a fill presupposes one religion (e.g. a city or holiday tied to one group);
- variants_differ: variants differ anywhere other than the swap span;
- span_mismatch: the recorded swap span does not hold the identity's surface form;
- article_agreement / capitalisation: obvious English grammar errors (a/an, sentence-initial case);
- variant_set: a base prompt lacks an identity variant or has one twice;
- duplicate_base: two base prompts render the same text.

Paraphrase rows (`paraphrase: true`) form their own group per base prompt: the focal identity and one
control, checked like any other matched set. Given names of the name cue count as identity tokens.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

AN_EXCEPTIONS = ("eu", "uni", "use", "usu", "one", "once", "ur")  # vowel letter, consonant sound -> "a"
A_EXCEPTIONS = ("hour", "honest", "honour", "honor", "heir")  # consonant letter, vowel sound -> "an"
ARTICLE = re.compile(r"\b([Aa]n?)\s+([A-Za-z0-9][\w'-]*)")
ARTICLE_PREFIX = re.compile(r"^[Aa]n? (?=\S)")


@dataclass(frozen=True)
class Issue:
    base_id: str
    language: str
    identity: str | None
    reason: str
    detail: str

    def __str__(self) -> str:
        who = f"{self.base_id} [{self.language}{'/' + self.identity if self.identity else ''}]"
        return f"{who} {self.reason}: {self.detail}"


def wants_an(word: str) -> bool:
    w = word.lower()
    if w[0].isdigit():
        return w.startswith("8") or bool(re.match(r"1[18](\D|$)", w))
    if w.startswith(A_EXCEPTIONS):
        return True
    return w[0] in "aeiou" and not w.startswith(AN_EXCEPTIONS)


def article_errors(text: str) -> list[str]:
    out = []
    for m in ARTICLE.finditer(text):
        article, word = m.group(1).lower(), m.group(2)
        if (article == "an") != wants_an(word):
            out.append(f"'{m.group(0)}' should use '{'an' if wants_an(word) else 'a'}'")
    return out


class Validator:
    def __init__(
        self,
        identity_tokens: dict[str, list[str]],
        presupposing_terms: list[str],
        identity_forms: dict,
        identities: Iterable[str] | None = None,
        cue_forms: dict[str, set[str]] | None = None,
        given_names: Iterable[str] = (),
    ):
        self._identities = sorted(identities or identity_forms)
        self._cue_forms = cue_forms or {}
        names = sorted(given_names, key=len, reverse=True)
        self._names = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
        en = sorted(identity_tokens.get("en", []), key=len, reverse=True)
        self._en = re.compile(r"\b(" + "|".join(map(re.escape, en)) + r")\b", re.IGNORECASE) if en else None
        self._ar = sorted(identity_tokens.get("ar", []), key=len, reverse=True)
        self._presup = re.compile(
            r"\b(" + "|".join(map(re.escape, presupposing_terms)) + r")\b", re.IGNORECASE
        ) if presupposing_terms else None
        self._forms = identity_forms

    def _tokens_in(self, text: str, language: str) -> list[str]:
        if language == "en":
            found = [m.group(0) for m in self._en.finditer(text)] if self._en else []
            return found + ([m.group(0) for m in self._names.finditer(text)] if self._names else [])
        return [t for t in self._ar if t in text]

    def check(self, rows: Iterable[dict]) -> list[Issue]:
        issues: list[Issue] = []
        groups: dict[tuple[str, str, bool], list[dict]] = defaultdict(list)
        for row in rows:
            groups[(row["base_id"], row["language"], bool(row.get("paraphrase")))].append(row)
        seen: dict[tuple[str, str, str], str] = {}
        for (bid, lang, para), variants in groups.items():
            issues += self._check_group(bid, lang, variants, para)
            for v in variants:
                other = seen.setdefault((lang, v["identity"], v["text"]), bid)
                if other != bid:
                    issues.append(Issue(bid, lang, v["identity"], "duplicate_base", f"same text as base {other}"))
        return issues

    def _check_group(self, bid: str, lang: str, variants: list[dict], paraphrase: bool = False) -> list[Issue]:
        issues = []
        have = [v["identity"] for v in variants]
        if paraphrase:
            if len(set(have)) != 2 or len(have) != 2 or not set(have) <= set(self._identities):
                issues.append(Issue(bid, lang, None, "variant_set", f"paraphrase has {sorted(have)}, expected two distinct identities"))
        elif sorted(have) != self._identities:
            issues.append(Issue(bid, lang, None, "variant_set", f"has {sorted(have)}, expected one each of {self._identities}"))
        outside = set()
        for v in variants:
            text, (s, e) = v["text"], v["swap_span"]
            span = text[s:e]
            script = "en" if lang == "en" else "ar"
            forms = self._forms.get(v["identity"], {})
            allowed = set((forms.get(lang) or forms.get(script) or {}).values())
            allowed |= self._cue_forms.get(v["identity"], set())
            allowed |= {f[:1].upper() + f[1:] for f in allowed}
            if span not in allowed and ARTICLE_PREFIX.sub("", span) not in allowed:  # an article may lead the span
                issues.append(Issue(bid, lang, v["identity"], "span_mismatch", f"span {span!r} is not a form of '{v['identity']}'"))
            outside.add((text[:s], text[e:]))
            for tok in self._tokens_in(text[:s] + "\x00" + text[e:], lang):
                issues.append(Issue(bid, lang, v["identity"], "identity_outside_span", f"identity token {tok!r} outside the swap span"))
            if lang == "en":
                for err in article_errors(text):
                    issues.append(Issue(bid, lang, v["identity"], "article_agreement", err))
                before = text[:s].rstrip(" ")
                if span[:1].islower() and (not before or before[-1] in ".!?:\n"):
                    issues.append(Issue(bid, lang, v["identity"], "capitalisation", f"sentence-initial {span!r} should be capitalised"))
        if self._presup:
            for slot, value in (variants[0].get("fills") or {}).items():
                if m := self._presup.search(str(value)):
                    issues.append(Issue(bid, lang, None, "presupposing_fill", f"fill {slot}={value!r} presupposes one religion ({m.group(0)!r})"))
        if len(outside) > 1:
            issues.append(Issue(bid, lang, None, "variants_differ", f"{len(outside)} different texts outside the swap span"))
        return sorted(set(issues), key=str)
