"""Every bad input gives one clear error through the real CLI: exit 2, the file (and line/field) named,
no traceback, and nothing written (issue 17 item 4).

Each case copies the shipped data/ and a params.yaml whose paths point into a temp folder, breaks one
thing, runs `mirage <command>` through the `mirage` group (CliRunner; a few through `python -m mirage`),
and checks that the output folder is still empty. The path plumbing lives in `_params` and `_Env` only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mirage.cli import cli
from mirage.params import DEFAULTS_ENV

ROOT = Path(__file__).resolve().parents[1]
LATIN1 = "caf\xe9 na\xefve".encode("latin-1")  # not UTF-8
PROJECT = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


@dataclass
class _Env:
    tmp: Path

    @property
    def data(self) -> Path:
        return self.tmp / "data"

    @property
    def out(self) -> Path:
        return self.tmp / "out"

    @property
    def params(self) -> Path:
        return self.tmp / "params.yaml"

    @property
    def corpus(self) -> Path:
        return self.tmp / "prompts.jsonl"

    @property
    def gens(self) -> Path:
        return self.tmp / "generations"

    @property
    def labels(self) -> Path:
        return self.tmp / "labels"

    @property
    def view(self) -> Path:
        return self.gens / "smollm2-135m" / "demo" / "C1" / "none-none.jsonl"

    @property
    def label_file(self) -> Path:
        return self.labels / "smollm2-135m" / "demo.jsonl"

    @property
    def own_labels(self) -> Path:
        """The label file `mirage label` writes (label.out_dir), which `mirage validate export` reads."""
        return self.out / "labels" / "smollm2-135m" / "demo.jsonl"

    def outputs(self) -> dict[str, tuple[int, int]]:
        """Every file under out/ with its size and mtime: a bad input must change none and add none."""
        return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in self.out.rglob("*")}


def _params(env: _Env) -> dict:
    """The project's params.yaml (science settings only: paths are command options, see COMMANDS)."""
    return json.loads(json.dumps(PROJECT, default=str))


def _label_row(i: int = 0, **kw) -> dict:
    row = {"model": "smollm2-135m", "condition": "C1", "rag_pool": "none", "mitigation": "none", "language": "en",
           "template": "T1", "harness": None, "base_id": f"T1-{i:04d}", "prompt_id": f"T1-{i:04d}-muslim-en",
           "row_id": f"C1:T1-{i:04d}-muslim-en", "identity": "muslim", "focal": True, "violent": 0, "score": None,
           "parse_ok": True, "refusal": False, "error": False, "sample_index": 0, "judge": "lexicon-v1", "key": f"k{i}"}
    return {**row, **kw}


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _edit_yaml(path: Path, fn: Callable[[object], object]) -> None:
    path.write_text(yaml.safe_dump(fn(yaml.safe_load(path.read_text(encoding="utf-8"))), allow_unicode=True), encoding="utf-8")


def _set(path_of: Callable[[_Env], Path], content: str | bytes) -> Callable[[_Env], None]:
    def setup(env: _Env) -> None:
        path = path_of(env)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return setup


def _params_edit(fn: Callable[[dict], None]) -> Callable[[_Env], None]:
    def setup(env: _Env) -> None:
        p = _params(env)
        fn(p)
        env.params.write_text(yaml.safe_dump(p, allow_unicode=True), encoding="utf-8")
    return setup


def _rm(path_of: Callable[[_Env], Path]) -> Callable[[_Env], None]:
    return lambda env: path_of(env).unlink()


def _yaml_edit(path_of: Callable[[_Env], Path], fn: Callable[[object], object]) -> Callable[[_Env], None]:
    return lambda env: _edit_yaml(path_of(env), fn)


def _dup_first_frame(doc: dict) -> dict:
    doc["frames"].append(dict(doc["frames"][0]))
    return doc


def _drop(key: str) -> Callable[[dict], dict]:
    return lambda doc: {k: v for k, v in doc.items() if k != key}


def _replace(key: str, value: object) -> Callable[[dict], dict]:
    return lambda doc: {**doc, key: value}


# command name -> argv after `mirage` (the params path is appended as --params): inputs in env.tmp, outputs in env.out
COMMANDS: dict[str, Callable[[_Env], list[str]]] = {
    "params": lambda e: ["params"],
    "corpus": lambda e: ["corpus", "--data-dir", str(e.data), "--out", str(e.out / "corpus.jsonl")],
    "render": lambda e: ["render", "--slice", "demo", "--corpus", str(e.corpus), "--harness-dir", str(e.data / "harnesses"),
                         "--news", str(e.data / "news" / "news.jsonl"), "--mitigation-texts", str(e.data / "mitigations" / "texts.yaml"),
                         "--cot-translations", str(e.data / "mitigations" / "cot_suffix.yaml"), "--out-dir", str(e.out / "requests")],
    "label": lambda e: ["label", "--model", "smollm2-135m", "--slice", "demo", "--view", str(e.view), "--data-dir", str(e.data),
                        "--out", str(e.own_labels)],
    "metrics": lambda e: ["metrics", "--slice", "demo", "--labels", str(e.label_file), "--out-table", str(e.out / "metrics" / "metrics.csv")],
    "report": lambda e: ["report", "--slice", "demo", "--metrics", str(e.tmp / "metrics" / "demo" / "metrics.csv"),
                         "--labels", str(e.label_file), "--view", str(e.view), "--estimate", str(e.tmp / "estimate" / "demo.json"),
                         "--harness-dir", str(e.data / "harnesses"), "--figures-dir", str(e.out / "figures"),
                         "--tables-dir", str(e.out / "tables"), "--out", str(e.out / "report" / "index.html")],
    "validate": lambda e: ["validate", "export", "--model", "smollm2-135m", "--slice", "demo", "--labels", str(e.own_labels),
                           "--view", str(e.view), "--corpus", str(e.corpus), "--data-dir", str(e.data),
                           "--out-dir", str(e.out / "validation")],
    "generate": lambda e: ["generate", "--model", "smollm2-135m", "--slice", "demo", "--condition", "C1",
                           "--requests", str(e.tmp / "requests" / "C1.jsonl"), "--store", str(e.out / "generations" / "store"),
                           "--views-dir", str(e.out / "generations" / "demo" / "C1"),
                           "--marker", str(e.out / "generations" / "store" / "demo" / "C1.manifest.json")],
    "estimate": lambda e: ["estimate", "--slice", "demo", "--requests-dir", str(e.tmp / "requests"),
                           "--calibration", str(e.tmp / "estimate" / "calibration.json"), "--out", str(e.out / "estimate" / "demo.json")],
    "probe": lambda e: ["probe", "--model", "smollm2-135m", "--prompts", str(e.corpus), "--stems", str(e.data / "probe" / "stems.txt"),
                        "--exclusions", str(e.data / "probe" / "exclusions.txt"), "--out-dir", str(e.out / "probe")],
}

T = lambda n: (lambda env: env.data / "templates" / f"{n}.yaml")  # noqa: E731
LEX = lambda env: env.data / "lexicons" / "city.yaml"  # noqa: E731
IDENT = lambda env: env.data / "identities.yaml"  # noqa: E731
H = lambda n: (lambda env: env.data / "harnesses" / f"{n}.yaml")  # noqa: E731
NEWS = lambda env: env.data / "news" / "news.jsonl"  # noqa: E731
TEXTS = lambda env: env.data / "mitigations" / "texts.yaml"  # noqa: E731
COT = lambda env: env.data / "mitigations" / "cot_suffix.yaml"  # noqa: E731
PARAMS = lambda env: env.params  # noqa: E731
NEWS_ROW = json.loads((ROOT / "data" / "news" / "news.jsonl").read_text(encoding="utf-8").splitlines()[0])

# (id, command, setup, substrings the error must contain; "{tmp}" is the case's temp folder)
CASES: list[tuple[str, str, Callable[[_Env], None], tuple[str, ...]]] = [
    # --- params files: missing, empty, malformed, unknown keys, cross-references ---
    *[(f"params-missing-{c}", c, _rm(PARAMS), ("params.yaml", "not found")) for c in COMMANDS],
    ("params-empty", "corpus", _set(PARAMS, ""), ("params.yaml", "no sections")),
    ("params-comments-only", "render", _set(PARAMS, "# nothing here\n"), ("params.yaml", "no sections")),
    ("params-empty-mapping", "metrics", _set(PARAMS, "{}\n"), ("params.yaml", "no sections")),
    ("params-top-level-list", "params", _set(PARAMS, "- corpus\n- render\n"), ("params.yaml", "top level must be a mapping")),
    ("params-bad-yaml", "corpus", _set(PARAMS, "corpus:\n  seed: 1\n   out: [\n"), ("params.yaml:", "not valid YAML")),
    ("params-non-utf8", "params", _set(PARAMS, b"corpus:\n  out: " + LATIN1 + b"\n"), ("params.yaml", "UTF-8")),
    ("params-is-a-folder", "corpus", lambda env: (env.params.unlink(), env.params.mkdir()), ("params.yaml", "not found")),
    ("params-unknown-section", "params", _params_edit(lambda p: p.update(genrate={})), ("params.yaml", "genrate: unknown key")),
    ("params-unknown-key", "corpus", _params_edit(lambda p: p["corpus"].update(colour="red")), ("params.yaml", "corpus.colour: unknown key")),
    ("params-slice-max-tokens-C9", "params", _params_edit(lambda p: p["slices"]["demo"]["max_tokens"].update(C9=10)),
     ("params.yaml", "slices.demo.max_tokens.C9")),
    ("params-slice-max-tokens-lowercase", "generate", _params_edit(lambda p: p["slices"]["demo"]["max_tokens"].update(c1=10)),
     ("params.yaml", "slices.demo.max_tokens.c1")),
    ("params-generate-max-tokens-C9", "estimate", _params_edit(lambda p: p["generate"]["max_tokens"].update(C9=10)),
     ("params.yaml", "generate.max_tokens.C9")),
    ("params-slice-unknown-model", "params", _params_edit(lambda p: p["slices"]["lite"].update(models=["gpt-4o", "gpt-5-nosuch"])),
     ("params.yaml", "slices.lite.models", "gpt-5-nosuch")),
    ("params-model-set-unknown-model", "params", _params_edit(lambda p: p["model_sets"]["current"].append("gpt-7-nosuch")),
     ("params.yaml", "model_sets.current", "gpt-7-nosuch")),
    ("params-model-set-unknown", "estimate", _params_edit(lambda p: p.update(model_set="newest")),
     ("params.yaml", "model_set: unknown set 'newest'")),
    ("params-demo-unknown-model", "label", _params_edit(lambda p: p["slices"]["demo"].update(models=["smollm3"])),
     ("params.yaml", "slices.demo.models", "smollm3")),
    ("params-n-samples-not-int", "generate", _params_edit(lambda p: p["generate"].update(n_samples="five")),
     ("params.yaml", "generate.n_samples")),
    ("params-bad-eval-date", "render", _params_edit(lambda p: p["render"]["rag"].update(eval_date="2026-13-01")),
     ("params.yaml", "render.rag.eval_date")),
    ("params-focal-not-in-identities", "corpus", _params_edit(lambda p: p["corpus"].update(identities=["christian", "jewish"])),
     ("params.yaml", "focal_identity")),
    ("params-unknown-provider", "estimate", _params_edit(lambda p: p["models"]["smollm2-135m"].update(provider="ollama")),
     ("params.yaml", "models.smollm2-135m.provider")),
    ("params-negative-boot", "metrics", _params_edit(lambda p: p["metrics"].update(n_boot=-1)), ("params.yaml", "metrics.n_boot")),
    # --- corpus sources: templates, lexicons, identities, harness case files ---
    ("template-duplicate-frame-id", "corpus", _yaml_edit(T("T1"), _dup_first_frame), ("T1.yaml", "field 'id'", "duplicate frame id 'abid_walked'")),
    ("template-empty", "corpus", _set(T("T2"), ""), ("T2.yaml", "empty")),
    ("template-comments-only", "corpus", _set(T("T3"), "# todo\n"), ("T3.yaml", "no content")),
    ("template-non-utf8", "corpus", _set(T("T4"), b"id: T4\nframes:\n  - id: x\n    en: \"" + LATIN1 + b" {id:noun}\"\n"), ("T4.yaml:4", "UTF-8", "0xe9")),
    ("template-bad-yaml", "corpus", _set(T("T6"), "id: T6\nframes: [\n  - id: x\n"), ("T6.yaml:", "not valid YAML")),
    ("template-top-level-list", "corpus", _set(T("T1"), "- id: x\n  en: a {id:noun}\n"), ("T1.yaml", "top level must be a mapping")),
    ("template-frame-without-id", "corpus", _yaml_edit(T("T2"), lambda d: {**d, "frames": [_drop("id")(d["frames"][0])]}), ("T2.yaml", "'id' and 'en'")),
    ("template-frame-not-mapping", "corpus", _yaml_edit(T("T3"), _replace("frames", ["just a string"])), ("T3.yaml", "must be a mapping")),
    ("template-frame-two-swaps", "corpus", _yaml_edit(T("T4"), lambda d: {**d, "frames": [{"id": "x", "en": "{id:noun} and {id:noun}"}]}),
     ("T4.yaml", "frame 'x'", "exactly one")),
    ("template-no-frames", "corpus", _yaml_edit(T("T6"), _replace("frames", [])), ("T6.yaml", "no frames")),
    ("template-missing-file", "corpus", _rm(T("T3")), ("T3.yaml", "not found")),
    ("template-unknown-lexicon", "corpus", _yaml_edit(T("T1"), lambda d: {**d, "frames": [{"id": "x", "en": "{id:adj} people in {nosuchlex}"}]}),
     ("T1.yaml", "frame 'x'", "nosuchlex")),
    ("lexicon-empty-file", "corpus", _set(LEX, ""), ("city.yaml", "empty")),
    ("lexicon-non-utf8", "corpus", _set(LEX, b"- {en: Toronto}\n- {en: " + LATIN1 + b"}\n"), ("city.yaml:2", "UTF-8")),
    ("lexicon-empty-list", "corpus", _set(LEX, "[]\n"), ("city.yaml", "non-empty list")),
    ("lexicon-duplicate-entries", "corpus", _set(LEX, "- {en: Toronto}\n- {en: Toronto}\n"), ("city.yaml", "duplicate", "Toronto")),
    ("lexicon-entry-without-en", "corpus", _set(LEX, "- {en: Toronto}\n- {ar: x}\n"), ("city.yaml", "entry 2", "'en'")),
    ("identities-without-forms", "corpus", _yaml_edit(IDENT, _drop("forms")), ("identities.yaml", "field 'forms'")),
    ("identities-forms-not-mapping", "corpus", _yaml_edit(IDENT, _replace("forms", ["muslim"])), ("identities.yaml", "field 'forms'")),
    ("identities-without-tokens", "corpus", _yaml_edit(IDENT, _drop("identity_tokens")), ("identities.yaml", "field 'identity_tokens'")),
    ("identities-empty", "corpus", _set(IDENT, "\n"), ("identities.yaml", "empty")),
    ("identities-non-utf8", "corpus", _set(IDENT, b"forms:\n  muslim: " + LATIN1 + b"\n"), ("identities.yaml:2", "UTF-8")),
    ("identities-missing", "corpus", _rm(IDENT), ("identities.yaml", "not found")),
    ("harness-missing-rubric", "corpus", _yaml_edit(H("H1"), _drop("rubric")), ("H1.yaml", "'rubric'")),
    ("harness-empty", "corpus", _set(H("H2"), ""), ("H2.yaml", "empty")),
    ("harness-non-utf8", "corpus", _set(H("H3"), b"id: H3\nrubric: " + LATIN1 + b"\n"), ("H3.yaml:2", "UTF-8")),
    ("harness-identity-field-unknown", "corpus", _yaml_edit(H("H4"), _replace("identity_field", "Nope")), ("H4.yaml", "identity field 'Nope'")),
    # --- render inputs: news corpus, mitigation texts, CoT translations, harness rubrics, the prompt table ---
    ("news-non-utf8", "render", _set(NEWS, json.dumps(NEWS_ROW).encode() + b"\n" + LATIN1 + b"\n"), ("news.jsonl:2", "UTF-8")),
    ("news-bad-json", "render", _set(NEWS, json.dumps(NEWS_ROW) + "\n{not json\n"), ("news.jsonl:2", "not valid JSON")),
    ("news-empty", "render", _set(NEWS, ""), ("news.jsonl", "no news items")),
    ("news-duplicate-id", "render", _set(NEWS, (json.dumps(NEWS_ROW) + "\n") * 2), ("news.jsonl:2", "field 'id'", "duplicate")),
    ("news-bad-date", "render", _set(NEWS, json.dumps({**NEWS_ROW, "date": "31/05/2026"}) + "\n"), ("news.jsonl:1", "field 'date'")),
    ("news-missing-topic", "render", _set(NEWS, json.dumps(_drop("topic")(NEWS_ROW)) + "\n"), ("news.jsonl:1", "field 'topic'")),
    ("news-missing-file", "render", _rm(NEWS), ("news.jsonl",)),
    ("texts-missing-M1", "render", _yaml_edit(TEXTS, _drop("M1")), ("texts.yaml", "M1")),
    ("texts-empty", "render", _set(TEXTS, ""), ("texts.yaml", "empty")),
    ("texts-non-utf8", "render", _set(TEXTS, b"M1: " + LATIN1 + b"\n"), ("texts.yaml:1", "UTF-8")),
    ("texts-bad-yaml", "render", _set(TEXTS, "M1: [unclosed\n"), ("texts.yaml:", "not valid YAML")),
    ("texts-unknown-key", "render", _yaml_edit(TEXTS, _replace("M9", "x")), ("texts.yaml", "M9")),
    ("cot-not-mapping", "render", _set(COT, "- just a list\n"), ("cot_suffix.yaml", "mapping")),
    ("cot-non-utf8", "render", _set(COT, b"ar-msa: " + LATIN1 + b"\n"), ("cot_suffix.yaml:1", "UTF-8")),
    ("render-harness-empty-rubric", "render", _yaml_edit(H("H2"), _replace("rubric", "")), ("H2.yaml", "rubric")),
    ("render-corpus-missing", "render", _rm(lambda env: env.corpus), ("prompts.jsonl", "not found")),
    ("render-corpus-non-utf8", "render", _set(lambda env: env.corpus, b'{"a": "' + LATIN1 + b'"}\n'), ("prompts.jsonl:1", "UTF-8")),
    ("render-corpus-missing-field", "render", _set(lambda env: env.corpus, '{"base_id": "x"}\n'), ("prompts.jsonl:1", "missing field")),
    # --- estimate inputs: the calibration file ---
    ("calibration-bad-json", "estimate", _set(lambda env: env.tmp / "estimate" / "calibration.json", '{"smollm2-135m": {'),
     ("calibration.json:1", "not valid JSON")),
    ("calibration-no-tok-s", "estimate", _set(lambda env: env.tmp / "estimate" / "calibration.json", '{"smollm2-135m": {"n": 8}}'),
     ("calibration.json", "tok_s", "mirage estimate --calibrate")),
    # --- label inputs: generation views and harness decision definitions ---
    ("view-non-utf8", "label", _set(lambda env: env.view, b'{"key": "' + LATIN1 + b'"}\n'), ("none-none.jsonl:1", "UTF-8")),
    ("view-bad-json", "label", _set(lambda env: env.view, "{\"key\": \n"), ("none-none.jsonl:1", "not valid JSON")),
    ("view-missing-field", "label", _set(lambda env: env.view, '{"key": "k"}\n'), ("none-none.jsonl:1", "missing field")),
    ("views-absent", "label", lambda env: shutil.rmtree(env.gens), ("generations", "generation view not found")),
    ("label-harness-no-decision-kind", "label", _yaml_edit(H("H1"), lambda d: {**d, "decision": {"options": ["a"]}}),
     ("H1.yaml", "decision.kind")),
    ("label-harness-no-options", "label", _yaml_edit(H("H1"), lambda d: {**d, "decision": {"kind": "choice"}}),
     ("H1.yaml", "decision.options")),
    # --- metrics inputs: label files ---
    ("labels-duplicate-row", "metrics", _set(lambda env: env.label_file, (json.dumps(_label_row()) + "\n") * 2),
     ("demo.jsonl:2", "sample_index", "duplicate label row")),
    ("labels-non-utf8", "metrics", _set(lambda env: env.label_file, b'{"model": "' + LATIN1 + b'"}\n'), ("demo.jsonl:1", "UTF-8")),
    ("labels-bad-violent", "metrics", _set(lambda env: env.label_file, json.dumps(_label_row(violent=7)) + "\n"), ("demo.jsonl:1", "field violent")),
    ("labels-missing-field", "metrics", _set(lambda env: env.label_file, json.dumps(_drop("focal")(_label_row())) + "\n"), ("demo.jsonl:1", "focal")),
    ("labels-bad-json", "metrics", _set(lambda env: env.label_file, "[1, 2]\n"), ("demo.jsonl:1", "JSON object")),
    ("labels-absent", "metrics", lambda env: shutil.rmtree(env.labels), ("labels", "no label file")),
    # --- validate export: the labels it samples and the identity forms it masks ---
    ("validate-labels-missing-field", "validate", _set(lambda env: env.own_labels, '{"key": "k0"}\n'), ("demo.jsonl:1", "missing field")),
    ("validate-identities-without-forms", "validate",
     lambda env: (_jsonl(env.own_labels, [_label_row(0)]), _edit_yaml(IDENT(env), _drop("forms"))), ("identities.yaml", "field 'forms'")),
]


@pytest.fixture
def env(tmp_path: Path, corpus_rows: list[dict]) -> _Env:
    e = _Env(tmp_path)
    shutil.copytree(ROOT / "data", e.data)
    e.params.write_text(yaml.safe_dump(_params(e), allow_unicode=True), encoding="utf-8")
    _jsonl(e.corpus, corpus_rows[:50])
    view_row = {c: None for c in ("key", "row_id", "request_id", "prompt_id", "base_id", "template", "harness", "identity",
                                  "focal", "language", "condition", "rag_pool", "mitigation", "lite", "split", "model",
                                  "sample_index", "text", "answer")}
    _jsonl(e.view, [view_row])
    _jsonl(e.label_file, [_label_row(0), _label_row(1, identity="christian", focal=False)])
    e.out.mkdir()
    return e


def test_the_table_is_large_and_covers_every_command():
    assert len(CASES) >= 60
    assert len({c[0] for c in CASES}) == len(CASES)
    assert {c[1] for c in CASES} == set(COMMANDS)


@pytest.mark.parametrize(("case", "command", "setup", "expect"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_error(env: _Env, monkeypatch, case: str, command: str, setup, expect: tuple[str, ...]):
    monkeypatch.delenv(DEFAULTS_ENV, raising=False)
    setup(env)
    before = env.outputs()
    result = CliRunner().invoke(cli, [*COMMANDS[command](env), "--params", str(env.params)])
    out = result.output
    assert result.exit_code == 2, f"exit {result.exit_code}: {out}\n{result.exception!r}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, out
    for part in expect:
        assert part in out, f"{part!r} not in {out!r}"
    assert str(env.tmp) in out or "params.yaml" in out, "the message names the file"
    assert env.outputs() == before, "nothing may be written on bad input"


@pytest.mark.parametrize("case", ["params-missing-corpus", "template-non-utf8", "labels-duplicate-row"])
def test_the_console_entry_point_gives_one_line_not_a_traceback(env: _Env, case: str):
    _, command, setup, expect = next(c for c in CASES if c[0] == case)
    setup(env)
    before = env.outputs()
    proc = subprocess.run([sys.executable, "-m", "mirage", *COMMANDS[command](env), "--params", str(env.params)],
                          capture_output=True, text=True, cwd=ROOT, env={k: v for k, v in os.environ.items() if k != DEFAULTS_ENV})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert all(part in proc.stderr for part in expect), proc.stderr
    assert env.outputs() == before


def test_defaults_option_allows_a_missing_or_empty_params_file(tmp_path: Path):
    """`mirage --defaults` (or MIRAGE_DEFAULTS=1) is the one way to run on built-in defaults."""
    empty = tmp_path / "params.yaml"
    empty.write_text("# defaults please\n", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if k != DEFAULTS_ENV}
    for argv, extra in ((["--defaults", "params", "--params", str(empty)], {}),
                        (["--defaults", "params", "--params", str(tmp_path / "absent.yaml")], {}),
                        (["params", "--params", str(empty)], {DEFAULTS_ENV: "1"})):
        proc = subprocess.run([sys.executable, "-m", "mirage", *argv], capture_output=True, text=True, cwd=ROOT, env={**base, **extra})
        assert proc.returncode == 0 and proc.stdout.endswith(": ok\n"), proc.stderr
    proc = subprocess.run([sys.executable, "-m", "mirage", "params", "--params", str(empty)], capture_output=True, text=True,
                          cwd=ROOT, env=base)
    assert proc.returncode == 2 and "--defaults" in proc.stderr
