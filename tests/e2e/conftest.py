"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """A list the test appends the processes it starts to: each is killed (if still
    running) and reaped when the test ends, whatever happened, and its pipes closed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait()
        for pipe in (p.stdout, p.stderr):
            if pipe is not None:
                pipe.close()
