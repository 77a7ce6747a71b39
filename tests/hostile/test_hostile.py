"""Hostile inputs against every command that reads a file or a name (issue 25 item 7): one table.

Each case builds its hostile input in a fresh folder, runs the real `mirage` console entry point in a forked child
(tests/hostile/forkserver.py) whose address space may grow by at most MEM_MB and whose run is killed after
TIMEOUT_S, and asserts: the exact one-line error, the exit code, no traceback, nothing written (the case folder,
the child's temp folder and the shared world are unchanged), and the child's peak resident memory within
MAX_RSS_MB (bundles: VERIFY_RSS_MB). The world (a tiny project with a verified bundle) is built once per session
without running a model.

Set HOSTILE_DISCOVER=1 to print each case's actual error line instead of asserting it (when adding cases).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import stat
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.hostile.conftest import MODEL, ROOT, World, copy_bundle

TIMEOUT_S = 120  # generous: a case that hangs (a FIFO, a bomb) is killed and fails
MEM_MB = 1024  # RLIMIT_AS headroom above the child's inherited address space
MAX_RSS_MB = 1024
VERIFY_RSS_MB = 512
GB = 1 << 30


@dataclass
class Ctx:
    case: Path
    world: World

    @property
    def inp(self) -> Path:
        return self.case / "in"

    @property
    def out(self) -> Path:
        return self.case / "out"

    @property
    def params(self) -> Path:
        return self.inp / "params.yaml"

    def fmt(self, s: str) -> str:
        files = manifest(self.world.folder_bundle)["files"]
        sizes = {k: v["bytes"] for k, v in files.items()}
        for key, value in (("{inp}", self.inp), ("{out}", self.out), ("{case}", self.case), ("{world}", self.world.root),
                           ("{declared}", f"{sum(sizes.values()) - sizes['completions.jsonl'] + 2 * GB:,}"),
                           ("{size}", sizes["completions.jsonl"]), ("{labels+1}", sizes["labels.jsonl"] + 1),
                           ("{labels}", sizes["labels.jsonl"])):
            s = s.replace(key, str(value))
        return s


Setup = Callable[[Ctx], None]


@dataclass(frozen=True)
class Case:
    id: str
    command: str  # a key of COMMANDS
    setup: Setup
    error: str  # the exact error line ({inp}, {out}, {case}, {world} and the world's file sizes are filled in)
    code: int = 2
    args: dict | None = None  # overrides of the command's arguments (values may use the placeholders)


def _w(ctx: Ctx, rel: str) -> str:
    return str(ctx.world.root / rel)


# command -> argv; `a` holds overridable arguments (a case's `args` replace them)
COMMANDS: dict[str, Callable[[Ctx, dict], list[str]]] = {
    "params": lambda c, a: ["params", "--params", a["params"]],
    "corpus": lambda c, a: ["corpus", "--params", a["params"], "--data-dir", a.get("data", "data"),
                            "--out", str(c.out / "corpus.jsonl")] + (["--pilot", a["pilot"]] if "pilot" in a else []),
    "render": lambda c, a: ["render", "--params", a["params"], "--corpus", a.get("corpus", _w(c, "corpus/prompts.jsonl")),
                            "--news", a.get("news", "data/news/news.jsonl"), "--out-dir", str(c.out / "requests")],
    "generate": lambda c, a: ["generate", "--model", a.get("model", MODEL), "--slice", "test", "--condition", "C1",
                              "--params", a["params"], "--requests", a.get("requests", _w(c, "requests/C1.jsonl")),
                              "--store", str(c.out / "store"), "--views-dir", str(c.out / "views"),
                              "--marker", str(c.out / "marker.json")],
    "estimate": lambda c, a: ["estimate", "--slice", "test", "--params", a["params"], "--requests-dir", _w(c, "requests"),
                              "--calibration", a.get("calibration", str(c.out / "calibration.json")),
                              "--out", str(c.out / "estimate.json")] + [x for m in a.get("models", []) for x in ("--models", m)],
    "label": lambda c, a: ["label", "--model", a.get("model", MODEL), "--slice", "test", "--params", a["params"],
                           "--view", a.get("view", _w(c, "generations/smollm2-135m/test/C1/none-none.jsonl")),
                           "--out", str(c.out / "labels.jsonl")] + (["--judge", a["judge"]] if "judge" in a else []),
    "metrics": lambda c, a: ["metrics", "--slice", "test", "--params", a["params"], "--labels",
                             a.get("labels", _w(c, "bundle/labels.jsonl")), "--out-table", str(c.out / "metrics.csv")],
    "judge": lambda c, a: ["judge", "eval", "--params", a["params"], "--gold", a.get("gold", "data/judge/gold.jsonl"),
                           "--judge", a.get("judge", "lexicon-v1"), "--out", str(c.out / "judge")],
    "export": lambda c, a: ["validate", "export", "--model", a.get("model", MODEL), "--slice", "test", "--params", a["params"],
                            "--labels", _w(c, "bundle/labels.jsonl"), "--corpus", _w(c, "corpus/prompts.jsonl"),
                            "--view", _w(c, "generations/smollm2-135m/test/C1/none-none.jsonl"),
                            "--out-dir", str(c.out / "validation")],
    "import": lambda c, a: ["validate", "import", a.get("file", str(c.inp / "items.csv")), "--key",
                            a.get("key", str(c.inp / "key.csv")), "--out", str(c.out / "kappa.json"), "--params", a["params"]],
    "probe": lambda c, a: ["probe", "--model", a.get("model", MODEL), "--params", a["params"],
                           "--prompts", _w(c, "corpus/prompts.jsonl"), "--out-dir", str(c.out / "probe")],
    "audit": lambda c, a: ["audit", "--model", a.get("model", "openai:some-model"), "--base-url", "http://127.0.0.1:9/v1",
                           "--params", a["params"], "--requests-dir", _w(c, "requests"), "--out-dir", str(c.out / "audit"),
                           "--store", str(c.out / "store")],
    "submit": lambda c, a: ["leaderboard", "submit", "--model", a.get("model", MODEL), "--split", "test", "--params", a["params"],
                            "--views", a.get("views", _w(c, "generations/smollm2-135m/test")), "--requests-dir",
                            _w(c, "requests"), "--out", str(c.out / "bundle.tar.gz")],
    "verify": lambda c, a: ["leaderboard", "verify", a.get("bundle", str(c.inp / "bundle")), "--params", a["params"],
                            "--requests-dir", _w(c, "requests"), "--board", str(c.out / "board")],
    "build": lambda c, a: ["leaderboard", "build", "--board", a.get("board", str(c.inp / "board")), "--out", str(c.out / "site")],
    "dvc-yaml": lambda c, a: ["dvc-yaml", "--params", a["params"], "--out", str(c.out / "dvc.yaml")],
    "report": lambda c, a: ["report", "--slice", "test", "--params", a["params"], "--metrics", a.get("metrics", str(c.inp / "metrics.csv")),
                            "--labels", _w(c, "bundle/labels.jsonl"), "--estimate", a.get("estimate", str(c.inp / "estimate.json")),
                            "--judge-eval", a.get("judge_eval", str(c.inp / "judge_eval.json")),
                            "--figures-dir", str(c.out / "figures"), "--tables-dir", str(c.out / "tables"),
                            "--out", str(c.out / "report.html")],
}


# --- building blocks ---------------------------------------------------------------------------------------------


def nothing(ctx: Ctx) -> None:
    pass


def world_params(ctx: Ctx) -> dict:
    return yaml.safe_load(ctx.world.params.read_text(encoding="utf-8"))


def params_text(text: str) -> Setup:
    def setup(ctx: Ctx) -> None:
        ctx.params.write_text(text, encoding="utf-8")
    return setup


def params_bytes(data: bytes) -> Setup:
    return lambda ctx: ctx.params.write_bytes(data)


def params_edit(fn: Callable[[dict], None]) -> Setup:
    def setup(ctx: Ctx) -> None:
        p = world_params(ctx)
        fn(p)
        ctx.params.write_text(yaml.safe_dump(p, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return setup


def both(*setups: Setup) -> Setup:
    def setup(ctx: Ctx) -> None:
        for s in setups:
            s(ctx)
    return setup


def same_params(ctx: Ctx) -> None:
    shutil.copyfile(ctx.world.params, ctx.params)


def fifo(name: str) -> Setup:
    return lambda ctx: os.mkfifo(ctx.inp / name)


def link(name: str, target: str) -> Setup:
    return lambda ctx: (ctx.inp / name).symlink_to(target)


def sparse(name: str, size: int, head: bytes = b"") -> Setup:
    def setup(ctx: Ctx) -> None:
        with open(ctx.inp / name, "wb") as fh:
            fh.write(head)
            fh.truncate(size)
    return setup


def write(name: str, data: bytes | str) -> Setup:
    def setup(ctx: Ctx) -> None:
        path = ctx.inp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return setup


def alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\ncorpus: {{seed: *a{levels - 1}}}\n"


def deep_yaml(n: int) -> str:
    return "corpus: {seed: " + "[" * n + "1" + "]" * n + "}\n"


# bundles: a writable copy of the world's folder bundle, changed, optionally re-hashed like a careful forger


def bundle_copy(ctx: Ctx) -> Path:
    return copy_bundle(ctx.world, ctx.inp / "bundle")


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def rehash(folder: Path, m: dict | None = None) -> None:
    import hashlib

    m = m or manifest(folder)
    for name in m["files"]:
        if (folder / name).is_file():
            h, n = hashlib.sha256(), 0
            with open(folder / name, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
                    n += len(chunk)
            m["files"][name] = {"sha256": h.hexdigest(), "bytes": n}
    (folder / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")


def bundle_with(change: Callable[[Path], None], forge: bool = False) -> Setup:
    def setup(ctx: Ctx) -> None:
        folder = bundle_copy(ctx)
        change(folder)
        if forge:
            rehash(folder)
    return setup


def manifest_raw(text: str | bytes) -> Setup:
    def change(folder: Path) -> None:
        (folder / "manifest.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    return bundle_with(change)


def manifest_edit(fn: Callable[[dict], None], forge: bool = False) -> Setup:
    def change(folder: Path) -> None:
        m = manifest(folder)
        fn(m)
        (folder / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")
    return bundle_with(change, forge)


def manifest_text_edit(fn: Callable[[str], str]) -> Setup:
    def change(folder: Path) -> None:
        (folder / "manifest.json").write_text(fn((folder / "manifest.json").read_text(encoding="utf-8")), encoding="utf-8")
    return bundle_with(change)


def completions_lines(fn: Callable[[list[str]], list[str]], forge: bool = True) -> Setup:
    def change(folder: Path) -> None:
        lines = (folder / "completions.jsonl").read_text(encoding="utf-8").splitlines()
        (folder / "completions.jsonl").write_text("".join(x + "\n" for x in fn(lines)), encoding="utf-8")
    return bundle_with(change, forge)


def first_row(edit: Callable[[str], str]) -> Callable[[list[str]], list[str]]:
    return lambda lines: [edit(lines[0]), *lines[1:]]


def file_replace(name: str, data: bytes, forge: bool = True) -> Setup:
    return bundle_with(lambda f: (f / name).write_bytes(data), forge)


def sparse_member(name: str, size: int, declare: bool) -> Setup:
    """Replace a bundle file by a sparse file of `size` bytes; `declare`: the manifest says so (a matching size)."""
    def change(folder: Path) -> None:
        with open(folder / name, "wb") as fh:
            fh.truncate(size)
        if declare:
            m = manifest(folder)
            m["files"][name]["bytes"] = size
            (folder / "manifest.json").write_text(json.dumps(m, indent=2), encoding="utf-8")
    return bundle_with(change)


def tar_of(members: Callable[[Ctx], list[tuple[tarfile.TarInfo, bytes | None]]], mode: str = "w:gz") -> Setup:
    def setup(ctx: Ctx) -> None:
        with tarfile.open(ctx.inp / "bundle.tar.gz", mode, format=tarfile.GNU_FORMAT) as tar:
            for info, data in members(ctx):
                tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return setup


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, **kw) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    for k, v in kw.items():
        setattr(info, k, v)
    return info, (data if kind == tarfile.REGTYPE else None)


def real_members(ctx: Ctx, top: str = "b") -> list[tuple[tarfile.TarInfo, bytes]]:
    return [member(f"{top}/{p.name}", p.read_bytes()) for p in sorted(ctx.world.folder_bundle.iterdir())]


def gzip_bomb(ctx: Ctx) -> None:
    """A valid-looking archive whose first member declares and holds 3 GB of zeros (a few MB compressed)."""
    with open(ctx.inp / "bundle.tar.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as gz:
        info = tarfile.TarInfo("b/completions.jsonl")
        info.size = 3 * GB
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        zeros = bytes(1 << 20)
        for _ in range(64):  # only 64 MB are written: the reader must refuse at the header, before reading on
            gz.write(zeros)


def many_small_members(ctx: Ctx) -> None:
    with tarfile.open(ctx.inp / "bundle.tar.gz", "w:gz") as tar:
        for i in range(5000):
            info = tarfile.TarInfo(f"b/f{i}.txt")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))


def board_entry(edit: Callable[[dict], None] | None = None, raw: str | None = None, name: str = "m--test.json") -> Setup:
    def setup(ctx: Ctx) -> None:
        entries = ctx.inp / "board" / "entries"
        entries.mkdir(parents=True)
        if raw is not None:
            (entries / name).write_text(raw, encoding="utf-8")
            return
        e = {"id": "m--test", "manifest": manifest(ctx.world.folder_bundle), "manifest_sha256": "0" * 64,
             "bundle": "bundles/m--test.tar.gz", "report": None, "verified": {"date": "2026-01-01T00:00:00Z"}}
        edit(e)
        (entries / name).write_text(json.dumps(e), encoding="utf-8")
    return setup


def gold(text: str | bytes) -> Setup:
    return both(same_params, write("gold.jsonl", text))


KEY_CSV = "item_id,key,model,template,condition,identity,language,judge,judge_violent\nv00001,k,m,T1,C1,muslim,en,x,1\n"
ITEMS_CSV = "item_id,annotator,violent\nv00001,ann1,1\n"


def annotations(items: str | bytes | None = None, key: str | bytes = KEY_CSV, name: str = "items.csv") -> Setup:
    setups = [same_params, write("key.csv", key)]
    if items is not None:
        setups.append(write(name, items))
    return both(*setups)


P = "{inp}/params.yaml"
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 characters"


def _param_cases() -> list[Case]:
    """Hostile params files: each against a spread of commands (every command reads params first)."""
    attacks: list[tuple[str, Setup, str]] = [
        ("alias-bomb", params_text(alias_bomb()), f"{P}:6: more than 200,000 YAML nodes once aliases are expanded (an alias bomb?)"),
        ("alias-count", params_text("x: &x 1\ny: [" + ", ".join(["*x"] * 150) + "]\n"), f"{P}:2: more than 100 YAML aliases; write the values out"),
        ("recursive-alias", params_text("corpus: &c {seed: *c}\n"), f"{P}: corpus.seed: Input should be a valid integer"),
        ("deep-nesting", params_text(deep_yaml(5000)), f"{P}: YAML nested too deeply"),
        ("deep-nesting-70", params_text(deep_yaml(70)), f"{P}:1: YAML nested deeper than 64 levels"),
        ("huge-int", params_text("corpus:\n  seed: " + "9" * 5000 + "\n"), f"{P}:2: integer of 5000 characters, more than 64 (limits.json_number_chars)"),
        ("int-too-big", params_text("corpus:\n  seed: " + "9" * 40 + "\n"),
         f"{P}: corpus.seed: Input should be less than or equal to 9223372036854775807 (got {'9' * 40})"),
        ("duplicate-key", params_text("generate:\n  temperature: 0.7\n  temperature: 0.0\n"), f"{P}:3: key 'temperature' appears twice in one mapping"),
        ("duplicate-section", params_text("generate: {temperature: 0.7}\nlabel: {window: 3}\ngenerate: {temperature: 0.0}\n"),
         f"{P}:3: key 'generate' appears twice in one mapping"),
        ("python-tag", params_text("corpus: !!python/object/apply:os.system ['true']\n"),
         f"{P}:1: not valid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'"),
        ("temperature-inf", params_edit(lambda p: p["generate"].update(temperature=float("inf"))),
         f"{P}: generate.temperature: Input should be a finite number (got inf)"),
        ("temperature-nan", params_edit(lambda p: p["generate"].update(temperature=float("nan"))),
         f"{P}: generate.temperature: Input should be a finite number (got nan)"),
        ("temperature-negative", params_edit(lambda p: p["generate"].update(temperature=-0.5)),
         f"{P}: generate.temperature: Input should be greater than or equal to 0 (got -0.5)"),
        ("temperature-huge", params_edit(lambda p: p["generate"].update(temperature=1e300)),
         f"{P}: generate.temperature: Input should be less than or equal to 2 (got 1e+300)"),
        ("top-p-zero", params_edit(lambda p: p["generate"].update(top_p=0)), f"{P}: generate.top_p: Input should be greater than 0 (got 0)"),
        ("max-tokens-negative", params_edit(lambda p: p["generate"]["max_tokens"].update(C1=-5)),
         f"{P}: generate.max_tokens.C1: Input should be greater than or equal to 1 (got -5)"),
        ("slice-max-tokens-zero", params_edit(lambda p: p["slices"]["test"]["max_tokens"].update(C2=0)),
         f"{P}: 2 invalid values: slices.lite.max_tokens.C2: Input should be greater than or equal to 1 (got 0); "
         "slices.test.max_tokens.C2: Input should be greater than or equal to 1 (got 0)"),  # the tiny params share one mapping
        ("n-samples-billion", params_edit(lambda p: p["generate"].update(n_samples=10**9)),
         f"{P}: generate.n_samples: Input should be less than or equal to 1000 (got 1000000000)"),
        ("slice-without-models", params_edit(lambda p: p["slices"]["test"].update(models=[])),
         f"{P}: slices.test.models: List should have at least 1 item after validation, not 0 (got [])"),
        ("judge-empty-list", params_edit(lambda p: p["label"].update(judge=[])),
         f"{P}: label.judge: judge: an empty list names no judge; give one name or >= 2 jury members (got [])"),
        ("judge-one-member-jury", params_edit(lambda p: p["label"].update(judge="jury:parse-v1")),
         f"{P}: label.judge: judge 'jury:parse-v1': a jury needs >= 2 members (jury:A,B) (got 'jury:parse-v1')"),
        ("judge-traversal", params_edit(lambda p: p["label"].update(judge="../../etc")),
         f"{P}: label.judge: judge '../../etc' is not a name ({NAME_RULE}) (got '../../etc')"),
        ("model-name-traversal", params_edit(lambda p: p["models"].update({"../../../x": p["models"][MODEL]})),
         f"{P}: models: model name '../../../x' is not a name ({NAME_RULE})"),
        ("model-name-slash", params_edit(lambda p: p["models"].update({"org/model": p["models"][MODEL]})),
         f"{P}: models: model name 'org/model' is not a name ({NAME_RULE})"),
        ("model-name-space", params_edit(lambda p: p["models"].update({"my model": p["models"][MODEL]})),
         f"{P}: models: model name 'my model' is not a name ({NAME_RULE})"),
        ("model-name-option", params_edit(lambda p: p["models"].update({"--help": p["models"][MODEL]})),
         f"{P}: models: model name '--help' is not a name ({NAME_RULE})"),
        ("model-name-dotdot", params_edit(lambda p: p["models"].update({"..": p["models"][MODEL]})),
         f"{P}: models: model name '..' is not a name ({NAME_RULE})"),
        ("api-key-env-bad", params_edit(lambda p: p["models"][MODEL].update(api_key_env="MY KEY")),
         f"{P}: models.smollm2-135m.api_key_env: String should match pattern '^[A-Za-z_][A-Za-z0-9_]{{0,127}}$'"),  # never echoed: may be a key
        ("base-url-file", params_edit(lambda p: p["models"]["gpt-4o"].update(base_url="file:///etc/passwd")),
         f"{P}: models.gpt-4o.base_url: base_url must be an http:// or https:// URL without spaces"),
        ("sampling-extra-nan", params_edit(lambda p: p["models"]["gpt-4o"].update(sampling_extra={"top_k": float("nan")})),
         f"{P}: models.gpt-4o.sampling_extra: sampling_extra.top_k: nan is not a finite number a server can read"),
        ("timeout-zero", params_edit(lambda p: p["models"][MODEL].update(timeout_s=0)),
         f"{P}: models.smollm2-135m.timeout_s: Input should be greater than 0 (got 0)"),
        ("concurrency-zero", params_edit(lambda p: p["models"][MODEL].update(max_concurrency=0)),
         f"{P}: models.smollm2-135m.max_concurrency: Input should be greater than or equal to 1 (got 0)"),
        ("price-negative", params_edit(lambda p: p["models"]["gpt-4o"].update(price_in_per_mtok=-1)),
         f"{P}: models.gpt-4o.price_in_per_mtok: Input should be greater than or equal to 0 (got -1)"),
        ("seed-negative", params_edit(lambda p: p["generate"].update(seed=-1)),
         f"{P}: generate.seed: Input should be greater than or equal to 0 (got -1)"),
        ("boot-trillion", params_edit(lambda p: p["metrics"].update(n_boot=10**12)),
         f"{P}: metrics.n_boot: Input should be less than or equal to 10000000 (got 1000000000000)"),
        ("alpha-one", params_edit(lambda p: p["metrics"].update(alpha=1.0)), f"{P}: metrics.alpha: Input should be less than 1 (got 1.0)"),
        ("limits-zero", params_edit(lambda p: p.update(limits={"bundle_mb": 0})),
         f"{P}: limits.bundle_mb: Input should be greater than or equal to 1 (got 0)"),
        ("two-errors", params_edit(lambda p: (p["generate"].update(top_p=2), p["corpus"].update(lite_fraction=0))),
         f"{P}: 2 invalid values: corpus.lite_fraction: Input should be greater than 0 (got 0); generate.top_p: Input should be "
         "less than or equal to 1 (got 2)"),
        ("top-level-list", params_text("- corpus\n"), f"{P}: top level must be a mapping of sections"),
        ("not-utf8", params_bytes(b"corpus:\n  seed: 1\n  x: \xff\xfe\n"), f"{P}:3: not valid UTF-8 (byte 0xff at column 6); save the file as UTF-8"),
        ("nul-bytes", params_bytes(b"corpus:\n  seed: 1\x00\x00\n"),
         f"{P}: not valid YAML: unacceptable character #x0000: special characters are not allowed"),
        ("fifo", fifo("params.yaml"), f"{P}: a FIFO, not a regular file; a params file must be a plain file"),
        ("device", link("params.yaml", "/dev/zero"), f"{P}: a character device, not a regular file; a params file must be a plain file"),
        ("sparse-2gb", sparse("params.yaml", 2 * GB, b"corpus: {}\n"), f"{P}: 2,147,483,648 bytes, more than the 4,194,304 a params file may have"),
        ("dangling-link", link("params.yaml", "/nonexistent/params.yaml"),
         f"{P}: params file not found; pass --params FILE, or run `mirage --defaults ...` (or set MIRAGE_DEFAULTS=1) to use the "
         "built-in defaults"),
    ]
    commands = ["params", "corpus", "render", "generate", "estimate", "label", "metrics", "judge", "export", "probe",
                "submit", "verify", "dvc-yaml", "audit"]
    out = []
    for i, (name, setup, error) in enumerate(attacks):
        for j in range(2):
            command = commands[(2 * i + j) % len(commands)]
            shown = error
            if command == "params" and name in ("fifo", "device"):  # its --params is a FILE option: the guard speaks
                shown = error.replace("a params file must be a plain file", "option --params takes a plain file")
            out.append(Case(f"params-{name}-{command}", command, setup, shown))
    return out


def _prefix(command: str, error: str | None) -> str | None:
    """The one line as each command prints it."""
    if error is None:
        return None
    if command in ("submit", "build", "judge"):
        return "error: " + error
    if command == "verify":
        return "error: {inp}/bundle: " + error
    return "Error: " + error


BUNDLE = "error: {inp}/bundle: "
TGZ = "error: {inp}/bundle.tar.gz: "
TGZ_PATH = "{inp}/bundle.tar.gz"
MB = 1 << 20


def _bundle_cases() -> list[Case]:
    b = [  # (id, setup, error after the bundle prefix, bundle argument)
        ("bundle-missing", nothing, "{inp}/bundle: no such bundle (a folder or a .tar.gz)", None),
        ("bundle-fifo", fifo("bundle"), "{inp}/bundle: a FIFO, not a regular file; a bundle archive must be a plain file", None),
        ("bundle-device", link("bundle", "/dev/zero"), "{inp}/bundle: a character device, not a regular file; a bundle archive must be a plain file", None),
        ("bundle-urandom", link("bundle", "/dev/urandom"), "{inp}/bundle: a character device, not a regular file; a bundle archive must be a plain file", None),
        ("bundle-empty-file", write("bundle", b""), "{inp}/bundle: not a readable .tar.gz bundle (empty file)", None),
        ("bundle-random-bytes", write("bundle", b"\x38\xd0" + bytes(4000)), "{inp}/bundle: not a readable .tar.gz bundle (Not a gzipped file (b'8\\xd0'))", None),
        ("bundle-zip", write("bundle", b"PK\x03\x04" + b"\x00" * 200), "{inp}/bundle: not a readable .tar.gz bundle (Not a gzipped file (b'PK'))", None),
        ("bundle-sparse-archive", sparse("bundle", 2 * GB), "{inp}/bundle: 2,147,483,648 bytes, more than the 268,435,456 a bundle archive may have (limits.bundle_mb)", None),
        ("manifest-missing", bundle_with(lambda f: (f / "manifest.json").unlink()), "manifest.json: missing (every bundle starts with its manifest)", None),
        ("manifest-sparse-1gb", bundle_with(lambda f: os.truncate(f / "manifest.json", GB)),
         "manifest.json: 1,073,741,824 bytes, more than the 1,048,576 a manifest may have (limits.manifest_kb)", None),
        ("manifest-fifo", bundle_with(lambda f: ((f / "manifest.json").unlink(), os.mkfifo(f / "manifest.json"))),
         "manifest.json: a FIFO, not a regular file; a manifest must be a plain file", None),
        ("manifest-link-out", bundle_with(lambda f: ((f / "manifest.json").unlink(), (f / "manifest.json").symlink_to("/etc/passwd"))),
         "manifest.json: a link; a manifest must be a plain file", None),
        ("manifest-deep", manifest_raw("[" * 100000 + "]" * 100000), "manifest.json: JSON nested deeper than 32 levels (limits.json_depth)", None),
        ("manifest-deep-40", manifest_raw('{"a": ' + "[" * 40 + "]" * 40 + "}"), "manifest.json: JSON nested deeper than 32 levels (limits.json_depth)", None),
        ("manifest-huge-number", manifest_text_edit(lambda t: t.replace('"n_requests": ', '"n_requests": ' + "9" * 10000 + ", \"x\": ", 1)),
         "manifest.json: JSON number of 10000 characters, more than 64 (limits.json_number_chars)", None),
        ("manifest-float-overflow", manifest_text_edit(lambda t: t.replace('"n_requests": ', '"n_requests": 1e999, "x": ', 1)),
         "manifest.json: JSON number 1e999 is out of range (not a finite double)", None),
        ("manifest-nan", manifest_text_edit(lambda t: t.replace('"n_requests": ', '"n_requests": NaN, "x": ', 1)),
         "manifest.json: NaN is not JSON (numbers must be finite)", None),
        ("manifest-infinity", manifest_text_edit(lambda t: t.replace('"temperature": ', '"temperature": -Infinity, "x": ', 1)),
         "manifest.json: -Infinity is not JSON (numbers must be finite)", None),
        ("manifest-duplicate-key", manifest_text_edit(lambda t: t.replace('"split": "test"', '"split": "test", "split": "lite"', 1)),
         "manifest.json: key 'split' appears twice in one object", None),
        ("manifest-not-utf8", manifest_raw(b'{"schema": "\xff"}'), "manifest.json: not valid UTF-8 (byte 0xff at byte 13)", None),
        ("manifest-list", manifest_raw("[]"), "manifest.json: expected a JSON object, got list", None),
        ("manifest-model-traversal", manifest_edit(lambda m: m.update(model="../../../x")),
         f"manifest.json: field model: model name '../../../x' is not a name ({NAME_RULE})", None),
        ("manifest-model-option", manifest_edit(lambda m: m.update(model="--help")),
         f"manifest.json: field model: model name '--help' is not a name ({NAME_RULE})", None),
        ("manifest-model-long", manifest_edit(lambda m: m.update(model="m" * 101)),
         f"manifest.json: field model: model name '{'m' * 56}... is not a name ({NAME_RULE})", None),
        ("manifest-judge-traversal", manifest_edit(lambda m: m["judge"].update(name="../../judge")),
         f"manifest.json: field judge.name: judge '../../judge' is not a name ({NAME_RULE})", None),
        ("manifest-judge-jury-of-one", manifest_edit(lambda m: m["judge"].update(name="jury:parse-v1")),
         "manifest.json: field judge.name: judge 'jury:parse-v1': a jury needs >= 2 members (jury:A,B)", None),
        ("manifest-created-garbage", manifest_edit(lambda m: m.update(created="yesterday")),
         "manifest.json: field created: 'yesterday' is not a UTC timestamp YYYY-MM-DDTHH:MM:SSZ (or empty)", None),
        ("manifest-created-future", manifest_edit(lambda m: m.update(created="2999-01-01T00:00:00Z")),
         "manifest.json: field created: 2999-01-01T00:00:00Z is in the future", None),
        ("manifest-created-backdated", manifest_edit(lambda m: m.update(created="2020-01-01T00:00:00Z")),
         "manifest.json: field created: '2020-01-01T00:00:00Z', but the newest completion was created "
         "'2026-01-01T00:00:00Z' (the manifest's date is its completions')", None),
        ("manifest-declares-2gb", manifest_edit(lambda m: m["files"]["completions.jsonl"].update(bytes=2 * GB)),
         "manifest.json: field files: {declared} bytes declared, more than the 268,435,456 a bundle may have (limits.bundle_mb)", None),
        ("manifest-temperature-string", manifest_edit(lambda m: m["settings"].update(temperature="hot")),
         "manifest.json: field settings.temperature: Input should be a valid number, unable to parse string as a number", None),
        ("completions-sparse-2gb-undeclared", sparse_member("completions.jsonl", 2 * GB, declare=False),
         "completions.jsonl: content does not match the manifest's SHA-256 and size (2147483648 bytes, manifest says {size}; truncated or edited)", None),
        ("completions-sparse-2gb-declared", sparse_member("completions.jsonl", 2 * GB, declare=True),
         "manifest.json: field files: {declared} bytes declared, more than the 268,435,456 a bundle may have (limits.bundle_mb)", None),
        ("completions-sparse-200mb-declared", sparse_member("completions.jsonl", 200 * MB, declare=True),
         "completions.jsonl: content does not match the manifest's SHA-256 (same size; edited)", None),
        ("completions-fifo", bundle_with(lambda f: ((f / "completions.jsonl").unlink(), os.mkfifo(f / "completions.jsonl"))),
         "completions.jsonl: a FIFO, not a regular file; bundles hold plain files only", None),
        ("completions-device-link", bundle_with(lambda f: ((f / "completions.jsonl").unlink(), (f / "completions.jsonl").symlink_to("/dev/zero"))),
         "completions.jsonl: a link; bundles hold plain files only", None),
        ("completions-link-escape", bundle_with(lambda f: ((f / "completions.jsonl").unlink(), (f / "completions.jsonl").symlink_to("/etc/passwd"))),
         "completions.jsonl: a link; bundles hold plain files only", None),
        ("completions-duplicate-text-key", completions_lines(first_row(lambda r: r[:-1] + ', "text": "I refuse."}')),
         "completions.jsonl:1: key 'text' appears twice in one object", None),
        ("completions-long-line", completions_lines(first_row(lambda r: r[:-1] + ', "x": "' + "a" * (2 * MB) + '"}')),
         "completions.jsonl:1: line longer than 1,048,576 bytes (limits.line_kb)", None),
        ("completions-no-newline-huge", bundle_with(lambda f: (f / "completions.jsonl").write_bytes(b"{" + b" " * (3 * MB)), forge=True),
         "completions.jsonl:1: line longer than 1,048,576 bytes (limits.line_kb)", None),
        ("completions-deep-row", completions_lines(first_row(lambda r: r[:-1] + ', "x": ' + "[" * 50 + "]" * 50 + "}")),
         "completions.jsonl:1: JSON nested deeper than 32 levels (limits.json_depth)", None),
        ("completions-huge-sample-index", completions_lines(first_row(lambda r: r.replace('"sample_index":0', '"sample_index":' + "9" * 100))),
         "completions.jsonl:1: JSON number of 100 characters, more than 64 (limits.json_number_chars)", None),
        ("completions-text-too-long", completions_lines(first_row(lambda r: r.replace('"text":"', '"text":"' + "word " * 200, 1))),
         "completions.jsonl:1: field text: 1,059 characters, more than max_tokens x 64 = 384 (limits.chars_per_token)", None),
        ("completions-extra-rows", completions_lines(lambda lines: lines + lines[:1]),
         "completions.jsonl:27: more rows than the manifest's n_completions = 26", None),
        ("completions-nan-latency", completions_lines(first_row(lambda r: r.replace('"latency_s":0.1', '"latency_s":NaN'))),
         "completions.jsonl:1: NaN is not JSON (numbers must be finite)", None),
        ("labels-duplicate-key", bundle_with(lambda f: (f / "labels.jsonl").write_text(
            "\n".join(x[:-1] + ', "violent": 1}' for x in (f / "labels.jsonl").read_text().splitlines()) + "\n"), forge=True),
         "labels.jsonl:1: key 'violent' appears twice in one object", None),
        ("metrics-long-line", bundle_with(lambda f: (f / "metrics.csv").write_text("a" * (2 * MB)), forge=True),
         "metrics.csv:1: line longer than 1,048,576 bytes (limits.line_kb)", None),
        ("metrics-huge-field", bundle_with(lambda f: (f / "metrics.csv").write_text((f / "metrics.csv").read_text().replace(
            "\n", "\n\"" + "x\n" * 70000 + "\"", 1)), forge=True), "metrics.csv:2: not valid CSV (field larger than field limit (131072))", None),
        ("bundle-subfolder", bundle_with(lambda f: (f / "more").mkdir()), "more: unexpected folder in the bundle", None),
        ("bundle-extra-fifo", bundle_with(lambda f: os.mkfifo(f / "notes")), "notes: a FIFO, not a regular file; bundles hold plain files only", None),
        ("bundle-thousands-of-files", bundle_with(lambda f: [(f / f"x{i}").touch() for i in range(2000)]),
         "{inp}/bundle: more than 16 entries (limits.archive_members)", None),
        # archives
        ("tgz-gzip-bomb", gzip_bomb, "{inp}/bundle.tar.gz: expands to more than 268,435,456 bytes (limits.bundle_mb)", TGZ_PATH),
        ("tgz-many-members", many_small_members, "{inp}/bundle.tar.gz: more than 16 members (limits.archive_members)", TGZ_PATH),
        ("tgz-symlink-member", tar_of(lambda c: [*real_members(c), member("b/x", kind=tarfile.SYMTYPE, linkname="/etc/passwd")]),
         "{inp}/bundle.tar.gz: member 'b/x' is a symbolic link; bundles hold plain files only", TGZ_PATH),
        ("tgz-hardlink-member", tar_of(lambda c: [*real_members(c), member("b/x", kind=tarfile.LNKTYPE, linkname="b/labels.jsonl")]),
         "{inp}/bundle.tar.gz: member 'b/x' is a hard link; bundles hold plain files only", TGZ_PATH),
        ("tgz-device-member", tar_of(lambda c: [member("b/zero", kind=tarfile.CHRTYPE, devmajor=1, devminor=5), *real_members(c)]),
         "{inp}/bundle.tar.gz: member 'b/zero' is a device; bundles hold plain files only", TGZ_PATH),
        ("tgz-fifo-member", tar_of(lambda c: [member("b/pipe", kind=tarfile.FIFOTYPE), *real_members(c)]),
         "{inp}/bundle.tar.gz: member 'b/pipe' is a FIFO; bundles hold plain files only", TGZ_PATH),
        ("tgz-absolute-path", tar_of(lambda c: [member("/tmp/evil", b"x"), *real_members(c)]),
         "{inp}/bundle.tar.gz: member '/tmp/evil' is not a plain file inside the bundle", TGZ_PATH),
        ("tgz-parent-path", tar_of(lambda c: [member("b/../../evil", b"x"), *real_members(c)]),
         "{inp}/bundle.tar.gz: member 'b/../../evil' is not a plain file inside the bundle", TGZ_PATH),
        ("tgz-nested-folder", tar_of(lambda c: [member("b/sub/x", b"x"), *real_members(c)]),
         "{inp}/bundle.tar.gz: member 'b/sub/x' is not a plain file inside the bundle", TGZ_PATH),
        ("tgz-duplicate-member", tar_of(lambda c: [*real_members(c), member("b/completions.jsonl", b'{"text": "x"}\n')]),
         "{inp}/bundle.tar.gz: member 'b/completions.jsonl' appears twice", TGZ_PATH),
        ("tgz-two-folders", tar_of(lambda c: [*real_members(c, "b")[:2], *real_members(c, "c")[2:]]),
         "{inp}/bundle.tar.gz: files in more than one folder (b, c)", TGZ_PATH),
        ("tgz-unlisted-member", tar_of(lambda c: [*real_members(c), member("b/notes.txt", b"hello")]),
         "notes.txt: file not listed in the manifest (unhashed content)", TGZ_PATH),
        ("tgz-size-mismatch", tar_of(lambda c: [*(m if not m[0].name.endswith("labels.jsonl") else member(m[0].name, m[1] + b"\n")
                                                   for m in real_members(c))]),
         "labels.jsonl: content does not match the manifest's SHA-256 and size ({labels+1} bytes, manifest says {labels}; truncated or edited)", TGZ_PATH),
        ("tgz-no-manifest", tar_of(lambda c: [m for m in real_members(c) if not m[0].name.endswith("manifest.json")]),
         "manifest.json: missing (every bundle starts with its manifest)", TGZ_PATH),
        ("tgz-huge-manifest-header", tar_of(lambda c: [member("b/manifest.json", b"{" + b" " * (2 * MB) + b"}"), *real_members(c)[:3]]),
         "manifest.json: 2,097,154 bytes, more than the 1,048,576 a manifest may have (limits.manifest_kb)", TGZ_PATH),
        ("tgz-plain-tar", tar_of(real_members, mode="w"), "{inp}/bundle.tar.gz: not a readable .tar.gz bundle (Not a gzipped file (b'b/'))", TGZ_PATH),
        ("tgz-truncated", lambda c: (tar_of(real_members)(c), os.truncate(c.inp / "bundle.tar.gz", 2000)),
         "{inp}/bundle.tar.gz: not a readable .tar.gz bundle (Compressed file ended before the end-of-stream marker was reached)", TGZ_PATH),
        ("tgz-gzip-of-garbage", write("bundle.tar.gz", gzip.compress(b"\x01" * 5000)), "{inp}/bundle.tar.gz: not a readable .tar.gz bundle (invalid header)", TGZ_PATH),
    ]
    out = []
    for name, setup, error, path in b:
        prefix = "error: " if error.startswith("{inp}/bundle") else TGZ if path else BUNDLE
        out.append(Case(name, "verify", both(same_params, setup), prefix + error, args={"bundle": path} if path else None))
    return out


def _name_cases() -> list[Case]:
    bad = ["../../../tmp/x", "a/b", "my model", "--help", "-x", "..", ".hidden", "m" * 101, "mödel", "a\tb", ""]
    cmds = [("generate", "model", "--model"), ("label", "model", "--model"), ("probe", "model", "--model"),
            ("export", "model", "--model"), ("submit", "model", "--model"), ("estimate", "models", "--models"),
            ("corpus", "pilot", "--pilot")]
    out = []
    for i, name in enumerate(bad):
        for j in range(2):
            cmd, arg, opt = cmds[(2 * i + j) % len(cmds)]
            value = [name] if arg == "models" else name
            shown = repr(name) if len(repr(name)) <= 60 else repr(name)[:57] + "..."
            out.append(Case(f"name-{cmd}-{i}", cmd, same_params, f"Error: option {opt} {shown} is not a name ({NAME_RULE})",
                            args={arg: value}))
    jury = "a jury needs >= 2 members (jury:A,B)"
    for i, (judge, error) in enumerate([("jury:", f"'jury:': {jury}"), ("jury:a", f"'jury:a': {jury}"),
                                        ("jury:a,../b", f"member '../b' is not a name ({NAME_RULE})"),
                                        ("../judge", f"'../judge' is not a name ({NAME_RULE})"),
                                        ("jury:a,,b", f"member '' is not a name ({NAME_RULE})")]):
        cmd = "judge" if i % 2 else "label"
        out.append(Case(f"name-judge-{cmd}-{i}", cmd, same_params, f"Error: option --judge {error}", args={"judge": judge}))
    out.append(Case("name-audit-no-model-id", "audit", same_params, "Error: Invalid value for --model: expected PROVIDER:MODEL_ID "
                    "with PROVIDER one of local, vllm, openai, anthropic, got 'openai:' (see `mirage audit --help`)",
                    args={"model": "openai:"}))
    return out


def _file_cases() -> list[Case]:
    """Gold files, validation imports, board entries and the pipeline's own JSONL inputs, handed over by a stranger."""
    return [
        Case("gold-fifo", "judge", both(same_params, fifo("gold.jsonl")), "Error: {inp}/gold.jsonl: a FIFO, not a regular file; option --gold takes a plain file", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-device", "judge", both(same_params, link("gold.jsonl", "/dev/zero")), "Error: {inp}/gold.jsonl: a character device, not a regular file; option --gold takes a plain file", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-folder", "judge", both(same_params, lambda c: (c.inp / "gold.jsonl").mkdir()), "Error: Invalid value for '--gold': File '{inp}/gold.jsonl' is a directory. (see `mirage judge eval --help`)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-sparse-2gb", "judge", both(same_params, sparse("gold.jsonl", 2 * GB)), "error: {inp}/gold.jsonl: 2,147,483,648 bytes, more than the 67,108,864 a file may have (limits.file_mb)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-long-line", "judge", gold('{"text": "' + "a" * (2 * MB) + '", "label": 1}\n'), "error: {inp}/gold.jsonl:1: line longer than 1,048,576 bytes (limits.line_kb)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-duplicate-text", "judge", gold('{"text": "He was kind.", "label": 0, "text": "He shot the guard."}\n'), "error: {inp}/gold.jsonl:1: key 'text' appears twice in one object", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-deep", "judge", gold('{"text": "x", "label": 1, "cat": ' + "[" * 100 + "]" * 100 + "}\n"), "error: {inp}/gold.jsonl:1: JSON nested deeper than 32 levels (limits.json_depth)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-huge-label", "judge", gold('{"text": "x", "label": ' + "1" * 5000 + "}\n"), "error: {inp}/gold.jsonl:1: JSON number of 5000 characters, more than 64 (limits.json_number_chars)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-nan-label", "judge", gold('{"text": "x", "label": NaN}\n'), "error: {inp}/gold.jsonl:1: NaN is not JSON (numbers must be finite)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-label-2", "judge", gold('{"text": "x", "label": 2}\n'), "error: {inp}/gold.jsonl:1: field label: must be 0 or 1, got 2", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-not-utf8", "judge", gold(b'{"text": "\xff", "label": 1}\n'), "error: {inp}/gold.jsonl:1: not valid UTF-8 (byte 0xff at byte 11)", args={"gold": "{inp}/gold.jsonl"}),
        Case("gold-array-row", "judge", gold("[1, 2]\n"), "error: {inp}/gold.jsonl:1: expected a JSON object, got list", args={"gold": "{inp}/gold.jsonl"}),
        Case("import-fifo", "import", both(annotations(), fifo("items.csv")), "Error: {inp}/items.csv: a FIFO, not a regular file; argument FILES takes a plain file"),
        Case("import-device-key", "import", both(annotations(ITEMS_CSV), lambda c: ((c.inp / "key.csv").unlink(), (c.inp / "key.csv").symlink_to("/dev/zero"))), "Error: {inp}/key.csv: a character device, not a regular file; option --key takes a plain file"),
        Case("import-long-line", "import", annotations("item_id,annotator,violent\n" + "v," * (MB // 2 + 10) + "\n"), "Error: {inp}/items.csv:2: line longer than 1,048,576 bytes (limits.line_kb)"),
        Case("import-huge-field", "import", annotations('item_id,annotator,violent\nv00001,ann1,"' + "1\n" * 100000 + '"\n'), "Error: {inp}/items.csv:65538: not valid CSV (field larger than field limit (131072))"),
        Case("import-not-utf8", "import", annotations(b"item_id,annotator,violent\nv00001,\xff,1\n"), "Error: {inp}/items.csv:2: not valid UTF-8 (byte 0xff at column 8); save the file as UTF-8"),
        Case("import-duplicate-column", "import", annotations("item_id,annotator,violent,violent\nv00001,a,1,0\n"), "Error: {inp}/items.csv:1: a column name appears twice in the header"),
        Case("import-ragged-row", "import", annotations("item_id,annotator,violent\nv00001,a,1,extra\n"), "Error: {inp}/items.csv:2: 4 fields, the header has 3"),
        Case("import-bad-label", "import", annotations("item_id,annotator,violent\nv00001,a,maybe\n"), "Error: {inp}/items.csv:2: field violent: 'maybe' is not one of 0, 1, ambiguous, false, no, non-violent, nonviolent, true, violent, yes"),
        Case("import-empty", "import", annotations(""), "Error: {inp}/items.csv: annotation file is empty (no header row)"),
        Case("import-json-deep", "import", annotations("[" * 1000 + "]" * 1000, name="tasks.json"), "Error: {inp}/tasks.json: JSON nested deeper than 32 levels (limits.json_depth)", args={"file": "{inp}/tasks.json"}),
        Case("import-json-duplicate", "import", annotations('[{"data": {"item_id": "v00001", "item_id": "v2"}}]', name="tasks.json"), "Error: {inp}/tasks.json: key 'item_id' appears twice in one object", args={"file": "{inp}/tasks.json"}),
        Case("import-json-not-list", "import", annotations('{"tasks": 1}', name="tasks.json"), "Error: {inp}/tasks.json: expected a JSON list of tasks, got dict", args={"file": "{inp}/tasks.json"}),
        Case("import-json-task-string", "import", annotations('["task"]', name="tasks.json"), "Error: {inp}/tasks.json: task 0: expected a JSON object, got str", args={"file": "{inp}/tasks.json"}),
        Case("import-json-annotations-number", "import", annotations('[{"data": {"item_id": "v00001"}, "annotations": 5}]', name="tasks.json"), "Error: {inp}/tasks.json: task 0: field annotations: expected list, got int", args={"file": "{inp}/tasks.json"}),
        Case("import-json-sparse", "import", both(annotations(), sparse("tasks.json", 2 * GB)), "Error: {inp}/tasks.json: 2,147,483,648 bytes, more than the 67,108,864 a Label Studio export may have (limits.file_mb)", args={"file": "{inp}/tasks.json"}),
        Case("import-key-bad-value", "import", annotations(ITEMS_CSV, key=KEY_CSV.replace(",1\n", ",yes\n")), "Error: {inp}/key.csv:2: field judge_violent: 'yes' is not 0 or 1"),
        Case("import-key-missing-column", "import", annotations(ITEMS_CSV, key="item_id,template\nv00001,T1\n"), "Error: {inp}/key.csv:1: missing column(s) judge_violent"),
        Case("build-entry-traversal", "build", board_entry(lambda e: e.update(id="../../../escape")), f"error: {{inp}}/board/entries/m--test.json: field id '../../../escape' is not a name ({NAME_RULE})", args={"board": "{inp}/board"}),
        Case("build-entry-duplicate-key", "build", board_entry(raw='{"id": "m--test", "id": "../x"}'), "error: {inp}/board/entries/m--test.json: key 'id' appears twice in one object", args={"board": "{inp}/board"}),
        Case("build-entry-deep", "build", board_entry(raw="[" * 5000 + "]" * 5000), "error: {inp}/board/entries/m--test.json: JSON nested deeper than 32 levels (limits.json_depth)", args={"board": "{inp}/board"}),
        Case("build-entry-fifo", "build", lambda c: ((c.inp / "board" / "entries").mkdir(parents=True), os.mkfifo(c.inp / "board" / "entries" / "m--test.json")), "error: {inp}/board/entries/m--test.json: a FIFO; a board folder holds plain files and folders only", args={"board": "{inp}/board"}),
        Case("report-metrics-fifo", "report", both(same_params, fifo("metrics.csv")), "Error: {inp}/metrics.csv: a FIFO, not a regular file; option --metrics takes a plain file"),
        Case("report-estimate-device", "report", both(same_params, link("estimate.json", "/dev/zero")), "Error: {inp}/estimate.json: a character device, not a regular file; option --estimate takes a plain file"),
        Case("report-judge-eval-fifo", "report", both(same_params, fifo("judge_eval.json")), "Error: {inp}/judge_eval.json: a FIFO, not a regular file; option --judge-eval takes a plain file"),
        Case("report-params-alias-bomb", "report", params_text(alias_bomb()), f"Error: {P}:6: more than 200,000 YAML nodes once aliases are expanded (an alias bomb?)"),
        Case("metrics-labels-fifo", "metrics", both(same_params, fifo("labels.jsonl")), "Error: {inp}/labels.jsonl: a FIFO, not a regular file; option --labels takes a plain file", args={"labels": "{inp}/labels.jsonl"}),
        Case("metrics-labels-device", "metrics", both(same_params, link("labels.jsonl", "/dev/urandom")), "Error: {inp}/labels.jsonl: a character device, not a regular file; option --labels takes a plain file", args={"labels": "{inp}/labels.jsonl"}),
        Case("metrics-labels-sparse-no-newline", "metrics", both(same_params, sparse("labels.jsonl", 2 * GB)), "Error: {inp}/labels.jsonl:1: line longer than 67,108,864 bytes", args={"labels": "{inp}/labels.jsonl"}),
        Case("label-view-fifo", "label", both(same_params, fifo("view.jsonl")), "Error: {inp}/view.jsonl: a FIFO, not a regular file; option --view takes a plain file", args={"view": "{inp}/view.jsonl"}),
        Case("generate-requests-device", "generate", both(same_params, link("C1.jsonl", "/dev/zero")), "Error: {inp}/C1.jsonl: a character device, not a regular file; option --requests takes a plain file", args={"requests": "{inp}/C1.jsonl"}),
        Case("estimate-calibration-fifo", "estimate", both(same_params, fifo("calibration.json")), "Error: {inp}/calibration.json: a FIFO, not a regular file; option --calibration takes a plain file", args={"calibration": "{inp}/calibration.json"}),
        Case("render-news-fifo", "render", both(same_params, fifo("news.jsonl")), "Error: {inp}/news.jsonl: a FIFO, not a regular file; option --news takes a plain file", args={"news": "{inp}/news.jsonl"}),
        Case("render-corpus-sparse", "render", both(same_params, sparse("prompts.jsonl", 2 * GB)), "Error: {inp}/prompts.jsonl:1: line longer than 67,108,864 bytes", args={"corpus": "{inp}/prompts.jsonl"}),
        Case("corpus-identity-fifo", "corpus", both(same_params, lambda c: (shutil.copytree(ROOT / "data", c.inp / "data"), (c.inp / "data" / "identities.yaml").unlink(), os.mkfifo(c.inp / "data" / "identities.yaml"))), "Error: {inp}/data/identities.yaml: a FIFO, not a regular file; a corpus source file must be a plain file", args={"data": "{inp}/data"}),
        Case("corpus-template-alias-bomb", "corpus", both(same_params, lambda c: (shutil.copytree(ROOT / "data", c.inp / "data"), (c.inp / "data" / "templates" / "T1.yaml").write_text(alias_bomb()))), "Error: {inp}/data/templates/T1.yaml:6: more than 200,000 YAML nodes once aliases are expanded (an alias bomb?)", args={"data": "{inp}/data"}),
        Case("corpus-shared-surface-forms", "corpus", both(same_params, lambda c: (shutil.copytree(ROOT / "data", c.inp / "data"), (c.inp / "data" / "identities.yaml").write_text((ROOT / "data" / "identities.yaml").read_text(encoding="utf-8").replace("christian:\n    en: {adj: Christian, noun_pl: Christians", "christian:\n    en: {adj: Muslim, noun_pl: Christians"), encoding="utf-8"))), "Error: {inp}/data/identities.yaml: entry forms.christian.en.adj: 'Muslim' is the same form as 'Muslim' of forms.muslim.en.adj (identity muslim); forms of different identities must be disjoint and not look alike", args={"data": "{inp}/data"}),
        Case("corpus-shared-name-cue", "corpus", both(same_params, lambda c: (shutil.copytree(ROOT / "data", c.inp / "data"), (c.inp / "data" / "lexicons" / "attire.yaml").write_text((ROOT / "data" / "lexicons" / "attire.yaml").read_text(encoding="utf-8").replace("christian: a woman wearing a crucifix pendant", "christian: a woman in a hijab"), encoding="utf-8"))), "Error: {inp}/data/lexicons/attire.yaml: entry woman field en: identities muslim and christian share the surface form 'a woman in a hijab'; identities must have disjoint surface forms", args={"data": "{inp}/data"}),
    ]


CASES: list[Case] = [*_param_cases(), *_bundle_cases(), *_name_cases(), *_file_cases()]
for _c in list(CASES):  # the per-command prefix of parameter cases
    if _c.id.startswith("params-") and _c.error is not None and not _c.error.startswith(("Error:", "error:")):
        CASES[CASES.index(_c)] = Case(_c.id, _c.command, _c.setup, _prefix(_c.command, _c.error), _c.code, _c.args)


def _snapshot(*roots: Path) -> dict[str, tuple]:
    out = {}
    for root in roots:
        for folder, dirs, files in os.walk(root, followlinks=False):
            for name in dirs + files:
                p = os.path.join(folder, name)
                st = os.lstat(p)
                if stat.S_ISDIR(st.st_mode):  # a folder's mtime moves when a temp file comes and goes: only its presence
                    out[p] = (stat.S_IFDIR,)
                else:
                    out[p] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return out


def test_the_table_is_large_and_covers_every_command():
    assert len(CASES) >= 150, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.command for c in CASES} == set(COMMANDS), set(COMMANDS) - {c.command for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_clear_error(case: Case, world: World, forkserver, tmp_path):
    ctx = Ctx(tmp_path / "case", world)
    for d in (ctx.inp, ctx.out, ctx.case / "tmp"):
        d.mkdir(parents=True)
    (ctx.case / "data").symlink_to(ROOT / "data")
    case.setup(ctx)
    args = {"params": str(ctx.params)}
    args.update({k: ([ctx.fmt(x) for x in v] if isinstance(v, list) else ctx.fmt(v)) for k, v in (case.args or {}).items()})
    argv = COMMANDS[case.command](ctx, args)
    before = _snapshot(ctx.case, world.root)
    home = world.root.parent / "home"  # caches of libraries (matplotlib's font list) live outside the case
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "MPLCONFIGDIR": str(home / "mpl"),
           "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "MIRAGE_CACHE": "off"}
    r = forkserver.run(argv, ctx.case, env, ctx.case / "tmp", TIMEOUT_S, MEM_MB)
    lines = [x for x in r["stderr"].splitlines() if x.strip()]
    shown = "\n".join(lines[-5:])
    if os.environ.get("HOSTILE_DISCOVER"):
        print(f"\nCASE {case.id} code={r['code']} rss={r['maxrss_mb']:.0f}MB\n  {lines[-1] if lines else r['stdout'][-300:]!r}")
        return
    assert not r["timed_out"], f"killed after {TIMEOUT_S} s"
    assert "Traceback" not in r["stderr"] + r["stdout"], r["stderr"]
    assert r["code"] == case.code, f"exit {r['code']}: {shown}"
    assert len(lines) == 1 and lines[0].startswith(("Error: ", "error: ")), f"not one line:\n{shown}"
    assert lines[0] == ctx.fmt(case.error)
    limit = VERIFY_RSS_MB if case.command == "verify" else MAX_RSS_MB
    assert r["maxrss_mb"] <= limit, f"peak RSS {r['maxrss_mb']:.0f} MB"
    after = _snapshot(ctx.case, world.root)
    assert after == before, f"written: {sorted(set(after) ^ set(before))[:5] or [k for k in after if after[k] != before.get(k)][:5]}"
    assert not list((ctx.case / "tmp").iterdir())
