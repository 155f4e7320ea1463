"""Round 39: the Makefile on other Pythons than the one `.venv` was made with.

README promises `make test` "with only Python 3.11+ and make" and `make test PY=python3.13`
for another Python. The Makefile's venv recipe is run here with fake interpreters (a
script that answers `-c CODE` as Python X.Y would and makes a fake venv for `-m venv`), so
no real venv is made and nothing is downloaded: each `make` takes well under a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP = ".venv/.installed"

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")

#: Answers `-c CODE` as Python VERSION would (sys.version_info is replaced), makes a venv
#: of fake interpreters for `-m venv DIR` (keeping a bin/python there, as venv does), and
#: logs every call to LOG.
_FAKE_PYTHON = """\
import os, sys
VERSION = {version!r}
LOG = {log!r}
args = sys.argv[1:]
with open(LOG, "a") as log:
    log.write("python%d.%d " % VERSION[:2] + " ".join(args) + "\\n")
if args[:1] == ["-c"]:
    sys.version_info = VERSION + ("final", 0)
    sys.version = "%d.%d.%d (fake)" % VERSION
    exec(args[1])
elif args[:2] == ["-m", "venv"]:
    bin_dir = os.path.join(args[2], "bin")
    os.makedirs(bin_dir, exist_ok=True)
    wrappers = {{"pip": "echo pip \\"$@\\" >> '%s'" % LOG,
                "python": "exec '%s' '%s' \\"$@\\"" % (sys.executable, sys.argv[0])}}
    for name, line in wrappers.items():
        path = os.path.join(bin_dir, name)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write("#!/bin/sh\\n" + line + "\\n")
            os.chmod(path, 0o755)
else:
    sys.exit("the fake Python was asked for %r" % (args,))
"""


def _fake_python(where: Path, version: tuple[int, int, int], log: Path) -> Path:
    """An executable at WHERE that behaves as Python VERSION (see ``_FAKE_PYTHON``)."""
    where.parent.mkdir(parents=True, exist_ok=True)
    script = where.with_name(where.name + ".py")
    script.write_text(_FAKE_PYTHON.format(version=version, log=str(log)), encoding="utf-8")
    where.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{script}' \"$@\"\n", encoding="utf-8")
    where.chmod(0o755)
    return where


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A directory with the project's Makefile and pyproject.toml and no .venv."""
    work = tmp_path / "checkout"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    return work


def _make(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``make -C WORK ARGS`` with no PY, MAKEFLAGS of an enclosing `make test PY=...` (they
    would pass its PY on as given on the command line)."""
    env = {
        k: v for k, v in os.environ.items() if k not in {"PY", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    }
    return subprocess.run(
        ["make", "-C", str(work), "--no-print-directory", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _installed(work: Path, venv_python: Path, log: Path) -> None:
    """Give WORK a .venv as `make venv` leaves it, made by VENV_PYTHON; clear LOG."""
    subprocess.run([str(venv_python), "-m", "venv", str(work / ".venv")], check=True)
    stamp = work / STAMP
    stamp.touch()
    later = (work / "pyproject.toml").stat().st_mtime + 10
    os.utime(stamp, (later, later))
    log.write_text("", encoding="utf-8")


def _venv_version(work: Path) -> str:
    code = 'import sys; print("%d.%d" % sys.version_info[:2])'
    out = subprocess.run(
        [str(work / ".venv/bin/python"), "-c", code], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_an_old_python_is_refused_before_a_venv_is_made(checkout: Path, tmp_path: Path) -> None:
    """Defect: `make test PY=python3.10` made a 3.10 .venv, upgraded its pip, and only then
    failed inside pip ("Package 'thousand-arena' requires a different Python: 3.10.13 not
    in '>=3.11'"), leaving that .venv behind for the next `make test PY=python3.13`."""
    log = tmp_path / "calls.log"
    py310 = _fake_python(tmp_path / "bin/python3.10", (3, 10, 13), log)
    done = _make(checkout, "test", f"PY={py310}")
    assert done.returncode != 0
    assert f"Thousand Arena needs Python 3.11 or later; {py310} is 3.10.13" in done.stderr
    assert "give a Python 3.11 or later with PY=, e.g. make test PY=python3.13" in done.stderr
    assert not (checkout / ".venv").exists()
    assert "-m venv" not in log.read_text(encoding="utf-8")


def test_a_python_that_does_not_run_is_named_with_the_way_out(checkout: Path) -> None:
    """(pyenv's shim of a version not selected, a typo): the shell's or pyenv's own error,
    then what to give; no .venv."""
    done = _make(checkout, "venv", f"PY={checkout / 'no-such-python3.13'}")
    assert done.returncode != 0
    assert "no-such-python3.13" in done.stderr
    # (the way out it names: tests/packaging/test_pyversions_round48.py)
    assert "make: PY=" in done.stderr and "does not run here" in done.stderr
    assert not (checkout / ".venv").exists()


def test_a_venv_half_made_by_another_python_is_made_again(checkout: Path, tmp_path: Path) -> None:
    """Defect: after a failed `make test PY=python3.10`, `make test PY=python3.13` ran venv
    over the 3.10 .venv, which kept its bin/python (3.10); pip installed for 3.13, and the
    protobuf step failed with "No module named 'grpc_tools'" from then on (the stamp was
    written)."""
    log = tmp_path / "calls.log"
    py310 = _fake_python(tmp_path / "bin/python3.10", (3, 10, 13), log)
    py313 = _fake_python(tmp_path / "bin/python3.13", (3, 13, 0), log)
    subprocess.run([str(py310), "-m", "venv", str(checkout / ".venv")], check=True)
    leftover = checkout / ".venv/lib/python3.10/site-packages/pip.py"
    leftover.parent.mkdir(parents=True)
    leftover.touch()

    done = _make(checkout, STAMP, f"PY={py313}")
    assert done.returncode == 0, done.stderr
    assert f"rm -rf .venv  # made by another Python than {py313}" in done.stdout
    assert not leftover.exists()
    assert _venv_version(checkout) == "3.13"
    assert "pip install -q -e .[dev]" in log.read_text(encoding="utf-8")
    assert (checkout / STAMP).exists()


def test_py_given_to_a_checkout_with_another_pythons_venv_makes_it_again(
    checkout: Path, tmp_path: Path
) -> None:
    """Defect: in a checkout whose .venv was made (by `make test`) with python3 = 3.11,
    `make test PY=python3.13` said nothing and ran the suite on 3.11 again."""
    log = tmp_path / "calls.log"
    py311 = _fake_python(tmp_path / "bin/python3.11", (3, 11, 7), log)
    py313 = _fake_python(tmp_path / "bin/python3.13", (3, 13, 0), log)
    _installed(checkout, py311, log)

    done = _make(checkout, STAMP, f"PY={py313}")
    assert done.returncode == 0, done.stderr
    assert "rm -rf .venv  # made by another Python" in done.stdout
    assert _venv_version(checkout) == "3.13"
    assert "pip install -q -e .[dev]" in log.read_text(encoding="utf-8")


def test_a_venv_stays_without_py_or_with_py_of_its_version(checkout: Path, tmp_path: Path) -> None:
    """Without PY (`make check` after `make test PY=python3.13`), or with PY of the venv's
    own version, the .venv is not touched: nothing is installed again."""
    log = tmp_path / "calls.log"
    py313 = _fake_python(tmp_path / "bin/python3.13", (3, 13, 0), log)
    _installed(checkout, py313, log)

    for args in ([], [f"PY={py313}"]):
        done = _make(checkout, STAMP, *args)
        assert done.returncode == 0, done.stderr
        assert "rm -rf" not in done.stdout
    calls = log.read_text(encoding="utf-8")
    assert "pip install" not in calls
    assert "-m venv" not in calls
    assert _venv_version(checkout) == "3.13"
