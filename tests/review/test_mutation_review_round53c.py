"""Review round 53c: an adversary's review of round 53's "ahead" feature (the referee
playing a bot's answers to its next decisions without a round trip, ``own_next_view``, the
SDK answering ahead for quick bots) and of faults53's code check on a bot's restart.

Defects found and fixed (each test says which):

- the SDK asked a quick bot with an ``on_action`` hook its next decision before telling
  the hook of the bot's own action before it (the event comes with the next message): a
  bot following the cards from ``on_action`` chose its lead as if its last card were still
  in play, where local play and a bot without the feature tell it first;
- a decision the bot failed (or answered illegally) when asked ahead counted twice in the
  run's summary and the match's "the bot failed N of its M decision(s)" (asked ahead, then
  again on the request), and the run's "N decision(s)" left out those played ahead;
- a local bot whose command names a file it writes (a log, a table) that was not there at
  its launch was never restarted after a crash: "its code changed since the run began".

45 hand mutants of round 53's new branches (M 14 the referee's match loop, V 16
``own_next_view``, S 12 the SDK, T 3 the restart's code check), each run against the
round's own tests (tests/{arena,sdk,hostile}/test_ahead_round53.py,
tests/engine/test_own_next_view_round53.py, tests/faults/test_faults_round53.py) and this
file: 24 killed by those; 9 by the tests here (M9, S1, S8, S9, S10, S11, S12, T1, T2); 9
equivalent (M1, M2: another seat's foresight, or a stale one, never equals the view to
send, which is compared whole; M6: a chain of decisions foreseen is at most 3 long, so the
cap bounds only a copy of a message already weighed by the flood limit; M16: ``_decide``
always sets ``seen``; V1, V2: refusals made again further on; V7: a seat holding the four
aces never took a trick with one; V9: after the deal's last card the hand is empty, no
lead; S3: as M6); 3 left, the record the same (S2, S5: an answer ahead sent illegal or
beside ``failed``, which the referee ignores; S7: a request that waited behind a busy call
answered without answers ahead, a round trip more). ``own_next_view`` was also walked
against ``observe`` over 1,500 more random rulesets and 600 preset matches: equal
wherever it foresees.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, ClassVar

import pytest

from arena.referee import match as match_mod
from arena.tournament.config import BotSpec
from arena.tournament.runner import _BotProcess, _restart
from engine import Action, Phase, PlayerView, parse_action
from engine.record import start_game
from engine.view import HiddenGive
from sdk.bot import Bot
from tests.arena.test_ahead_round53 import _play as ahead_play
from tests.arena.test_ahead_round53 import honest
from tests.sdk.test_ahead_round53 import _count
from tests.support.harness import play_sdk_match, play_sdk_match_summaries


class _Follower(Bot):
    """A quick bot that follows its own actions from ``on_action`` and counts the decisions
    it was asked before it had been told of every answer of its own played so far."""

    quick = True
    early: ClassVar[dict[str, int]] = defaultdict(int)
    asked: ClassVar[dict[str, int]] = defaultdict(int)

    def __init__(self) -> None:
        self.answered: list[Action] = []
        self.told: list[Action | HiddenGive] = []

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        if seat == view.seat:
            self.told.append(action)

    def act(self, view: PlayerView) -> Action:
        name = view.players[view.seat]
        self.asked[name] += 1
        if Counter[object](self.answered) - Counter[object](self.told):
            self.early[name] += 1
        key = len(view.hand) * 31 + len(view.tricks) * 7 + len(view.bids) + view.deal_number
        action = random.Random(key).choice(view.legal_actions)
        self.answered.append(action)
        return action


def test_a_bot_with_on_action_hears_of_its_own_action_before_its_next_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: a quick bot with ``on_action`` was asked ahead, its next decision before its
    hook was told its own action (as in local play and without the feature). Such a bot is
    not asked ahead now: its answers go one per request."""
    counts = _count(monkeypatch)
    _Follower.early, _Follower.asked = defaultdict(int), defaultdict(int)
    rec = play_sdk_match(_Follower, max_deals=3, seed=12)
    assert set(_Follower.asked) == set(rec["players"]) and min(_Follower.asked.values()) > 5
    assert dict(_Follower.early) == {}, dict(_Follower.early)
    assert counts == {"with_ahead": 0, "played": 0}


class _FailsContracts(Bot):
    """A quick bot that raises on every contract decision (its fallback is sent), and keeps
    the views it is asked on (by its name)."""

    quick = True
    seen: ClassVar[dict[str, list[PlayerView]]] = defaultdict(list)

    def act(self, view: PlayerView) -> Action:
        self.seen[view.players[view.seat]].append(view)
        if view.phase is Phase.CONTRACT:
            raise ValueError("no contract today")
        key = len(view.hand) * 31 + len(view.tricks) * 7 + len(view.bids) + view.deal_number
        return random.Random(key).choice(view.legal_actions)


def _contract_decisions(rec: dict[str, Any]) -> Counter[int]:
    """Each seat's contract decisions in the record (replayed: the phase before each)."""
    game = start_game(rec)
    asked: Counter[int] = Counter()
    for deal in rec["deals"]:
        for a in deal["actions"]:
            if game.phase is Phase.CONTRACT and a["by"] != "forced":
                asked[a["seat"]] += 1
            game.apply(parse_action(a["action"]), seat=a["seat"])
    return asked


def test_a_decision_failed_ahead_counts_once_and_decisions_ahead_count(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a contract the bot failed when asked ahead (after its second give) was
    counted as an error, and again when the request came and it failed again: the run's
    errors and the match's "failed N of its M decision(s)" said twice what the arena
    recorded. And "N decision(s)" counted the answers sent but not those sent ahead."""
    counts = _count(monkeypatch)
    _FailsContracts.seen = defaultdict(list)
    rec, summaries = play_sdk_match_summaries(_FailsContracts, 3, seed=12, incidents=True)
    assert counts["played"] > 0  # its leads after a trick taken still go ahead
    errors = Counter(i["seat"] for i in rec["incidents"] if i["kind"] == "bot_error")
    # Every contract it was asked it failed, and the arena recorded each so (none was
    # played ahead as the bot's own, the fallback of a call that raised).
    assert errors == _contract_decisions(rec) and sum(errors.values()) >= 2, rec["incidents"]
    by_bot = Counter(a["seat"] for d in rec["deals"] for a in d["actions"] if a["by"] == "bot")
    for seat, summary in enumerate(summaries):
        assert summary.errors == errors[seat], (seat, summary, errors)
        assert summary.decisions == by_bot[seat], (seat, summary, by_bot)
    said = [r.getMessage() for r in caplog.records if "the bot failed" in r.getMessage()]
    assert said, [r.getMessage() for r in caplog.records][-20:]
    for line in said:
        n = int(line.split("the bot failed ")[1].split(" ")[0])
        assert n in errors.values(), (line, errors)
    # Only the contract it failed ahead is asked again; no view after a failure is asked.
    for name, views in _FailsContracts.seen.items():
        twice = [v for v, n in Counter(views).items() if n > 1]
        assert all(v.phase is Phase.CONTRACT for v in twice), (name, twice)


def test_a_file_a_bot_writes_named_on_its_command_is_not_its_code(tmp_path: Path) -> None:
    """Defect: a command naming a file the bot writes (``sh bot.sh bot.log``), not there at
    launch, read as code "added" since: the bot, crashed once, was given up ("its code
    changed since the run began (.../bot.log)") and its seats forfeited. Its programs
    are its code (docs/tournament.md)."""
    script = tmp_path / "bot.sh"
    script.write_text('echo line >> "$1"\nexit 3\n')
    out = tmp_path / "bot.log"
    spec = BotSpec(name="b", kind="command", command=("sh", "bot.sh", "bot.log"), cwd=tmp_path)
    p = _BotProcess(spec, list(spec.command), "t", tmp_path / "b.out")

    async def scenario() -> tuple[str | None, str | None]:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        assert out.exists()  # it wrote the file its command names
        made = await _restart(p, 3, 3, begun=True)
        assert p.proc is not None
        await p.proc.wait()
        # Now there since the launch... no: not at the first launch, so never its code.
        again = await _restart(p, 3, 3, begun=True)
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()
        return made, again

    made, again = asyncio.run(scenario())
    assert made is None and again is None and p.restarts == 2 and not p.given_up
    assert out.read_text() == "line\n" * 3
    assert p.code_changed() == []
    # Nor one there at launch that is no program (named after the script; the lead's merge,
    # round 53); the script itself, edited, is named.
    q = _BotProcess(spec, list(spec.command), "t", tmp_path / "q.out")
    out.write_text("edited\n")
    assert q.code_changed() == []
    script.write_text("exit 4\n")
    assert q.code_changed() == [script]


def test_an_action_played_ahead_is_recorded_as_the_bots_with_no_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(Kills M9: an action played ahead recorded with 1 ms.) Its time was the request's
    it came with (docs/protocol.md, "Answers ahead"): each is the bot's, 0 ms."""
    played: list[Action] = []
    kept: list[tuple[str, int]] = []
    play_ahead = match_mod.MatchRunner._ahead
    after = match_mod.MatchRunner._after

    def counted_ahead(self: Any, *args: Any) -> Any:
        action = play_ahead(self, *args)
        if action is not None:
            played.append(action)
        return action

    def seen_after(self: Any, actor: int, action: Action, by: str, ms: int, deal: int,
                   failed: bool = False) -> None:  # fmt: skip
        if played and action is played[-1]:
            kept.append((by, ms))
        after(self, actor, action, by, ms, deal, failed)

    monkeypatch.setattr(match_mod.MatchRunner, "_ahead", counted_ahead)
    monkeypatch.setattr(match_mod.MatchRunner, "_after", seen_after)
    ahead_play(honest, deals=3)
    assert len(kept) == len(played) >= 6
    assert set(kept) == {("bot", 0)}


def test_a_code_file_removed_since_the_launch_is_named(tmp_path: Path) -> None:
    """(Kills T2: a file gone since the launch not counted as a change.) Removed, a file of
    the bot's code is a change as an edit is (docs/tournament.md)."""
    (tmp_path / "bot.sh").write_text("exit 3\n")
    (tmp_path / "helper.py").write_text("X = 1\n")
    spec = BotSpec(name="b", kind="command", command=("sh", "bot.sh", "helper.py"), cwd=tmp_path)
    p = _BotProcess(spec, list(spec.command), "t", tmp_path / "b.out")
    assert p.code_changed() == []
    (tmp_path / "helper.py").unlink()
    assert p.code_changed() == [tmp_path / "helper.py"]


class _SlowGiver(Bot):
    """A quick bot whose gives take 6 ms (a sleep: never less): its second such call on
    the event loop sends it to the worker thread. Keeps, by name, whether each call ran on
    the event loop's thread, and the calls after its second give."""

    quick = True
    calls: ClassVar[dict[str, list[tuple[Phase, bool]]]] = defaultdict(list)

    def act(self, view: PlayerView) -> Action:
        self.calls[view.players[view.seat]].append(
            (view.phase, threading.current_thread() is threading.main_thread())
        )
        if view.phase is Phase.PASSING:
            time.sleep(0.006)
        key = len(view.hand) * 31 + len(view.tricks) * 7 + len(view.bids) + view.deal_number
        return random.Random(key).choice(view.legal_actions)


def test_a_bot_found_slow_while_asked_ahead_is_asked_no_further_on_the_loop() -> None:
    """(Kills S12: the runner asked ahead on, on the event loop, after the call that found
    the bot slow.) The declarer's two gives, the first asked and the second ahead, are its
    two slow calls: its contract and lead are asked in the worker thread, as a request."""
    _SlowGiver.calls = defaultdict(list)
    play_sdk_match(_SlowGiver, max_deals=2, seed=12)
    declarers = 0
    for name, calls in _SlowGiver.calls.items():
        gives = [i for i, (phase, _) in enumerate(calls) if phase is Phase.PASSING]
        if len(gives) < 2:
            continue
        declarers += 1
        after = calls[gives[1] + 1 :]
        assert after and not any(on_loop for _, on_loop in after), (name, calls)
    assert declarers >= 1, dict(_SlowGiver.calls)
