"""Bad input, round 39: the surroundings a command runs in.

A standard output whose reader left (``arena tournament | head -3``) or whose disk is full
(``> /dev/full``), standard error the same pipe (``2>&1 | head -1``), and ``arena-bot try
human`` started with its input or its output closed (``<&-``, ``>&-``). Each ends in one
line saying what went wrong, never a traceback, and nothing played is lost: a
tournament's leaderboard files are written whatever became of its standard output.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_bad_input import BOTS, _toml

ROOT = Path(__file__).resolve().parents[2]
FILES = ("leaderboard.json", "leaderboard.csv", "leaderboard.md", "leaderboard.html")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("COLUMNS", None)
    return env


def _closed_pipe() -> int:
    """The writing end of a pipe whose reader has already left: every write is EPIPE."""
    r, w = os.pipe()
    os.close(r)
    return w


def _config(tmp: Path) -> Path:
    return _toml(tmp, f'name = "gone"\nseed = 1\nmax_deals = 1\nconcurrency = 3\n'
                      f'db = "{tmp / "t.sqlite"}"\nout = "{tmp / "out"}"\n{BOTS}')  # fmt: skip


def _stored(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT count(*) FROM matches").fetchone()[0])


@pytest.mark.parametrize(
    "where", ["stdout a closed pipe", "stdout /dev/full", "both one closed pipe"]
)
def test_a_tournament_whose_output_is_gone_still_writes_its_leaderboard_files(
    tmp_path: Path, where: str
) -> None:
    """Defect: ``arena tournament`` printed the leaderboard on its standard output before
    writing the leaderboard's files. With that output's reader gone (``| head -3``) the run
    ended there, exit 1 without a word (rich's SystemExit), the files never written; into a
    full disk (``> /dev/full``) it ended in "Error: cannot write: No space left on device",
    the files never written and the stored matches not said; and with standard error the
    same pipe (``2>&1 | head -1``) the message saying so ended it the same way. The files
    are written all the same, the table is said not to be printed (exit 1), and every
    match is stored."""
    if where == "stdout /dev/full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    cfg = _config(tmp_path)
    closed = _closed_pipe()
    full = open("/dev/full", "w") if where == "stdout /dev/full" else None  # noqa: SIM115
    try:
        out = full.fileno() if full is not None else closed
        err = closed if where == "both one closed pipe" else subprocess.PIPE
        p = subprocess.run(
            [sys.executable, "-m", "arena.cli", "tournament", "--config", str(cfg)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=_env(), cwd=tmp_path,
            timeout=300,
        )  # fmt: skip
    finally:
        os.close(closed)
        if full is not None:
            full.close()
    said = (p.stderr or b"").decode("utf-8", "replace")
    assert "Traceback" not in said and "Exception ignored" not in said, said
    assert p.returncode == 1, said  # (the table was not printed)
    for name in FILES:
        assert (tmp_path / "out" / name).is_file(), (name, said)
    assert _stored(tmp_path / "t.sqlite") == 6
    if where != "both one closed pipe":
        why = "Broken pipe" if where == "stdout a closed pipe" else "No space left on device"
        lines = said.splitlines()
        assert f"cannot print the leaderboard on the standard output: {why}" in lines, said
        assert any(line.startswith("leaderboard: ") for line in lines), said
        assert "6/6 stored in" in said, said


def test_leaderboard_into_a_closed_pipe_still_exits_quietly(tmp_path: Path) -> None:
    """Pinned (what the change of rich's handling of a closed pipe keeps): ``arena
    leaderboard | head -1`` whose reader left exits 1 with nothing said, no traceback, no
    "Exception ignored" from Python's last flush."""
    cfg = _config(tmp_path)
    p = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", "--config", str(cfg)],
                       capture_output=True, env=_env(), cwd=tmp_path, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    closed = _closed_pipe()
    try:
        q = subprocess.run(
            [sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(tmp_path / "t.sqlite")],
            stdin=subprocess.DEVNULL, stdout=closed, stderr=subprocess.PIPE, env=_env(),
            timeout=120,
        )  # fmt: skip
    finally:
        os.close(closed)
    assert q.returncode == 1 and q.stderr == b"", q.stderr


_TRY_HUMAN = [sys.executable, "-m", "sdk.cli", "try", "human", "-n", "1", "--seed", "3"]


def test_the_human_seat_with_its_input_closed_leaves_the_match() -> None:
    """Defect: ``arena-bot try human <&-`` (Python has no ``sys.stdin`` then) raised
    AttributeError at every decision: a traceback, then the match played on with a
    fallback for each of the person's moves, and its results printed, exit 0, as if the
    person had played. It leaves at the first question, as at the end of an input."""
    p = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" <&-', *_TRY_HUMAN],
        capture_output=True, text=True, env=_env(), timeout=120,
    )  # fmt: skip
    assert "Traceback" not in p.stderr and "AttributeError" not in p.stderr, p.stderr
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "End of input: leaving the match." in p.stdout
    assert "a seat left it" in p.stdout and "no results" in p.stdout


def test_the_human_seat_with_its_output_closed_leaves_the_match() -> None:
    """Defect: ``arena-bot try human >&-`` raised AttributeError (no ``sys.stdout``) in every
    hook and decision: a traceback a call on standard error, the match played with
    fallbacks nobody saw, exit 0. It leaves at once, saying why on standard error."""
    p = subprocess.run(
        ["sh", "-c", 'exec "$0" "$@" >&-', *_TRY_HUMAN],
        input="5\n" * 50, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=_env(), timeout=120,
    )  # fmt: skip
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip().splitlines() == ["human: the output is closed: leaving the match"]
