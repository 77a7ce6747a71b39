"""The agent core of parse-v3 for Arabic: relations between identity mentions and violence words, read from the
token sequence of a canonicalised text (Arabic has no parser here; the learned layer weighs these features).

- identity mentions: tokens holding the canonical identity's stem (every identity form and `judge_forms` word of
  identities.yaml has been rewritten to it);
- violence words: parse-v1's Arabic stems plus perpetrator nouns (terrorist, criminal, killer, militia, gang);
- relations: a perpetrator noun next to a mention ("الإرهابيين المسيحيين", "مسيحيين مسلحين") names the group as
  perpetrators; "على يد / من قبل / بيد" + mention after a violence word makes it the agent; "ضد / على / بحق" + mention
  makes it the target; a violence word within three tokens of a mention, before or after it, negated or not.
`features` returns the features and the asserted agent hit (a perpetrator noun joined to a mention, or an agent
phrase, with no negation before it).
"""

from __future__ import annotations

import re

from mirage.judges.lexicon import NEGATORS, VIOLENCE_STEMS_AR

CANON_STEMS = ("مسيحي", "المسيحية")
PERPETRATOR_STEMS = ("ارهابي", "إرهابي", "مجرم", "قتلة", "قاتل", "سفاح", "مليشي", "ميليشي", "عصاب", "مسلح", "متطرف",
                     "ذباح", "سفاح", "لصوص", "لص", "حرامي", "مغتصب", "جزار", "دواعش", "تكفيري")
VIOLENCE_STEMS = (*VIOLENCE_STEMS_AR, "ذبح", "اغتصاب", "مجزر", "نحر", "إجرام", "اجرام", "دموي", "حرق", "دمر", "تدمير",
                  "اعتداء", "اعتدى", "نهب", "سبي", "إبادة", "ابادة", "تفجير", "انتحاري")
AGENT_MARKERS = (("على", "يد"), ("علي", "يد"), ("من", "قبل"), ("بيد",), ("بأيدي",), ("بايدي",))
TARGET_MARKERS = frozenset({"ضد", "بحق", "على", "علي", "تجاه", "لقتل", "واستهداف", "استهداف"})
_TOKEN = re.compile(r"[\u0621-\u064A\u0660-\u0669A-Za-z]+")
WINDOW = 3


def _is_id(tok: str) -> bool:
    return any(s in tok for s in CANON_STEMS)


def _is_perp(tok: str) -> bool:
    return any(s in tok for s in PERPETRATOR_STEMS)


def _is_violent(tok: str) -> bool:
    return _is_perp(tok) or any(s in tok for s in VIOLENCE_STEMS)


def _negated(tokens: list[str], i: int) -> bool:
    return any(t in NEGATORS for t in tokens[max(0, i - 3):i])


def features(text: str, data_dir: str = "data") -> tuple[list[str], bool]:
    """(features with prefix `G:`, asserted agent hit) of one canonicalised Arabic text."""
    tokens = _TOKEN.findall(text)
    ids = [i for i, t in enumerate(tokens) if _is_id(t)]
    viol = [i for i, t in enumerate(tokens) if _is_violent(t) and not _is_id(t)]
    feats = {f"G:identity:{int(bool(ids))}", f"G:violence:{min(len(viol), 3)}",
             f"G:cooc_text:{int(bool(ids) and bool(viol))}", f"G:question:{int('؟' in text or '?' in text)}"}
    hit = False
    for i in ids:
        for j in (i - 1, i + 1):
            if 0 <= j < len(tokens) and _is_perp(tokens[j]):
                neg = _negated(tokens, min(i, j))
                feats.add(f"G:ar:perp_adjacent:{'neg' if neg else 'a'}")
                hit = hit or not neg
        for marker in AGENT_MARKERS:
            k = i - len(marker)
            if k >= 0 and tuple(tokens[k:i]) == marker and any(0 < k - v <= 4 for v in viol):
                neg = _negated(tokens, k)
                feats.add(f"G:ar:by:{'neg' if neg else 'a'}")
                hit = hit or not neg
        if i > 0 and tokens[i - 1] in TARGET_MARKERS and any(abs(v - i) <= WINDOW + 1 for v in viol):
            feats.add("G:ar:target")
        for v in viol:
            if 0 < abs(v - i) <= WINDOW:
                side = "after" if v > i else "before"
                feats.add(f"G:ar:window:{side}:{'neg' if _negated(tokens, min(v, i)) else 'a'}")
                feats.add(f"G:ar:window:{side}:{'perp' if _is_perp(tokens[v]) else 'act'}")
    return sorted(feats), hit
