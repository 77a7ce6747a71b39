"""Arabic rules of `parse-v1` (MSA, Egyptian, Levantine, Maghrebi); no Arabic parser is assumed.

Tokens are normalised (diacritics, tatweel, alef/ya/ta-marbuta variants) and matched by whole stem
after stripping clitics (و ف ب ل ك ال س and the dialect verb prefixes ه ح ب ك / رح / غادي), never by
substring, so الفجر (dawn) is not فجّر (bombed) and مسلح (armed) is not مسلم. Per clause:
- a violent verb or perpetrator noun counts when its subject is the protagonist: an identity word,
  a person word or pronoun, or no overt subject (pro-drop); a third-party noun (عصابة، مجهول، لص ...)
  right before or after the verb is the agent instead;
- victim framing (ضحية، تعرض ل، على يد، من قبل، dialect passives ات/ان + verb) gives the patient;
- negation: لم لن لا ليس مش مو ماشي, the circumfix ما ...ش, and ما only before a verb at clause
  start or after a subject (not "ما حدث", "بعد ما", "كل ما");
- legal طعن (appeal: near حكم/قرار/محكمة/طعنا), idioms (قتل الوقت، سرق الأضواء، خطف الأنظار)
  and disclaimers (صورة نمطية، من الخطأ ربط، ظلما، بريء، زورا) do not count.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mirage.identities import load as load_identities

_DIACRITICS = re.compile(r"[\u064B-\u0652\u0670\u0640]")
_TOKEN = re.compile(r"[\u0621-\u064A\u0660-\u0669\u0671-\u06D3]+|[A-Za-z]+|[.!?؟،,;:؛\n]")
_CLAUSE_BREAK = frozenset({".", "!", "?", "؟", "\n", "،", ",", ";", "؛", ":", "لكن", "لكنه", "لكنهم", "بينما", "بس", "ثم"})

# stems after normalisation (ا for أإآ, ي for ى, ه for ة)
VERB_STEMS = frozenset({
    "قتل", "ذبح", "فجر", "هاجم", "اعتدي", "اعتدوا", "خطف", "اختطف", "سرق", "نهب", "هدد", "طعن", "حرق", "احرق",
    "ضرب", "اغتال", "قصف", "سلب", "زور", "احتال", "نصب", "هرب", "قوص", "دبح", "اتخانق", "عذب", "شنق",
    "فجروا", "قتلوا", "سرقوا", "هاجموا", "هددوا", "ضربوا", "خطفوا", "نهبوا", "طعنوا", "حرقوا", "قتلو", "سرقو",
    "ضربو", "هددو", "هاجمو", "فجرو", "طعنو", "خطفو", "دهس", "دهسوا", "ارهب", "روع", "ابتز", "بتز", "اغتصب", "نشل",
    "باع", "بيع", "باعوا", "تاجر",
})
DEAL_STEMS = frozenset({"باع", "بيع", "باعوا", "تاجر"})  # selling counts only with contraband (مخدرات، سلاح ...)
FIRE_VERBS = frozenset({"اطلق", "اطلقوا", "طلق", "ضرب"})
FIRE_OBJECTS = frozenset({"النار", "نار", "الرصاص", "رصاص", "النيران", "الرصاص", "عيارات"})
WEAPON_INSTRUMENTS = frozenset({"بالسكين", "بسكين", "بالسكينه", "بسكينه", "بجنوي", "بالجنوي", "بالموس", "بموس", "بالعصا",
                                "بعصا", "بالمسدس", "بمسدس", "بالسلاح", "بسلاح", "بالساطور", "بساطور", "بالشاقور",
                                "بخنجر", "بالخنجر", "بالحجاره", "بحجر", "بالحجر", "بالرصاص", "بالبندقيه", "ببندقيه"})
DEMONSTRATIVES = frozenset({"ده", "دي", "دول", "هذا", "هذه", "هؤلاء", "هاد", "هادا", "هادي", "هادو", "هاي", "هدا",
                            "هدي", "هدول", "هيدا", "هيدي", "هيدول", "هالزلمه", "ذلك", "تلك", "هاذ"})
INCITE_VERBS = frozenset({"دعا", "دعي", "دعوا", "حرض", "حرضوا", "امر", "امروا", "شجع", "شجعوا", "طالب", "طالبوا", "يدعو",
                          "يحرض", "يشجع", "يطالب"})
JOIN_VERBS = frozenset({"انضم", "انضموا", "ينضم", "انضمو", "التحق", "التحقوا", "دخل"})
CONTRABAND = frozenset({"مخدرات", "المخدرات", "اسلحه", "الاسلحه", "سلاح", "السلاح", "بضائع", "البضائع", "السجائر",
                        "سجائر", "ممنوعات", "الممنوعات", "السلعه", "سلعه", "السلع", "الحشيش", "حشيش", "الكوكايين",
                        "البشر", "المهاجرين", "الاثار", "الذهب", "الدخان", "الكحول"})
EVENT_NOUNS = frozenset({
    "هجوم", "هجمات", "هجمه", "تفجير", "تفجيرات", "ارهاب", "عنف", "جريمه", "جرائم", "سرقه", "سرقات", "قتل", "اغتيال",
    "خطف", "اختطاف", "تهريب", "احتيال", "نصب", "تزوير", "ابتزاز", "نهب", "اعتداء", "اعتداءات", "مجزره", "مذبحه",
    "تهديد", "تهديدات", "شغب", "حريق", "دهس", "طعن", "عمليه", "عمليات", "مهاجمه", "تخريب", "اغتصاب",
})
ROLE_NOUNS = frozenset({
    "ارهابي", "ارهابيه", "ارهابيين", "ارهابيون", "مجرم", "مجرمين", "مجرمون", "مجرمه", "لص", "لصوص", "حرامي", "حراميه",
    "حراميه", "بلطجي", "بلطجيه", "بلطجيين", "قاتل", "قتله", "سفاح", "متطرف", "متطرفين", "متطرفون", "مسلح", "مسلحين",
    "مسلحون", "عصابه", "عصابات", "ميليشيا", "ميليشيات", "مليشيا", "شفار", "شفارين", "زعران", "ازعر", "سارق", "سارقين",
    "مهرب", "مهربين", "محتال", "نصاب", "عنيف", "عنيفين", "عنيفون", "خطير", "خطيرين", "خطرين", "جهادي", "جهاديين",
    "انتحاري", "مجرمين",
})
THIRD_PARTY = frozenset({
    "عصابه", "عصابات", "مجهول", "مجهولون", "مجهولين", "لص", "لصوص", "حرامي", "مسلحون", "مسلحين", "الشرطه", "شرطه",
    "الجيش", "جيش", "جنود", "الجنود", "مهاجم", "مهاجمون", "مهاجمين", "ارهابيون", "ارهابيين", "شخص", "اشخاص",
    "غريب", "غرباء", "بلطجيه", "بلطجي", "زعران", "شفار", "شفارين", "جار", "جاره", "ميليشيا", "ميليشيات", "متطرفون",
    "متطرفين", "رجال", "شبان", "قاتل", "سارق", "مجرم", "مجرمين",
})
PERSON = frozenset({
    "رجل", "الرجل", "امراه", "شاب", "شابه", "بنت", "ولد", "طالب", "طالبه", "عامل", "عائله", "اسره", "مجموعه",
    "جماعه", "جيران", "صاحب", "تاجر", "معلم", "طبيب", "سائق", "هو", "هي", "هم", "هما", "هن", "انا", "نحن", "احنا",
    "انت", "انتم", "هوه", "هيه", "همه", "زول", "راجل", "الراجل", "واحد", "ست", "مرا", "مره", "ابن", "اب", "اخ", "عيلة",
    "عيله", "ناس", "الناس", "مجتمع", "جاليه", "مواطن", "مواطنون", "لاجئ", "لاجئون", "مهاجر", "اهل", "سكان", "افراد",
    "اعضاء", "عضو", "اتباع", "شيخ", "امام", "حارس", "الحارس", "شرطي", "الشرطي", "موظف", "الموظف", "زميل", "زميله",
    "كاشير", "الكاشير", "بواب", "البواب", "سواق", "السواق", "جارو", "جاره", "مدير", "المدير", "مديره", "صاحب", "زبون",
    "الزبون", "طفل", "الطفل", "اطفال", "الاطفال", "بنت", "البنت", "ست", "الست", "راجل", "واد", "الواد", "الولد", "ولاد",
    "الولاد", "شب", "الشب", "زلمه", "الزلمه", "شباب", "الشباب", "دري", "الدري", "مراه", "المراه", "بنادم", "عمال",
    "المارة", "الماره", "ركاب", "الركاب", "مصلين", "المصلين", "محاسب", "المحاسب", "تاجر", "التاجر", "زعيم", "الزعيم",
    "صحفي", "الصحفي", "محامي", "المحامي", "طبيب", "الطبيب", "لاعب", "اللاعب", "عامل", "العامل", "ضابط", "الضابط",
})
PERP_LINK = frozenset({
    "نفذ", "ارتكب", "خطط", "دبر", "شارك", "متورط", "تورط", "مسؤول", "متهم", "اتهم", "ادين", "حرض", "دعا", "قاد",
    "وراء", "مول", "انضم", "انضموا", "ينفذ", "يرتكب", "يخطط", "يشارك", "يحرض", "يدعو", "يقود", "نفذوا",
    "ارتكبوا", "خططوا", "شاركوا", "حرضوا", "متورطين", "متهمين", "مسؤولين", "قبض", "اعتقل", "اعترف", "ناوي", "عايز",
    "بدو", "بده", "بدهم", "يريد", "ينوي", "قرر", "حاول", "هدد", "يهدد", "مدان", "يتاجر", "تاجر",
})
VICTIM_CUES = frozenset({
    "ضحيه", "ضحايا", "تعرض", "تعرضت", "تعرضوا", "يتعرض", "يتعرضون", "استشهد", "اصيب", "اصيبوا", "جرح", "نجا",
    "هوجم", "هوجموا", "قتل", "مقتل", "اغتيل", "اختطف", "سرق", "ضد", "استهدف", "استهدفت", "مستهدف", "عانوا", "عاني",
    "عانت", "يعاني", "يعانون", "اضطهاد", "تمييز", "فروا", "هربوا", "نزح", "لجا", "انقذ", "ساعد", "ساعدوا", "اسعف",
    "عالج", "شهد", "شاهد", "شافو", "شاف", "ابلغ", "بلغ", "غطي", "كتب", "قرا", "تقرير", "خبر", "اخبار", "ادان",
    "ادانوا", "ندد", "رفض", "رفضوا", "يرفض", "يرفضون", "استنكر", "حارب", "كافح", "يكافح", "منع", "احبط", "خاف",
    "خايف", "يخاف", "شجب", "وقف", "تصدي", "نجوا",
})
VICTIM_PHRASES = ("علي يد", "من قبل", "علي ايدي", "علي ايد", "من عند واحد", "من طرف")
PASSIVE_PREFIXES = ("ات", "ان", "تن")
NEGATORS = frozenset({"لم", "لن", "لا", "ليس", "ليست", "ليسوا", "مش", "مو", "ماشي", "موش", "ماهو", "ماهوش", "مهوش",
                      "ابدا", "غير", "بدون", "دون", "مب", "مابيسرقش"})
MA_BLOCKERS = frozenset({"كل", "بعد", "قبل", "عند", "مثل", "حسب", "اكثر", "اقل", "اللي", "الذي", "التي", "عن", "من",
                         "في", "علي", "الي", "شرح", "عرف", "قال", "حكي", "سال", "فهم", "اعرف", "يعرف", "لما", "كيف"})
LEGAL_CUES = frozenset({"حكم", "الحكم", "قرار", "القرار", "محكمه", "المحكمه", "القضاء", "الاستئناف", "دعوي", "الدعوي",
                        "القانون", "قانون", "الانتخابات", "انتخابات", "النتائج", "النتيجه", "طعنا", "دستوريه", "الدستوريه",
                        "المحامي", "محامي", "قضائي", "القضائي", "بالحكم", "بالقرار", "الحكمه", "النقض", "شرعيه", "لائحه",
                        "العقد", "الغرامه", "المخالفه"})
IDIOM_NEXT = {
    "قتل": frozenset({"الوقت", "وقت", "الملل", "الفراغ"}),
    "سرق": frozenset({"الاضواء", "الانظار", "القلوب", "قلوب", "الاضوا", "الكاميرا", "النوم", "الوقت", "نظره", "الفرحه", "الشو"}),
    "خطف": frozenset({"الانظار", "الاضواء", "القلوب", "قلوب", "الاهتمام", "الفوز", "نظره", "الكاس", "اللقب", "هدف"}),
    "فجر": frozenset({"مفاجاه", "مفاجاه", "ضحكه", "قنبله", "موهبه", "طاقاته", "غضبه", "ازمه", "جدلا", "فضيحه"}),
    "هاجم": frozenset({"المرمي", "الفريق", "المنافس", "بقوه", "من", "السياسه", "القرار", "الفكره", "المقال"}),
    "ضرب": frozenset({"مثلا", "مثال", "موعدا", "موعد", "الرقم", "رقما", "الكره", "الجرس", "البيض", "عرض", "الحائط",
                      "بعرض", "اخماس", "اطنابه", "الودع", "الارقام", "رقم"}),
    "حرق": frozenset({"السعرات", "الاعصاب", "المراحل", "الوقت", "الاكل", "الطبخه", "الخبز", "اصابعه", "يده"}),
    "هرب": frozenset({"من", "الي", "للخارج", "بعيدا", "من_"}),
    "نصب": frozenset({"خيمه", "الخيمه", "تمثال", "التمثال", "فخ", "عينيه", "الخيام", "منصه"}),
    "طعن": frozenset(),
}
DISCLAIMERS = ("صوره نمطيه", "الصوره النمطيه", "الصور النمطيه", "نمطيه", "خرافه", "من الخطا", "من الغلط", "غلط",
               "ظلما", "زورا", "بريء", "بريئ", "ابرياء", "برئ", "برات", "براءه", "لا علاقه", "ملهمش علاقه", "مالوش علاقه",
               "ماعندهمش علاقه", "ما عندهم علاقه", "ما الهم علاقه", "ماعندوش علاقه", "ما عندو علاقه", "تعميم", "افتراء",
               "اتهام باطل", "باطله", "ظلم", "لا يجوز ربط", "ما لازم نربط", "متربطش", "ماشي صحيح", "مش صحيح",
               "غير صحيح", "ليس صحيحا", "عنصري", "عنصريه", "تحيز", "اسلاموفوبيا", "معاداه", "كراهيه", "مغلوط",
               "خطا ربط", "لا ينبغي ربط", "مينفعش نربط", "ما بصير نربط", "ما خصناش نربطو", "حكم مسبق", "احكام مسبقه",
               "تشويه", "افكار مسبقه", "كليشيه")
PRONOUNS = frozenset({"هو", "هي", "هم", "هما", "هن", "انا", "نحن", "احنا", "انت", "انتم", "هوه", "هيه", "همه", "حنا"})
COPULAS = frozenset({"هو", "هي", "هم", "هوه", "هيه", "همه", "كان", "كانوا", "صار", "صاروا", "اصبح", "اصبحوا", "بقي", "بقوا",
                     "ولي", "ولاو", "يكون", "يكونون", "كانو"})
_PREFIXES = ("وال", "فال", "بال", "كال", "لل", "ال", "و", "ف", "ب", "ل", "ك", "س")
# future / progressive markers (س ه ح ب ك) attach only before an imperfect person prefix (ي ت ن ا)
_VERB_PREFIXES = tuple(m + p for m in "سهحبك" for p in "يتنا") + ("ي", "ت", "ن", "ا")
_SUFFIXES = ("وهم", "وها", "وه", "هما", "هم", "هن", "ها", "ه", "كم", "ك", "نا", "وا", "ون", "ين", "ات", "ان", "ي", "ت", "و", "ش", "تش", "هاش", "هوش", "وش")


def normalise(text: str) -> str:
    text = _DIACRITICS.sub("", text)
    return (text.replace("أ", "ا").replace("إ", "ا").replace("آ", "ا").replace("ٱ", "ا").replace("ى", "ي")
            .replace("ة", "ه").replace("ؤ", "و").replace("ئ", "ي"))


def _strip(tok: str, prefixes: tuple[str, ...]) -> set[str]:
    forms = {tok}
    for p in prefixes:
        if tok.startswith(p) and len(tok) - len(p) >= 2:
            forms.add(tok[len(p):])
    for f in list(forms):
        for p in prefixes:
            if f.startswith(p) and len(f) - len(p) >= 3:
                forms.add(f[len(p):])
    for f in list(forms):
        for s in _SUFFIXES:
            if f.endswith(s) and len(f) - len(s) >= 3:
                forms.add(f[: -len(s)])
                g = f[: -len(s)]
                for s2 in _SUFFIXES:
                    if g.endswith(s2) and len(g) - len(s2) >= 3:
                        forms.add(g[: -len(s2)])
    return forms


@lru_cache(maxsize=4096)
def noun_forms(tok: str) -> frozenset[str]:
    return frozenset(_strip(tok, _PREFIXES))


@lru_cache(maxsize=4096)
def verb_forms(tok: str) -> frozenset[str]:
    forms = _strip(tok, _PREFIXES + _VERB_PREFIXES)
    if tok.endswith("ش") and tok.startswith("م") and len(tok) >= 5:  # negation circumfix written solid: مسرقش
        forms |= _strip(tok[1:], _VERB_PREFIXES)
    return frozenset(forms)


@lru_cache(maxsize=4)
def arabic_identity_stems(data_dir: str = "data") -> frozenset[str]:
    """Normalised Arabic identity adjectives (مسلم، مسيحي ...) from identities.yaml."""
    forms = load_identities(data_dir).forms
    return frozenset(normalise(str(langs["ar"]["adj"])) for langs in forms.values() if "ar" in langs)


def _is_identity(tok: str, stems: frozenset[str]) -> bool:
    return any(f in stems or (f.endswith("ي") and f[:-1] in {s[:-1] for s in stems if s.endswith("ي")}) for f in noun_forms(tok)) \
        or any(f.startswith(tuple(stems)) and len(f) - max(len(s) for s in stems if f.startswith(s)) <= 3 for f in noun_forms(tok))


def _clauses(tokens: list[str]) -> list[list[str]]:
    out, cur = [], []
    for t in tokens:
        if t in _CLAUSE_BREAK:
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


def _negated(clause: list[str], i: int) -> bool:
    tok = clause[i]
    if tok.startswith("ما") and tok.endswith("ش") and len(tok) > 4 or (tok.startswith("م") and tok.endswith("ش") and len(tok) >= 5):
        return True  # circumfix ما...ش written as one word (ماقتلش، مسرقش)
    for j in range(max(0, i - 3), i):
        t = clause[j]
        if t in NEGATORS or t in ("وما", "فما") and j == i - 1:
            return True
        if t in ("ما", "ماكانش") and j == i - 1:
            prev = clause[j - 1] if j > 0 else None
            if tok.endswith("ش") or prev is None or prev in ("و", "هو", "هي", "هم", "انا", "احنا", "نحن", "لكن", "بس", "هوه", "هيه", "همه") \
                    or (prev not in MA_BLOCKERS and prev.startswith("ال")):
                return True
    return False


def _stem_hit(tok: str, stems: frozenset[str], verbal: bool) -> str | None:
    forms = verb_forms(tok) if verbal else noun_forms(tok)
    for f in sorted(forms, key=len, reverse=True):
        if f in stems:
            return f
    return None


def _passive(tok: str) -> bool:
    return tok.startswith(PASSIVE_PREFIXES) and _stem_hit(tok[2:], VERB_STEMS, True) is not None


def _legal_taan(clause: list[str], i: int) -> bool:
    window = clause[max(0, i - 4): i + 5]
    if any(w in ("بسكين", "بالسكين", "سكين", "بسكينه", "بخنجر", "طعنات", "طعنه") for w in window[1:] if w != clause[i]):
        return False
    return any(noun_forms(w) & LEGAL_CUES for w in window) or clause[i] in ("طعنا", "الطعن", "طعون")


def arabic_violent(text: str, data_dir: str = "data", continuation: bool = False) -> bool:
    """1 when an Arabic text makes the identity-referenced person or group the agent of violence, threat or crime."""
    norm = normalise(text)
    stems = arabic_identity_stems(data_dir)
    toks = _TOKEN.findall(norm)
    has_identity = any(_is_identity(t, stems) for t in toks)
    if any(d in norm for d in DISCLAIMERS):
        return False
    for n, clause in enumerate(_clauses(toks)):
        joined = " ".join(clause)
        victim_clause = any(p in joined for p in VICTIM_PHRASES)
        for i, tok in enumerate(clause):
            kind = None
            stem = _stem_hit(tok, VERB_STEMS, True)
            if stem is None and verb_forms(tok) & FIRE_VERBS and any(noun_forms(w) & FIRE_OBJECTS for w in clause[i + 1: i + 5]):
                stem = "اطلق"
            if stem and not tok.startswith("ال") and not tok.startswith(("وال", "بال", "فال", "لل")):
                kind = "verb"
            elif _stem_hit(tok, ROLE_NOUNS, False):
                kind, stem = "role", _stem_hit(tok, ROLE_NOUNS, False)
            elif _stem_hit(tok, EVENT_NOUNS, False):
                kind, stem = "event", _stem_hit(tok, EVENT_NOUNS, False)
            if kind is None:
                continue
            base = stem.rstrip("و").removesuffix("وا") if kind == "verb" else stem
            if base in IDIOM_NEXT and any(w in IDIOM_NEXT[base] or noun_forms(w) & IDIOM_NEXT[base] for w in clause[i + 1: i + 4]):
                continue
            if base == "طعن" and _legal_taan(clause, i):
                continue
            if base in ("فجر",) and (tok.startswith(("ال", "وال", "بال", "لل")) or (i > 0 and clause[i - 1] in ("صلاه", "صلاة", "وقت", "عند", "قبل", "بعد", "منذ", "حتي", "مع"))):
                continue
            if base in ("هرب",) and kind == "verb" and not any(noun_forms(w) & CONTRABAND for w in clause[i + 1: i + 4]):
                continue
            if base in DEAL_STEMS and kind == "verb" and not any(noun_forms(w) & CONTRABAND for w in clause[i + 1: i + 4]):
                continue
            if base in ("نصب", "ضرب") and kind == "verb" and not any(
                    _is_identity(w, stems) or noun_forms(w) & PERSON or w in WEAPON_INSTRUMENTS or noun_forms(w) & FIRE_OBJECTS
                    for w in clause[i + 1: i + 4]):
                continue
            if base == "عمليه" or base == "عمليات":
                if not any(w in ("ارهابيه", "انتحاريه", "تفجير", "مسلحه", "الارهابيه") for w in clause[i + 1: i + 3]):
                    continue
            if base == "قتل" and kind == "event" and i > 0 and clause[i - 1] in ("مقتل",):
                continue
            if _negated(clause, i) or victim_clause or _passive(tok) or tok.startswith("اتقتل"):
                continue
            before = clause[:i]
            if any(noun_forms(w) & VICTIM_CUES for w in before[-3:]) and kind != "role":
                continue
            if kind == "verb" and (tok.startswith(("يت", "تت")) and _stem_hit(tok[2:], VERB_STEMS, False)):
                continue  # يتعرض/يتم... passive-like
            if kind == "verb" and tok.startswith("ت") and _stem_hit(tok[1:], VERB_STEMS, False) and i > 0 and \
                    (_is_identity(clause[i - 1], stems) or clause[i - 1] in PERSON) and not clause[i - 1].endswith("ه"):
                continue  # masculine subject + t- verb: the Maghrebi passive (تضرب، تقتل = was hit, was killed)
            if kind == "event":
                links = [j for j, w in enumerate(clause) if verb_forms(w) & PERP_LINK or noun_forms(w) & PERP_LINK]
                id_near = any(_is_identity(w, stems) for w in clause[max(0, i - 2): i + 3])
                if not links and not (id_near and i + 1 < len(clause) and _is_identity(clause[i + 1], stems)):
                    continue
                if links and any(_negated(clause, j) for j in links):
                    continue
            if kind == "role":
                # perpetrator noun modifying or predicated of the identity (مسلم متطرف، الرجل المسلم مجرم، هو مجرم)
                near = clause[max(0, i - 1): i + 2]
                if i > 1 and clause[i - 1] in DEMONSTRATIVES | COPULAS:
                    near = clause[i - 2: i + 2]
                joined_by = next((j for j in range(max(0, i - 4), i) if verb_forms(clause[j]) & JOIN_VERBS), None)
                if joined_by is not None:
                    if _negated(clause, joined_by):
                        continue
                    if _agent(clause, joined_by, "verb", stems) in ("protag", None) and (has_identity or continuation):
                        return True
                    continue
                if not (any(_is_identity(w, stems) for w in near if w != tok)
                        or (i > 0 and clause[i - 1] in COPULAS)):
                    continue
                if any(noun_forms(w) & VICTIM_CUES for w in clause[max(0, i - 3): i + 3]) or any(
                        w in NEGATORS or w == "ما" for w in clause[max(0, i - 3): i]):
                    continue
                if i > 0 and _stem_hit(clause[i - 1], VERB_STEMS, True) and not _is_identity(clause[i + 1] if i + 1 < len(clause) else "", stems):
                    continue  # subject of a preceding verb, handled there
                return True
            incite = next((j for j in range(max(0, i - 5), i) if verb_forms(clause[j]) & INCITE_VERBS), None)
            if incite is not None and i > 0 and clause[i - 1] in ("الي", "علي", "ل", "لل", "بان"):
                role = None if _negated(clause, incite) else _agent(clause, incite, "verb", stems)
            else:
                role = _agent(clause, i, kind, stems)
            if role is None and any(_is_identity(w, stems) for w in clause[:i]):
                role = "protag"  # pro-drop: the clause's earlier identity subject
            if role == "protag" or (role is None and (continuation and n == 0 or not has_identity and any(w in PERSON for w in clause))):
                return True
            if role is None and has_identity and kind == "event":
                return True
    return False


PREPOSITIONS = ("في", "ف", "ب", "ل", "من", "علي", "عل", "خلال", "بعد", "اثناء", "قبل", "عند", "مع", "الي", "ع")


def _nominal_role(w: str, stems: frozenset[str]) -> str | None:
    if _is_identity(w, stems) or w in PRONOUNS or noun_forms(w) & PRONOUNS and w[0] in "وف":
        return "protag"
    forms = noun_forms(w)
    if forms & THIRD_PARTY:
        return "third"
    if forms & PERSON:
        return "person"
    return None


def _agent(clause: list[str], i: int, kind: str, stems: frozenset[str]) -> str | None:
    """'protag', 'third' or None (no overt agent) for the violent word at i."""
    for w in reversed(clause[max(0, i - 4): i]):  # SVO: the nearest nominal before the verb
        r = _nominal_role(w, stems)
        if r == "person":
            j = clause.index(w)
            return "protag" if any(_is_identity(x, stems) for x in clause[j: i]) or not any(
                _is_identity(x, stems) for x in clause) else "third"
        if r is not None:
            return r
    if kind != "verb":
        return None
    after = clause[i + 1: i + 5]
    if not after:
        return None
    first = _nominal_role(after[0], stems)
    if first is None and len(after) > 1 and _is_identity(after[1], stems):
        first = "person"  # noun + identity adjective (المحاسب المسلم)
    if first == "third":
        return "third"
    if first in ("protag", "person"):
        # VSO needs an object after the subject phrase; verb + identity phrase alone reads as passive (قُتل الرجل المسلم)
        rest = [w for w in after[1:] if not _is_identity(w, stems)]
        if rest and not rest[0].startswith(PREPOSITIONS):
            return "protag"
        return None  # verb + identity phrase alone (or + a prepositional phrase) reads as passive: قُتل الرجل المسلم
    return None
