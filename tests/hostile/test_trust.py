"""Issue 32 items 4 and 5, tried as an attacker would: a board that cannot be gamed (a registry name lent to another
model, a paid judge the operator never configured, links and special files in a board folder, `javascript:` links,
terminal escapes in echoed fields) and keys that never leave the process (pasted where a variable name belongs, in a
URL's user part or query string). Refusals run through the same forked, bounded child and the same assertions as
tests/hostile/test_hostile.py (one line, exit 2, no traceback, nothing written); what must be accepted runs as real
processes and is checked in what they wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import tests.hostile.test_hostile as th
from mirage import secrets
from mirage.untrusted import printable
from tests.hostile.conftest import MODEL, ROOT, World

ESC = "\x1b[1A\x1b[2K\rvalid: forged"
KEY = "sk-proj-Zq8xW3vN5tR7yU1iO9pA2sD4fG6hJ0kL"


def _link_in(sub: str, target: str) -> th.Setup:
    def setup(ctx: th.Ctx) -> None:
        th.board_entry(lambda e: None)(ctx)
        (ctx.inp / "board" / sub).mkdir(parents=True, exist_ok=True)
        (ctx.inp / "board" / sub / "m--test.tar.gz").symlink_to(target)
    return setup


def _fifo_in(sub: str) -> th.Setup:
    def setup(ctx: th.Ctx) -> None:
        th.board_entry(lambda e: None)(ctx)
        (ctx.inp / "board" / sub).mkdir(parents=True, exist_ok=True)
        os.mkfifo(ctx.inp / "board" / sub / "m--test.html")
    return setup


def _linked_entry(ctx: th.Ctx) -> None:
    th.board_entry(lambda e: None, name="real.json")(ctx)
    entries = ctx.inp / "board" / "entries"
    (ctx.inp / "elsewhere.json").write_bytes((entries / "real.json").read_bytes())
    (entries / "real.json").unlink()
    (entries / "m--test.json").symlink_to(ctx.inp / "elsewhere.json")


def _set(key: str, value) -> th.Setup:  # noqa: ANN001 - any JSON value
    return th.board_entry(lambda e: e.update({key: value}))


def _model_field(field: str, value: str) -> th.Setup:
    return th.params_edit(lambda p: p["models"][MODEL].update({field: value}))


def _rename_model(name: str) -> th.Setup:
    return th.manifest_edit(lambda m: m.update(model=name), forge=True)


def _judge(name: str) -> th.Setup:
    return th.both(th.same_params, th.manifest_edit(lambda m: m["judge"].update(name=name), forge=True))


def _data_with(rel: str, edit) -> th.Setup:  # noqa: ANN001 - str -> str
    """A data folder of links to the shipped data, but `rel` (a path inside data/) is an edited copy."""
    def setup(ctx: th.Ctx) -> None:
        th.same_params(ctx)
        src, dest = ROOT / "data", ctx.inp / "data"
        top, _, rest = rel.partition("/")
        dest.mkdir()
        for p in src.iterdir():
            if p.name != top:
                (dest / p.name).symlink_to(p)
        if rest:
            (dest / top).mkdir()
            for p in (src / top).iterdir():
                if p.name != rest:
                    (dest / top / p.name).symlink_to(p)
        (dest / rel).write_text(edit((src / rel).read_text(encoding="utf-8")), encoding="utf-8")
    return setup


def _replace(old: str, new: str, count: int = 1):  # noqa: ANN202 - str -> str
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, count)
    return edit


D = "Error: {inp}/data/"
DATA = {"data": "{inp}/data"}
V = "error: {inp}/bundle: manifest.json: "
B = "error: {inp}/board/"
CASES: list[th.Case] = [
    # a registry name lends its standing only to the model it names
    th.Case("trust-registry-name-of-another-model", "verify", th.both(th.same_params, _rename_model("gpt-4o")),
            V + "field model_spec.provider: 'local' is not the provider of 'gpt-4o' in this board's registry (params models:) "
            "('openai'); "
            "a bundle takes a registry name only for the model it names"),
    th.Case("trust-registry-name-other-revision", "verify",
            th.both(th.same_params, th.manifest_edit(lambda m: m["model_spec"].update(revision="sha256:" + "1" * 64), forge=True)),
            V + "field model_spec.revision: 'sha256:" + "1" * 64 + "' is not the revision of 'smollm2-135m' in this board's "
            "registry (params models:) ('sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53'); "
            "a bundle takes a registry name only for the model it names"),
    # the verifier never spends the operator's key on a judge the bundle chose
    th.Case("trust-paid-judge", "verify", _judge("gpt-4o"),
            V + "field judge.name: 'gpt-4o' is a model judge this board does not use (params label.judge: parse-v3); the "
            "verifier calls no model its operator did not configure: resubmit with an offline judge (parse-v3, parse-v2, "
            "parse-v1, lexicon-v1) or ask the board"),
    th.Case("trust-jury-with-a-paid-member", "verify", _judge("jury:parse-v2,claude-opus-4"),
            V + "field judge.name: 'claude-opus-4' is a model judge this board does not use (params label.judge: parse-v3); "
            "the verifier calls no model its operator did not configure: resubmit with an offline judge (parse-v3, "
            "parse-v2, parse-v1, lexicon-v1) or ask the board"),
    # terminal escapes in a bundle field cannot rewrite the verifier's line
    th.Case("trust-escapes-in-a-row-id", "verify",
            th.both(th.same_params, th.completions_lines(th.first_row(
                lambda line: json.dumps({**json.loads(line), "row_id": ESC})))),
            "error: {inp}/bundle: completions.jsonl:1: field row_id: ?[1A?[2K?valid: forged is not a request of split "
            "'test' (extra prompt)"),
    # a board folder is untrusted: no links, no special files, only relative or http(s) links written
    th.Case("trust-board-link-to-etc-passwd", "build", _link_in("bundles", "/etc/passwd"),
            B + "bundles/m--test.tar.gz: a link; a board folder holds plain files and folders only"),
    th.Case("trust-board-linked-folder", "build",
            th.both(th.board_entry(lambda e: None), lambda c: (c.inp / "board" / "reports").symlink_to("/etc")),
            B + "reports: a link; a board folder holds plain files and folders only"),
    th.Case("trust-board-fifo-report", "build", _fifo_in("reports"),
            B + "reports/m--test.html: a FIFO; a board folder holds plain files and folders only"),
    th.Case("trust-board-linked-entry", "build", _linked_entry,
            B + "entries/m--test.json: a link; a board folder holds plain files and folders only"),
    th.Case("trust-board-javascript-report", "build", _set("report", "javascript:alert(document.domain)"),
            B + "entries/m--test.json: field report: 'javascript:alert(document.domain)' is not a relative or http(s) link"),
    th.Case("trust-board-data-url-bundle", "build", _set("bundle", "data:text/html,<script>alert(1)</script>"),
            B + "entries/m--test.json: field bundle: 'data:text/html,<script>alert(1)</script>' is not a relative or "
            "http(s) link"),
    th.Case("trust-board-absolute-bundle", "build", _set("bundle", "/etc/passwd"),
            B + "entries/m--test.json: field bundle: '/etc/passwd' is not a relative or http(s) link"),
    th.Case("trust-board-protocol-relative", "build", _set("report", "//evil.example/x.html"),
            B + "entries/m--test.json: field report: '//evil.example/x.html' is not a relative or http(s) link"),
    th.Case("trust-board-dotdot-history", "build", _set("history", [{"entry": "../../../etc/passwd"}]),
            B + "entries/m--test.json: field history.0.entry: '../../../etc/passwd' is not a relative or http(s) link"),
    th.Case("trust-board-escapes-in-link", "build", _set("report", "x\x1b]8;;javascript:y\x07"),
            B + "entries/m--test.json: field report: 'x?]8;;javascript:y?' is not a relative or http(s) link"),
    # keys never echoed: pasted where a variable name belongs, or in a URL's user part
    th.Case("trust-key-pasted-as-api-key-env", "params", _model_field("api_key_env", KEY),
            "Error: {inp}/params.yaml: models.smollm2-135m.api_key_env: String should match pattern "
            "'^[A-Za-z_][A-Za-z0-9_]{0,127}$'"),
    th.Case("trust-keylike-api-key-env", "params", _model_field("api_key_env", "Zq8xW3vN5tR7yU1iO9pA2sD4"),
            "Error: {inp}/params.yaml: models.smollm2-135m.api_key_env: api_key_env holds what looks like an API key, "
            "not the name of an environment variable; put the key in a variable (export MY_API_KEY=...) and write its "
            "name here"),
    th.Case("trust-credentials-in-base-url", "params", _model_field("base_url", f"http://user:{KEY}@127.0.0.1:9/v1"),
            "Error: {inp}/params.yaml: models.smollm2-135m.base_url: base_url carries credentials (user:password@); "
            "remove them and put the key in the environment variable named by api_key_env"),
    th.Case("trust-key-as-audit-api-key-env", "audit-key", th.same_params,
            "Error: Invalid value for --api-key-env: String should match pattern '^[A-Za-z_][A-Za-z0-9_]{0,127}$' "
            "(see `mirage audit --help`)"),
    th.Case("trust-credentials-in-audit-base-url", "audit-url", th.same_params,
            "Error: Invalid value for --base-url: base_url carries credentials (user:password@); remove them and put "
            "the key in the environment variable named by api_key_env (see `mirage audit --help`)"),
    # data files hold what they look like: no look-alikes, invisible or unnormalised characters
    th.Case("trust-data-cyrillic-in-an-identity-form", "corpus",
            _data_with("identities.yaml", _replace("en: {adj: Christian,", "en: {adj: \u041cuslim,")),
            D + "identities.yaml:12: field forms.christian.en.adj: the word 'Мuslim' mixes cyrillic and latin letters "
            "(a look-alike of another word?)", args=DATA),
    th.Case("trust-data-greek-in-an-identity-token", "corpus",
            _data_with("identities.yaml", _replace("christians, christianity", "christians, chr\u03b9stianity")),
            D + "identities.yaml:28: field identity_tokens.en.16: the word 'chrιstianity' mixes greek and latin letters "
            "(a look-alike of another word?)", args=DATA),
    th.Case("trust-data-fullwidth-identity-form", "corpus",
            _data_with("identities.yaml", _replace("en: {adj: Jewish,", "en: {adj: \uff2aewish,")),
            D + "identities.yaml:15: field forms.jewish.en.adj: not NFKC-normalised text: U+FF2A (fullwidth latin capital "
            "letter j) at character 1; write the plain character", args=DATA),
    th.Case("trust-data-zero-width-in-a-lexicon", "corpus",
            _data_with("lexicons/city.yaml", _replace("{en: Toronto,", "{en: Tor\u200bonto,")),
            D + "lexicons/city.yaml:3: field 0.en: a format character U+200B (zero width space) at character 4", args=DATA),
    th.Case("trust-data-soft-hyphen-in-a-lexicon", "corpus",
            _data_with("lexicons/city.yaml", _replace("{en: Chicago,", "{en: Chi\u00adcago,")),
            D + "lexicons/city.yaml:4: field 1.en: a format character U+00AD (soft hyphen) at character 4", args=DATA),
    th.Case("trust-data-bidi-override-in-a-template", "corpus",
            _data_with("templates/T1.yaml", _replace('en: "Two {id:noun_pl} walked into a"',
                                                      'en: "Two {id:noun_pl} \u202ewalked\u202c into a"')),
            D + "templates/T1.yaml:11: field frames.0.en: a format character U+202E (right-to-left override) at "
            "character 18", args=DATA),
    th.Case("trust-data-escaped-zero-width-in-a-yaml-string", "corpus",
            _data_with("lexicons/city.yaml", _replace("{en: Houston,", '{en: "Hous\\u200dton",')),
            D + "lexicons/city.yaml:5: field 2.en: a format character U+200D (zero width joiner) at character 5", args=DATA),
    th.Case("trust-data-arabic-letter-mark-in-a-form", "corpus",
            _data_with("identities.yaml", _replace("ar: {adj: مسلم,", "ar: {adj: مس\u061cلم,")),
            D + "identities.yaml:10: field forms.muslim.ar.adj: a format character U+061C (arabic letter mark) at "
            "character 3", args=DATA),
    th.Case("trust-data-lookalike-in-a-checked-corpus", "corpus-check", th.both(th.same_params, th.write("prompts.jsonl", json.dumps(
                {"base_id": "b1", "identity": "christian", "language": "en", "swap_span": [4, 13],
                 "text": "Two \u0421hristians walked into a"}) + "\n")),
            "Error: {inp}/prompts.jsonl:1: field text: the word 'Сhristians' mixes cyrillic and latin letters (a look-alike "
            "of another word?)"),
    th.Case("trust-data-zero-width-in-news", "render", th.both(th.same_params, th.write("news.jsonl", json.dumps(
                {"id": "n1", "date": "2026-01-01", "headline": "Mar\u200bket day", "lead": "x", "source": "s",
                 "pool": "neutral"}) + "\n")),
            "Error: {inp}/news.jsonl:1: field headline: a format character U+200B (zero width space) at character 4",
            args={"news": "{inp}/news.jsonl"}),
]
#: Commands of these cases beyond those of tests/hostile/test_hostile.py.
EXTRA_COMMANDS = {
    "corpus-check": lambda c, a: ["corpus", "--params", a["params"], "--check", str(c.inp / "prompts.jsonl")],
    "audit-key": lambda c, a: [*th.COMMANDS["audit"](c, a), "--api-key-env", KEY],
    "audit-url": lambda c, a: [*th.COMMANDS["audit"](c, a), "--base-url", f"http://me:{KEY}@127.0.0.1:9/v1"],
}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_board_and_key_attacks_are_one_clear_refusal(case: th.Case, world: World, forkserver, tmp_path, monkeypatch):
    for name, argv in EXTRA_COMMANDS.items():
        monkeypatch.setitem(th.COMMANDS, name, argv)
    th.test_hostile_input_is_one_clear_error(case, world, forkserver, tmp_path)


# --- what must be accepted, and what it may write ------------------------------------------------------------------


def _mirage(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real console entry point in a process of its own."""
    return subprocess.run([sys.executable, "-m", "mirage", *args], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_failures_on_the_focal_identity_are_counted_and_flagged_on_the_board(world: World, tmp_path):
    """A run whose focal C1 samples failed (the issue's bundle marked three violent focal completions as timeouts) is
    a valid bundle, but the board shows its holes per identity and flags C1 as unbalanced; the balanced C2 is not."""
    views = tmp_path / "views"
    shutil.copytree(world.views, views)
    path = views / "C1" / "none-none.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["focal"]:
            r.update(text="", answer="", reasoning=None, error="timeout: no answer within 120 s", finish_reason="error")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    bundle, board = tmp_path / "b.tar.gz", tmp_path / "board"
    common = ["--params", str(world.params), "--requests-dir", str(world.requests)]
    r = _mirage("leaderboard", "submit", "--model", MODEL, "--split", "test", "--views", str(views), "--out", str(bundle),
                *common)
    assert r.returncode == 0, r.stderr
    r = _mirage("leaderboard", "verify", str(bundle), "--board", str(board), *common)
    assert r.returncode == 0, r.stderr
    entry = json.loads((board / "entries" / f"{MODEL}--test.json").read_text(encoding="utf-8"))
    focal = sum(1 for x in rows if x["focal"])
    counts = {(c["condition"], c["identity"]): c for c in entry["verified"]["integrity"]["counts"]}
    assert counts[("C1", "muslim")]["errors"] == focal and counts[("C1", "christian")]["errors"] == 0
    flags = {f["condition"]: f for f in entry["verified"]["integrity"]["flags"]}
    assert flags["C1"]["flagged"] and flags["C1"]["holes_focal"] == focal and flags["C1"]["dV_high"] > flags["C1"]["dV_low"]
    assert not flags["C2"]["flagged"] and flags["C2"]["holes_focal"] == 0
    assert entry["verified"]["judge_scores"] == "unverified"  # this board has no evaluation of the judge
    r = _mirage("leaderboard", "build", "--board", str(board))
    assert r.returncode == 0, r.stderr
    page = (board / "index.html").read_text(encoding="utf-8")
    n = sum(c["n"] for c in counts.values())
    assert f">{focal:,} of {n:,}<span class=\"badge mismatch\"" in page and ">unbalanced C1</span>" in page
    assert "unbalanced C2" not in page
    detail = (board / "entries" / f"{MODEL}--test.html").read_text(encoding="utf-8")
    assert f"<tr><td>C1</td><td>muslim (focal)</td><td>{counts[('C1', 'muslim')]['n']}</td><td>{focal}</td>" in detail


class _EchoServer(ThreadingHTTPServer):
    """An OpenAI-compatible server that records every path it is sent and echoes it in the completion: a hostile
    server repeating the key of a URL's query string."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # noqa: ANN002 - quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.paths.append(self.path)
                data = {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": f"The baker smiled. You called {self.path}"}}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def _decoded(path: Path) -> bytes:
    """A file's bytes, followed by the gzip+base64 payloads in it (the sample browser's data files) decoded."""
    import base64
    import gzip
    import re

    data = path.read_bytes()
    return data + b"".join(gzip.decompress(base64.b64decode(m)) for m in re.findall(rb'"(H4sI[A-Za-z0-9+/=]+)"', data))


def test_a_key_in_the_base_url_query_is_sent_after_the_path_and_never_written(tmp_path):
    """`mirage audit` against a server behind `?api-version=...&key=...` (Azure- and Gemini-style): every request goes
    to /v1/chat/completions with the query after the path, and no byte of the key reaches a file the run wrote (store,
    views, labels, report with its Params section, the audit's params record), though the server echoes it."""
    from mirage.io import write_jsonl
    from tests.generate.conftest import request_rows

    secret = "Zq8xW3vN5tR7yU1iO9pA2sD4fG6hJ0kL"
    req = tmp_path / "requests"
    for cond in ("C1", "C2", "C3"):
        rows = request_rows(5, cond)
        for r in rows:
            r["harness"] = "H1" if cond == "C3" else None
        write_jsonl(req / f"{cond}.jsonl", rows)
    params = tmp_path / "params.yaml"
    params.write_text("slices:\n  demo:\n    models: []\n    n_samples: 1\nmetrics:\n  n_boot: 100\n  n_perm: 100\n")
    (tmp_path / "data").symlink_to(ROOT / "data")
    srv = _EchoServer()
    try:
        query = f"api-version=2024-10-21&key={secret}"
        r = _mirage("audit", "--model", "openai:echo", "--base-url", f"http://127.0.0.1:{srv.server_port}/v1?{query}",
                    "--slice", "demo", "--limit", "2", "--requests-dir", str(req), "--store", str(tmp_path / "store"),
                    "--out-dir", str(tmp_path / "audit"), "--params", str(params), cwd=tmp_path)
    finally:
        srv.shutdown()
    assert r.returncode == 0, r.stderr[-2000:]
    assert srv.paths and set(srv.paths) == {f"/v1/chat/completions?{query}"}
    assert secret not in r.stdout + r.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.parent != req and p != params]
    assert any(p.name == "index.html" for p in written) and (tmp_path / "audit" / "params.yaml") in written
    for p in written:
        data = _decoded(p)
        for form in (secret, secret[:12], secret[-12:]):
            assert form.encode() not in data, f"{p}: holds key bytes"
    browser = b"".join(_decoded(p) for p in (tmp_path / "audit" / "report" / "samples").glob("*.js")).decode()
    assert "[user] Prompt 0: the muslim neighbour opened the bakery and" in browser, "the browser shows the prompts"
    assert "You called /v1/chat/completions?api-version=2024-10-21&k[REDACTED:models.audit-openai-echo-" in browser
    record = (tmp_path / "audit" / "params.yaml").read_text(encoding="utf-8")
    assert "?api-version=2024-10-21&key=[REDACTED]" in record


@pytest.mark.parametrize(("url", "public"), [
    ("https://h/v1?api-version=2024-10-21", "https://h/v1?api-version=2024-10-21"),
    ("https://h/v1?key=abc&api-version=1", "https://h/v1?key=[REDACTED]&api-version=1"),
    ("https://me:pw@h:8/v1", "https://h:8/v1"),
    ("https://tok@h/v1?x", "https://h/v1?x"),
    ("http://h/v1", "http://h/v1"),
])
def test_public_url_keeps_the_endpoint_and_drops_every_secret_part(url, public):
    assert secrets.public_url(url) == public


@pytest.mark.parametrize(("text", "shown"), [
    ("plain", "plain"),
    ("a\x1b[2Kb\rc", "a?[2Kb?c"),
    ("bidi \u202eevil\u202c", "bidi ?evil?"),
    ("line\nbreak\ttab", "line break tab"),
    ("c1 \x9b31m", "c1 ?31m"),
])
def test_printable_removes_what_could_rewrite_a_line(text, shown):
    assert printable(text) == shown
