"""`mirage leaderboard verify`: accept a bundle only if every number in it is recomputed from its raw
completions. Checks run in order and the first failure is the one error reported:

1. layout: manifest.json parses and fits the schema; the files are exactly those it lists, each with
   its byte size and SHA-256;
2. split: the bundle was made for this board's request set of the split (split hash, request count)
   under the protocol's sampling settings and statistics;
3. completions: one model at one pinned revision, every request x n samples present once, no extra
   prompts, request columns unchanged, seeds and answers consistent;
4. recomputation: labels with the pinned judge, then metrics, then the headline, each equal to the bundle's.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from mirage.artefacts import DATA
from mirage.hashing import file_sha256
from mirage.io import DataError, write_json
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
    parse_manifest,
    read_rows,
    split_hash,
)
from mirage.leaderboard.submit import gold_scores
from mirage.params import Params
from mirage.provenance import code_version

REQUIRED_FILES = (COMPLETIONS, LABELS, METRICS)
ALLOWED_FILES = (*REQUIRED_FILES, REPORT)


@dataclass
class Verified:
    manifest: Manifest
    manifest_sha256: str
    folder_files: list[str]


def _check_layout(folder: Path) -> tuple[Manifest, str]:
    path = folder / MANIFEST
    if not path.is_file():
        raise BundleError(f"{MANIFEST}: missing (every bundle starts with its manifest)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{MANIFEST}: not valid JSON ({exc})") from None
    m = parse_manifest(raw, MANIFEST)
    links = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_symlink()]
    if links:
        raise BundleError(f"{links[0]}: a link; bundles hold plain files only")
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {MANIFEST}
    dirs = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir()]
    if dirs:
        raise BundleError(f"{dirs[0]}: unexpected folder in the bundle")
    for name in sorted(set(m.files) - set(ALLOWED_FILES)):
        raise BundleError(f"{MANIFEST}: field files.{name}: not a bundle file (allowed: {', '.join(ALLOWED_FILES)})")
    for name in REQUIRED_FILES:
        if name not in m.files:
            raise BundleError(f"{MANIFEST}: field files: {name} is not listed")
    for name in sorted(present - set(m.files)):
        raise BundleError(f"{name}: file not listed in the manifest (unhashed content)")
    for name, entry in sorted(m.files.items()):
        p = folder / name
        if name not in present:
            raise BundleError(f"{name}: listed in the manifest but missing from the bundle")
        digest, size = file_sha256(p), p.stat().st_size
        if digest != entry.sha256 or size != entry.bytes:
            raise BundleError(f"{name}: content does not match the manifest's SHA-256 and size ({size} bytes, manifest says "
                              f"{entry.bytes}; truncated or edited)")
    return m, file_sha256(path)


def verify_bundle(bundle: str | Path, params: Params, params_path: str, requests_dir: str | Path,
                  keep_to: Path | None = None, judge_eval_dir: str | Path | None = None) -> Verified:
    """Verify a bundle; with `keep_to`, also copy its files there (for the board) once everything passed."""
    with opened(bundle) as folder, ExitStack() as stack:
        m, digest = _check_layout(folder)
        requests = rc.load_requests(requests_dir, m.split)
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
            raise BundleError(f"{MANIFEST}: field statistics.{diff[0]}: {m.statistics.get(diff[0])!r} differs from this "
                              f"board's {stats.get(diff[0])!r}")
        try:
            judge = rc.make_judge(m.judge.name, m.judge.params, params, params_path, stack)
        except DataError as exc:
            raise BundleError(f"{MANIFEST}: field judge.name: {exc}") from None
        want_judge = rc.judge_params(params, m.judge.name)
        if m.judge.params != want_judge:
            diff = sorted(k for k in set(want_judge) | set(m.judge.params) if m.judge.params.get(k) != want_judge.get(k))
            raise BundleError(f"{MANIFEST}: field judge.params.{diff[0]}: {m.judge.params.get(diff[0])!r} differs from this "
                              f"board's {want_judge.get(diff[0])!r}")
        gold_file = Path(judge_eval_dir) / m.judge.name / "judge_eval.json" if judge_eval_dir else None
        if gold_file is not None and gold_file.exists() and m.judge.gold != gold_scores(gold_file):
            raise BundleError(f"{MANIFEST}: field judge.gold: does not match this board's gold-set evaluation {gold_file}")
        completions = read_rows(folder / COMPLETIONS, COMPLETIONS)
        if len(completions) != m.n_completions:
            raise BundleError(f"{COMPLETIONS}: {len(completions)} rows, manifest says n_completions = {m.n_completions}")
        rc.check_completions(completions, m, requests, COMPLETIONS)
        try:
            labels, table = rc.recompute(completions, judge, DATA, m.statistics, COMPLETIONS)
        except DataError:
            raise
        except Exception as exc:  # a trust boundary: whatever stops the recomputation rejects the bundle
            raise BundleError(f"{COMPLETIONS}: labels and metrics cannot be recomputed ({type(exc).__name__}: {exc})") from None
        rc.compare_labels(read_rows(folder / LABELS, LABELS), labels, LABELS)
        try:
            bundled = (folder / METRICS).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise BundleError(f"{METRICS}: not UTF-8 text ({exc.reason})") from None
        rc.compare_metrics(bundled, rc.metrics_csv(table), METRICS)
        recomputed = rc.headline(table)
        for name in sorted(set(recomputed) | set(m.headline)):
            if not rc.same(m.headline.get(name), recomputed.get(name)):
                raise BundleError(f"{MANIFEST}: field headline.{name}: {m.headline.get(name)!r}, recomputed {recomputed.get(name)!r}")
        files = sorted(m.files)
        if keep_to is not None:
            keep_to.mkdir(parents=True, exist_ok=True)
            for name in [MANIFEST, *files]:
                shutil.copyfile(folder / name, keep_to / name)
        return Verified(m, digest, files)


def entry_id(m: Manifest) -> str:
    return f"{m.model}--{m.split}"


def accept(bundle: str | Path, board: Path, params: Params, params_path: str, requests_dir: str | Path,
           judge_eval_dir: str | Path | None = None) -> tuple[Verified, Path]:
    """Verify, then add to the board folder: bundles/{id}.tar.gz, reports/{id}.html (if any) and entries/{id}.json
    (written last). A failed verification leaves the board untouched."""
    board.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=board))
    try:
        v = verify_bundle(bundle, params, params_path, requests_dir, staging / "bundle", judge_eval_dir)
        eid = entry_id(v.manifest)
        pack(staging / "bundle", board / "bundles" / f"{eid}.tar.gz")
        report = None
        (board / "reports" / f"{eid}.html").unlink(missing_ok=True)
        if REPORT in v.folder_files:
            (board / "reports").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(staging / "bundle" / REPORT, board / "reports" / f"{eid}.html")
            report = f"reports/{eid}.html"
        entry = {"id": eid, "manifest": v.manifest.dump(), "manifest_sha256": v.manifest_sha256,
                 "bundle": f"bundles/{eid}.tar.gz", "report": report,
                 "verified": {"code_version": code_version(), "run_date": v.manifest.created[:10]}}
        path = board / "entries" / f"{eid}.json"
        write_json(path, entry)
        return v, path
    finally:
        shutil.rmtree(staging, ignore_errors=True)
