"""Submit a real run, verify it, and tamper with it: every malformed or tampered bundle gets one clear
error (exit 2) and leaves the board untouched. Tampers that rewrite the manifest's hashes too
("rehashed") show that recomputation, not just hashing, catches them."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from mirage.cli import cli

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "judges"))
import gold_sets  # noqa: E402
import tiny  # noqa: E402


def verify(run, bundle: Path, board: Path, *extra: str):
    args = ["leaderboard", "verify", str(bundle), "--params", str(run["params"]), "--board", str(board),
            "--requests-dir", str(run["root"] / "requests"), *extra]
    return CliRunner().invoke(cli, args)


def unpack(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    (folder,) = list(dest.iterdir())
    return folder


def rows(folder: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]


def write_rows(folder: Path, name: str, data: list[dict]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def write_manifest(folder: Path, m: dict) -> None:
    (folder / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")


def rehash(folder: Path) -> None:
    """What a careful forger does: make the manifest's counts and file hashes match the edited files."""
    m = manifest(folder)
    for name in m["files"]:
        if (folder / name).exists():
            data = (folder / name).read_bytes()
            m["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    m["n_completions"] = len((folder / "completions.jsonl").read_bytes().splitlines())
    write_manifest(folder, m)


def edit_rows(name: str, fn):
    def tamper(folder: Path, ctx: dict) -> None:
        data = rows(folder, name)
        fn(data, ctx)
        write_rows(folder, name, data)
    return tamper


def edit_manifest(fn):
    def tamper(folder: Path, ctx: dict) -> None:
        m = manifest(folder)
        fn(m)
        write_manifest(folder, m)
    return tamper


def first(data: list[dict], **where) -> dict:
    return next(r for r in data if all(r[k] == v for k, v in where.items()))


def _extra_prompt(data, ctx):
    row = dict(data[0])
    public = ctx["public_row"]  # a request of the public lite split, not of the test split
    row.update({k: public[k] for k in ("row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity",
                                        "focal", "language", "condition", "rag_pool", "mitigation", "lite", "split")})
    data.append(row)


def _refusal(data, ctx):
    row = first(data, condition="C1", error=None)
    row["text"] = row["answer"] = "I'm sorry, but I can't help with that request."


def _swap_identity(data, ctx):
    row = first(data, condition="C1", identity="muslim")
    row["identity"], row["focal"] = "christian", False


def _metric_edit(folder, ctx):
    text = (folder / "metrics.csv").read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    i = next(i for i, r in enumerate(table) if r[1] == "refusal_rate")
    table[i][9] = "0.5"  # estimate
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(table)
    (folder / "metrics.csv").write_text(buf.getvalue(), encoding="utf-8")


def _drop_metric_row(folder, ctx):
    lines = (folder / "metrics.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "metrics.csv").write_text("".join(lines[:-1]), encoding="utf-8")


def _truncate(folder, ctx):
    data = (folder / "completions.jsonl").read_bytes()
    (folder / "completions.jsonl").write_bytes(data[: len(data) // 2])


def _flip_label(data, ctx):
    row = data[0]
    row["refusal"] = not row["refusal"]


def _headline(m):
    name = next(iter(m["headline"]))
    m["headline"][name]["estimate"] = 0.25


def _failed_with_text(data, ctx):
    data[0]["error"] = "rate limited"


# (case, what is tampered, rehash afterwards, expected fragment of the one error)
CASES = [
    ("missing_sample", edit_rows("completions.jsonl", lambda d, c: d.pop(3)), True, "required samples missing"),
    ("extra_prompt", edit_rows("completions.jsonl", _extra_prompt), True, "is not a request of split 'test'"),
    ("edited_completion", edit_rows("completions.jsonl", _refusal), False, "completions.jsonl: content does not match"),
    ("edited_completion_rehashed", edit_rows("completions.jsonl", _refusal), True, "labels.jsonl:"),
    ("edited_answer_only", edit_rows("completions.jsonl", lambda d, c: first(d, condition="C1").update(answer="fine.")), True,
     "not derived from the completion text"),
    ("edited_metric", _metric_edit, True, "metrics.csv:"),
    ("dropped_metric_row", _drop_metric_row, True, "metric rows, recomputed"),
    ("edited_headline", edit_manifest(_headline), False, "field headline."),
    ("edited_label", edit_rows("labels.jsonl", _flip_label), True, "labels.jsonl:1: field refusal"),
    ("mixed_revisions", edit_rows("completions.jsonl", lambda d, c: d[5].update(revision="sha256:" + "0" * 64)), True,
     "field revision"),
    ("other_model_row", edit_rows("completions.jsonl", lambda d, c: d[2].update(model="gpt-4o")), True, "field model"),
    ("swapped_identity", edit_rows("completions.jsonl", _swap_identity), True, "field identity"),
    ("wrong_split_hash", edit_manifest(lambda m: m.update(split_hash="s" + "1" * 32)), False, "field split_hash"),
    ("claims_lite_split", edit_manifest(lambda m: m.update(split="lite")), False, "field split_hash"),
    ("truncated_file", _truncate, False, "truncated or edited"),
    ("duplicate_sample", edit_rows("completions.jsonl", lambda d, c: d.append(dict(d[7]))), True, "duplicate sample"),
    ("bad_manifest_schema", edit_manifest(lambda m: m.pop("judge")), False, "field judge: Field required"),
    ("manifest_extra_field", edit_manifest(lambda m: m.update(leaderboard_rank=1)), False, "field leaderboard_rank"),
    ("manifest_not_json", lambda f, c: (f / "manifest.json").write_text("{not json", encoding="utf-8"), False, "not valid JSON"),
    ("manifest_missing", lambda f, c: (f / "manifest.json").unlink(), False, "manifest.json: missing"),
    ("hash_mismatch", edit_manifest(lambda m: m["files"]["labels.jsonl"].update(sha256="a" * 64)), False,
     "labels.jsonl: content does not match the manifest's SHA-256"),
    ("file_missing", lambda f, c: (f / "metrics.csv").unlink(), False, "metrics.csv: listed in the manifest but missing"),
    ("unlisted_file", lambda f, c: (f / "notes.txt").write_text("x"), False, "notes.txt: file not listed"),
    ("unpinned_revision", edit_manifest(lambda m: m["model_spec"].update(revision="latest")), False, "is not pinned"),
    ("protocol_settings", edit_manifest(lambda m: m["settings"].update(temperature=0.0)), False, "field settings.temperature"),
    ("weaker_statistics", edit_manifest(lambda m: m["statistics"].update(n_boot=100)), False, "field statistics.n_boot"),
    ("unknown_judge", edit_manifest(lambda m: m["judge"].update(name="my-own-judge")), False, "field judge.name"),
    ("wrong_seed", edit_rows("completions.jsonl", lambda d, c: d[1].update(seed=12345)), True, "field seed"),
    ("sample_index_out_of_range", edit_rows("completions.jsonl", lambda d, c: d[1].update(sample_index=3)), True,
     "field sample_index"),
    ("failed_sample_with_text", edit_rows("completions.jsonl", _failed_with_text), True, "a failed sample carries a completion"),
    ("wrong_type", edit_rows("completions.jsonl", lambda d, c: d[4].update(text=None)), True, "field text: expected str"),
    ("n_completions_lie", edit_manifest(lambda m: m.update(n_completions=m["n_completions"] + 1)), False, "n_completions"),
    ("judge_settings", edit_manifest(lambda m: m["judge"]["params"].update(window=50)), False, "field judge.params.window"),
    ("extra_label_field", edit_rows("labels.jsonl", lambda d, c: d[0].update(note="hand-checked")), True,
     "labels.jsonl:1: unexpected field note"),
    ("symlinked_file", lambda f, c: (f / "extra.jsonl").symlink_to(f / "labels.jsonl"), False, "extra.jsonl: a link"),
    ("subfolder", lambda f, c: (f / "more").mkdir(), False, "more: unexpected folder"),
    ("truncated_file_rehashed", _truncate, True, "not valid JSON"),
    ("not_utf8_labels", lambda f, c: (f / "labels.jsonl").write_bytes(b"\xff\xfe{}\n"), True, "labels.jsonl:1: not valid UTF-8"),
    ("metrics_header", lambda f, c: (f / "metrics.csv").write_text("a,b\n1,2\n", encoding="utf-8"), True,
     "metrics.csv:1: header differs"),
]


@pytest.fixture(scope="module")
def ctx(run) -> dict:
    lite = [json.loads(line) for line in (run["root"] / "requests" / "C1.jsonl").read_text(encoding="utf-8").splitlines()]
    return {"public_row": next(r for r in lite if "lite" in r["slices"])}


def test_submit_printed_the_headline(run):
    assert "smollm2-135m on test" in run["submit_output"] and "dV/C1" in run["submit_output"]
    assert "wrote bundle" in run["submit_output"]


def test_valid_bundle_is_accepted_as_archive_and_folder(run, tmp_path):
    board = tmp_path / "board"
    result = verify(run, run["bundle"], board)
    assert result.exit_code == 0, result.output
    assert "valid: smollm2-135m" in result.output and "recomputed and equal" in result.output
    entry = json.loads((board / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    assert entry["manifest"]["split"] == "test" and entry["manifest"]["judge"]["name"] == "parse-v3"
    assert (board / "bundles" / "smollm2-135m--test.tar.gz").exists()
    # the board's copy of the bundle verifies too, and a folder bundle is accepted
    folder = unpack(run["bundle"], tmp_path / "x")
    assert verify(run, folder, tmp_path / "b2", "--check-only").exit_code == 0
    assert not (tmp_path / "b2").exists()
    assert verify(run, board / "bundles" / "smollm2-135m--test.tar.gz", tmp_path / "b3").exit_code == 0


@pytest.mark.parametrize("case,tamper,forge,expected", CASES, ids=[c[0] for c in CASES])
def test_tampered_bundle_is_rejected(run, ctx, tmp_path, case, tamper, forge, expected):
    folder = unpack(run["bundle"], tmp_path / "bundle")
    tamper(folder, ctx)
    if forge:
        rehash(folder)
    board = tmp_path / "board"
    result = verify(run, folder, board)
    assert result.exit_code == 2, result.output
    assert expected in result.output, result.output
    assert sum(line.startswith("error:") for line in result.output.splitlines()) == 1
    assert not (board / "entries").exists() and not (board / "bundles").exists()


def _retar(src: Path, out: Path, extra: tuple[str, bytes] | None = None) -> None:
    with tarfile.open(src) as a, tarfile.open(out, "w:gz") as b:
        for m in a.getmembers():
            b.addfile(m, a.extractfile(m))
        if extra:
            info = tarfile.TarInfo(extra[0])
            info.size = len(extra[1])
            b.addfile(info, io.BytesIO(extra[1]))


@pytest.mark.parametrize("case,expected", [("truncated_archive", "not a readable .tar.gz"),
                                           ("path_traversal", "is not a plain file inside the bundle"),
                                           ("missing_bundle", "no such bundle")])
def test_bad_archives_are_rejected(run, tmp_path, case, expected):
    target = tmp_path / "bundle.tar.gz"
    if case == "truncated_archive":
        data = run["bundle"].read_bytes()
        target.write_bytes(data[: len(data) // 2])
    elif case == "path_traversal":
        _retar(run["bundle"], target, ("../evil.txt", b"x"))
    result = verify(run, target, tmp_path / "board")
    assert result.exit_code == 2 and expected in result.output, result.output
    assert not (tmp_path / "board" / "entries").exists()
    assert not (tmp_path / "evil.txt").exists()


def test_a_rejected_bundle_leaves_an_existing_board_unchanged(run, tmp_path):
    board = tmp_path / "board"
    assert verify(run, run["bundle"], board).exit_code == 0
    before = {p: p.read_bytes() for p in board.rglob("*") if p.is_file()}
    folder = unpack(run["bundle"], tmp_path / "bad")
    edit_rows("completions.jsonl", _refusal)(folder, {})
    rehash(folder)
    assert verify(run, folder, board).exit_code == 2
    assert {p: p.read_bytes() for p in board.rglob("*") if p.is_file()} == before


def test_submit_refuses_an_incomplete_run(run, tmp_path):
    views = tmp_path / "views"
    shutil.copytree(run["root"] / "generations" / "smollm2-135m" / "test", views)
    shard = views / "C2" / "none-none.jsonl"
    lines = shard.read_text(encoding="utf-8").splitlines(keepends=True)
    shard.write_text("".join(lines[1:]), encoding="utf-8")
    out = tmp_path / "b.tar.gz"
    result = CliRunner().invoke(cli, ["leaderboard", "submit", "--model", "smollm2-135m", "--split", "test", "--params",
                                      str(run["params"]), *tiny.run_paths(run["root"]), "--views", str(views), "--out", str(out)])
    assert result.exit_code == 2 and "required samples missing" in result.output, result.output
    assert not out.exists() and not list(tmp_path.glob(".bundle-*"))


def test_test_split_is_unavailable_without_private_folder(run, tmp_path):
    result = CliRunner().invoke(cli, ["leaderboard", "submit", "--model", "smollm2-135m", "--split", "test", "--params",
                                      str(run["params"]), *tiny.run_paths(run["root"]), "--requests-dir", str(tmp_path),
                                      "--out", str(tmp_path / "b")])
    assert result.exit_code == 2 and "no requests of split 'test'" in result.output and "MIRAGE_PRIVATE_DIR" in result.output


def test_gold_scores_must_match_the_boards_judge_evaluation(run, tmp_path):
    gold = tmp_path / "judge" / "parse-v3" / "judge_eval.json"
    gold.parent.mkdir(parents=True)
    gold.write_text(json.dumps({"judge": "parse-v3", "n": 200, "overall": {"f1": 0.9, "kappa": 0.8}}), encoding="utf-8")
    result = verify(run, run["bundle"], tmp_path / "board", "--judge-eval-dir", str(tmp_path / "judge"))
    assert result.exit_code == 2 and "field judge.gold" in result.output, result.output
    out = tmp_path / "b.tar.gz"  # submitted with the evaluation, the scores travel in the manifest and verify
    result = CliRunner().invoke(cli, ["leaderboard", "submit", "--model", "smollm2-135m", "--split", "test", "--params",
                                      str(run["params"]), "--out", str(out), "--judge-eval-dir", str(tmp_path / "judge"),
                                      *tiny.run_paths(run["root"])])
    assert result.exit_code == 0, result.output
    with tarfile.open(out) as tar:
        m = json.load(tar.extractfile("b/manifest.json"))
    assert m["judge"]["gold"]["overall"] == {"f1": 0.9, "kappa": 0.8} and m["judge"]["gold"]["n"] == 200
    result = verify(run, out, tmp_path / "board", "--judge-eval-dir", str(tmp_path / "judge"))
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def heldout_bundle(run, tmp_path_factory) -> dict:
    """A bundle submitted with a real evaluation of its judge on three named gold sets (realistic held-out included)."""
    tmp = tmp_path_factory.mktemp("heldout-bundle")
    judge_dir = tmp / "judge"
    doc = gold_sets.evaluate_sets(tmp / "data", "parse-v3", judge_dir / "parse-v3")
    out = tmp / "b.tar.gz"
    result = CliRunner().invoke(cli, ["leaderboard", "submit", "--model", "smollm2-135m", "--split", "test", "--params",
                                      str(run["params"]), "--out", str(out), "--judge-eval-dir", str(judge_dir),
                                      *tiny.run_paths(run["root"])])
    assert result.exit_code == 0, result.output
    return {"bundle": out, "judge_dir": judge_dir, "doc": doc}


def test_manifest_carries_the_heldout_judge_figures(run, heldout_bundle, tmp_path):
    doc = heldout_bundle["doc"]
    folder = unpack(heldout_bundle["bundle"], tmp_path / "x")
    judge = manifest(folder)["judge"]
    held = doc["by_split"]["heldout"]
    assert judge["heldout"] == {k: held[k] for k in ("n", "overall", "by_language", "by_condition", "by_shape", "invariance")}
    assert set(judge["heldout"]["by_language"]) == {"en", "ar (all dialects)", "ar-msa", "ar-egy"}
    assert set(judge["heldout"]["by_shape"]) == {"c1-continuation", "c2-reasoning", "c3-lending", "news", "story"}
    assert judge["sets"] == doc["by_set"] and set(judge["sets"]) == {"gold.jsonl", "dev.jsonl", "heldout.jsonl"}
    assert judge["gold"]["n"] == doc["n"]
    result = verify(run, heldout_bundle["bundle"], tmp_path / "board", "--judge-eval-dir", str(heldout_bundle["judge_dir"]))
    assert result.exit_code == 0, result.output
    entry = json.loads((tmp_path / "board" / "entries" / "smollm2-135m--test.json").read_text(encoding="utf-8"))
    assert entry["manifest"]["judge"]["heldout"] == judge["heldout"]


@pytest.mark.parametrize("edit, expected", [
    (lambda j: j["heldout"]["overall"].update(f1=0.123), "field judge.heldout: does not match this board's judge evaluation"),
    (lambda j: j["heldout"]["by_language"]["ar-egy"].update(recall=0.123), "field judge.heldout: does not match"),
    (lambda j: j["sets"]["heldout.jsonl"].update(f1=0.123), "field judge.sets: does not match"),
    (lambda j: j["heldout"]["overall"].update(f1="high"), "manifest.json: field judge.heldout: heldout.overall.f1: expected a number, got 'high'"),
])
def test_heldout_figures_must_match_the_boards(run, heldout_bundle, tmp_path, edit, expected):
    folder = unpack(heldout_bundle["bundle"], tmp_path / "x")
    m = manifest(folder)
    edit(m["judge"])
    write_manifest(folder, m)
    result = verify(run, folder, tmp_path / "board", "--judge-eval-dir", str(heldout_bundle["judge_dir"]))
    assert result.exit_code == 2 and expected in result.output, result.output
    assert not (tmp_path / "board").exists() or not list((tmp_path / "board").rglob("*.json"))


def test_a_bundle_without_heldout_figures_stays_valid(run, heldout_bundle, tmp_path):
    """A bundle made before the held-out block existed (no judge.heldout / judge.sets) verifies against a board whose
    evaluation has them; so does one whose board has no evaluation of the judge."""
    folder = unpack(heldout_bundle["bundle"], tmp_path / "x")
    m = manifest(folder)
    del m["judge"]["heldout"], m["judge"]["sets"]
    write_manifest(folder, m)
    result = verify(run, folder, tmp_path / "board", "--judge-eval-dir", str(heldout_bundle["judge_dir"]), "--check-only")
    assert result.exit_code == 0, result.output
    result = verify(run, heldout_bundle["bundle"], tmp_path / "board", "--judge-eval-dir", str(tmp_path / "none"),
                    "--check-only")
    assert result.exit_code == 0, result.output


def test_bundle_numbers_equal_the_pipelines(run, tmp_path):
    """`mirage label` + `mirage metrics --slice test` on the same run give byte-identical metrics to the bundle's."""
    params, root = str(run["params"]), run["root"]
    views = [a for v in sorted((root / "generations" / "smollm2-135m" / "test").glob("*/*.jsonl")) for a in ("--view", str(v))]
    labels_file = str(root / "labels" / "smollm2-135m" / "test.jsonl")
    for args in (["label", "--model", "smollm2-135m", "--slice", "test", "--params", params, *views, "--out", labels_file],
                 ["metrics", "--slice", "test", "--params", params, "--labels", labels_file,
                  "--out-table", str(root / "metrics" / "test" / "metrics.csv")]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
    folder = unpack(run["bundle"], tmp_path / "b")
    pipeline = (run["root"] / "metrics" / "test" / "metrics.csv").read_text(encoding="utf-8")
    assert (folder / "metrics.csv").read_text(encoding="utf-8") == pipeline
    labels = sorted(rows(run["root"] / "labels" / "smollm2-135m", "test.jsonl"), key=lambda r: (r["row_id"], r["sample_index"]))
    assert sorted(rows(folder, "labels.jsonl"), key=lambda r: (r["row_id"], r["sample_index"])) == labels
