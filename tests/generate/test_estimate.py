import json

from click.testing import CliRunner

from mirage.generate.cli import estimate
from tests.generate.conftest import write_params


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
    assert rows[("tiny", "C2")]["local_time_s"] == rows[("tiny", "C2")]["tokens_out"] / 50
    assert est["totals"]["samples"] == sum(r["samples"] for r in est["rows"])
    assert est["assumptions"]["input_tokens_counted_by"]["api"].startswith("characters")
    assert "TOTAL" in res.output
    bad = CliRunner().invoke(estimate, ["--params", str(params), "--models", "nope", "--requests-dir", str(requests_dir)])
    assert bad.exit_code != 0 and "unknown model 'nope'" in bad.output
