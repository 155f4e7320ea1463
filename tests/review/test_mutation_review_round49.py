"""Round 49 review: tests that kill the mutants of the 47th session's changes that the other
tests let live (the mutants and their fate are listed in the round's report). Each test
names what it pins: a seat's kept deadline timer (``SeatState.arm``/``due``) keeps its
promise "run by the deadline" whatever order deadlines come in, the trick items and action
events made from byte tables, the SDK's hook view per message, and what an old record's
allowance lets through."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena import protocol
from arena.cli import tournament as tournament_cli
from arena.protocol import MalformedMessageError
from arena.referee import match as match_module
from arena.referee.match import Pending, SeatState
from arena.render import abandoned_places
from arena.storage import Storage
from arena.tournament import runner as runner_mod
from arena.tournament.config import identity_changes, parse_config
from arena.v1 import arena_pb2 as pb
from engine import Action, Bid, Game, Pass, Play, PlayerView, observe
from engine.cards import Card
from engine.game import Trick
from engine.rules import PRESETS
from sdk import client, workers
from sdk.bot import Bot
from sdk.client import BotRunner, _check_request_view, _Match, _Outbox
from sdk.local import decide_failed
from tests.sdk.test_hostile_arena import (
    GUARD,
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    play,
    request,
    started,
)
from tests.sdk.test_hot_path_round48 import _playing_view, _script_with_events

# ------------------------------------------------------------ referee: a seat's kept timer


class _Handle:
    def __init__(self, when: float, callback: Any) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class _Loop:
    """What ``SeatState.arm`` uses of a loop: ``call_at``, and the handles it made."""

    def __init__(self) -> None:
        self.handles: list[_Handle] = []

    def call_at(self, when: float, callback: Any) -> _Handle:
        h = _Handle(when, callback)
        self.handles.append(h)
        return h

    def live(self) -> list[float]:
        return [h.when for h in self.handles if not h.cancelled]


def _seat() -> SeatState:
    return SeatState(match=None, seat=0, session=None, bank_ms=0)  # type: ignore[arg-type]


def test_arm_keeps_a_timer_only_if_it_runs_by_the_deadline() -> None:
    """``arm``: "have the timer run by ``deadline``". A later deadline keeps the timer (it
    moves on when it runs); an earlier one replaces it, the old one cancelled (mutants: the
    comparison turned round kept a timer running after the deadline; the cancel dropped
    left two; ``timer_at`` not kept compared the next deadline with a stale time)."""
    loop, st = _Loop(), _seat()
    st.arm(loop, 10.0)  # type: ignore[arg-type]
    st.arm(loop, 12.0)  # type: ignore[arg-type]
    assert loop.live() == [10.0]
    st.arm(loop, 5.0)  # type: ignore[arg-type]
    assert loop.live() == [5.0] and st.timer_at == 5.0
    st.arm(loop, 7.0)  # type: ignore[arg-type]
    st.arm(loop, 6.0)  # type: ignore[arg-type]
    assert loop.live() == [5.0]
    st.disarm()
    assert loop.live() == [] and st.timer is None


def _pending(loop: asyncio.AbstractEventLoop, deadline: float) -> Pending:
    fut: asyncio.Future[Any] = loop.create_future()
    return Pending("1", fut, None, 0, deadline, deadline)  # type: ignore[arg-type]


def test_due_with_nothing_pending_or_answered_does_nothing() -> None:
    """The kept timer runs after the seat's last answer: no request pending (mutant: it read
    ``None.future`` and raised in the loop's callback), or one answered already, whose
    future is done (mutant: it set the result of a done future and raised)."""
    loop = asyncio.new_event_loop()
    try:
        st = _seat()
        st.timer = object()  # type: ignore[assignment]
        st.due()
        assert st.timer is None
        p = st.pending = _pending(loop, loop.time() - 1)
        p.future.set_result("answered")  # type: ignore[arg-type]
        st.due()
        assert p.future.result() == "answered" and st.timer is None
    finally:
        loop.close()


def test_due_within_the_clocks_resolution_of_the_deadline_times_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop runs a timer up to its clock's resolution early: a deadline no further off
    than that has passed (mutant: compared with ``now`` alone, the timer was made again for
    a deadline the loop had already reached, and the request timed out an iteration late
    or, on a coarse clock, spun the loop). A deadline further off moves the timer on."""
    monkeypatch.setattr(match_module, "_CLOCK_RESOLUTION", 0.01)
    loop = asyncio.new_event_loop()
    try:
        now = 500.0
        loop.time = lambda: now  # type: ignore[method-assign]
        made: list[float] = []
        loop.call_at = lambda when, cb, *a, **k: made.append(when)  # type: ignore[method-assign,assignment]
        st = _seat()
        p = st.pending = _pending(loop, now + 0.005)
        st.due()
        assert p.future.done() and p.future.result() is match_module._TIMED_OUT
        assert made == []
        p = st.pending = _pending(loop, now + 0.5)
        st.due()
        assert not p.future.done() and made == [now + 0.5] and st.timer_at == now + 0.5
    finally:
        loop.close()


# --------------------------------------------------------------------- sdk: hooks, answers


def _raising_quick_bot() -> type[Bot]:
    class Raising(Bot):
        quick = True

        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            raise ValueError("the bot's own bug")

    return Raising


def test_a_quick_bots_failing_hook_on_the_loop_is_counted_and_said_at_the_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A quick bot's hook called on the event loop (``_hook_inline``) that raises counts in
    the run's errors and in the match's "hook call(s) failed" line, as one called in the
    worker thread does (mutants: either count dropped)."""
    script, others = _script_with_events()
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        summary, arena = play(_raising_quick_bot(), script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "1"), ("m1", "2")]
    assert summary.errors == 2 * len(others)
    assert f"match m1: {2 * len(others)} hook call(s) of the bot failed" in caplog.text


def test_the_end_line_names_the_bots_own_place_and_score(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """ "match m1 ended: ... : this bot (seat S) 2nd with 254": its own seat's place and
    score (mutant: another seat's score)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    scores, places = [7, 7, 7], [3, 3, 3]
    scores[seat], places[seat] = 254, 2

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        end = pb.MatchResult(scores=scores, places=places, deals=3, reason="target")
        yield pb.ServerMessage(match_ended=pb.MatchEnded(match_id="m1", result=end))

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        play(FirstLegal, script)
    assert f"places {places}: this bot (seat {seat}) 2nd with 254" in caplog.text


def test_an_answer_sent_as_given_logs_no_error(caplog: pytest.LogCaptureFixture) -> None:
    """``_send_answer``: an action the wire holds is sent without the "whose number no wire
    field holds" error (mutant: ``sent is action`` said it of every answer)."""
    runner = BotRunner(FirstLegal, "127.0.0.1:1", "tok")
    out = _Outbox()
    m = _Match("m-1", 0, PRESETS["classic"], None, _playing_view())
    with caplog.at_level(logging.ERROR, logger="sdk.client"):
        runner._send_answer(m, "3", m.view.legal_actions[0], out)
        runner._send_answer(m, "4", Bid(-5), out)
    assert caplog.text.count("no wire field holds") == 1 and "Bid(amount=-5)" in caplog.text


def test_a_hooks_view_is_the_matchs_latest() -> None:
    """``_Match.view_for_hooks`` keeps one hook view per view given (the events of a message
    share it), made again once the match has a newer view (mutant: the first one kept, the
    hooks of every later event given the view of the match's first request)."""
    first = _playing_view()
    m = _Match("m-1", 0, PRESETS["classic"], None, first)
    a = m.view_for_hooks()
    assert m.view_for_hooks() is a and a.hand == first.hand and a.legal_actions == ()
    later = dataclasses.replace(first, hand=first.hand[1:], legal_actions=first.legal_actions[1:])
    m.view = later
    b = m.view_for_hooks()
    assert b.hand == later.hand and b.legal_actions == ()


def test_a_list_of_two_alike_actions_is_refused() -> None:
    """The duplicate check of a request's legal actions runs from two actions on (mutant:
    from three, a list of one play given twice passed)."""
    view = _playing_view()
    play_ = next(a for a in view.legal_actions if isinstance(a, Play))
    with pytest.raises(MalformedMessageError, match="twice"):
        _check_request_view(dataclasses.replace(view, legal_actions=(play_, Play(play_.card))))


# ------------------------------------------------------- codec: tricks and events from tables


def _field_by_field(trick: Trick) -> bytes:
    m = pb.Trick(leader=trick.leader, winner=trick.winner)
    for seat, card in trick.cards:
        m.cards.add(seat=seat, card=pb.Card(suit=card.suit + 1, rank=card.rank + 1))  # type: ignore[arg-type]
    return pb.PlayerView(tricks=[m]).SerializeToString()


def test_a_trick_of_seats_past_the_tables_is_written_as_protobuf_writes_it() -> None:
    """The tables hold seats 0-3; a trick naming seat 4 anywhere (no engine's, but the
    function takes any ``Trick``) is built field by field (mutants: a bound of ``<= 4`` read
    past a table; the cards' seats unchecked, seat -1 read seat 3's bytes from the end)."""
    cards = ((0, Card(3)), (1, Card(9)), (2, Card(17)))
    for trick in (
        Trick(4, cards, 0),
        Trick(0, cards, 4),
        Trick(1, ((4, Card(3)), *cards[1:]), 1),
    ):
        assert protocol._trick_item(trick) == _field_by_field(trick), trick
    with pytest.raises(ValueError):  # (protobuf refuses a negative uint32, as before)
        protocol._trick_item(Trick(0, ((-1, Card(3)), *cards[1:]), 0))


def test_a_trick_item_kept_by_id_is_used_only_for_that_very_trick() -> None:
    """``_TRICK_ITEM_BY_ID`` is keyed by ``id()``; an id is reused once its trick is freed,
    so an entry counts only if it holds the very trick (mutant: the id alone, and a new
    trick was written with a freed one's bytes)."""
    trick = Trick(0, ((0, Card(3)), (1, Card(9)), (2, Card(17))), 2)
    freed = Trick(1, ((1, Card(4)), (2, Card(10)), (0, Card(18))), 0)
    protocol._TRICK_ITEM_BY_ID[id(trick)] = (freed, protocol._trick_item(freed))
    g = Game.new("classic", seed=1, players=["a", "b", "c"])
    view = dataclasses.replace(observe(g, 0), tricks=(trick,))  # (a tuple no cache holds)
    got = protocol.view_to_pb(view)
    assert [(t.leader, t.winner) for t in got.tricks] == [(0, 2)]


def test_an_events_seq_past_the_table_is_written_whole() -> None:
    """``_EVENT_SEQ_BYTES`` holds seq 0-4095; 4096 on is written as a varint (mutant: a
    bound of 4097 read past the table at seq 4096: an IndexError in the referee); a source
    not in its table likewise (mutant: left out)."""
    for seq in (0, 1, 4095, 4096, 4097, 70_000):
        # (9: a source of a later version, not in the table: written whole too)
        for source in (pb.ACTION_SOURCE_UNSPECIFIED, pb.ACTION_SOURCE_FALLBACK, 9):
            ev = protocol.action_event_to_pb("m1", seq, source, 1, Pass())  # type: ignore[arg-type]
            want = pb.Event(match_id="m1", seq=seq, source=source)  # type: ignore[arg-type]
            want.action.CopyFrom(protocol.seat_action_to_pb(1, Pass()))
            assert ev == want, (seq, source)


# -------------------------------------------------------------- sdk.local: an answer's path


class _Raises(Bot):
    def act(self, view: PlayerView) -> Action:
        raise RuntimeError("the bot's own bug")


class _NoAction(Bot):
    def act(self, view: PlayerView) -> Action:
        return "Pass"  # type: ignore[return-value]


def test_a_decisions_lines_name_the_bots_match_or_none(caplog: pytest.LogCaptureFixture) -> None:
    """The lines of a failed decision name its match: the one given, else the bot's own
    ``match_id`` (mutant: that one dropped), and no match at all when neither is set
    (mutant: "match None: ")."""
    view = _playing_view()
    with caplog.at_level(logging.ERROR, logger="sdk"):
        bot = _Raises()
        bot.match_id = "m9"
        decide_failed(bot, view)
        decide_failed(_NoAction(), view)
        decide_failed(_Raises(), view)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0].startswith("match m9: _Raises.act()"), lines[0]
    assert lines[1].startswith("_NoAction.act()") and lines[2].startswith("_Raises.act()"), lines


def test_a_legal_action_of_a_subclass_given_back_is_answered_as_the_engines() -> None:
    """An answer that is one of the view's own legal actions skips the checks, but only for
    the engine's classes: a view built with a subclass of ``Play`` (a bot's own) answered
    with that very object is still sent as the engine's ``Play`` (mutant: the identity
    alone, and the subclass went on to the wire code)."""

    class MyPlay(Play):
        pass

    view = _playing_view()
    mine = tuple(MyPlay(a.card, a.declare) for a in view.legal_actions if isinstance(a, Play))
    view = dataclasses.replace(view, legal_actions=mine)

    class GivesBack(Bot):
        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

    action, failed = decide_failed(GivesBack(), view)
    assert failed is None and type(action) is Play and action == Play(mine[0].card, mine[0].declare)


# ------------------------------------------------------------------- sdk.workers, configs


def test_the_own_packages_come_first_only_while_a_worker_starts() -> None:
    """``_own_packages_first`` puts the arena's folder first for the start, then takes out
    the one it put (mutant: left in: the parent's path kept it first for every later import
    of the bot's); a copy already on the path stays where it was."""
    before = list(sys.path)
    sys.path.append(workers._OWN_ROOT)
    try:
        with workers._own_packages_first():
            assert sys.path[0] == workers._OWN_ROOT
        assert sys.path == [*before, workers._OWN_ROOT]
    finally:
        sys.path[:] = before


def test_a_rename_alone_is_not_said_to_reorder_the_bots() -> None:
    """A bot renamed in its place is said renamed, and nothing of the bots' order (mutant:
    the renamed pair left out of the "nothing added or removed" test, "the order of the
    bots" was said too)."""
    a = {"name": "a", "kind": "sdk", "bot": "a.py", "command": [], "code": "1"}
    b = {"name": "b", "kind": "sdk", "bot": "b.py", "command": [], "code": "2"}
    assert identity_changes({"bots": [a, b]}, {"bots": [a, {**b, "name": "c"}]}) == [
        "bot b renamed c"
    ]


def test_the_final_view_of_a_match_stopped_mid_deal_shows_no_talon() -> None:
    """``observe(..., ended=True)`` (every seat forfeited, the match stopped mid-deal): no
    hand and no talon, as at a match's end (mutant: the talon as ``visible_talon`` gives it
    mid-deal, once taken)."""
    g = Game.new("classic", seed=3, players=["a", "b", "c"])
    while g.declarer is None or g.phase.name == "BIDDING":
        g.apply_trusted(g.legal_actions()[-1])
    seat = g.declarer
    assert observe(g, seat).talon is not None  # (taken: the declarer sees it)
    ended = observe(g, seat, ended=True)
    assert ended.talon is None and ended.hand == ()


def test_a_quick_bots_on_match_end_stays_in_the_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Of a quick bot's hooks only ``on_action``, ``on_talon_taken`` and ``on_deal_end`` are
    called on the event loop (docs/writing-a-bot.md): ``on_match_end``, where a bot saves
    what it learnt, stays in the worker thread. (The mutant that drops its exclusion from
    ``_schedule`` is equivalent today: the end line is queued in the match's order just
    before it, so the match always has a step in flight then; this holds the promise if
    that changes.)"""
    monkeypatch.setattr(client, "_SLOW_S", 60.0)  # (a loaded machine's pause: still quick)
    seen: list[tuple[str, int]] = []

    class Ends(Bot):
        quick = True

        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            seen.append(("on_action", threading.get_ident()))

        def on_match_end(self, view: PlayerView, result: object) -> None:
            seen.append(("on_match_end", threading.get_ident()))

    script, _ = _script_with_events()
    play(Ends, script)
    loop_thread = threading.get_ident()
    assert [w for w, _ in seen][-1] == "on_match_end"
    assert [t == loop_thread for w, t in seen if w == "on_action"] == [True] * 4
    assert seen[-1][1] != loop_thread


def test_an_abandoned_record_is_said_to_place_its_seats_as_its_result_does() -> None:
    """``abandoned_places``: "1st" only of a record that places every seat 1st (the first
    day's referees); one without ``rules_result`` that places them last (the check lets
    both through) is said to place them last (mutant: "1st" of any record without
    ``rules_result``)."""
    older = {"abandoned": True, "result": {"places": [1, 1, 1]}}
    assert abandoned_places(older).startswith("1st")
    assert abandoned_places({"abandoned": True, "result": {"places": [3, 3, 3]}}) == "last"
    assert abandoned_places({"abandoned": True, "rules_result": None}) == "last"


def test_a_quick_bots_hook_waits_for_its_on_match_start_still_running() -> None:
    """A quick bot's hook is called on the loop only when nothing of the match is in
    flight: an event read while its ``on_match_start`` still runs (in the worker thread,
    the bot made and set already) is called after it, in the match's order (mutant: the
    in-flight test dropped, ``on_action`` ran on the loop meanwhile, in parallel with it)."""
    calls: list[str] = []

    class SlowStart(Bot):
        quick = True

        def act(self, view: PlayerView) -> Action:
            calls.append("act")
            return view.legal_actions[0]

        def on_match_start(self, view: PlayerView) -> None:
            calls.append("start begins")
            time.sleep(0.3)
            calls.append("start ends")

        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            calls.append("on_action")

    g = _game()
    other = next(s for s in range(3) if s != g.to_act)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        await asyncio.sleep(0.1)  # (on_match_start has begun)
        msg = request("m1", g, "0")
        ev = pb.Event(match_id="m1", seq=1)
        ev.action.CopyFrom(protocol.seat_action_to_pb(other, Pass()))
        msg.events.append(ev)
        yield msg
        await s.decision()

    _, arena = play(SlowStart, script)
    assert arena.streams[0].decided() == [("m1", "0")]
    assert calls == ["start begins", "start ends", "on_action", "act"], calls


def test_a_play_offered_is_checked_against_the_hand_and_its_marriage() -> None:
    """A request's plays take a path of their own (most requests): one of a card the hand
    does not hold, or declaring a marriage the hand cannot declare, is still refused
    (mutants: either check dropped from that path)."""
    view = _playing_view()
    held = set(view.hand)
    gone = next(c for c in Card if c not in held)
    with pytest.raises(MalformedMessageError, match="the hand does not hold"):
        _check_request_view(dataclasses.replace(view, legal_actions=(Play(gone),)))
    lone = next(c for c in view.hand if c.rank.name in ("NINE", "JACK", "TEN"))  # (no marriage)
    led = dataclasses.replace(view, trick=(), legal_actions=(Play(lone, declare=True),))
    with pytest.raises(MalformedMessageError, match="declares no marriage"):
        _check_request_view(led)


# ------------------------------------------------------- tournament: what it says first


def _config(tmp_path: Path, **more: Any) -> Any:
    return parse_config(
        {"name": "t", "ruleset": "classic", "max_deals": 1, "matches_per_table": 1,
         "db": str(tmp_path / "t.sqlite"), "out": str(tmp_path / "out"), **more},
        source="test.toml", base_dir=tmp_path,
    )  # fmt: skip


def test_fresh_over_a_stored_tournament_of_no_match_says_nothing(tmp_path: Path) -> None:
    """--fresh says what it forgets only when matches are stored (mutant: "forgets the 0
    matches" of a tournament stored before its first match)."""
    cfg = _config(tmp_path, bots={"a": "random", "b": "random", "c": "random"})
    console = Console(record=True, width=200)
    stored = ("2026-12-06T10:00:00", None, 0, cfg.fingerprint)
    tournament_cli._say_what_is_stored(cfg, stored, False, console)
    assert console.export_text() == ""
    tournament_cli._say_what_is_stored(cfg, (*stored[:2], 2, cfg.fingerprint), False, console)
    assert "--fresh forgets the 2 matches stored" in console.export_text()


def test_the_port_note_is_said_of_port_0_only(tmp_path: Path) -> None:
    """Remote bots and port 0: each run listens on another port, said so; a fixed port is
    not (mutant: the test turned round)."""
    bots = {"a": "random", "b": "random", "r": {"remote": True, "token": "t" * 32}}
    for port, said in ((0, True), (50051, False)):
        console = Console(record=True, width=300)
        tournament_cli._announce(_config(tmp_path, bots=bots, port=port), console)
        assert ("every run listens on another free port" in console.export_text()) is said


def test_events_in_order_are_no_gap(caplog: pytest.LogCaptureFixture) -> None:
    """A match's events numbered one by one say nothing of events that never came (mutant:
    the last seq kept only past a gap, the second event was taken for one after a gap)."""
    script, _ = _script_with_events()
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "1"), ("m1", "2")]
    assert "never came" not in caplog.text


def test_a_new_tournament_is_said_beside_the_latest_finished_of_its_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two finished tournaments of the config's name (two weeks): the note names the latest
    (mutant: the first stored, last month's)."""
    cfg = _config(tmp_path, bots={"a": "random", "b": "random", "c": "random"})
    with Storage(cfg.db) as st:
        for week in ("t-week1", "t-week2"):
            st.ensure_tournament(week, name="t", fingerprint=week, config={"name": "t"},
                                 total_matches=0, bots=[])  # fmt: skip
        with caplog.at_level(logging.INFO, logger="arena.tournament.progress"):
            runner_mod._say_unfinished_namesakes(cfg, st)
    assert f"a new tournament, {cfg.tournament_id}, beside t-week2 of the same name" in caplog.text


def test_a_bot_seated_in_a_stored_match_plays_in_its_tournament(tmp_path: Path) -> None:
    """``tournaments_of``: a tournament that lists no bots (an older `arena serve --db`'s)
    holds those seated in its stored matches (mutant: the match players left out), the
    latest created first."""
    with Storage(tmp_path / "t.sqlite") as st:
        st.ensure_tournament("listed", name="t", fingerprint="l", config={"name": "t"},
                             total_matches=1, bots=[("ann", "sdk")])  # fmt: skip
        st.ensure_tournament("serve-1", name="serve", fingerprint="s", config={"name": "serve"},
                             total_matches=0, bots=[])  # fmt: skip
        with st.conn:  # (a stored match's rows, as a serve run wrote them)
            st.conn.execute(
                "INSERT INTO matches VALUES ('serve-1-m1', 'serve-1', 0, 0, 0, 1, '[]', '', '',"
                " 0, 1, '{}')"
            )
            st.conn.execute(
                "INSERT INTO match_players (match_id, seat, bot, score, place)"
                " VALUES ('serve-1-m1', 0, 'ann', 0, 1)"
            )
        assert st.tournaments_of("ann") == ["serve-1", "listed"]
        assert st.tournaments_of("nobody") == []


def test_a_quick_bot_leaving_from_a_hook_on_the_loop_leaves_cleanly() -> None:
    """A quick bot's hook called on the loop that raises ``KeyboardInterrupt`` (or
    ``SystemExit``) leaves as from ``act``: a clean stop, exit code 130, nothing more
    answered (mutant: swallowed, the bot played on)."""
    g = _game()
    other = next(s for s in range(3) if s != g.to_act)

    class Leaves(Bot):
        quick = True

        def act(self, view: PlayerView) -> Action:
            return view.legal_actions[0]

        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            raise KeyboardInterrupt

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()
        msg = request("m1", g, "1")
        ev = pb.Event(match_id="m1", seq=1)
        ev.action.CopyFrom(protocol.seat_action_to_pb(other, Pass()))
        msg.events.append(ev)
        yield msg
        await asyncio.sleep(GUARD)

    summary, arena = play(Leaves, script)
    assert summary.exit_code == 130 and "the bot left: KeyboardInterrupt" in summary.reason
    assert arena.streams[0].decided() == [("m1", "0")]


def test_serve_refuses_a_tournament_name_a_config_could_not_have(tmp_path: Path) -> None:
    """``arena serve --name`` is checked as a config's ``name`` is (mutant: not checked)."""
    from click.testing import CliRunner

    from arena.cli import main

    got = CliRunner().invoke(
        main, ["serve", "--db", str(tmp_path / "s.sqlite"), "--name", "bad name!"]
    )
    assert got.exit_code == 2 and "a tournament name starts with a letter" in got.output
