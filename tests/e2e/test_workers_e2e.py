"""``arena-bot run SPEC --workers N`` against a real referee (port 0): each match's bot in
a worker process of its own, reported as in the bot's process, and no worker outliving
the bot. The bot is tests/support/pid_bot.py, which writes the pid of every call.

Defect: a bot's calls all ran in threads of its one process, so a CPU-bound bot in three
matches at once (pimc in ``make tournament``) computed on one core: its searches were cut
by the clock in every match, and what it played depended on the machine's load.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.referee import Referee, RefereeConfig, start_server
from sdk.local import resolve_ruleset

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, signals")

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from sdk.cli import main; main()"]
BOT = "tests/support/pid_bot.py:PidBot"
SHORT = resolve_ruleset("classic", max_deals=2)
GUARD = 60.0  # (a guard against a hang, not a timing)


def _spawn(log: Path, *args: str, mode: str = "", group: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PID_BOT_LOG": str(log), "PID_BOT_MODE": mode}
    return subprocess.Popen(
        [*CLI, "run", *args, "--log-level", "info"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
        start_new_session=group,
    )


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie left for its parent to reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _children(pid: int) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                    found.append(int(d.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _gone(pids: list[int], within: float = 10.0) -> list[int]:
    """Those of ``pids`` still alive after waiting up to ``within`` seconds."""
    end = time.monotonic() + within
    while (left := [p for p in pids if _alive(p)]) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def _calls(log: Path) -> list[tuple[str, str, int]]:
    """(match, what, pid) of each call the bot noted."""
    out = []
    for line in log.read_text().splitlines():
        match, what, pid = line.split()
        out.append((match, what, int(pid)))
    return out


async def _play(
    tmp: Path,
    procs: list[subprocess.Popen[str]],
    extra: tuple[str, ...],
    mode: str = "",
    matches: int = 2,
) -> tuple[list[dict[str, object]], int, str, int]:
    """Matches m1.. at once, the bot (with ``extra`` options) in every one of them, with two
    heuristic bots: their records, the bot's exit code, its output and its pid."""
    ref = Referee(RefereeConfig(decision_ms=5000, time_bank_ms=30000))
    for name in ("w", "a", "b"):
        ref.add_bot(name, f"tok-{name}")
    server, port = await start_server(ref, port=0)
    arena = ["--arena", f"127.0.0.1:{port}", "--matches", str(matches)]
    bot = _spawn(tmp / "calls.txt", BOT, *arena, "--token", "tok-w", *extra, mode=mode)
    procs.append(bot)
    for name in ("a", "b"):
        procs.append(_spawn(tmp / "x", "heuristic", *arena, "--token", f"tok-{name}"))
    loop = asyncio.get_running_loop()
    try:
        assert await ref.wait_for_bots(["w", "a", "b"], timeout=GUARD) == []
        seats = [["w", "a", "b"], ["a", "w", "b"], ["a", "b", "w"]]
        records = await asyncio.gather(
            *(ref.run_match(f"m{i + 1}", SHORT, 7, seats[i % 3]) for i in range(matches))
        )
        codes = [await asyncio.wait_for(loop.run_in_executor(None, p.wait), GUARD) for p in procs]
    finally:
        await server.stop(None)
    assert codes[1:] == [0, 0]
    out = bot.stdout.read() if bot.stdout else ""
    return list(records), codes[0], out, bot.pid


def test_matches_at_once_run_in_worker_processes_of_their_own(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    records, code, out, pid = asyncio.run(_play(tmp_path, procs, ("--workers", "2")))
    assert code == 0, out
    assert [r["incidents"] for r in records] == [[], []]
    assert "2 match(es), " in out and "0 bot error(s)" in out
    calls = _calls(tmp_path / "calls.txt")
    # self.match_id and self.deadline set in the worker; the hook it has called, once a match
    assert {what for _, what, _ in calls} == {"start", "act"}
    assert sorted(m for m, what, _ in calls if what == "start") == ["m1", "m2"]
    pids = {m: {p for mm, _, p in calls if mm == m} for m in ("m1", "m2")}
    # each match in one worker for the whole match, the two in two, neither the bot's own
    assert len(pids["m1"]) == len(pids["m2"]) == 1 and pids["m1"] != pids["m2"], pids
    workers = pids["m1"] | pids["m2"]
    assert pid not in workers
    named = re.search(r"run in 2 worker processes \(pids (\d+), (\d+)\)", out)
    assert named is not None and {int(named[1]), int(named[2])} == workers, out
    assert _gone(list(workers)) == []


def _moves(record: dict[str, object]) -> list[tuple[object, ...]]:
    deals = record["deals"]
    assert isinstance(deals, list)
    return [(a["seat"], a["action"], a["by"]) for d in deals for a in d["actions"]]


def _error_lines(out: str) -> list[str]:
    """The bot's error lines and their tracebacks, without the times (and the paths of
    Python's own files, which differ by how the call got there)."""
    lines = []
    for line in out.splitlines():
        if " sdk.client: done (" in line:
            lines.append(line.split(" ", 2)[2])
        elif "ERROR" in line or line.startswith(('  File "' + str(ROOT / "tests"), "ValueError")):
            lines.append(line.split(" ", 2)[2] if "ERROR" in line else line)
    return lines


def test_a_bot_raising_in_a_worker_is_reported_as_in_its_own_process(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "w").mkdir()
    threads = asyncio.run(_play(tmp_path / "t", procs, (), mode="raise", matches=1))
    procs.clear()
    workers = asyncio.run(_play(tmp_path / "w", procs, ("--workers", "2"), "raise", matches=1))
    for records, code, out, _ in (threads, workers):
        assert code == 0, out
        # the runner sent the fallback, a legal move, saying the decision failed: a
        # bot_error of the bot's seat each time (listed up to the referee's limit), no strike
        incidents = records[0]["incidents"]
        assert incidents and {(i["kind"], i["seat"]) for i in incidents} == {("bot_error", 0)}
        assert all("decision failed (ValueError)" in i["detail"] for i in incidents)
    assert threads[0][0]["incidents"] == workers[0][0]["incidents"]
    # the same moves (the fallback for every card), the same lines: the first with its
    # traceback ending at the bot's line, the rest counted ("again ... N times so far")
    assert _moves(threads[0][0]) == _moves(workers[0][0])
    lines = _error_lines(threads[2])
    assert lines == _error_lines(workers[2]), workers[2]
    assert "PidBot.act() (pid_bot.py:" in lines[0] and "raised in deal 1 (playing)" in lines[0]
    assert any('pid_bot.py", line ' in x for x in lines) and "ValueError: boom" in lines
    assert any("ValueError again in act (pid_bot.py:" in x for x in lines)
    assert "bot error(s)" in lines[-1] and " 0 bot error(s)" not in lines[-1]


def test_a_worker_that_dies_mid_call_is_replaced_and_the_run_goes_on(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    records, code, out, _ = asyncio.run(
        _play(tmp_path, procs, ("--workers", "1"), mode="die", matches=1)
    )
    assert code == 0, out
    [incident] = records[0]["incidents"]  # the one decision the dead worker failed
    assert incident["kind"] == "bot_error" and "(its worker process failed)" in incident["detail"]
    assert re.search(r"did not answer in deal \d \(playing\): its worker process \d+ died, "
                     r"exit code 3; playing", out), out  # fmt: skip
    assert out.count("its calls go to a fresh worker") == 1, out
    calls = _calls(tmp_path / "calls.txt")
    first, last = calls[0][2], calls[-1][2]
    assert first != last and not _alive(first)  # it played on in the fresh worker
    assert "1 match(es)" in out and "1 bot error(s)" in out


@pytest.mark.parametrize("how", ["SIGTERM", "SIGTERM to the session", "SIGKILL", "Ctrl-C"])
def test_no_worker_outlives_the_bot(
    how: str, tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    async def main() -> tuple[int, list[int]]:
        ref = Referee(RefereeConfig())
        ref.add_bot("w", "tok")
        server, port = await start_server(ref, port=0)
        bot = _spawn(tmp_path / "calls.txt", BOT, "--arena", f"127.0.0.1:{port}", "--token",
                     "tok", "--workers", "2", group=True)  # fmt: skip
        procs.append(bot)
        try:
            assert await ref.wait_for_bots(["w"], timeout=GUARD) == []
            # the workers (and multiprocessing's resource tracker, which goes with them)
            workers = _children(bot.pid)
            assert len(workers) >= 2, workers
            if how == "SIGTERM to the session":  # as the tournament runner stops a bot
                os.killpg(bot.pid, signal.SIGTERM)
            elif how == "Ctrl-C":  # the terminal's SIGINT reaches the whole group
                os.killpg(bot.pid, signal.SIGINT)
            else:
                bot.send_signal(getattr(signal, how))
            loop = asyncio.get_running_loop()
            code = await asyncio.wait_for(loop.run_in_executor(None, bot.wait), GUARD)
        finally:
            await server.stop(None)
        return code, workers

    code, workers = asyncio.run(main())
    out = procs[0].stdout.read() if procs[0].stdout else ""
    if how == "SIGKILL":
        assert code == -signal.SIGKILL
    else:  # a clean stop, as without workers
        assert code == 0, out
        assert "Traceback" not in out, out
    assert _gone(workers) == [], out


def test_a_tournament_with_pimc_in_worker_processes_completes(tmp_path: Path) -> None:
    """``make tournament``'s set-up, small: pimc with ``workers = 2`` at concurrency 2."""
    from arena.storage import Storage
    from arena.tournament import RunOptions, load_config, run

    path = tmp_path / "t.toml"
    path.write_text(f"""
name = "workers"
seed = 5
max_deals = 1
concurrency = 2
db = "{tmp_path / "t.sqlite"}"
out = "{tmp_path / "out"}"
[bots]
pimc = {{ bot = "pimc", workers = 2 }}
heuristic = "heuristic"
random = "random"
""")  # fmt: skip
    cfg = load_config(path)
    outcome = run(cfg, RunOptions(progress=False))
    assert outcome.finished and outcome.completed == 6 and not outcome.failed
    with Storage(cfg.db) as st:
        for r in st.match_results(cfg.tournament_id):
            assert st.load_record(r.match_id)["incidents"] == []
    log = (cfg.out / "logs" / "pimc.log").read_text()
    named = re.search(r"run in 2 worker processes \(pids (\d+), (\d+)\)", log)
    assert named is not None, log
    assert "6 match(es)" in log and "0 bot error(s)" in log, log
    assert _gone([int(named[1]), int(named[2])]) == []


def test_a_call_that_never_returns_does_not_hold_the_exit(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    """SIGTERM while the bot's act() never returns in its worker: the bot exits cleanly
    after its grace (as with threads), and its worker, stuck in the call, is killed."""
    calls = tmp_path / "calls.txt"

    async def main() -> tuple[int, list[int]]:
        ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=300))
        for name in ("w", "a", "b"):
            ref.add_bot(name, f"tok-{name}")
        server, port = await start_server(ref, port=0)
        arena = ["--arena", f"127.0.0.1:{port}"]
        bot = _spawn(calls, BOT, *arena, "--token", "tok-w", "--workers", "1", mode="hang")
        procs.append(bot)
        for name in ("a", "b"):
            procs.append(_spawn(tmp_path / "x", "heuristic", *arena, "--token", f"tok-{name}"))
        loop = asyncio.get_running_loop()
        try:
            assert await ref.wait_for_bots(["w", "a", "b"], timeout=GUARD) == []
            match = asyncio.create_task(ref.run_match("m1", SHORT, 7, ["w", "a", "b"]))
            end = time.monotonic() + GUARD
            while not (calls.exists() and " hang " in calls.read_text()):
                assert time.monotonic() < end and not match.done()
                await asyncio.sleep(0.05)
            workers = _children(bot.pid)
            bot.send_signal(signal.SIGTERM)
            # (the call never ends: the bot exits within GUARD only by its grace, 5 s, and
            # its workers' stop)
            code = await asyncio.wait_for(loop.run_in_executor(None, bot.wait), GUARD)
            for p in procs[1:]:
                p.terminate()
            await match
        finally:
            await server.stop(None)
        return code, workers

    code, workers = asyncio.run(main())
    out = procs[0].stdout.read() if procs[0].stdout else ""
    assert code == 0, out
    hung = {p for m, what, p in _calls(calls) if what == "hang"}
    assert hung <= set(workers) and _gone(workers) == [], out


def test_a_bot_leaving_from_a_worker_leaves_as_from_its_own_process(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    """``SystemExit(4)`` in act(), in a worker: the bot stops with its exit code, as with
    threads (the referee plays its seat to the end)."""
    records, code, out, _ = asyncio.run(
        _play(tmp_path, procs, ("--workers", "1"), mode="exit", matches=1)
    )
    assert code == 4, out
    assert records[0]["result"]  # (played to its end)
    assert "stopping: the bot left (exit code 4)" in out
    assert "Traceback" not in out, out
