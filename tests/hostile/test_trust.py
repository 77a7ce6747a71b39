"""Issue 32 items 4 and 5, tried as an attacker would: a board that cannot be gamed (a registry name lent to another
model, a paid judge the operator never configured, links and special files in a board folder, `javascript:` links,
terminal escapes in echoed fields) and keys that never leave the process (pasted where a variable name belongs, in a
URL's user part or query string). Refusals run through the same forked, bounded child and the same assertions as
tests/hostile/test_hostile.py (one line, exit 2, no traceback, nothing written); what must be accepted runs as real
processes and is checked in what they wrote."""

from __future__ import annotations

import json
import os

import pytest

import tests.hostile.test_hostile as th
from tests.hostile.conftest import MODEL, World

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
            V + "field judge.name: 'gpt-4o' is a model judge this board does not use (params label.judge: parse-v2); the "
            "verifier calls no model its operator did not configure: resubmit with an offline judge (parse-v2, parse-v1, "
            "lexicon-v1) or ask the board"),
    th.Case("trust-jury-with-a-paid-member", "verify", _judge("jury:parse-v2,claude-opus-4"),
            V + "field judge.name: 'claude-opus-4' is a model judge this board does not use (params label.judge: parse-v2); "
            "the verifier calls no model its operator did not configure: resubmit with an offline judge (parse-v2, "
            "parse-v1, lexicon-v1) or ask the board"),
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
]
#: Commands of these cases beyond those of tests/hostile/test_hostile.py.
EXTRA_COMMANDS = {
    "audit-key": lambda c, a: [*th.COMMANDS["audit"](c, a), "--api-key-env", KEY],
    "audit-url": lambda c, a: [*th.COMMANDS["audit"](c, a), "--base-url", f"http://me:{KEY}@127.0.0.1:9/v1"],
}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_board_and_key_attacks_are_one_clear_refusal(case: th.Case, world: World, forkserver, tmp_path, monkeypatch):
    for name, argv in EXTRA_COMMANDS.items():
        monkeypatch.setitem(th.COMMANDS, name, argv)
    th.test_hostile_input_is_one_clear_error(case, world, forkserver, tmp_path)
