"""Child processes set up in the child before they run, without ``preexec_fn``.

A ``preexec_fn`` makes ``subprocess`` fork with Python's at-fork handlers run in the child:
in a test process where gRPC has run, gRPC's handler restarts its poller thread there, and
once ``close_fds`` has closed the poller's epoll descriptor the child dies before its
``exec`` ("epoll_wait error: Bad file descriptor", grpc/grpc#43055): a test failed so under
pytest-xdist, whose workers have run gRPC tests before. The SDK arms its parent-death
signal in the bot itself for the same reason (``sdk.cli``).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import IO, AnyStr

__all__ = ["environment_set", "python_after", "readline_within"]


def python_after(setup: str, *args: str) -> list[str]:
    """The argv that runs ``python ARGS...`` after ``setup`` (Python statements, with
    ``os``, ``signal`` and ``sys`` imported) in a fresh interpreter: a signal disposition
    or a closed descriptor is kept across the ``exec``.

    >>> python_after("os.close(1)", "-m", "arena.cli")[-2:]
    ['-m', 'arena.cli']
    """
    run = "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    code = f"import os, signal, sys; {setup}; {run}"
    return [sys.executable, "-c", code, *args]


def readline_within(stream: IO[AnyStr], seconds: float) -> AnyStr | None:
    """The next line of a child's ``stream`` (a pipe), or ``None`` when none came within
    ``seconds``: a child that regressed to saying nothing fails the test at once, where a
    plain ``readline()`` would hang until pytest's own timeout. (Read in a thread: a pipe
    polled as ready may still hold half a line. Kill the child after ``None``: its pipe's
    end then ends the thread.)"""
    got: list[AnyStr] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0] if got else None


def environment_set(pid: int, seconds: float = 30.0) -> int:
    """``pid`` once Linux shows its environment in ``/proc/PID/environ`` (or once it is gone,
    or ``seconds`` passed): ``Popen`` returns when the child's ``exec`` closed its
    close-on-exec descriptors, before the new program's environment is set up, and a scan
    of ``/proc`` made at once may read it empty (14 in 3,000 starts on a loaded machine):
    a test of what such a scan finds waits for this first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/environ").read_bytes():
                break
        except OSError:  # gone
            break
        time.sleep(0.001)
    return pid
