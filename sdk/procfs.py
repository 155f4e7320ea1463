"""The machine's processes as Linux's ``/proc`` lists them (none elsewhere): read by a bot
that a tournament launched, and by the tournament, to stop what their processes left
running."""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["processes"]


def processes(*, zombies: bool = True) -> Iterator[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every process; ``zombies=False`` leaves out those
    that ended and wait to be reaped (nothing to stop; a reaper wants them)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                # pid (comm) state ppid pgrp session ...: comm may hold spaces and ")"
                fields = fh.read().rpartition(b")")[2].split()
            if zombies or fields[0] != b"Z":
                yield int(entry), int(fields[1]), int(fields[3])
        except (OSError, ValueError, IndexError):  # gone meanwhile, unreadable
            continue
