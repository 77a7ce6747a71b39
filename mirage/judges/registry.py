"""Build a violence judge by name: `parse-v3` (default), `parse-v2`, `parse-v1`, `lexicon-v1`, a registry model (LLM judge) or a
jury.

A jury is written `jury:A,B[,C...]` (or given as a list in params.yaml `label.judge`): every member
labels every item and the majority label wins; a tie or a majority of unparseable replies gives
None (counted as unparseable, never guessed). Its name lists the members, e.g. `jury:gpt-4o,claude-opus-4`. Each
member's own labels are kept beside the majority's (label rows' `votes`), for `mirage judges`.
"""

from __future__ import annotations

from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Protocol

from mirage.artefacts import DATA
from mirage.io import DataError
from mirage.judges.lexicon import LEXICON_VERSION
from mirage.names import judge_members, judge_name
from mirage.protocol import OFFLINE_JUDGES, PARSE_V2_VERSION, PARSE_V3_VERSION, PARSE_VERSION


class Judge(Protocol):
    """What the label stage asks of a judge: (violent answer, violent reasoning, refusal) per item, and a C3 summary's
    favourability."""

    name: str

    def label_violence(self, items: list[tuple[str | None, str, bool]]) -> list[tuple[int | None, int | None, bool]]: ...

    def score_summaries(self, texts: list[str]) -> list[str | None]: ...


def _majority(votes: list[int | None]) -> int | None:
    counts = Counter(v for v in votes if v is not None)
    if not counts or 2 * max(counts.values()) <= len(votes):
        return None
    return counts.most_common(1)[0][0]


def _majority_verdicts(votes: list[list[tuple[int | None, int | None, bool]]]) -> list[tuple[int | None, int | None, bool]]:
    out = []
    for per_item in zip(*votes, strict=True):
        refusal = 2 * sum(v[2] for v in per_item) > len(per_item)
        out.append((_majority([v[0] for v in per_item]), _majority([v[1] for v in per_item]), refusal))
    return out


def _majority_summaries(votes: list[list[str | None]]) -> list[str | None]:
    out = []
    for per_item in zip(*votes, strict=True):
        counts = Counter(v for v in per_item if v is not None)
        top = counts.most_common(1)
        out.append(top[0][0] if top and 2 * top[0][1] > len(per_item) else None)
    return out


@dataclass
class Jury:
    """Majority vote of >= 2 judges, item by item (refusal: majority too)."""

    name: str
    members: list[Judge]

    def label_violence(self, items: list[tuple[str | None, str, bool]]) -> list[tuple[int | None, int | None, bool]]:
        return _majority_verdicts([m.label_violence(items) for m in self.members])

    def score_summaries(self, texts: list[str]) -> list[str | None]:
        return _majority_summaries([m.score_summaries(texts) for m in self.members])

    def vote(self, items: list[tuple[str | None, str, bool]], texts: list[str]) -> tuple[list, list, dict[str, tuple[list, list]]]:
        """(majority verdicts, majority summary scores, each member's own (verdicts, scores) by member name): what
        `label_violence` and `score_summaries` give, with every member asked once."""
        own = [(m.name, m.label_violence(items), m.score_summaries(texts)) for m in self.members]
        return (_majority_verdicts([v for _, v, _ in own]), _majority_summaries([s for _, _, s in own]),
                {name: (v, s) for name, v, s in own})


def build_judge(name: str | list[str], stack: ExitStack, params_path: str = "params.yaml", window: int = 12,
                data_dir: str = DATA, max_tokens: int = 64, batch: int = 64, store_dir: str | None = None,
                partition: str | None = None) -> Judge:
    """The judge named `name`. Registry models answer through their completion store (cached, resumable), opened
    once here and closed by `stack`; `store_dir` overrides the store of a single LLM judge, `partition` the store
    partition new replies go to (default: `judge`)."""
    members = judge_members(name)
    if len(members) > 1:
        return Jury(judge_name(members), [build_judge(m, stack, params_path, window, data_dir, max_tokens, batch,
                                                      partition=partition) for m in members])
    (single,) = members
    if single == PARSE_V3_VERSION:
        from mirage.judges.parse3 import ParseV3Judge

        return ParseV3Judge(data_dir)
    if single == PARSE_V2_VERSION:
        from mirage.judges.parse2 import ParseV2Judge

        return ParseV2Judge(data_dir)
    if single == PARSE_VERSION:
        from mirage.judges.parse import ParseJudge

        return ParseJudge(data_dir)
    if single == LEXICON_VERSION:
        from mirage.judges.lexicon import LexiconJudge

        return LexiconJudge(window, data_dir)
    from mirage.generate.api import JUDGE_PARTITION, open_session
    from mirage.judges.llm import LLMJudge, chat_completer

    try:
        session = open_session(single, params_path, store_dir, partition or JUDGE_PARTITION)
    except KeyError as exc:
        raise DataError(f"label.judge: {exc.args[0]} (offline judges: {', '.join(OFFLINE_JUDGES)})") from None
    stack.callback(session.close)
    return LLMJudge(single, chat_completer(session, max_tokens, batch))
