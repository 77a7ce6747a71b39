import json

import pytest
from click.testing import CliRunner

from mirage.config.generate import SMOLLM2_SHA, default_models
from mirage.estimate import estimate
from tests.generate.conftest import write_params
from tests.generate.fake_server import FakeServer


def test_estimate_counts_tokens_costs(tmp_path, requests_dir):
    params = write_params(tmp_path / "params.yaml", {
        "api": {"provider": "openai", "model_id": "m", "revision": "m-2025", "price_in_per_mtok": 2.0, "price_out_per_mtok": 10.0},
        "big": {"provider": "vllm", "model_id": "o", "revision": "abc123", "gpus": 2, "tensor_parallel_size": 2, "throughput_tok_s": 100.0},
        "tiny": {"provider": "local", "revision": "sha256:00", "throughput_tok_s": 50.0},
    }, max_tokens={"C1": 10, "C2": 20, "C3": 10})
    res = CliRunner().invoke(estimate, ["--slice", "full", "--params", str(params), "--models", "api", "--models", "big",
                                        "--models", "tiny", "--requests-dir", str(requests_dir), "--out", str(tmp_path / "e.json")])
    assert res.exit_code == 0, res.output
    est = json.loads((tmp_path / "e.json").read_text())
    rows = {(r["model"], r["condition"]): r for r in est["rows"]}
    c1 = rows[("api", "C1")]
    assert c1["request_rows"] == 20 and c1["requests"] == 15  # every 4th row shares a request id
    assert c1["samples"] == c1["calls"] == 75 and c1["tokens_out"] == 750
    assert c1["api_cost_usd"] > 0 and c1["gpu_hours"] is None and c1["local_time_s"] is None
    c3 = rows[("big", "C3")]
    assert c3["samples"] == 5 * 10 and c3["calls"] == 5 * (10 + 4)  # M4 rows (every 3rd) take two calls
    assert abs(c3["gpu_hours"] - c3["tokens_out"] / 100 / 3600 * 2) < 1e-3
    assert c3["wall_time_s"] == round(c3["tokens_out"] / 100, 1), "a vLLM model's wall time: its GPUs' tokens / tok/s"
    assert rows[("tiny", "C2")]["local_time_s"] == rows[("tiny", "C2")]["tokens_out"] / 50
    assert est["totals"]["samples"] == sum(r["samples"] for r in est["rows"])
    assert est["assumptions"]["input_tokens_counted_by"]["api"].startswith("characters")
    assert "TOTAL" in res.output
    bad = CliRunner().invoke(estimate, ["--params", str(params), "--models", "nope", "--requests-dir", str(requests_dir)])
    assert bad.exit_code != 0 and "unknown model 'nope'" in bad.output


def test_models_that_cannot_send_are_summed_apart_from_the_total(tmp_path, requests_dir):
    """A retired model's rows show the tokens a release must hold but no cost or time, and stay out of TOTAL (a line of
    their own); a model that only lacks its key is costed as if the key were set and counted."""
    params = write_params(tmp_path / "params.yaml", {
        "keyless": {"provider": "openai", "model_id": "k", "revision": "k-2025", "price_in_per_mtok": 2.0,
                    "price_out_per_mtok": 10.0, "throughput_tok_s": 80.0, "api_key_env": "NO_SUCH_KEY_VARIABLE"},
        "gone": {"provider": "anthropic", "model_id": "g", "revision": "g-2024", "price_in_per_mtok": 3.0,
                 "price_out_per_mtok": 15.0, "throughput_tok_s": 60.0, "retires": "2025-01-01"},
        "open": {"provider": "vllm", "model_id": "o", "revision": "abc123", "gpus": 4, "tensor_parallel_size": 4,
                 "throughput_tok_s": 200.0},
    })
    res = CliRunner().invoke(estimate, ["--slice", "full", "--params", str(params), "--requests-dir", str(requests_dir),
                                        "--stores", str(tmp_path / "stores"), "--out", str(tmp_path / "e.json"),
                                        "--models", "keyless", "--models", "gone", "--models", "open"],
                             env={"NO_SUCH_KEY_VARIABLE": ""})
    assert res.exit_code == 0, res.output
    est = json.loads((tmp_path / "e.json").read_text())
    by_model = lambda m: [r for r in est["rows"] if r["model"] == m]  # noqa: E731
    assert {r["status"] for r in by_model("keyless")} == {"needs key"} and {r["status"] for r in by_model("gone")} == {"retired: release only"}
    gone = by_model("gone")
    assert all(r["tokens_out"] > 0 and r["api_cost_usd"] is None and r["wall_time_s"] is None for r in gone)
    assert all(r["wall_time_s"] == round(r["tokens_out"] / 200, 1) and r["gpu_hours"] for r in by_model("open"))
    assert all(r["wall_time_s"] == round(r["tokens_out"] / 80, 1) and r["api_cost_usd"] > 0 for r in by_model("keyless"))
    sent = by_model("keyless") + by_model("open")
    for key in ("calls", "tokens_in", "tokens_out"):
        assert est["totals"][key] == sum(r[key] for r in sent) and est["unsendable"][key] == sum(r[key] for r in gone)
    assert est["totals"]["wall_time_s"] == pytest.approx(sum(r["wall_time_s"] for r in sent), abs=0.05)
    assert est["totals"]["api_cost_usd"] == pytest.approx(sum(r["api_cost_usd"] for r in by_model("keyless")), abs=1e-3)
    assert est["unsendable"]["api_cost_usd"] is None and est["unsendable"]["wall_time_s"] is None
    lines = {line.split("  ")[0]: line for line in res.output.splitlines()}
    assert str(est["totals"]["tokens_out"]) in lines["TOTAL"] and str(est["unsendable"]["tokens_out"]) in lines["NOT SENDABLE"]
    assert "not in TOTAL" in res.output


def _estimate(params, requests_dir, tmp_path, *args):
    return CliRunner().invoke(estimate, ["--slice", "full", "--params", str(params), "--requests-dir", str(requests_dir),
                                         "--out", str(tmp_path / "e.json"), "--calibration", str(tmp_path / "cal.json"), *args])


def _server_models(url: str) -> dict:
    return {
        "srv": {"provider": "openai", "model_id": "m", "revision": "m-2025", "base_url": url + "/v1", "max_concurrency": 4,
                "max_retries": 0},
        "reg": {"provider": "openai", "model_id": "r", "revision": "r-2025", "base_url": url + "/v1", "throughput_tok_s": 40.0},
        "big": {"provider": "vllm", "model_id": "o", "revision": "abc123", "gpus": 2, "tensor_parallel_size": 2},
    }


def test_calibration_is_measured_at_the_server_stored_and_reused(tmp_path, requests_dir):
    with FakeServer(latency_s=0.05) as srv:
        srv.completion_tokens = 16
        params = write_params(tmp_path / "params.yaml", _server_models(srv.url), calibration_samples=8)
        res = _estimate(params, requests_dir, tmp_path, "--models", "srv", "--calibrate")
        assert res.exit_code == 0, res.output
        assert srv.total == 8  # calibration_samples requests, nothing else
        entry = json.loads((tmp_path / "cal.json").read_text())["srv"]
        assert {k: entry[k] for k in ("provider", "model_id", "revision", "base_url", "n", "concurrency", "max_tokens", "tokens_out")} == {
            "provider": "openai", "model_id": "m", "revision": "m-2025", "base_url": srv.url + "/v1", "n": 8, "concurrency": 4,
            "max_tokens": 64, "tokens_out": 8 * 16}
        assert entry["tok_s"] == pytest.approx(entry["tokens_out"] / entry["wall_s"], rel=1e-2)
        # the server holds each request >= 50 ms: at most 16 / 0.05 tok/s per stream, 4x that in all
        assert 0 < entry["per_stream_tok_s"] <= 320 and entry["tok_s"] <= 4 * 320
        assert entry["measured_at"].endswith("Z") and entry["host"] and entry["machine"]
        assert "calibrated srv:" in res.output

        # a later estimate reuses the measurement: no request reaches the server
        res = _estimate(params, requests_dir, tmp_path, "--models", "srv", "--models", "reg", "--models", "big")
        assert res.exit_code == 0, res.output
        assert srv.total == 8
    est = json.loads((tmp_path / "e.json").read_text())
    rows = {(r["model"], r["condition"]): r for r in est["rows"]}
    srv_c1, reg_c1, big_c1 = rows[("srv", "C1")], rows[("reg", "C1")], rows[("big", "C1")]
    assert (srv_c1["source"], srv_c1["throughput"]) == ("measured", entry["tok_s"])
    assert srv_c1["wall_time_s"] == round(srv_c1["tokens_out"] / entry["tok_s"], 1) and srv_c1["local_time_s"] is None
    assert (reg_c1["source"], reg_c1["throughput"], reg_c1["wall_time_s"]) == ("assumed", 40.0, round(reg_c1["tokens_out"] / 40, 1))
    assert (big_c1["source"], big_c1["throughput"], big_c1["gpu_hours"]) == ("none", None, None)
    assert est["assumptions"]["calibration"] == {"srv": entry}
    table = {line.split()[0]: line.split() for line in res.output.splitlines() if line.startswith(("srv ", "reg ", "big "))}
    assert table["srv"][-2:] == [str(entry["tok_s"]), "measured"] and table["reg"][-2:] == ["40.0", "assumed"]
    assert table["big"][-2:] == ["-", "none"]

    # a measurement holds for the revision it was taken with
    models = _server_models("http://127.0.0.1:9")
    models["srv"].update(base_url=entry["base_url"], revision="m-2026")
    res = _estimate(write_params(tmp_path / "p2.yaml", models), requests_dir, tmp_path, "--models", "srv")
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "e.json").read_text())["rows"][0]["source"] == "none"


def test_calibration_with_a_failed_request_writes_nothing(tmp_path, requests_dir):
    with FakeServer() as srv:
        params = write_params(tmp_path / "params.yaml", _server_models(srv.url), calibration_samples=4)
        assert _estimate(params, requests_dir, tmp_path, "--models", "srv", "--calibrate").exit_code == 0
        before = (tmp_path / "cal.json").read_bytes()
        (tmp_path / "e.json").unlink()
        srv.faults = ["500"]
        res = _estimate(params, requests_dir, tmp_path, "--models", "srv", "--models", "reg", "--calibrate")
    assert res.exit_code == 1
    error = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and error[0].startswith("Error: calibration failed, nothing written: srv: 1 of 4 calibration "
                                                   "requests failed (first: HTTP 500") and "boom" in error[0]
    assert (tmp_path / "cal.json").read_bytes() == before and not (tmp_path / "e.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".cal.json")] == []


@pytest.mark.slow
def test_calibrate_the_embedded_model(tmp_path, requests_dir):
    local = default_models()["smollm2-135m"].model_dump(mode="json", exclude_defaults=True)
    params = write_params(tmp_path / "params.yaml", {"smollm2-135m": {**local, "batch_size": 2}}, calibration_samples=3)
    res = _estimate(params, requests_dir, tmp_path, "--models", "smollm2-135m", "--calibrate")
    assert res.exit_code == 0, res.output
    entry = json.loads((tmp_path / "cal.json").read_text())["smollm2-135m"]
    assert (entry["provider"], entry["revision"], entry["n"], entry["concurrency"]) == ("local", SMOLLM2_SHA, 3, 2)
    assert 0 < entry["tokens_out"] <= 3 * 64 and entry["tok_s"] > 0 and entry["per_stream_tok_s"] > 0
    row = json.loads((tmp_path / "e.json").read_text())["rows"][0]
    assert (row["source"], row["throughput"]) == ("measured", entry["tok_s"])
    assert row["local_time_s"] == round(row["tokens_out"] / entry["tok_s"], 1) and row["wall_time_s"] is None
