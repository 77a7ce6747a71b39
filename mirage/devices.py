"""`mirage devices`: give a job its own GPUs on a shared node, then run it.

Snakemake's `gpu` resource is a counter: it stops a ninth GPU from being promised, but tells no job *which* GPUs
are its own, so every CUDA job would start on cuda:0. This command is the slot allocator the jobs share: each GPU
is one lock file (`fcntl.flock`) in a folder of this node; a job takes N free slots all at once (or none, so two
jobs can never deadlock holding half each), sets `CUDA_VISIBLE_DEVICES` to them and `exec`s its command, which
inherits the locks. The kernel drops a lock when the last process holding it ends, by exit or by kill -9, so a
killed job never leaks its GPUs. A job that finds too few free slots waits (another job is still finishing, or
Snakemake was started without `--resources gpu=N` and so did not count) and names the holders while it does.

The pool is `CUDA_VISIBLE_DEVICES` where it is set (a scheduler's assignment, or a user keeping some GPUs out),
else every GPU `nvidia-smi` lists. Under SLURM the locks are scoped by job id, since each job's device numbers are
its own. A job that needs no GPU runs with `CUDA_VISIBLE_DEVICES=""` so it cannot take one by accident; on a node
with no GPU at all every job runs with none (the embedded model declared with GPUs still runs on the CPU).
"""

from __future__ import annotations

import fcntl
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

LOCKS_ENV = "MIRAGE_GPU_LOCKS"


class NoSlots(RuntimeError):
    """Fewer GPUs free (or present) than a job needs."""


def node_devices(environ: os._Environ | dict[str, str] | None = None) -> list[str]:
    """The GPU ids jobs on this node share: CUDA_VISIBLE_DEVICES when set (empty = none), else nvidia-smi's list,
    else one per GPU the NVIDIA driver lists in /proc (a container without nvidia-smi)."""
    environ = os.environ if environ is None else environ
    if "CUDA_VISIBLE_DEVICES" in environ:
        return [d.strip() for d in environ["CUDA_VISIBLE_DEVICES"].split(",") if d.strip()]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60, check=True).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        driver = Path("/proc/driver/nvidia/gpus")
        return [str(i) for i in range(len(list(driver.iterdir())))] if driver.is_dir() else []


def lock_dir(environ: os._Environ | dict[str, str] | None = None) -> Path:
    """The node-local folder of slot locks: MIRAGE_GPU_LOCKS, else one per user (and per SLURM job) in the temp dir."""
    environ = os.environ if environ is None else environ
    if environ.get(LOCKS_ENV):
        return Path(environ[LOCKS_ENV])
    scope = f"-slurm{environ['SLURM_JOB_ID']}" if environ.get("SLURM_JOB_ID") else ""
    return Path(tempfile.gettempdir()) / f"mirage-gpu-slots-{os.getuid()}{scope}"


def _slot_file(folder: Path, device: str) -> Path:
    return folder / f"gpu-{re.sub(r'[^A-Za-z0-9._-]', '_', device)}.lock"


def holders(folder: Path, devices: list[str]) -> str:
    """Who holds which slot, as the holders wrote it (pid and command), for messages; free slots are left out."""
    said = []
    for d in devices:
        try:
            fd = os.open(_slot_file(folder, d), os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # succeeds only when nobody holds it
        except BlockingIOError:
            said.append(f"GPU {d}: {os.pread(fd, 1000, 0).decode(errors='replace').strip() or 'unknown'}")
        finally:
            os.close(fd)
    return "; ".join(said) or "none now"


def try_take(n: int, devices: list[str], folder: Path, label: str) -> list[tuple[str, int]] | None:
    """Lock n free slots at once and return (device, fd) pairs, or lock none and return None."""
    folder.mkdir(parents=True, exist_ok=True)
    held: list[tuple[str, int]] = []
    for d in devices:
        fd = os.open(_slot_file(folder, d), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({label})\n".encode(), 0)
        held.append((d, fd))
        if len(held) == n:
            return held
    for _, fd in held:
        os.close(fd)
    return None


def take(n: int, devices: list[str], folder: Path, label: str, wait_s: float, say=print) -> list[tuple[str, int]]:
    """Wait up to wait_s for n free slots; NoSlots names what holds them when the wait runs out."""
    if n > len(devices):
        shown = ", ".join(devices) if devices else "none"
        raise NoSlots(f"the job needs {n} GPU(s) but this node offers {len(devices)} ({shown}; from CUDA_VISIBLE_DEVICES, "
                      "else nvidia-smi): run it where it has enough, or declare fewer `gpus` for the model")
    deadline, said = time.monotonic() + wait_s, False
    while True:
        held = try_take(n, devices, folder, label)
        if held is not None:
            return held
        if time.monotonic() >= deadline:
            raise NoSlots(f"no {n} free GPU(s) after {wait_s:g} s; held: {holders(folder, devices)} (slot locks in {folder})")
        if not said:
            say(f"mirage devices: waiting for {n} free GPU(s) of {len(devices)}; held: {holders(folder, devices)}")
            said = True
        time.sleep(0.2 + random.random() * 0.3)


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--gpus", type=click.IntRange(min=0), required=True,
              help="GPUs the command needs (the rule's `resources: gpu`); 0 runs it with no GPU visible.")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=3600, show_default=True,
              help="Seconds to wait for enough free GPUs before failing (exit 1, naming the holders).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def devices(gpus: int, wait_s: float, command: tuple[str, ...]) -> None:
    """Run COMMAND on GPUS GPUs of this node that no other job holds.

    \b
      mirage devices --gpus 2 -- python -m mirage generate --model llama-3.3-70b ...
    The workflow's GPU rules start their command this way, so `snakemake --cores all --resources gpu=8` gives every
    job its own CUDA_VISIBLE_DEVICES. The pool is CUDA_VISIBLE_DEVICES when set, else the GPUs nvidia-smi lists;
    slots are lock files in $MIRAGE_GPU_LOCKS (default: a per-user folder in the temp dir, per job under SLURM),
    released when the command ends or is killed. On a node with no GPU at all the command runs with none (and says
    so); a node with some, but fewer than GPUS, fails at once.
    """
    label = " ".join(command)[:200]
    pool = node_devices() if gpus else []
    if gpus == 0:
        chosen, held = [], []
    elif not pool:  # nothing to share or protect; the command (e.g. the local provider) decides whether it can run
        chosen, held = [], []
        click.echo(f"mirage devices: this node shows no GPU; running with none (the job declared {gpus})", err=True)
    else:
        try:
            held = take(gpus, pool, lock_dir(), label, wait_s, say=lambda m: click.echo(m, err=True))
        except NoSlots as exc:
            raise click.ClickException(str(exc)) from None
        chosen = [d for d, _ in held]
        click.echo(f"mirage devices: CUDA_VISIBLE_DEVICES={','.join(chosen)} for {label}", err=True)
    for _, fd in held:
        os.set_inheritable(fd, True)  # the command keeps the locks until it (and anything it passes them to) ends
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(chosen)}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvpe(command[0], list(command), env)
    except OSError as exc:
        raise click.ClickException(f"cannot run {command[0]!r}: {exc.strerror}") from None
