"""An organiser's remote bot that dies for good, through the CLI (docs/tournament.md).

`arena tournament --config` with three bundled bots and one remote bot; the remote bot
runs as `arena-bot run random --arena ... --token ...` in a process of its own, is killed
with SIGKILL after its first match and started again once the arena has said it is gone.
What the docs promise: the match it was away from waits its grace and forfeits; every
later match of its that starts without it forfeits at once, stored with the quoted
`disconnect` and `forfeit` incidents; the arena's line saying so appears once; the
leaderboard and `arena replay` say it forfeited; back, it plays its remaining matches.
The in-process tests (tests/arena/test_limits_round43.py) drive the runner with stub
sessions; this one runs the commands an organiser pastes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "organiser43-friend-token"
GRACE_S = 2
DEADLINE_S = 120.0  # generous: the machine is shared


def _wait_for(what: str, check: Callable[[], bool], procs: list[subprocess.Popen[str]]) -> None:
    """Poll ``check`` until true; fail naming ``what`` if a process ended or time ran out."""
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        assert procs[0].poll() is None, f"the arena exited while waiting for {what}"
        time.sleep(0.05)


def test_a_remote_bot_killed_after_its_first_match_forfeits_then_plays_on_when_back(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    try:
        _organise(tmp_path, procs)
    finally:
        # On a failure, the arena is stopped as an organiser would (SIGTERM), so that it
        # stops its local bots too; `procs` then kills whatever is left.
        if procs and procs[0].poll() is None:
            procs[0].terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                procs[0].wait(timeout=30)


def _organise(tmp_path: Path, procs: list[subprocess.Popen[str]]) -> None:
    (tmp_path / "t.toml").write_text(
        f"""name = "org43"
ruleset = "classic"
matches_per_table = 2
max_deals = 6
concurrency = 1
host = "127.0.0.1"
port = 0
bot_wait_s = 60
db = "runs/org43.sqlite"
out = "out/org43"

[referee]
reconnect_grace_s = {GRACE_S}

[bots]
heuristic = "heuristic"
counting = "counting"
random = "random"
friend = {{ remote = true, token = "{TOKEN}" }}
"""
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARENA_TOKEN", None)
    arena_err, arena_out = tmp_path / "arena.err", tmp_path / "arena.out"
    # (to files: a pipe nobody reads until the end would block the arena once full)
    with arena_err.open("w") as err, arena_out.open("w") as out:
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
             "--config", "t.toml", "--no-progress"],
            cwd=tmp_path, env=env, stdout=out, stderr=err, text=True,
        ))  # fmt: skip
    arena = procs[0]
    # (the whole address: the line read up to the words after it, not a port half written)
    said_address = re.compile(r"connect them to (127\.0\.0\.1:\d+) with their token")
    _wait_for(
        "the address to connect to",
        lambda: said_address.search(arena_err.read_text()) is not None,
        procs,
    )
    found = said_address.search(arena_err.read_text())
    assert found, arena_err.read_text()
    address = found.group(1)

    def start_friend(log: Path) -> subprocess.Popen[str]:
        with log.open("w") as out:
            p = subprocess.Popen(
                [sys.executable, "-m", "sdk.cli", "run", "random", "--arena", address,
                 "--token", TOKEN],
                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
        procs.append(p)
        return p

    first_log, second_log = tmp_path / "friend1.log", tmp_path / "friend2.log"
    first = start_friend(first_log)
    _wait_for(
        "the remote bot's first match to end", lambda: " ended:" in first_log.read_text(), procs
    )
    first.send_signal(signal.SIGKILL)
    assert first.wait(timeout=30) == -signal.SIGKILL
    gone_line = "it forfeits every match that starts without it until it reconnects"
    _wait_for("the arena to say the bot is gone", lambda: gone_line in arena_err.read_text(), procs)
    # Back only once a match has been stored forfeited at once (read from the database).
    db_path = tmp_path / "runs" / "org43.sqlite"

    def forfeited_at_once() -> bool:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
        try:
            rows = db.execute("SELECT record_json FROM matches").fetchall()
        except sqlite3.OperationalError:  # (busy)
            return False
        finally:
            db.close()
        return any("has not come back since" in rec for (rec,) in rows if rec)

    _wait_for("a match forfeited at once", forfeited_at_once, procs)
    second = start_friend(second_log)

    arena.wait(timeout=DEADLINE_S)
    screen, stderr = arena_out.read_text(), arena_err.read_text()
    assert arena.returncode == 0, stderr[-3000:]
    # Told the tournament is over, the remote bot ends with 0.
    assert second.wait(timeout=DEADLINE_S) == 0, second_log.read_text()[-2000:]

    # The arena's line, as docs/tournament.md quotes it, appears once.
    said = [line for line in stderr.splitlines() if gone_line in line]
    assert len(said) == 1, said
    waited = re.search(rf"bot friend stayed away more than {GRACE_S} s \(match (\S+)\): ", said[0])
    assert waited, said[0]
    waited_id = waited.group(1)

    db = sqlite3.connect(db_path)
    try:
        rows = db.execute("SELECT id, seats_json, record_json FROM matches ORDER BY idx").fetchall()
    finally:
        db.close()
    assert len(rows) == 48
    mine = []  # (match id, friend's seat, record) of the friend's matches, in order
    for mid, seats, rec in rows:
        names = json.loads(seats)
        if "friend" in names:
            mine.append((mid, names.index("friend"), json.loads(rec)))
    assert len(mine) == 36

    def incidents(rec: dict, seat: int) -> list[tuple[str, str]]:
        return [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == seat]

    # Its first match: played in full, no incident.
    assert mine[0][2]["forfeits"] == [] and incidents(mine[0][2], mine[0][1]) == []
    # The next one is the match it was away from: waited its grace, then forfeited.
    assert mine[1][0] == waited_id
    assert mine[1][2]["forfeits"] == [mine[1][1]]
    assert ("forfeit", f"disconnected for more than {GRACE_S} s") in incidents(
        mine[1][2], mine[1][1]
    )
    # Every later match that started without it: forfeited at once, with the docs' words.
    at_once = [
        ("disconnect", "not connected at the start; forfeits at once"),
        ("forfeit", f"not connected at the start: it stayed away more than {GRACE_S} s in "
                    f"match {waited_id} and has not come back since"),
    ]  # fmt: skip
    rest = mine[2:]
    forfeited = [m for m in rest if m[2]["forfeits"]]
    played = [m for m in rest if not m[2]["forfeits"]]
    assert forfeited, "no match forfeited at once: was the bot back before the next one?"
    for mid, seat, rec in forfeited:
        assert incidents(rec, seat) == at_once, mid
        assert rec["forfeits"] == [seat]
        assert rec["result"]["places"][seat] == 3, mid  # placed last
    # Back, it plays its remaining matches: the forfeits come first, then none.
    assert played, "the restarted bot played none of its remaining matches"
    assert rest == forfeited + played
    for mid, seat, rec in played:
        # (one that started while its new stream said Hello may hold a disconnect)
        assert "forfeit" not in {kind for kind, _ in incidents(rec, seat)}, mid
    # It was seated in every match from its return on (the one under way when it came
    # back, already forfeited, then every other).
    done = re.search(
        r"done \(the arena closed the stream\): (\d+) match\(es\)", second_log.read_text()
    )
    assert done, second_log.read_text()[-2000:]
    assert len(played) <= int(done.group(1)) <= len(played) + 1

    # The leaderboard counts its forfeits (and a disconnect with each).
    board = json.loads((tmp_path / "out" / "org43" / "leaderboard.json").read_text())
    (row,) = [r for r in board["rows"] if r["bot"] == "friend"]
    assert row["strikes"]["forfeits"] == 1 + len(forfeited)
    assert row["strikes"]["disconnects"] >= 1 + len(forfeited)
    # and so does the screen's table (strikes: timeouts/illegal/disconnects/forfeits)
    on_screen = re.search(r"│ friend .*│ 0/0/\d+/(\d+) │", screen)
    assert on_screen, screen
    assert int(on_screen.group(1)) == 1 + len(forfeited)

    # `arena replay ID` of a match forfeited at once says so, with the stored reason.
    mid = forfeited[0][0]
    shown = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "replay", mid,
         "--db", "runs/org43.sqlite"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=DEADLINE_S,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    seat = forfeited[0][1]
    assert f"friend ({seat}) forfeited and placed last" in shown.stdout
    assert (
        f"friend ({seat}): forfeited in deal 1 (not connected at the start: it stayed away "
        f"more than {GRACE_S} s in match {waited_id} and has not come back since)"
    ) in shown.stdout


CRASH_BOT = """\
import os

from bots.random_bot import RandomBot


class CrashBot(RandomBot):
    \"\"\"Connects, is seated, and exits with code 7 at its first decision.\"\"\"

    name = "crash"

    def act(self, view):
        os._exit(7)
"""


def test_a_local_bot_given_up_after_its_restarts_forfeits_its_later_matches_at_once(
    tmp_path: Path,
) -> None:
    """A command bot that always exits 7 after connecting: restarted 3 times, then given
    up; each later match of its forfeits at once, with the `forfeit` the docs quote."""
    bot_file = tmp_path / "crash.py"
    bot_file.write_text(CRASH_BOT)
    (tmp_path / "t.toml").write_text(
        f"""name = "org43local"
ruleset = "classic"
matches_per_table = 1
max_deals = 3
concurrency = 1
port = 0
bot_wait_s = 60
db = "runs/l.sqlite"
out = "out/l"

[referee]
reconnect_grace_s = {GRACE_S}

[bots]
heuristic = "heuristic"
counting = "counting"
random = "random"
crash = {{ command = "{{python}} -m sdk.cli run {bot_file}:CrashBot --arena {{arena}}" }}
"""
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
         "--config", "t.toml", "--no-progress"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _, stderr = run.communicate(timeout=DEADLINE_S)
    finally:
        # On a timeout (or an interrupt), stopped as an organiser would (SIGTERM): it stops
        # its bots, in sessions of their own that a SIGKILL of the arena would leave.
        if run.poll() is None:
            run.terminate()
            try:
                run.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                run.kill()
                run.communicate()
    assert run.returncode == 0, stderr[-3000:]
    for n in (1, 2, 3):
        assert f"bot crash exited with code 7; restarting it ({n}/3)" in stderr
    assert (
        "bot crash exited with code 7 again, after 3 restarts: not restarted; the referee "
        "plays its seats to the end (strikes, then forfeits)"
    ) in stderr
    runner_lines = [
        line.split(" ", 2)[2]
        for line in (tmp_path / "out" / "l" / "logs" / "crash.log").read_text().splitlines()
        if line.startswith("--- ") and "exited" in line
    ]
    assert runner_lines == [
        "exited with code 7; restarting it (1/3)",
        "exited with code 7; restarting it (2/3)",
        "exited with code 7; restarting it (3/3)",
        "exited with code 7 again, after 3 restarts: not restarted; the referee plays its "
        "seats to the end",
    ]

    db = sqlite3.connect(tmp_path / "runs" / "l.sqlite")
    try:
        rows = db.execute("SELECT seats_json, record_json FROM matches ORDER BY idx").fetchall()
    finally:
        db.close()
    mine = [
        (json.loads(seats).index("crash"), json.loads(rec))
        for seats, rec in rows
        if "crash" in json.loads(seats)
    ]
    assert len(rows) == 24 and len(mine) == 18
    # The matches it died in (its first and every restart: one match, or, on a loaded
    # machine where a restart outlasts the grace, up to four): each waited for, then
    # forfeited after its grace.
    at_once = [
        ("disconnect", "not connected at the start; forfeits at once"),
        ("forfeit", "not connected at the start: its process exited with code 7 again, "
                    "after 3 restarts, and is not restarted"),
    ]  # fmt: skip
    incidents = [
        [(i["kind"], i["detail"]) for i in rec["incidents"] if i["seat"] == seat]
        for seat, rec in mine
    ]
    first = incidents.index(at_once)
    assert 1 <= first <= 4, incidents
    for (seat, rec), said in zip(mine[:first], incidents[:first], strict=True):
        assert rec["forfeits"] == [seat]
        assert ("forfeit", f"disconnected for more than {GRACE_S} s") in said, said
    # Every later one: forfeited at once, in the docs' words.
    for (seat, rec), said in zip(mine[first:], incidents[first:], strict=True):
        assert rec["forfeits"] == [seat]
        assert said == at_once, said
