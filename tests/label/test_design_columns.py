"""Corpus design columns (frame_id, case_id, cue, paraphrase) reach the label rows; older views without them give nulls."""

from __future__ import annotations

from mirage.label.labeler import DESIGN_COLUMNS, ID_COLUMNS, label_rows


class NoViolence:
    name = "none"

    def label_violence(self, items):
        return [(0, None, False) for _ in items]

    def score_summaries(self, texts):
        return [None for _ in texts]


def test_design_columns_copied_when_present():
    base = {c: None for c in ID_COLUMNS} | {"condition": "C1", "text": "They went home.", "answer": "They went home."}
    new = base | {"frame_id": "abid_walked", "case_id": None, "cue": "name", "gender": "f", "paraphrase": True}
    out = label_rows([new, base], {}, NoViolence())
    assert {c: out[0][c] for c in DESIGN_COLUMNS} == {"frame_id": "abid_walked", "case_id": None, "cue": "name", "gender": "f",
                                                      "paraphrase": True}
    assert all(out[1][c] is None for c in DESIGN_COLUMNS) and out[0]["violent"] == 0
