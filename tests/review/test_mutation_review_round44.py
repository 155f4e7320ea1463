"""Mutation review of round 44's product changes: tests that kill the mutants the
session's own tests let survive (sdk/client.py's checks of what the arena sends and its
caps on what it logs, the referee's settling streams and the tournament's wait for them,
``ReplayError.for_people``). The fake arena is that of ``tests/sdk/test_hostile_arena.py``
(grpc.aio on port 0): every server started here is stopped before its test ends."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

import grpc
import pytest

from arena.protocol import action_to_pb, view_to_pb
from arena.tournament.runner import _wait_for_remote_results
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import Action, Game, Phase, Play, PlayerView
from engine.cards import parse_card
from engine.record import ReplayError
from engine.view import observe
from tests.sdk.test_hostile_arena import (
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
from tests.sdk.test_hostile_arena_round3 import _end, _ending
from tests.support.harness import arena, until


def test_an_id_of_256_characters_is_echoed_and_one_of_257_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK echoes ids of up to 256 characters (the referee's are at most 64): a match
    and a request id of exactly 256 are answered; a request id of 257 is refused, naming
    the limit (mutant: ``>`` -> ``>=`` refused the 256)."""
    g = _game()
    mid, rid = "m" * 256, "r" * 256

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started(mid, g)
        yield request(mid, g, "q" * 257)
        yield request(mid, g, rid)
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [(mid, rid)]
    assert "request_id: an id of 257 characters, over the 256 this SDK echoes" in caplog.text
    assert "an id of 256 characters" not in caplog.text


def test_a_start_refused_again_is_remembered_as_the_latest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Of the matches whose start the runner refused, the latest 256 are named in the
    next Hello: one refused again is the latest, not the oldest it first was (mutant: the
    re-refused match kept its first place and was forgotten first)."""
    g = _game()

    def refused(mid: str) -> pb.ServerMessage:
        return pb.ServerMessage(match_started=pb.MatchStarted(match_id=mid, seat=0))

    others = [f"o{i}" for i in range(256)]

    async def first(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield refused("again")
        for mid in others[:255]:
            yield refused(mid)
        yield refused("again")
        yield refused(others[255])
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
    running = list(arena.streams[1].received[0].hello.running)
    assert running == ["m1", *others[1:255], "again", others[255]]


def _refused_start(mid: str) -> pb.ServerMessage:
    """A MatchStarted the runner refuses (no ruleset)."""
    return pb.ServerMessage(match_started=pb.MatchStarted(match_id=mid, seat=0))


def _said(caplog: pytest.LogCaptureFixture, words: str, level: int) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if words in r.getMessage() and r.levelno == level
    ]


def test_the_faults_not_said_in_full_are_logged_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Of each kind of message the runner cannot use, the first five are said; the ones
    after them, until the 10th, are still logged at DEBUG (mutant: dropped)."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        for _ in range(7):
            yield WELCOME
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.DEBUG, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    words = "a second Welcome from the arena: ignored"
    assert len(_said(caplog, words, logging.WARNING)) == 5
    assert _said(caplog, words, logging.DEBUG) == [f"protocol violation: {words}"] * 2


def test_requests_for_a_refused_or_ended_match_are_said_up_to_64_times(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Requests for a match whose start was refused, or that has ended, each name their
    match: like those for an unknown match, up to 64 of each are said in full (as many
    as the runner remembers ended matches; mutants: five of them)."""
    g = _game()

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _refused_start("bad")
        yield started("m1", g)
        yield request("m1", g, "0")
        await s.decision()
        yield pb.ServerMessage(match_ended=pb.MatchEnded(
            match_id="m1", result=pb.MatchResult(scores=[1000, 0, 0], places=[1, 2, 3],
                                                 deals=3, reason="target")))  # fmt: skip
        for i in range(8):
            yield request("bad", g, f"b{i}")
            yield request("m1", g, f"o{i}")
        yield started("m2", g)
        yield request("m2", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m2", "1")]
    refused = "decision request for match bad (its start was refused above): ignored"
    assert _said(caplog, refused, logging.WARNING) == [refused] * 8
    over = "decision request for match m1, which has ended: ignored"
    assert _said(caplog, over, logging.ERROR) == [over] * 8


def test_each_kind_of_malformed_message_has_its_own_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first five of each kind of malformed message are said: a request malformed
    in another field after six with a card twice in the hand is said in full (mutant:
    one count for every malformed message, and it went to DEBUG)."""
    g = _game()
    twice = request("m1", g, "x")
    hand = twice.decision_request.view.hand
    hand.append(hand[0])

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        for _ in range(6):
            yield twice
        yield request("m1", g, "q" * 300)
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert len(_said(caplog, "view.hand: Q♠ twice", logging.ERROR)) == 5
    assert _said(caplog, "request_id: an id of 300 characters", logging.ERROR) == [
        "malformed decision_request from the arena (match m1), ignored: request_id: an id of "
        "300 characters, over the 256 this SDK echoes"
    ]


def test_refusals_for_a_match_played_without_the_bot_are_each_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refusal for a match the runner knows (played without the bot: its start was
    refused) is said each time, as for a match it plays; only refusals for matches it
    never heard of are capped (mutant: those of the refused match were capped too)."""
    g = _game()
    refusal = pb.DecisionRejected(
        request_id="q",
        match_id="bad",
        message="timed out",
        incident=pb.INCIDENT_TIMEOUT,
        strikes=1,
        strikes_allowed=3,
    )

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield _refused_start("bad")
        for _ in range(7):
            yield pb.ServerMessage(decision_rejected=refusal)
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert summary.rejected == 7
    said = _said(caplog, "match bad: decision rejected (timeout, strike 1 of 3)", logging.WARNING)
    assert len(said) == 7
    assert not any(s.endswith("so far)") for s in said)


def test_superseded_requests_are_counted_apart_from_actions_of_a_newer_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A match's superseded requests are said up to five times on their own count: five
    events with an action of a newer protocol's kind before them leave them said (mutant:
    the one count of both, which those five had used up)."""
    g = _game()

    class Told(FirstLegal):
        # With its own on_action: the SDK reads every action event for it. (FirstLegal has
        # none: once it was made, the events were not read at all, so nothing was said of
        # their kind; made after they came, as usual, they were. A loaded machine made the
        # bot first: none of the five said.)
        def on_action(self, view: PlayerView, seat: int, action: object) -> None:
            pass

    def newer(seq: int) -> pb.Event:
        ev = pb.Event(match_id="m1", seq=seq)
        ev.action.seat = 0
        ev.action.action.MergeFromString(b"\x42\x00")  # (a kind no field of this version)
        return ev

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(events=[newer(i) for i in range(1, 6)])
        yield pb.ServerMessage(
            batch=pb.Batch(messages=[request("m1", g, str(i)) for i in range(3)])
        )
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Told, script)
    assert arena.streams[0].decided() == [("m1", "2")]
    assert len(_said(caplog, "a newer protocol's", logging.WARNING)) == 5
    said = _said(caplog, "was superseded", logging.WARNING)
    assert [s.split(" before")[0] for s in said] == [
        "match m1: request 0 was superseded by request 1",
        "match m1: request 1 was superseded by request 2",
    ]


def test_a_request_sent_again_while_waiting_is_not_said_superseded(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request repeated while it waits for the bot (the same id) replaces itself in
    silence: only one of another id is said to supersede it (mutant: "request 0 was
    superseded by request 0")."""
    g = _game()
    rids = ["0", "0", "1"]

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield pb.ServerMessage(batch=pb.Batch(messages=[request("m1", g, r) for r in rids]))
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    said = _said(caplog, "was superseded", logging.WARNING)
    assert [s.split(" before")[0] for s in said] == [
        "match m1: request 0 was superseded by request 1"
    ]


class Seen(FirstLegal):
    """Answers the first legal action; records the legal actions it is asked with."""

    asked: ClassVar[list[tuple[Action, ...]]] = []

    def act(self, view: PlayerView) -> Action:
        self.asked.append(view.legal_actions)
        return super().act(view)


def _lead() -> Game:
    """A game at its first lead: seat 2 holds K♥ Q♥, K♠ without Q♠, and A♦ the one ace."""
    g = _game()
    rng = random.Random(2)
    while g.phase is not Phase.PLAYING:
        g.apply(rng.choice(g.legal_actions()))
    assert g.to_act == 2
    return g


def _declaring(mid: str, g: Game, rid: str, card: str) -> pb.ServerMessage:
    """A request of ``g``'s seat to act that also offers to lead ``card`` declaring."""
    msg = request(mid, g, rid)
    msg.decision_request.view.legal_actions.append(
        action_to_pb(Play(parse_card(card), declare=True))
    )
    return msg


def test_a_marriage_is_offered_only_with_its_partner_on_a_lead(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request may offer to declare a marriage with a king or queen whose partner is in
    the hand, on a lead: K♥ with Q♥ held reaches the bot; K♠ without Q♠, A♦ without
    the other aces, and K♣ with Q♣ but not on a lead are refused, naming the play
    (mutants: any king or queen, a king never, any ace, or off a lead too)."""
    Seen.asked.clear()
    g = _lead()
    follow = g.clone()
    follow.apply(Play(parse_card("9♠")))
    assert follow.to_act == 0

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield started("m1", g)
        yield started("m2", follow)
        yield request("m1", g, "0")
        await s.decision()  # the bot is made, and free
        yield _declaring("m1", g, "lone king", "K♠")
        yield _declaring("m1", g, "one ace", "A♦")
        yield _declaring("m2", follow, "following", "K♣")
        yield _declaring("m1", g, "ok", "K♥")
        await s.decision()
        yield request("m2", follow, "m2")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        _, arena = play(Seen, script)
    assert arena.streams[0].decided() == [("m1", "0"), ("m1", "ok"), ("m2", "m2")]
    assert Play(parse_card("K♥"), declare=True) in Seen.asked[1]
    for match, card in (("m1", "K♠"), ("m1", "A♦"), ("m2", "K♣")):
        assert (
            f"malformed decision_request from the arena (match {match}), ignored: "
            f"view.legal_actions: play {card} declare declares no marriage" in caplog.text
        ), card


def test_a_wrong_request_refusal_for_a_match_never_seen_is_still_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Only a ``wrong_request`` refusal for a match the bot has seen end is ignored (an
    answer that crossed the end): one for a match it never heard of is said (mutant: ignored
    as well, the "seen end" condition dropped), and since round 57 not counted as a rejected
    answer of the bot's (it refused none: tests/sdk/test_hostile_arena_round57.py)."""
    g = _game()
    refusal = pb.DecisionRejected(request_id="7", match_id="zz", message="no such match",
                                  incident=pb.INCIDENT_WRONG_REQUEST)  # fmt: skip

    async def script(s: Stream) -> AsyncIterator[Out]:
        yield WELCOME
        yield pb.ServerMessage(decision_rejected=refusal)
        yield started("m1", g)
        yield request("m1", g, "1")
        await s.decision()

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        summary, arena = play(FirstLegal, script)
    assert arena.streams[0].decided() == [("m1", "1")]
    assert summary.rejected == 0
    assert _said(caplog, "decision rejected", logging.WARNING) == [
        "match zz: decision rejected (wrong_request, no strike): no such match"
    ]


def test_a_resumption_in_another_seat_is_refused_naming_both_seats(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A resumed MatchStarted that seats the bot elsewhere is refused, naming the seat it
    gives and the bot's (mutant: named as a change of ruleset instead)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    other = (seat + 1) % 3
    resumed = started("m1", g)
    resumed.match_started.seat = other
    resumed.match_started.view.CopyFrom(view_to_pb(observe(g, other)))
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
        summary, arena = _ending(FirstLegal, first, second)
    assert not isinstance(summary, Exception), summary
    assert [s.decided() for s in arena.streams] == [[("m1", "0")], [("m1", "1")]]
    assert (
        f"match m1: MatchStarted resumes the match as seat {other}, but the bot sits in seat "
        f"{seat}: refused (the match keeps its seat, rules, players and view)" in caplog.text
    )


def test_a_stream_that_ended_is_out_of_its_settle_once_judged(tmp_path: Path) -> None:
    """Once a bot's stream has ended and its settle is over, ``streams_settled`` finds no
    stream in its settle and returns at once (mutant: the stream stayed listed as settling,
    and every stop of the arena waited the whole limit; here 600 s, so the generous
    deadline of 60 s catches it)."""
    md = (("authorization", "Bearer tok-x"),)

    async def main() -> None:
        async with arena(tmp_path) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=md)
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                await until(lambda: ref.session("x").connected, "x in")
                await call.done_writing()  # x leaves: its stream settles, then ends
                await until(lambda: not ref._attached, "the settle over")
                await asyncio.wait_for(ref.streams_settled(timeout=600), 60)
                call.cancel()
                assert ref.away_with_results() == []

    asyncio.run(main())


class _SettlingReferee:
    """A referee whose bot ``x`` is in its stream's settle: away with a result only once
    the settle is judged (``streams_settled``)."""

    def __init__(self) -> None:
        self.settled = False
        self.waited: list[tuple[float, list[str]]] = []

    async def streams_settled(self, timeout: float | None = None) -> None:
        self.settled = True

    def away_with_results(self, names: list[str] | None = None) -> list[str]:
        return ["x"] if self.settled else []

    async def wait_for_away_results(self, timeout: float, names: list[str]) -> list[str]:
        self.waited.append((timeout, names))
        return []


def test_a_tournament_judges_the_settling_streams_before_it_looks_for_bots_away() -> None:
    """At a tournament's end the remote bot whose stream is in its settle is judged first:
    found away with a result, it is waited for (mutant: the runner looked before the
    settle was over, found nobody away, and stopped)."""
    ref = _SettlingReferee()
    asyncio.run(_wait_for_remote_results(ref, ["x"], asyncio.Event()))  # type: ignore[arg-type]
    assert ref.settled
    assert [names for _, names in ref.waited] == [["x"]]


def test_for_people_renumbers_the_deal_that_leads_the_message_only() -> None:
    """``ReplayError.for_people`` renumbers the deal the message starts with, once: a
    later "deal 3" in the text (a figure quoted from the record) stays as written
    (mutant: every "deal 3" of the message was renumbered)."""
    e = ReplayError("deal 3, action 2: scores differ from deal 3's record", deal=3)
    assert e.for_people() == "Deal 4 (record deal 3), action 2: scores differ from deal 3's record"
    assert ReplayError("ruleset: bad").for_people() == "ruleset: bad"
