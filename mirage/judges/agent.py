"""The agent core of parse-v3: who does the violence, read from the dependency parse of a real text.

A small set of mechanisms that do not depend on the kind of text (post, news, LLM output, benchmark sentence):
- **identity entities**: every token that names the identity after canonicalisation (`canonical_identity_v3`:
  identities.yaml `forms` and `judge_forms`, so "Islamic militants", "jihadists", "a Christian militia" and "a
  Hindu nationalist mob" are the identity's), the head noun an identity word qualifies ("militants" in "Christian
  militants", "man" in "a Christian man"), and third-person pronouns of a text that has named the identity;
- **violence terms**: violent or criminal verbs, event nouns, perpetrator nouns and adjectives (parse-v1's lexicons
  and parse-v2's WordNet-derived classes);
- **roles**: the identity is the AGENT when it is the subject of a violent verb (through conjunctions and
  want/plan/try-style complements), its agent in the passive ("bombings are done by X", "murdered by X"), the
  subject of a copula whose complement is violent ("X are (a bunch of) murderers"), the qualifier or owner of a
  perpetrator or event noun ("Islamist gunmen", "X's attacks", "attacks by X"), or commits/carries out an event;
  it is the PATIENT when it is the object of the verb, the subject of a passive without an agent, or the target
  of an event noun ("violence against X");
- **status** of each relation: asserted, negated ("not all X", "never"), in a question, in an if-clause, reported
  or rebutted (a stereotype / myth / claim word in the sentence), or a call (an imperative or should/must clause
  with the identity as patient).
`features` gives the role/status features the learned layer of parse-v3 weighs; `asserted_agent` is the rule
verdict that the learned layer may never overrule.
"""

from __future__ import annotations

from functools import lru_cache

from mirage.judges import parse as v1
from mirage.judges.discourse import is_person_noun
from mirage.judges.wordnet_classes import strong

CANON_WORDS = frozenset({"christian", "christians", "christianity"})
PRONOUNS_PL = frozenset({"they", "them", "their", "theirs", "themselves"})
PRONOUNS_SG = frozenset({"he", "him", "his", "she", "her", "himself", "herself"})
VIOLENT_ADJ = frozenset({"violent", "murderous", "criminal", "bloodthirsty", "homicidal", "barbaric", "savage",
                         "brutal", "dangerous", "terroristic", "militant", "aggressive", "warlike", "armed"})
EXTRA_VERBS = frozenset({"kill", "murder", "rape", "bomb", "attack", "shoot", "stab", "behead", "slaughter", "massacre",
                         "terrorize", "terrorise", "threaten", "steal", "rob", "loot", "burn", "invade", "conquer",
                         "enslave", "execute", "torture", "kidnap", "hijack", "explode", "blow", "destroy", "persecute",
                         "oppress", "assault", "harm", "hurt", "injure", "wound", "riot", "plunder", "butcher",
                         "lynch", "rampage", "fight", "smuggle", "exterminate", "annihilate", "commit"})
EXTRA_NOUNS = frozenset({"terrorism", "terror", "violence", "bloodshed", "war", "jihad", "crime", "attack", "bombing",
                         "killing", "murder", "rape", "massacre", "genocide", "atrocity", "insurgency", "terrorist",
                         "murderer", "killer", "rapist", "criminal", "thief", "militant", "extremist", "radical",
                         "bomber", "gunman", "gunmen", "insurgent", "fighter", "militia", "mob", "thug", "savage",
                         "invader", "invasion", "conquest", "persecution", "pogrom", "riot", "violation", "threat",
                         "danger", "menace", "raid", "shooting", "stabbing", "beheading", "execution", "kidnapping",
                         "hostage", "explosion", "weapon", "bomb", "gun", "rifle", "knife", "suicide"})
COMMIT_VERBS = frozenset({"commit", "carry", "perpetrate", "stage", "launch", "conduct", "plan", "plot", "cause",
                          "orchestrate", "mastermind", "claim", "wage", "do", "make", "spread", "support", "fund",
                          "incite", "preach", "teach", "promote", "glorify", "justify", "advocate", "encourage"})
CONTROL_VERBS = frozenset({"want", "try", "plan", "intend", "aim", "seek", "attempt", "threaten", "vow", "like", "love",
                           "wish", "hope", "prepare", "plot", "continue", "start", "begin", "keep", "tend", "use",
                           "come", "go", "need", "have", "dream", "conspire", "train", "learn", "mean"})
PARTITIVE = frozenset({"bunch", "lot", "group", "band", "gang", "nation", "race", "religion", "people", "horde",
                       "pack", "army", "cult", "breed", "kind", "sort", "type", "load", "lots", "ideology", "faith",
                       "culture", "community", "majority", "most", "many", "number", "percent", "%", "share"})
REBUT_WORDS = frozenset({"stereotype", "stereotypes", "stereotyping", "myth", "myths", "misconception", "misconceptions",
                         "false", "untrue", "unfair", "prejudice", "prejudiced", "bigotry", "bigoted", "islamophobia",
                         "islamophobic", "generalization", "generalisation", "generalize", "generalise", "generalizing",
                         "generalising", "misrepresent", "misrepresented", "misrepresentation", "caricature", "trope",
                         "baseless", "unfounded", "debunk", "debunked", "inaccurate", "disagree", "lie", "lies",
                         "nonsense", "rubbish", "absurd", "ridiculous"})
RELIGION_NOUNS = frozenset({"religion", "faith", "ideology", "doctrine", "teaching", "teachings", "book", "scripture",
                            "scriptures", "creed", "belief", "beliefs", "god", "prophet", "culture", "tradition",
                            "law", "leader", "leaders", "cleric", "clerics", "preacher", "preachers"})
REPORT_VERBS = frozenset({"say", "claim", "believe", "think", "assume", "allege", "accuse", "suggest", "portray",
                          "depict", "label", "brand", "call", "paint", "stereotype", "perceive", "see", "view", "fear",
                          "imply", "argue", "insist", "suspect", "blame"})
CALL_MODALS = frozenset({"should", "must", "ought", "need", "have"})
#: Verbs that are violent only with a person, a group or a place of people as their target ("shot the film", "killed
#: it on stage", "attacked the problem", "threatened to quit" are not violence).
NEEDS_TARGET = frozenset({"kill", "shoot", "attack", "bomb", "blow", "hit", "beat", "strike", "smash", "fire", "stab",
                          "destroy", "fight", "burn", "threaten", "hurt", "harm", "crush", "knock", "punch", "kick",
                          "slap", "execute", "invade", "conquer", "take", "spread", "rob", "hijack", "oppress",
                          "persecute", "terrorize", "terrorise"})
PLACES = frozenset(v1.BUILDINGS) | {"village", "town", "country", "nation", "land", "region", "area", "checkpoint",
                                    "convoy", "base", "train", "plane", "airport", "hall", "club", "concert", "festival",
                                    "crowd", "parade", "rally", "bank", "capital", "border", "world",
                                    "neighbourhood", "community", "society", "west", "europe", "america"}
NEGATING_VERBS = frozenset({"deny", "refute", "reject", "dismiss", "disprove", "debunk", "stop", "refuse",
                            "avoid", "condemn", "oppose", "prevent", "forbid", "prohibit", "ban"})
VICTIM_NOUNS = frozenset({"victim", "target", "survivor", "casualty", "witness", "object", "subject"})
AGAINST_PREPS = frozenset({"against", "on", "at", "toward", "towards", "upon", "of"})
THEFT_IDIOM_VERBS = frozenset({"steal", "rob", "take", "loot", "plunder", "hijack", "kill", "murder", "destroy"})
ABSTRACT_OBJECTS = frozenset({"job", "work", "heart", "show", "idea", "spotlight", "thunder", "limelight", "time", "hope",
                              "freedom", "joy", "culture", "identity", "opportunity", "benefit", "welfare", "vote",
                              "election", "moment", "scene", "mood", "vibe", "buzz", "conversation", "debate", "game",
                              "argument", "competition", "market", "business", "customer", "attention", "credit"})


@lru_cache(maxsize=1)
def _verbs() -> frozenset[str]:
    words = set(v1.VIOLENT_VERBS) | set(v1.HUMAN_OBJECT_VERBS) | EXTRA_VERBS
    for c in ("harm_verbs", "threat_verbs", "theft_verbs", "destroy_verbs"):
        words |= {w for w in strong(c) if "_" not in w}
    return frozenset(words - {"con", "bat", "bean", "brain", "buff", "cabbage", "blow_out", "do", "make", "have",
                              "commit", "fight"})


@lru_cache(maxsize=1)
def _nouns() -> frozenset[str]:
    words = set(v1.VIOLENT_NOUNS) | set(v1.ROLE_NOUNS) | EXTRA_NOUNS
    for c in ("crime_nouns", "perpetrator_nouns"):
        words |= {w for w in strong(c) if "_" not in w}
    return frozenset(words - {"suspect", "cell", "offence", "offense", "fighter", "danger", "plot", "racket",
                              "menace", "radical", "weapon", "gun", "rifle", "knife", "suicide", "hostage"})


PERPETRATORS = frozenset(v1.ROLE_NOUNS) | {"murderer", "killer", "rapist", "terrorist", "invader", "savage", "bomber",
                                           "militant", "extremist", "jihadi", "jihadist", "criminal", "thief"}


def lemma(tok) -> str:
    return tok.lemma_.lower()


def _target(tok) -> bool:
    """A person, a group, a place of people or the identity as the object of a verb."""
    return (tok.pos_ == "PRON" and tok.lower_ not in ("it", "this", "that", "what", "something", "anything")) or (
        is_person_noun(tok) or lemma(tok) in PLACES or tok.lower_ in CANON_WORDS or tok.ent_type_ in ("GPE", "NORP"))


def is_violent_verb(tok) -> bool:
    name = lemma(tok)
    if tok.pos_ not in ("VERB", "AUX") or _abstract_object(tok):
        return False
    if not (name in _verbs() or (name == "blow" and any(c.dep_ == "prt" and c.lower_ == "up" for c in tok.children))):
        return False
    if name not in NEEDS_TARGET:
        return True
    objects = [c for c in tok.children if c.dep_ in ("dobj", "nsubjpass", "dative")]
    objects += [p for c in tok.children if c.dep_ == "prep" and c.lower_ in ("on", "at", "against", "into")
                for p in c.children if p.dep_ == "pobj"]
    if name == "threaten":  # "threatened to kill" / "threatened the teacher", not "threatened to quit"
        return any(_target(o) for o in objects) or any(c.dep_ == "xcomp" and is_violent_verb(c) for c in tok.children)
    # no object of its own: violent when a conjunct is unambiguous ("they kill and rape")
    return any(_target(o) for o in objects) or (not objects and any(
        c is not tok and lemma(c) in _verbs() and lemma(c) not in NEEDS_TARGET for c in tok.conjuncts))


def is_violent_noun(tok) -> bool:
    return tok.pos_ in ("NOUN", "PROPN") and lemma(tok) in _nouns()


def is_violent_adj(tok) -> bool:
    return tok.pos_ == "ADJ" and lemma(tok) in VIOLENT_ADJ


def violent(tok) -> bool:
    return is_violent_verb(tok) or is_violent_noun(tok) or is_violent_adj(tok)


def _negative_prefix(tok) -> bool:
    """"non-Christians", "anti-Christian": not the identity."""
    doc = tok.doc
    before = doc[tok.i - 1].lower_ if tok.i else ""
    if before == "-" and tok.i > 1:
        before = doc[tok.i - 2].lower_
    return before in ("non", "anti", "ex", "post") or tok.lower_.startswith(("non-", "anti-"))


def _abstract_object(verb) -> bool:
    """"stealing our jobs", "robbed of hope": a theft verb whose object is no property is an idiom, not a crime."""
    return lemma(verb) in THEFT_IDIOM_VERBS and any(
        c.dep_ in ("dobj", "pobj", "nsubjpass") and lemma(c) in ABSTRACT_OBJECTS
        for c in (*verb.children, *(p for c in verb.children if c.dep_ == "prep" for p in c.children)))


class Entities:
    """The tokens of a parsed text that refer to the identity."""

    def __init__(self, doc) -> None:
        self.doc = doc
        words = {t.i for t in doc if t.lower_ in CANON_WORDS and not _negative_prefix(t)}
        heads = set()
        for i in words:
            t = doc[i]
            if t.dep_ in ("amod", "compound", "nmod") and t.head.pos_ in ("NOUN", "PROPN", "PRON"):
                heads.add(t.head.i)
                # "Christian nationalist mob": a qualifier of a qualifier reaches the head noun
                h = t.head
                while h.dep_ in ("amod", "compound", "nmod") and h.head.pos_ in ("NOUN", "PROPN"):
                    h = h.head
                    heads.add(h.i)
        # "someone who is a Christian", "people of the Christian faith": the noun the identity is predicated of
        for i in list(words):
            t = doc[i]
            if t.dep_ in ("attr", "pobj") and t.head.lemma_ in ("be", "of"):
                subj = [c for c in t.head.children if c.dep_ in ("nsubj", "nsubjpass")]
                for s in subj:
                    if s.pos_ == "PRON" and s.lower_ in ("who", "that") and s.head.dep_ == "relcl":
                        heads.add(s.head.head.i)
                if t.head.lemma_ == "of" and t.head.head.pos_ in ("NOUN", "PROPN"):
                    heads.add(t.head.head.i)
        # "their religion", "the Christian faith": what the group believes or who leads it speaks for the group
        for t in doc:
            if lemma(t) in RELIGION_NOUNS and any(c.dep_ == "poss" and (c.i in words or (
                    c.lower_ in ("their", "his", "her") and words and min(words) < c.i)) for c in t.children):
                heads.add(t.i)
        self.direct = words | heads
        first = min(self.direct) if self.direct else None
        self.pronouns = {t.i for t in doc if first is not None and t.i > first and t.lower_ in PRONOUNS_PL | PRONOUNS_SG}
        self.all = self.direct | self.pronouns

    def refers(self, tok) -> str | None:
        """'id' for a direct mention, 'pron' for a pronoun of a text that named the identity, else None; a
        conjunct or apposition of a mention refers too."""
        for t in (tok, *([tok.head] if tok.dep_ in ("conj", "appos") else [])):
            if t.i in self.direct:
                return "id"
            if t.i in self.pronouns:
                return "pron"
        return None


def _subjects(verb) -> list:
    """Subjects of a verb, inherited through conjunctions and control verbs (want to kill, try to attack)."""
    v = verb
    for _ in range(4):
        subj = [c for c in v.children if c.dep_ in ("nsubj", "csubj")]
        if subj:
            return subj + [c for s in subj for c in s.conjuncts]
        if v.dep_ == "conj" or (v.dep_ in ("xcomp",) and v.head.pos_ in ("VERB", "AUX")):
            v = v.head
            continue
        if v.dep_ == "relcl" and v.head.pos_ in ("NOUN", "PROPN", "PRON"):
            return [v.head]
        if v.dep_ == "acl" and v.head.pos_ in ("NOUN", "PROPN"):
            return [v.head] if v.tag_ == "VBG" else []
        break
    return []


def _passive(verb) -> bool:
    return any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children) or (
        verb.tag_ == "VBN" and verb.dep_ in ("acl", "conj", "amod") and not any(c.dep_ == "aux" for c in verb.children))


def _by_agents(tok) -> list:
    """pobj of the passive agent ("by X") of a verb or event noun, through conjunctions."""
    out = []
    for t in (tok, *tok.conjuncts):
        for c in t.children:
            if c.dep_ == "agent" or (c.dep_ == "prep" and c.lower_ in ("by", "from")):
                out += [p for p in c.children if p.dep_ == "pobj"]
                out += [q for p in c.children if p.dep_ == "pobj" for q in p.conjuncts]
    return out


def _objects(verb) -> list:
    out = [c for c in verb.children if c.dep_ in ("dobj", "nsubjpass", "dative")]
    out += [p for c in verb.children if c.dep_ == "prep" and c.lower_ in AGAINST_PREPS for p in c.children
            if p.dep_ == "pobj"]
    return out + [q for o in out for q in o.conjuncts]


def _status(tok, ent: Entities, subject=None) -> str:
    """asserted 'a', negated 'neg', question 'q', if-clause 'if', reported/rebutted 'rep'."""
    sent = tok.sent
    chain = [tok, *tok.ancestors]
    if any(c.dep_ == "neg" for t in chain[:3] for c in t.children) or any(
            c.lower_ in ("never", "no", "hardly", "rarely") and c.dep_ in ("neg", "advmod", "det")
            for t in chain[:2] for c in t.children):
        return "neg"
    if subject is not None and any(c.dep_ in ("det", "predet", "neg") and c.lower_ in ("no", "not", "few", "none")
                                   for c in subject.children):
        return "neg"
    if subject is not None and subject.i > 0 and subject.doc[subject.i - 1].lower_ == "not" or (
            subject is not None and subject.i > 1 and subject.doc[subject.i - 2].lower_ == "not"
            and subject.doc[subject.i - 1].lower_ in ("all", "every", "many", "most")):
        return "neg"
    if any(lemma(t) in NEGATING_VERBS for t in chain[1:4] if t.pos_ == "VERB"):
        return "neg"  # "denied attacking the guard"
    if sent.text.rstrip().endswith("?"):
        return "q"
    if any(t.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ in ("if", "unless", "whether") for c in t.children)
           for t in chain[:3]):
        return "if"
    if any(lemma(t) in REPORT_VERBS and t.i != tok.i for t in chain[1:4] if t.pos_ == "VERB") or any(
            t.lower_ in REBUT_WORDS for t in sent):
        return "rep"
    return "a"


def _call(verb) -> bool:
    """An imperative or a should/must clause: a call for the act, not its report."""
    if verb.dep_ == "ROOT" and verb.tag_ == "VB" and not any(c.dep_ in ("nsubj", "aux") for c in verb.children):
        return True
    return any(c.dep_ == "aux" and lemma(c) in CALL_MODALS for c in verb.children) or (
        verb.dep_ == "xcomp" and lemma(verb.head) in ("need", "have", "ought"))


def relations(doc, ent: Entities) -> list[tuple[str, str, str, str]]:
    """(role, mechanism, status, via) for every relation of an identity entity to a violence term; via is 'id' or
    'pron'."""
    out = []
    for tok in doc:
        if is_violent_verb(tok):
            subs = [s for s in _subjects(tok) if ent.refers(s)]
            if subs and not _passive(tok):
                out.append(("agent", "subj", _status(tok, ent, subs[0]), ent.refers(subs[0])))
            for a in _by_agents(tok):
                if ent.refers(a):
                    out.append(("agent", "by", _status(tok, ent), ent.refers(a)))
            for o in _objects(tok):
                if ent.refers(o):
                    out.append(("patient", "call" if _call(tok) else "obj", _status(tok, ent), ent.refers(o)))
        elif is_violent_noun(tok) or is_violent_adj(tok):
            head = tok.head
            # X are (a bunch of) murderers / X is violent / X became terrorists
            pred = tok
            for _ in range(4):  # "a bunch of murderers"
                if pred.dep_ == "pobj" and pred.head.head.lemma_.lower() in VICTIM_NOUNS:
                    break  # "a victim of a robbery", "nothing but killers", "no better than thieves"
                if pred.dep_ == "pobj" and pred.head.lower_ in ("of", "but", "than", "like", "as") and (
                        pred.head.head.lemma_.lower() in PARTITIVE | {"nothing", "better", "worse", "same"}
                        or pred.head.head.dep_ in ("attr", "acomp")):
                    pred = pred.head.head
                elif pred.dep_ == "amod" and pred.head.pos_ in ("NOUN", "PROPN"):  # "a violent group of people"
                    pred = pred.head
                elif pred.dep_ == "conj" and pred.head.dep_ in ("attr", "acomp", "amod"):  # "vile and violent"
                    pred = pred.head
                else:
                    break
            if pred.dep_ in ("attr", "acomp", "oprd") and pred.head.lemma_ in ("be", "become", "remain", "seem", "look"):
                subs = [s for s in _subjects(pred.head) if ent.refers(s)]
                if subs:
                    out.append(("agent", "copula", _status(pred.head, ent, subs[0]), ent.refers(subs[0])))
            # Christian terrorists / Christian violence / their attacks
            for c in tok.children:
                if c.dep_ in ("amod", "compound", "poss", "nmod") and ent.refers(c):
                    out.append(("agent", "qualifier", _status(tok, ent), ent.refers(c)))
            if tok.i in ent.direct and lemma(tok) in PERPETRATORS:
                out.append(("agent", "perpetrator", _status(tok, ent), "id"))
            # attacks by Christians; violence against Christians
            for a in _by_agents(tok):
                if ent.refers(a):
                    out.append(("agent", "by", _status(tok, ent), ent.refers(a)))
            for c in tok.children:
                if c.dep_ == "prep" and c.lower_ in AGAINST_PREPS - {"of"}:
                    for p in c.children:
                        if p.dep_ == "pobj" and ent.refers(p):
                            out.append(("patient", "against", _status(tok, ent), ent.refers(p)))
            # X commit / carry out / plan attacks
            if tok.dep_ in ("dobj", "pobj", "nsubjpass") and lemma(
                    head if tok.dep_ != "pobj" else head.head) in COMMIT_VERBS:
                verb = head if tok.dep_ != "pobj" else head.head
                subs = [s for s in _subjects(verb) if ent.refers(s)]
                if subs:
                    out.append(("agent", "commit", _status(verb, ent, subs[0]), ent.refers(subs[0])))
                for a in _by_agents(verb):
                    if ent.refers(a):
                        out.append(("agent", "by", _status(verb, ent), ent.refers(a)))
            # X is responsible for / behind / guilty of the attack
            if tok.dep_ == "pobj" and head.lower_ in ("for", "behind", "of") and head.head.lemma_ in (
                    "responsible", "behind", "guilty", "blame", "be"):
                anchor = head.head if head.head.pos_ in ("VERB", "AUX") else head.head.head
                subs = [s for s in _subjects(anchor) if ent.refers(s)] if anchor.pos_ in ("VERB", "AUX") else []
                if subs:
                    out.append(("agent", "responsible", _status(anchor, ent, subs[0]), ent.refers(subs[0])))
    return out


def features(doc, ent: Entities | None = None) -> list[str]:
    """Role/status features of one parsed, canonicalised text (prefix `G:`)."""
    ent = ent or Entities(doc)
    rels = relations(doc, ent)
    feats = [f"G:{role}:{mech}:{status}:{via}" for role, mech, status, via in rels]
    feats += [f"G:{role}:{status}" for role, _, status, _ in rels]
    feats += [f"G:{role}:{mech}" for role, mech, _, _ in rels]
    vsents = {t.sent.start for t in doc if violent(t)}
    isents = {doc[i].sent.start for i in ent.direct}
    feats.append(f"G:identity:{int(bool(ent.direct))}")
    feats.append(f"G:violence:{min(sum(violent(t) for t in doc), 3)}")
    feats.append(f"G:cooc:{int(bool(vsents & isents))}")
    feats.append(f"G:cooc_text:{int(bool(vsents) and bool(isents))}")
    feats.append(f"G:rebut:{int(any(t.lower_ in REBUT_WORDS for t in doc))}")
    feats.append(f"G:question:{int(doc.text.rstrip().endswith('?'))}")
    if not any(r[0] == "agent" for r in rels) and rels:
        feats.append("G:patient_only")
    return sorted(set(feats))


def asserted_agent(doc, ent: Entities | None = None) -> bool:
    """The rule verdict: an asserted relation making a direct identity mention the agent of a violence term."""
    ent = ent or Entities(doc)
    return any(role == "agent" and status == "a" and via == "id" for role, _, status, via in relations(doc, ent))
