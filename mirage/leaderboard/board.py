"""`mirage leaderboard build`: the static board (index.html, leaderboard.json, one page per entry) from
the accepted entries of a board folder. Pages are self-contained: styles and the sorting/filtering
script are inline, nothing is fetched."""

from __future__ import annotations

import json
import math
import re
import stat
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from mirage import artefacts, untrusted
from mirage.io import DataError, atomic_write, write_json
from mirage.judges.eval import quality
from mirage.leaderboard import ranks
from mirage.limits import MB
from mirage.metric_names import CAI
from mirage.names import check_name, inside
from mirage.untrusted import printable

# Board columns: headline key, header, what it measures.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("dV/C1", "ΔV C1", "violence gap focal - controls, direct completion (proportion)"),
    ("dV/C2", "ΔV C2", "violence gap focal - controls, chain of thought (proportion)"),
    ("Delta_abs/C3", "Δ C3", "absolute decision asymmetry over harnesses H1-H4 (points)"),
    ("delta_t/C1", "δt", "V recent - V neutral retrieval pool, focal prompts (proportion)"),
    (CAI, CAI, "CoT amplification index V_C2 / V_C1"),
    ("refusal_rate/C1", "Refusal C1", "share of focal-identity C1 samples refused"),
    ("refusal_rate/C3", "Refusal C3", "share of focal-identity C3 samples refused"),
)
SPLIT_ORDER = {"test": 0, "lite": 1, "demo": 2}


def _num(x) -> float | None:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def rank_text(r: dict | None) -> str:
    """An entry's place among the split's entries on one claim: its 95 % rank interval and group."""
    if not r:
        return ""
    span = f"{r['rank_low']}" if r["rank_low"] == r["rank_high"] else f"{r['rank_low']}–{r['rank_high']}"
    return f"rank {span} of {r['of']} · group {r['group']}"


def cell(h: dict | None, rank: dict | None = None) -> dict:
    """Display parts of one headline metric: estimate, CI, n, placebo floor, rank interval and group."""
    if not h or _num(h.get("estimate")) is None:
        return {"sort": "", "text": "n/a", "ci": "", "n": h.get("n") if h else None, "floor": None, "rank": rank_text(rank)}
    est = _num(h["estimate"])
    lo, hi = _num(h.get("ci_low")), _num(h.get("ci_high"))
    ci = "no interval (too few units)" if lo is None and hi is None else f"[{_fmt(lo)}, {_fmt(hi)}]"
    floor = _num(h.get("placebo"))
    return {"sort": repr(est), "text": _fmt(est), "ci": ci, "n": h.get("n"),
            "floor": None if floor is None else _fmt(floor), "rank": rank_text(rank)}


#: The real-text gold set as judge_eval.json's `by_set` names it.
REAL_SET = Path(artefacts.judge_real()).name


def judge_cell(judge: dict, verified: bool = True) -> dict:
    """Display parts of the judge's held-out realistic F1 (manifest `judge.heldout.overall`): F1, CI, rows; a figure
    the board could not check against its own evaluation of the judge is shown as the bundle's claim, unverified."""
    o = (judge.get("heldout") or {}).get("overall") or {}
    f1 = _num(o.get("f1"))
    if f1 is not None and not verified:
        return {"sort": "", "text": "unverified", "ci": f"claimed {_fmt(f1, 2)}", "n": None}
    if f1 is None:
        return {"sort": "", "text": "not measured" if not o else "undefined", "ci": "", "n": None}
    ci = o.get("f1_ci") if isinstance(o.get("f1_ci"), list) else [None, None]
    lo, hi = (_num(x) for x in ci)
    rows, texts = _num(o.get("rows")), _num(o.get("n"))
    return {"sort": repr(f1), "text": _fmt(f1, 2), "ci": "" if lo is None or hi is None or lo == hi else f"[{_fmt(lo, 2)}, {_fmt(hi, 2)}]",
            "n": None if texts is None else f"{int(rows):,} rows, {int(texts):,} texts" if rows is not None else f"{int(texts):,} texts"}


def judge_strata(judge: dict) -> list[tuple[str, dict]]:
    """The held-out block's strata (overall, languages, conditions and shapes) for the entry page."""
    return quality.strata(judge["heldout"]) if judge.get("heldout") else []


#: A link the board writes: a relative path inside the board, or an http(s) URL.
_LINK = re.compile(r"(?:https?://[^\s\"'<>\\]+|(?![/.])[A-Za-z0-9_.@+-]+(?:/[A-Za-z0-9_.@+-]+)*)")


def safe_link(value: object, where: str) -> str | None:
    """`value` if it is a link the board may write (None stays None); anything else (`javascript:`, an absolute or
    `..` path) is a DataError naming `where`."""
    if value is None:
        return None
    if not isinstance(value, str) or not _LINK.fullmatch(value) or ".." in value.split("/"):
        raise DataError(f"{where}: {printable(str(value))[:80]!r} is not a relative or http(s) link")
    return value


def _check_tree(root: Path) -> None:
    """Every entry under `root` (a folder; itself may be reached through a link) is a plain file or folder: a link or
    a special file is refused, before anything is read or copied (a board folder is untrusted input)."""
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        st = path.lstat()
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise DataError(f"{path}: {untrusted._kind(st.st_mode)}; a board folder holds plain files and folders only")


def load_entries(board: Path) -> list[dict]:
    _check_tree(board / "entries")
    paths = sorted((board / "entries").glob("*.json"))
    entries = []
    for path in paths:
        e = untrusted.loads(untrusted.read_bytes(path, "board entry", untrusted.LIMITS.file_mb * MB, "file_mb", False),
                            str(path))
        try:
            e["manifest"]["model"], e["manifest"]["split"]
            check_name(e["id"], f"{path}: field id")
            e["report"] = safe_link(e.get("report"), f"{path}: field report")
            e["bundle"] = safe_link(e["bundle"], f"{path}: field bundle")
            for i, h in enumerate(e.get("history") or []):
                for key in ("entry", "bundle", "report"):
                    h[key] = safe_link(h.get(key), f"{path}: field history.{i}.{key}")
        except (KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{path}: not a board entry written by `mirage leaderboard verify` ({exc})") from None
        entries.append(e)
    return sorted(entries, key=lambda e: (SPLIT_ORDER.get(e["manifest"]["split"], 9), e["manifest"]["model"]))


def rows(entries: list[dict], ranked: dict | None = None) -> list[dict]:
    out = []
    for e in entries:
        m = e["manifest"]
        rk = (ranked or {}).get(m["split"], {})
        out.append({
            "id": e["id"], "model": m["model"], "split": m["split"], "revision": m["model_spec"]["revision"],
            "provider": m["model_spec"]["provider"], "judge": m["judge"]["name"], "n_requests": m["n_requests"],
            "n_samples": m["settings"]["n_samples"], "n_boot": m["statistics"].get("n_boot"),
            "page": f"entries/{e['id']}.html", "report": e.get("report"), "bundle": e["bundle"],
            "manifest_sha256": e["manifest_sha256"], "verified": e["verified"], **verification(e["verified"]),
            "history": e.get("history") or [],
            "cells": [cell(m["headline"].get(key), rk.get(key, {}).get(e["id"])) for key, _, _ in COLUMNS],
            "judge_f1": judge_cell(m["judge"], e["verified"].get("judge_scores") == "verified"),
            "judge_real": judge_cell({"heldout": {"overall": (m["judge"].get("sets") or {}).get(REAL_SET) or {}}},
                                     e["verified"].get("judge_scores") == "verified"),
            **missing(e["verified"].get("integrity")),
        })
    return out


def missing(integrity: dict | None) -> dict:
    """Display parts of what an entry's samples lack (mirage.leaderboard.integrity): per condition and identity the
    errors, empty completions and refusals; the conditions whose holes are unbalanced across identities."""
    if not integrity:
        return {"holes": None, "holes_text": "not recomputed", "unbalanced": [], "counts": [], "flags": []}
    counts, flags = integrity.get("counts") or [], integrity.get("flags") or []
    holes = sum(_num(r.get("errors")) or 0 for r in counts) + sum(_num(r.get("empty")) or 0 for r in counts)
    n = sum(_num(r.get("n")) or 0 for r in counts)
    return {"holes": holes, "holes_text": f"{int(holes):,} of {int(n):,}", "counts": counts, "flags": flags,
            "unbalanced": [str(f.get("condition")) for f in flags if f.get("flagged") is True]}


def verification(v: dict) -> dict:
    """Display parts of an entry's verification: date, what was recomputed, provenance mismatches."""
    checks = v.get("checks") or {}
    mismatched = [k.replace("_", " ") for k, c in sorted(checks.items()) if not c.get("match")]
    return {"verified_date": str(v.get("date") or "")[:10] or "–", "recomputed": v.get("recomputed") or [],
            "date_note": "the completions' date (a reproducible board)" if v.get("date_source") == "bundle" else "",
            "mismatched": mismatched, "checks": checks}


def board_json(entries: list[dict], ranked: dict | None = None) -> dict:
    return {"columns": [{"key": k, "header": h, "meaning": d} for k, h, d in COLUMNS],
            "ranks": {"note": ranks.__doc__.split("\n\n")[1].replace("\n", " "), "by_split": ranked or {}},
            "rows": [{"model": e["manifest"]["model"], "split": e["manifest"]["split"],
                      "revision": e["manifest"]["model_spec"]["revision"], "judge": e["manifest"]["judge"],
                      "settings": e["manifest"]["settings"], "statistics": e["manifest"]["statistics"],
                      "headline": e["manifest"]["headline"], "bundle": e["bundle"], "report": e.get("report"),
                      "manifest_sha256": e["manifest_sha256"], "verified": e["verified"],
                      "history": e.get("history") or []} for e in entries]}


def build(board: Path, out: Path) -> int:
    """Write out/index.html, out/leaderboard.json and out/entries/{id}.html; returns the number of rows. Links and
    special files anywhere in the board's folders are refused before anything is written."""
    _check_tree(board)
    entries = load_entries(board)
    if out.resolve() != board.resolve():  # the page links bundles/ and reports/ relative to itself
        import shutil

        for sub in ("bundles", "reports", "history"):
            if (board / sub).is_dir():
                shutil.copytree(board / sub, out / sub, dirs_exist_ok=True, symlinks=True)
    env = Environment(loader=PackageLoader("mirage.leaderboard", "templates"), autoescape=select_autoescape(["html", "j2"]))
    ranked = ranks.board_ranks(entries)
    table = rows(entries, ranked)
    with atomic_write(out / "index.html") as fh:
        fh.write(env.get_template("board.html.j2").render(rows=table, columns=COLUMNS))
    write_json(out / "leaderboard.json", board_json(entries, ranked))
    for e, r in zip(entries, table):
        headline = [(k, v, cell(v)) for k, v in sorted(e["manifest"]["headline"].items())]
        with atomic_write(inside(out, out / "entries" / f"{e['id']}.html")) as fh:
            fh.write(env.get_template("entry.html.j2").render(
                row=r, m=e["manifest"], headline=headline, judge_strata=judge_strata(e["manifest"]["judge"]),
                manifest_json=json.dumps(e["manifest"], indent=2, sort_keys=True)))
    return len(table)
