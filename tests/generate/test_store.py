import shutil
from pathlib import Path

import pytest

from mirage.config.generate import GenerateParams, ModelSpec, default_models
from mirage.generate.runner import Settings, make_sample
from mirage.generate.store import Store, sample_seed
from mirage.io import DataError

ST = Settings(n_samples=2, max_tokens=40, temperature=0.7, top_p=1.0, root_seed=1)
SENT = {"messages": [{"role": "user", "content": "hello"}]}


def key(spec, st=ST, sent=SENT, i=0, rid="r1"):
    return make_sample(spec, True, rid, i, sent, st).key


def test_keys_change_with_model_revision_params_input_but_not_operational_settings():
    base = default_models()["gpt-4o"]
    k = key(base)
    assert key(base.model_copy(update={"model_id": "gpt-4o-2024-11-20"})) != k
    assert key(base.model_copy(update={"revision": "other"})) != k
    assert key(base.model_copy(update={"provider": "vllm"})) != k
    assert key(base, Settings(2, 41, 0.7, 1.0, 1)) != k
    assert key(base, Settings(2, 40, 0.8, 1.0, 1)) != k
    assert key(base, Settings(2, 40, 0.7, 0.9, 1)) != k
    assert key(base, Settings(2, 40, 0.7, 1.0, 2)) != k  # root seed -> sample seed
    assert key(base, i=1) != k
    assert key(base, sent={"messages": [{"role": "user", "content": "hello!"}]}) != k
    # operational settings and n_samples do not enter the key
    ops = base.model_copy(update={"max_concurrency": 64, "max_retries": 0, "timeout_s": 1.0, "batch_size": 3,
                                  "requests_per_minute": 10, "use_batch_api": True})
    assert key(ops) == k
    assert key(base, Settings(5, 40, 0.7, 1.0, 1)) == k


def test_local_quantization_and_two_models_never_share_entries():
    models = default_models()
    assert key(models["qwen2.5-72b"]) != key(models["qwen2.5-72b-awq"])
    assert key(models["qwen2.5-72b"].model_copy(update={"quantization": "fp8"})) != key(models["qwen2.5-72b"])
    assert key(models["gpt-4o"]) != key(models["gemini-1.5-pro"])


def test_sample_seeds_distinct_across_prompts_and_samples():
    seeds = {sample_seed(7, f"r{j}", i) for j in range(500) for i in range(5)}
    assert len(seeds) == 2500
    assert sample_seed(7, "r1", 0) == sample_seed(7, "r1", 0)


def test_store_unions_shards_skips_truncated_tail_and_retries_errors(tmp_path):
    with Store.open(tmp_path / "s") as a:
        a.append({"key": "k1", "text": "one", "error": None})
        a.append({"key": "k2", "text": "", "error": "HTTP 500"})
    with Store.open(tmp_path / "s") as b:
        b.append({"key": "k1", "text": "dup", "error": None})
        b.append({"key": "k2", "text": "two", "error": None})
    shards = sorted((tmp_path / "s").glob("*.jsonl"))
    assert len(shards) == 2
    with open(shards[0], "a") as fh:
        fh.write('{"key": "k3", "te')  # killed mid-write
    s = Store.open(tmp_path / "s")
    assert sorted(s.done) == ["k1", "k2"] and not s.failed
    # one record per key, chosen independently of shard order (no `created`: canonical JSON order)
    assert s.done["k1"]["text"] == "dup"
    bad = tmp_path / "s" / "zz.jsonl"
    bad.write_text('{"key": "k4"}\nnot json\n{"key": "k5"}\n')
    with pytest.raises(DataError, match=r"zz\.jsonl:2"):
        Store.open(tmp_path / "s")


def test_failed_sample_is_not_done(tmp_path):
    with Store.open(tmp_path) as s:
        s.append({"key": "k", "text": "", "error": "timeout"})
        assert "k" not in s.done and s.failed["k"]["error"] == "timeout"


def test_params_validation_names_allowed_values():
    with pytest.raises(ValueError, match="local.*vllm.*openai.*anthropic|'local', 'vllm', 'openai' or 'anthropic'"):
        ModelSpec(provider="bedrock")
    with pytest.raises(ValueError, match="missing C2"):
        GenerateParams(max_tokens={"C1": 10, "C3": 10})
    with pytest.raises(ValueError, match="chat"):
        ModelSpec(provider="anthropic", mode="completion")


FIXTURES = Path(__file__).parent / "fixtures"
ARABIC = {"key": "kar", "text": "لا أعرف — نص عربي ✓", "error": None, "created": "2026-01-01T00:00:09Z"}


def test_store_written_by_the_previous_format_stays_readable(tmp_path):
    """Shards without a key index (written before it existed) are read in full; appending adds indexed shards."""
    root = tmp_path / "store"
    shutil.copytree(FIXTURES / "store_v0", root)
    s = Store.open(root, partition="demo")
    assert sorted(s.done) == ["kaaaa", "kbbbb", "kcccc"] and sorted(s.failed) == ["kdddd"]
    assert s.done["kaaaa"]["text"] == "لا أعرف — نص عربي" and s.done["kbbbb"]["text"] == "retried ✓"
    assert s.failed["kdddd"]["error"] == "timeout"
    with s:
        s.append({"key": "keeee", "text": "new", "error": None})
        assert s.done["keeee"]["text"] == "new"
    assert len(list(root.glob("demo/*.keys"))) == 1
    again = Store.open(root)
    assert sorted(again.done) == ["kaaaa", "kbbbb", "kcccc", "keeee"]
    assert {k: again.done[k] for k in again.done} == {**{k: s.done[k] for k in s.done}}


def test_torn_last_line_at_every_byte_offset_is_skipped(tmp_path):
    """A kill can cut the last record anywhere, inside a multi-byte UTF-8 character too; readers skip it."""
    src = tmp_path / "src"
    with Store.open(src) as s:
        s.append({"key": "kfirst", "text": "أول", "error": None})
        s.append(ARABIC)
    (shard,) = src.glob("*.jsonl")
    data, index = shard.read_bytes(), shard.with_suffix(".keys").read_bytes()
    first_end = data.index(b"\n") + 1
    assert len(data[first_end:].decode()) < len(data) - first_end  # the record holds multi-byte characters
    for cut in range(first_end, len(data)):
        for with_index in (False, True):
            root = tmp_path / f"cut{cut}{with_index}"
            root.mkdir()
            (root / "w.jsonl").write_bytes(data[:cut])
            if with_index:  # the index may be ahead of its shard (crash) or itself cut
                (root / "w.keys").write_bytes(index[: len(index) - (cut % 7)])
            s = Store.open(root)
            whole = cut == len(data) - 1  # only the newline is missing: the record is complete and kept
            assert list(s.done) == ["kfirst", "kar"][: 1 + whole], (cut, with_index)
            assert s.done["kfirst"]["text"] == "أول"
            with s:  # and the store keeps working: the torn key is retried and lands in a new shard
                s.append(ARABIC)
            assert Store.open(root).done["kar"] == ARABIC
            shutil.rmtree(root)


def test_index_is_used_and_disagreeing_index_falls_back_to_the_shard(tmp_path):
    with Store.open(tmp_path) as s:
        for i in range(5):
            s.append({"key": f"k{i}", "text": f"t{i}", "error": None if i % 2 == 0 else "HTTP 500"})
    (keys,) = tmp_path.glob("*.keys")
    lines = keys.read_text().splitlines()
    assert [ln.split(" ")[2:] for ln in lines] == [["d", "k0"], ["e", "k1"], ["d", "k2"], ["e", "k3"], ["d", "k4"]]
    keys.write_text("\n".join(lines[:2]) + "\n")  # index behind its shard: the rest is parsed from the shard
    s = Store.open(tmp_path)
    assert sorted(s.done) == ["k0", "k2", "k4"] and sorted(s.failed) == ["k1", "k3"]
    keys.write_text("0 5 d kX\n")  # an index that does not match the shard is ignored
    assert sorted(Store.open(tmp_path).done) == ["k0", "k2", "k4"]


def test_corrupt_or_non_utf8_line_before_the_end_is_a_clear_error(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(b'{"key": "k1", "error": null}\n{"key": "\xff\xfe"}\n{"key": "k3"}\n')
    with pytest.raises(DataError, match=r"a\.jsonl:2: corrupt store record \(not UTF-8\)"):
        Store.open(tmp_path)


def test_keys_must_be_strings_without_whitespace(tmp_path):
    with Store.open(tmp_path) as s, pytest.raises(ValueError, match="key"):
        s.append({"key": "a b", "error": None})


def test_old_records_of_outages_use_no_attempt(tmp_path):
    """Records written before failures had a cause count as attempts unless their error reads as an outage."""
    errors = {"HTTP 401: Incorrect API key": 0, "HTTP 429: quota": 0, "HTTP 503: overloaded": 0, "HTTP 404: no model": 0,
              "ClientConnectorError: Cannot connect to host": 0, "timeout: no answer within 120 s": 0,
              "malformed response: KeyError: 'choices'": 1, "HTTP 400: context too long": 1}
    with Store.open(tmp_path / "s", "lite") as store:
        for i, error in enumerate(errors):
            store.append({"key": f"k{i}", "text": "", "error": error})
        store.append({"key": "k90", "text": "", "error": "HTTP 500", "cause": "server"})
        store.append({"key": "k91", "text": "", "error": "bad field", "cause": "reply"})
    store = Store.open(tmp_path / "s")
    assert {k: store.attempts.get(k, 0) for k in store.failed} == {
        **{f"k{i}": n for i, n in enumerate(errors.values())}, "k90": 0, "k91": 1}


def test_the_writer_lock_waits_for_another_process_then_refuses_after_lock_wait_s(tmp_path):
    import subprocess
    import sys
    import time

    from mirage.generate.store import StoreBusy

    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from mirage.generate.store import Store\n"
        f"s = Store.open({str(tmp_path / 's')!r}, 'lite')\n"
        "with s.locked('C1', 0):\n"
        "    print('in', flush=True); time.sleep(1.5); s.append({'key': 'k1', 'text': 'held', 'error': None}); time.sleep(1)\n")],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "in\n"
    store = Store.open(tmp_path / "s", "lite")
    assert "k1" not in store.done
    with pytest.raises(StoreBusy, match=r"\.C1\.lock: another process is writing this part of the store; waited 0.3 s"):
        with store.locked("C1", 0.3):
            pass
    with store.locked("C2", 0):  # another condition: not blocked
        pass
    told = []
    start = time.monotonic()
    with store.locked("C1", 60, told.append):
        assert "k1" in store.done  # re-read after the holder's writes
    assert time.monotonic() - start < 30 and len(told) == 1 and told[0].startswith("waiting for ")
    holder.wait(timeout=30)
