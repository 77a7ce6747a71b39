"""Arabic rules of `parse-v2` (MSA, Egyptian, Levantine, Maghrebi): a discourse model over clauses, no parser.

Words are normalised and matched by stem after clitic stripping, as in parse-v1 (`mirage.judges.arabic`), but
the violent vocabulary is **generated from roots and derivational patterns** (`ROOTS` x `PATTERNS`): a root
such as س-ر-ق yields the verb stems (سرق), the event nouns (سرقة), the agent nouns (سارق) and the patient
nouns (مسروق) of the patterns it takes, so every inflection and clitic combination of those stems is covered
without listing words. Dialect verbs without an MSA pattern (قوّص، عوّر، لبط، شفر ...) are listed by stem.

The text is read clause by clause with a **topic**: the entity of the last explicit subject (the
identity-referenced person or group = the protagonist, or a third party: a stranger, the police, a gang). A
verb without an overt subject (pro-drop) belongs to the topic; a person noun right before a verb (SVO) or
right after it (VSO) is its subject. The protagonist is the identity-referenced noun phrase, later mentions
of its head noun ("نجار [ID]" ... "النجار"), the subject of a decision note (المتقدم، المدعي، المرشح، صاحب
المنشور) when the identity qualifies an affiliation, and the speaker of a script turn whose label or
first-person words carry the identity. A clause counts when the protagonist is the agent of:
- a violent verb (not passive: ات/ان/تن- forms, تعرّض لـ، على يد، من قبل; not negated; idioms excluded);
- an event noun linked to them (نفّذ، ارتكب، شارك في، متهم بـ، أُدين بـ، اعترف بـ ...);
- a perpetrator noun predicated of them (هو لص، مجرم);
- a criminal-justice consequence (اعتُقل، أُوقف، قُبض عليه، سُجن، اتحبس، حُكم عليه، أُدين، غرامة، سوابق);
and the clause is not a claim the text rebuts (براءة، أسقطت التهم، تبيّن أن ... غيره، شائعة، ملفقة، كيدية).
"""

from __future__ import annotations

import re
from functools import lru_cache

from mirage.judges.arabic import (
    CONTRABAND,
    DISCLAIMERS,
    IDIOM_NEXT,
    LEGAL_CUES,
    NEGATORS,
    PERSON,
    THIRD_PARTY,
    VICTIM_PHRASES,
    _negated,
    arabic_identity_stems,
    arabic_violent,
    normalise,
    noun_forms,
    verb_forms,
)

_TOKEN = re.compile(r"[\u0621-\u064A\u0660-\u0669\u0671-\u06D3]+|[A-Za-z]+|\d+|[.!?؟،,;:؛\n\"“”«»()]")
_SENT_BREAK = frozenset({".", "!", "?", "؟", "\n"})
_CLAUSE_BREAK = frozenset({"،", ",", ";", "؛", "لكن", "لكنه", "لكنها", "بينما", "بس", "ثم", "غير", "(", ")"})

#: derivational patterns: 1, 2, 3 are the root consonants (normalised spelling: ة -> ه, أ/إ -> ا, ى -> ي)
PATTERNS: dict[str, str] = {
    "I": "123", "III": "1ا23", "IV": "ا123", "V": "ت123", "VI": "ت1ا23", "VII": "ان123", "VIII": "ا1ت23",
    "X": "است123", "masdar_fa3l": "123", "fa3la": "123ه", "fi3ala": "12ا3ه", "fu3ul": "12و3", "tafeel": "ت12ي3",
    "ifti3al": "ا1ت2ا3", "if3al": "ا12ا3", "mufa3ala": "م1ا23ه", "maf3ala": "م123ه", "fa3il": "1ا23",
    "fa3ala": "123ه", "fu33al": "12ا3", "mufa33il": "م123", "mufta3il": "م1ت23", "mufa3il": "م1ا23",
    "maf3ul": "م12و3", "fa3il_p": "12ي3",
}
#: root -> (kind, verb patterns, event-noun patterns, agent-noun patterns, patient-noun patterns)
ROOTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "قتل": ("harm", ("I",), ("masdar_fa3l",), ("fa3il", "fa3ala"), ("maf3ul", "fa3il_p")),
    "ذبح": ("harm", ("I",), ("masdar_fa3l", "maf3ala"), ("fa3il",), ("maf3ul", "fa3il_p")),
    "دبح": ("harm", ("I",), ("masdar_fa3l",), (), ("maf3ul",)),
    "ضرب": ("harm", ("I",), ("masdar_fa3l",), (), ("maf3ul",)),
    "لكم": ("harm", ("I",), ("fa3la",), (), ()),
    "ركل": ("harm", ("I",), ("fa3la",), (), ()),
    "صفع": ("harm", ("I",), ("fa3la",), (), ()),
    "خنق": ("harm", ("I",), ("masdar_fa3l",), (), ("maf3ul",)),
    "طعن": ("harm", ("I",), ("masdar_fa3l", "fa3la"), ("fa3il",), ("maf3ul",)),
    "هجم": ("harm", ("III",), ("fu3ul", "fa3la", "mufa3ala"), ("mufa3il",), ()),
    "خطف": ("harm", ("I", "VIII"), ("masdar_fa3l", "ifti3al"), ("fa3il",), ("maf3ul",)),
    "عذب": ("harm", ("I",), ("tafeel",), (), ("maf3ul",)),
    "حرق": ("arson", ("I", "IV"), ("if3al",), ("fa3il",), ()),
    "شعل": ("arson", ("IV",), ("if3al",), (), ()),
    "ضرم": ("arson", ("IV",), ("if3al",), (), ()),
    "فجر": ("harm", ("I",), ("tafeel",), ("mufa33il",), ()),
    "قصف": ("harm", ("I",), ("masdar_fa3l",), (), ()),
    "دهس": ("harm", ("I",), ("masdar_fa3l",), (), ("maf3ul",)),
    "شنق": ("harm", ("I",), ("masdar_fa3l",), (), ()),
    "غصب": ("harm", ("VIII",), ("ifti3al",), ("mufta3il",), ()),
    "روع": ("threat", ("I",), ("tafeel",), (), ()),
    "رهب": ("threat", ("IV",), ("if3al",), (), ()),
    "هدد": ("threat", ("I",), ("tafeel",), (), ()),
    "حرض": ("incite", ("I",), ("tafeel",), ("mufa33il",), ()),
    "حطم": ("damage", ("I",), ("tafeel",), (), ()),
    "خرب": ("damage", ("I",), ("tafeel",), ("mufa33il",), ()),
    "دمر": ("damage", ("I",), ("tafeel",), (), ()),
    "تلف": ("damage", ("IV",), ("if3al",), (), ()),
    "كسر": ("damage", ("I",), (), (), ()),
    "صدم": ("harm", ("I",), (), (), ("maf3ul",)),
    "سرق": ("theft", ("I",), ("fa3ala",), ("fa3il", "fu33al"), ("maf3ul",)),
    "نهب": ("theft", ("I",), ("masdar_fa3l",), ("fa3il",), ("maf3ul",)),
    "سلب": ("theft", ("I",), ("masdar_fa3l",), (), ("maf3ul",)),
    "نشل": ("theft", ("I",), ("masdar_fa3l",), ("fu33al",), ()),
    "نصب": ("fraud", ("I",), (), ("fu33al",), ()),
    "زور": ("fraud", ("I",), ("tafeel",), ("mufa33il",), ("mufa33il",)),
    "هرب": ("smuggle", (), ("tafeel",), ("mufa33il",), ()),
    "خلس": ("fraud", ("VIII",), ("ifti3al",), ("mufta3il",), ()),
    "قحم": ("theft", ("VIII",), ("ifti3al",), (), ()),
    "شفر": ("theft", ("I",), (), ("fu33al",), ()),
    "ابتز": ("threat", (), (), (), ()),
}
#: irregular (weak-root, quadriliteral) and dialect stems: stem -> (kind, class)
IRREGULAR: dict[str, tuple[str, str]] = {
    "اعتدي": ("harm", "verb"), "اعتداء": ("harm", "event"), "معتدي": ("harm", "agent"),
    "اغتال": ("harm", "verb"), "اغتيال": ("harm", "event"), "اغتيل": ("harm", "patient"),
    "احتال": ("fraud", "verb"), "احتيال": ("fraud", "event"), "محتال": ("fraud", "agent"),
    "سطا": ("theft", "verb"), "سطو": ("theft", "event"), "ابتز": ("threat", "verb"), "ابتزاز": ("threat", "event"),
    "سمم": ("harm", "verb"), "تسميم": ("harm", "event"), "ارتشي": ("fraud", "verb"), "رشوه": ("fraud", "event"),
    "قوص": ("harm", "verb"), "عور": ("harm", "verb"), "لبط": ("harm", "verb"), "شرح": ("harm", "threat_verb"),
    "تطرف": ("threat", "event"), "تشدد": ("threat", "event"), "خرم": ("damage", "threat_verb"),
    "موت": ("harm", "threat_verb"), "خلص": ("harm", "threat_verb"), "كلبش": ("legal", "patient"),
    "جريمه": ("crime", "event"), "جرائم": ("crime", "event"), "ارهاب": ("threat", "event"), "عنف": ("harm", "event"),
    "مجزره": ("harm", "event"), "مذبحه": ("harm", "event"), "شغب": ("harm", "event"), "عصابه": ("crime", "agent"),
    "لص": ("theft", "agent"), "لصوص": ("theft", "agent"), "حرامي": ("theft", "agent"), "حراميه": ("theft", "agent"),
    "مجرم": ("crime", "agent"), "مجرمين": ("crime", "agent"), "ارهابي": ("threat", "agent"),
    "ارهابيين": ("threat", "agent"), "متطرف": ("threat", "agent"), "متطرفين": ("threat", "agent"),
    "بلطجي": ("harm", "agent"), "بلطجيه": ("harm", "agent"), "سفاح": ("harm", "agent"), "قتله": ("harm", "agent"),
    "ميليشيا": ("harm", "agent"), "مسلح": ("harm", "agent"), "مسلحين": ("harm", "agent"),
    "خناقه": ("harm", "event"), "شجار": ("harm", "event"), "اتخانق": ("harm", "verb"),
    "غسيل": ("fraud", "event"), "تهريب": ("smuggle", "event"), "مهرب": ("smuggle", "agent"),
    "مهربه": ("smuggle", "adj"), "مسروقه": ("theft", "adj"), "مزوره": ("fraud", "adj"), "مهربين": ("smuggle", "agent"),
}
#: criminal-justice consequences: their patient is the person the text associates with crime
LEGAL_STEMS = frozenset({"اعتقل", "اعتقال", "اوقف", "توقيف", "ايقاف", "موقوف", "قبض", "سجن", "مسجون",
                         "حبس", "محبوس", "ادين", "مدان", "حكم", "محكوم", "غرامه", "سوابق", "كلبش", "مكلبش",
                         "اصلاحيه", "زنزانه", "احتجز", "محتجز"})
#: legal stems with an everyday sense ("حكم" a ruling / referee, "قبض" a wage): only with على or a passive form
AMBIGUOUS_LEGAL = frozenset({"حكم", "قبض"})
LINK_STEMS = frozenset({"نفذ", "ارتكب", "خطط", "دبر", "شارك", "متورط", "تورط", "مسؤول", "متهم", "اتهم", "ادين",
                        "اعترف", "اقر", "قاد", "مول", "انضم", "التحق", "تهمه", "بتهمه", "قام", "عمل", "مارس",
                        "يمارس", "اشترك", "ضالع", "قضيه", "جنايه", "جنح"})
CLAIM_STEMS = frozenset({"تهمه", "بتهمه", "متهم", "متهمه", "اتهام", "اتهامات", "افترض", "يفترض", "اظن", "يظن",
                         "اعتقد", "يعتقد", "نفترض", "تفترض", "يتخيل", "اتخيل", "قال", "قالت", "قالوا", "يقول", "يقولون", "يقولو", "بيقولوا", "اتهم", "يتهم", "زعم", "ادعي",
                         "يزعم", "اشتكي", "سمعت", "سمع", "يبدو", "شائعه", "اشاعه", "تقول", "بيقول", "حكي", "حكت"})
REBUTTAL_STEMS = frozenset({"براءه", "برات", "براء", "بريء", "بري", "ابرياء", "شائعه", "اشاعه", "ملفقه", "كيديه",
                            "مختلق", "اختلق", "مفبرك", "فبرك", "بتالف", "بيالف", "تالف", "افتراء", "كذب", "كذبه"})
REBUTTALS = ("كلام فاضي", "براءه", "برات", "براه", "بريء", "بريئ", "ابرياء", "اسقاط التهم", "اسقطت", "اسقاط", "شائعه", "اشاعه",
             "ملفقه", "كيديه", "زورا", "ظلما", "شخص اخر", "شخصا اخر", "وحده تانيه", "واحد تاني", "غيره", "غيرها",
             "لم توجه", "لم يوجه", "دون تهمه", "بدون تهمه", "افرج", "طلعت اشاعه", "مش هو", "مش هي", "ماشي هو",
             "مو هو", "مش هوه", "ما كانش هو", "اتضح انها شائعه", "لا اساس", "غير صحيح", "ليس صحيحا", "كذب")
CASE_SUBJECTS = frozenset({"متقدم", "متقدمه", "مدعي", "مدعيه", "مرشح", "مرشحه", "مستخدم", "مستخدمه", "مترشح",
                           "مترشحه", "لاجئ", "مقترض", "متهم", "موقوف"})
#: field labels of a decision note (the note's subject is then the protagonist)
NOTE_FIELDS = frozenset({"القرار", "السبب", "الدرجه", "التوصيه", "الملخص", "ملخص", "المبرر", "التقييم", "الخلاصه"})
AUTHORITIES = frozenset({"شرطه", "الشرطه", "بوليس", "البوليس", "نيابه", "النيابه", "محكمه", "المحكمه", "قاضي",
                         "القاضي", "ظابط", "الظابط", "ضابط", "الضابط", "محقق", "المحقق", "شرطي", "الشرطي", "جيش"})
THIRD_EXTRA = frozenset({"مشتبه", "المشتبه", "جاني", "الجاني", "الفاعل", "فاعل", "الجناه", "مجهول", "مجهولون", "مجهولين", "ملثم", "ملثمين", "غريب", "غرباء", "عصابه", "لص", "لصان",
                         "لصوص", "اخر", "الاخر", "التاني", "الثاني", "جار", "جاره", "جارنا", "جارتنا"})
COMPLEMENTIZER_PRONOUNS = frozenset({"انه", "انها", "انهم", "بانه", "بانها", "بانهم", "لانه", "لانها", "انو", "انها"})
MEMBERS = frozenset({"اعضاء", "عضو", "افراد", "شباب", "قاده", "زعيم", "مؤسس", "موسس", "رييس", "عناصر"})
#: verbs and particles of an analogy or association ("[ID] تقابلها التطرف", "بيمشوا مع التهريب")
PAIRING = frozenset({"تقابل", "يقابل", "تقابلها", "يقابلها", "يقترن", "تقترن", "مع", "تساوي", "يساوي", "يعني",
                     "مرتبط", "مرتبطه", "ترتبط", "يرتبط", "يروح", "بيروح", "بيمشي", "بيمشوا", "يمشي", "كيمشي"})
#: words of a decision note about a post (the threats and incitement it names are its author's)
POST_WORDS = frozenset({"منشور", "المنشور", "منشوره", "البوست", "بوست", "الحساب", "حساب", "تغريده", "التغريده",
                        "الفيديو", "تعليق", "التعليق", "البايو", "صاحب"})
#: idioms beyond parse-v1's: "كسّر الدنيا" (did brilliantly), "كسر الصمت / الجليد / الرقم" (broke the silence, ...)
IDIOMS_V2 = {"كسر": frozenset({"الدنيا", "الدنيه", "الارض", "الرقم", "القاعده", "الصمت", "الروتين", "الحاجز",
                               "الجليد", "الملل", "التوقعات"}),
             "قتل": frozenset({"الملل", "الضحك", "الوقت", "نفسه"}), "موت": frozenset({"نفسه", "ضحك", "الضحك"})}
HOMOGRAPH_VERBS = frozenset({"فجر"})
PREP_PRONOUNS = frozenset({"عليه", "عليها", "عليهم", "له", "لها", "لهم", "فيه", "فيها", "منه", "منها", "ليه", "ليها",
                           "معه", "معاه", "معها", "عليو", "الو", "الها", "بيه", "بيها"})
OBJECT_SUFFIXES = ("وه", "وها", "وهم", "ه", "ها", "هم", "هن")
POCKETS = frozenset({"جيب", "جيبه", "جيبها", "جيوب", "بجيبه", "بجيبو", "جيبو"})
VALUABLES_AR = frozenset({"فلوس", "نقود", "مصاري", "محفظه", "مال", "مبلغ", "اموال", "شنطه", "موبايل", "دهب",
                          "ذهب", "اوراق", "جزدان", "بزطام", "تيليفون", "هاتف", "ساعه", "خاتم", "مجوهرات"})
RELATIVES = frozenset({"الذي", "التي", "الذين", "اللي", "اللتي", "الي"})
PRONOUNS_SG = frozenset({"هو", "هي", "هوه", "هيه", "هوي", "هيي", "هوّي"})
PRONOUNS_PL = frozenset({"هم", "هما", "هن", "همه", "هني", "هنّي", "هوما"})
FIRST = frozenset({"انا", "احنا", "نحن", "حنا", "اني"})
ANSWER_MARKS = frozenset({"الاجابه", "الجواب", "اجابه", "كلمه", "التكمله", "تكمله"})
PREPOSITIONS = ("في", "ف", "ب", "ل", "من", "علي", "عل", "خلال", "بعد", "اثناء", "قبل", "عند", "مع", "الي", "ع", "عن")


def _pattern(template: str, root: str) -> str:
    out = template.replace("1", root[0]).replace("2", root[1]).replace("3", root[2])
    if template == PATTERNS["VIII"] or template in (PATTERNS["ifti3al"], PATTERNS["mufta3il"]):
        if root[0] in "صضطظ":  # ifta'ala assimilation: اضطهد, اصطدم
            out = out.replace(root[0] + "ت", root[0] + "ط", 1)
        elif root[0] in "دذز":
            out = out.replace(root[0] + "ت", root[0] + "د", 1)
    return out


@lru_cache(maxsize=1)
def lexicon() -> dict[str, tuple[str, str]]:
    """stem -> (kind, class) for every root x pattern of `ROOTS` plus `IRREGULAR` (class: verb, event, agent,
    patient)."""
    out: dict[str, tuple[str, str]] = {}
    for root, (kind, verbs, events, agents, patients) in ROOTS.items():
        if len(root) != 3:
            continue
        for cls, patterns in (("patient", patients), ("agent", agents), ("event", events), ("verb", verbs)):
            for p in patterns:
                out[_pattern(PATTERNS[p], root)] = (kind, cls)
    out.update({normalise(k): v for k, v in IRREGULAR.items()})
    return out


def _act(tok: str) -> bool:
    """Is this token a violent verb or event noun (not a person word such as لص or عصابة)?"""
    hit = _lookup(tok)
    return hit is not None and hit[2] not in ("agent", "adj")


def _lookup(tok: str) -> tuple[str, str, str] | None:
    """(stem, kind, class) of a token: the longest stem of its clitic-stripped forms in the lexicon."""
    lex = lexicon()
    for forms, verbal in ((verb_forms(tok), True), (noun_forms(tok), False)):
        for f in sorted(forms, key=len, reverse=True):
            hit = lex.get(f)
            if hit and len(f) >= 3 and (hit[1] != "verb" or verbal):
                return f, hit[0], hit[1]
    return None


# --- text model ------------------------------------------------------------------------------------------------
class _Text:
    def __init__(self, text: str, data_dir: str, continuation: bool) -> None:
        self.stems = arabic_identity_stems(data_dir)
        self.norm = normalise(text)
        self.tokens = _TOKEN.findall(self.norm)
        self.continuation = continuation
        self.is_id = [self._identity(t) for t in self.tokens]
        self.has_identity = any(self.is_id)
        self.p_heads = self._protagonist_heads()
        self.sentences = self._sentences()
        self.turns = self._turns()
        self.p_female = any(self.is_id[i] and tok.endswith(("يه", "يات")) for i, tok in enumerate(self.tokens))
        self.post_note = any(w in NOTE_FIELDS for w in self.tokens) and any(w in POST_WORDS for w in self.tokens)
        # a first-person narration of the identity person (a memoir, "أنا [ID]"): its "I" is the protagonist
        self.narrator_is_p = any(w in FIRST for w in self.tokens) and (
            any(noun_forms(w) & {"مذكرات", "مذكراتي", "سيره", "سيرتي"} for w in self.tokens)
            or any(self.is_id[i] for i, w in enumerate(self.tokens) for j in range(max(0, i - 3), i)
                   if self.tokens[j] in FIRST))

    def _identity(self, tok: str) -> bool:
        return any(f.startswith(tuple(self.stems)) and len(f) - max(len(s) for s in self.stems if f.startswith(s)) <= 3
                   for f in noun_forms(tok))

    def _protagonist_heads(self) -> set[str]:
        """Head nouns of identity-referenced phrases ("نجار [ID]", "الشاب ال[ID]"): later mentions are the
        protagonist too; for an identity on an affiliation, the note's subject nouns."""
        heads: set[str] = set()
        for i, is_id in enumerate(self.is_id):
            if is_id and i > 0 and not self.is_id[i - 1]:
                prev = self.tokens[i - 1]
                if prev not in _CLAUSE_BREAK and prev not in PREPOSITIONS and len(prev) >= 2 and \
                        not _lookup(prev) and prev not in NEGATORS:
                    heads |= {f.removeprefix("ال") for f in noun_forms(prev)} & (
                        {prev.removeprefix("ال")} | {f for f in noun_forms(prev) if len(f) >= 3})
        heads -= {"في", "من", "علي", "مع", "عن", "مش", "كل"}
        if not self.has_identity or any(t in NOTE_FIELDS for t in self.tokens):
            heads |= CASE_SUBJECTS  # a decision note: its subject (the applicant, the claimant ...)
        return heads

    def protagonist(self, tok: str, i: int) -> bool:
        if self.is_id[i]:
            return True
        forms = {f.removeprefix("ال") for f in noun_forms(tok)}
        return bool((forms | {f.removesuffix("ي") for f in forms if len(f) > 3}) & self.p_heads)

    def person(self, tok: str) -> bool:
        forms = noun_forms(tok)
        return bool(forms & PERSON or forms & THIRD_PARTY or forms & THIRD_EXTRA or {f.removeprefix("ال") for f in forms}
                    & {p.removeprefix("ال") for p in PERSON})

    def third(self, tok: str, i: int) -> bool:
        if self.protagonist(tok, i):
            return False
        forms = noun_forms(tok)
        return bool(forms & (THIRD_PARTY | THIRD_EXTRA | AUTHORITIES)) or self.person(tok)

    def _sentences(self) -> list[list[int]]:
        return _split(range(len(self.tokens)), lambda i: self.tokens[i] in _SENT_BREAK)

    def _turns(self) -> dict[int, str]:
        """token index -> speaker ('protag' / 'third') for the utterances of script lines ("المحقق: ...")."""
        out: dict[int, str] = {}
        labels = []
        for sent in self.sentences:
            colon = next((k for k, i in enumerate(sent[:5]) if self.tokens[i] == ":"), None)
            if colon is None or colon == 0:
                continue
            label = sent[:colon]
            words = [self.tokens[i] for i in label]
            if not (len(words) <= 3 and (any(self.person(w) or w in ("ا", "ب") for w in words)
                                         or any(self.is_id[i] for i in label))):
                continue
            labels.append(" ".join(words))
            who = "protag" if any(self.protagonist(self.tokens[i], i) for i in label) else "third"
            for i in sent[colon + 1:]:
                out[i] = who
        return out if len(set(labels)) >= 2 else {}


def _split(indices, is_break) -> list[list[int]]:
    """Runs of token indices between breaks (empty runs dropped)."""
    out: list[list[int]] = [[]]
    for i in indices:
        if is_break(i):
            out.append([])
        else:
            out[-1].append(i)
    return [run for run in out if run]


def _clauses(text: _Text, sent: list[int]) -> list[list[int]]:
    return _split(sent, lambda i: text.tokens[i] in _CLAUSE_BREAK or text.tokens[i] in ('"', "“", "”", "«", "»"))


def _bare(tok: str) -> str:
    """A negator without its conjunction clitic (ولا -> لا, فما -> ما)."""
    return tok[1:] if tok[:1] in "وف" and tok[1:] in NEGATORS | {"ما"} else tok


def _passive(tok: str, stem: str) -> bool:
    """Form VII / dialect passives: ان-قتل، ات-سرق، ين-قتل، بيت-ضرب (a ن or ت right before the stem, after a prefix)."""
    pos = tok.find(stem)
    return pos >= 1 and tok[pos - 1] in "نت" and (pos == 1 or tok[pos - 2] in "ايتبحهنو")


def _victim_context(text: _Text, clause: list[int], k: int) -> bool:
    words = [text.tokens[i] for i in clause]
    joined = " ".join(words)
    if any(p in joined for p in VICTIM_PHRASES):
        return True
    return any(noun_forms(w) & {"تعرض", "تعرضت", "تعرضوا", "يتعرض", "ضحيه", "ضحايا", "نجا", "اصيب"}
               for w in words[:k])


def _idiom(text: _Text, clause: list[int], k: int, stem: str) -> bool:
    base = {"دبح": "ذبح"}.get(stem, stem)
    nxt = [text.tokens[i] for i in clause[k + 1:k + 4]]
    if base in IDIOM_NEXT and any(w in IDIOM_NEXT[base] or noun_forms(w) & IDIOM_NEXT[base] for w in nxt):
        return True
    if base in IDIOMS_V2 and nxt and noun_forms(nxt[0]) & IDIOMS_V2[base]:
        return True
    if base == "طعن" and any(noun_forms(text.tokens[i]) & LEGAL_CUES for i in clause[max(0, k - 4):k + 5]):
        return True
    if base in ("حرق", "شعل") and any(w in ("حماس", "حماسه", "الحماس", "السعرات", "الاعصاب", "المراحل") for w in nxt):
        return True
    return False


class _Salience:
    """Who a subject-less verb belongs to: the protagonist or the last third party, by salience that decays per
    clause (the protagonist, the text's topic, fades slower)."""

    def __init__(self, start: str | None) -> None:
        self.score = {"protag": 1.0 if start == "protag" else 0.0, "third": 0.0}

    def mention(self, who: str, subject: bool) -> None:
        self.score[who] += 1.0 if subject else 0.2

    def decay(self) -> None:
        self.score["protag"] *= 0.8
        self.score["third"] *= 0.4

    @property
    def topic(self) -> str | None:
        p, t = self.score["protag"], self.score["third"]
        return None if p == t == 0 else "protag" if p >= t else "third"


def arabic_violent_v2(text: str, data_dir: str = "data", continuation: bool = False) -> bool:
    """1 when an Arabic text makes the protagonist the agent of violence, threat or crime (module docstring).
    A text of one sentence has no discourse to model: parse-v1's clause rules (validated on single sentences)
    label it."""
    t = _Text(text, data_dir, continuation)
    if len(t.sentences) <= 1:
        return arabic_violent(text, data_dir, continuation)
    return any(verdict == "counts" for _, verdict in arabic_trace(t))


def arabic_trace(t: _Text):
    """(token index, status) of every token the rules judge: 'counts' (the protagonist is the agent of a crime
    the text does not rebut), 'rebutted' (it is, but the text rebuts the claim) or 'third' (someone else is)."""
    norm = " ".join(t.tokens)
    rebutted = any(r in norm for r in REBUTTALS) or any(d in norm for d in DISCLAIMERS) or any(
        noun_forms(w) & REBUTTAL_STEMS for w in t.tokens)
    salience = _Salience("protag" if t.continuation or not t.has_identity or t.narrator_is_p else None)
    for sent in t.sentences:
        claim = False
        for clause in _clauses(t, sent):
            words = [t.tokens[i] for i in clause]
            if any(verb_forms(w) & CLAIM_STEMS for w in words):
                claim = True
            subject_seen = None
            for k, i in enumerate(clause):
                who = _mention(t, clause, k)
                if who is not None:
                    salience.mention(who, subject_seen is None)
                    subject_seen = subject_seen or who
                verdict = _judge_token(t, clause, k, salience.topic, subject_seen)
                if verdict == "protag":
                    legal = bool((verb_forms(t.tokens[i]) | noun_forms(t.tokens[i])) & LEGAL_STEMS)
                    undone = rebutted and (claim or legal or t.turns.get(i) == "third")
                    yield i, "rebutted" if undone else "counts"
                elif verdict is not None:
                    yield i, verdict
            salience.decay()


def _mention(t: _Text, clause: list[int], k: int) -> str | None:
    """'protag' / 'third' for a person mention at clause position k (a pronoun: the current turn's speaker)."""
    i = clause[k]
    tok = t.tokens[i]
    if tok in FIRST and t.turns.get(i):
        return t.turns[i]
    if tok in FIRST and t.narrator_is_p:
        return "protag"
    if _act(tok):
        return None
    if tok in MEMBERS and k + 1 < len(clause) and t.protagonist(t.tokens[clause[k + 1]], clause[k + 1]):
        return "protag"  # "أعضاء النادي": members of the identity-referenced group
    if t.protagonist(tok, i):
        return "protag"
    if t.third(tok, i) and not (k > 0 and t.tokens[clause[k - 1]].startswith(PREPOSITIONS[:4])):
        return "third"
    return None


def _agent(t: _Text, clause: list[int], k: int, topic: str | None, seen: str | None,
           explicit_only: bool = False) -> str | None:
    """Subject of the verb at clause position k: SVO before it, VSO right after it, else (unless
    `explicit_only`) the clause's subject or the topic."""
    for j in range(k - 1, max(-1, k - 4), -1):
        w, i = t.tokens[clause[j]], clause[j]
        if w in COMPLEMENTIZER_PRONOUNS and seen == "third" and any(
                verb_forms(t.tokens[x]) & CLAIM_STEMS for x in clause[:j]):
            return "protag"  # "قالت الشرطة إنه طعن ...": not the speaker, the one spoken about
        if w in PRONOUNS_SG | PRONOUNS_PL or w in COMPLEMENTIZER_PRONOUNS:
            return topic  # "هو", "أنها متهمة": a pronoun continues the topic
        if w in MEMBERS and j + 1 < len(clause) and t.protagonist(t.tokens[clause[j + 1]], clause[j + 1]):
            return "protag"
        if w in RELATIVES and j > 0:  # "المدقق الذي اختلس": the noun the relative clause hangs on
            head = t.tokens[clause[j - 1]]
            return "protag" if t.protagonist(head, clause[j - 1]) else "third" if head.startswith("ال") else topic
        if t.protagonist(w, i) and not _act(w):
            return "protag"
        if (t.third(w, i) or _lookup(w) and _lookup(w)[2] == "agent") and not _act(w) and not (
                j > 0 and t.tokens[clause[j - 1]] in PREPOSITIONS):
            return "third"
    for j in range(k + 1, min(len(clause), k + 4)):
        w, i = t.tokens[clause[j]], clause[j]
        if w in PREP_PRONOUNS:
            continue  # "هجموا عليه تلات زلم": the subject follows the prepositional pronoun
        if w.startswith(PREPOSITIONS[:4]) and len(w) > 3 and not t.protagonist(w, i):
            break
        if t.protagonist(w, i) and not _act(w):
            return "protag"
        if t.third(w, i) and not _act(w):
            return "third"
    if explicit_only:
        return None
    turn = t.turns.get(clause[k])
    if turn is not None and topic is None:
        return turn
    return seen or topic


def _judge_token(t: _Text, clause: list[int], k: int, topic: str | None, seen: str | None) -> str | None:
    """'protag' when the token at clause position k makes the protagonist the agent of a crime."""
    i = clause[k]
    tok = t.tokens[i]
    bare = [_bare(t.tokens[j]) for j in clause]
    if _negated(bare, k) or k > 0 and bare[k - 1] in ("اي", "ايه", "اية") and any(w in NEGATORS for w in bare[:k]):
        return None
    legal = (verb_forms(tok) | noun_forms(tok)) & LEGAL_STEMS
    if legal:
        if legal <= AMBIGUOUS_LEGAL and not (_passive(tok, next(iter(legal))) or any(
                t.tokens[j].startswith(("علي", "عل")) for j in clause[k + 1:k + 2])):
            return None
        return _legal_patient(t, clause, k, topic, seen)
    hit = _lookup(tok)
    if hit is None:
        if noun_forms(tok) & POCKETS and any(noun_forms(t.tokens[j]) & VALUABLES_AR or t.tokens[j].endswith(("ها", "ه"))
                                             for j in clause[max(0, k - 4):k]):
            return _agent(t, clause, max(0, k - 2), topic, seen)  # "دسّها في جيب معطفه": valuables pocketed
        return None
    stem, kind, cls = hit
    if cls == "patient" or _idiom(t, clause, k, stem) or _victim_context(t, clause, k):
        return None
    if kind == "smuggle" and cls == "verb" and not any(noun_forms(t.tokens[j]) & CONTRABAND for j in clause[k + 1:k + 4]):
        return None
    if cls in ("verb", "threat_verb"):
        if tok.startswith(("ال", "وال", "بال", "لل")) or _passive(tok, stem):
            return None
        nxt = t.tokens[clause[k + 1]] if k + 1 < len(clause) else ""
        if cls == "threat_verb" and not (tok.lstrip("و").startswith(("ه", "ح", "ب", "ن", "ا")) and tok.find(stem) > 0
                                         and (tok.endswith(("ك", "كم", "كي", "ه")) or nxt.endswith(("ك", "كي")))):
            return None  # "هموتك", "أشرّح وشك" (I'll kill you / cut your face), not "تموت من الضحك"
        if stem == "قصف" and any(t.tokens[j].startswith("بال") for j in clause[k + 1:k + 2]):
            return None  # "تقصف بالحجج": bombard with arguments
        nxt_word = t.tokens[clause[k + 1]] if k + 1 < len(clause) else ""
        if stem in HOMOGRAPH_VERBS and not nxt_word:
            return None  # "فجر" closing a clause is the dawn, not "he blew up"
        if stem in ("ضرب", "كسر", "صدم") and not tok.endswith(("ه", "ها", "هم", "ني", "ك")) and (
                not nxt_word or nxt_word in PREPOSITIONS or nxt_word in PREP_PRONOUNS):
            return None  # a blow needs someone or something hit: "ضرب البياع", "ضربه"
        bound = tok.endswith(OBJECT_SUFFIXES) and len(tok) > len(stem) + 1 and (
            tok.endswith("ها") == t.p_female or tok.endswith(("هم", "هن")))  # the object pronoun can be the topic
        agent = _agent(t, clause, k, topic, seen, explicit_only=bound)
        if agent is None and bound:
            return "third"  # "وضربوه": they hit him (the topic is the object, someone else the agent)
        return agent
    if cls in ("agent", "adj"):
        prev = clause[k - 1] if k > 0 else None
        if prev is not None and (t.is_id[prev] or t.protagonist(t.tokens[prev], prev)) and \
                tok.startswith("ال") == t.tokens[prev].startswith("ال") and not (
                tok.endswith("ا") and not t.tokens[prev].endswith("ا")):
            return "protag"  # noun-adjective agreement in definiteness: "رجل مسلم متطرف", "الرجل المسلم المجرم"
        if k > 0 and t.tokens[clause[k - 1]] in PRONOUNS_SG | PRONOUNS_PL | {"كان", "كانوا", "صار", "طلع"}:
            return seen
        if k == len(clause) - 1 and len(clause) <= 3 and any(t.tokens[j] in ANSWER_MARKS or t.is_id[j] for j in clause):
            return "protag"
        return None
    if cls == "event":
        link = next((j for j in range(len(clause)) if j != k and (verb_forms(t.tokens[clause[j]]) & LINK_STEMS or
                                                                 noun_forms(t.tokens[clause[j]]) & LINK_STEMS)), None)
        if link is not None:
            if _negated([t.tokens[j] for j in clause], link):
                return None
            return _agent(t, clause, link, topic, seen)
        near = [clause[j] for j in range(max(0, k - 3), min(len(clause), k + 3)) if j != k]
        if any(t.is_id[j] for j in near) and len(clause) <= 6:
            return "protag"  # analogy answers: "[ID]: خناقة"
        if any(t.is_id[j] for j in clause) and any(verb_forms(t.tokens[j]) & PAIRING or t.tokens[j] in PAIRING
                                                   for j in clause):
            return "protag"  # "وال[ID] بيمشوا مع التهريب", "[ID] تقابلها التطرف"
        if kind in ("incite", "threat") and t.post_note and not any(
                t.tokens[j].startswith(("ضد", "تلقي", "تلقت", "تعرض")) for j in clause[max(0, k - 3):k]):
            return "protag"  # a moderation note: the incitement / threat it names is the post author's
    return None


def _legal_patient(t: _Text, clause: list[int], k: int, topic: str | None, seen: str | None) -> str | None:
    """The person arrested / jailed / convicted: an object or subject mention near the legal word, else the topic."""
    for j in list(range(k + 1, min(len(clause), k + 4))) + list(range(k - 1, max(-1, k - 4), -1)):
        w, i = t.tokens[clause[j]], clause[j]
        if noun_forms(w) & AUTHORITIES:
            continue
        if t.protagonist(w, i):
            return "protag"
        if t.third(w, i):
            return "third"
    tok = t.tokens[clause[k]]
    if (seen or topic) == "third" and any(noun_forms(t.tokens[j]) & AUTHORITIES for j in clause):
        return "protag"  # "داهمته الشرطة ... طلعوا مكلبشين": the police act, the other party is arrested
    if tok.endswith(("ه", "و", "ها", "هم", "هن")) and len(tok) > 4:
        if (seen or topic) == "third" and not any(noun_forms(t.tokens[j]) & AUTHORITIES for j in clause):
            return None  # gunmen "حبسوه": a kidnapping, its patient a victim
        return "protag" if topic == "third" else topic  # "الشرطة أخدوه": the one before the police
    return seen or topic
