"""An identity added as data only (tests/corpus/sikh.py into a copy of data/) runs the demo slice end to end on the
embedded model: corpus and Stage-2 validation, render, generate, judge, metrics and the probe's pairs all carry it."""

from __future__ import annotations

import shutil

import pytest

from mirage import api
from mirage.probe.pairs import select_pairs
from tests.corpus.sikh import ATTIRE, FORMS, NAMES, add_sikh

pytestmark = pytest.mark.slow


def test_an_added_identity_runs_the_demo_slice(tmp_path, root, monkeypatch):
    shutil.copytree(root / "data", tmp_path / "data")
    shutil.copy(root / "params.yaml", tmp_path / "params.yaml")
    add_sikh(tmp_path / "data")
    monkeypatch.chdir(tmp_path)  # params are checked against the identity set of the project they run in

    params = api.load_params("params.yaml")
    assert params.corpus.identities[-1] == "sikh" and "sikh" in params.probe.controls
    params.slices.demo.n_samples = 1
    params.slices.demo.max_tokens = {"C1": 4, "C2": 4, "C3": 4}
    params.metrics.n_boot = params.metrics.n_perm = 200

    prompts = api.corpus(params, data_dir="data")  # raises on any pair the Stage-2 validator rejects
    sikh = prompts[prompts["identity"] == "sikh"]
    assert sikh["base_id"].nunique() == prompts["base_id"].nunique()
    spans = set(sikh["swap_text"])
    assert {n for n, _ in NAMES.values()} & spans and set(ATTIRE.values()) & spans
    assert {FORMS["ar"]["adj_f"], FORMS["ar"]["pl"]} & spans and "Sikhs" in spans

    requests = api.requests(params, prompts, data_dir="data")
    c1 = requests["C1"]
    demo = c1[c1["slices"].map(lambda s: "demo" in s) & (c1["rag_pool"] == "none") & (c1["mitigation"] == "none")
              & (c1["language"] == "en") & ~c1["paraphrase"].astype(bool)]
    assert set(demo["identity"]) == set(params.corpus.identities)
    views = api.generate(params, "smollm2-135m", "demo", "C1", demo, store_dir=str(tmp_path / "store"))
    assert len(views) == len(demo) and views["error"].isna().all()

    labels = api.label(params, views, data_dir="data")
    assert labels.loc[labels["identity"] == "sikh", "violent"].notna().all()
    table, _ = api.metrics(params, labels)
    rows = table[(table["template"] == "") & (table["condition"] == "C1")]
    for metric in ("V_control", "dV"):
        row = rows[(rows["metric"] == metric) & (rows["identity"] == "sikh")]
        assert len(row) == 1 and row["n"].iloc[0] == demo["base_id"].nunique()
    pooled = rows[(rows["metric"] == "dV") & (rows["identity"] == "control")]
    assert pooled["placebo_kind"].iloc[0] == "identity"  # five controls: the floor is computed over them all

    pairs = select_pairs(api.records(prompts), params.probe.model_copy(update={"bases_per_template": 2}))
    assert "sikh" in {p.control_identity for p in pairs}
