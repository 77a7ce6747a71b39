"""The report holds the generations' texts only as places in the view files (issue 35: 500,000 samples in 1.5 GB)
and reads back the ones a page shows; its frames are what pandas makes of the same rows as records."""

from __future__ import annotations

import pandas as pd
import pytest

from mirage.io import DataError, write_jsonl
from mirage.report.data import TEXT_FIELDS, _frame, load_generations


def view_rows(n: int, cond: str) -> list[dict]:
    return [{"key": f"{cond}-{i}", "model": "m", "condition": cond, "text": f"text {cond} {i} " + "é" * i,
             **({"reasoning": f"why {i}"} if cond == "C2" else {}), "answer": "not kept", "sample_index": i}
            for i in range(n)]


def test_texts_are_places_read_back_in_any_order(tmp_path):
    paths = [tmp_path / "C1.jsonl", tmp_path / "C2.jsonl", tmp_path / "absent.jsonl"]
    rows = view_rows(5, "C1") + view_rows(4, "C2")
    write_jsonl(paths[0], rows[:5])
    write_jsonl(paths[1], rows[5:])
    gens, texts = load_generations(paths)
    assert gens["key"].tolist() == [r["key"] for r in rows]
    assert not set(TEXT_FIELDS) & set(gens.columns) and "answer" not in gens.columns
    assert gens["text_chars"].tolist() == [len(r["text"]) + len(r.get("reasoning", "")) for r in rows]
    shuffled = gens.sample(frac=1, random_state=1)
    by_key = {r["key"]: (r["text"], r.get("reasoning")) for r in rows}
    assert list(texts.read(shuffled)) == [by_key[k] for k in shuffled["key"]]
    none = pd.DataFrame({"key": ["x"], "text_file": [float("nan")], "text_at": [float("nan")]})  # a label without a view row
    assert list(texts.read(none)) == [(None, None)]


def test_a_view_rewritten_after_loading_is_named(tmp_path):
    path = tmp_path / "C1.jsonl"
    write_jsonl(path, view_rows(3, "C1"))
    gens, texts = load_generations([path])
    write_jsonl(path, view_rows(3, "C1")[::-1])
    with pytest.raises(DataError, match=r"C1\.jsonl: changed while the report was built \(byte 0 no longer holds sample C1-0\)"):
        list(texts.read(gens))


@pytest.mark.parametrize("keep", [None, ("b", "a", "c")])
def test_frames_are_what_pandas_makes_of_the_records(keep):
    rows = [{"a": "x", "b": 1}, {"b": None, "c": True}, {"a": "x" * 100, "c": [1]}, {}, {"a": "y", "b": 2.5, "c": None}]
    want = pd.DataFrame([{k: r[k] for k in (keep or r) if k in r} for r in rows])
    pd.testing.assert_frame_equal(_frame(iter(rows), keep), want)
