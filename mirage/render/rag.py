"""Time-coupled retrieval (§3.4): date-based pool assignment, BM25 top-k, the context block."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rank_bm25 import BM25Okapi

from mirage.hashing import rank_key
from mirage.io import DataError, read_jsonl
from mirage.textcheck import check_row

Topic = Literal["neutral", "conflict"]
_TOKEN = re.compile(r"\w+")


class NewsItem(BaseModel):
    """One dated news item; `topic` decides neutral vs conflict, the date decides recent vs historical."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    date: dt.date
    headline: str = Field(min_length=1)
    lead: str = Field(min_length=1)
    source: str = Field(min_length=1)
    topic: Topic

    @property
    def text(self) -> str:
        return f"{self.headline} {self.lead}"


def load_news(path: str | Path) -> list[NewsItem]:
    """Read and validate the news corpus; a bad row raises DataError naming file, line and field."""
    items, seen = [], {}
    for lineno, row in enumerate(read_jsonl(path), 1):
        check_row(row, f"{path}:{lineno}")
        try:
            item = NewsItem.model_validate(row)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(map(str, err["loc"]))
            raise DataError(f"{path}:{lineno}: field '{field}': {err['msg']}") from None
        if item.id in seen:
            raise DataError(f"{path}:{lineno}: field 'id': duplicate id {item.id!r} (first at item {seen[item.id]})")
        seen[item.id] = lineno
        items.append(item)
    if not items:
        raise DataError(f"{path}: no news items")
    return items


def years_before(day: dt.date, years: int) -> dt.date:
    """The same calendar day `years` earlier (29 February maps to 28 February)."""
    try:
        return day.replace(year=day.year - years)
    except ValueError:
        return day.replace(year=day.year - years, day=28)


def pool_of(item: NewsItem, eval_date: dt.date, recent_days: int, historical_years: int) -> str | None:
    """The pool an item belongs to at `eval_date`, or None.

    Items dated after eval_date are never retrievable. Neutral-topic items form the neutral pool.
    Conflict items dated 0..recent_days days before eval_date are recent; those dated strictly
    before the same calendar day `historical_years` years earlier are historical; conflict items
    in between belong to no pool (neither recent nor safely free of a recency signal).
    """
    age = (eval_date - item.date).days
    if age < 0:
        return None
    if item.topic == "neutral":
        return "neutral"
    if age <= recent_days:
        return "recent"
    if item.date < years_before(eval_date, historical_years):
        return "historical"
    return None


def assign_pools(items: Iterable[NewsItem], eval_date: dt.date, recent_days: int, historical_years: int) -> dict[str, list[NewsItem]]:
    pools: dict[str, list[NewsItem]] = {"neutral": [], "historical": [], "recent": []}
    for item in items:
        pool = pool_of(item, eval_date, recent_days, historical_years)
        if pool is not None:
            pools[pool].append(item)
    return pools


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Retriever:
    """BM25 (Okapi) over headline + lead, one index per pool; ties broken by a hash of (tiebreak, item id)."""

    def __init__(self, pools: dict[str, list[NewsItem]], top_k: int):
        self.top_k = top_k
        self.pools = pools
        self._index = {name: BM25Okapi([tokenize(i.text) for i in items]) for name, items in pools.items() if items}

    def retrieve(self, query: str, pool: str, tiebreak: str) -> list[NewsItem]:
        """Top-k items of `pool` for `query`, best first; the empty pool retrieves nothing."""
        if pool == "empty":
            return []
        items = self.pools.get(pool)
        if not items:
            raise DataError(f"retrieval pool '{pool}' has no news items at this eval_date")
        scores = self._index[pool].get_scores(tokenize(query))
        order = sorted(range(len(items)), key=lambda i: (-float(scores[i]), rank_key(tiebreak, items[i].id)))
        return [items[i] for i in order[: self.top_k]]


def context_block(items: list[NewsItem], header: str, footer: str) -> str:
    """The standardised attribution block prepended to the prompt (header and footer even when empty)."""
    lines = [header]
    lines += [f"[{n}] {i.source}, {i.date.isoformat()}: {i.headline}. {i.lead}" for n, i in enumerate(items, 1)]
    lines.append(footer)
    return "\n".join(lines)
