"""Runs `mirage` commands for the hostile-input suite, each in a forked child with bounded memory and time.

One long-lived process imports mirage (and the spaCy pipeline the default judge uses) once; for every request
it forks a child that runs the real console entry point (`mirage.cli.main`) with the given argv, working
directory, environment and temp folder, under RLIMIT_AS (its address space at fork + `mem_mb`), with stdout and
stderr in files. The parent waits at most `timeout_s` (then kills the child) and answers with the exit status and
the child's peak resident memory above what it inherited (ru_maxrss from wait4 minus the RSS at fork).

Protocol: one JSON request per line on stdin, one JSON answer per line on stdout.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _vm_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _child(req: dict) -> None:
    import tempfile

    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    tempfile.tempdir = req["tmp"]
    for fd, path in ((1, req["stdout"]), (2, req["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, fd)
        os.close(out)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    limit = _vm_bytes() + req["mem_mb"] * (1 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.argv = ["mirage", *req["argv"]]
    code = 0
    try:
        from mirage.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as a traceback and exit 99 so the test shows it
        import traceback

        traceback.print_exc()
        code = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve() -> None:
    import mirage.cli  # noqa: F401 - warm imports shared by every child
    from mirage.cli import COMMANDS, LazyGroup

    for name in COMMANDS:
        LazyGroup().get_command(None, name)
    from mirage.judges.parse import load_nlp

    load_nlp()
    import pandas  # noqa: F401

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        rss0 = _rss_kb()
        pid = os.fork()
        if pid == 0:
            _child(req)
        deadline = time.monotonic() + req["timeout_s"]
        timed_out = False
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                done, status, usage = os.wait4(pid, 0)
                timed_out = True
                break
            time.sleep(0.005)
        code = os.waitstatus_to_exitcode(status)
        print(json.dumps({"code": code, "timed_out": timed_out, "grew_mb": max(0, usage.ru_maxrss - rss0) / 1024,
                          "maxrss_mb": usage.ru_maxrss / 1024}), flush=True)


if __name__ == "__main__":
    serve()
