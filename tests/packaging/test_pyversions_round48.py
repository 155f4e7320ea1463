"""Round 48: `make test PY=python3.13` as README.md gives it, on a machine where that
command does not run (pyenv installed 3.13 beside the selected 3.11: its shim of
`python3.13` refuses, "pyenv: python3.13: command not found")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.packaging.test_pyversions_round39 import _fake_python, _make, checkout, pytestmark

__all__ = ["checkout", "pytestmark"]  # (the fixture and the skip without make, reused)

_SHIM = """\
#!/bin/sh
echo "pyenv: python3.13: command not found" >&2
echo "The \\`python3.13' command exists in these Python versions:" >&2
exit 127
"""


def test_a_python_that_does_not_run_is_not_given_back_as_the_way_out(
    checkout: Path, tmp_path: Path
) -> None:
    """Defect: after pyenv's own error the Makefile said "give a Python 3.11 or later with
    PY=, e.g. make test PY=python3.13": the very command that had just failed. It now says
    that PY does not run, and to give a Python that runs or its path (pyenv's too); a
    Python that runs but is too old keeps the first hint."""
    bin_dir = tmp_path / "shims"
    bin_dir.mkdir()
    (bin_dir / "python3.13").write_text(_SHIM, encoding="utf-8")
    (bin_dir / "python3.13").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["make", "-C", str(checkout), "--no-print-directory", "test", "PY=python3.13"],
        env={k: v for k, v in env.items() if k not in {"PY", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert "pyenv: python3.13: command not found" in said  # its own error first
    assert "make: PY=python3.13 does not run here (its error is above)" in said, said
    assert "e.g. make test PY=/usr/local/bin/python3.13" in said
    assert 'PY="$(pyenv root)/versions/3.13.0/bin/python3"' in said  # pasted as it is
    assert "e.g. make test PY=python3.13" not in said
    assert not (checkout / ".venv").exists()
    # a Python that runs, too old: the hint to give another by its command stays
    log = tmp_path / "calls.log"
    old = _fake_python(tmp_path / "bin/python3.10", (3, 10, 13), log)
    done = _make(checkout, "test", f"PY={old}")
    assert "give a Python 3.11 or later with PY=, e.g. make test PY=python3.13" in done.stderr
    assert "does not run here" not in done.stderr
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
    assert "a `PY` that does not run, pyenv's shim of a version not selected, is said" in readme
