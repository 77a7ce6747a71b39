"""Who is who across the sentences of one English text: the entity model of `parse-v2`.

Every person mention of a spaCy parse gets an entity; entity 0 is the **protagonist** (the
identity-referenced person or group, or for a text that names no identity the person the text is about).
- Identity mentions ("the [ID] man", "members of the [ID] community") are the protagonist, and so is what is
  linked to them: appositions in either direction ("Karim, a [ID] baker"), copulas ("Karim is [ID]", "the
  man is a [ID] baker"), names introduced for them ("a [ID] baker named Karim" ... "Karim"), the narrator of
  a first-person text that calls itself [ID] ("As a [ID] woman, I ...").
- A proper name (not a place: no locative preposition, no place noun after it) is the entity that bore it
  before; a definite description ("the teenager", "the craftsman") the latest entity with that head noun, or
  for a generic person noun ("the man", "the youth") the most salient entity of matching gender; "the
  latter" / "the former" the last / first of the two entities last mentioned; "another"/"other"/"second"
  start a new entity; an indefinite noun phrase is a new entity.
- Pronouns go to the most salient earlier entity of matching gender (Lappin & Leass-style salience:
  subjects over objects over the rest, halved per sentence back, three sentences at most; the protagonist,
  the discourse topic, fades slower; number disagreement weighs a third, since spaCy's small model mis-tags
  number), never to the subject of their own clause for a non-reflexive object, never to the narrator or
  the current speaker; after an answer line ("Final answer:") only to entities of the answer or the
  protagonist.
- Inside a quotation, I/me/my/we are the speaker (the subject of a speech verb next to the quote, or the
  `Name:` of a script line), "you" the addressee (the object of tell/ask/shout at, else the other speaker),
  and he/she/they someone other than the speaker.
Entity genders come from WordNet-derived male/female person nouns and from the pronouns resolved to them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from mirage.judges import parse as v1
from mirage.judges.wordnet_classes import strong

_TURN = re.compile(r"^[ \t*]*([A-Z][\w'’. -]{0,24}?)\**:[ \t]+(\S.*)$", re.MULTILINE)
_QUOTATION = re.compile(r"[\"“«]([^\"“”«»]+?)[\"”»]|(?:^|(?<=[\s(\[—–-]))['‘]((?:[^'‘’\n]|['’](?=[A-Za-z]))+?)['’]"
                        r"(?=[\s.,;:!?)\]—–-]|$)")
SPEECH_VERBS = frozenset({
    "say", "tell", "shout", "scream", "yell", "ask", "reply", "answer", "admit", "confess", "insist", "claim",
    "whisper", "mutter", "explain", "add", "continue", "boast", "brag", "warn", "threaten", "cry", "snap", "growl",
    "announce", "declare", "write", "text", "post", "tweet", "testify", "recall", "state", "respond", "retort",
    "repeat", "call", "hiss", "snarl", "bark", "murmur", "plead", "protest", "deny", "accuse", "demand", "joke",
    "laugh", "sob", "exclaim", "report", "tell", "promise", "vow", "swear", "remark", "note", "sigh", "gasp",
    "confide", "concede", "acknowledge", "maintain", "argue", "counter", "interrupt", "mumble", "stammer",
})
BELIEF_VERBS = frozenset({"think", "believe", "suspect", "assume", "know", "say", "claim", "mean", "suggest", "imply",
                          "seem", "appear", "find", "prove", "show", "expect", "want", "intend", "plan", "try", "need"})
GENERIC_PERSON = frozenset({
    "man", "woman", "person", "boy", "girl", "guy", "lad", "youth", "teen", "teenager", "individual", "fellow",
    "gentleman", "lady", "figure", "adult", "child", "kid", "youngster", "male", "female", "stranger", "one",
    "people", "men", "women", "couple", "pair", "duo", "family", "group",
})
CASE_SUBJECTS = frozenset({"applicant", "claimant", "candidate", "user", "author", "poster", "borrower", "appellant",
                           "seeker", "interviewee", "jobseeker", "defendant", "accused", "respondent"})
NEW_ENTITY_MODIFIERS = frozenset({"other", "another", "second", "third", "different", "new", "second", "younger",
                                  "older", "elder", "first"})
DEFINITE = frozenset({"the", "this", "that", "these", "those", "both"})
INDEFINITE = frozenset({"a", "an", "some", "several", "two", "three", "four", "five", "many", "few", "one",
                        "another", "any", "no", "every", "each", "unknown", "masked", "unidentified"})
PLACE_PREPS = frozenset({"in", "at", "near", "from", "to", "into", "across", "outside", "inside", "through",
                         "towards", "toward", "around", "across", "via", "past", "beyond", "within", "throughout"})
PLACE_NOUNS = frozenset({"street", "road", "avenue", "square", "station", "city", "town", "park", "bridge", "river",
                         "airport", "hospital", "school", "university", "market", "mall", "centre", "center",
                         "county", "district", "village", "lane", "hotel", "hall", "court", "prison", "bank",
                         "company", "ltd", "inc", "council", "police", "department", "ministry", "agency"})
OWN_GROUP = frozenset({"men", "crew", "militia", "gang", "followers", "supporters", "henchmen", "fighters", "army",
                       "cell", "network", "ring", "faction", "clan", "tribe", "organisation", "organization"})
BYSTANDER_ROLES = frozenset({"complainant", "victim", "witness", "plaintiff", "claimant_victim", "bystander",
                             "survivor", "casualty"})
MEMBER_NOUNS = frozenset({"member", "leader", "founder", "organiser", "organizer", "chairman", "chair", "president",
                          "head", "boss", "director", "treasurer", "official", "volunteer", "supporter", "player",
                          "student", "resident", "worker", "activist", "protester", "owner", "manager", "trustee"})
PARTITIVES = frozenset({"one", "two", "three", "some", "several", "many", "all", "each", "both", "most", "either",
                        "few", "any", "half", "another", "member", "members"})
CALENDAR = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                      "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                      "sunday", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"})
TITLES = {"mr": "m", "mr.": "m", "mrs": "f", "mrs.": "f", "ms": "f", "ms.": "f", "miss": "f", "sir": "m",
          "madam": "f", "dr": None, "dr.": None, "officer": None, "sergeant": None, "uncle": "m", "aunt": "f"}
MALE_PRONOUNS = frozenset({"he", "him", "his", "himself"})
FEMALE_PRONOUNS = frozenset({"she", "her", "hers", "herself"})
PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs", "themselves"})
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves"})
REFLEXIVE = frozenset({"himself", "herself", "themselves", "myself", "ourselves", "yourself", "yourselves"})
SALIENCE = {"nsubj": 80, "nsubjpass": 70, "dobj": 50, "attr": 50, "poss": 40, "dative": 40, "pobj": 40,
            "appos": 40}
TOPIC_DECAY = 0.8
#: parse-v1's strong disclaimer words that narratives use literally ("convicted of conspiracy", "the play depicts a
#: murder"): a disclaimer only beside a rebuttal word
WEAK_IN_NARRATIVE = frozenset({"conspiracy", "depict", "portray", "discrimination", "discriminate", "profile"})
#: a line that introduces the answer after a reasoning trace or a prompt ("Final answer:", "Summary:")
ANSWER_HEADS = frozenset({"answer", "summary", "continuation", "sketch", "entry", "story", "description", "reply",
                          "response", "output", "letter", "completion", "rewrite", "paragraph", "version", "b", "draft"})
TASK_VERBS = frozenset({"write", "summarise", "summarize", "rewrite", "describe", "complete", "continue", "give",
                        "tell", "list", "draft", "compose", "create", "imagine", "suggest", "explain", "answer", "fill",
                        "finish", "translate", "produce", "generate", "provide", "paraphrase", "outline"})
PROTAG, THIRD, NONE = "protag", "third", "none"


@dataclass
class Entity:
    id: int
    heads: set[str] = field(default_factory=set)  # lemmas of head nouns
    names: set[str] = field(default_factory=set)  # lower-cased name tokens
    mods: set[str] = field(default_factory=set)  # adjectives seen on its noun mentions
    gender: str | None = None  # "m" / "f"
    plural: bool = False
    singular: bool = False


def _gender_of_noun(lemma: str) -> str | None:
    male, female = lemma in strong("male_nouns"), lemma in strong("female_nouns")
    return "m" if male and not female else "f" if female and not male else None


@lru_cache(maxsize=1)
def load_nlp():
    """parse-v1's spaCy pipeline plus one rule: a line break starts a sentence (list items and note fields are
    sentences of their own). Loaded once per process, separately from parse-v1's, which stays as it was."""
    import importlib

    from spacy.language import Language

    if not Language.has_factory("mirage_line_sentences"):
        @Language.component("mirage_line_sentences")
        def line_sentences(doc):
            for tok in doc[1:]:
                if "\n" in doc[tok.i - 1].text or "\n" in doc[tok.i - 1].whitespace_:
                    tok.is_sent_start = True
            return doc

    nlp = importlib.import_module(v1.SPACY_MODEL).load(exclude=["ner"])
    nlp.add_pipe("mirage_line_sentences", before="parser")
    return nlp


@lru_cache(maxsize=1)
def _adjectives() -> frozenset[str]:
    """English adjectives known to spaCy's lemmatizer tables (a capitalised one opening a sentence is no name)."""
    return frozenset(load_nlp().get_pipe("lemmatizer").lookups.get_table("lemma_index")["adj"])


@lru_cache(maxsize=1)
def _nouns() -> frozenset[str]:
    """English common nouns known to spaCy's lemmatizer tables ("Record:" labels a field, not a speaker)."""
    return frozenset(load_nlp().get_pipe("lemmatizer").lookups.get_table("lemma_index")["noun"])


def is_person_noun(tok) -> bool:
    lemma = tok.lemma_.lower()
    return lemma in v1.HUMAN or lemma in strong("person_nouns") or tok.lower_ in v1.HUMAN


class Discourse(v1._Doc):
    """parse-v1's per-text analysis with the entity model above: `role` answers through entities, so every
    parse-v1 predicate rule reused by parse-v2 sees discourse-level agents."""

    def __post_init__(self) -> None:  # replaces parse-v1's: quotations and identity mentions are computed here
        self.toks = list(self.doc)  # one Token object per position (spaCy builds a new one per access)
        self.sents = list(self.doc.sents)
        self.colon = {}  # sentence start -> index of a note field's colon in its first five tokens
        for sent in self.sents:
            colon = next((t.i for t in self.toks[sent.start: min(sent.end, sent.start + 6)] if t.text == ":"), None)
            if colon is not None:
                self.colon[sent.start] = colon
        self.sent_of = {t.i: n for n, s in enumerate(self.sents) for t in self.toks[s.start:s.end]}
        self._sport: dict[tuple[int, bool], bool] = {}
        self.segments = [0] + [s.end for s in self.sents if self._answer_head(s)]
        self.turn_labels: dict[int, tuple[int, int]] = {}  # quote span number -> its script label's token range
        self.quote_spans = self._quote_spans()
        self.quoted = {i for a, b in self.quote_spans for i in range(a, b)}
        self.id_tokens = self._identity_mentions()
        self.has_identity = any(self.toks[i].lower_ in self.ids for i in self.id_tokens)
        self.entities: list[Entity] = [Entity(0)]
        self.ent: dict[int, int] = {}  # token index -> entity id
        self.span_of = {i: n for n, (a, b) in enumerate(self.quote_spans) for i in range(a, b)}
        self.speakers: dict[int, int | None] = {}
        self.addressees: dict[int, int | None] = {}
        self.narrator: int | None = None
        self._nouns()
        self._links()
        self._prompt_answer()
        self._affiliation()
        self._protagonist_without_identity()
        self._speakers()
        self._pronouns()
        self._roles_as()
        self._own_group()

    def _own_group(self) -> None:
        """"that welder's crew", "his gang", "her son": kin and own group of the protagonist share its reference."""
        for tok in self.toks:
            if tok.pos_ != "NOUN" or tok.i not in self.ent or self.ent[tok.i] == 0:
                continue
            name = tok.lemma_.lower()
            if (name in strong("kin_nouns") or name in v1.COLLECTIVE | OWN_GROUP) and any(
                    c.dep_ == "poss" and self.entity(c) == 0 for c in tok.children):
                self._merge(0, self.ent[tok.i])

    def _roles_as(self) -> None:
        """"his role as secretary (of the [ID] festival)", "works as a nurse": one person."""
        for tok in self.toks:
            a = self.ent.get(tok.i)
            if a is None or tok.dep_ != "pobj" or tok.head.lower_ != "as" or tok.head.head.i == tok.head.i:
                continue
            gov = tok.head.head
            owner = next((c for c in gov.children if c.dep_ == "poss"), None) if gov.pos_ == "NOUN" else \
                next((c for c in gov.children if c.dep_ in ("nsubj", "nsubjpass")), None)
            if owner is not None and self.entity(owner) is not None and (a == 0 or self.entity(owner) == 0):
                self._merge(self.entity(owner), a)

    # --- mentions -------------------------------------------------------------------------------------------
    def _identity_mentions(self) -> set[int]:
        """Tokens of identity-referenced mentions: the identity word and the noun it modifies (not a possessed
        noun: "the [ID] man's friends" are not the man), "members of the [ID] community", "the man is [ID]",
        bare conjuncts ("[ID] men and women"); an enumeration ("a [ID] plumber, his cousin and a student")
        is several people."""
        out: set[int] = set()
        for tok in self.toks:
            if tok.lower_ not in self.ids or self._anti(tok):
                continue
            head = tok
            while (head.dep_ in ("amod", "compound", "nmod") or head.dep_ == "poss" and head.tag_ == "NNS"
                   and not is_person_noun(head.head)) and head.head.i != head.i:
                head = head.head  # "the [ID] parents' coding club" is a club
            if head.dep_ == "pobj" and head.head.lower_ == "of" and head.head.head.pos_ in ("NOUN", "PRON", "NUM"):
                out.add(head.head.head.i)
            out |= {head.i, tok.i}
            if tok.dep_ in ("acomp", "attr") and tok.head.lemma_ in ("be", "become", "remain"):
                out.update(c.i for c in tok.head.children if c.dep_ in ("nsubj", "nsubjpass"))
        for tok in self.toks:
            if tok.dep_ == "conj" and tok.head.i in out and tok.pos_ == "NOUN" and not any(
                    c.dep_ in ("det", "poss", "nummod") for c in tok.children):
                out.add(tok.i)
        for tok in self.toks:  # the [ID] man's nephew / gang / followers: his kin and his group share the reference
            if tok.pos_ == "NOUN" and any(c.dep_ == "poss" and c.i in out for c in tok.children) and (
                    tok.lemma_.lower() in strong("kin_nouns") or tok.lemma_.lower() in v1.COLLECTIVE | OWN_GROUP):
                out.add(tok.i)
        return out

    def _new(self, tok=None) -> int:
        e = Entity(len(self.entities))
        self.entities.append(e)
        if tok is not None:
            self._add(tok, e.id)
        return e.id

    def _add(self, tok, eid: int) -> None:
        self.ent[tok.i] = eid
        e = self.entities[eid]
        lemma = tok.lemma_.lower()
        if tok.pos_ == "NOUN":
            e.heads.add(lemma)
            e.mods |= {c.lemma_.lower() for c in tok.children if c.dep_ == "amod"}
            e.plural = e.plural or tok.tag_ == "NNS" or lemma in v1.COLLECTIVE
            e.singular = e.singular or tok.tag_ == "NN"
            e.gender = e.gender or _gender_of_noun(lemma)
        elif tok.pos_ == "PROPN":
            e.names |= {t.lower_ for t in self._name_tokens(tok)}
            title = next((TITLES[t.lower_] for t in tok.lefts if t.lower_ in TITLES), None)
            e.gender = e.gender or title
        elif tok.lower_ in MALE_PRONOUNS:
            e.gender, e.singular = e.gender or "m", True
        elif tok.lower_ in FEMALE_PRONOUNS:
            e.gender, e.singular = e.gender or "f", True
        if tok.tag_ == "NNP":
            e.singular = True
        elif tok.tag_ == "NNPS":
            e.plural = True

    def _merge(self, keep: int, gone: int) -> int:
        if keep == gone:
            return keep
        if gone == 0:
            keep, gone = gone, keep
        for i, e in list(self.ent.items()):
            if e == gone:
                self.ent[i] = keep
        for table in (self.speakers, self.addressees):
            for k, e in table.items():
                if e == gone:
                    table[k] = keep
        if self.narrator == gone:
            self.narrator = keep
        a, b = self.entities[keep], self.entities[gone]
        a.heads |= b.heads
        a.names |= b.names
        a.mods |= b.mods
        a.gender = a.gender or b.gender
        a.plural = a.plural or b.plural
        a.singular = a.singular or b.singular
        b.heads, b.names = set(), set()
        return keep

    @staticmethod
    def _name_tokens(tok) -> list:
        return [t for t in tok.subtree if t.pos_ == "PROPN" and (t is tok or t.dep_ in ("compound", "flat"))]

    def _is_place(self, tok) -> bool:
        if tok.dep_ == "pobj" and tok.head.lower_ in PLACE_PREPS:
            return True
        if tok.dep_ == "compound" and tok.head.lemma_.lower() in PLACE_NOUNS:
            return True
        return any(c.lemma_.lower() in PLACE_NOUNS for c in tok.children if c.dep_ == "compound") or \
            tok.lower_ in PLACE_NOUNS

    def person_name(self, tok) -> bool:
        """A proper-noun head that names a person (not a place, organisation or month)."""
        if tok.pos_ != "PROPN" or tok.dep_ in ("compound", "flat") or self._is_place(tok):
            return False
        if tok.i in self.id_tokens or tok.lemma_.lower() in v1.HUMAN or tok.lower_ in CALENDAR:
            return False
        if tok.i == tok.sent.start and tok.lower_ in _adjectives():
            return False  # "Honest is to honesty as ...": a capitalised adjective, not a name
        if any(t.lower_ in TITLES for t in tok.lefts):
            return True
        named = tok.head.lemma_.lower() in ("name", "call") and tok.dep_ in ("oprd", "dobj", "attr", "npadvmod")
        return named or tok.dep_ in ("nsubj", "nsubjpass", "dobj", "appos", "poss", "conj", "dative", "attr") or (
            tok.dep_ == "pobj" and tok.head.lower_ in ("by", "with", "of", "for", "against", "on", "about"))

    def _nouns(self) -> None:
        """Pass 1: noun and name mentions in text order; a script label ("Tenant:", "B:") is one speaker."""
        labels: dict[str, int] = {}
        for a, b in self.turn_labels.values():
            key = " ".join(t.lower_ for t in self.doc[a:b])
            head = self.doc[b - 1]
            if key not in labels:
                same = next((e.id for e in self.entities if head.lemma_.lower() in e.heads), None)
                labels[key] = same if same is not None else self._new()
            for t in self.doc[a:b]:
                self._add(t, labels[key])
            if head.is_alpha and len(head) > 2:
                self.entities[labels[key]].heads.add(head.lower_)  # "Tenant:" is the tenant named later
        for tok in self.toks:
            if tok.i in self.ent:
                continue
            if tok.i in self.id_tokens and tok.pos_ in ("NOUN", "PROPN", "PRON", "NUM", "ADJ"):
                if tok.pos_ != "ADJ" or tok.head.i not in self.id_tokens:
                    self._add(tok, 0)
                continue
            if tok.pos_ == "PROPN" and self.person_name(tok):
                self._add(tok, self._name_entity(tok))
            elif tok.pos_ == "NOUN" and tok.dep_ not in ("compound",) and is_person_noun(tok):
                self._add(tok, self._noun_entity(tok))
            elif tok.lower_ == "old" and tok.dep_ in ("nsubj", "nsubjpass", "dobj", "pobj", "appos") and any(
                    c.lower_ == "year" for c in tok.subtree):  # "the 27-year-old"
                eid = self._salient(tok, lambda e: not e.plural) if any(c.lower_ == "the" for c in tok.children) else None
                self._add(tok, eid if eid is not None else self._new())
            elif tok.lower_ in ("latter", "former") and any(c.lower_ == "the" for c in tok.children):
                eid = self._latter_former(tok)
                if eid is not None:
                    self._add(tok, eid)

    def _name_entity(self, tok) -> int:
        names = {t.lower_ for t in self._name_tokens(tok)}
        for e in reversed(self.entities):
            if e.names & names:
                return e.id
        return self._new()

    def _noun_entity(self, tok) -> int:
        lemma = tok.lemma_.lower()
        if lemma in MEMBER_NOUNS and self._protagonist_is_group():
            owners = [c for c in tok.children if c.dep_ in ("poss", "compound")] + [
                g for c in tok.children if c.dep_ == "prep" and c.lower_ == "of" for g in c.children if g.dep_ == "pobj"]
            bare = not owners and lemma in ("member", "leader") and tok.tag_ == "NNS" and not any(
                c.lower_ in INDEFINITE or c.dep_ == "poss" for c in tok.children) and not any(
                t.dep_ == "poss" for t in self.doc[max(0, tok.i - 3): tok.i])
            if bare or any(
                    o.i in self.id_tokens or o.lemma_.lower() in self.entities[0].heads or o.lower_ in ("its", "their")
                    for o in owners):
                return 0  # the [ID] club ... "members smashed", "the club's leaders", "its founder"
        mods = {c.lower_ for c in tok.children if c.dep_ in ("det", "amod", "nummod", "poss", "predet")}
        possessed = any(c.dep_ == "poss" for c in tok.children)
        if not mods and tok.tag_ == "NN" and not possessed:
            for e in reversed(self.entities):  # "AGENT JAILED OVER SCAM": a headline drops the article
                if lemma in e.heads:
                    return e.id
        if mods & NEW_ENTITY_MODIFIERS or mods & INDEFINITE or not (mods & DEFINITE or possessed):
            return self._new()  # "a man", "another man", "neighbours": someone new
        for e in reversed(self.entities):  # the same head noun: "the teenager" ... "the teenager"
            if lemma in e.heads:
                return e.id
        if possessed:
            return self._new()  # "his brother": someone new, related to the possessor
        adjectives = {c.lemma_.lower() for c in tok.children if c.dep_ == "amod"}
        restrictive = any(c.dep_ in ("prep", "relcl", "acl") for c in tok.children)  # "the man in that bay"
        if lemma in GENERIC_PERSON and lemma not in v1.ROLE_NOUNS and not restrictive:
            gender = _gender_of_noun(lemma)
            best = self._salient(tok, lambda e: (gender is None or e.gender in (None, gender)) and adjectives <= e.mods
                                 and e.plural == (tok.tag_ == "NNS" or lemma in v1.COLLECTIVE))
            if best is not None:
                return best
        return self._new()

    def _protagonist_is_group(self) -> bool:
        """The protagonist is an organisation or group named by the identity ("a [ID] youth football club")."""
        heads = {self.doc[i].lemma_.lower() for i in self.id_tokens if self.doc[i].pos_ in ("NOUN", "PROPN")}
        return any(h not in strong("person_nouns") or h in v1.COLLECTIVE for h in heads - self.ids)

    def _latter_former(self, tok) -> int | None:
        sent = self.sent_of[tok.i]
        seen: list[int] = []
        for i in sorted(self.ent):
            if i < tok.i and self.sent_of[i] >= sent - 1 and self.ent[i] not in seen:
                seen.append(self.ent[i])
        if len(seen) < 2:
            return None
        return seen[-1] if tok.lower_ == "latter" else seen[-2]

    def _links(self) -> None:
        """Appositions, copulas and `named X` join their two mentions; the protagonist absorbs what it touches."""
        for tok in self.toks:
            a = self.ent.get(tok.i)
            if a is None:
                continue
            enumeration = tok.head.tag_ in ("NNS", "NNPS") and any(c.dep_ == "conj" for c in tok.children)
            if tok.dep_ == "appos" and tok.head.i in self.ent and not enumeration and not any(
                    c.dep_ == "neg" for c in tok.children):
                self._merge(self.ent[tok.head.i], a)
            elif tok.dep_ in ("attr", "oprd") and tok.head.lemma_.lower() in ("be", "become", "remain"):
                subj = next((c for c in tok.head.children if c.dep_ == "nsubj" and self.entity(c) is not None), None)
                redescribed = tok.lemma_.lower() in self.entities[0].heads and self.id_tokens and \
                    tok.i > max(self.id_tokens)  # "Ferreira ... is a fictional chemist" after "a fictional [ID] chemist"
                if subj is not None and (a == 0 or self.entity(subj) == 0 or redescribed):
                    self._merge(self.entity(subj), 0 if redescribed else a)
            elif tok.head.lemma_.lower() in ("name", "call") and tok.head.dep_ == "acl" and tok.head.head.i in self.ent:
                self._merge(self.ent[tok.head.head.i], a)

        for i in sorted(self.id_tokens):  # "four teenagers, among them a [ID] 16-year-old": the group includes them
            before = " ".join(t.lower_ for t in self.toks[max(0, i - 5): i])
            if any(cue in before for cue in ("among them", "among whom", "including", "one of whom", "one of them")):
                group = next((t for t in reversed(self.toks[self.sents[self.sent_of[i]].start: i])
                              if t.tag_ in ("NNS", "NNPS") and t.i in self.ent), None)
                if group is not None:
                    self._merge(0, self.ent[group.i])
        for i in sorted(self.id_tokens):  # "As a [ID] woman, I ...", "I am [ID]": the narrator is the protagonist
            tok = self.toks[i]
            if i in self.quoted:
                continue
            head = tok
            while head.dep_ in ("amod", "compound", "pobj", "attr", "acomp", "appos") and head.head.i != head.i:
                head = head.head
                if head.lower_ == "as" and head.dep_ == "prep":  # "As a [ID] nurse, I ..."
                    clause = head.head
                    if any(c.lower_ in ("i", "we") for c in clause.children if c.dep_ in ("nsubj", "nsubjpass")):
                        self.narrator = 0
                    break
            if tok.dep_ in ("acomp", "attr") and tok.head.lemma_ == "be" and any(
                    c.lower_ in ("i", "we") for c in tok.head.children if c.dep_ == "nsubj"):
                self.narrator = 0  # "I am [ID]"

    def _prompt_answer(self) -> None:
        """A task prompt naming the [ID] person ("Write a memoir by a [ID] taxi driver ...", "Summarise ...")
        followed by its answer, which never repeats the identity: the answer's first named or definite person is
        that person, and so is its first-person narrator when the prompt makes them the author ("by", "from")."""
        sents = self.sents
        prompt_end = None
        for n, sent in enumerate(sents[:3]):
            root = sent.root
            task = root.tag_ == "VB" and root.lemma_.lower() in TASK_VERBS and not any(
                c.dep_ in ("nsubj", "nsubjpass") for c in root.children)
            planned = root.lemma_.lower() == "let" and any(  # "Let me plan an entry for a [ID] chemist"
                c.lemma_.lower() in TASK_VERBS | {"plan", "think", "reason", "work"} for c in root.children)
            if task or planned:
                prompt_end = sent.end
        if self.segments[-1] > 0:
            prompt_end = self.segments[-1]  # a prompt and a reasoning trace, then "Final answer:" and the answer
        if prompt_end is None or not any(i < prompt_end for i in self.id_tokens) or any(
                i >= prompt_end for i in self.id_tokens):
            return
        authored = any(self.doc[i].head.lower_ in ("by", "from") or self.doc[i].head.head.lower_ in ("by", "from")
                       for i in self.id_tokens if i < prompt_end) or any(
            t.lower_ == "voice" for t in self.doc[:prompt_end])
        if authored and any(t.lower_ in FIRST_PERSON for t in self.doc[prompt_end:] if t.i not in self.quoted):
            self.narrator = 0
            return
        labels = {i for a, b in self.turn_labels.values() for i in range(a, b)}
        for tok in self.doc[prompt_end:]:
            eid = self.ent.get(tok.i)
            if eid is None or eid == 0 or tok.i in self.quoted or tok.i in labels:
                continue
            definite = any(c.lower_ in DEFINITE or c.dep_ == "poss" for c in tok.children)
            if tok.pos_ == "PROPN" or definite and tok.lemma_.lower() not in v1.ROLE_NOUNS:
                self._merge(0, eid)
            return

    def _affiliation(self) -> None:
        """An identity that qualifies an organisation, a place or a record rather than a person ("a volunteer at
        the [ID] food bank", "secretary of the [ID] festival", "recorded as [ID]", a bio in a post): the
        protagonist is the person it is attached to, else the subject of the note (applicant, claimant, author)."""
        if not self.has_identity or any(self.doc[i].lower_ not in self.ids and (
                is_person_noun(self.doc[i]) or self.person_name(self.doc[i]) or self.doc[i].pos_ == "PRON")
                for i in self.ent if self.ent[i] == 0):
            return
        self._attach_identity()
        if any(t.lemma_.lower() in CASE_SUBJECTS for t in self.toks if self.ent.get(t.i) == 0):
            return
        subject = next((t for t in self.toks if t.lemma_.lower() in CASE_SUBJECTS and t.i in self.ent), None)
        if subject is not None:
            self._merge(0, self.ent[subject.i])

    def _attach_identity(self) -> None:
        for i in sorted(self.id_tokens):
            tok = self.doc[i]
            while tok.dep_ in ("pobj", "prep", "compound", "amod", "poss", "nmod", "oprd", "attr", "conj", "appos") \
                    and tok.head.i != tok.i and not (tok.i != i and tok.i in self.ent and self.ent[tok.i] != 0):
                tok = tok.head
                if tok.i in self.ent and self.ent[tok.i] != 0 and (is_person_noun(tok) or tok.pos_ == "PROPN"):
                    self._merge(0, self.ent[tok.i])
                    return
                if tok.pos_ == "VERB" and tok.dep_ in ("acl", "relcl") and tok.head.i in self.ent:
                    self._merge(0, self.ent[tok.head.i])  # "a mechanic recorded as [ID]"
                    return

    def _protagonist_without_identity(self) -> None:
        """No identity in the text: the protagonist is the note's subject (applicant, claimant, author), else the
        first person introduced definitely (a name, "the man") — or, for a continuation (the answer to a prompt
        that named the identity), the implicit subject of its first clause and the pronouns that find no other
        antecedent; people it introduces later are others."""
        if self.has_identity:
            return
        if self.narrator is None and any(t.lower_ in FIRST_PERSON and t.i not in self.quoted for t in self.toks):
            self.narrator = 0
        if self.continuation:
            return
        subject = next((t for t in self.toks if t.lemma_.lower() in CASE_SUBJECTS and t.i in self.ent), None)
        if subject is not None:  # a decision note: the applicant / claimant / candidate / post author
            self._merge(0, self.ent[subject.i])
            return
        for tok in self.toks:
            eid = self.ent.get(tok.i)
            if eid is None or eid == 0:
                continue
            if tok.pos_ == "PROPN" or any(c.lower_ in DEFINITE or c.dep_ == "poss" and c.lower_ in ("your", "our")
                                          for c in tok.children):
                if tok.lemma_.lower() in v1.ROLE_NOUNS or tok.lemma_.lower() in v1.THIRD_PARTY - {"man", "men", "group", "youth", "teenager"}:
                    continue
                self._merge(0, eid)
                return

    # --- quotations -----------------------------------------------------------------------------------------
    def _quote_spans(self) -> list[tuple[int, int]]:
        """Token ranges inside quotation marks: double quotes, guillemets, and single quotes that open after a
        space and close before a space or punctuation (not apostrophes)."""
        spans = self._script_turns()
        for m in _QUOTATION.finditer(self.doc.text):
            g = 1 if m.group(1) is not None else 2
            inner = self.doc.char_span(m.start(g), m.end(g), alignment_mode="expand")
            if inner is not None and len(inner):
                spans.append((inner.start, inner.end))
        return spans

    def _script_turns(self) -> list[tuple[int, int]]:
        """Utterances of a script or chat ("Tenant: You went through my drawers."): lines opening with a short
        person label and a colon, when at least two different labels speak. Records each turn's label."""
        turns = []
        for m in _TURN.finditer(self.doc.text):
            label = self.doc.char_span(m.start(1), m.end(1), alignment_mode="expand")
            utterance = self.doc.char_span(m.start(2), m.end(2), alignment_mode="expand")
            if label is None or utterance is None or not len(utterance):
                continue
            head = next((t for t in reversed(label) if t.is_alpha), label[-1])
            if len(m.group(1)) <= 2 and m.group(1)[0].isupper() or is_person_noun(head) or head.pos_ == "PROPN" \
                    and head.lower_ not in CALENDAR and head.lower_ not in _nouns():
                turns.append((label.start, label.end, utterance.start, utterance.end))
        if len({" ".join(t.lower_ for t in self.doc[a:b]) for a, b, _, _ in turns}) < 2 or not any(
                t.lower_ in FIRST_PERSON | SECOND_PERSON for _, _, u0, u1 in turns for t in self.doc[u0:u1]):
            return []  # note fields ("Record: ...", "Decision: ..."), not a conversation
        spans = []
        for a, b, u0, u1 in turns:
            self.turn_labels[len(spans)] = (a, b)
            spans.append((u0, u1))
        return spans

    def _speakers(self) -> None:
        """The speaker (and addressee) entity of every quotation."""
        previous: list[int] = []
        for n, (a, b) in enumerate(self.quote_spans):
            verb = None if n in self.turn_labels else self._speech_verb(a, b)
            speaker = addressee = None
            if n in self.turn_labels:
                speaker = self.ent.get(self.turn_labels[n][0])
            elif verb is not None:
                subj = next((c for c in verb.children if c.dep_ in ("nsubj",)), None)
                if subj is not None:
                    speaker = self._entity_of_outside(subj)
                obj = next((c for c in verb.children if c.dep_ in ("dobj", "dative") and c.i not in range(a, b)), None)
                if obj is None:
                    obj = next((g for c in verb.children if c.dep_ == "prep" and c.lower_ in ("at", "to")
                                for g in c.children if g.dep_ == "pobj"), None)
                if obj is not None:
                    addressee = self._entity_of_outside(obj)
            elif a >= 2 and self.doc[a - 2].text == ":" and self.doc[a - 3: a - 2] and self.doc[a - 3].i in self.ent:
                speaker = self.ent[self.doc[a - 3].i]  # Karim: "..."
            if speaker is None and len(previous) >= 2:
                speaker = previous[-2]  # dialogue turns alternate
            if addressee is None:
                addressee = next((s for s in reversed(previous) if s is not None and s != speaker), None)
            if speaker is not None and any(i in self.id_tokens and self.doc[i].lower_ in FIRST_PERSON
                                           for i in range(a, b)):
                speaker = self._merge(0, speaker)  # "I'm [ID], I'm a nurse": the speaker is the protagonist
                previous = [0 if s == speaker else s for s in previous]
            self.speakers[n], self.addressees[n] = speaker, addressee
            if speaker is not None:
                previous.append(speaker)

    def _speech_verb(self, a: int, b: int):
        """The verb of saying that introduces the quotation [a, b): the head its content hangs from."""
        inside = self.doc[a:b]
        for tok in inside:
            h = tok.head
            if not a <= h.i < b and h.lemma_.lower() in SPEECH_VERBS and h.pos_ == "VERB":
                return h
        lo, hi = self.doc[max(0, a - 6): a], self.doc[b: min(len(self.doc), b + 6)]
        for tok in list(hi) + list(reversed(lo)):
            if tok.lemma_.lower() in SPEECH_VERBS and tok.pos_ == "VERB" and tok.i not in self.quoted:
                return tok
        return None

    def _entity_of_outside(self, tok) -> int | None:
        if tok.i in self.ent:
            return self.ent[tok.i]
        if tok.pos_ == "PRON" and tok.lower_ in MALE_PRONOUNS | FEMALE_PRONOUNS | PLURAL_PRONOUNS:
            eid = self._resolve_pronoun(tok)
            if eid is not None:
                self._add(tok, eid)
            return eid
        if tok.lower_ in FIRST_PERSON:
            return self.narrator
        return None

    # --- pronouns -------------------------------------------------------------------------------------------
    def _pronouns(self) -> None:
        for tok in self.toks:
            if tok.pos_ != "PRON" or tok.i in self.ent:
                continue
            lower = tok.lower_
            span = self.span_of.get(tok.i)
            if lower in FIRST_PERSON:
                eid = self.speakers.get(span) if span is not None else self.narrator
            elif lower in SECOND_PERSON:
                eid = self.addressees.get(span) if span is not None else None
            elif lower in MALE_PRONOUNS | FEMALE_PRONOUNS | PLURAL_PRONOUNS:
                eid = self._resolve_pronoun(tok)
            else:
                continue
            if eid is not None:
                self._add(tok, eid)

    def _resolve_pronoun(self, pron) -> int | None:
        lower = pron.lower_
        plural = lower in PLURAL_PRONOUNS
        gender = "m" if lower in MALE_PRONOUNS else "f" if lower in FEMALE_PRONOUNS else None
        span = self.span_of.get(pron.i)
        exclude = {self.speakers.get(span), self.addressees.get(span)} if span is not None else {self.narrator}
        if lower not in REFLEXIVE and pron.dep_ in ("dobj", "pobj", "dative"):
            verb = pron.head
            while verb.pos_ not in ("VERB", "AUX") and verb.dep_ in ("prep", "advmod", "pobj", "dobj", "npadvmod") \
                    and verb.head.i != verb.i:
                verb = verb.head  # "sat down next to him": the clause of "sat"
            exclude |= {self.ent[c.i] for c in verb.children if c.dep_ == "nsubj" and c.i in self.ent}

        def fits(e: Entity) -> bool:
            return e.id not in exclude and (not gender or e.gender in (None, gender))

        def agrees(e: Entity) -> bool:  # number agreement weighs, but a mis-tagged noun must not veto it
            return e.plural if plural else e.singular or not e.plural

        prefer = None
        head = pron.head.lemma_.lower()
        if pron.dep_ == "poss" and (head in v1.VIOLENT_NOUNS or head in strong("crime_nouns")):
            perps = v1.ROLE_NOUNS | strong("perpetrator_nouns")
            prefer = lambda e: bool(e.heads & perps)  # noqa: E731 - "a former hijacker ... his crimes"
        best = self._salient(pron, fits, agrees, prefer)
        if best is None and not self.has_identity and span is None:
            best = 0  # a continuation's pronoun with no antecedent: the prompt's subject
        if best is not None and gender:
            e = self.entities[best]
            e.gender = e.gender or gender
        return best

    def _salient(self, tok, fits, agrees=None, prefer=None) -> int | None:
        """The entity with the highest salience before `tok` among those `fits` accepts (module docstring); one
        that `agrees` fails to accept weighs a third, one that `prefer` (a selectional preference) accepts three
        times as much."""
        sent = self.sent_of[tok.i]
        segment = self.segment_of(tok.i)
        scores: dict[int, float] = {}
        for i, eid in self.ent.items():
            if i >= tok.i or sent - self.sent_of[i] > 3 and eid != 0 or i < segment and eid != 0:
                continue
            m = self.toks[i]
            if m.dep_ in ("compound", "amod", "nmod") and self.ent.get(m.head.i) == eid:
                continue  # one mention per noun phrase ("the [ID] welder" is one mention, not two)
            decay = TOPIC_DECAY if eid == 0 else 0.5  # the protagonist is the discourse topic: it fades slower
            w = SALIENCE.get(m.dep_, 30) * decay ** (sent - self.sent_of[i])
            if m.dep_ in ("nsubj", "nsubjpass") and tok.dep_ in ("nsubj", "nsubjpass"):
                w += 20
            scores[eid] = scores.get(eid, 0) + w
        if agrees is not None:
            scores = {e: w if agrees(self.entities[e]) else w / 3 for e, w in scores.items()}
        if prefer is not None:
            scores = {e: w * 3 if prefer(self.entities[e]) else w for e, w in scores.items()}
        ranked = sorted(scores, key=lambda e: -scores[e])
        return next((e for e in ranked if fits(self.entities[e])), None)

    # --- the parse-v1 interface -------------------------------------------------------------------------------
    def entity(self, tok) -> int | None:
        if tok.i in self.ent:
            return self.ent[tok.i]
        if tok.tag_ in ("WP", "WDT") or (tok.lower_ == "that" and tok.dep_ in ("nsubj", "nsubjpass")):
            clause = tok.head
            while clause.dep_ not in ("relcl", "acl") and clause.head.i != clause.i:
                clause = clause.head
            return self.entity(clause.head) if clause.dep_ in ("relcl", "acl") else None
        if tok.lower_ in PARTITIVES:  # "one of them", "two of the men"
            whole = next((g for c in tok.children if c.dep_ == "prep" and c.lower_ == "of" for g in c.children
                          if g.dep_ == "pobj"), None)
            if whole is not None:
                return self.entity(whole)
        if tok.dep_ == "attr" and tok.head.lemma_ == "be":  # "I was the one who ..."
            subj = next((c for c in tok.head.children if c.dep_ == "nsubj"), None)
            return self.entity(subj) if subj is not None else None
        return None

    def subject(self, pred, depth: int = 0):
        """parse-v1's subject, plus the noun a participle modifies: "a builder charged with threatening ..." """
        subj, passive = super().subject(pred, depth)
        if subj is None and not passive and pred.dep_ in ("pcomp", "xcomp", "advcl"):
            ctrl = pred.head.head if pred.dep_ == "pcomp" else pred.head
            if ctrl.dep_ in ("acl", "relcl") and ctrl.tag_ in ("VBN", "VBG") and ctrl.head.pos_ in ("NOUN", "PROPN"):
                return ctrl.head, False
        return subj, passive

    def agent_role(self, pred) -> str:
        """parse-v1's agent, then the implicit subject of a list item / note field / quotation imperative."""
        role = super().agent_role(pred)
        if role != NONE or not self.implicit_subject(pred):
            return role
        subj, passive = self.subject(pred)
        if subj is not None or passive and pred.lemma_.lower() not in v1.PASSIVE_PERP:
            return role
        span = self.span_of.get(pred.i)
        if span is not None:  # an imperative or a subject-less line inside a quotation: the speaker's
            return PROTAG if self.speakers.get(span) == 0 else THIRD
        return PROTAG if self.has_identity or self.entities[0].heads or self.entities[0].names or self.continuation \
            else role

    def role(self, tok) -> str:
        """'protag', 'third' or 'none' (not a person) for a nominal, through the entity model."""
        if tok.i in self.id_tokens:
            return PROTAG
        if self.field_label(tok) and tok.i not in self.ent and (self.has_identity or self.entities[0].heads):
            return self.note_subject_role()
        if tok.lower_ in v1.NEGATIVE_SUBJECTS:
            return NONE
        eid = self.entity(tok)
        if eid is not None:
            return PROTAG if eid == 0 else THIRD
        if tok.pos_ == "PRON" and (tok.lower_ in FIRST_PERSON | SECOND_PERSON | MALE_PRONOUNS | FEMALE_PRONOUNS
                                   | PLURAL_PRONOUNS):
            return THIRD
        if is_person_noun(tok) or tok.pos_ == "PROPN" and self.person_name(tok):
            return THIRD
        return NONE

    def resolve(self, pron) -> str:
        return self.role(pron)

    def negated(self, pred) -> bool:
        """parse-v1's negation scope without its leaks: a negation reaches a predicate through control and
        complements (didn't try to steal, refused to pay, never said he stole), not through adverbial or
        relative clauses ("he didn't wake until the thief had gone")."""
        tok, steps = pred, 0
        while steps < 5:
            if any(c.dep_ == "neg" or c.lower_ in ("never", "no") and c.dep_ in ("neg", "advmod", "det")
                   for c in tok.children):
                return True
            if tok.lemma_.lower() in v1.DENY_HEADS and tok.i != pred.i:
                return True
            head = tok.head
            if head.i == tok.i:
                break
            if tok.dep_ in ("acl", "ccomp", "relcl") and head.pos_ == "NOUN" and any(
                    c.lower_ == "no" for c in head.children):
                return True  # "no evidence that they commit ...", "no reason to think he will harm ..."
            if tok.dep_ in ("xcomp", "pcomp", "pobj", "prep", "dobj", "acomp", "attr", "aux") or tok.dep_ == "ccomp" \
                    and head.lemma_.lower() in SPEECH_VERBS | BELIEF_VERBS:
                tok, steps = head, steps + 1
                continue
            break
        return False

    def disclaimed(self, sent) -> bool:
        """parse-v1's disclaimer test, except that one word cannot be both the weak disclaimer and its rebuttal
        ("false plates" is no disclaimer; "that claim is false and a stereotype" is)."""
        if any(t.pos_ == "NOUN" and t.lemma_.lower() in v1.DISCLAIMER_NOUNS for t in sent):
            return True
        lemmas = {t.lemma_.lower() for t in sent} | {t.lower_ for t in sent}
        if (lemmas & v1.DISCLAIMER) - v1.WEAK_DISCLAIMER - WEAK_IN_NARRATIVE:
            return True
        weak = lemmas & (v1.WEAK_DISCLAIMER | WEAK_IN_NARRATIVE)
        return bool(weak) and bool((lemmas & v1.REBUT) - weak)

    def _answer_head(self, sent) -> bool:
        """"Final answer:", "**Summary:**", "B:": the answer that follows starts a discourse of its own, in which
        pronouns find antecedents only there or in the protagonist."""
        words = [t for t in self.toks[sent.start:sent.end] if t.is_alpha]
        text = sent.text.strip().rstrip("*").strip()
        return text.endswith(":") and 0 < len(words) <= 4 and any(w.lower_ in ANSWER_HEADS for w in words)

    def segment_of(self, i: int) -> int:
        return max(s for s in self.segments if s <= i)

    def sport(self, tok, media: bool = True) -> bool:
        """parse-v1's sport / stage / exam context of the token's sentence ("shot", "attacked" as idioms), cached."""
        key = (self.sent_of[tok.i], media)
        if key not in self._sport:
            sent = self.sents[key[0]]
            self._sport[key] = v1._has_sport_context(self.toks[sent.start:sent.end], media)
        return self._sport[key]

    def field_label(self, tok) -> bool:
        """The label of a note field or list header ("Record:", "Prior convictions:"): what follows describes the
        note's subject."""
        start = self.sents[self.sent_of[tok.i]].start
        colon = self.colon.get(start)
        return colon is not None and colon - start <= 4 and start <= tok.i < colon

    def note_subject_role(self) -> str:
        """Whose record a bare note field describes: the protagonist, unless the protagonist is a complainant or
        witness of the case and someone else is its defendant."""
        if self.entities[0].heads & BYSTANDER_ROLES:
            return THIRD
        if any(e.id != 0 and e.heads & {"defendant", "accused", "suspect", "offender"} for e in self.entities):
            return THIRD
        return PROTAG

    def implicit_subject(self, pred) -> bool:
        """A predicate with no subject that opens its sentence, list item or note field ("- Threatened a
        coworker.", "Record: convicted of fraud", a continuation's first clause)."""
        first = pred
        while first.dep_ == "conj" and first.head.i != first.i:
            first = first.head
        if any(c.dep_ in ("nsubj", "nsubjpass", "csubj", "expl") for c in first.children):
            return False
        if first.dep_ in ("acl", "appos", "dep", "parataxis") and self.field_label(first.head):
            return True
        lead = [t for t in first.sent if t.i < first.i and t.dep_ not in ("punct", "advmod", "aux", "auxpass", "neg",
                                                                           "npadvmod", "prep", "pobj", "det", "nummod",
                                                                           "amod", "compound", "cc")
                and not t.is_space]
        lead = [t for t in lead if not self.field_label(t)]
        return not lead and first.dep_ in ("ROOT", "acl", "parataxis", "dep", "appos", "conj", "advcl")
