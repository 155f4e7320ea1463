"""Faults round 36: `arena tournament` as a real process (runner, referee, gRPC, bot
processes) with its bots or itself stopped (SIGSTOP) and resumed, bots that leave a child
holding their files and connection, daemonise, flood their output with bytes that are no
UTF-8 and control characters, or cannot run or import; an `out` that cannot be written;
bots named alike; and a run killed and resumed with a changed config.

Each case checks what docs/tournament.md promises: every match stored once, the exit code,
a message naming the bot or the file, and no process of the run left behind (every process
whose environment carries the run's ``ARENA_PARENT_PID``, or the test's marker).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.test_faults_round32 import _forfeits, _no_process_left
from tests.faults.test_faults_round34 import _ro, _rows

ROOT = Path(__file__).resolve().parents[2]

#: A bot file: plays the first legal action; MODE36 makes it misbehave at its second
#: decision, once (a file in DIR36 remembers it across restarts); TAG36 names its children.
BOT36 = r"""
import os, sys, time
from pathlib import Path
from sdk import Bot

MODE = os.environ.get("MODE36", "")
JUNK = b"\xff\xfe\xc3( \x1b[2J\x1b]0;title\x07\x1b]52;c;aGk=\x07\x00\x9b31m \rover\n"
D = Path(os.environ["DIR36"])


def _sleeper(own_session):
    # A child that keeps every descriptor of the bot: its log (stdout, stderr) and its
    # connection to the referee.
    if os.fork() == 0:
        if own_session:
            os.setsid()
            if os.fork() != 0:  # (a daemon: its parent leaves at once)
                os._exit(0)
        time.sleep(600)  # (not exec'd: the connection's socket is closed on exec)
        os._exit(0)


ONCE_AT_2 = ("child", "daemon", "junk_exit", "long_line_exit", "partial_exit")


class B36(Bot):
    n = 0

    def on_match_start(self, view):
        # (written whole, then renamed: the test reads it as soon as it is there)
        (D / "pid.new").write_text(str(os.getpid()))
        os.replace(D / "pid.new", D / "pid")

    def act(self, view):
        B36.n += 1
        if MODE == "junk":
            os.write(1, b"junk " + JUNK)
        if MODE == "crash_on_go" and (D / "go").exists() and not (D / "fired").exists():
            (D / "fired").write_text(MODE)
            os._exit(8)
        if B36.n == 2 and MODE in ONCE_AT_2 and not (D / "fired").exists():
            (D / "fired").write_text(MODE)
            if MODE in ("child", "daemon"):
                _sleeper(MODE == "daemon")
                os._exit(6)
            if MODE == "junk_exit":
                os.write(2, b"tail " + JUNK * 3)
                os._exit(8)
            if MODE == "long_line_exit":  # (a progress bar on one line, then the end)
                os.write(2, b"step 1234/99999 \r" * 20000 + b"fatal: boom\n")
                os._exit(8)
            if MODE == "partial_exit":
                os.write(1, b"half a line")
                os._exit(8)
        return view.legal_actions[0]
"""


def _config(
    tmp: Path,
    bots: dict[str, str],
    *,
    name: str = "r36",
    max_deals: int = 2,
    deadlines: tuple[int, int] = (2000, 10000),
    grace_s: float = 30,
    out: str = "out",
    file: str = "cfg.toml",
) -> Path:
    """A 3-player classic tournament (6 matches, concurrency 2) of ``bots`` (name -> the
    TOML of its entry); ``bot36.py`` beside it."""
    (tmp / "bot36.py").write_text(BOT36)
    text = f"""
name = "{name}"
ruleset = "classic"
seed = 7
max_deals = {max_deals}
concurrency = 2
db = {json.dumps(str(tmp / "db.sqlite"))}
out = {json.dumps(str(tmp / out))}
bot_wait_s = 60
[deadlines]
decision_ms = {deadlines[0]}
time_bank_ms = {deadlines[1]}
[referee]
reconnect_grace_s = {grace_s:g}
[bots]
""" + "\n".join(f"{json.dumps(k)} = {v}" for k, v in bots.items())
    path = tmp / file
    path.write_text(text)
    return path


def _bot36(tmp: Path, name: str, mode: str = "") -> str:
    d = tmp / f"d36-{name}"
    d.mkdir(exist_ok=True)
    env = {"MODE36": mode, "DIR36": str(d), "TAG36": tmp.name}
    inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    return f'{{ bot = "bot36.py:B36", env = {{ {inline} }} }}'


class _Run:
    """`arena tournament --no-progress` on a config, its stderr in a file read as it goes."""

    def __init__(self, cfg: Path, *args: str) -> None:
        self.err_path = cfg.parent / f"stderr-{time.monotonic_ns()}.txt"
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="120", NO_COLOR="1")
        with self.err_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "tournament", "--config", str(cfg),
                 "--no-progress", *args],
                stdout=subprocess.PIPE, stderr=err, cwd=str(cfg.parent), env=env,
                start_new_session=True,
            )  # fmt: skip

    @property
    def err(self) -> str:
        return self.err_path.read_bytes().decode(errors="replace")

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + 120  # (a guard: a hung run ends the test)
        while text not in self.err:
            assert self.proc.poll() is None, self.err[-3000:]
            assert time.monotonic() < deadline, self.err[-3000:]
            time.sleep(0.02)

    def finish(self) -> tuple[int, str, str]:
        try:
            out, _ = self.proc.communicate(timeout=240)  # (a guard)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise
        return self.proc.returncode, out.decode(errors="replace"), self.err

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@contextlib.contextmanager
def _running(cfg: Path, *args: str):  # type: ignore[no-untyped-def]
    run = _Run(cfg, *args)
    try:
        yield run
    finally:
        if run.proc.poll() is None:
            run.kill()
        _no_process_left(run.proc.pid, f"child36-{cfg.parent.name}")


def _incidents(db: Path) -> list[tuple[str, str, str]]:
    with contextlib.closing(_ro(db)) as c:
        return list(c.execute("SELECT bot, kind, detail FROM incidents ORDER BY id"))


def _complete(tmp: Path, code: int, err: str, n: int = 6) -> None:
    assert code == 0, err[-3000:]
    assert sorted(_rows(tmp / "db.sqlite")) == list(range(n)), err[-3000:]
    assert f"{n}/{n} stored" in err, err[-3000:]


# ----------------------------------------------------------------- SIGSTOP and SIGCONT


def test_the_runner_stopped_for_seconds_charges_no_honest_bot(tmp_path: Path) -> None:
    """The tournament process itself (runner and referee) SIGSTOPped for 4 s mid-match,
    past every bot's decision time and time bank (300 + 600 ms): the stall is the
    referee's, not the bots', so no bot gets a strike, none forfeits, every match is
    stored, exit 0. Checked, no defect (the referee's loop-stall meter)."""
    bots = {"r1": '"random"', "r2": '"random"', "h": '"heuristic"'}
    cfg = _config(tmp_path, bots, max_deals=20, deadlines=(300, 600), grace_s=10)
    with _running(cfg) as run:
        run.wait_for("1/6 matches")
        os.kill(run.proc.pid, signal.SIGSTOP)
        assert "6/6 matches" not in run.err  # (stopped while matches were played)
        time.sleep(4)
        os.kill(run.proc.pid, signal.SIGCONT)
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    assert _incidents(tmp_path / "db.sqlite") == []
    assert _forfeits(tmp_path / "db.sqlite") == []


@pytest.mark.slow
def test_the_runner_stopped_past_the_bots_keepalive_costs_them_a_disconnect_only(
    tmp_path: Path,
) -> None:
    """The tournament process stopped for 15 s: longer than the SDK's keepalive allows
    (a ping every 10 s, unanswered), so each bot takes the link for dead, drops it and
    reconnects; each is recorded a `disconnect` (at most one per match it sat in), no
    timeout, no forfeit; every match stored, exit 0. Left as it is (the link did look dead
    to the bot, and a disconnect is no strike); said in reliability.md."""
    bots = {"r1": '"random"', "r2": '"random"', "h": '"heuristic"'}
    cfg = _config(tmp_path, bots, max_deals=20, deadlines=(300, 600), grace_s=10)
    with _running(cfg) as run:
        run.wait_for("1/6 matches")
        os.kill(run.proc.pid, signal.SIGSTOP)
        assert "6/6 matches" not in run.err
        time.sleep(15)
        os.kill(run.proc.pid, signal.SIGCONT)
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    incidents = _incidents(tmp_path / "db.sqlite")
    assert {kind for _, kind, _ in incidents} <= {"disconnect"}, incidents
    assert len(incidents) <= 6
    assert _forfeits(tmp_path / "db.sqlite") == []


def test_a_bot_stopped_past_its_time_bank_forfeits_and_the_others_are_not_charged(
    tmp_path: Path,
) -> None:
    """A bot SIGSTOPped at its first match for 4 s, past its decision time and bank
    (300 + 600 ms): it forfeits the matches under way (strikes: timeouts), as documented;
    the honest bots get no incident; once resumed it plays the rest; every match stored,
    exit 0, nothing left. Checked, no defect."""
    bots = {"s": _bot36(tmp_path, "s"), "r1": '"random"', "h": '"heuristic"'}
    cfg = _config(tmp_path, bots, max_deals=4, deadlines=(300, 600), grace_s=10)
    with _running(cfg) as run:
        pid_file = tmp_path / "d36-s" / "pid"
        while not pid_file.exists():
            assert run.proc.poll() is None, run.err[-3000:]
            time.sleep(0.02)
        stopped = int(pid_file.read_text())
        os.kill(stopped, signal.SIGSTOP)
        time.sleep(4)
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGCONT)
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    incidents = _incidents(tmp_path / "db.sqlite")
    assert {bot for bot, _, _ in incidents} == {"s"}, incidents
    assert "timeout" in {kind for _, kind, _ in incidents}
    forfeits = _forfeits(tmp_path / "db.sqlite")
    assert forfeits and {bot for _, bot in forfeits} == {"s"}
    assert len(forfeits) < 6  # (it played the matches after it was resumed)


# ----------------------------------------------------------------- children and daemons


@pytest.mark.parametrize("mode", ["child", "daemon"])
def test_a_bot_leaving_a_child_with_its_log_and_connection_is_restarted(
    tmp_path: Path, mode: str
) -> None:
    """A bot that forks a child holding every descriptor it has (its log as stdout and
    stderr, its connection to the referee), in its session or daemonised (a session of
    its own, its parent gone), then exits mid-match: restarted, back within the grace,
    no seat forfeits, every match stored, and the child is stopped (at the restart, or by
    the end of the run). Checked, no defect."""
    bots = {"x": _bot36(tmp_path, "x", mode), "r1": '"random"', "r2": '"random"'}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    assert "bot x exited with code 6; restarting it (1/3)" in err
    assert _forfeits(tmp_path / "db.sqlite") == []


def test_a_command_bot_that_daemonises_is_named_and_nothing_is_left(tmp_path: Path) -> None:
    """A `command` bot that daemonises (starts the real bot in a session of its own and
    exits 0 at once): the run stops before any match, exit 1, naming the bot, its code and
    its log, as for any bot that exits before connecting; the daemon, which connected or
    was about to, is stopped with the run. Checked, no defect."""
    daemon = ('["sh", "-c", "setsid {python} -m sdk.cli run random --arena {arena} '
              '>/dev/null 2>&1 </dev/null & echo daemonised"]')  # fmt: skip
    bots = {"r1": '"random"', "r2": '"random"', "d": f"{{ command = {daemon} }}"}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    log = tmp_path / "out" / "logs" / "d.log"
    assert f"error: bot 'd' exited with code 0 before connecting (log {log})" in err, err
    assert "daemonised" in err
    assert _rows(tmp_path / "db.sqlite") == {}


# ----------------------------------------------------------------- what bots write


def test_a_bot_writing_bytes_no_terminal_should_obey_is_shown_escaped(tmp_path: Path) -> None:
    """A bot that writes bytes that are no UTF-8, escape sequences (a cleared screen, a
    window title, the clipboard), NUL, a C1 CSI and carriage returns at every decision, and
    a last burst of them before it crashes: its log keeps its bytes as written; the tail the
    runner prints when it restarts it shows every control character written out (`\\x1b`),
    the bad bytes as U+FFFD; every match stored, exit 0. Checked, no defect."""
    bots = {"j": _bot36(tmp_path, "j", "junk_exit"), "k": _bot36(tmp_path, "k", "junk"),
            "r1": '"random"'}  # fmt: skip
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    assert "bot j exited with code 8; restarting it (1/3)" in err
    assert "tail \ufffd\ufffd\ufffd( \\x1b[2J\\x1b]0;title\\x07\\x1b]52;c;aGk=\\x07\\x00" in err
    for raw in ("\x1b", "\x07", "\x00", "\r", "\x9b"):
        assert raw not in err, repr(raw)
    assert b"junk \xff\xfe\xc3( \x1b[2J" in (tmp_path / "out" / "logs" / "k.log").read_bytes()
    assert _forfeits(tmp_path / "db.sqlite") == []


_EARLY = """import os
os.write(1, b"early \\xff\\xfe\\x1b[2J\\x1b]0;t\\x07\\x00\\rover\\n" * 2 + b"no newline \\x1b[1m")
raise SystemExit(9)
"""


@pytest.mark.parametrize(
    "how",
    ["early-exit", pytest.param("syntax-error-file", marks=pytest.mark.slow),
     "syntax-error-module"],
)  # fmt: skip
def test_a_bot_that_fails_before_connecting_is_named_with_its_output_escaped(
    tmp_path: Path, how: str
) -> None:
    """A bot file that writes junk and exits when imported, or one (as a file, or as a
    `module:Class`) that imports a module of its own with a syntax error (the bot file
    compiles, so the config's check passes): the run stops before any match (exit 1),
    naming the bot, its code, its log, and the end of its output: the file and line of the
    syntax error, control characters written out. Nothing stored, nothing left. Checked,
    no defect."""
    (tmp_path / "early.py").write_text(_EARLY)
    (tmp_path / "imp36.py").write_text(
        "import helper36\nfrom sdk import Bot\n\n\nclass S(Bot):\n"
        "    def act(self, view):\n        return view.legal_actions[0]\n"
    )
    (tmp_path / "helper36.py").write_text("def f(:\n    pass\n")
    spec = {"early-exit": '"early.py:X"', "syntax-error-file": '"imp36.py:S"',
            "syntax-error-module": '{ bot = "imp36:S", cwd = "." }'}[how]  # fmt: skip
    cfg = _config(tmp_path, {"r1": '"random"', "r2": '"random"', "x": spec})
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    assert (
        f"error: bot 'x' exited with code 2 before connecting (log {tmp_path}/out/logs/x.log)"
        in err
    )
    if how == "early-exit":
        assert "early \ufffd\ufffd\\x1b[2J\\x1b]0;t\\x07\\x00\\x0dover" in err, err
        assert "it called sys.exit(9) when imported" in err
    else:
        assert f"SyntaxError: invalid syntax (at {tmp_path}/helper36.py, line 1: def f(:)" in err
    for raw in ("\x1b", "\x07", "\x00", "\r"):
        assert raw not in err, repr(raw)
    assert _rows(tmp_path / "db.sqlite") == {}


def test_the_runners_lines_in_a_bots_log_start_lines_of_their_own(tmp_path: Path) -> None:
    """A bot that writes half a line (no newline) and crashes: the runner's line saying so
    ("--- 12:00:00 exited with code 8; restarting it (1/3)"), and the one of its restart,
    begin lines of their own in its log, so the log read alone tells why it stopped.
    Defect: the runner's line was glued to the bot's half line ("half a line--- 12:00:00
    exited with code 8 ..."), where it reads as the bot's own output."""
    bots = {"p": _bot36(tmp_path, "p", "partial_exit"), "r1": '"random"', "r2": '"random"'}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    lines = (tmp_path / "out" / "logs" / "p.log").read_text().splitlines()
    assert "half a line" in lines, lines
    said = [
        i
        for i, line in enumerate(lines)
        if line.endswith("exited with code 8; restarting it (1/3)")
    ]
    assert len(said) == 1 and lines[said[0]].startswith("--- "), lines
    assert lines[said[0] + 1].startswith("--- ") and lines[said[0] + 1].endswith("starting p")


# ----------------------------------------------------------------- a read-only `out`


@contextlib.contextmanager
def _read_only_over(folder: Path):  # type: ignore[no-untyped-def]
    """``folder`` bind-mounted read-only over itself (root only): what is opened through the
    path from now on is on a read-only file system; files open already write on."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    r = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot bind-mount: {r.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_an_out_read_only_from_the_start_stops_the_run_before_any_bot(tmp_path: Path) -> None:
    """`out` on a read-only file system from the start: the run stops before a bot starts
    (exit 1), naming the directory and why; nothing is stored, and once it is writable the
    same command plays the tournament. Checked, no defect."""
    (tmp_path / "out").mkdir()
    cfg = _config(tmp_path, {"r1": '"random"', "r2": '"random"', "r3": '"random"'})
    with _read_only_over(tmp_path / "out"), _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    assert (
        f"error: cannot write the leaderboard files to {tmp_path}/out: Read-only file system" in err
    ), err
    assert "started (pid" not in err and _rows(tmp_path / "db.sqlite") == {}
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)


def test_an_out_made_read_only_mid_run_loses_no_result(tmp_path: Path) -> None:
    """`out` made read-only while the run plays (a read-only mount over it after the first
    match): the bots write on in their open logs, every match is stored, and the run ends
    with exit 1 saying every result is stored and the command that writes the leaderboard
    files, which then works. Checked, no defect."""
    bots = {"r1": '"random"', "r2": '"random"', "r3": '"random"'}
    cfg = _config(tmp_path, bots, max_deals=20)
    (tmp_path / "out").mkdir()
    with _running(cfg) as run:
        run.wait_for("1/6 matches")
        with _read_only_over(tmp_path / "out"):
            code, _out, err = run.finish()
            assert not (tmp_path / "out" / "leaderboard.json").exists()
    assert code == 1, err
    assert f"cannot write the leaderboard files to {tmp_path}/out" in err, err
    assert "Read-only file system. Every result is stored" in err
    assert sorted(_rows(tmp_path / "db.sqlite")) == list(range(6))
    assert "6/6 stored" in err
    command = err.split("Every result is stored; `", 1)[1].split("`", 1)[0]
    assert command.startswith("arena leaderboard --db ")
    args = [*command.split()[1:-1], str(tmp_path / "board")]
    r = subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], capture_output=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert all(row["matches"] == 6 for row in board["rows"])


# ----------------------------------------------------------------- names


def test_bots_named_alike_but_for_case_and_with_dots_keep_apart(tmp_path: Path) -> None:
    """Three bots whose names differ only by case (`Rnd`, `rnd`) or hold dots (`a..b`):
    each has its own log in `out/logs`, its own row in the database and the leaderboard;
    every match stored, exit 0. (On a file system that ignores case, as some mounts do,
    `Rnd.log` and `rnd.log` would be one file: not tried, none here.) Checked, no defect."""
    bots = {"Rnd": '"random"', "rnd": '"random"', "a..b": '"random"'}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    logs = tmp_path / "out" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["Rnd.log", "a..b.log", "rnd.log"]
    for name in bots:
        assert f"starting {name}\n" in (logs / f"{name}.log").read_text()
    board = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert sorted(r["bot"] for r in board["rows"]) == sorted(bots)
    assert all(r["matches"] == 6 for r in board["rows"])


@pytest.mark.parametrize(
    "name",
    ["../x", "x/y", pytest.param("e\u0301", marks=pytest.mark.slow),
     pytest.param("..", marks=pytest.mark.slow),
     pytest.param(".hidden", marks=pytest.mark.slow), pytest.param("ü", marks=pytest.mark.slow),
     pytest.param("ｒｎｄ", marks=pytest.mark.slow)],
)  # fmt: skip
def test_a_bot_name_that_is_no_plain_file_name_is_refused(tmp_path: Path, name: str) -> None:
    """A bot name with a '/', '..' alone, a leading dot, a letter outside ASCII (composed,
    decomposed, or full-width: names that Unicode normalisation would make equal to
    another), given with `--set`: refused with the config (exit 2), naming the key and the
    rule; nothing is written (no `out`, no log). Checked, no defect."""
    cfg = _config(tmp_path, {"r1": '"random"', "r2": '"random"', "r3": '"random"'})
    with _running(cfg, "--set", f'bots."{name}"="random"') as run:
        code, _out, err = run.finish()
    assert code == 2, err
    assert f'{cfg}: bots."{name}": a bot name starts with a letter or a digit' in err, err
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------- a crash, then a changed config


def _kill_after(cfg: Path, text: str) -> int:
    """Run ``cfg`` and SIGKILL the tournament process (only it: its bots die with it) once
    ``text`` is on its output; the matches then stored."""
    with _running(cfg) as run:
        run.wait_for(text)
        os.kill(run.proc.pid, signal.SIGKILL)
        run.proc.wait()
    return len(_rows(cfg.parent / "db.sqlite"))


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("add", "bots added: r4"),
        pytest.param("remove", "bots removed: r4", marks=pytest.mark.slow),
        pytest.param("max_deals", "max_deals 20 → 3", marks=pytest.mark.slow),
        pytest.param("deals", 'deals "duplicate" → "independent"', marks=pytest.mark.slow),
    ],
)
def test_a_killed_run_resumed_with_a_changed_config(tmp_path: Path, change: str, said: str) -> None:
    """`arena tournament` SIGKILLed mid-run, then run with its config changed (a bot added
    or removed, `max_deals`, `deals`): as documented, the run says the stored tournament
    is unfinished, how many of its matches are stored and what changed, starts a new one
    and leaves that one as it was; the first config then resumes it, playing only what is
    missing, the stored rows kept byte for byte. Checked, no defect."""
    bots = {f"r{i}": '"random"' for i in (1, 2, 3, 4) if change == "remove" or i < 4}
    cfg = _config(tmp_path, bots, max_deals=20)
    total = 24 if change == "remove" else 6
    stored = _kill_after(cfg, f"2/{total} matches")
    assert 2 <= stored < total
    before = _rows(tmp_path / "db.sqlite")
    with contextlib.closing(_ro(tmp_path / "db.sqlite")) as c:
        (old_id,) = c.execute("SELECT id FROM tournaments").fetchone()
    text = cfg.read_text()
    changed = {
        "add": text + '\n"r4" = "random"\n',
        "remove": text.replace('"r4" = "random"', ""),
        "max_deals": text.replace("max_deals = 20", "max_deals = 3"),
        "deals": text.replace("max_deals = 20", 'max_deals = 20\ndeals = "independent"'),
    }[change]
    other = tmp_path / "changed.toml"
    other.write_text(changed)
    with _running(other) as run:
        code, _out, err = run.finish()
    assert code == 0, err[-3000:]
    assert (
        f"tournament {old_id} in {tmp_path}/db.sqlite is unfinished ({stored} of {total} "
        f"matches stored), and this config is not its own ({said})"
    ) in err, err[-3000:]
    assert f"To finish {old_id} instead, stop now and run it with the config" in err
    assert _rows(tmp_path / "db.sqlite", old_id) == before
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 0, err[-3000:]
    assert f"{total}/{total} stored" in err and f"{total - stored} matches played" in err, err
    after = _rows(tmp_path / "db.sqlite", old_id)
    assert sorted(after) == list(range(total))
    assert {k: after[k] for k in before} == before


def test_a_bots_tail_on_the_arenas_screen_is_bounded_per_line(tmp_path: Path) -> None:
    """A bot that writes 340 kB on one line (a progress bar redrawn with carriage returns,
    20,000 times), then its error, and crashes: the tail the runner prints as it restarts
    it is a few lines, each cut in its middle to a bounded length ("... 63981 characters
    cut ..."), its end (the error) kept; every match stored, exit 0. Defect: the whole
    last 64 KiB of the log was printed as one line of 80,000 characters (each carriage
    return written out as `\\x0d`), burying the error in the middle of the screen."""
    bots = {"p": _bot36(tmp_path, "p", "long_line_exit"), "r1": '"random"', "r2": '"random"'}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    assert "bot p exited with code 8; restarting it (1/3)" in err
    assert "fatal: boom" in err
    assert max(len(line) for line in err.splitlines()) < 1000, err[:3000]
    assert len(err) < 20_000, len(err)
    assert "characters cut" in err


def test_a_bot_restarted_while_out_is_read_only_plays_on(tmp_path: Path) -> None:
    """`out` made read-only mid-run, then a bot crashes: its log cannot be opened again, so
    it is restarted with its output dropped (said on the arena's output) and plays on: no
    seat of it forfeits; every match stored; exit 1 for the leaderboard files, as for any
    read-only `out`. Defect: the restart failed on the log ("cannot write the log of bot
    'c' ...: Read-only file system: not restarted; the referee plays its seats to the
    end"), and the bot forfeited every match left (5 of 6) for the organiser's storage."""
    bots = {"c": _bot36(tmp_path, "c", "crash_on_go"), "r1": '"random"', "r2": '"random"'}
    cfg = _config(tmp_path, bots, max_deals=20, grace_s=10)
    (tmp_path / "out").mkdir()
    with _running(cfg) as run:
        run.wait_for("1/6 matches")
        with _read_only_over(tmp_path / "out"):
            (tmp_path / "d36-c" / "go").write_text("")
            code, _out, err = run.finish()
    assert code == 1, err[-3000:]
    assert sorted(_rows(tmp_path / "db.sqlite")) == list(range(6)) and "6/6 stored" in err
    assert "bot c exited with code 8; restarting it (1/3)" in err, err[-3000:]
    log = tmp_path / "out" / "logs" / "c.log"
    assert (
        f"cannot write the log of bot 'c' to {log}: Read-only file system (check the `out` "
        "directory, --out): restarted all the same, its output dropped"
    ) in err
    assert _forfeits(tmp_path / "db.sqlite") == []
    assert "Every result is stored" in err


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("#!/bin/sh\r\nexit 0\r\n",
         "its interpreter (the #! line: /bin/sh) was not found: the line ends in a carriage "
         "return (the file has Windows line endings, CRLF: convert them to LF)"),
        pytest.param("#!{tmp}\nexit 0\n", "its interpreter (the #! line: {tmp}) is a directory",
                     marks=pytest.mark.slow),
        ("#!{tmp}/plain\nexit 0\n",
         "its interpreter (the #! line: {tmp}/plain) is not executable"),
    ],
    ids=["crlf", "interpreter-a-directory", "interpreter-not-executable"],
)  # fmt: skip
def test_a_command_bots_script_whose_interpreter_cannot_run_is_named_with_why(
    tmp_path: Path, script: str, said: str
) -> None:
    """A `command` bot, an executable script whose `#!` line cannot run: saved with Windows
    line endings (the kernel looks for `/bin/sh\\r`), or naming a directory or a file
    without its execute bit: the run stops before any match (exit 1), naming the bot, the
    script and why. Defect: the first said "its interpreter (the #! line: /bin/sh) was not
    found" of a /bin/sh that is there, the others only "Permission denied" of a script
    that is executable."""
    (tmp_path / "plain").write_text("not a program\n")
    bot = tmp_path / "bot.sh"
    bot.write_bytes(script.replace("{tmp}", str(tmp_path)).encode())
    bot.chmod(0o755)
    bots = {"r1": '"random"', "r2": '"random"', "x": f"{{ command = [{json.dumps(str(bot))}] }}"}
    cfg = _config(tmp_path, bots)
    with _running(cfg) as run:
        code, _out, err = run.finish()
    assert code == 1, err
    said = said.replace("{tmp}", str(tmp_path))
    assert f"error: cannot launch bot 'x' ({bot}): {said}" in err, err
    assert _rows(tmp_path / "db.sqlite") == {}
