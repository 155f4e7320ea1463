"""Faults round 35: `arena tournament` (a real process: referee, gRPC, bot processes) short
of resources — a file size limit on its database, too few open files, its `out` removed or
replaced by a file mid-run, its database replaced mid-run — and two runs started at the same
instant on a new database.

Each case checks what docs/tournament.md promises: every finished match kept, the exit
code, a message naming the file or the limit, the same command resuming, and no process of
the run left behind (every process whose environment carries the run's
``ARENA_PARENT_PID``).

Fixed in this round (each test says what the defect was):

- a file size limit (`ulimit -f`, RLIMIT_FSIZE) met by the database's write-ahead log was
  "database error while storing match ...: disk I/O error": the limit is named now;
- with too few open files (`ulimit -n` 12 to 40 and 8 bots) the run failed where it
  happened to run out: "cannot launch bot 'r5' ...: Too many open files", "cannot open
  db.sqlite ... check the path and permissions", gRPC's "Failed to bind to address", or a
  segmentation fault in gRPC (exit -11); a soft limit under what the run needs is raised
  now, and a hard one is an error naming the limit before anything starts;
- `out` replaced by a file while the run played: "cannot write the leaderboard files to
  out: File exists"; the file in the way is named;
- a database replaced mid-run left its lost log (`-wal`, `-shm`) at the path, which SQLite
  applied to the file put there (and to the recovered copy moved in place): a malformed
  mix, kept by the next write; the lost log is removed with its file now.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.test_faults_round32 import _finish, _no_process_left
from tests.faults.test_faults_round34 import _config, _ro, _rows
from tests.support.spawn import python_after

ROOT = Path(__file__).resolve().parents[2]


def _start_limited(
    cfg: Path, *args: str, limits: dict[int, tuple[int, int]] | None = None
) -> subprocess.Popen[bytes]:
    """`arena tournament` on ``cfg`` (as round 32's ``_start``) with resource ``limits``
    (RLIMIT_* -> (soft, hard)) set in the child before it runs."""

    # Set in the child before its exec by python_after, not a preexec_fn (see
    # tests/support/spawn.py: gRPC's fork handler in this test process).
    setup = "; ".join(
        ["import resource", *(f"resource.setrlimit({w}, {p})" for w, p in (limits or {}).items())]
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", NO_COLOR="1")
    return subprocess.Popen(
        python_after(setup, "-m", "arena.cli", "tournament", "--config", str(cfg),
                     "--no-progress", *args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(cfg.parent), env=env,
        start_new_session=True,
    )  # fmt: skip


def _randoms(n: int) -> dict[str, str]:
    return {f"r{i}": '"random"' for i in range(1, n + 1)}


def _integrity(db: Path) -> str:
    with contextlib.closing(_ro(db)) as c:
        return str(c.execute("PRAGMA integrity_check").fetchone()[0])


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Segmentation" not in err, err[-3000:]


# ------------------------------------------------------------------ file size limit


def test_a_file_size_limit_met_by_the_database_is_named_and_the_run_resumes(
    tmp_path: Path,
) -> None:
    """Defect: a file size limit (`ulimit -f`: RLIMIT_FSIZE, a batch system's or a
    container's) met by the database's write-ahead log stopped the run with "database
    error while storing match ...: disk I/O error" (SQLite's word for EFBIG): nothing said
    which limit, nor that the stored matches are kept and the run resumes. Now: exit 1,
    the file and the limit named, every match stored before kept (integrity ok), and the
    same command without the limit plays the rest, each match once."""
    cfg = _config(tmp_path, _randoms(4))  # 24 matches
    db = tmp_path / "db.sqlite"
    limit = 300_000  # (the log passes it within the first matches; the database is smaller)
    code, err = _finish(_start_limited(cfg, limits={resource.RLIMIT_FSIZE: (limit, limit)}))
    assert code == 1, err[-3000:]
    _no_traceback(err)
    assert re.search(
        rf"error: stopping: results can no longer be stored: {re.escape(str(db))}"
        rf"(: {re.escape(db.name)}-wal)? reached this process's file size limit \({limit} "
        r"bytes: `ulimit -f`\) while storing match \S+\. Everything stored before is kept; "
        r"raise the limit .* run the same command again to resume",
        err,
    ), err[-3000:]
    assert "disk I/O error" not in err
    assert _integrity(db) == "ok"
    before = _rows(db)
    assert len(before) < 24
    code, err = _finish(_start_limited(cfg))
    assert code == 0, err[-3000:]
    after = _rows(db)
    assert sorted(after) == list(range(24))
    assert {i: after[i] for i in before} == before  # kept byte for byte, none played twice
    assert f"24/24 stored in {db}" in err, err[-3000:]
    assert re.search(rf"; {len(before)} (was|were) already stored \(resumed\)", err), err[-3000:]


# ------------------------------------------------------------------ open files


@pytest.mark.parametrize("limit", [12, 16, 30])
def test_a_hard_open_files_limit_too_low_is_said_before_anything_starts(
    tmp_path: Path, limit: int
) -> None:
    """Defect: with 8 bots and `ulimit -n` of 12 to 40 (a container's, a batch system's)
    the run failed wherever it ran out: 12, a segmentation fault in gRPC (exit -11, no
    word); 16, gRPC's "Failed to bind to address" and its own ERROR lines; 24, "cannot
    launch bot 'r5' ...: Too many open files" (four bots started, then stopped). Now: exit
    1 before anything is started or stored, the limit and `ulimit -n` named."""
    cfg = _config(tmp_path, _randoms(8))
    proc = _start_limited(
        cfg, "--concurrency", "16", limits={resource.RLIMIT_NOFILE: (limit, limit)}
    )
    code, err = _finish(proc)
    assert code == 1, err[-3000:]
    _no_traceback(err)
    assert re.search(
        rf"error: this process may open {limit} files \(`ulimit -n`; {limit} at most, the "
        r"hard limit\), and a tournament of 8 bots needs about \d+: raise the limit "
        r"\(`ulimit -n 1024`",
        err,
    ), err[-3000:]
    assert "Failed to bind" not in err and "Too many open files" not in err
    assert not (tmp_path / "db.sqlite").exists()  # nothing stored, nothing to clean
    assert not (tmp_path / "out").exists()
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


def test_a_soft_open_files_limit_too_low_is_raised_and_every_match_is_played(
    tmp_path: Path,
) -> None:
    """Defect: a soft limit of 16 open files (the hard one 4,096) failed as above, where the
    process could raise it itself. Now the run raises it to what it needs (1,024 here, as
    bots inherit it) and plays every match, 5 bots at concurrency 16."""
    cfg = _config(tmp_path, _randoms(5))  # 60 matches
    proc = _start_limited(
        cfg, "--concurrency", "16", "-v", limits={resource.RLIMIT_NOFILE: (16, 4096)}
    )
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    _no_traceback(err)
    assert re.search(r"open files limit raised from 16 to 1024", err), err[-3000:]
    assert sorted(_rows(tmp_path / "db.sqlite")) == list(range(60))
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


# ------------------------------------------------------------------ out mid-run


#: A bot file that plays the first legal action and, at its first decision of its second
#: match, writes HOLD_DIR/waiting and waits (up to a minute) for HOLD_DIR/go: the run cannot
#: end meanwhile, its match waiting for the bot's answer (the config's deadlines are longer).
HOLD_BOT = """
import os, time
from pathlib import Path
from sdk import Bot

D = Path(os.environ["HOLD_DIR"])


class HoldBot(Bot):
    matches = 0
    held = False

    def on_match_start(self, view):
        HoldBot.matches += 1

    def act(self, view):
        if HoldBot.matches == 2 and not HoldBot.held:
            HoldBot.held = True
            (D / "waiting").write_text("")
            until = time.monotonic() + 60
            while not (D / "go").exists() and time.monotonic() < until:
                time.sleep(0.02)
        return view.legal_actions[0]
"""


def _while_held(tmp: Path, proc: subprocess.Popen[bytes], change: Callable[[], None]) -> None:
    """``change()`` the run's files while its hold bot waits, mid-run."""
    d = tmp / "hold"
    deadline = time.monotonic() + 120  # (a guard: a hung run ends the test)
    while not (d / "waiting").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    try:
        change()
    finally:
        (d / "go").write_text("")


@pytest.mark.parametrize("how", ["removed", "a file"])
def test_out_removed_or_replaced_by_a_file_mid_run(tmp_path: Path, how: str) -> None:
    """`out` removed mid-run (`rm -rf out`): made again at the end, the leaderboard files
    written, exit 0 (checked, no defect: the bots' logs then were files without a name,
    written on until the run stopped them). Replaced by a file — defect: the run said
    "cannot write the leaderboard files to .../out (out, --out): File exists"; now it names
    the file in the way; exit 1, every match stored, and the command that writes the files
    said."""
    (tmp_path / "holdbot.py").write_text(HOLD_BOT)
    (tmp_path / "hold").mkdir()
    where = json.dumps(str(tmp_path / "hold"))
    held = f'{{ bot = "holdbot.py:HoldBot", env = {{ HOLD_DIR = {where} }} }}'
    cfg = _config(tmp_path, {"held": held, **_randoms(2)}, deadlines=(30_000, 60_000))
    out = tmp_path / "out"
    proc = _start_limited(cfg)

    def change() -> None:
        for f in sorted(out.rglob("*"), reverse=True):
            f.rmdir() if f.is_dir() else f.unlink()
        out.rmdir()
        if how == "a file":
            out.write_text("not a directory\n")

    _while_held(tmp_path, proc, change)
    code, err = _finish(proc)
    _no_traceback(err)
    assert sorted(_rows(tmp_path / "db.sqlite")) == list(range(6)), err[-3000:]
    if how == "removed":
        assert code == 0, err[-3000:]
        board = json.loads((out / "leaderboard.json").read_text())
        assert all(r["matches"] == 6 for r in board["rows"])
    else:
        assert code == 1, err[-3000:]
        assert re.search(
            rf"cannot write the leaderboard files to {re.escape(str(out))} \(out, --out\): "
            rf"{re.escape(str(out))} is a file, not a directory\. Every result is stored; "
            r"`arena leaderboard --db .* --format all --out DIR` writes them",
            err,
        ), err[-3000:]
        assert "File exists" not in err
        assert out.read_text() == "not a directory\n"
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


# ------------------------------------------------------------------ database replaced


def test_a_database_replaced_mid_run_is_left_as_put_there_and_the_recovered_one_resumes(
    tmp_path: Path,
) -> None:
    """Defect: a database replaced while a run wrote to it (another file renamed over it: a
    backup put back, a script's fresh copy) was noticed and what the run's file held was
    written beside it, but the run left its lost file's write-ahead log (`-wal`, `-shm`)
    at the path, which SQLite never checkpoints or removes for a moved file. The next
    open applied that log to whatever was there: the file put in place read as a mix of
    both ("database disk image is malformed", or the lost file's content), and so did the
    recovered copy once moved in place as the message says; the next run wrote the mix
    for good. Now the lost log goes with its file: the file put there reads as itself,
    the recovered one resumes to every match, once each."""
    (tmp_path / "holdbot.py").write_text(HOLD_BOT)
    hold = tmp_path / "hold"
    hold.mkdir()
    held = f'{{ bot = "holdbot.py:HoldBot", env = {{ HOLD_DIR = {json.dumps(str(hold))} }} }}'
    cfg = _config(tmp_path, {"held": held, **_randoms(2)}, deadlines=(30_000, 60_000))
    db = tmp_path / "db.sqlite"
    # A tournament already in the database and in its file (checkpointed as its run ended):
    # the log of the next run holds only the pages it changes.
    (hold / "go").write_text("")
    code, err = _finish(_start_limited(cfg, "--seed", "8"))
    assert code == 0, err[-3000:]
    (hold / "go").unlink()
    (hold / "waiting").unlink()
    # The file put in its place mid-run: another arena database.
    other = _config(tmp_path, _randoms(3), name="other", db="other.sqlite", out="out-other",
                    file="other.toml")  # fmt: skip
    code, err = _finish(_start_limited(other))
    assert code == 0, err[-3000:]
    put = tmp_path / "put.sqlite"
    put.write_bytes((tmp_path / "other.sqlite").read_bytes())
    put_bytes = put.read_bytes()

    proc = _start_limited(cfg)
    _while_held(tmp_path, proc, lambda: os.replace(put, db))
    code, err = _finish(proc)
    assert code == 1, err[-3000:]
    _no_traceback(err)
    (recovered,) = tmp_path.glob("db.sqlite.recovered-*")
    assert re.search(
        rf"error: stopping: results can no longer be stored: {re.escape(str(db))} was deleted "
        rf"or replaced while this run was writing to it: everything it held \(\d+ matches\) is "
        rf"written to {re.escape(str(recovered))} \(another file is at {re.escape(str(db))} "
        r"now: put it in its place\); run the same command again to resume",
        err,
    ), err[-3000:]
    assert not (tmp_path / "db.sqlite-wal").exists()
    assert not (tmp_path / "db.sqlite-shm").exists()
    assert db.read_bytes() == put_bytes
    assert _integrity(db) == "ok"
    with contextlib.closing(_ro(db)) as c:
        assert [r[0] for r in c.execute("SELECT name FROM tournaments")] == ["other"]
        assert c.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 6
    assert db.read_bytes() == put_bytes  # (read, not written)

    # As the message says: the recovered file put in its place, the same command resumes.
    os.replace(recovered, db)
    assert _integrity(db) == "ok"
    code, err = _finish(_start_limited(cfg))
    assert code == 0, err[-3000:]
    found = re.search(r"6/6 stored in .* \(tournament (\S+)\)", err)
    assert found, err[-3000:]
    assert sorted(_rows(db, found[1])) == list(range(6))
    with contextlib.closing(_ro(db)) as c:
        counts = dict(c.execute("SELECT tournament_id, COUNT(*) FROM matches GROUP BY 1"))
    assert sorted(counts.values()) == [6, 6] and len(counts) == 2  # (the seed-8 one kept)
    assert _integrity(db) == "ok"
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


# ------------------------------------------------------------------ two at once


def test_two_runs_started_at_the_same_instant_on_a_new_database(tmp_path: Path) -> None:
    """Two `arena tournament` of one config started together, the database not there yet
    (both create it, its schema, and race for its lock): one plays, the other is refused
    naming the first's pid (exit 1), or — on a machine that held it back until the first
    was done — finds every match stored (exit 0). Never a traceback, a "locked" or
    "malformed" database, a match stored twice. Checked, no defect."""
    cfg = _config(tmp_path, _randoms(3))
    db = tmp_path / "db.sqlite"
    procs = [_start_limited(cfg), _start_limited(cfg)]
    results = [_finish(p) for p in procs]
    codes = sorted(code for code, _ in results)
    for code, err in results:
        _no_traceback(err)
        assert "locked" not in err and "malformed" not in err, err[-3000:]
        if code == 1:
            other = [p.pid for p in procs if f"(pid {p.pid})" in err]
            assert len(other) == 1 and re.search(
                rf"error: another `arena tournament` .* is running on {re.escape(str(db))} "
                r"\(pid \d+\): wait for it",
                err,
            ), err[-3000:]
        else:
            assert code == 0 and f"6/6 stored in {db}" in err, err[-3000:]
    assert codes in ([0, 1], [0, 0]), results
    assert sorted(_rows(db)) == list(range(6))
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as c:
        assert c.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 1
    assert _integrity(db) == "ok"
    for p in procs:
        _no_process_left(p.pid, f"faultchild-{tmp_path.name}")


def test_a_size_limit_met_by_the_database_itself_names_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file size limit met by the database file itself (not its ``-wal``) was said
    with its path twice ("error: .../f.sqlite: .../f.sqlite reached ..."; docs round 35)."""
    from arena import storage

    db = tmp_path / "f.sqlite"
    err = sqlite3.OperationalError("disk I/O error")
    err.sqlite_errorcode = 10  # type: ignore[attr-defined]
    for grown, said in ((db, f"{db} reached"), (db.with_name("f.sqlite-wal"),
                                                 f"{db}: f.sqlite-wal reached")):  # fmt: skip
        monkeypatch.setattr(storage, "_file_size_limit_reached", lambda _p, g=grown: (4096, g))
        message = str(storage._translate(err, db, "storing match m1"))
        assert message.startswith(said) and message.count(str(db)) == 1, message
