"""The Python API returns what the commands write: frames from corpus to metrics, on the embedded model."""

from __future__ import annotations

import pytest

from mirage import api

pytestmark = pytest.mark.slow


def test_stages_as_frames_end_to_end(tmp_path, root):
    params = api.load_params(root / "params.yaml")
    params.slices.demo.n_samples = 1
    params.slices.demo.max_tokens = {"C1": 6, "C2": 6, "C3": 6}
    params.metrics.n_boot = params.metrics.n_perm = 200
    prompts = api.corpus(params, data_dir=str(root / "data"))
    assert {"prompt_id", "frame_id", "cue", "paraphrase", "split"} <= set(prompts.columns) and len(prompts) > 6000
    requests = api.requests(params, prompts, data_dir=str(root / "data"))
    c1 = requests["C1"][requests["C1"]["slices"].map(lambda s: "demo" in s)].head(10)
    views = api.generate(params, "smollm2-135m", "demo", "C1", c1, store_dir=str(tmp_path / "store"))
    assert len(views) == len(c1) and views["error"].isna().all() and (views["tokens_out"] <= 6).all()
    again = api.generate(params, "smollm2-135m", "demo", "C1", c1, store_dir=str(tmp_path / "store"))
    assert again["text"].tolist() == views["text"].tolist()  # served from the store
    labels = api.label(params, views, data_dir=str(root / "data"))
    assert len(labels) == len(views) and set(labels["judge"]) == {params.label.judge}
    table, per_prompt = api.metrics(params, labels)
    assert "V_focal" in set(table["metric"]) and len(per_prompt) == labels["prompt_id"].nunique()
