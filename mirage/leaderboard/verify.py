"""`mirage leaderboard verify`: accept a bundle only if every number in it is recomputed from its raw
completions. Checks run in order and the first failure is the one error reported:

1. layout: manifest.json parses (strictly, within `limits:`) and fits the schema; the files are exactly those it
   lists, plain files, each with its byte size and SHA-256 (an archive is listed before anything is extracted, and
   only the listed files, of their declared sizes, are extracted);
2. split: the bundle was made for this board's request set of the split (split hash, request count)
   under the protocol's sampling settings and statistics;
3. completions: one model at one pinned revision, every request x n samples present once, no extra
   prompts, request columns unchanged, seeds and answers consistent (streamed, row by row);
4. recomputation: labels with the pinned judge (streamed in chunks), then metrics, then the headline, each equal
   to the bundle's.

Board policy (`accept`): a bundle never silently replaces an accepted row; `supersede=True` replaces it and keeps the
old row (entry, bundle, report) under history/. Each entry records when it was verified, what was recomputed, and
whether the manifest's code version and params hash match the board's.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from mirage import untrusted
from mirage.artefacts import DATA
from mirage.io import DataError, write_json
from mirage.leaderboard import integrity, ranks
from mirage.leaderboard import recompute as rc
from mirage.leaderboard.bundle import (
    COMPLETIONS,
    LABELS,
    MANIFEST,
    METRICS,
    REPORT,
    BundleError,
    Manifest,
    opened,
    pack,
    read_layout,
    rows,
    split_hash,
)
from mirage.leaderboard.submit import PARAMS_SECTIONS, judge_scores
from mirage.limits import LimitsParams
from mirage.names import inside, judge_members
from mirage.params import Params, section_hash
from mirage.protocol import OFFLINE_JUDGES
from mirage.provenance import code_version


@dataclass
class Verified:
    manifest: Manifest
    manifest_sha256: str
    folder_files: list[str]
    recomputed: list[str] = field(default_factory=list)
    units: dict[str, dict] = field(default_factory=dict)  # per ranked board column: its claim's per-unit values
    judge_verified: bool = False  # every judge figure of the manifest checked against this board's evaluation
    integrity: dict = field(default_factory=dict)  # mirage.leaderboard.integrity.summary of the completions


def _metrics_lines(folder: Path, m: Manifest, limits: LimitsParams):
    fh, _ = untrusted.open_regular(folder / METRICS, "bundle file", m.files[METRICS].bytes, "bundle_mb", False, METRICS)
    with fh:
        for lineno, raw in untrusted.lines(fh, METRICS, limits.line_kb * 1024):
            yield untrusted.decode(raw, METRICS, lineno)


def _check_protocol(m: Manifest, params: Params, requests: dict, requests_dir) -> None:
    if split_hash(requests) != m.split_hash or len(requests) != m.n_requests:
        raise BundleError(f"{MANIFEST}: field split_hash: {m.split_hash} ({m.n_requests} requests) is not this board's "
                          f"{m.split} split {split_hash(requests)} ({len(requests)} requests in {requests_dir})")
    want = rc.split_settings(params, m.split)
    if m.settings != want:
        diff = [k for k in type(want).model_fields if getattr(m.settings, k) != getattr(want, k)]
        raise BundleError(f"{MANIFEST}: field settings.{diff[0]}: {getattr(m.settings, diff[0])!r} differs from the "
                          f"protocol's {getattr(want, diff[0])!r} for split {m.split}")
    stats = rc.statistics(params)
    if m.statistics != stats:
        diff = sorted(k for k in set(stats) | set(m.statistics) if m.statistics.get(k) != stats.get(k))
        raise BundleError(f"{MANIFEST}: field statistics.{diff[0][:80]}: {str(m.statistics.get(diff[0]))[:80]!r} differs "
                          f"from this board's {stats.get(diff[0])!r}")
    created = dt.datetime.strptime(m.created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc) if m.created else None
    if created is not None and created > dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1):
        raise BundleError(f"{MANIFEST}: field created: {m.created} is in the future")


def _check_judge_scores(m: Manifest, path: Path) -> bool:
    """The bundle's judge scores equal this board's evaluation of the judge: the gold-set scores always, the held-out
    block and the per-set scores where both have them (bundles made before they existed stay valid). Returns
    whether every figure the manifest claims was checked (a block the board has no evaluation of is unverified)."""
    board = judge_scores(path)
    if m.judge.gold != board["gold"]:
        raise BundleError(f"{MANIFEST}: field judge.gold: does not match this board's gold-set evaluation {path}")
    checked = True
    for key in ("heldout", "sets"):
        ours = getattr(m.judge, key)
        if ours is not None and board[key] is not None and ours != board[key]:
            raise BundleError(f"{MANIFEST}: field judge.{key}: does not match this board's judge evaluation {path}")
        checked &= ours is None or board[key] is not None
    return checked


def _check_registry(m: Manifest, params: Params) -> None:
    """A bundle named after a registry model (this board's or the built-in one) holds that model: same provider,
    model id and pinned revision; a name cannot lend another model's standing."""
    from mirage.config.generate import default_models

    for registry, which in ((params.models, "this board's registry (params models:)"), (default_models(), "the built-in registry")):
        spec = registry.get(m.model)
        if spec is None:
            continue
        for key in ("provider", "model_id", "revision"):
            if getattr(m.model_spec, key) != getattr(spec, key):
                raise BundleError(f"{MANIFEST}: field model_spec.{key}: {str(getattr(m.model_spec, key))[:80]!r} is not "
                                  f"the {key} of {m.model!r} in {which} ({getattr(spec, key)!r}); a bundle takes a "
                                  "registry name only for the model it names")
        return


def _check_judge_allowed(m: Manifest, params: Params) -> None:
    """The verifier calls no model the operator did not configure: a judge that is not offline must be (a member of)
    this board's own `label.judge`."""
    allowed = {*OFFLINE_JUDGES, *judge_members(params.label.judge)}
    for name in judge_members(m.judge.name):
        if name not in allowed:
            raise BundleError(f"{MANIFEST}: field judge.name: {name[:80]!r} is a model judge this board does not use "
                              f"(params label.judge: {params.label.judge}); the verifier calls no model its operator did not "
                              f"configure: resubmit with an offline judge ({', '.join(OFFLINE_JUDGES)}) or ask the board")


def verify_bundle(bundle: str | Path, params: Params, params_path: str, requests_dir: str | Path,
                  pack_to: Path | None = None, judge_eval_dir: str | Path | None = None,
                  report_to: Path | None = None, limits: LimitsParams | None = None) -> Verified:
    """Verify a bundle; with `pack_to` (and `report_to`), also write its verified files there once all passed."""
    limits = limits or params.limits
    with opened(bundle, limits) as folder, ExitStack() as stack:
        m, digest = read_layout(folder, limits)
        requests = rc.load_requests(requests_dir, m.split)
        _check_protocol(m, params, requests, requests_dir)
        _check_registry(m, params)
        _check_judge_allowed(m, params)
        try:
            judge = rc.make_judge(m.judge.name, m.judge.params, params, params_path, stack)
        except DataError as exc:
            raise BundleError(f"{MANIFEST}: field judge.name: {exc}") from None
        want_judge = rc.judge_params(params, m.judge.name)
        if m.judge.params != want_judge:
            diff = sorted(k for k in set(want_judge) | set(m.judge.params) if m.judge.params.get(k) != want_judge.get(k))
            raise BundleError(f"{MANIFEST}: field judge.params.{diff[0][:80]}: {str(m.judge.params.get(diff[0]))[:80]!r} "
                              f"differs from this board's {want_judge.get(diff[0])!r}")
        gold_file = Path(judge_eval_dir) / m.judge.name / "judge_eval.json" if judge_eval_dir else None
        judge_verified = gold_file is not None and gold_file.exists() and _check_judge_scores(m, gold_file)
        # pass 1: every completion row checked, streamed; nothing of a row is kept but its coverage key
        check = rc.CompletionCheck(m, requests, COMPLETIONS, limits.chars_per_token)
        n = 0
        for line, row in rows(folder, COMPLETIONS, m, limits):
            n += 1
            if n > m.n_completions:
                raise BundleError(f"{COMPLETIONS}:{line}: more rows than the manifest's n_completions = {m.n_completions}")
            check.row(line, row)
        if n != m.n_completions:
            raise BundleError(f"{COMPLETIONS}: {n} rows, manifest says n_completions = {m.n_completions}")
        check.finish()
        n_labels = sum(1 for _ in rows(folder, LABELS, m, limits))
        if n_labels != n:
            raise BundleError(f"{LABELS}: {n_labels} label rows, recomputed {n}")
        # pass 2: labels recomputed in chunks and compared row by row with the bundle's; only label rows are kept
        labels: list[dict] = []
        empty: list[bool] = []  # per completion, in order: an empty text (a sample without a verdict)

        def completions():
            for _, r in rows(folder, COMPLETIONS, m, limits):
                empty.append(not (r["text"] or "").strip())
                yield r

        bundled = rows(folder, LABELS, m, limits)
        try:
            for chunk in rc.label_chunks(completions(), judge, DATA, COMPLETIONS):
                for lab in chunk:
                    line, row = next(bundled)
                    rc.compare_label(line, row, lab, LABELS)
                    labels.append(lab)
            units: dict[str, dict] = {}
            table = rc.metrics_table(labels, m.statistics, ranks.collector(units))
        except DataError:
            raise
        except Exception as exc:  # a trust boundary: whatever stops the recomputation rejects the bundle
            raise BundleError(f"{COMPLETIONS}: labels and metrics cannot be recomputed ({type(exc).__name__}: "
                              f"{str(exc)[:200]})") from None
        recomputed_csv = rc.metrics_csv(table)
        rc.compare_metrics(_metrics_lines(folder, m, limits), recomputed_csv, METRICS)
        recomputed = rc.headline(table)
        for name in sorted(set(recomputed) | set(m.headline)):
            if not rc.same(m.headline.get(name), recomputed.get(name)):
                raise BundleError(f"{MANIFEST}: field headline.{name[:80]}: {str(m.headline.get(name))[:200]}, "
                                  f"recomputed {recomputed.get(name)!r}")
        files = sorted(m.files)
        done = [f"labels of {n} completions (judge {m.judge.name})", f"metrics.csv ({len(table)} rows, "
                f"{m.statistics.get('n_boot')} bootstrap resamples)", f"headline ({len(recomputed)} metrics)"]
        if pack_to is not None:
            pack(folder, pack_to, [MANIFEST, *files])
        if report_to is not None and REPORT in files:
            report_to.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / REPORT, report_to)
        return Verified(m, digest, files, done, units, judge_verified, integrity.summary(labels, empty))


def entry_id(m: Manifest) -> str:
    return f"{m.model}--{m.split}"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def provenance_checks(m: Manifest, params: Params) -> dict[str, dict]:
    """The manifest's code version and params hash against the board's: kept in the entry, shown on the page."""
    board = {"code_version": code_version(), "params_hash": section_hash(params, *PARAMS_SECTIONS)}
    return {k: {"bundle": getattr(m, k), "board": v, "match": getattr(m, k) == v} for k, v in board.items()}


def accept(bundle: str | Path, board: Path, params: Params, params_path: str, requests_dir: str | Path,
           judge_eval_dir: str | Path | None = None, supersede: bool = False,
           limits: LimitsParams | None = None, date_from_bundle: bool = False) -> tuple[Verified, Path, str]:
    """Verify, then add to the board folder: bundles/{id}.tar.gz, reports/{id}.html (if any) and entries/{id}.json
    (written last). Returns (verified, entry path, what happened: added | superseded | unchanged). A failed
    verification, or a bundle for a model x split the board already holds without `supersede`, leaves the board
    untouched; with `supersede` the old row moves to history/{id}/{old manifest sha}/. `date_from_bundle` records
    the completions' date (the manifest's `created`) as the verification date, so a board rebuilt from the same
    bundle is byte-identical (the pipeline's own demo board); `verified.date_source` says which."""
    limits = limits or params.limits
    staging = Path(tempfile.mkdtemp(prefix="mirage-staging-"))  # the board is touched only once all passed
    try:
        v = verify_bundle(bundle, params, params_path, requests_dir, staging / "bundle.tar.gz", judge_eval_dir,
                          staging / "report.html", limits)
        eid = entry_id(v.manifest)
        path = inside(board, board / "entries" / f"{eid}.json")
        old = _old_entry(path, limits)
        if old is not None and old.get("manifest_sha256") == v.manifest_sha256:
            return v, path, "unchanged"
        if old is not None and not supersede:
            raise BundleError(f"the board already has a verified row for {v.manifest.model} on {v.manifest.split} "
                              f"(manifest {str(old.get('manifest_sha256'))[:12]}, verified "
                              f"{(old.get('verified') or {}).get('date', '?')}); a submission never replaces it "
                              "silently: pass --supersede to replace it (the old row is kept under history/)")
        history = list((old or {}).get("history") or [])
        if old is not None:
            history.insert(0, _archive(board, eid, old))
        bundle_path = inside(board, board / "bundles" / f"{eid}.tar.gz")
        _place(staging / "bundle.tar.gz", bundle_path)
        report = None
        report_path = inside(board, board / "reports" / f"{eid}.html")
        report_path.unlink(missing_ok=True)
        if (staging / "report.html").exists():
            _place(staging / "report.html", report_path)
            report = f"reports/{eid}.html"
        entry = {"id": eid, "manifest": v.manifest.dump(), "manifest_sha256": v.manifest_sha256,
                 "bundle": f"bundles/{eid}.tar.gz", "report": report, "history": history,
                 "verified": {"code_version": code_version(), "date": v.manifest.created if date_from_bundle else _now(),
                              "date_source": "bundle" if date_from_bundle else "clock", "run_date": v.manifest.created[:10],
                              "recomputed": v.recomputed, "checks": provenance_checks(v.manifest, params),
                              "judge_scores": "verified" if v.judge_verified else "unverified",
                              "integrity": v.integrity},
                 "units": v.units}
        write_json(path, entry)
        return v, path, "superseded" if old is not None else "added"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _place(src: Path, dest: Path) -> None:
    """Move `src` to `dest` atomically (through a temp name beside `dest`: the staging folder may be elsewhere)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.move(src, tmp)
    os.replace(tmp, dest)


def _old_entry(path: Path, limits: LimitsParams) -> dict | None:
    if not path.exists():
        return None
    old = untrusted.load_json(path, "board entry", limits)
    if not isinstance(old, dict):
        raise DataError(f"{path}: not a board entry written by `mirage leaderboard verify`")
    return old


def _archive(board: Path, eid: str, old: dict) -> dict:
    """Move an accepted row (entry, bundle, report) to history/{id}/{manifest sha}/; returns its history record."""
    sha = str(old.get("manifest_sha256", "unknown"))[:16]
    dest = inside(board, board / "history" / eid / sha)
    dest.mkdir(parents=True, exist_ok=True)
    record = {"manifest_sha256": old.get("manifest_sha256"), "verified": (old.get("verified") or {}).get("date"),
              "superseded": _now(), "entry": f"history/{eid}/{sha}/entry.json"}
    for key, name in (("bundle", "bundle.tar.gz"), ("report", "report.html")):
        if old.get(key) and (board / old[key]).is_file():
            src = inside(board, board / old[key])
            src.replace(dest / name)
            old[key] = f"history/{eid}/{sha}/{name}"
            record[key] = old[key]
    write_json(dest / "entry.json", old)
    return record
