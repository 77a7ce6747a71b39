"""Verification of bundles built to exhaust memory, disk or time: peak memory, peak disk and wall time of
`mirage leaderboard verify` on each, in a fresh process (issue 25: <= 512 MB of memory, <= 2 x the declared
size on disk, whatever the bundle holds).

    python -m benchmarks.bench_hostile_bundles [--dir /tmp/mirage-bench-hostile]

Builds the hostile-suite world (a tiny project and its verified bundle, tests/hostile/conftest.py) and, from it:
a folder bundle whose completions file is a 2 GB sparse file (undeclared, and declared with a matching size), a
1 GB sparse manifest, a .tar.gz bomb (15 members of 200 MB of zeros: 3 GB from ~3 MB), a .tar.gz whose one member
declares 3 GB, and the largest bundle that passes the layout checks: a .tar.gz whose completions.jsonl is 250 MB
of zeros with the matching size and SHA-256 in the manifest (extracted, hashed, then refused at its first line).
Each runs `python -m mirage leaderboard verify` with TMPDIR and the board in a fresh folder; peak RSS is the
child's ru_maxrss (wait4), peak disk the largest block usage of TMPDIR plus the board, sampled every 10 ms.
The valid bundle is measured too (accepted onto a board).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class World:
    """The paths of tests/hostile/conftest.py's world (that module imports mirage: not loaded here)."""

    def __init__(self, root: Path) -> None:
        self.root, self.params, self.requests = root, root / "params.yaml", root / "requests"
        self.bundle, self.folder_bundle = root / "bundle.tar.gz", root / "bundle"
MB, GB = 1 << 20, 1 << 30


def _blocks(*folders: Path) -> int:
    total = 0
    for folder in folders:
        for dirpath, _, files in os.walk(folder):
            for f in files:
                try:
                    total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
                except FileNotFoundError:
                    pass
    return total


def measure(bundle: Path, world: World, work: Path) -> dict:
    tmp, board = work / "tmp", work / "board"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(board, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT), "HOME": str(work)}
    argv = [sys.executable, "-m", "mirage", "leaderboard", "verify", str(bundle), "--params", str(world.params),
            "--requests-dir", str(world.requests), "--board", str(board)]
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _blocks(tmp, board))
            time.sleep(0.01)

    t = threading.Thread(target=sample, daemon=True)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=world.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    t.join()
    out = proc.stdout.read() + proc.stderr.read()
    return {"exit": os.waitstatus_to_exitcode(status), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "peak_disk_mb": round(max(peak[0], _blocks(tmp, board)) / MB, 1), "wall_s": round(wall, 2),
            "message": out.strip().splitlines()[-1][:160] if out.strip() else ""}


def folder_copy(world: World, dest: Path) -> Path:
    shutil.copytree(world.folder_bundle, dest)
    for p in dest.iterdir():
        p.chmod(0o644)
    return dest


def build(world: World, d: Path) -> dict[str, tuple[Path, int]]:
    """name -> (bundle, declared bytes)."""
    out = {}
    m = json.loads((world.folder_bundle / "manifest.json").read_text(encoding="utf-8"))
    declared = sum(f["bytes"] for f in m["files"].values())
    out["valid bundle (.tar.gz)"] = (world.bundle, declared)

    f = folder_copy(world, d / "sparse-undeclared")
    os.truncate(f / "completions.jsonl", 2 * GB)
    out["2 GB sparse completions, size not declared"] = (f, declared)

    f = folder_copy(world, d / "sparse-declared")
    os.truncate(f / "completions.jsonl", 2 * GB)
    m2 = json.loads(json.dumps(m))
    m2["files"]["completions.jsonl"]["bytes"] = 2 * GB
    (f / "manifest.json").write_text(json.dumps(m2), encoding="utf-8")
    out["2 GB sparse completions, declared"] = (f, declared - m["files"]["completions.jsonl"]["bytes"] + 2 * GB)

    f = folder_copy(world, d / "manifest-1gb")
    os.truncate(f / "manifest.json", GB)
    out["1 GB sparse manifest"] = (f, declared)

    bomb = d / "bomb.tar.gz"
    with open(bomb, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as gz:
        zeros = bytes(MB)
        for i in range(15):
            info = tarfile.TarInfo(f"b/part{i}.bin")
            info.size = 200 * MB
            gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
            for _ in range(200):
                gz.write(zeros)
        gz.write(bytes(1024))
    out[f"tar.gz bomb: 15 x 200 MB of zeros ({bomb.stat().st_size / MB:.1f} MB compressed)"] = (bomb, declared)

    header = d / "header-3gb.tar.gz"
    with open(header, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as gz:
        info = tarfile.TarInfo("b/completions.jsonl")
        info.size = 3 * GB
        gz.write(info.tobuf(format=tarfile.GNU_FORMAT))
        gz.write(bytes(MB))
    out["tar.gz whose member declares 3 GB"] = (header, declared)

    big = d / "passes-layout-250mb.tar.gz"
    size = 250 * MB
    m3 = json.loads(json.dumps(m))
    m3["files"]["completions.jsonl"] = {"sha256": hashlib.sha256(bytes(size)).hexdigest(), "bytes": size}
    with tarfile.open(big, "w:gz", compresslevel=1) as tar:
        for p in sorted(world.folder_bundle.iterdir()):
            data = json.dumps(m3).encode() if p.name == "manifest.json" else p.read_bytes()
            if p.name == "completions.jsonl":
                info = tarfile.TarInfo(f"b/{p.name}")
                info.size = size
                tar.addfile(info, io.BufferedReader(io.BytesIO(bytes(size))))
                continue
            info = tarfile.TarInfo(f"b/{p.name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out[f"250 MB completions of zeros, size and SHA-256 declared ({big.stat().st_size / MB:.1f} MB compressed)"] = \
        (big, sum(f["bytes"] for f in m3["files"].values()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/mirage-bench-hostile")
    args = ap.parse_args()
    d = Path(args.dir)
    shutil.rmtree(d, ignore_errors=True)
    (d / "world").mkdir(parents=True)
    # built in another process: Linux counts a forked child's inherited pages in its ru_maxrss, so this process
    # stays small (the standard library only) and the numbers below are the verifier's own
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from tests.hostile.conftest import "
                    "build_world; build_world(Path(sys.argv[1]))", str(d / "world")], cwd=ROOT, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL)
    world = World(d / "world")
    bundles = build(world, d / "bundles")
    print(f"{'bundle':75s} {'exit':>4s} {'peak RSS MB':>11s} {'peak disk MB':>12s} {'declared MB':>11s} {'wall s':>6s}")
    for name, (bundle, declared) in bundles.items():
        r = measure(bundle, world, d / "work")
        print(f"{name[:75]:75s} {r['exit']:4d} {r['peak_rss_mb']:11.1f} {r['peak_disk_mb']:12.1f} {declared / MB:11.1f} "
              f"{r['wall_s']:6.2f}")
        print(f"    {r['message']}")


if __name__ == "__main__":
    main()
