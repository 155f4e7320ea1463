"""Faults round 32: `arena tournament` as an organiser runs it (a real process: referee,
gRPC, bot processes), under bots that crash, hang, flood their logs or leave children
behind, commands that cannot run, signals at its very end, and two writers of one `out`.

Each case checks what docs/tournament.md promises: every match stored once, the exit code,
a message naming the bot or the file, and no process of the run left behind (every process
whose environment carries the run's ``ARENA_PARENT_PID``, or the test's marker).

Fixed in this round (each test says what the defect was):

- a stop signal in the last moments of a complete run (its summary printed, the leaderboard
  written, gRPC's teardown under way: some 0.15 s) killed it (-15), or ended in click's
  "Aborted!" (exit 1) or a KeyboardInterrupt traceback, in place of exit 0;
- two writers of the leaderboard files into one directory (two runs sharing an `out`, or
  `arena leaderboard --format all` beside a run) renamed each other's half-written
  temporary files, and one failed ("No such file or directory");
- a command bot whose `#!` interpreter is missing was "No such file or directory" of a file
  that is there; a file without the execute bit "Permission denied", a directory the same,
  a relative command not found said nowhere where it was looked for.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arena.leaderboard import write_outputs
from arena.render import plural
from arena.storage import Storage
from engine import replay
from tests.support.harness import stored_matches
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]
#: (the package's ``render`` is the module's function of that name)
lb_render = importlib.import_module("arena.leaderboard.render")

#: A bot file: plays the first legal action; FAULT_MODE makes it misbehave, once (a file
#: in FAULT_DIR remembers it across its restarts) unless FAULT_ONCE=0.
FAULT_BOT = """
import os, subprocess, sys, threading
from pathlib import Path
from sdk import Bot

D = Path(os.environ["FAULT_DIR"])
MODE = os.environ.get("FAULT_MODE", "")
ONCE = os.environ.get("FAULT_ONCE", "1") == "1"
_L = threading.Lock()


def _bump(name):
    with _L:
        p = D / name
        n = int(p.read_text() or 0) + 1 if p.exists() else 1
        p.write_text(str(n))
        return n


def _fire(code):
    if ONCE and (D / "fired").exists():
        return
    (D / "fired").write_text(MODE)
    os._exit(code)


def _child(**kw):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                      "faultchild-" + os.environ["FAULT_TAG"]], **kw)


class FaultBot(Bot):
    def on_match_start(self, view):
        n = _bump("starts")
        (D / "pid.new").write_text(str(os.getpid()))  # (whole, then renamed: the test
        os.replace(D / "pid.new", D / "pid")  # reads it as soon as it is there)
        if MODE == "exit0_early":
            _fire(0)
        if MODE == "crash_last" and n == int(os.environ["FAULT_N"]):
            _fire(5)

    def act(self, view):
        n = _bump("acts")
        if MODE == "crash_first":
            _fire(3)
        if MODE == "crash_mid" and n == int(os.environ.get("FAULT_N", "5")):
            _fire(4)
        if MODE == "fork_and_crash" and n == 2:
            _child()
            _child(start_new_session=True)
            _fire(6)
        if MODE == "flood" and n <= 2:
            line = "x" * 1023 + "\\n"
            sys.stdout.write(line * 1024 * 40)
            sys.stderr.write(line * 1024 * 40)
        return view.legal_actions[0]

    def on_match_end(self, view, result):
        if MODE == "crash_between":
            _fire(7)
"""


def _config(
    tmp: Path,
    faults: dict[str, dict[str, str]],
    *,
    randoms: int = 1,
    deadlines: tuple[int, int] = (2000, 10000),
    grace_s: float = 30,
    db: str = "db.sqlite",
) -> Path:
    """A 3-player classic tournament (6 matches of 2 deals, concurrency 2): the fault bots
    (name -> FAULT_* variables) and random bots to make three. The deadlines and the grace
    leave a restarted bot time to come back on a loaded machine."""
    (tmp / "faultbot.py").write_text(FAULT_BOT)
    lines = []
    for name, env in faults.items():
        d = tmp / f"fdir-{name}"
        d.mkdir(exist_ok=True)
        env = {"FAULT_DIR": str(d), "FAULT_TAG": tmp.name, **env}
        inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
        lines.append(f'{name} = {{ bot = "faultbot.py:FaultBot", env = {{ {inline} }} }}')
    lines += [f'r{i} = "random"' for i in range(1, randoms + 1)]
    text = f"""
name = "r32"
ruleset = "classic"
seed = 7
max_deals = 2
concurrency = 2
db = "{tmp / db}"
out = "{tmp / "out"}"
bot_wait_s = 60
[deadlines]
decision_ms = {deadlines[0]}
time_bank_ms = {deadlines[1]}
[referee]
reconnect_grace_s = {grace_s:g}
[bots]
""" + "\n".join(lines)
    path = tmp / ("cfg.toml" if db == "db.sqlite" else f"cfg-{Path(db).stem}.toml")
    path.write_text(text)
    return path


def _start(cfg: Path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", "--config", str(cfg),
         "--no-progress", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(cfg.parent), env=env,
        start_new_session=True,
    )  # fmt: skip


def _finish(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=240)  # (a guard: a hung run ends the test)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc.returncode, err.decode(errors="replace")


def _left_behind(run_pid: int, marker: str) -> list[str]:
    """Live processes of that run: its bots carry ``ARENA_PARENT_PID=<run>`` in their
    environment, and whatever they start inherits it; the fault bots' children the marker."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(") ", 1)[1][:1]
        except OSError:
            continue
        if state != "Z" and (f"ARENA_PARENT_PID={run_pid}\0".encode() in env or marker in cmd):
            found.append(f"{d.name}: {cmd[:100]}")
    return found


def _no_process_left(run_pid: int, marker: str) -> None:
    # (a process being reaped may still be listed for an instant: looked at again)
    deadline = time.monotonic() + 30
    while _left_behind(run_pid, marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _left_behind(run_pid, marker) == []


def _rows(db: Path) -> dict[int, tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as c:
        return {r[0]: tuple(r[1:]) for r in c.execute(
            "SELECT idx, id, seed, finished_at, record_json FROM matches")}  # fmt: skip


def _forfeits(db: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as c:
        return list(c.execute("SELECT match_id, bot FROM match_players WHERE forfeit = 1"))


def _check_complete(tmp: Path, err: str) -> None:
    """Every match stored once, each record replays, the leaderboard files written."""
    rows = _rows(tmp / "db.sqlite")
    assert sorted(rows) == list(range(6)), err[-3000:]
    for _id, _seed, _fin, record in rows.values():
        replay(json.loads(record))
    assert "6 matches played" in err and "6/6 stored" in err
    board = json.loads((tmp / "out" / "leaderboard.json").read_text())
    assert all(r["matches"] == 6 for r in board["rows"])


# ----------------------------------------------------------------- bots that crash or leave


@pytest.mark.parametrize(
    "faults",
    [
        pytest.param({"first": {"FAULT_MODE": "crash_first"},
                      "mid": {"FAULT_MODE": "crash_mid", "FAULT_N": "5"},
                      "between": {"FAULT_MODE": "crash_between"}}, id="first-mid-between"),
        pytest.param({"early": {"FAULT_MODE": "exit0_early"},
                      "last": {"FAULT_MODE": "crash_last", "FAULT_N": "6"},
                      "forks": {"FAULT_MODE": "fork_and_crash"}}, id="exit0-last-forks"),
    ],
)  # fmt: skip
def test_bots_that_die_once_are_restarted_and_every_match_is_played(
    tmp_path: Path, faults: dict[str, dict[str, str]]
) -> None:
    """Three bot processes each die once: at their first decision, mid-match (5th decision),
    between two matches (as one ends), or exiting 0 at their first match, crashing at the
    start of their last match, or after starting a child in their session and one in a
    session of its own. Each is restarted once (said with its code, on the arena's output
    and in its log), is back within the grace: no seat forfeits, every match is stored and
    replays, exit 0, and no process is left (the children included). Checked, no defect."""
    cfg = _config(tmp_path, faults, randoms=0)
    proc = _start(cfg)
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    _check_complete(tmp_path, err)
    expected = {"crash_first": 3, "crash_mid": 4, "crash_between": 7, "exit0_early": 0,
                "crash_last": 5, "fork_and_crash": 6}  # fmt: skip
    for name, env in faults.items():
        exit_code = expected[env["FAULT_MODE"]]
        said = f"bot {name} exited with code {exit_code}; restarting it (1/3)"
        assert said in err, err[-3000:]
        log = (tmp_path / "out" / "logs" / f"{name}.log").read_text(errors="replace")
        assert f"exited with code {exit_code}; restarting it (1/3)" in log
        assert log.count(f"starting {name}") == 2  # (started, restarted once)
    assert _forfeits(tmp_path / "db.sqlite") == []
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


@pytest.mark.slow
def test_a_bot_that_always_crashes_is_given_up_and_its_seats_forfeit(tmp_path: Path) -> None:
    """A bot that dies at its first decision every time: restarted 3 times, then given up
    with its code and its log named; the referee plays its seats (strikes, forfeits), every
    match is stored, exit 0, nothing left. Checked, no defect. (Slow: its matches must last
    through its 4 starts, about 20 s in all.)"""
    cfg = _config(tmp_path, {"dies": {"FAULT_MODE": "crash_first", "FAULT_ONCE": "0"}},
                  randoms=2, deadlines=(1000, 5000), grace_s=5)  # fmt: skip
    proc = _start(cfg)
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    _check_complete(tmp_path, err)
    assert "bot dies exited with code 3 again, after 3 restarts: not restarted" in err
    forfeits = _forfeits(tmp_path / "db.sqlite")
    assert {bot for _, bot in forfeits} == {"dies"} and len(forfeits) == 6
    log = (tmp_path / "out" / "logs" / "dies.log").read_text(errors="replace")
    assert "after 3 restarts: not restarted; the referee plays its seats to the end" in log
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


@pytest.mark.slow
def test_a_bot_stopped_and_resumed_and_one_flooding_its_log(tmp_path: Path) -> None:
    """One bot is SIGSTOPped at its first match for past its time (it forfeits the matches
    under way: strikes), then resumed (it plays the rest); another writes 160 MB to stdout
    and stderr (its log is cut to its first and last MiB). Every match stored, exit 0,
    nothing left. Checked, no defect."""
    cfg = _config(tmp_path, {"paused": {"FAULT_MODE": ""}, "flood": {"FAULT_MODE": "flood"}},
                  deadlines=(300, 600), grace_s=5)  # fmt: skip
    proc = _start(cfg)
    pid_file = tmp_path / "fdir-paused" / "pid"
    deadline = time.monotonic() + 120
    while not pid_file.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    paused = [int(pid_file.read_text())]
    for p in paused:
        os.kill(p, signal.SIGSTOP)
    time.sleep(3)  # past its decision time and bank: its seats are struck meanwhile
    for p in paused:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGCONT)
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    _check_complete(tmp_path, err)
    forfeits = _forfeits(tmp_path / "db.sqlite")
    assert forfeits and {bot for _, bot in forfeits} == {"paused"}  # (struck while stopped)
    log = tmp_path / "out" / "logs" / "flood.log"
    assert log.stat().st_size < 3 << 20
    assert "bytes dropped here" in log.read_text(errors="replace")
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


# ----------------------------------------------------------------- commands that cannot run


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ('["/nonexistent/arena-bot-x", "{arena}"]',
         "(/nonexistent/arena-bot-x): No such file or directory"),
        ('"./mybot {arena}"', "(./mybot): No such file or directory (looked for in {real})"),
        ('["{tmp}/plain.sh"]', "({tmp}/plain.sh): Permission denied: the file is not executable"),
        ('["{tmp}/nointerp.sh"]',
         "({tmp}/nointerp.sh): its interpreter (the #! line: /nonexistent/interp) was not found"),
        ('["{tmp}"]', "({tmp}): it is a directory"),
    ],
    ids=["missing", "relative", "not-executable", "no-interpreter", "directory"],
)  # fmt: skip
def test_a_command_bot_that_cannot_run_is_named_with_why(
    tmp_path: Path, command: str, said: str
) -> None:
    """A `command` bot whose program is missing, not executable, a script whose `#!`
    interpreter is missing, or a directory: the run stops before any match (exit 1), naming
    the bot, the file and why; the bots already started are stopped, nothing is stored.
    Defect: the missing interpreter was "No such file or directory" of a file that is there,
    a file without its execute bit and a directory both "Permission denied", and a
    relative command not found said nothing of where it was looked for."""
    (tmp_path / "plain.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "plain.sh").chmod(0o644)
    (tmp_path / "nointerp.sh").write_text("#!/nonexistent/interp\nexit 0\n")
    (tmp_path / "nointerp.sh").chmod(0o755)
    cfg = _config(tmp_path, {}, randoms=2)
    command = command.replace("{tmp}", str(tmp_path))
    cfg.write_text(cfg.read_text() + f"\nx = {{ command = {command} }}\n")
    proc = _start(cfg)
    code, err = _finish(proc)
    assert code == 1, err
    said = said.replace("{tmp}", str(tmp_path)).replace("{real}", str(tmp_path.resolve()))
    assert f"error: cannot launch bot 'x' {said}" in err, err
    assert _rows(tmp_path / "db.sqlite") == {}
    assert not (tmp_path / "db.sqlite.lock").exists()
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


# ----------------------------------------------------------------- the end of a run


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_as_a_complete_run_exits_keeps_exit_0(tmp_path: Path, sig: int) -> None:
    """Defect: once a complete run had printed its last line (every match stored, the
    leaderboard written), Python's own handlers were back for its last moments and the
    teardown of gRPC (some 0.15 s): a Ctrl-C there ended in click's "Aborted!" (exit 1) or
    a traceback (-2), a SIGTERM killed it (-15), where docs/tournament.md says 0 when every
    match is stored. The signal, sent as soon as that line is read, now changes nothing."""
    cfg = _config(tmp_path, {}, randoms=3)
    proc = _start(cfg)
    assert proc.stderr is not None
    seen: list[str] = []
    # (a deadline, the guard _finish gives a whole run: a run that stopped saying its last
    # line, or hung before it, fails here with what it said, not at pytest's timeout)
    deadline = time.monotonic() + 240
    while raw := readline_within(proc.stderr, max(0.0, deadline - time.monotonic())):
        line = raw.decode(errors="replace")
        seen.append(line)
        if "matches played in" in line:
            proc.send_signal(sig)
            break
    if raw is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        pytest.fail("no 'matches played in' line on stderr in 240 s:\n" + "".join(seen)[-3000:])
    code, err = _finish(proc)
    err = "".join(seen) + err
    assert code == 0, err[-3000:]
    assert "Aborted" not in err and "Traceback" not in err and "Interrupted" not in err, err
    _check_complete(tmp_path, err)
    _no_process_left(proc.pid, f"faultchild-{tmp_path.name}")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_mid_match_then_resumed_equals_an_uninterrupted_run(
    tmp_path: Path, sig: int
) -> None:
    """A run with a bot that crashes mid-match, interrupted once 2 matches are stored:
    exit 130 / 143 saying how many are stored and to run the same command again; the
    resumed run keeps every stored row as it was, plays each other match once, and its
    results and ratings equal an uninterrupted run's. Checked, no defect."""
    faults = {"mid": {"FAULT_MODE": "crash_mid", "FAULT_N": "5"}}
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    ref_cfg = _config(ref_dir, faults, randoms=2)
    code, err = _finish(_start(ref_cfg))
    assert code == 0, err[-3000:]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    cfg = _config(run_dir, faults, randoms=2)
    proc = _start(cfg)
    db = run_dir / "db.sqlite"
    deadline = time.monotonic() + 120
    while stored_matches(db) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(sig)
    code, err = _finish(proc)
    before = _rows(db)
    if code == 0:  # (the last matches ended before the signal came: nothing to resume)
        assert len(before) == 6
    else:
        assert code == 128 + sig, err[-3000:]
        assert f"{len(before)} matches are stored in {db}; run the same command again" in err
    _no_process_left(proc.pid, f"faultchild-{run_dir.name}")
    proc = _start(cfg)
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    after = _rows(db)
    assert sorted(after) == list(range(6))
    assert all(after[i] == row for i, row in before.items())
    assert plural(6 - len(before), "match") + " played" in err

    def results(d: Path) -> dict[int, Any]:
        return {i: json.loads(r[3])["result"] for i, r in _rows(d / "db.sqlite").items()}

    def ratings(d: Path) -> dict[str, tuple[float, float]]:
        with Storage(d / "db.sqlite") as st:
            (t,) = st.tournaments()
            return {p.bot: (p.mu, p.sigma) for p in st.rating_history(t.id)}

    assert results(run_dir) == results(ref_dir)
    assert ratings(run_dir) == ratings(ref_dir)
    _no_process_left(proc.pid, f"faultchild-{run_dir.name}")


# ----------------------------------------------------------------- two runs, one out


def test_two_runs_at_once_on_one_database_and_on_one_out(tmp_path: Path) -> None:
    """Two `arena tournament` at once: on one database the second is refused at once (exit
    1, naming the database and the pid of the first), the first completes; on two databases
    sharing an `out`, both complete, and the leaderboard files are whole. Checked, no
    defect in the runs (their files' race: the next test)."""
    cfg = _config(tmp_path, {}, randoms=3)
    first = _start(cfg)
    lock = tmp_path / "db.sqlite.lock"
    deadline = time.monotonic() + 120
    while not (lock.exists() and lock.read_text()) and first.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(first.pid, signal.SIGSTOP)  # (held while the second starts: it finds the lock)
    try:
        code, refused = _finish(_start(cfg))
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert code == 1, refused
    assert re.search(
        rf"another `arena tournament` .* is running on {re.escape(str(tmp_path))}"
        rf"/db\.sqlite \(pid {first.pid}\): wait for it",
        refused,
    ), refused
    code, err = _finish(first)
    assert code == 0, err[-3000:]
    _check_complete(tmp_path, err)
    other = _config(tmp_path, {}, randoms=3, db="db2.sqlite")
    a, b = _start(cfg, "--fresh"), _start(other)
    (ca, ea), (cb, eb) = _finish(a), _finish(b)
    assert (ca, cb) == (0, 0), (ea[-2000:], eb[-2000:])
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert all(r["matches"] == 6 for r in board["rows"])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "leaderboard.csv", "leaderboard.html", "leaderboard.json", "leaderboard.md", "logs",
    ]  # fmt: skip
    for p in (first, a, b):
        _no_process_left(p.pid, f"faultchild-{tmp_path.name}")


def _flock_waiters(path: Path) -> int:
    """How many flock requests wait on ``path`` (Linux's /proc/locks: ``-> FLOCK ...``)."""
    ino = os.stat(path).st_ino
    text = Path("/proc/locks").read_text()
    return sum(1 for line in text.splitlines() if "->" in line and f":{ino} " in line)


def test_two_writers_of_the_leaderboard_files_into_one_directory_take_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: every writer of the leaderboard files wrote `leaderboard.<ext>.tmp`, then
    renamed them: a second writer into the same directory meanwhile (two runs sharing an
    `out`, as docs/tournament.md says two tournaments of one name do, or `arena leaderboard
    --format all --out` beside a run) wrote the same temporary files, the first renamed the
    second's half-written ones and the second failed on its own renames ("No such file or
    directory": exit 1, "cannot write the leaderboard files"); two processes writing in a
    loop failed 45% of their writes. Now the second waits for the first (a lock on the
    directory): both succeed, and the files are whole and all of one writer."""
    out = tmp_path / "out"
    out.mkdir()
    real_render = lb_render.render
    second_done = threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        try:
            write_outputs("B", out)  # type: ignore[arg-type]
        except BaseException as e:  # (reported by the test)
            errors.append(e)
        finally:
            second_done.set()

    def render(lb: Any, fmt: str) -> str:
        if lb == "B":
            return f"B {fmt}\n" * 1000
        if fmt == "csv":  # the first writer is half-way: the second starts and runs
            threading.Thread(target=second, daemon=True).start()
            deadline = time.monotonic() + 60
            while not second_done.is_set() and time.monotonic() < deadline:
                if _flock_waiters(out):  # it waits for this writer: this one goes on
                    break
                time.sleep(0.005)
        return f"A {fmt}\n" * 1000

    monkeypatch.setattr(lb_render, "render", render)
    assert real_render is not render
    write_outputs("A", out)  # type: ignore[arg-type]
    assert second_done.wait(60)
    assert errors == []
    texts = {p.name: p.read_text() for p in out.iterdir()}
    assert sorted(texts) == ["leaderboard.csv", "leaderboard.html", "leaderboard.json",
                             "leaderboard.md"]  # fmt: skip
    writer = {t.split(" ", 1)[0] for t in texts.values()}
    assert writer == {"B"}  # the second wrote last, every file whole and its own
    for name, text in texts.items():
        assert text == f"B {name.rsplit('.', 1)[1]}\n" * 1000
