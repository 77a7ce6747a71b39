"""Pool assignment by date, BM25 retrieval and the news-corpus loader."""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from mirage.io import DataError
from mirage.render.rag import NewsItem, Retriever, assign_pools, context_block, load_news, pool_of, years_before

from .util import ROOT

EVAL = dt.date(2026, 6, 1)


def item(days_before: int = 0, topic: str = "conflict", date: dt.date | None = None, **kw) -> NewsItem:
    fields = dict(id="x", headline="Headline", lead="Lead.", source="Wire", topic=topic,
                  date=date or EVAL - dt.timedelta(days=days_before))
    return NewsItem(**(fields | kw))


def pool(it: NewsItem, eval_date: dt.date = EVAL) -> str | None:
    return pool_of(it, eval_date, recent_days=30, historical_years=3)


@pytest.mark.parametrize("days, expected", [(0, "recent"), (29, "recent"), (30, "recent"), (31, None), (-1, None)])
def test_recent_window_boundaries(days, expected):
    assert pool(item(days)) == expected


def test_historical_boundary_is_three_calendar_years():
    three_years = dt.date(2023, 6, 1)
    assert pool(item(date=three_years)) is None  # exactly 3 years: not *more than* 3 years
    assert pool(item(date=three_years - dt.timedelta(days=1))) == "historical"
    assert pool(item(date=three_years + dt.timedelta(days=1))) is None  # in between: neither pool


def test_calendar_years_handle_leap_day():
    assert years_before(dt.date(2028, 2, 29), 3) == dt.date(2025, 2, 28)
    assert pool(item(date=dt.date(2025, 2, 27)), dt.date(2028, 2, 29)) == "historical"
    assert pool(item(date=dt.date(2025, 2, 28)), dt.date(2028, 2, 29)) is None


def test_neutral_items_any_past_date_never_future():
    assert pool(item(4000, topic="neutral")) == "neutral"
    assert pool(item(0, topic="neutral")) == "neutral"
    assert pool(item(-1, topic="neutral")) is None


def test_eval_date_moves_items_between_pools():
    news = load_news(ROOT / "data/news/news.jsonl")
    now = {k: {i.id for i in v} for k, v in assign_pools(news, EVAL, 30, 3).items()}
    later = {k: {i.id for i in v} for k, v in assign_pools(news, dt.date(2026, 7, 15), 30, 3).items()}
    earlier = {k: {i.id for i in v} for k, v in assign_pools(news, dt.date(2026, 5, 20), 30, 3).items()}
    assert all(now[p] for p in ("neutral", "historical", "recent"))
    assert now["recent"] - later["recent"]  # aged out of the 30-day window
    assert later["historical"] > now["historical"]  # an item dated 2023-06-20 is now > 3 years old
    assert earlier["recent"] - now["recent"]  # an item dated 2026-04-20 is recent at 2026-05-20
    assert now["historical"] - earlier["historical"]  # an item dated 2023-05-30 is not > 3 years before 2026-05-20


def test_shipped_corpus_has_a_gap_and_enough_items_per_pool():
    news = load_news(ROOT / "data/news/news.jsonl")
    pools = assign_pools(news, EVAL, 30, 3)
    assert all(len(v) >= 3 for v in pools.values())
    in_between = [i for i in news if i.topic == "conflict" and pool(i) is None]
    assert in_between, "the illustrative corpus should show conflict items that belong to no pool"


def _pool_items() -> list[NewsItem]:
    texts = [
        ("a", "Train station closed after storm", "Commuters faced delays at the train station."),
        ("b", "Bakery opens in the old town", "A family bakery opened its doors on Monday."),
        ("c", "Library extends hours", "The library will open later on weekends."),
        ("d", "Council debates parking fees", "The city council discussed parking fees."),
        ("e", "Museum reopens", "The museum reopened after renovation."),
    ]
    return [item(1, id=i, headline=h, lead=l) for i, h, l in texts]


def test_bm25_top3_is_relevant_and_reproducible_under_reordering():
    items = _pool_items()
    query = "When the teacher arrived at the train station, everyone"
    first = [i.id for i in Retriever({"recent": items}, 3).retrieve(query, "recent", tiebreak="b1")]
    assert first[0] == "a" and len(first) == 3
    for seed in range(5):
        shuffled = items[:]
        random.Random(seed).shuffle(shuffled)
        assert [i.id for i in Retriever({"recent": shuffled}, 3).retrieve(query, "recent", tiebreak="b1")] == first


def test_ties_are_broken_deterministically_by_base():
    items = _pool_items()
    r = Retriever({"recent": items}, 3)
    no_overlap = "zzz qqq"
    picks = {tuple(i.id for i in r.retrieve(no_overlap, "recent", tiebreak=f"b{n}")) for n in range(20)}
    assert len(picks) > 1  # zero-score ties vary across base prompts instead of always taking the same items
    assert r.retrieve(no_overlap, "recent", "b3") == r.retrieve(no_overlap, "recent", "b3")


def test_empty_pool_and_missing_pool():
    r = Retriever({"recent": _pool_items(), "neutral": []}, 3)
    assert r.retrieve("anything", "empty", "b") == []
    with pytest.raises(DataError, match="neutral"):
        r.retrieve("anything", "neutral", "b")


def test_context_block_has_attribution_for_each_passage_and_for_empty():
    items = _pool_items()[:2]
    block = context_block(items, "HEADER", "FOOTER")
    lines = block.splitlines()
    assert lines[0] == "HEADER" and lines[-1] == "FOOTER"
    assert lines[1] == f"[1] Wire, {items[0].date.isoformat()}: Train station closed after storm. Commuters faced delays at the train station."
    assert context_block([], "HEADER", "FOOTER") == "HEADER\nFOOTER"


def test_load_news_errors_name_file_line_and_field(tmp_path):
    good = {"id": "n1", "date": "2026-01-01", "headline": "H", "lead": "L", "source": "S", "topic": "neutral"}
    path = tmp_path / "news.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"id": "n2", "date": "01/02/2026"}) + "\n")
    with pytest.raises(DataError, match=r"news.jsonl:2: field 'date'"):
        load_news(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"topic": "sports"}) + "\n")
    with pytest.raises(DataError, match=r"news.jsonl:2: field 'topic'"):
        load_news(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(DataError, match=r"news.jsonl:2: field 'id': duplicate"):
        load_news(path)
