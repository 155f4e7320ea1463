"""A file made unwritable for this process, for the tests of databases and logs this user
may read but not write."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["read_only"]


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` made unwritable for this process: its mode (0444) for a user, `chattr +i`
    for root (whom modes do not stop); skipped where neither can be done."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip("root, and no `chattr +i` here to make a file read-only to root")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)
