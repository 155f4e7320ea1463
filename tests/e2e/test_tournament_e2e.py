"""End to end over real gRPC: `arena tournament` with the bundled bots as processes.

One small tournament (3 bots, 6 matches, 3 deals each) interrupted after 2 matches and
resumed through the CLI; then the leaderboard command; then the failure modes of bots
that never connect or crash at start. Every process started is checked to be gone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage
from arena.tournament import RunOptions, TournamentError, load_config, run
from engine import replay
from tests.support.certs import make_cert


def _marker_processes(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            found.append(int(d.name))
    return found


def _config(tmp: Path, marker: str, extra: str = "") -> Path:
    text = f"""
name = "e2e"
ruleset = "classic"
seed = 3
max_deals = 3
concurrency = 3
bot_wait_s = 60
db = "{tmp / "e2e.sqlite"}"
out = "{tmp / "out"}"
[deadlines]
decision_ms = 3000
time_bank_ms = 30000
[bots]
heuristic = "heuristic"
r1 = "random"
# a command bot carrying a marker, so that the test can look for leftover processes
r2 = {{ command = ["{{python}}", "-m", "sdk.cli", "run", "random", "--arena", "{{arena}}",
                  "--token", "{{token}}", "--name", "{marker}"] }}
{extra}
"""
    p = tmp / "e2e.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_tournament_interrupted_resumed_and_exported(tmp_path: Path) -> None:
    marker = f"e2e-marker-{os.getpid()}"
    path = _config(tmp_path, marker)
    cfg = load_config(path)

    first = run(cfg, RunOptions(progress=False, max_new_matches=2))
    assert first.interrupted and first.completed >= 2 and first.played_now == 2
    assert _marker_processes(marker) == []

    result = CliRunner().invoke(main, ["tournament", "--config", str(path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "4 matches played" in result.output and "already stored (resumed)" in result.output
    # without the live display, the default verbosity shows the resumption and the progress
    words = " ".join(result.output.split())  # (rich wraps log lines at the terminal's width)
    assert "2 of 6 matches already stored" in words and "e2e: 6/6 matches" in words
    assert _marker_processes(marker) == []

    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.completed == info.total_matches == 6
        assert info.finished_at is not None
        results = st.match_results(cfg.tournament_id)
        assert [r.index for r in results] == list(range(6))
        for r in results:
            rec: dict[str, Any] = st.load_record(r.match_id)
            assert rec["players"] == list(r.seats)
            assert rec["result"]["deals"] <= 3
            replay(rec)  # every stored match replays exactly
    for ext in ("json", "csv", "md", "html"):
        assert (cfg.out / f"leaderboard.{ext}").stat().st_size > 0
    board = json.loads((cfg.out / "leaderboard.json").read_text())
    assert {r["bot"] for r in board["rows"]} == {"heuristic", "r1", "r2"}
    assert all(r["matches"] == 6 for r in board["rows"])
    html = (cfg.out / "leaderboard.html").read_text()
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert (cfg.out / "logs" / "r2.log").exists()

    again = CliRunner().invoke(main, ["leaderboard", "--db", str(cfg.db), "--format", "csv"])
    assert again.exit_code == 0, again.output
    assert again.output.startswith("rank,bot,conservative,mu,sigma,matches,place_1")


def test_missing_and_crashing_bots_are_reported(tmp_path: Path) -> None:
    marker = f"e2e-missing-{os.getpid()}"
    path = _config(tmp_path, marker, 'far = { remote = true, token = "0123456789abcdef" }')
    cfg = load_config(path, ["bot_wait_s=1.5"])
    with pytest.raises(TournamentError, match=r"did not connect within 1.5s:\n") as info:
        run(cfg, RunOptions(progress=False))
    # (a local bot slower than 1.5 s to start, on a loaded machine, is listed too)
    assert "\n  far: remote bot, never connected with its token" in str(info.value)
    assert _marker_processes(marker) == []

    crash = _config(tmp_path, marker, 'boom = { command = ["{python}", "-c", '
                    '"import sys; print(\'no luck\'); sys.exit(3)"] }')  # fmt: skip
    with pytest.raises(
        TournamentError, match=r"(?s)'boom' exited with code 3 before connecting.*no luck"
    ):
        run(load_config(crash), RunOptions(progress=False))
    assert _marker_processes(marker) == []


def test_a_bot_that_exits_midway_is_restarted(tmp_path: Path) -> None:
    marker = f"e2e-quitter-{os.getpid()}"
    path = _config(tmp_path, marker)
    # r2 leaves after every 2 matches; the runner restarts it and every match is played
    cfg = load_config(
        path,
        [
            "concurrency=1",
            "referee.reconnect_grace_s=10",
            'bots.r2.command=["{python}", "-m", "sdk.cli", "run", '
            '"random", "--arena", "{arena}", "--token", "{token}", "--matches", "2", '
            f'"--name", "{marker}"]',
        ],
    )
    out = run(cfg, RunOptions(progress=False))
    assert out.finished and not out.failed
    log_text = (cfg.out / "logs" / "r2.log").read_text()
    assert log_text.count("starting r2") == 3
    with Storage(cfg.db) as st:
        assert all(not r.forfeits for r in st.match_results(cfg.tournament_id))
    assert _marker_processes(marker) == []


def test_tournament_over_tls(tmp_path: Path) -> None:
    """``[tls]``: the referee serves TLS only; the bundled bots and a command bot (given
    ``{ca}``) trust its certificate and play every match (a bot that did not could not
    even connect: the tournament would stop waiting for it)."""
    make_cert(tmp_path / "certs")
    marker = f"e2e-tls-{os.getpid()}"
    path = _config(tmp_path, marker, '[tls]\ncert = "certs/arena.pem"\nkey = "certs/arena.key"\n')
    # the command bot is told the certificate through the {ca} placeholder
    old = f'"--name", "{marker}"'
    path.write_text(path.read_text().replace(old, old + ', "--ca", "{ca}"'))
    cfg = load_config(path)
    assert cfg.tls is not None and cfg.tls.server_name == "localhost"
    result = CliRunner().invoke(main, ["tournament", "--config", str(path), "--no-progress", "-vv"])
    assert result.exit_code == 0, result.output
    assert "6 matches played" in result.output and "failed" not in result.output
    # Said once, with its TLS: the referee's own log line (shown by -vv) said it again.
    words = " ".join(result.output.split())
    assert words.count("referee listening on") == 1 and "(TLS)" in words, words
    with Storage(cfg.db) as st:
        results = st.match_results(cfg.tournament_id)
        assert len(results) == 6
        for r in results:
            assert st.load_record(r.match_id)["incidents"] == []
    assert _marker_processes(marker) == []


@pytest.mark.parametrize(
    ("signals", "code", "flags"),
    [(("SIGINT", "SIGINT"), 130, ()), (("SIGTERM",), 143, ()), (("SIGINT",), 130, ("--fresh",))],
    ids=["ctrl-c", "term", "fresh"],
)
def test_a_signal_stops_cleanly_and_keeps_the_results(
    tmp_path: Path, signals: tuple[str, ...], code: int, flags: tuple[str, ...]
) -> None:
    """Defects: a second Ctrl-C while the tournament was stopping raised KeyboardInterrupt in
    the middle of the clean stop ("Exception ignored in Server.__del__ ... Event loop is
    closed" and "coroutine ... was never awaited" on stderr); SIGTERM (`kill`, `timeout`,
    `docker stop`) killed the arena outright: bots left running, the lock file left behind,
    no ratings or leaderboard. Both now stop cleanly: exit 128 + the signal, no bot left
    running, the leaderboard written, the lock gone. A run started with --fresh said to run
    "the same command" to resume, which would have started over."""
    import signal
    import subprocess
    import sys
    import time

    marker = f"e2e-{signals[0]}-{os.getpid()}"
    path = _config(tmp_path, marker)
    path.write_text(path.read_text().replace("max_deals = 3", "max_deals = 400"))
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
         "--config", str(path), "--no-progress", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _marker_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        # The bots connect and matches are under way (none ends: 400 deals).
        logs = [tmp_path / "out" / "logs" / f"{b}.log" for b in ("heuristic", "r1", "r2")]
        while time.monotonic() < deadline and not all(
            f.exists() and " started: seat " in f.read_text() for f in logs
        ):
            time.sleep(0.1)
        for name in signals:
            proc.send_signal(getattr(signal, name))
            time.sleep(0.05)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, err
    text = " ".join(err.split())  # rich wraps long lines
    assert f"Interrupted ({signals[0]})." in text, err
    # (a run with --fresh: the same command again would start over and lose the matches)
    again = (
        "run the same command again without --fresh to resume"
        if flags
        else ("run the same command again to resume")
    )
    assert again in text, err
    assert "played again, from their seeds" in text, err  # (duplicate deals)
    for bad in ("Traceback", "Exception ignored", "never awaited"):
        assert bad not in err, err
    assert _marker_processes(marker) == []
    assert (tmp_path / "out" / "leaderboard.json").exists()
    assert not (tmp_path / "e2e.sqlite.lock").exists()


def test_a_second_ctrl_c_as_the_stopped_run_exits_changes_nothing(tmp_path: Path) -> None:
    """Defect (found by pausing the test process on its way to the second signal, as a
    loaded machine does): a second Ctrl-C that came after the stop had said all it says,
    while the process exited (gRPC's and the event loop's teardown), raised
    KeyboardInterrupt there: "Exception ignored in: 'grpc._cython.cygrpc.AioServer.
    __dealloc__'" and its traceback on stderr, or the process killed by the signal (-2, not
    130). A stop signal during that exit now ends it at once, with the same exit code."""
    import signal
    import subprocess
    import sys
    import time

    marker = f"e2e-exit-{os.getpid()}"
    path = _config(tmp_path, marker)
    path.write_text(path.read_text().replace("max_deals = 3", "max_deals = 400"))
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
         "--config", str(path), "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        logs = [tmp_path / "out" / "logs" / f"{b}.log" for b in ("heuristic", "r1", "r2")]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
            f.exists() and " started: seat " in f.read_text() for f in logs
        ):
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        said = ""
        while "leaderboard: " not in said:  # the stop's last words
            line = proc.stderr.readline()
            assert line, said
            said += line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        err = said + err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    for bad in ("Traceback", "Exception ignored", "KeyboardInterrupt"):
        assert bad not in err, err
    assert _marker_processes(marker) == []


_SIGNAL_IN_THE_TEARDOWN = """\
import os, signal, sys, time
import arena.cli.tournament as ct

class Late:  # collected as the modules are torn down, after Python's own signal handling
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # (delivered by then)

sys.modules["late_holder"] = type(sys)("late_holder")
sys.modules["late_holder"].late = Late()
ct._exit(130)  # as a stopped run ends
"""


def test_a_ctrl_c_in_the_exits_last_teardown_changes_nothing(tmp_path: Path) -> None:
    """Defect (the test above failed so under load, now and then): Python's exit sets the
    signals it handles back to their default before it tears the modules down (gRPC's server
    among them), and a second Ctrl-C then killed the stopped run (-2, not 130). Here the
    signal comes in that teardown, every time."""
    import subprocess
    import sys

    script = tmp_path / "signal_in_the_teardown.py"
    script.write_text(_SIGNAL_IN_THE_TEARDOWN)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 130, proc.stderr


_SIGNAL_WHILE_WRITING = """\
import os, signal, sys
import arena.cli.tournament as ct
from arena.cli import main

sig, config = getattr(signal, sys.argv[1]), sys.argv[2]
build = ct.build_leaderboard

def build_leaderboard(*args, **kwargs):  # the run is over: the leaderboard is being built
    os.kill(os.getpid(), sig)
    return build(*args, **kwargs)

ct.build_leaderboard = build_leaderboard
sys.argv = ["arena", "tournament", "--config", config, "--no-progress"]
main()
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_while_the_leaderboard_is_written_says_what_is_stored(
    tmp_path: Path, sig: str
) -> None:
    """Defect: once the run was over, its event loop no longer handled the signals: a Ctrl-C
    while the leaderboard was built or written ended in click's "Aborted!" with exit 1, a
    SIGTERM in a silent death, neither saying that every result was stored. Now: exit 128 +
    the signal, and how to write the leaderboard files."""
    import signal
    import subprocess
    import sys

    marker = f"e2e-lb-{sig}-{os.getpid()}"
    path = _config(tmp_path, marker)
    script = tmp_path / "signal_while_writing.py"
    script.write_text(_SIGNAL_WHILE_WRITING)
    proc = subprocess.run([sys.executable, str(script), sig, str(path)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    text = " ".join(proc.stderr.split())  # rich wraps long lines
    assert proc.returncode == 128 + getattr(signal, sig), proc.stderr
    assert f"Interrupted ({sig}) while writing the leaderboard" in text, proc.stderr
    assert "Every finished match is stored" in text and "--format all --out" in text
    for bad in ("Aborted", "Traceback"):
        assert bad not in proc.stderr, proc.stderr
    with Storage(tmp_path / "e2e.sqlite") as st:
        assert len(st.completed_indices(st.resolve_tournament(None))) == 6
    assert _marker_processes(marker) == []


_SIGNAL_AFTER_THE_LAST_SAVE = """\
import os, signal, sys
from arena.storage import Storage
from arena.cli import main

config = sys.argv[1]
save, saved = Storage.save_match, []

def save_match(self, *args, **kwargs):  # (on the storage thread: the signal reaches the loop)
    save(self, *args, **kwargs)
    saved.append(1)
    if len(saved) == 6:  # the last match of the tournament is stored
        os.kill(os.getpid(), signal.SIGINT)

Storage.save_match = save_match
sys.argv = ["arena", "tournament", "--config", config, "--no-progress"]
main()
"""


def test_a_signal_as_the_last_match_is_stored_says_there_is_nothing_to_resume(
    tmp_path: Path,
) -> None:
    """Defect: a Ctrl-C that came as the last match was being stored interrupted the run
    with every match stored, and it said "run the same command again to resume"."""
    import subprocess
    import sys

    marker = f"e2e-last-{os.getpid()}"
    path = _config(tmp_path, marker)
    script = tmp_path / "signal_after_the_last_save.py"
    script.write_text(_SIGNAL_AFTER_THE_LAST_SAVE)
    proc = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    text = " ".join(proc.stderr.split())
    assert proc.returncode in (0, 130), proc.stderr  # (the signal may come once it is over)
    if proc.returncode == 130:
        assert "Every match (6) is stored" in text and "nothing to resume" in text, text
        assert "run the same command again" not in text, text
    assert "Traceback" not in proc.stderr, proc.stderr
    with Storage(tmp_path / "e2e.sqlite") as st:
        assert len(st.completed_indices(st.resolve_tournament(None))) == 6
    assert _marker_processes(marker) == []


_SIGNAL_WHILE_THE_BOTS_CONNECT = """\
import os, signal, sys
import arena.tournament.runner as runner
from arena.cli import main

config = sys.argv[1]
wait = runner._wait_for_bots

async def _wait_for_bots(*args, **kwargs):  # the bots are started, none has played
    os.kill(os.getpid(), signal.SIGTERM)
    await wait(*args, **kwargs)

runner._wait_for_bots = _wait_for_bots
sys.argv = ["arena", "tournament", "--config", config, "--no-progress"]
main()
"""


def test_a_signal_before_the_first_match_says_nothing_was_stored(tmp_path: Path) -> None:
    """Defect (organiser audit 2): a first run stopped while its bots connected said "0
    matches are stored ...; run the same command again to resume (the matches in progress
    ... are played again)": there was nothing to resume, and no match in progress."""
    import subprocess
    import sys

    marker = f"e2e-early-{os.getpid()}"
    path = _config(tmp_path, marker)
    script = tmp_path / "signal_while_the_bots_connect.py"
    script.write_text(_SIGNAL_WHILE_THE_BOTS_CONNECT)
    proc = subprocess.run([sys.executable, str(script), str(path)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    text = " ".join(proc.stderr.split())
    assert proc.returncode == 143, proc.stderr
    assert "Interrupted (SIGTERM) before the first match. Nothing was played or stored" in text
    assert "resume" not in text and "Traceback" not in text, proc.stderr
    with Storage(tmp_path / "e2e.sqlite") as st:
        assert st.tournaments() == []
    assert _marker_processes(marker) == []


_SPAWNER = """\
import subprocess, sys
from sdk.cli import main
arena, token, marker = sys.argv[1:]
# A child that outlives the bot: a crash leaves such children behind.
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker])
sys.argv = ["arena-bot", "run", "random", "--arena", arena, "--token", token,
            "--matches", "1", "--name", marker]
main()
"""


def test_a_bot_that_keeps_dying_is_given_up_and_its_children_stopped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defects: the children of a bot that had exited were never stopped (only a live bot's
    process group was killed), and its last exit, after the last restart, was not reported
    at all. Now every start's children go with it, and the organiser is told that the bot
    is not restarted and the referee plays its seats."""
    marker = f"e2e-spawner-{os.getpid()}"
    spawner = tmp_path / "spawner.py"
    spawner.write_text(_SPAWNER)
    path = _config(tmp_path, marker)
    cfg = load_config(
        path,
        [
            "concurrency=1",
            "referee.reconnect_grace_s=1",
            f'bots.r2.command=["{{python}}", "{spawner}", "{{arena}}", "{{token}}", "{marker}"]',
        ],
    )
    with caplog.at_level("ERROR", logger="arena.tournament.runner"):
        out = run(cfg, RunOptions(progress=False, max_restarts=1))
    assert out.finished and not out.failed
    assert (cfg.out / "logs" / "r2.log").read_text().count("starting r2") == 2
    gave_up = [r.getMessage() for r in caplog.records if "not restarted" in r.getMessage()]
    assert len(gave_up) == 1 and "bot r2 exited with code 0 again, after 1 restarts" in gave_up[0]
    with Storage(cfg.db) as st:
        assert any(r.forfeits for r in st.match_results(cfg.tournament_id))
    assert _marker_processes(marker) == []


def _ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_a_tournament_on_an_ipv6_address(tmp_path: Path, host: str) -> None:
    """Defect: `host = "::1"` could not start the referee (gRPC read "::1:0" as a host
    name), and `host = "[::1]"` started it but told every bot `--arena [[::1]]:PORT`. The
    address is bracketed where it is joined to a port, and a bracketed host is read as
    the address it stands for."""
    marker = f"e2e-ipv6-{os.getpid()}"
    cfg = load_config(_config(tmp_path, marker), [f'host="{host}"'])
    assert cfg.host == "::1"
    out = run(cfg, RunOptions(progress=False))
    assert out.finished and out.played_now == 6 and not out.failed
    assert _marker_processes(marker) == []


_QUITTER = """
import asyncio, os, pathlib, sys
from bots.random_bot import RandomBot
from sdk.client import BotRunner
arena, token, flag = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
first = not flag.exists()
async def main():
    runner = BotRunner(RandomBot, arena, token)
    task = asyncio.create_task(runner.run())
    while first and not runner._welcomed:
        await asyncio.sleep(0.05)
    if first:  # connected: now die, while the other bot is still starting
        flag.write_text("x")
        os._exit(4)
    await task
asyncio.run(main())
"""


def test_a_bot_that_dies_after_connecting_while_others_start_is_restarted(
    tmp_path: Path,
) -> None:
    """Defect (tournament audit 3): a bot that connected and then died while another bot
    was still starting stopped the tournament with "exited with code 4 before connecting"
    (its log said it had connected); a moment later it would have been restarted."""
    marker = f"e2e-early-{os.getpid()}"
    flag = tmp_path / "quitter-died"
    (tmp_path / "quitter.py").write_text(_QUITTER)
    late = (f"import pathlib, sys, time\nwhile not pathlib.Path({str(flag)!r}).exists(): "
            "time.sleep(0.05)\ntime.sleep(1)\nfrom sdk.cli import main\n"
            "main(['run', 'random', '--arena', sys.argv[1], '--token', sys.argv[2]])")  # fmt: skip
    (tmp_path / "late.py").write_text(late)
    extra = (f'quitter = {{ command = ["{{python}}", "{tmp_path / "quitter.py"}", "{{arena}}", '
             f'"{{token}}", "{flag}"] }}\n'
             f'late = {{ command = ["{{python}}", "{tmp_path / "late.py"}", "{{arena}}", '
             '"{token}"] }\n')  # fmt: skip
    cfg = load_config(_config(tmp_path, marker, extra), ["max_deals=1"])
    out = run(cfg, RunOptions(progress=False))
    assert out.finished and not out.failed
    assert (cfg.out / "logs" / "quitter.log").read_text().count("starting quitter") == 2
    assert _marker_processes(marker) == []


def test_a_process_a_bot_starts_in_a_session_of_its_own_does_not_outlive_the_run(
    tmp_path: Path,
) -> None:
    """Defect (bot-process audit): stopping a bot reaches its session; a process it started
    in a session of its own (``setsid``, a daemon) outlived the tournament. `arena
    tournament` adopts its bots' orphans and stops those left at its end."""
    import subprocess
    import sys

    marker = f"e2e-daemon-{os.getpid()}"
    code = ("import os, subprocess, sys; "
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '{marker}'], "
            "start_new_session=True); "
            "os.execv(sys.executable, [sys.executable, '-m', 'sdk.cli', 'run', 'random', "
            "'--arena', sys.argv[1]])")  # fmt: skip
    extra = f'd = {{ command = ["{{python}}", "-c", "{code}", "{{arena}}"] }}\n'
    path = _config(tmp_path, f"{marker}-bot", extra)
    proc = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
         "--config", str(path), "--no-progress", "--max-deals", "1"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    try:
        assert proc.returncode == 0, proc.stderr
        assert _marker_processes(marker) == []
    finally:
        for pid in _marker_processes(marker):
            os.kill(pid, 9)


def test_a_bots_folder_in_the_current_directory_does_not_hide_the_bundled_bots(
    tmp_path: Path,
) -> None:
    """Defect (docs audit): run beside a folder of the organiser's named `bots` (with an
    `__init__.py`), every bundled bot of a tournament died before connecting ("module
    'bots' has no attribute 'BUNDLED'"): `python -m` put the current directory first on
    the path. Bots are launched with `python -P` now."""
    import subprocess
    import sys

    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "__init__.py").write_text("")
    conf = tmp_path / "t.toml"
    conf.write_text('name = "t"\nseed = 1\nmax_deals = 1\nbots = ["random", "heuristic", '
                    '"counting"]\n')  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", "from arena.cli import main; main()", "tournament",
         "--config", str(conf), "--no-progress"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "6/6 stored" in " ".join(proc.stderr.split()), proc.stderr[-2000:]
