"""The SDK runner against a hostile arena, round 2: views that contradict themselves or the
match, a resumption that changes the bot's seat, a flood of requests for one match, and
refusals whose text carries escape sequences. The fake arena is that of
``test_hostile_arena.py`` (grpc.aio on port 0); every server and process started here is
stopped before its test ends."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pytest

from arena.protocol import action_event_to_pb, card_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import (
    Action,
    Bid,
    Card,
    DealResult,
    Game,
    Give,
    HiddenGive,
    Pass,
    Play,
    PlayerView,
    observe,
    parse_card,
)
from sdk import Bot
from tests.sdk.test_hostile_arena import (
    ARENA_BOT,
    GUARD,
    WELCOME,
    Out,
    Stream,
    _bot_file,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    deal_ended,
    ended,
    play,
    request,
    started,
)

ROOT = Path(__file__).parents[2]
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"


class Recorder(Bot):
    """Records the views its calls get (a class attribute: one list for every match)."""

    seen: ClassVar[list[tuple[str, PlayerView]]] = []

    def act(self, view: PlayerView) -> Action:
        self.seen.append(("act", view))
        return view.legal_actions[0]

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        self.seen.append(("on_deal_end", view))


@pytest.fixture(autouse=True)
def _fresh_recorder() -> None:
    Recorder.seen = []


def _corrupt(msg: pb.ServerMessage, how: str) -> pb.ServerMessage:
    """A copy of request ``msg`` whose view contradicts itself as ``how`` says."""
    from arena.protocol import action_to_pb
    from engine import DECK

    out = pb.ServerMessage()
    out.CopyFrom(msg)
    v = out.decision_request.view
    if how == "to_act":  # another seat is to act, yet the bot is asked
        v.to_act = (v.seat + 1) % len(v.players)
    elif how == "no_to_act":
        v.ClearField("to_act")
    elif how == "card_not_held":  # a legal play of a card the hand does not hold
        held = {(c.suit, c.rank) for c in v.hand}
        card = next(c for c in DECK if (c.suit + 1, c.rank + 1) not in held)
        del v.legal_actions[:]
        v.legal_actions.append(action_to_pb(Play(card)))
    return out


@pytest.mark.parametrize("how", ["to_act", "no_to_act", "card_not_held"])
def test_a_request_whose_view_contradicts_itself_is_refused_naming_it(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a request whose view said another seat (or nobody) was to act, or listed a
    legal play of a card the hand does not hold, was handed to the bot as is: the bot got
    a view breaking what PlayerView documents (``legal_actions`` empty unless ``to_act ==
    seat``; a play is of a card held), and a bot that trusted it (``view.hand.index``)
    raised. Now it is refused as malformed, naming the field, and not answered (the
    referee's deadline plays the seat); the next request is answered."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield _corrupt(request("m1", g, "1"), how)
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Recorder, script)
    assert arena.streams[0].decided() == [("m1", "2")]
    assert [k for k, _ in Recorder.seen] == ["act"]
    assert "malformed decision_request from the arena (match m1), ignored: view." in caplog.text


def test_an_unsorted_hand_reaches_the_bot_sorted() -> None:
    """Defect: the hand was passed on in the arena's order; PlayerView documents it
    ascending (``hand``: "sorted Cards"), and a bot taking ``hand[0]`` as its lowest card
    was misled. Now the SDK sorts it."""
    g = _game()
    req = request("m1", g, "1")
    cards = list(req.decision_request.view.hand)
    del req.decision_request.view.hand[:]
    req.decision_request.view.hand.extend(reversed(cards))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield req
        await s.decision()

    play(Recorder, script)
    [(_, view)] = Recorder.seen
    assert len(view.hand) == len(cards) > 1
    assert list(view.hand) == sorted(view.hand)


def test_a_resumption_that_changes_the_seat_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: a MatchStarted with ``resumed`` for a match under way, naming another seat
    (or ruleset) than the match's, replaced the match's view without a word: the bot's
    next hook got a view of another seat than its own (``on_deal_end``), and every later
    request was refused as "view.seat". Now the resumption is refused, naming both seats,
    and the match keeps its seat and view."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    other = (seat + 1) % 3

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        again = started("m1", g)
        again.match_started.resumed = True
        again.match_started.seat = other
        again.match_started.view.CopyFrom(view_to_pb(observe(g, other)))
        yield again
        yield pb.ServerMessage(events=[deal_ended("m1")])
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Recorder, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert [(k, v.seat) for k, v in Recorder.seen] == [("on_deal_end", seat), ("act", seat)]
    assert (f"match m1: MatchStarted resumes the match as seat {other}, but the bot sits "
            f"in seat {seat}: refused") in caplog.text  # fmt: skip


class Blocked(Bot):
    """Its first call in match m1 waits until released; records (match, request view)."""

    entered = threading.Event()
    release = threading.Event()
    asked: ClassVar[list[str]] = []

    def act(self, view: PlayerView) -> Action:
        Blocked.asked.append(self.match_id)
        if self.match_id == "m1" and not Blocked.entered.is_set():
            Blocked.entered.set()
            Blocked.release.wait(GUARD)
        return view.legal_actions[0]

    @staticmethod
    def reset() -> None:
        Blocked.entered.clear()
        Blocked.release.clear()
        Blocked.asked = []


async def busy_in_m1(g: Game) -> AsyncIterator[Out]:
    """The arena's opening: matches m1 and m2 start, and m1's first request holds the
    bot (a ``Blocked``) until released."""
    yield WELCOME
    yield started("m1", g)
    yield started("m2", g)
    yield request("m1", g, "0")
    await asyncio.to_thread(Blocked.entered.wait, GUARD)


def test_a_flood_of_requests_for_a_busy_match_queues_only_the_newest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: every request that came while the bot was busy in its match queued a step
    of its own, holding its view, and each was asked in turn once the bot was free: an
    arena sending requests faster than the bot decides (or one request id again and
    again) grew the runner's queue without bound and had the bot answer requests long
    superseded (the arena asks one decision of a seat at a time). Now a newer request
    replaces one still waiting for the bot, with a warning; only the newest is asked."""
    g = _game()
    n = 300
    Blocked.reset()
    got: list[tuple[str, str]] = []

    async def script(s: Stream) -> AsyncIterator[Out]:
        async for m in busy_in_m1(g):
            yield m
        flood = [request("m1", g, str(i)) for i in range(1, n + 1)]
        flood += [request("m1", g, str(n))] * n  # the newest, again and again
        yield pb.ServerMessage(batch=pb.Batch(messages=flood))
        yield request("m2", g, "1")  # answered: the flood before it has been read
        d = await s.decision()
        got.append((d.match_id, d.request_id) if d else ("", ""))
        Blocked.release.set()
        while got[-1] != ("m1", str(n)):
            d = await s.decision()
            if d is None:
                break
            got.append((d.match_id, d.request_id))

    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            play(Blocked, script)
    finally:
        Blocked.release.set()
    assert got == [("m2", "1"), ("m1", "0"), ("m1", str(n))]
    assert Blocked.asked.count("m1") == 2
    assert ("match m1: request 1 was superseded by request 2 before the bot was asked: not "
            "asked (the arena asks one decision of a seat at a time)") in caplog.text  # fmt: skip


async def _refusing_arena_bot(tmp: Path, code: grpc.StatusCode, details: str) -> tuple[int, str]:
    """``arena-bot run`` against an arena that ends every stream with ``code`` and
    ``details``; its exit code and stderr (bytes decoded as they are)."""

    async def refuse(request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(code, details)

    rc, err, _ = await _arena_bot_against(tmp, refuse)
    return rc, err


async def _arena_bot_against(
    tmp: Path, play: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[None]]
) -> tuple[int, str, str]:
    """``arena-bot run`` against a server whose ``Play`` is ``play``; its exit code, stderr
    (bytes decoded as they are) and the server's address."""
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("arena.v1.Arena", {
        "Play": grpc.stream_stream_rpc_method_handler(play)})  # fmt: skip
    server.add_generic_rpc_handlers((handler,))
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *ARENA_BOT, "run", _bot_file(tmp, "        return None\n"),
            "--arena", address, "--token", "t", stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, cwd=str(tmp), env={**env, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        try:
            async with asyncio.timeout(3 * GUARD):
                _, err = await proc.communicate()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    finally:
        await server.stop(0)
    assert proc.returncode is not None
    return proc.returncode, err.decode("utf-8", errors="replace"), address


@pytest.mark.parametrize(("code", "exit_code"), [
    (grpc.StatusCode.UNAUTHENTICATED, 2),
    (grpc.StatusCode.PERMISSION_DENIED, 1),
    (grpc.StatusCode.ABORTED, 1),
])  # fmt: skip
def test_a_refusal_with_escape_sequences_is_printed_written_out(
    tmp_path: Path, code: grpc.StatusCode, exit_code: int
) -> None:
    """Defect: the status details with which the arena refused the stream for good (a
    token it does not know, a status the SDK does not retry, a takeover) were printed raw
    by ``arena-bot run`` as it exited (round 13 wrote out the log lines, not this last
    one): the arena's escape sequences were obeyed by the terminal (a window title, a
    cleared screen). Now they are written out, as in the log lines. (gRPC itself bounds
    the details: 16 KiB.)"""
    rc, err = asyncio.run(_refusing_arena_bot(tmp_path, code, f"no{EVIL}pe"))
    assert rc == exit_code, err
    for c in "\x1b\x07\x9b\u202e":
        assert c not in err
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("arena-bot: the arena at 127.0.0.1:"), err
    assert "no\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202epe" in last


def _short(msg: pb.ServerMessage, how: str) -> pb.ServerMessage:
    """A copy of MatchStarted ``msg`` whose view holds fewer values than seats (``how``)."""
    out = pb.ServerMessage()
    out.CopyFrom(msg)
    v = out.match_started.view
    if how == "scores":
        del v.scores[1:]
    elif how == "active_seats":
        del v.active_seats[:]
    elif how == "barrel":
        v.barrel.append(-1)
    elif how == "deal_results":
        r = deal_ended("m1").deal_ended
        del r.takes[2:]
        v.deal_results.append(r)
        v.deal_number += 1  # (a view holds the results of the deals before its own only)
    return out


@pytest.mark.parametrize(("how", "field"), [
    ("scores", "view.scores"), ("active_seats", "view.active_seats"), ("barrel", "view.barrel"),
    ("deal_results", "deal_result.takes"),
])  # fmt: skip
def test_a_view_without_a_value_per_seat_is_refused_naming_it(
    how: str, field: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a view whose per-seat values did not match the seats (one score at a
    3-seat table, no active seats, a barrel of one seat, a deal result with 2 takes)
    reached the bot: ``view.scores[view.seat]`` or ``view.first_hand`` raised IndexError in
    the bot's own code. Now the view is refused as malformed, naming the field."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _short(started("m1", g), how)
        yield started("m2", g)
        yield request("m2", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Recorder, script)
    assert arena.streams[0].decided() == [("m2", "1")]
    assert f"match m1: malformed MatchStarted from the arena, refused ({field}:" in caplog.text


class Results(Bot):
    """Records the results its hooks get."""

    got: ClassVar[list[object]] = []

    def act(self, view: PlayerView) -> Action:
        return view.legal_actions[0]

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        Results.got.append(result)

    def on_match_end(self, view: PlayerView, result: Any) -> None:
        Results.got.append(result)


def test_results_without_a_value_per_seat_are_refused(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: a ``deal_ended`` event with 2 deltas at a 3-seat table, and a MatchEnded
    whose result had no scores or places, reached the bot's hooks as they were (its
    ``result.scores[self.seat]`` raised). Now the deal result is refused, naming the field,
    and the match's end is still counted, without ``on_match_end`` (it has no result to
    give), saying so."""
    g = _game()
    Results.got = []
    bad_deal = deal_ended("m1")
    del bad_deal.deal_ended.deltas[2:]
    bad_end = pb.ServerMessage(match_ended=pb.MatchEnded(
        match_id="m1", result=pb.MatchResult(deals=3, reason="target")))  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[bad_deal, deal_ended("m1")])
        yield bad_end

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Results, script, matches=1)
    assert summary.matches == 1
    assert len(Results.got) == 1 and isinstance(Results.got[0], DealResult)
    text = caplog.text
    assert (
        "malformed deal_ended event from the arena (match m1), ignored: deal_result.deltas" in text
    )
    assert ("match m1: malformed result from the arena (match_result.scores: 0 values for 3 "
            "seats): the match ends without on_match_end") in text  # fmt: skip


def test_a_deal_end_sent_again_and_again_is_hooked_once(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: every ``deal_ended`` event queued an ``on_deal_end`` call, holding a view and
    a result, even for a deal whose end the bot had been told already: an arena repeating
    one event (a deal ends once) grew the queue of a bot with a slow hook without bound and
    had the hook called for the same deal again and again. Now a deal's end, or an
    earlier deal's, after the bot was told of it is ignored, with a warning."""
    g = _game()
    Results.got = []

    def deal(number: int) -> pb.Event:
        ev = deal_ended("m1")
        ev.deal_ended.deal_number = number
        return ev

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[deal(1)] * 200 + [deal(0)])
        yield pb.ServerMessage(events=[deal(2), deal(2)])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Results, script, matches=1)
    assert summary.matches == 1
    assert [r.number for r in Results.got if isinstance(r, DealResult)] == [1, 2]
    assert len(Results.got) == 3
    assert ("match m1: deal_ended event for deal 2, whose end (or a later deal's) the bot "
            "was told of already: ignored") in caplog.text  # fmt: skip


class Listener(Bot):
    """Notes the actions and talons it is told (a class attribute: one list)."""

    told: ClassVar[list[object]] = []

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        self.told.append((seat, action))

    def on_talon_taken(
        self, view: PlayerView, declarer: int, talon: tuple[Card, ...] | None
    ) -> None:
        self.told.append((declarer, talon))


def test_a_give_to_no_seat_or_to_its_giver_and_a_talon_with_a_card_twice_are_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: an action event's give was handed to ``on_action`` whatever seat it named
    (seat 5 at a table of three, the giver itself): only the actor's seat was checked.
    Now such an event is refused as malformed, naming it, as a bad actor seat is; a talon
    with a card twice says so (it read "not a talon: 3 cards")."""
    g = _game()
    Listener.told = []

    def give(to: int, hidden: bool, seq: int) -> pb.Event:
        action = HiddenGive(to) if hidden else Give(parse_card("9H"), to)
        return action_event_to_pb("m1", seq, pb.ACTION_SOURCE_UNSPECIFIED, 1, action)

    talon = pb.Event(match_id="m1", seq=4)
    talon.talon_taken.seat = 1
    talon.talon_taken.cards.extend(card_to_pb(parse_card(c)) for c in ("9H", "9H", "TH"))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        gives = [give(5, False, 1), give(1, True, 2), give(2, False, 3)]
        yield pb.ServerMessage(events=[*gives, talon])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Listener, script, matches=1)
    assert summary.matches == 1
    assert Listener.told == [(1, Give(parse_card("9H"), 2))]
    for words in ("action.give.to: no seat 5 at a 3-player table",
                  "action.give.to: seat 1 gives to itself",
                  "talon_taken.cards: not a talon: a card twice"):  # fmt: skip
        assert words in caplog.text


def test_an_action_or_talon_event_sent_again_is_told_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: an action or talon_taken event repeated by the arena (its ``seq`` not above
    the last one's: the referee numbers a match's events by one) was told to the hook
    again, each time: a bot following the cards counted the card twice. Now a repeat is
    ignored with a warning; an arena that leaves every ``seq`` at 0 is not checked."""
    g = _game()
    Listener.told = []
    bid = action_event_to_pb("m1", 1, pb.ACTION_SOURCE_UNSPECIFIED, 1, Bid(110))
    passed = action_event_to_pb("m1", 2, pb.ACTION_SOURCE_UNSPECIFIED, 2, Pass())
    talon = pb.Event(match_id="m1", seq=3)
    talon.talon_taken.seat = 1
    unnumbered = action_event_to_pb("m1", 0, pb.ACTION_SOURCE_UNSPECIFIED, 2, Pass())

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[bid, bid, passed, bid, talon, passed, talon])
        yield pb.ServerMessage(events=[unnumbered, unnumbered])
        yield ended("m1")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Listener, script, matches=1)
    assert summary.matches == 1
    assert Listener.told == [(1, Bid(110)), (2, Pass()), (1, None), (2, Pass()), (2, Pass())]
    assert "match m1: action event 1 repeats an earlier one (the last was 1): ignored" in (
        caplog.text
    )
    assert "match m1: talon_taken event 3 repeats an earlier one (the last was 3)" in caplog.text
