"""Review of round 34's changes (dd7107c..): what a reviewer checked on the paths the new
tests do not take, pinned. No defect was found in these; each test says what it pins.

- ``arena-bot run``'s stop of what a tournament-launched bot left running
  (``sdk.cli._stop_what_the_bot_left``): nothing for a bot run by hand; multiprocessing's
  resource tracker is left to end by itself; a bot that leads no session stops its own
  descendants only, never another process of the session it sits in;
- the loop-stall meter (``arena.referee.lag``): one per event loop, a stall of one loop
  never excusing time on another (a referee per thread), and no loop kept alive;
- "the latest tournament" by ``rowid``: the order survives SQLite's ``VACUUM`` and the
  ``VACUUM INTO`` that the storage writes a lost file back with, and ``--fresh`` makes
  the tournament it starts again the latest;
- ``arena.web.replay.view_json`` reading a ``PlayerView`` as ``engine.observe`` makes it:
  the seats of a 4-player table's tricks (the dealer sits out), the passed cards hidden
  from a seat, the points each seat took.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest

from arena.referee.lag import LoopLag, loop_lag
from arena.storage import Storage
from arena.web.replay import view_json
from engine import DECK, Game, card_points, cards_from_mask, observe
from sdk import Bot

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Linux's /proc and parent-death signal"
)

# ------------------------------------------------ what a launched bot leaves running

#: Run as a bot process would be: starts multiprocessing's resource tracker, a child, a
#: child in a session of its own, and an orphan (a grandchild whose parent has exited);
#: then, as ``arena-bot run`` does as it exits, ``_stop_what_the_bot_left`` (with the
#: launcher set when argv[1] is "launched", as ``_die_with_launcher`` sets it for a bot
#: that a tournament started); prints which of them still run.
_LEFT = """
import json, os, subprocess, sys, time
from multiprocessing import resource_tracker
import sdk.cli as cli

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
resource_tracker.ensure_running()
tracker = resource_tracker._resource_tracker._pid
QUIET = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}  # (no pipe of ours)
child = subprocess.Popen(SLEEP, **QUIET)
own = subprocess.Popen(SLEEP, start_new_session=True, **QUIET)
mid = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen("
                        "sys.argv[1:], stdout=subprocess.DEVNULL).pid, flush=True)", *SLEEP],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
orphan = int(mid.stdout.readline())
mid.wait()
if sys.argv[1] == "launched":
    cli._launcher = os.getppid()
cli._stop_what_the_bot_left()
pids = {"tracker": tracker, "child": child.pid, "own": own.pid, "orphan": orphan}
print(json.dumps({"pids": pids, "running": {k: cli._running(p) for k, p in pids.items()}}))
"""


def _run_left(mode: str, *, session: bool) -> tuple[dict[str, bool], str]:
    """The script above as a process of its own (leading a session, as a tournament starts
    its bots, when ``session``): what of its processes still ran after the stop, and what
    it wrote on stderr. Every process it started that still runs is killed here."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run(
        [sys.executable, "-c", _LEFT, mode],
        capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60,
        start_new_session=session,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    running: dict[str, bool] = out["running"]
    for name, pid in out["pids"].items():
        if running[name] and name != "tracker":  # (it ends by itself: its pipe is closed)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return running, proc.stderr


def test_a_launched_bot_stops_its_children_its_sessions_orphans_not_the_resource_tracker() -> None:
    """A bot a tournament launched, leading its session: its child, its child in a session
    of its own and the orphan left in its session are stopped as it exits (saying so);
    multiprocessing's resource tracker (a child too) is not: it ends by itself once the
    bot has, after cleaning up what the bot's processes registered."""
    running, err = _run_left("launched", session=True)
    assert running == {"tracker": True, "child": False, "own": False, "orphan": False}, err
    assert "exiting: stopping 3 processes the bot left running" in err


def test_a_bot_run_by_hand_stops_nothing_it_started() -> None:
    """A bot not launched by a tournament (no launcher known: run by hand, by a script, by
    a supervisor): its processes are its own business, nothing is stopped or said."""
    running, err = _run_left("by hand", session=True)
    assert running == {"tracker": True, "child": True, "own": True, "orphan": True}
    assert err == ""


def test_a_launched_bot_that_leads_no_session_stops_only_its_descendants() -> None:
    """A launched bot that is not the leader of its session (a wrapper started it in the
    launcher's): its own descendants are stopped, never the other processes of the session
    it shares (here: a sibling of the test's). An orphan of its own that left its tree is
    out of reach then (it is in the shared session: not told from the others)."""
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        running, err = _run_left("launched", session=False)
        assert sibling.poll() is None  # the session's other process: untouched
        # (the orphan is killed by _run_left, after)
        assert running == {"tracker": True, "child": False, "own": False, "orphan": True}, err
        assert "exiting: stopping 2 processes the bot left running" in err
    finally:
        sibling.kill()
        sibling.wait()


# ----------------------------------------------------------------- the stall meter


def test_each_loop_has_its_own_stall_meter_and_a_stall_of_one_excuses_nothing_on_another() -> None:
    """Two referees' loops, each in a thread of its own (as tests and an embedding program
    run them): ``loop_lag`` gives each loop its own meter, and a stall of one (its clock
    moved on by 2 s while a decision is pending) is counted on that one only. Neither loop
    is kept alive by its meter once it is closed."""
    results: dict[str, float] = {}
    refs: list[weakref.ref[asyncio.AbstractEventLoop]] = []
    both = threading.Barrier(2)
    stalled = threading.Event()

    async def referee(name: str, stall: bool) -> None:
        loop = asyncio.get_running_loop()
        refs.append(weakref.ref(loop))
        base = loop.time()
        offset = 0.0
        loop.time = lambda: base + offset  # type: ignore[method-assign]  # (no real time)
        lag = loop_lag(loop)
        assert loop_lag(loop) is lag and isinstance(lag, LoopLag)
        lag.hold()
        both.wait(30)  # (both meters made, both ticking)
        if stall:
            offset += 2.0
        else:
            assert stalled.wait(30)  # (read after the other loop's stall)
        for _ in range(3):
            await asyncio.sleep(0)  # (the tick runs)
        results[name] = lag.stalled()
        if stall:
            stalled.set()
        both.wait(30)  # (both read before either loop ends)
        lag.release()
        for _ in range(3):
            await asyncio.sleep(0)

    threads = [
        threading.Thread(target=asyncio.run, args=(referee("stalled", True),)),
        threading.Thread(target=asyncio.run, args=(referee("other", False),)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results["stalled"] == pytest.approx(2.0 - LoopLag.PERIOD - LoopLag.TOLERANCE)
    assert results["other"] == 0.0
    gc.collect()
    assert [r() for r in refs] == [None, None]


# ----------------------------------------------------------- the latest tournament


def _store(st: Storage, tid: str) -> None:
    st.ensure_tournament(tid, name=tid.split("-")[0], fingerprint="f", config={},
                         total_matches=1, bots=[("a", "random")])  # fmt: skip


def test_the_latest_tournament_survives_vacuum_and_the_written_back_copy(tmp_path: Path) -> None:
    """The latest is the last stored (``rowid``), and ``tournaments`` lists them in that
    order: a tournament deleted between others, then SQLite's ``VACUUM`` (an operator's
    maintenance) and ``VACUUM INTO`` (what the storage writes a lost file back with) keep
    the order, and the latest, of the tournaments left. ``--fresh`` (delete and store
    again, in one transaction) makes the tournament it starts again the latest."""
    db = tmp_path / "db.sqlite"
    with Storage(db) as st:
        for tid in ("zeta-1", "alpha-2", "mid-3", "beta-4"):
            _store(st, tid)
        st.delete_tournament("alpha-2")
        # (the clock set back for the last one: created_at says nothing of the order)
        st.conn.execute("UPDATE tournaments SET created_at = '2000-01-01' WHERE id = 'beta-4'")
        st.conn.commit()
    order = ["zeta-1", "mid-3", "beta-4"]
    with contextlib.closing(sqlite3.connect(db)) as c:
        c.execute("VACUUM")
        c.execute("VACUUM INTO ?", (str(tmp_path / "copy.sqlite"),))
    for path in (db, tmp_path / "copy.sqlite"):
        with Storage(path) as st:
            assert [t.id for t in st.tournaments()] == order
            assert st.latest_tournament() == "beta-4" == st.resolve_tournament(None)
    with Storage(db) as st:
        st.ensure_tournament("zeta-1", name="zeta", fingerprint="g", config={},
                             total_matches=1, bots=[("a", "random")], replace=True)  # fmt: skip
        assert st.latest_tournament() == "zeta-1" == st.resolve_tournament("zeta")
        assert [t.id for t in st.tournaments()] == ["mid-3", "beta-4", "zeta-1"]


# --------------------------------------------------------------------- view_json


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_view_json_of_every_view_of_random_matches(preset: str) -> None:
    """Every seat's view at every step of random matches, as ``view_json`` gives it (it
    reads the engine's ``PlayerView`` directly since round 34): each trick's cards carry the
    seats the engine says played them (at 4 players the dealer sits out: never a seat of a
    trick), a passed card is shown to the declarer and to its receiver only, and the points
    taken are the trick cards' points plus the marriages' values."""
    n = 4 if preset == "1001-4p" else 3
    for seed in range(3):
        g = Game.new(preset, seed=seed, players=[f"p{i}" for i in range(n)])
        rng = random.Random(seed)
        steps = 0
        while not g.is_over and steps < 300:
            for s in range(n):
                v = observe(g, s)
                j = view_json(v)
                assert j["phase"] == v.phase.name and len(j["hands"]) == n
                assert [h is not None for h in j["hands"]] == [i == s for i in range(n)]
                for t, tj in zip(v.tricks, j["tricks"], strict=True):
                    assert [c["seat"] for c in tj["cards"]] == [seat for seat, _ in t.cards]
                    assert set(c["seat"] for c in tj["cards"]) <= set(v.active_seats)
                    assert (tj["leader"], tj["winner"]) == (t.leader, t.winner)
                for (to, card), gj in zip(v.gives, j["gives"], strict=True):
                    assert gj["from"] == v.declarer and gj["to"] == to
                    assert (gj["card"] is None) == (card is None)
                    assert (card is not None) == (s in (v.declarer, to))
                takes = [0] * n
                for t in v.tricks:
                    takes[t.winner] += card_points(c for _, c in t.cards)
                for m in j["marriages"]:
                    takes[m["seat"]] += m["value"]
                assert j["takes"] == takes
            g.apply(rng.choice(g.legal_actions()), seat=g.to_act)
            steps += 1


# ------------------------------------------------------------ the cards of a mask


def _lines_run(mask: int) -> int:
    """How many lines of Python ``cards_from_mask(mask)`` runs (every frame it calls)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        cards_from_mask(mask)
    finally:
        sys.settrace(None)
    return count


def test_the_cards_of_a_mask_cost_as_many_steps_as_cards_not_the_whole_deck() -> None:
    """Defect (round 34, commit 9438f65): ``sdk.sampling`` dropped its own cards-of-a-mask,
    which walked only the set bits, for ``engine.tables.cards_of`` (``cards_from_mask``),
    which tests all 24 of the deck: a sampled deal (three hands and a talon of 3 to 10
    cards) cost 16% more (21.3 → 25.2 µs a sample, measured alternately in one process on
    40 views of play), on the path a sampling bot (pimc) runs thousands of times a
    decision; so did each hand ``observe`` makes. It walked the set bits then; since round
    47 it looks each byte of the mask up in a table (8 cards 0.7 → 0.18 µs): the whole
    deck costs no more steps than one card, and a mask's bits past the deck's 24 are
    still ignored."""
    one, deck = _lines_run(1 << 17), _lines_run((1 << 24) - 1)
    assert deck <= one, (one, deck)
    assert deck <= _lines_run(0)
    assert cards_from_mask(0) == ()
    assert cards_from_mask((1 << 24) - 1) == DECK
    assert cards_from_mask(-1) == DECK and cards_from_mask(1 << 24 | 1 << 5) == (DECK[5],)
    rng = random.Random(34)
    for _ in range(200):
        mask = rng.getrandbits(24)
        assert cards_from_mask(mask) == tuple(c for c in DECK if mask >> int(c) & 1)


#: A launched bot that used multiprocessing's fork server (the default start method from
#: Python 3.14 on; here asked for by name), its process done and joined; then its exit's
#: stop, as above. Prints whether the fork server and the resource tracker still run.
_FORKSERVER = """
import json, multiprocessing, os, sys
from multiprocessing import forkserver, resource_tracker
import sdk.cli as cli

if __name__ == "__main__":
    p = multiprocessing.get_context("forkserver").Process(target=print)
    p.start()
    p.join()
    pids = {"forkserver": forkserver._forkserver._forkserver_pid,
            "tracker": resource_tracker._resource_tracker._pid}
    cli._launcher = os.getppid()
    cli._stop_what_the_bot_left()
    print(json.dumps({k: cli._running(pid) for k, pid in pids.items()}))
"""


def test_a_launched_bot_leaves_multiprocessings_fork_server_to_end_by_itself(
    tmp_path: Path,
) -> None:
    """Defect: a launched bot that had used multiprocessing's fork server (Python 3.14's
    default start method on Linux) stopped it at every exit, with a warning that it had
    left a process running, though the fork server, like the resource tracker (left
    alone), ends by itself once the bot has exited. Both are left alone now, nothing said;
    the processes forked from it (the bot's own) would still be stopped."""
    script = tmp_path / "fs.py"
    script.write_text(_FORKSERVER)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60,
        start_new_session=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {
        "forkserver": True,
        "tracker": True,
    }
    assert "the bot left running" not in proc.stderr, proc.stderr


# ------------------------------------------- a message the arena refused as too large


class _First(Bot):
    """A bot that plays its first legal action (it is never asked here)."""

    def act(self, view: Any) -> Any:
        return view.legal_actions[0]


def test_a_message_of_the_bots_over_the_arenas_limit_is_not_said_as_the_arenas() -> None:
    """Defect (round 34's words for a message over the receive limit): gRPC says so of
    either side's limit, "Received message larger than max (N vs. M)", the arena's with
    "SERVER: " before it. A bot whose Hello was over the arena's limit (a name of 5000
    characters, against an arena reading 1 KiB) was told "the arena at ... sent a message
    of 5041 bytes, over the 1024 bytes this bot reads": the other way round (before round
    34 it printed gRPC's words as they were). Now the arena refused a message of the bot's,
    and the bot still stops (it would send the same again)."""
    import grpc

    from sdk.client import ArenaError, BotRunner

    async def play(requests: Any, context: Any) -> Any:
        async for _ in requests:  # (never: the Hello is refused before it is read)
            yield b""

    async def main() -> str:
        # (200 bytes: the SDK cuts a name to the 256 characters a Hello may hold, round 49)
        server = grpc.aio.server(options=[("grpc.max_receive_message_length", 200)])
        handler = grpc.method_handlers_generic_handler("arena.v1.Arena", {
            "Play": grpc.stream_stream_rpc_method_handler(play)})  # fmt: skip
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            runner = BotRunner(_First, f"127.0.0.1:{port}", "tok", name="n" * 5000,
                               retry_for=10)  # fmt: skip
            with pytest.raises(ArenaError) as e:
                await asyncio.wait_for(runner.run(), 60)
            return str(e.value)
        finally:
            await server.stop(0)

    said = asyncio.run(main())
    assert said.startswith("the arena at 127.0.0.1:") and " refused a message of " in said
    assert said.endswith(" bytes from this bot, over the 200 bytes it reads (the bot "
                         "would send it again)"), said  # fmt: skip
    assert " sent a message of " not in said
