"""Kill and resume, round 47: a tournament killed at bad moments, its database made hard to
write, and the same command run again.

Fixed in this round (each test says what the defect was):

- a database this user may read but not write (mode 0444, another user's, ``chattr +i``; or
  only its ``-wal``, left by a killed run) was opened read-only by SQLite without a word: a
  resumed run started every bot and played the first matches, then stopped at the first
  store, "read-only", throwing them away (minutes of a slow bot's), and named the database
  where its ``-wal`` was the file to make writable. It is refused before anything starts now,
  naming the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage, StorageError, StorageLockedError
from arena.tournament import RunOptions, TournamentError, TournamentOutcome, run_tournament
from arena.tournament.config import TournamentConfig, parse_config
from tests.arena.fake_referee import FakeReferee
from tests.faults.test_faults import tiny_fs  # noqa: F401 (the fixture: a 1 MiB tmpfs)
from tests.faults.test_faults_round32 import _finish, _left_behind, _no_process_left, _rows
from tests.faults.test_faults_round34 import _count
from tests.support.read_only import read_only
from tests.support.spawn import environment_set

ROOT = Path(__file__).resolve().parents[2]


def _fake_config(tmp: Path, db: Path) -> TournamentConfig:
    data = {"name": "k47", "ruleset": "classic", "max_deals": 2, "seed": 47,
            "concurrency": 2, "db": str(db), "out": str(tmp / "out"),
            "bots": ["random", "heuristic", "counting", "pimc"]}  # fmt: skip
    return parse_config(data, source="round47", base_dir=tmp)


def _fake_run(
    cfg: TournamentConfig, referee: FakeReferee, max_new: int | None = None
) -> TournamentOutcome:
    return asyncio.run(run_tournament(cfg, RunOptions(progress=False, max_new_matches=max_new),
                                      referee_factory=lambda c: referee,
                                      serve=False, launch_bots=False))  # fmt: skip


@pytest.mark.parametrize("which", ["", "-wal"])
def test_a_database_this_user_cannot_write_is_refused_before_any_match(
    tmp_path: Path, which: str
) -> None:
    db = tmp_path / "t.sqlite"
    cfg = _fake_config(tmp_path, db)
    first = _fake_run(cfg, FakeReferee(), max_new=5)
    assert first.completed == 5
    before = _rows(db)
    # A reader holding the database open keeps its -wal and -shm beside it, as a run that
    # was killed leaves them.
    with contextlib.closing(sqlite3.connect(db)) as reader:
        reader.execute("SELECT COUNT(*) FROM matches").fetchone()
        target = Path(f"{db}{which}")
        assert target.exists()
        referee = FakeReferee()
        with read_only(target), pytest.raises((StorageError, TournamentError)) as info:
            _fake_run(cfg, referee)
    msg = str(info.value)
    assert f"{target} is read-only" in msg, msg
    assert not referee.calls, f"matches played, then thrown away: {dict(referee.calls)}"
    assert _rows(db) == before
    again = _fake_run(cfg, FakeReferee())
    assert again.completed == again.total == 24
    after = _rows(db)
    assert {i: after[i] for i in before} == before


def test_a_write_lock_held_when_the_run_starts_is_said_before_any_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program holding a write transaction (a `sqlite3` shell left in a BEGIN)
    as the same command resumes: the run started its bots and played the first matches,
    waited out SQLite's 5 s at the first store, then stopped "locked" and threw them away
    (27 s with 4 random bots). The lock is waited for as any write's, then refused before
    anything is played; once it is gone the run resumes."""
    defaults = Storage.__init__.__kwdefaults__
    assert defaults is not None and defaults["timeout"] == 5.0
    monkeypatch.setitem(defaults, "timeout", 0.5)  # (the wait is SQLite's: not under test)
    db = tmp_path / "t.sqlite"
    cfg = _fake_config(tmp_path, db)
    assert _fake_run(cfg, FakeReferee(), max_new=5).completed == 5
    before = _rows(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        referee = FakeReferee()
        with pytest.raises(StorageLockedError) as info:
            _fake_run(cfg, referee)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert f"{db} is locked by another process while opening it to store results" in str(info.value)
    assert not referee.calls, f"matches played, then thrown away: {dict(referee.calls)}"
    assert _rows(db) == before
    again = _fake_run(cfg, FakeReferee())
    assert again.completed == again.total == 24


def test_a_log_that_can_no_longer_be_written_mid_run_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database's `-wal` refused its writes while the run played (`chattr +i`; a file
    system the kernel remounts read-only on disk errors is the same to SQLite): "database
    error while storing match ...: disk I/O error", naming neither the file nor that what
    was stored is kept. Now the file is named, and the same command, once it is writable,
    plays the rest."""
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("making a file open for writing unwritable needs root's `chattr +i`")
    db = tmp_path / "t.sqlite"
    cfg = _fake_config(tmp_path, db)
    wal = Path(f"{db}-wal")
    real_save = Storage.save_match
    calls = 0

    def save_match(self: Storage, *args: Any, **kw: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 4:  # (3 stored: the log refuses from now on)
            subprocess.run(["chattr", "+i", str(wal)], check=True)
        real_save(self, *args, **kw)

    monkeypatch.setattr(Storage, "save_match", save_match)
    try:
        with pytest.raises((StorageError, TournamentError)) as info:
            _fake_run(cfg, FakeReferee())
    finally:
        subprocess.run(["chattr", "-i", str(wal)], check=False)
    msg = str(info.value)
    assert f"{wal} can no longer be written (storing match " in msg, msg
    assert "Everything stored before is kept; make it writable and run the same command" in msg
    monkeypatch.undo()
    before = _rows(db)
    assert len(before) == 3
    again = _fake_run(cfg, FakeReferee())
    assert again.completed == again.total == 24
    after = _rows(db)
    assert {i: after[i] for i in before} == before


@pytest.mark.usefixtures("tiny_fs")
def test_a_disk_still_full_when_the_run_is_resumed_is_said_of_the_lock_file(
    tmp_path: Path,
) -> None:
    """A run stopped by a full disk said so; the same command, run before any space was
    freed, said only "Error: cannot write: No space left on device" (exit 1), naming no
    file: writing the lock file's pid failed, and failed again as it was closed. Now the
    lock file and the full disk are named, nothing is left behind, and once there is room
    the lock is taken."""
    from arena.storage import StorageFullError
    from arena.tournament.runner import DatabaseLock

    db = tmp_path / "tiny" / "t.sqlite"  # (tiny_fs's mount)
    filler = db.with_name("filler")
    with filler.open("wb", buffering=0) as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 4096)
    lock = DatabaseLock(db)
    with pytest.raises(StorageFullError) as info:
        lock.acquire("t")
    assert str(info.value).startswith(f"{db}.lock: the disk is full while writing the lock file")
    assert "Nothing stored is lost; free some space and run again" in str(info.value)
    assert not Path(f"{db}.lock").exists()
    filler.unlink()
    lock.acquire("t")
    assert Path(f"{db}.lock").read_text() == f"{os.getpid()} t"
    lock.release()


# ---------------------------------------- readers that cannot write the database's folder


def _stored_in_the_log_only(tmp: Path) -> tuple[Path, sqlite3.Connection]:
    """A database whose 5 stored matches (and its tournament) are in its write-ahead log
    only, as a running tournament's, or a killed one's, are: another connection held open
    keeps the writer's close from copying the log into the file."""
    db = tmp / "live" / "t.sqlite"
    db.parent.mkdir()
    cfg = _fake_config(tmp, db)
    Storage(db).close()  # (the schema, in the file)
    holder = sqlite3.connect(db)
    holder.execute("SELECT COUNT(*) FROM matches").fetchone()
    assert _fake_run(cfg, FakeReferee(), max_new=5).completed == 5
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro&immutable=1", uri=True)) as c:
        assert c.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 0  # (the file alone)
    return db, holder


def test_a_reader_that_cannot_write_the_folder_reads_the_log_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena leaderboard` and `arena web` open a database in a folder they cannot write
    (a read-only mount of a running tournament's `runs/`, a container's `:ro` volume,
    another user) as immutable: they read the file alone, without its write-ahead log.
    `arena leaderboard --list` said no tournament was stored while 16 of 24 matches were,
    and after a `kill -9` none of those since the last checkpoint. Where the log can be
    read, it is now (here the folder is said unwritable by ``os.access``)."""
    db, holder = _stored_in_the_log_only(tmp_path)
    real_access = os.access

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if Path(path) == db.parent.resolve() and mode == os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    try:
        with Storage.open_readonly(db) as st:
            (t,) = st.tournaments()
            assert len(st.completed_indices(t.id)) == 5
    finally:
        holder.close()


@pytest.mark.slow
def test_leaderboard_list_from_a_read_only_mount_of_a_live_database(tmp_path: Path) -> None:
    """The same through a real read-only bind mount (`unshare -m`: root, else skipped)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root and unshare")
    db, holder = _stored_in_the_log_only(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    arena = f"{sys.executable} -c 'from arena.cli import main; main()'"
    script = (
        f"mount --bind {db.parent} {ro} && mount -o remount,ro,bind {ro} && cd {ROOT} && "
        f"{arena} leaderboard --db {ro / db.name} --list"
    )
    try:
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                           text=True, env=dict(os.environ, COLUMNS="150"), timeout=120)  # fmt: skip
    finally:
        holder.close()
    if "mount" in r.stderr and r.returncode != 0 and "leaderboard" not in r.stderr:
        pytest.skip(f"cannot bind-mount read-only here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5/24" in r.stdout, r.stdout


# ------------------------------------------------- kill -9 at chosen points, then resume

#: Runs `arena` (argv after ``-c``) with the process SIGKILLing itself at ``KILL_AT``:
#: ``tx:N`` inside match N's transaction (its rows written, not committed), ``commit:N``
#: just after match N's commit, ``ratings`` inside the final ratings' transaction, ``files``
#: after the first leaderboard file is renamed into place (the others still ``.tmp``).
_KILLING_ARENA = """
import contextlib, os, pathlib, signal, sys
from arena.storage import Storage

kind, _, n = os.environ["KILL_AT"].partition(":")
armed = []

def die():
    os.kill(os.getpid(), signal.SIGKILL)

real_tx = Storage._tx

@contextlib.contextmanager
def _tx(self):
    with real_tx(self) as c:
        yield c
        if armed:
            die()  # (the statements ran; COMMIT never comes)

real_save = Storage.save_match

def save_match(self, *a, **kw):
    if kind == "tx" and kw["index"] == int(n):
        armed.append(1)
    real_save(self, *a, **kw)
    if kind == "commit" and kw["index"] == int(n):
        die()

real_group = Storage.save_matches

def save_matches(self, tid, matches):  # (a group commit: N's transaction is the group's)
    if kind == "tx" and int(n) in [m.index for m in matches]:
        armed.append(1)
    errors = real_group(self, tid, matches)
    if kind == "commit" and int(n) in [m.index for m in matches]:
        die()
    return errors

real_ratings = Storage.save_ratings

def save_ratings(self, *a, **kw):
    if kind == "ratings":
        armed.append(1)
    return real_ratings(self, *a, **kw)

real_replace = pathlib.Path.replace

def replace(self, target):
    done = real_replace(self, target)
    if kind == "files" and self.name.startswith("leaderboard."):
        die()
    return done

Storage._tx, Storage.save_match, Storage.save_ratings = _tx, save_match, save_ratings
Storage.save_matches = save_matches
pathlib.Path.replace = replace
from arena.cli import main
sys.argv = ["arena", *sys.argv[1:]]
main()
"""


def _toml(tmp: Path) -> Path:
    (tmp / "out").mkdir(parents=True, exist_ok=True)
    cfg = tmp / "cfg.toml"
    cfg.write_text(f"""
name = "k47"
ruleset = "classic"
seed = 47
max_deals = 2
concurrency = 3
db = {json.dumps(str(tmp / "db.sqlite"))}
out = {json.dumps(str(tmp / "out"))}
[bots]
r1 = "random"
r2 = "random"
r3 = "random"
r4 = "random"
""")  # fmt: skip
    return cfg


def _arena(cfg: Path, *args: str, kill_at: str | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", NO_COLOR="1")
    if kill_at is not None:
        env["KILL_AT"] = kill_at
        argv = [sys.executable, "-c", _KILLING_ARENA]
    else:
        argv = [sys.executable, "-m", "arena.cli"]
    return subprocess.Popen([*argv, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(cfg.parent), env=env, start_new_session=True)  # fmt: skip


def _outcome(tmp: Path) -> dict[str, Any]:
    """What must equal an uninterrupted run's: each match's seed, seats and result, the
    ratings, and the leaderboard file but for its times (and the decision times)."""
    db = tmp / "db.sqlite"
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as c:
        matches = {r[0]: (r[1], r[2], json.loads(r[3])["result"]) for r in c.execute(
            "SELECT idx, seed, seats_json, record_json FROM matches")}  # fmt: skip
        ratings = c.execute("SELECT idx, bot, mu, sigma FROM ratings ORDER BY idx, bot").fetchall()
        finished = c.execute("SELECT finished_at IS NOT NULL FROM tournaments").fetchall()
    board = json.loads((tmp / "out" / "leaderboard.json").read_text())
    for key in ("generated_at", "tournament"):
        board.pop(key)
    for row in board["rows"]:
        row.pop("median_ms")
    return {"matches": matches, "ratings": ratings, "finished": finished, "board": board}


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", ["tx:7", "commit:7", "ratings", "files"])
def test_sigkill_at_a_chosen_point_then_the_same_command_equals_an_uninterrupted_run(
    tmp_path: Path, kill_at: str
) -> None:
    """`kill -9` of `arena tournament` (runner, referee and the bots' parent) inside a
    match's transaction, just after its commit, inside the final ratings' transaction, and
    halfway through renaming the leaderboard files. Then: no bot of the killed run is left,
    `arena leaderboard --list` says what is stored and that the run stopped, the same
    command exits 0 with every match stored once (those stored before kept byte for byte,
    the match in the transaction not among them) and an outcome equal to an uninterrupted
    run's, and no temporary file is left in `out`. Checked, no defect."""
    ref = _toml(tmp_path / "ref")
    code, err = _finish(_arena(ref, "tournament", "--config", str(ref), "--no-progress"))
    assert code == 0, err[-3000:]
    want = _outcome(ref.parent)

    cfg = _toml(tmp_path / "run")
    db = cfg.parent / "db.sqlite"
    killed = _arena(cfg, "tournament", "--config", str(cfg), "--no-progress", kill_at=kill_at)
    code, err = _finish(killed)
    assert code == -signal.SIGKILL, err[-3000:]
    _no_process_left(killed.pid, "no-marker-47")
    before = _rows(db)
    if kill_at.startswith(("tx:", "commit:")):
        assert (7 in before) == kill_at.startswith("commit:"), sorted(before)
        assert len(before) < 24
    else:
        assert sorted(before) == list(range(24))
    tmp_files = [p.name for p in (cfg.parent / "out").glob("leaderboard.*.tmp")]
    assert bool(tmp_files) == (kill_at == "files"), tmp_files  # (killed halfway through)
    listing = _arena(cfg, "leaderboard", "--db", str(db), "--list")
    out, lerr = listing.communicate(timeout=120)
    assert listing.returncode == 0, lerr.decode()
    line = next(ln for ln in out.decode().splitlines() if "k47-" in ln)
    assert f"{len(before)}/24" in line, out.decode()
    assert ("stopped" in line) == (kill_at != "files"), out.decode()

    code, err = _finish(_arena(cfg, "tournament", "--config", str(cfg), "--no-progress"))
    assert code == 0, err[-3000:]
    assert "24/24 stored" in err, err[-3000:]
    after = _rows(db)
    assert sorted(after) == list(range(24))
    assert {i: after[i] for i in before} == before  # kept byte for byte, none played twice
    assert _outcome(cfg.parent) == want
    assert sorted(p.name for p in (cfg.parent / "out").iterdir() if p.is_file()) == [
        f"leaderboard.{ext}" for ext in ("csv", "html", "json", "md")
    ]


def test_arena_tournament_list_names_the_commands_that_list() -> None:
    """An organiser after a kill, asking which tournaments are stored: `arena tournament
    --list` said "No such option '--list'. Did you mean '--set'?". The commands that have
    the option are named now in place of the guess; an option of none keeps click's."""
    from click.testing import CliRunner

    from arena.cli import main as arena_main

    res = CliRunner().invoke(arena_main, ["tournament", "--list"], prog_name="arena")
    assert res.exit_code == 2
    assert (
        "Error: No such option '--list'. It is an option of `arena leaderboard --list`, "
        "`arena replay --list`." in res.output
    ), res.output
    assert "--set" not in res.output
    res = CliRunner().invoke(arena_main, ["tournament", "--lst"], prog_name="arena")
    assert res.exit_code == 2 and "Did you mean" in res.output, res.output


# ------------------------------------------------------- what a killed run's bots left


def _sleeper(**env: str) -> subprocess.Popen[bytes]:
    sleeper = subprocess.Popen(["sleep", "600"], env=dict(os.environ, **env),
                               start_new_session=True)  # fmt: skip
    environment_set(sleeper.pid)
    return sleeper


def test_the_next_run_stops_bots_a_killed_run_left_and_only_those() -> None:
    """A process started as a killed run's bot (its run's pid and a token in its
    environment, leading a session of its own) is killed by the next run on the database;
    not while a process of that pid lives (the pid reused, or the run still there), nor
    one without a token (a shell that kept a stale ``ARENA_PARENT_PID``)."""
    from arena.tournament.runner import _stop_bots_left_by

    run = subprocess.Popen(["sleep", "600"])  # stands for the run
    bot = _sleeper(ARENA_PARENT_PID=str(run.pid), ARENA_TOKEN="t")
    shell = _sleeper(ARENA_PARENT_PID=str(run.pid))
    try:
        _stop_bots_left_by(run.pid)
        assert bot.poll() is None and shell.poll() is None  # (the run lives)
        run.kill()
        run.wait(30)  # (reaped: no process of that pid now)
        _stop_bots_left_by(run.pid)
        assert bot.wait(30) == -signal.SIGKILL
        assert shell.poll() is None
    finally:
        for p in (run, bot, shell):
            p.kill()
            p.wait(30)


@pytest.mark.slow
def test_a_bot_stopped_when_its_run_is_killed_is_stopped_by_the_resume(tmp_path: Path) -> None:
    """A bot SIGSTOPped (a hung bot, a debugger) when `arena tournament` is killed: its
    parent-death SIGTERM waits for a SIGCONT, and it stayed stopped for ever, beside the
    resumed run and after it. The same command now kills it, saying so, and finishes."""
    cfg = _toml(tmp_path)
    db = tmp_path / "db.sqlite"
    proc = _arena(cfg, "tournament", "--config", str(cfg), "--no-progress")
    deadline = time.monotonic() + 120  # (a guard: a hung run ends the test)
    while _count(db) < 3:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    bots = [int(line.split(":")[0]) for line in _left_behind(proc.pid, "no-marker-47")]
    stopped = next(pid for pid in bots if Path(f"/proc/{pid}/environ").exists()
                   and b"ARENA_TOKEN=" in Path(f"/proc/{pid}/environ").read_bytes()
                   and os.getsid(pid) == pid)  # fmt: skip
    os.kill(stopped, signal.SIGSTOP)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        assert _finish(proc)[0] == -signal.SIGKILL
        time.sleep(1.0)  # (time enough for a signal to act, were it not stopped)
        assert f"{stopped}:" in " ".join(_left_behind(proc.pid, "no-marker-47"))
        code, err = _finish(_arena(cfg, "tournament", "--config", str(cfg), "--no-progress"))
        assert code == 0, err[-3000:]
        assert f"stopping bot process {stopped} left running by the killed run (pid " in err
        assert "24/24 stored" in err, err[-3000:]
        _no_process_left(proc.pid, "no-marker-47")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGKILL)
