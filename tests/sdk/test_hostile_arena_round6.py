"""The SDK runner against a hostile arena, round 6: a Batch of 10,000 requests for one
seat, ids too long for an answer to echo, and lines of megabytes for the log. The fake
arena is that of ``test_hostile_arena.py`` (grpc.aio on port 0); every server started here
is stopped before its test ends."""

from __future__ import annotations

import io
import logging
import random
import re
from collections.abc import AsyncIterator
from typing import ClassVar

import grpc
import pytest

from arena.render import PrintableFormatter
from arena.v1 import arena_pb2 as pb
from engine import Action, Bid, Game, GameResult, Give, Pass, Phase, PlayerView
from tests.sdk.test_hostile_arena import (
    WELCOME,
    FirstLegal,
    Out,
    Stream,
    _game,
    _no_bot_call_left,  # noqa: F401 (the fixture: every bot call has returned)
    ended,
    play,
    request,
    started,
)
from tests.sdk.test_hostile_arena_round3 import _end, _ending


def test_a_batch_of_10000_requests_for_one_seat_is_said_a_few_times_and_the_newest_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: each request that replaced one waiting for the bot (busy in its match) wrote
    a warning of its own: a Batch of 10,000 requests for one seat wrote 10,000 lines. Now
    the first few of a match are said, the last saying that the rest are not, as for
    repeated events; the bot (made meanwhile) is asked the newest only."""
    g = _game()
    n = 10_000

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(
            batch=pb.Batch(messages=[request("m1", g, str(i)) for i in range(n)])
        )
        while (d := await s.decision()) is not None and d.request_id != str(n - 1):
            pass

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", str(n - 1))]
    said = [r.getMessage() for r in caplog.records if "was superseded" in r.getMessage()]
    assert len(said) == 5
    assert said[0].startswith("match m1: request 0 was superseded by request 1 before the bot")
    assert said[-1].endswith("(further superseded requests of this match are not said)")


def test_ids_too_long_to_echo_are_refused_and_the_bot_plays_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request id (or a match's id) of megabytes was echoed in the answer, which
    the arena's receive limit refused (RESOURCE_EXHAUSTED): the runner stopped, every match
    lost, for one bad message. Now an id over 256 characters (the referee's are at most
    64) makes its message malformed: a MatchStarted is refused, and is not named in the
    next Hello (it would be too big for the arena too), a request is not answered; the
    bot plays on, across a reconnection."""
    g = _game()
    huge = "x" * (5 * 1024 * 1024)  # over gRPC's default receive limit (4 MiB)

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started(huge, g)
        yield request("m1", g, huge)
        yield request("m1", g, "2")
        await s.decision()
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield request("m1", g, "3")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = _ending(FirstLegal, first, second)
    assert not isinstance(summary, Exception), summary
    assert summary.reason == "the arena closed the stream"
    assert [s.decided() for s in arena.streams] == [[("m1", "2")], [("m1", "3")]]
    assert list(arena.streams[1].received[0].hello.running) == ["m1"]
    assert (
        "malformed decision_request from the arena (match m1), ignored: request_id: an id of "
        "5,242,880 characters, over the 256 this SDK echoes" in caplog.text
    )
    assert "match_started.match_id: an id of 5,242,880 characters" in caplog.text


def test_a_line_of_megabytes_from_the_arena_is_cut_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: ``arena-bot run``'s log wrote what the arena sent whole: a refusal's text,
    a server version or a match id of 20 MB was a line of 20 MB (and its terminal's
    scrollback). Its formatter now cuts a line of the log to 2,000 characters, saying how
    many more there were, as it did a traceback's lines."""
    g = _game()
    words = "y" * (20 * 1024 * 1024)

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield pb.ServerMessage(
            welcome=pb.Welcome(bot_name="b", server_version=words, protocol_version=1)
        )
        yield started("m1", g)
        rejected = pb.DecisionRejected(request_id="1", match_id="m1", message=words)
        yield pb.ServerMessage(decision_rejected=rejected)
        yield request("m1", g, "2")
        await s.decision()

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("sdk.client")
    logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO, logger="sdk.client"):
            _, arena = play(FirstLegal, script)
    finally:
        logger.removeHandler(handler)
    assert arena.streams[0].decided() == [("m1", "2")]
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) < 2100
    long = [line for line in lines if line.endswith(" more characters)")]
    assert len(long) == 2
    assert long[0].startswith("INFO sdk.client: connected to 127.0.0.1:")
    assert long[1].startswith(
        "WARNING sdk.client: match m1: decision rejected (unspecified, strike 0 of 0): yyy"
    )


def test_messages_the_runner_cannot_use_sent_without_end_are_said_a_few_times(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: each message the runner could not use wrote a line of its own: an arena
    sending 1,000 bytes that do not parse, requests for a match never started or without
    legal actions, views with a card twice in the hand, refusals of decisions never sent
    or a second Welcome wrote 1,000 lines of each. Now the first five of each kind are
    said (of requests for matches not held, 64), the last of them saying so, then the
    10th, 100th, 1,000th with their count; the bot plays on."""
    g = _game()
    n = 1000
    twice = request("m1", g, "x")
    hand = twice.decision_request.view.hand
    hand.append(hand[0])
    bare = request("m1", g, "y")
    bare.decision_request.view.ClearField("legal_actions")
    refusal = pb.DecisionRejected(request_id="q", match_id="zz", message="no such request")
    floods = {
        "does not parse as arena.v1.ServerMessage": b"\xff\xff\xff\xff\x0f\x00garbage",
        "decision request for unknown match zz: ignored": request("zz", g, "1"),
        "lists no legal actions": bare,
        "view.hand: Q♠ twice": twice,
        "match zz: decision rejected": pb.ServerMessage(decision_rejected=refusal),
        "a second Welcome from the arena": WELCOME,
    }

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        for m in floods.values():
            for _ in range(n):
                yield m
        yield request("m1", g, "last")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "last")]
    for words in floods:
        # Requests for matches not held, each naming its own, are said up to 64 times (as
        # many as the referee may answer for after a reconnection)
        told = 64 if "unknown match" in words else 5
        said = [r.getMessage() for r in caplog.records if words in r.getMessage()]
        assert len(said) == told + 2 + (told < 10), words  # then the 10th, 100th, 1,000th
        assert said[told - 1].endswith(
            f"({told} of these so far: from now on only the 10th, 100th, ... are said)"
        ), said[told - 1]
        assert said[-1].endswith("(1,000 of these so far)"), said[-1]


def test_matches_started_without_end_that_the_runner_refused_keep_the_hello_small(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: the runner remembered every match whose start it refused (a ruleset it
    cannot read) until its end, and named them all in the next Hello's ``running``: an
    arena that started 120,000 of them without end made that Hello bigger than the
    arena's receive limit, and the refusal (RESOURCE_EXHAUSTED) stopped the bot. Now the
    latest 256 are kept; the bot comes back and plays on."""
    g = _game()
    n = 120_000  # ids of 40 characters: 4.8 MB, over gRPC's default receive limit (4 MiB)

    def refused(i: int) -> pb.ServerMessage:
        return pb.ServerMessage(match_started=pb.MatchStarted(match_id=f"{i:040d}", seat=0))

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        for i in range(0, n, 10_000):
            yield pb.ServerMessage(batch=pb.Batch(messages=map(refused, range(i, i + 10_000))))
        yield request("m1", g, "1")
        await s.decision()
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = _ending(FirstLegal, first, second)
    assert not isinstance(summary, Exception), summary
    assert [s.decided() for s in arena.streams] == [[("m1", "1")], [("m1", "2")]]
    running = arena.streams[1].received[0].hello.running
    assert running[0] == "m1"
    assert list(running[1:]) == [f"{i:040d}" for i in range(n - 256, n)]


class Seen(FirstLegal):
    """Answers the first legal action; records the phase and legal actions it is asked
    with (one list for every match)."""

    asked: ClassVar[list[tuple[Phase, tuple[Action, ...]]]] = []

    def act(self, view: PlayerView) -> Action:
        self.asked.append((view.phase, view.legal_actions))
        return super().act(view)


@pytest.mark.parametrize("how", ["a play among the bids", "plays only", "a bid in the play"])
def test_legal_actions_of_another_phase_are_refused_naming_them(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a request whose legal actions were of a kind its phase has not (a play of a
    card in the hand during the auction, a bid during the play) reached the bot in silence:
    its ``bid`` method, given plays, answered one of them (or none of the bids it looks
    for). Now the request is refused naming the action and the phase, and the bot is asked
    the next one."""
    Seen.asked.clear()
    g = _game()
    bidding = request("m1", g, "1")
    card = bidding.decision_request.view.hand[0]
    if how == "a play among the bids":
        bidding.decision_request.view.legal_actions.append(pb.Action(play=pb.PlayCard(card=card)))
    elif how == "plays only":
        del bidding.decision_request.view.legal_actions[:]
        bidding.decision_request.view.legal_actions.append(pb.Action(play=pb.PlayCard(card=card)))
    else:
        bidding.decision_request.view.phase = pb.PHASE_PLAYING
        bidding.decision_request.view.legal_actions.append(pb.Action(play=pb.PlayCard(card=card)))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield bidding
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    assert len(Seen.asked) == 2
    for phase, actions in Seen.asked:
        assert phase is Phase.BIDDING and all(isinstance(a, Bid | Pass) for a in actions)
    which = r"(bid \d+|pass)" if how == "a bid in the play" else r"play \S+"
    phase_name = "playing" if how == "a bid in the play" else "bidding"
    assert re.search(
        r"malformed decision_request from the arena \(match m1\), ignored: "
        rf"view.legal_actions: {which} is no action of the {phase_name} phase",
        caplog.text,
    ), caplog.text


def _passing() -> Game:
    """A game whose declarer is to give a card to each opponent."""
    g = _game()
    rng = random.Random(1)
    while g.phase is not Phase.PASSING:
        g.apply(rng.choice(g.legal_actions()))
    return g


@pytest.mark.parametrize(
    ("to", "said"),
    [(7, "to no seat of the deal (0, 1, 2)"), (None, "to the giver itself"),
     (2**31, "to no seat of the deal (0, 1, 2)")],
    ids=["seat 7", "the giver", "2**31"],
)  # fmt: skip
def test_gives_to_no_seat_of_the_deal_are_refused_naming_them(
    to: int | None, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a request whose legal gives were to a seat past the table, or to the giver
    itself, reached the bot in silence (the same give as an event was refused). Now the
    request is refused naming the give, and the bot is asked the next one."""
    Seen.asked.clear()
    g = _passing()
    seat = g.to_act
    bad = request("m1", g, "1")
    for a in bad.decision_request.view.legal_actions:
        a.give.to_seat = seat if to is None else to

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield bad
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    for _, actions in Seen.asked:
        assert all(isinstance(a, Give) and a.to not in (seat, 7, 2**31) for a in actions)
    assert re.search(
        r"malformed decision_request from the arena \(match m1\), ignored: "
        rf"view.legal_actions: give \S+ to \d+ is {re.escape(said)}",
        caplog.text,
    ), caplog.text


def test_legal_actions_listed_twice_are_refused_naming_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request listing its legal actions again and again (20,000 times over, a
    view of 3 MB) reached the bot in silence: one choosing at random, or weighing each
    option by how often it comes, chose otherwise than the rules offer. Now the request is
    refused naming the first action listed twice, and the bot is asked the next one.
    (Listed 41 times over here, within the 1,024 entries of a view's list the SDK reads:
    20,000 times over is refused for its length since round 53.)"""
    Seen.asked.clear()
    g = _game()
    bad = request("m1", g, "1")
    legal = list(bad.decision_request.view.legal_actions)
    for _ in range(40):
        bad.decision_request.view.legal_actions.extend(legal)
    assert len(bad.decision_request.view.legal_actions) <= 1024

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield bad
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    assert [len(set(actions)) == len(actions) for _, actions in Seen.asked] == [True, True]
    assert re.search(
        r"malformed decision_request from the arena \(match m1\), ignored: "
        r"view.legal_actions: bid \d+ twice",
        caplog.text,
    ), caplog.text


def test_a_legal_bid_not_above_the_standing_bid_is_refused_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request whose legal bids were not above the standing bid its view states
    (a bid of 100 over 100) reached the bot in silence. Now it is refused naming the bid,
    and the bot is asked the next request."""
    Seen.asked.clear()
    g = _game()
    bad = request("m1", g, "1")
    view = bad.decision_request.view
    assert view.bid == 100  # (the opening bid stands)
    view.legal_actions.append(pb.Action(bid=pb.Bid(amount=100)))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield bad
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    assert (
        "malformed decision_request from the arena (match m1), ignored: view.legal_actions: "
        "bid 100 is not above the standing bid, 100" in caplog.text
    )


class Ends(FirstLegal):
    """Records the result each ``on_match_end`` gets (one list for every match)."""

    results: ClassVar[list[GameResult]] = []

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        self.results.append(result)


@pytest.mark.parametrize(
    ("places", "shortfalls", "said"),
    [([0, 2, 3], [], "match_result.places: place 0 at a 3-player table"),
     ([1, 2, 9], [], "match_result.places: place 9 at a 3-player table"),
     ([1, 2, 3], [0] * 1000, "match_result.shortfalls: 1000 values for 3 seats")],
    ids=["place 0", "place 9 of 3", "1000 shortfalls"],
)  # fmt: skip
def test_a_result_with_places_out_of_range_is_refused_naming_them(
    places: list[int], shortfalls: list[int], said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a MatchEnded whose places were out of range (place 0, place 9 of 3) or
    with a shortfall per seat of a thousand reached the bot's ``on_match_end`` as it was
    (a bot ranking itself by its place, or reading ``result.shortfalls[self.seat]``, got
    what no match has). Now the result is refused, naming it; the match's end is still
    counted, without ``on_match_end``."""
    Ends.results.clear()
    g = _game()
    result = pb.MatchResult(scores=[1000, 0, 0], places=places, shortfalls=shortfalls, deals=3,
                            reason="target")  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started("m2", g)
        yield pb.ServerMessage(match_ended=pb.MatchEnded(match_id="m1", result=result))
        yield ended("m2")

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, _ = play(Ends, script, matches=2)
    assert summary.matches == 2
    assert [r.places for r in Ends.results] == [(1, 2, 3)]  # m2's
    assert (
        f"match m1: malformed result from the arena ({said}): the match ends without "
        "on_match_end" in caplog.text
    )


def test_a_legal_play_declaring_no_marriage_is_refused_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a request offering to declare a marriage with a card that makes none (a
    nine, on a lead) reached the bot in silence: one that declares whenever it may chose
    it. Now the request is refused naming the play, and the bot is asked the next one."""
    Seen.asked.clear()
    g = _game()
    rng = random.Random(1)
    while g.phase is not Phase.PLAYING:
        g.apply(rng.choice(g.legal_actions()))
    bad = request("m1", g, "1")
    view = bad.decision_request.view
    assert not view.trick  # a lead
    nine = next(c for c in view.hand if c.rank == pb.RANK_NINE)
    view.legal_actions.append(pb.Action(play=pb.PlayCard(card=nine, declare=True)))

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield bad
        yield request("m1", g, "2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "2")]
    assert re.search(
        r"malformed decision_request from the arena \(match m1\), ignored: "
        r"view.legal_actions: play 9\S declare declares no marriage",
        caplog.text,
    ), caplog.text


class Tables(FirstLegal):
    """Records the players of every view it is asked with (one list for every match)."""

    players: ClassVar[list[tuple[str, ...]]] = []

    def act(self, view: PlayerView) -> Action:
        self.players.append(view.players)
        return super().act(view)


def test_a_resumption_at_another_table_is_refused_naming_its_players(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a resumed MatchStarted (after a reconnection) whose players were not the
    match's was taken as it was (its seat and rules were checked, not its table): the
    bot's view of the match it plays named other players. Now it is refused, naming both
    tables, and the match keeps its view."""
    Tables.players.clear()
    g = _game()
    other = _game(players=("x", "y", "z"))
    resumed = started("m1", other)
    resumed.match_started.resumed = True

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()
        await _end(grpc.StatusCode.UNAVAILABLE, "the arena is stopping")

    async def second(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield resumed
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = _ending(Tables, first, second)
    assert not isinstance(summary, Exception), summary
    assert [s.decided() for s in arena.streams] == [[("m1", "0")], [("m1", "1")]]
    assert Tables.players == [("a", "b", "c")] * 2
    assert "match m1 resumed" not in caplog.text
    assert (
        "match m1: MatchStarted resumes the match with players x, y, z, not the match's a, "
        "b, c: refused (the match keeps its seat, rules, players and view)" in caplog.text
    )
