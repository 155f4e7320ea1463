"""Mutation review, round 34: tests that kill hand-made bugs in the code changed on
2026-12-04 which no other test noticed (the loop-stall meter's state after an idle tick
and with several decisions pending, a forfeit's time taken at the forfeit, the grace period
against stalls from before the disconnect, and the solver charging its budget exactly once
per node). Each pins behaviour that is right today: no defect was found by these."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.referee import Referee, RefereeConfig
from arena.referee import match as match_mod
from arena.referee.lag import LoopLag
from arena.referee.sessions import BotSession
from arena.storage import Storage
from arena.tournament import RunOptions, TournamentError, run_tournament
from arena.tournament.config import parse_config
from arena.v1 import arena_pb2 as pb
from bots._dds import Budget, Solver
from engine.cards import mask_of
from tests.arena.fake_referee import FakeReferee
from tests.hostile.test_hostile_round34 import ONE_DEAL, _attach, _Clock, _decide, _replays
from tests.support.harness import no_error_logged  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("no_error_logged")

ROOT = Path(__file__).resolve().parents[2]


def _x_first(rec: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in rec["deals"][0]["actions"] if a["seat"] == 0 and a["by"] != "forced")


# ------------------------------------------------------------------ the loop-stall meter


def test_time_with_nothing_pending_is_no_stall_after_the_meter_went_idle() -> None:
    """The meter stops at the first tick that finds no decision pending, and says so
    (``_ticking`` cleared): the next ``hold`` arms it afresh. Left "ticking" with no timer
    (mutant), the next ``hold`` armed nothing and ``stalled`` counted all the idle time
    since the last tick as the loop's stall: every decision after a pause would be excused
    for ever."""

    async def main() -> tuple[float, float]:
        clock = _Clock()
        lag = LoopLag(asyncio.get_running_loop())
        lag.hold()
        lag.release()
        await asyncio.sleep(5 * LoopLag.PERIOD)  # (after the tick, which finds none pending)
        clock.offset += 100.0  # a long while with no decision pending: nobody's time
        lag.hold()
        idle = lag.stalled()
        await asyncio.sleep(5 * LoopLag.PERIOD)
        held = lag.stalled()
        lag.release()
        return idle, held

    idle, held = asyncio.run(main())
    assert idle < 1.0
    assert held < 1.0


def test_a_stall_while_one_of_two_decisions_is_pending_is_counted() -> None:
    """Two decisions pending (two ``hold``s), one answered (one ``release``): the other is
    still pending, the meter ticks on, and a stall then is counted. Holders counted as one
    (mutant), the meter stopped at its next tick and the stall was the bot's time."""

    async def main() -> float:
        clock = _Clock()
        lag = LoopLag(asyncio.get_running_loop())
        lag.hold()
        lag.hold()
        lag.release()
        await asyncio.sleep(5 * LoopLag.PERIOD)  # (ticks that find one still pending)
        clock.offset += 10.0  # the loop held up 10 s
        await asyncio.sleep(5 * LoopLag.PERIOD)  # (the late tick counts it)
        stalled = lag.stalled()
        lag.release()
        return stalled

    assert asyncio.run(main()) >= 9.0


# ------------------------------------------------------------------ forfeits and grace


def test_a_stall_right_after_a_forfeit_is_not_in_the_forfeited_decisions_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A decision cut short by a forfeit ends at the forfeit (``answered_at`` set there):
    the loop held up 30 s right after it, before the match task runs again, is not in its
    ``ms``. Timed when the match task next ran (mutant), it was."""
    ref = Referee(RefereeConfig(decision_ms=120_000, time_bank_ms=0, reconnect_grace_s=0.2))
    out: dict[str, Any] = {}
    forfeit = match_mod.MatchRunner.forfeit

    def forfeit_then_stall(self: Any, st: Any, why: str) -> None:
        def stall() -> None:
            out["clock"].offset += 30.0

        # (before the forfeit resolves the decision: the stall runs before the match task)
        asyncio.get_running_loop().call_soon(stall)
        forfeit(self, st, why)

    monkeypatch.setattr(match_mod.MatchRunner, "forfeit", forfeit_then_stall)

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot != "x":
            _decide(ref, bot, r)
        elif "gone" not in out:
            out["gone"] = True
            session = ref.session("x")
            session.detach(session.stream, 0.2, "stream closed")  # type: ignore[arg-type]

    async def main() -> dict[str, Any]:
        out["clock"] = _Clock()
        _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", ONE_DEAL, 4, ["x", "a", "b"])

    rec = asyncio.run(main())
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0), ("forfeit", 0)]
    first = _x_first(rec)
    assert first["by"] == "fallback"
    assert first["ms"] < 30_000, first
    _replays(rec)


def test_stalls_before_a_disconnect_do_not_lengthen_its_grace_nor_count_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The grace period moves on by the loop's stalls *since the disconnect*: x's decision
    waits through a 5 s stall, then x is gone (grace 0.3 s) and the loop stalls 0.5 s more.
    The seat forfeits once 0.3 s of the bot's own time have passed: not 5 s later (the
    stalls counted from 0, mutant), and the grace timer runs a few times, not in a busy loop
    (the stalls already counted not stored back with the moved end, mutant: the timer was
    armed again at the old end, in the past, until the new one came)."""
    ref = Referee(RefereeConfig(decision_ms=120_000, time_bank_ms=0, reconnect_grace_s=0.3))
    out: dict[str, Any] = {"graces": 0}
    grace_over = BotSession._grace_over

    def counted(self: BotSession, grace_s: float) -> None:
        out["graces"] += 1
        grace_over(self, grace_s)

    monkeypatch.setattr(BotSession, "_grace_over", counted)

    def on_request(bot: str, r: pb.DecisionRequest) -> None:
        if bot != "x":
            _decide(ref, bot, r)
        elif "gone" not in out:
            out["gone"] = True
            loop = asyncio.get_running_loop()
            loop.call_soon(stall, 5.0)  # the loop held up while x's decision is pending
            loop.call_later(0.05, leave)  # (after a tick has counted it)

    def stall(seconds: float) -> None:
        out["clock"].offset += seconds

    def leave() -> None:
        session = ref.session("x")
        session.detach(session.stream, 0.3, "stream closed")  # type: ignore[arg-type]
        asyncio.get_running_loop().call_soon(stall, 0.5)

    async def main() -> dict[str, Any]:
        out["clock"] = _Clock()
        _attach(ref, ("x", "a", "b"), on_request)
        return await ref.run_match("m1", ONE_DEAL, 4, ["x", "a", "b"])

    rec = asyncio.run(main())
    assert [(i["kind"], i["seat"]) for i in rec["incidents"]] == [("disconnect", 0), ("forfeit", 0)]
    first = _x_first(rec)
    assert first["by"] == "fallback"
    assert first["ms"] < 3_000, first  # (0.05 s + 0.3 s of the bot's own, and latency)
    assert out["graces"] <= 10, out["graces"]
    _replays(rec)


# ------------------------------------------------------------------ the solver's budget


def test_every_node_of_a_search_is_charged_to_its_budget_once() -> None:
    """Across several searches on one solver (``value``, ``probe``, ``root_values``), its
    budget is charged exactly the nodes searched: by 64 during a search, the rest as it
    ends, and nothing twice. (Charging the whole count at a search's end, or not noting
    what was charged, spent a decision's budget two or three times as fast.)"""
    rng = random.Random(3434)
    for _ in range(6):
        deck = list(range(24))
        rng.shuffle(deck)
        hands = [mask_of(deck[i * 6 : (i + 1) * 6]) for i in range(3)]
        budget = Budget(10.0, safety=1e9)
        start = budget.left
        solver = Solver(hands, 0, 0, won=7, budget=budget)
        solver.value()
        assert start - budget.left == solver.nodes
        solver.probe(60)
        moves = [(c, False) for c in solver.legal_cards()]
        solver.root_values(moves)
        assert start - budget.left == solver.nodes > 64


# ------------------------------------------------------------------ the ratings' store


def test_a_partial_run_whose_ratings_are_not_stored_is_an_error_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that played what it was asked (``max_new_matches``: 3 of 6) without an error,
    whose ratings could not be stored (the database locked), is an error as a complete
    run's is, saying that the same command stores them, and not that it marks the
    tournament finished (it is not). Raised only for a complete run (mutant), the partial
    run ended as a success, its ratings missing."""
    defaults = Storage.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "timeout", 0.5)  # (SQLite's busy wait, shortened)
    db = tmp_path / "db.sqlite"
    data = {"name": "part", "ruleset": "classic", "max_deals": 1, "seed": 1, "concurrency": 1,
            "db": str(db), "out": str(tmp_path / "out"),
            "bots": ["random", "heuristic", "counting"]}  # fmt: skip
    cfg = parse_config(data, source="part", base_dir=tmp_path)
    blockers: list[sqlite3.Connection] = []
    saved: list[int] = []
    real_save = Storage.save_match

    def save_match(self: Storage, *args: Any, **kw: Any) -> None:
        real_save(self, *args, **kw)
        saved.append(kw["index"])
        if len(saved) == 3:  # the last of this run's: the database locked
            c = sqlite3.connect(str(db), isolation_level=None, check_same_thread=False)
            c.execute("BEGIN IMMEDIATE")
            blockers.append(c)

    monkeypatch.setattr(Storage, "save_match", save_match)
    try:
        with pytest.raises(TournamentError) as info:
            asyncio.run(run_tournament(cfg, RunOptions(progress=False, max_new_matches=3),
                                       referee_factory=lambda c: FakeReferee(),
                                       serve=False, launch_bots=False))  # fmt: skip
    finally:
        for c in blockers:
            c.execute("ROLLBACK")
            c.close()
    msg = str(info.value)
    assert msg.startswith("every match played is stored, but not the ratings: ")
    assert "the same command, run again, stores them: it plays no stored match again" in msg
    assert "marks the tournament finished" not in msg
    assert len(saved) == 3


# ------------------------------------------------------------------ what a bot leaves


_LAUNCHED = """
import json, os, subprocess, sys
import sdk.cli as cli

os.environ["ARENA_PARENT_PID"] = str(os.getppid())
cli._die_with_launcher()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
cli._stop_what_the_bot_left()
print(json.dumps({"launcher": cli._launcher, "child": child.pid,
                  "running": cli._running(child.pid)}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc and prctl")
def test_a_bot_its_launcher_armed_stops_the_child_it_left() -> None:
    """``_die_with_launcher``, finding the launcher alive as the bot's parent, notes it:
    that is what makes the bot stop, as it exits, the processes it started. Not noted
    (mutant), a launched bot left its child running for ever once the tournament was
    killed."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run([sys.executable, "-c", _LAUNCHED], capture_output=True, text=True,
                          env=env, cwd=str(ROOT), timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["running"]:  # (the test's own clean-up; the assertion below fails)
        os.kill(out["child"], 9)
    assert out["running"] is False, proc.stderr
    assert out["launcher"] is None  # (taken: stopped once)
    assert "exiting: stopping 1 process the bot left running (" in proc.stderr


_ORPHAN_OWN_GROUP = """
import json, os, subprocess, sys
import sdk.cli as cli

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
mid = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen("
                        "sys.argv[1:], stdout=subprocess.DEVNULL, process_group=0).pid, "
                        "flush=True)", *SLEEP],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
orphan = int(mid.stdout.readline())
mid.wait()
cli._launcher = os.getppid()
cli._stop_what_the_bot_left()
print(json.dumps({"orphan": orphan, "running": cli._running(orphan)}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_an_orphan_in_a_process_group_of_its_own_is_still_in_the_bots_session() -> None:
    """What is left in the session a launched bot leads is stopped whatever its process
    group: an orphan (its parent gone) that a helper put in a group of its own (a shell's
    job control, ``process_group=0``) is still in the bot's session. Looked up by process
    group (mutant: the stat line's field before the session), it ran on."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run([sys.executable, "-c", _ORPHAN_OWN_GROUP], capture_output=True,
                          text=True, env=env, cwd=str(ROOT), timeout=60,
                          start_new_session=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["running"]:  # (the test's own clean-up; the assertion below fails)
        os.kill(out["orphan"], 9)
    assert out["running"] is False, proc.stderr
    assert "exiting: stopping 1 process the bot left running (" in proc.stderr


_DEEP_AND_STUBBORN = """
import json, os, subprocess, sys
import sdk.cli as cli

stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; "
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                             "print('ready', flush=True); time.sleep(600)"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
assert stubborn.stdout.readline().strip() == b"ready"
own = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; print(subprocess."
                        "Popen([sys.executable, '-c', 'import time; time.sleep(600)']).pid, "
                        "flush=True); time.sleep(600)"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
grandchild = int(own.stdout.readline())
cli._launcher = os.getppid()
cli._stop_what_the_bot_left()
pids = {"stubborn": stubborn.pid, "own": own.pid, "grandchild": grandchild}
print(json.dumps({"pids": pids, "running": {k: cli._running(p) for k, p in pids.items()}}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_a_child_deaf_to_sigterm_and_a_grandchild_in_another_session_are_stopped() -> None:
    """A launched bot's child that ignores SIGTERM is killed (SIGKILL after the grace),
    and the child of a child of the bot's in a session of its own (out of the bot's
    session: found only down the tree, child of child) is stopped too. SIGTERM alone
    (mutant) left the first running; only the bot's direct children looked up (mutant),
    the second."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run([sys.executable, "-c", _DEEP_AND_STUBBORN], capture_output=True,
                          text=True, env=env, cwd=str(ROOT), timeout=60,
                          start_new_session=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, pid in out["pids"].items():  # (the test's own clean-up; the assertion fails)
        if out["running"][name]:
            os.kill(pid, 9)
    assert out["running"] == {"stubborn": False, "own": False, "grandchild": False}, proc.stderr
    assert "exiting: stopping 3 processes the bot left running (" in proc.stderr


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except OSError:
        return True


_LEAVES_WITH_A_CALL_RUNNING = """
import os, subprocess, sys
import sdk.cli as cli
import sdk.client

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
sdk.client.bot_calls_running = lambda: ["act"]  # (a call that never returns)
cli._launcher = os.getppid()
cli._leave(3)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_a_launched_bot_leaving_past_a_stuck_call_stops_what_it_left() -> None:
    """``arena-bot run`` exiting past a bot call that never returns leaves by ``os._exit``
    (no ``finally`` runs): it stops the processes the bot left first. Without that
    (mutant), a launched bot with a stuck call left its child running."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run([sys.executable, "-c", _LEAVES_WITH_A_CALL_RUNNING],
                          capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60,
                          start_new_session=True)  # fmt: skip
    child = int(proc.stdout.split()[0])
    gone = _gone(child)
    if not gone:  # (the test's own clean-up; the assertion below fails)
        os.kill(child, 9)
    assert proc.returncode == 3, proc.stderr
    assert gone, proc.stderr
    assert "a bot call is still running (act): exiting without waiting for it" in proc.stderr


def test_arena_bot_returning_without_exiting_stops_what_the_bot_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``arena-bot``'s group stops what a launched bot left however its ``main`` ends: on
    ``SystemExit`` and also on a return (``standalone_mode=False``, as a program embedding
    the CLI calls it) or an exception click does not catch. Only on ``SystemExit``
    (mutant), the others left it."""
    from sdk import cli

    calls: list[int] = []
    monkeypatch.setattr(cli, "_stop_what_the_bot_left", lambda: calls.append(1))
    assert cli.main.main(["--help"], standalone_mode=False) == 0
    assert calls


# ------------------------------------------------------------------ keepalive


def test_the_next_channel_pings_at_the_halved_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a ``too_many_pings`` the runner's next channel is made with the longer
    keepalive interval (the one the warning states), and the longer again after another.
    Made with the first interval still (mutant), the arena dropped the bot as before."""
    import grpc

    from sdk import Bot
    from sdk.client import BotRunner

    class _First(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

    made: list[dict[str, Any]] = []

    def insecure_channel(target: str, options: Any = None, **kw: Any) -> object:
        made.append(dict(options or ()))
        return object()

    monkeypatch.setattr(grpc.aio, "insecure_channel", insecure_channel)
    runner = BotRunner(_First, "127.0.0.1:9", "tok")
    for _ in range(3):
        runner._channel()
        runner._too_many_pings()
    assert [m["grpc.keepalive_time_ms"] for m in made] == [10_000, 20_000, 40_000]


# ------------------------------------------------------------------ the solver's hands


def test_root_values_leave_the_solvers_hands_as_they_were() -> None:
    """``root_values`` takes each move's card out of the mover's hand in turn and puts it
    back: the solver is left on the position it was given, and a search after it agrees
    with a fresh solver's. (Not put back after the last move, mutant: the mover's hand
    lacked that card for every later search.)"""
    rng = random.Random(343)
    for _ in range(8):
        deck = list(range(24))
        rng.shuffle(deck)
        hands = [mask_of(deck[i * 4 : (i + 1) * 4]) for i in range(3)]
        solver = Solver(hands, 0, 0, won=7)
        moves = [(c, False) for c in solver.legal_cards()]
        solver.root_values(moves)
        assert solver.hands == hands
        assert solver.value() == Solver(hands, 0, 0, won=7).value()


# ------------------------------------------------------------------ an empty action event


def test_an_action_event_with_no_action_at_all_is_malformed_not_a_newer_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An action event whose action is empty (no kind, no field: nothing a newer protocol
    sent) is refused as malformed, as before the newer kinds were skipped; only an action
    with fields of a kind unknown here is a newer protocol's. (Every action with no known
    kind taken for a newer one, mutant: an arena's empty action was skipped as "a newer
    protocol's", its defect hidden.)"""
    import logging

    from sdk import Bot
    from tests.sdk.test_hostile_arena import WELCOME, _game, ended, play, started

    told: list[Any] = []

    class _Listener(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

        def on_action(self, view: Any, seat: int, action: object) -> None:
            told.append((seat, action))

    g = _game()

    async def script(s: Any) -> Any:
        yield WELCOME
        yield started("m1", g)
        empty = pb.Event(match_id="m1", seq=1)
        empty.action.seat = 2
        empty.action.action.SetInParent()
        yield pb.ServerMessage(events=[empty])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(_Listener, script, matches=1)
    assert summary.matches == 1
    assert told == []
    assert "a newer protocol's" not in caplog.text
    assert (
        "malformed action event from the arena (match m1), ignored: action: no kind set"
    ) in caplog.text


def test_newer_kinds_anywhere_in_the_legal_actions_are_left_out_and_an_empty_one_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request whose legal actions hold two actions of a newer protocol's kind, among
    and after the known ones, is answered from exactly the known ones (left out by index
    from the last: from the first, mutant, the second index pointed past a known action
    or past the end). A legal action that is empty (no kind, no field) is no newer
    protocol's: that request is malformed and not answered (taken for a newer kind,
    mutant, the arena's empty action was dropped in silence and the request answered). A
    request malformed otherwise is refused as it is, without first saying that it offers
    newer kinds (mutant: it said so, then refused it all the same)."""
    import logging

    from sdk import Bot
    from tests.sdk.test_hostile_arena import WELCOME, _game, ended, play, request, started

    asked: list[tuple[Any, ...]] = []

    class _First(Bot):
        def act(self, view: Any) -> Any:
            asked.append(view.legal_actions)
            return view.legal_actions[0]

    g = _game()
    newer_kind = b"\x42\x00"  # (a field of a number no kind has: a newer protocol's)

    def with_extra(rid: str, at: tuple[int, ...], extra: bytes) -> pb.ServerMessage:
        req = request("m1", g, rid)
        acts = req.decision_request.view.legal_actions
        known = [pb.Action.FromString(a.SerializeToString()) for a in acts]
        del acts[:]
        for i in range(len(known) + len(at)):
            if i in at:
                acts.add().MergeFromString(extra)
            else:
                acts.add().CopyFrom(known.pop(0))
        return req

    async def script(s: Any) -> Any:
        yield WELCOME
        yield started("m1", g)
        n = len(g.legal_actions())
        yield with_extra("1", (1, n + 1), newer_kind)
        await s.decision()
        yield with_extra("2", (1,), b"")  # an empty action among the known ones
        yield request("m1", g, "3")
        await s.decision()
        bad = with_extra("4", (n,), newer_kind)
        bad.decision_request.view.legal_actions[0].play.SetInParent()  # a play with no card
        yield bad  # malformed, whatever else it offers: not answered
        yield request("m1", g, "5")
        await s.decision()
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(_First, script, matches=1)
    assert summary.matches == 1
    assert arena.streams[0].decided() == [("m1", "1"), ("m1", "3"), ("m1", "5")]
    assert asked == [tuple(g.legal_actions())] * 3
    assert "decision request 4 offers" not in caplog.text  # (refused at the bad play)
    assert ("match m1: decision request 1 offers 2 action(s) of a kind this SDK does not know"
            ) in caplog.text  # fmt: skip
    assert "decision request 2 offers" not in caplog.text


# ------------------------------------------------------------------ pimc's prior


def test_countings_card_inside_pimc_searches_at_most_countings_own_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pimc`` asks ``counting`` for its card (the prior, the fallback) inside its own
    decision's budget, but at most ``counting``'s ``endgame_budget`` of it. (Handed pimc's
    whole budget, mutant, counting's endgame search ran on through the samples' share.)
    Nor more than what is left of pimc's (handed a fresh budget of counting's own, mutant,
    a decision of a tiny budget searched 16,000 nodes for its prior). Shown with
    ``exact_cards`` lowered to 3, so that the prior is asked at 4 and 5 cards, where
    counting searches."""
    from bots import _dds, counting
    from bots.pimc import PimcBot
    from engine import Phase
    from tests.bots.test_search_audit_round34 import RULESETS, _Clock, _decisions

    monkeypatch.setattr(_dds, "time", _Clock(0.0))  # (only the nodes end a search)
    made: list[Solver] = []

    class _Counted(Solver):
        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            made.append(self)

    monkeypatch.setattr(counting, "Solver", _Counted)

    class _Fewer(PimcBot):
        exact_cards = 3

    def make(pimcs: float, countings: float) -> Callable[[], PimcBot]:
        def made_bot() -> PimcBot:
            bot = _Fewer(budget=pimcs, seed=1)
            bot._counting.endgame_budget = countings
            return bot

        return made_bot

    nps = _dds.NODES_PER_SECOND
    # counting's budget the smaller (200 nodes), then pimc's whole budget (72 of its 80)
    for pimcs, countings, share in ((0.5, 0.0005, 0.0005 * nps), (0.0002, 0.04, 0.00018 * nps)):
        checked = 0
        for rules in RULESETS[:2]:
            for view, bot in _decisions(make(pimcs, countings), rules, 7, 80):
                if view.phase is not Phase.PLAYING or not 4 <= len(view.hand) <= 5:
                    continue
                made.clear()
                assert bot.act(view) in view.legal_actions
                assert made  # (counting searched)
                assert sum(s.nodes for s in made) <= round(share) + 63, (pimcs, countings)
                checked += 1
        assert checked >= 4


_WITH_A_ZOMBIE = """
import json, os, subprocess, sys, time
import sdk.cli as cli

done = subprocess.Popen([sys.executable, "-c", "pass"])
while open(f"/proc/{done.pid}/stat", "rb").read().rpartition(b")")[2].split()[:1] != [b"Z"]:
    time.sleep(0.01)  # (ended, not reaped: a zombie)
live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
cli._launcher = os.getppid()
cli._stop_what_the_bot_left()
print(json.dumps({"live": live.pid, "running": cli._running(live.pid)}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
def test_a_child_that_ended_unreaped_is_not_among_what_the_bot_left_running() -> None:
    """A child of the bot's that has ended but is not reaped yet (a zombie) is not a
    process left running: the bot says it stops the one that runs, and only it. (Zombies
    counted, mutant: "stopping 2 processes", one of them long ended.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ARENA_PARENT_PID", None)
    proc = subprocess.run([sys.executable, "-c", _WITH_A_ZOMBIE], capture_output=True,
                          text=True, env=env, cwd=str(ROOT), timeout=60,
                          start_new_session=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["running"]:  # (the test's own clean-up; the assertion below fails)
        os.kill(out["live"], 9)
    assert out["running"] is False, proc.stderr
    assert f"exiting: stopping 1 process the bot left running ({out['live']})" in proc.stderr


def test_an_answer_to_a_reused_request_id_on_a_new_stream_is_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request that comes on a new stream under the id of one answered before, for
    another decision, is answered afresh: that answer is the stream's progress (the
    back-off after it starts again from its first step), as any first answer is. (The old
    answer kept by its id, mutant, the new one was taken for the same answer sent again:
    no progress.)"""
    import grpc

    from engine import Pass
    from sdk import Bot
    from sdk.client import BotRunner
    from tests.sdk.test_hostile_arena import WELCOME, _game, ended, request, started
    from tests.sdk.test_hostile_arena_round3 import _end, _ending

    class _First(Bot):
        def act(self, view: Any) -> Any:
            return view.legal_actions[0]

    runners: list[BotRunner] = []
    channel = BotRunner._channel

    def kept(self: BotRunner) -> Any:
        runners.append(self)
        return channel(self)

    monkeypatch.setattr(BotRunner, "_channel", kept)
    g = _game()
    seat = g.to_act
    progress: list[bool] = []

    async def first(s: Any) -> Any:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()
        g.apply(g.legal_actions()[0])  # the bot's bid; the others pass: it takes the talon
        while g.to_act != seat:
            g.apply(Pass())
        await _end(grpc.StatusCode.UNAVAILABLE, "reset")

    async def second(s: Any) -> Any:
        yield WELCOME
        resumed = started("m1", g)
        resumed.match_started.resumed = True
        yield resumed
        yield request("m1", g, "1")  # the same id, for the bot's first give
        d = await s.decision()
        assert d is not None and d.action.HasField("give")
        progress.append(runners[-1]._progress)
        yield ended("m1")

    summary, _ = _ending(_First, first, second, matches=1)
    assert not isinstance(summary, Exception), summary
    assert summary.matches == 1
    assert progress == [True]
