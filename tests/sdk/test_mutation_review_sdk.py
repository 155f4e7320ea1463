"""Mutation review of the SDK (sdk/*.py): plausible bugs made by hand one at a time, the
existing tests run against each (the files of tests/sdk that exercise its module, its
doctests, and for the workers tests/e2e/test_workers_e2e.py); a test here for each mutant
they let live (its id and the edit in the docstring). Local matches, in-process runners
and stand-ins for worker processes: no timed assertions.

Ids: H hand, B bot, S sampling, L local, C client, W workers, LD loader, CL cli, HU human.
168 mutants: 99 killed by the existing tests, 7 equivalent, 62 killed here; none lives.
The equivalent ones: H8 (the declarer's passes are cards of the talon he has seen
anyway), H11 (only a marriage's holder can lead its K or Q before he declares it), S7
(at three active seats under ``must_beat`` no under-trump leaves a higher trump unseen:
the marriage trick draws them out), S16 (a case pinning a talon card to two receivers is
dropped by ``Sampler._problem``; the ``_give_cases`` test here kills it all the same),
S18 (the slots sum to the unknown cards, so every cap is 0 at the end), S23 (a problem
with more slots than cards counts no completion), S28 (a receiver whose pass is read card
by card never played a shown talon card). No mutant showed a defect of the code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import itertools
import logging
import random
import re
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from scripted_deal import HANDS, play, scripted_game

from arena.protocol import action_event_to_pb, ruleset_to_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import (
    PRESETS,
    Action,
    Bid,
    Card,
    Contract,
    Game,
    GameResult,
    Give,
    Pass,
    Phase,
    Play,
    PlayerView,
    Suit,
    observe,
    parse_cards,
)
from sdk import Bot, Deadline, play_local
from sdk.cli import _print_results, main
from sdk.client import ArenaAuthError, ArenaError, BotRunner, RunSummary, _Outbox, _too_late
from sdk.hand import (
    beats,
    has_ace_marriage,
    marriages,
    outstanding_cards,
    played_cards,
    trumps_by_trick,
    unseen_cards,
    voids,
)
from sdk.human import HumanBot
from sdk.loader import BotLoadError, load_bot
from sdk.local import (
    LocalIncident,
    SeriesEntry,
    SeriesInterrupted,
    SeriesResult,
    _add,
    play_series,
)
from sdk.sampling import (
    TALON,
    BidReading,
    Constraints,
    Sampler,
    _give_cases,
    _marriage_sets,
    constraints_of,
)
from sdk.workers import CallFailed, Processes, Remote, _Proc
from tests.support.harness import play_server

# ---------------------------------------------------------------------- sdk.hand


def test_marriages_most_valuable_first() -> None:
    """H2: ``sorted(Suit)`` instead of ``sorted(Suit, reverse=True)`` listed the marriages
    least valuable first (♠ 40 before ♥ 100), so a bot taking ``marriages(hand)[0]`` as
    its best declared the smallest."""
    hand = parse_cards("K♠ Q♠ K♥ Q♥ K♣ Q♣ 9♦")
    assert marriages(hand) == [Suit.HEARTS, Suit.CLUBS, Suit.SPADES]


def test_ace_marriage_needs_all_four_aces() -> None:
    """H4: ``any`` for ``all`` made one ace an ace marriage."""
    assert not has_ace_marriage(parse_cards("A♠ A♣ A♦ K♥"))
    assert has_ace_marriage(parse_cards("A♠ A♣ A♦ A♥"))


def test_a_card_of_another_suit_beats_only_as_trump() -> None:
    """H5: ``beats`` asking the engine with ``card`` led (``(card, best)``, winner 0) had a
    discard beat the trick's best card: the led suit is ``best``'s."""
    assert not beats(Card.H9, Card.SA, None)
    assert not beats(Card.H9, Card.SA, Suit.CLUBS)
    assert beats(Card.H9, Card.SA, Suit.HEARTS)
    assert beats(Card.SA, Card.S10, None)
    assert not beats(Card.S10, Card.SA, Suit.HEARTS)


def test_played_cards_include_the_trick_in_progress() -> None:
    """H6: ``played_cards`` without the trick in progress let a bot count a card on the
    table as still out (in ``outstanding_cards``, ``masters``)."""
    g = scripted_game()
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    v = observe(g, 1)
    assert played_cards(v) == {Card.SA, Card.S9}
    assert Card.SA not in outstanding_cards(v)


def test_a_defender_has_not_seen_where_the_shown_talon_went() -> None:
    """H7: ``declarer != seat`` added the shown talon to what a defender has seen: its
    cards are in the other hands (one passed to the other defender), so they are unseen
    (the opponents' cards), as the docstring says."""
    g = scripted_game()
    v = observe(g, 0)
    assert v.talon is not None and v.seat != v.declarer
    others = set(parse_cards(HANDS[1])) | set(parse_cards(HANDS[2])) | {Card.D10, Card.D9}
    assert unseen_cards(v) == others


def test_trump_from_a_marriage_declared_with_its_queen() -> None:
    """H12: ``(Rank.KING, Rank.ACE)`` for the K and Q of a declaring lead missed a marriage
    declared by leading its queen: its trick was taken for the one in progress, so the
    trump of every trick since was wrong."""
    g = scripted_game()
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    play(g, 1, "J♠")
    play(g, 2, "Q♥", declare=True)
    play(g, 0, "9♥")
    play(g, 1, "J♥")
    play(g, 2, "A♣")
    assert trumps_by_trick(observe(g, 0)) == [None, Suit.HEARTS, Suit.HEARTS]


def test_trump_from_a_marriage_declared_on_the_trick_in_progress() -> None:
    """H13: a marriage declared on the trick in progress put at ``n + 1`` made no trump of
    that trick (the list's last entry)."""
    g = scripted_game()
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    play(g, 1, "J♠")
    play(g, 2, "K♥", declare=True)
    assert trumps_by_trick(observe(g, 0)) == [None, Suit.HEARTS]


def test_a_discard_before_a_marriage_shows_no_void_in_its_suit() -> None:
    """H15: ``voids`` reading each trick's trump one trick late (``trumps[i + 1]``) took
    seat 0's discard on trick 1, before ♥ was trump, for a refusal to trump: void in ♥
    too, though it then followed ♥."""
    g = scripted_game()
    play(g, 2, "A♣")
    play(g, 0, "9♠")  # no clubs, no trump yet: a free discard
    play(g, 1, "9♣")
    play(g, 2, "K♥", declare=True)
    play(g, 0, "9♥")
    play(g, 1, "J♥")
    assert voids(observe(g, 1)) == {0: {Suit.CLUBS}, 1: set(), 2: set()}


# ---------------------------------------------------------------------- sdk.bot


def test_a_bot_is_named_after_its_class_by_default() -> None:
    """B7: ``if self.name is None`` never named a bot (the default is ``""``): the Hello,
    ``play_local``'s records and the log lines had no name for it."""

    class Mine(Bot):
        pass

    class Named(Bot):
        name = "given"

    assert Mine().name == "Mine"
    assert Named().name == "given"


def test_the_default_bid_is_the_first_legal_action_when_pass_is_not_one() -> None:
    """B8: ``_first_of`` falling back to the last legal action made the default ``bid`` of
    a seat that may not pass (the forced opening bid) its highest bid rather than the
    first (the lowest)."""
    view: Any = SimpleNamespace(legal_actions=(Bid(100), Bid(105), Bid(110)))
    assert Bot().bid(view) == Bid(100)


# ---------------------------------------------------------------------- sdk.client: retries


def _error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


def _ends(runner: BotRunner, ends: list[tuple[grpc.StatusCode, str, bool]]) -> list[str]:
    """Streams of ``runner`` that end, one after the other, as ``ends`` say (code, details,
    whether it was welcomed first); the codes tried (by name)."""
    tried: list[str] = []

    async def session() -> bool:
        code, details, welcomed = ends[len(tried)]
        tried.append(code.name)
        runner._welcomed = welcomed
        raise _error(code, details)

    runner._session = session  # type: ignore[method-assign]
    return tried


def _runner() -> BotRunner:
    return BotRunner(Bot, "127.0.0.1:1", "tok", initial_backoff=0.001, max_backoff=0.002)


def test_already_exists_is_retried() -> None:
    """C11: ``ALREADY_EXISTS`` left out of the codes retried: a reconnect refused because
    the dropped stream's Hello was still being read (the referee's ALREADY_EXISTS) ended
    the bot for good."""
    a, unauth = grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.UNAUTHENTICATED
    runner = _runner()
    tried = _ends(
        runner, [(a, "another stream is saying Hello", False)] * 2 + [(unauth, "no", False)]
    )
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert tried == ["ALREADY_EXISTS", "ALREADY_EXISTS", "UNAUTHENTICATED"]


def test_a_status_internal_sent_by_a_server_is_asked_again_three_times() -> None:
    """C12: ``>=`` for ``>`` in the count of a server's own INTERNALs gave up at the third
    rather than after it (``_OTHER_INTERNAL`` = 3 asked again)."""
    i, unauth = grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAUTHENTICATED
    runner = _runner()
    tried = _ends(runner, [(i, "a proxy said no", False)] * 3 + [(unauth, "no", False)])
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert tried == ["INTERNAL"] * 3 + ["UNAUTHENTICATED"]
    runner = _runner()
    tried = _ends(runner, [(i, "a proxy said no", False)] * 5)
    with pytest.raises(ArenaError, match="INTERNAL: a proxy said no"):
        asyncio.run(runner.run())
    assert len(tried) == 4


def test_a_welcomed_stream_starts_the_count_of_internals_again() -> None:
    """C13: without ``other_internal = 0`` after a welcomed stream, INTERNALs of separate
    outages added up, and the bot gave up on an arena it had played with in between."""
    i, u = grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE
    ends = [(i, "a proxy said no", False)] * 3 + [(u, "reset", True)]
    ends += [(i, "a proxy said no", False)] * 3 + [(grpc.StatusCode.UNAUTHENTICATED, "no", False)]
    runner = _runner()
    tried = _ends(runner, ends)
    with pytest.raises(ArenaAuthError):
        asyncio.run(runner.run())
    assert len(tried) == len(ends)


class _OnReconnect(logging.Handler):
    """Notes each wait the runner logs before a reconnect, then stops the runner: the test
    does not wait it out."""

    def __init__(self, runner: BotRunner) -> None:
        super().__init__()
        self.runner = runner
        self.waits: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "reconnecting in" in record.getMessage():
            assert isinstance(record.args, tuple)
            wait: Any = record.args[-1]
            self.waits.append(float(wait))
            self.runner.stop()


def test_no_wait_before_a_reconnect_outlasts_retry_for() -> None:
    """C14: without ``delay = min(delay, ... retry_for - now)`` a bot with --retry-for 0.5
    waited its whole back-off step (50-100 s here) before finding it had given up."""
    runner = BotRunner(Bot, "127.0.0.1:1", "tok", initial_backoff=100.0, max_backoff=100.0,
                       retry_for=0.5)  # fmt: skip
    _ends(runner, [(grpc.StatusCode.UNAVAILABLE, "reset", False)] * 3)
    seen = _OnReconnect(runner)
    log = logging.getLogger("sdk.client")
    log.addHandler(seen)
    try:
        asyncio.run(runner.run())
    finally:
        log.removeHandler(seen)
    assert len(seen.waits) == 1
    assert 0 <= seen.waits[0] <= 0.5


# ---------------------------------------------------------------------- sdk.local: series


class Seats(Bot):
    """Notes the match id, the seat and the hand dealt of each match it starts."""

    started: ClassVar[list[tuple[str, int, frozenset[Card]]]] = []

    def on_match_start(self, view: PlayerView) -> None:
        Seats.started.append((self.match_id, view.seat, frozenset(view.hand)))


def test_a_series_replays_each_seed_from_every_seat() -> None:
    """L7, L8, L9, L15: match i of a series deals from seed ``seed + i // players`` (not
    ``seed + i``), is named ``local-<seed>-<rotation>`` (not ``-<i>``), seats the bot in
    seat ``i % players`` (not the other way round) and counts every capped match (not
    only the last: ``capped =`` for ``+=``)."""
    Seats.started.clear()
    r = play_series(Seats, [("random", RandomBot)], 6, seed=10, max_deals=1)
    rules = PRESETS["classic"]
    expected = []
    for i in range(6):
        seed, seat = 10 + i // 3, i % 3
        hand = frozenset(observe(Game.new(rules, seed, ["a", "b", "c"]), seat).hand)
        expected.append((f"local-{seed}-{seat}", seat, hand))
    assert Seats.started == expected
    assert r.matches == 6 and r.capped == 6


def test_an_opponent_named_as_the_bot_tried_is_numbered() -> None:
    """L16: an opponent with the tried bot's name, but once in the line-up, kept that name:
    the table had two rows of one name."""
    r = play_series(Seats, [("Seats", RandomBot), ("random", RandomBot)], 1, max_deals=1)
    assert [e.name for e in r.entries] == ["Seats", "Seats#1", "random"]


def test_bots_of_one_name_are_numbered_from_two() -> None:
    """L21: ``name, k = base, 1`` numbered the second bot of a name ``#1``, the first
    being unnumbered (``random``, ``random#1``, ...)."""
    m = play_local([RandomBot] * 3, max_deals=1)
    assert m.names == ("random", "random#2", "random#3")


def test_a_match_is_counted_into_the_line_up_positions_of_its_seats() -> None:
    """L11, L12, L13: a match's incidents are those of the seat a position sat in (not of
    the seat numbered as the position), its timeouts only the ``"timeout"`` incidents, and
    the slowest decision is kept when a later match's is longer (``<`` kept the first)."""
    entries = [SeriesEntry("tried"), SeriesEntry("a"), SeriesEntry("b")]
    order = [2, 0, 1]  # seat -> position: the tried bot sits in seat 1

    def match(slowest: tuple[float, ...]) -> Any:
        result = SimpleNamespace(places=(3, 1, 2), scores=(10, 120, 60), deals=2)
        incidents = (
            LocalIncident(1, 0, "error", "raised"),
            LocalIncident(1, 1, "timeout", "late"),
            LocalIncident(0, 1, "illegal", "bad"),
        )
        at = tuple(f"at {x}" for x in slowest)
        return SimpleNamespace(result=result, incidents=incidents, slowest=slowest, slowest_at=at)

    _add(entries, order, match((0.3, 0.1, 0.2)))
    _add(entries, order, match((0.3, 0.5, 0.2)))
    _add(entries, order, match((0.3, 0.2, 0.2)))
    tried, a, b = entries
    assert (tried.matches, tried.wins, tried.places, tried.score) == (3, 3, 3, 360)
    assert (tried.incidents, tried.timeouts) == (6, 3)
    assert (b.incidents, b.timeouts, a.incidents) == (3, 0, 0)
    assert (tried.slowest, tried.slowest_at) == (0.5, "at 0.5")
    assert tried.points_per_deal == 60.0  # L20: per deal, not per match (120)


def test_ctrl_c_in_a_series_keeps_the_matches_finished() -> None:
    """L14: ``played = i`` left the last finished match out of the totals of an
    interrupted series."""

    def progress(done: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(SeriesInterrupted) as e:
        play_series(RandomBot, [("random", RandomBot)], 5, max_deals=1, progress=progress)
    assert e.value.result.matches == 2
    assert all(x.matches == 2 for x in e.value.result.entries)


# ---------------------------------------------------------------------- sdk.sampling


def _must_beat_game() -> Game:
    """A classic deal under ``must_beat``: seat 2 wins trick 1 (A♦), declares ♥ on trick 2
    (K♥; seat 0 follows 9♥, seat 1, without hearts, discards 9♣), leads Q♠ on trick 3: seat
    0, without spades, trumps J♥, and seat 1 follows with 9♠, holding K♠, 10♠ and A♠."""
    hands = [
        parse_cards("9♥ J♥ 10♣ K♣ Q♣ 10♦ K♦"),
        parse_cards("K♠ 10♠ A♠ J♠ 9♠ J♣ 9♣"),
        parse_cards("K♥ Q♥ 10♥ A♥ Q♠ A♣ A♦"),
    ]
    rules = dataclasses.replace(PRESETS["classic"], must_beat=True)
    g = Game.new(rules, 7, ["ann", "bob", "cid"], deals={0: (hands, parse_cards("Q♦ J♦ 9♦"))})
    g.apply(Pass(), seat=0)
    g.apply(Pass(), seat=1)
    g.apply(Give(Card.DQ, 0), seat=2)
    g.apply(Give(Card.DJ, 1), seat=2)
    g.apply(Contract(100), seat=2)
    play(g, 2, "A♦")
    play(g, 0, "K♦")
    play(g, 1, "J♦")
    play(g, 2, "K♥", declare=True)
    play(g, 0, "9♥")
    play(g, 1, "9♣")
    play(g, 2, "Q♠")
    play(g, 0, "J♥")
    play(g, 1, "9♠")
    return g


def test_a_card_that_follows_under_a_trump_proves_nothing_under_must_beat() -> None:
    """S8: not moving the trick's best card to a trump that beat the led suit (``or (suit
    == trump and best // 6 != trump)`` dropped) read seat 1's 9♠, played under seat 0's
    trump, as "nothing above Q♠": K♠, 10♠ and A♠ were excluded from the hand that holds
    them, and every sampled deal put them elsewhere."""
    g = _must_beat_game()
    assert len(g.tricks) == 3 and g.tricks[2].winner == 0
    k = constraints_of(observe(g, 0))
    for card in (Card.SK, Card.S10, Card.SA):
        assert not k.excluded[1] >> int(card) & 1, card
    assert k.excluded[1] >> int(Card.C10) & 1 == 0  # (no void in clubs was shown either)
    assert k.excluded[1] & (1 << int(Card.HA))  # void in hearts: it discarded on trick 1


# ---------------------------------------------------------------------- sdk.client: requests


class Noter(Bot):
    """Notes the deadline of each decision it is asked; answers the first legal action."""

    deadlines: ClassVar[list[Deadline | None]] = []

    def act(self, view: PlayerView) -> Action:
        Noter.deadlines.append(self.deadline)
        return view.legal_actions[0]


def _game() -> Game:
    return Game.new(PRESETS["classic"], 1, ["a", "b", "c"])


def _started(g: Game, seat: int, mid: str = "m1") -> pb.ServerMessage:
    return pb.ServerMessage(match_started=pb.MatchStarted(
        match_id=mid, seat=seat, players=list(g.players), ruleset=ruleset_to_pb(g.ruleset),
        view=view_to_pb(observe(g, seat))))  # fmt: skip


def _request(
    g: Game, rid: str, seat: int, limit_ms: int = 1000, bank_ms: int = 10000, mid: str = "m1"
) -> pb.ServerMessage:
    return pb.ServerMessage(decision_request=pb.DecisionRequest(
        request_id=rid, match_id=mid, view=view_to_pb(observe(g, seat)),
        time_limit_ms=limit_ms, time_bank_ms=bank_ms))  # fmt: skip


def _sent(bot: Any, msgs: list[pb.ServerMessage], *, each: bool = True) -> list[pb.BotMessage]:
    """What a runner of ``bot`` sends for ``msgs``, without a stream: handled in order, each
    one's calls run to their end before the next (``each``), or all handled one after the
    other without waiting for the bot's calls in between."""

    async def main() -> list[pb.BotMessage]:
        runner = BotRunner(bot, "127.0.0.1:1", "tok")
        out = _Outbox()
        out.held = True
        runner._out = out
        for k, msg in enumerate(msgs):
            runner._on_message(msg, out)
            while runner._tasks and (each or k == len(msgs) - 1):
                await asyncio.wait(set(runner._tasks))
        if runner._pool is not None:
            runner._pool.shutdown()
        return [m for m in out._buf if m is not None]

    return asyncio.run(main())


def _decisions(bot: Any, msgs: list[pb.ServerMessage]) -> list[pb.Decision]:
    """The decisions a runner of ``bot`` sends for ``msgs`` (see :func:`_sent`)."""
    return [m.decision for m in _sent(bot, msgs) if m.HasField("decision")]


def test_a_request_for_another_seats_view_is_not_answered(caplog: pytest.LogCaptureFixture) -> None:
    """C15: without the check of the request's seat, a request whose view was another
    seat's (the one to act, with legal actions) was answered by the bot, deciding for a
    seat it does not sit in."""
    g = _game()
    to_act = g.to_act
    assert to_act is not None
    other = (to_act + 1) % 3
    with caplog.at_level(logging.ERROR, logger="sdk.client"):
        sent = _decisions(Noter, [_started(g, other), _request(g, "r1", to_act)])
    assert sent == []
    assert "view.seat" in caplog.text


def test_a_request_gives_the_bot_its_limit_and_bank_apart() -> None:
    """C16, C17: the ``Deadline`` of a request has its limit and its bank each from its own
    field (swapped, a bot planning with ``limit_s`` thought it had 10 s a decision), and
    a request with a bank but no limit of its own still has one (``if time_limit_ms``
    alone gave it none)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    Noter.deadlines.clear()
    sent = _decisions(
        Noter, [_started(g, seat), _request(g, "r1", seat), _request(g, "r2", seat, 0, 5000)]
    )
    assert [d.request_id for d in sent] == ["r1", "r2"]
    first, second = Noter.deadlines
    assert first is not None and (first.limit_s, first.bank_s) == (1.0, 10.0)
    assert second is not None and (second.limit_s, second.bank_s) == (0.0, 5.0)


def test_an_answer_within_the_time_bank_is_not_too_late() -> None:
    """C18: ``_too_late`` timing an answer against the limit alone (not the limit plus the
    bank) dropped every answer that used the time bank, though the referee waits for it:
    the seat was played by the fallback, with a strike."""
    m: Any = SimpleNamespace(match_id="m1")
    used_bank = Deadline(limit_s=0.001, bank_s=10.0, received=time.monotonic() - 0.5)
    assert not _too_late(m, "r1", used_bank)
    past_both = Deadline(limit_s=0.001, bank_s=0.1, received=time.monotonic() - 5.0)
    assert _too_late(m, "r2", past_both)


def _scripted(hands: tuple[str, str, str], talon: str, rules: Any = None) -> Game:
    """Seed 7 (dealer 1), these hands: seats 0 and 1 pass, seat 2 declares 100, gives the
    first talon card to seat 0 and the second to seat 1."""
    cards = [parse_cards(h) for h in hands]
    t = parse_cards(talon)
    g = Game.new(rules or PRESETS["classic"], 7, ["ann", "bob", "cid"], deals={0: (cards, t)})
    g.apply(Pass(), seat=0)
    g.apply(Pass(), seat=1)
    g.apply(Give(t[0], 0), seat=2)
    g.apply(Give(t[1], 1), seat=2)
    g.apply(Contract(100), seat=2)
    return g


def test_the_ace_marriage_pins_the_aces_not_played() -> None:
    """S11: the ace marriage pinning the tens (bits 4, 10, 16, 22) for the aces (5, 11, 17,
    23) put the declarer's unplayed aces anywhere in the samples, and the tens with him."""
    g = _scripted(
        ("9♥ J♥ 10♣ K♣ Q♣ 10♦ K♦", "K♠ 10♠ Q♠ J♠ 9♠ J♣ 9♣", "A♠ A♥ A♣ A♦ K♥ Q♥ 10♥"),
        "Q♦ J♦ 9♦",
    )
    play(g, 2, "10♥")
    play(g, 0, "9♥")
    play(g, 1, "9♠")
    play(g, 2, "A♥", declare=True)
    v = observe(g, 0)
    assert v.marriages == ((2, None),)
    fixed = constraints_of(v).fixed[2]
    assert fixed == (1 << int(Card.SA)) | (1 << int(Card.CA)) | (1 << int(Card.DA))


def test_a_hidden_pass_not_of_the_talon_weighs_eight_histories() -> None:
    """S15: the case "the hidden pass was none of the shown talon" weighs the receiver's 8
    cards (7 dealt and the one passed), each a history (``w * 7`` counted 7), against 1
    for each talon card it may have been."""
    talon_left = (1 << int(Card.D10)) | (1 << int(Card.D9))
    cases = _give_cases([1], talon_left, declarer=2)
    assert sorted(w for w, _ in cases) == [1, 1, 8]
    assert (8, {2: talon_left}) in cases
    both = _give_cases([0, 1], talon_left, declarer=2)
    assert sorted(w for w, _ in both) == [1, 1, 8, 8, 8, 8, 64]


def test_an_answer_made_while_the_stream_dropped_is_sent_on_the_next_one() -> None:
    """C20, C21: the answer to a request whose stream was gone is kept, and sent when the
    arena asks that request again on the next stream; not kept (``m.answers = {}``) or not
    looked up (``cached = None``), the bot was asked the same decision twice."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    Noter.deadlines.clear()

    async def main() -> list[str]:
        runner = BotRunner(Noter, "127.0.0.1:1", "tok")
        gone, now = _Outbox(), _Outbox()
        gone.held = now.held = True
        runner._out = now  # the stream of ``gone`` has dropped
        for msg, out in ((_started(g, seat), gone), (_request(g, "r1", seat), gone)):
            runner._on_message(msg, out)
            while runner._tasks:
                await asyncio.wait(set(runner._tasks))
        assert not gone
        runner._on_message(_request(g, "r1", seat), now)
        while runner._tasks:
            await asyncio.wait(set(runner._tasks))
        if runner._pool is not None:
            runner._pool.shutdown()
        return [m.decision.request_id for m in now._buf if m is not None]

    assert asyncio.run(main()) == ["r1"]
    assert len(Noter.deadlines) == 1


class SlowStart(Noter):
    """Its ``on_match_start`` takes 50 ms: a request that comes meanwhile waits for it."""

    def on_match_start(self, view: PlayerView) -> None:
        time.sleep(0.05)


def _all_at_once(bot: Any, msgs: list[pb.ServerMessage]) -> list[str]:
    """The request ids a runner of ``bot`` answers for ``msgs``, handled one after the
    other without waiting for the bot's calls in between."""
    return [m.decision.request_id for m in _sent(bot, msgs, each=False)]


def test_a_request_that_waited_past_its_limit_but_not_its_bank_is_asked() -> None:
    """C22: a request that waited behind the bot's earlier call is dropped only when its
    limit *and* bank have passed; ``left(bank=False)`` dropped one the time bank still
    covered (its 1 ms limit passed while ``on_match_start`` ran): the referee played its
    fallback after the bank, with a strike."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    Noter.deadlines.clear()
    sent = _all_at_once(SlowStart, [_started(g, seat), _request(g, "r1", seat, 1, 10_000)])
    assert sent == ["r1"]
    assert len(Noter.deadlines) == 1


class Listener(Bot):
    """Notes every action it is told of."""

    told: ClassVar[list[tuple[int, object]]] = []

    def on_action(self, view: PlayerView, seat: int, action: object) -> None:
        Listener.told.append((seat, action))


def test_an_action_event_of_the_seat_past_the_last_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """C31: ``seat <= players`` let an event name seat 3 at a table of three (seats 0-2),
    as actor or as a give's receiver: ``on_action`` was told of a seat that is not."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    src = pb.ACTION_SOURCE_UNSPECIFIED
    events = [
        action_event_to_pb("m1", 1, src, 3, Pass()),
        action_event_to_pb("m1", 2, src, 1, Give(Card.H9, 3)),
        action_event_to_pb("m1", 3, src, 2, Pass()),
    ]
    Listener.told = []
    with caplog.at_level(logging.ERROR, logger="sdk.client"):
        _decisions(Listener, [_started(g, seat), pb.ServerMessage(events=events)])
    assert Listener.told == [(2, Pass())]
    assert "action.seat: no seat 3 at a 3-player table" in caplog.text
    assert "action.give.to: no seat 3 at a 3-player table" in caplog.text


def _kept_view(msgs: list[pb.ServerMessage]) -> PlayerView:
    """The view a runner keeps for match m1's hooks after ``msgs``, each read on a stream
    of its own (a resumption comes after the bot reconnected: one on the stream that
    started the match is ignored since round 53)."""

    async def main() -> PlayerView:
        runner = BotRunner(Bot, "127.0.0.1:1", "tok")
        out = _Outbox()
        out.held = True
        runner._out = out
        for msg in msgs:
            runner.summary.connections += 1
            runner._on_message(msg, out)
            while runner._tasks:
                await asyncio.wait(set(runner._tasks))
        if runner._pool is not None:
            runner._pool.shutdown()
        return runner._matches["m1"].view

    return asyncio.run(main())


def test_a_resumed_match_keeps_its_view_only_under_its_own_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """C32, C33: a MatchStarted that resumes a match takes its view (without
    ``m.view = view`` the hooks kept the view from before the reconnect), unless it
    names other rules (``ruleset != m.ruleset`` dropped: a 1001 view taken for a classic
    match)."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    first = _started(g, seat)
    g.apply(g.legal_actions()[0])
    g.apply(g.legal_actions()[0])
    later = _started(g, seat)
    later.match_started.resumed = True
    view = _kept_view([first, later])
    assert view.bids == observe(g, seat).bids and len(view.bids) == 2
    other = Game.new(PRESETS["1001"], 1, ["a", "b", "c"])
    elsewhere = _started(other, seat)
    elsewhere.match_started.resumed = True
    with caplog.at_level(logging.ERROR, logger="sdk.client"):
        view = _kept_view([first, elsewhere])
    assert view.ruleset == PRESETS["classic"]
    assert "MatchStarted resumes the match under ruleset '1001'" in caplog.text


# ---------------------------------------------------------------------- sdk.human


def test_the_match_end_lists_the_seats_by_place() -> None:
    """HU17: ordering the final table by score (ascending) rather than by place put the
    winner last: "3. ... 1. ...". Places come first (then the seat), whatever the scores:
    a place shared, or a seat placed last for a forfeit with the best score."""
    out = io.StringIO()
    bot = HumanBot(io.StringIO(), out, color=False)
    view = observe(_game(), 0)
    bot.on_match_start(view)
    result = GameResult((1005, 40, 620), (1, 3, 2), (0, 960, 380), 0, 12, "target")
    bot.on_match_end(view, result)
    table = out.getvalue().split("Match over: 12 deals played.\n", 1)[1].splitlines()
    assert [line.split()[:2] for line in table] == [["1.", "a"], ["2.", "c"], ["3.", "b"]]


def _my_turn() -> PlayerView:
    g = _game()
    assert g.to_act is not None
    return observe(g, g.to_act)


def test_an_answer_in_the_time_bank_is_used_and_said_so() -> None:
    """HU6: an answer typed past the decision's limit but within the time bank was called
    "too late and not used" (``left(bank=False)``), though the arena uses it."""
    view = _my_turn()
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO("1\n"), stdout=out, color=False)
    human.deadline = Deadline(limit_s=0.001, bank_s=600.0, received=time.monotonic() - 1)
    assert human.act(view) == view.legal_actions[0]
    assert f"→ {view.legal_actions[0]}" in out.getvalue()
    assert "too late" not in out.getvalue()


def test_the_prompt_counts_the_decisions_own_time_then_the_bank() -> None:
    """HU7: ``_time_left`` with the two times swapped said the limit plus the bank as the
    decision's own time ("610.0 s left (+10.0 s bank)"), and never that only the bank
    was left."""
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO("1\n"), stdout=out, color=False)
    human.deadline = Deadline(limit_s=600.0, bank_s=10.0, received=time.monotonic())
    human.act(_my_turn())
    (left,) = re.findall(r"; ([0-9.]+) s left \(\+10\.0 s bank\)\): ", out.getvalue())
    assert 590 < float(left) <= 600
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO("1\n"), stdout=out, color=False)
    human.deadline = Deadline(limit_s=0.001, bank_s=600.0, received=time.monotonic() - 1)
    human.act(_my_turn())
    (bank,) = re.findall(r"; ([0-9.]+) s of time bank left\): ", out.getvalue())
    assert 590 < float(bank) <= 600


def test_quit_leaves_with_exit_code_1() -> None:
    """HU8: ``quit`` leaving with ``SystemExit(0)`` made ``arena-bot`` report a match left
    half-way as a success (exit code 0)."""
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO("quit\n"), stdout=out, color=False)
    with pytest.raises(SystemExit) as e:
        human.act(_my_turn())
    assert e.value.code == 1
    assert "Leaving the match." in out.getvalue()


def test_a_new_deal_shows_every_trick_the_seat_has_not_seen() -> None:
    """HU5: the count of tricks seen kept from the last deal (``since = self._seen[1]``
    whatever the deal) hid the new deal's first tricks from a seat first asked after them:
    only the last one was shown."""
    g = _game()
    while not (g.deal_number == 1 and g.phase is Phase.PLAYING and len(g.tricks) >= 3):
        g.apply(g.legal_actions()[0])
    assert g.to_act is not None
    view = observe(g, g.to_act)
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO("1\n"), stdout=out, color=False)
    human._seen = (0, len(view.tricks))  # the last table it saw: deal 1, as many tricks
    human.act(view)
    text = out.getvalue()
    assert all(f"Trick {k}: " in text for k in range(1, len(view.tricks) + 1)), text


def test_a_sampler_keeps_the_deals_its_accept_predicate_accepts() -> None:
    """S24: ``if not self.accept(deal)`` returned the first deal the predicate refused:
    every constraint a bot added through ``accept`` was turned round."""
    g = scripted_game()
    v = observe(g, 0)  # seat 0 does not know where A♣ is: seat 1's or seat 2's
    sampler = Sampler(v, accept=lambda d: Card.CA in d.hands[1])
    rng = random.Random(3)
    assert all(Card.CA in sampler.sample(rng).hands[1] for _ in range(30))
    plain = Sampler(v)
    assert any(Card.CA in plain.sample(rng).hands[2] for _ in range(30))


# ---------------------------------------------------------------------- sdk.cli


def test_run_once_asks_the_runner_for_one_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """CL13: ``arena-bot run --once`` passing ``matches=matches`` (None) rather than 1 kept
    the bot playing match after match."""
    from click.testing import CliRunner

    asked: list[dict[str, Any]] = []

    def run(bot: Any, **kwargs: Any) -> RunSummary:
        asked.append(kwargs)
        return RunSummary()

    monkeypatch.setattr("sdk.client.run", run)
    monkeypatch.delenv("ARENA_PARENT_PID", raising=False)
    for extra, matches in ((["--once"], 1), (["--matches", "3"], 3), ([], None)):
        args = ["run", "random", "--arena", "127.0.0.1:1", "--token", "t", *extra]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert asked[-1]["matches"] == matches, extra


def test_the_table_shows_the_win_rate_in_percent() -> None:
    """CL12: the "win %" column printed the rate as a fraction (0.25 as "0")."""
    from rich.console import Console

    entries = [SeriesEntry("mine", matches=4, wins=1), SeriesEntry("random", matches=4, wins=3)]
    console = Console(file=io.StringIO(), width=200)
    _print_results(console, SeriesResult("classic", 4, entries), "4 matches")
    text = console.file.getvalue()  # type: ignore[attr-defined]
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] in ("mine", "random"):
            rows[cells[0]] = cells
    assert rows["mine"][3] == "25" and rows["random"][3] == "75", text


def test_try_says_a_raise_is_no_timeout(tmp_path: Path) -> None:
    """CL9: the line under a timed table counted every incident as a timeout: a bot that
    raised once "timed out 1 time"."""
    from click.testing import CliRunner

    bot = tmp_path / "raiser.py"
    bot.write_text(
        "from sdk import Bot\n\n\nclass Raiser(Bot):\n    n = 0\n\n"
        "    def bid(self, view):\n        Raiser.n += 1\n        if Raiser.n == 1:\n"
        "            raise ValueError('once')\n        return view.legal_actions[-1]\n"
    )
    args = ["try", f"{bot}:Raiser", "--vs", "random", "-n", "1", "--max-deals", "1"]
    result = CliRunner().invoke(main, [*args, "--decision-ms", "600000"])
    assert result.exit_code == 1, result.output
    assert "Raiser never timed out (at 600000 ms per decision" in result.output
    assert "had 1 incident in 1 match" in result.output


def test_try_waits_for_a_call_as_long_as_the_limit_and_the_bank(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """CL5: the slow-call watch of a timed ``try`` waited the decision's limit alone (1 ms
    here), not the limit plus the bank (60 s), before calling a call "run for ... and not
    returned", though the arena would still be waiting for it."""
    from click.testing import CliRunner

    bot = tmp_path / "napper.py"
    bot.write_text(
        "import time\n\nfrom sdk import Bot\n\n\nclass Napper(Bot):\n    n = 0\n\n"
        "    def act(self, view):\n        Napper.n += 1\n        if Napper.n == 1:\n"
        "            time.sleep(0.3)\n        return view.legal_actions[0]\n"
    )
    args = ["try", f"{bot}:Napper", "--vs", "random", "-n", "1", "--max-deals", "1"]
    with caplog.at_level(logging.WARNING, logger="sdk.local"):
        result = CliRunner().invoke(main, [*args, "--decision-ms", "1", "--time-bank-ms", "60000"])
    assert result.exit_code == 0, result.output
    assert "Napper never timed out" in result.output
    assert "the time bank paid" in caplog.text  # the 0.3 s nap: past the 1 ms limit
    assert "and not returned" not in caplog.text


def test_try_refuses_more_opponents_than_seats_and_plays_20_matches_by_default() -> None:
    """CL2, CL3: three opponents at a table of three were let through (``> seats`` for
    ``> seats - 1``), the third silently dropped; and ``try`` without ``-n`` played one
    match, not 20 (the default swapped with the human's)."""
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["try", "random", "--vs", "random,random,random"])
    assert result.exit_code == 2
    assert "3 opponents named, but the ruleset seats 3 players: name at most 2" in (
        " ".join(result.output.split())
    )
    result = CliRunner().invoke(main, ["try", "random", "--vs", "random", "--max-deals", "1"])
    assert result.exit_code == 0, result.output
    assert "20 matches, ruleset classic, seed 0" in result.output


def test_try_names_the_cap_it_played_to(tmp_path: Path) -> None:
    """CL10: ``resolved.max_deals or max_deals`` named the ruleset file's cap (40) in the
    note under the table, though ``--max-deals 2`` capped the matches at 2."""
    from click.testing import CliRunner

    rules = tmp_path / "capped.toml"
    rules.write_text('preset = "classic"\nname = "capped"\nmax_deals = 40\n')
    args = ["try", "random", "--vs", "random", "-n", "1", "--ruleset", str(rules)]
    result = CliRunner().invoke(main, [*args, "--max-deals", "2"])
    assert result.exit_code == 0, result.output
    assert "1 of 1 match reached the cap of 2 deals before anyone reached 1000" in result.output


def test_the_ace_marriage_makes_no_trump_in_the_tricks_shown_at_a_deals_end() -> None:
    """HU15: the tricks put together at a deal's end from the plays told took a declared
    ace marriage (``play.declare`` alone) for a trump: seat 2's K♥, discarded on trick 5
    after its ace marriage, was shown winning it from bob's 10♠."""
    g = _scripted(
        ("9♥ J♥ K♠ Q♠ 10♦ K♦ 9♣", "10♠ J♠ 9♠ 10♣ K♣ Q♣ J♣", "A♠ A♥ A♣ A♦ K♥ Q♥ 10♥"),
        "Q♦ J♦ 9♦",
    )
    out = io.StringIO()
    human = HumanBot(io.StringIO(), out, color=False)
    start = observe(g, 0)
    human.on_match_start(start)
    script = [
        (2, "10♥"), (0, "9♥"), (1, "J♣"), (2, "A♥"), (0, "J♥"), (1, "Q♣"),
        (2, "A♠"), (0, "K♠"), (1, "9♠"), (2, "9♦"), (0, "Q♦"), (1, "J♦"),
        (0, "Q♠"), (1, "10♠"), (2, "K♥"),
    ]  # fmt: skip
    while g.deal_number == 0:
        seat = g.to_act
        assert seat is not None
        if script:
            s, text = script.pop(0)
            assert s == seat
            action = Play(parse_cards(text)[0], declare=text == "A♥")
        else:
            action = next(a for a in g.legal_actions() if not getattr(a, "declare", False))
        g.apply(action, seat=seat)
        assert isinstance(action, Play)
        human.on_action(start, seat, action)
    result = g.deal_results[0]
    human.on_deal_end(start, result)
    text = out.getvalue()
    assert "Trick 2: cid A♥, you J♥, bob Q♣  → cid" in text, text
    assert "Trick 5: you Q♠, bob 10♠, cid K♥  → bob" in text, text


def test_a_bid_reading_that_rejects_every_deal_is_dropped() -> None:
    """S27: a reading that rejected 1000 deals in a row is dropped (the hard facts stay);
    never dropped (the bound made 1000 times larger), every draw spun through its 3000
    tries and kept a deal the reading had refused all the same."""
    hand = 0
    for c in parse_cards("A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥"):
        hand |= 1 << int(c)
    # Seat 1's bid "proves" the ♠ marriage, whose cards are all in seat 0's hand: no deal.
    spades = (1 << int(Card.SK)) | (1 << int(Card.SQ))
    reading = BidReading(1, {1: [spades]}, {0: 0, 1: 0, 2: 0}, 0, (), 0)
    k = Constraints(
        n=3,
        fixed={0: hand, 1: 0, 2: 0, TALON: 0},
        counts={0: 7, 1: 7, 2: 7, TALON: 3},
        excluded={0: 0, 1: 0, 2: 0, TALON: 0},
        unknown=((1 << 24) - 1) & ~hand,
        reading=reading,
    )
    sampler = Sampler(k)
    deal = sampler.sample(random.Random(1))
    assert not sampler._read
    assert deal.hand_masks[0] == hand and len(deal.talon) == 3


def test_a_reconnect_asks_for_the_matches_left_to_play() -> None:
    """C34: the Hello of a reconnect asked for ``--matches`` again, not for those left
    (``max_matches - matches played``): the bot played more matches than it was told."""
    runner = BotRunner(Bot, "127.0.0.1:1", "tok", matches=3)
    assert runner._matches_to_start() == 3
    runner.summary.matches = 1
    assert runner._matches_to_start() == 2
    runner.summary.matches = 3
    assert runner._matches_to_start() == 0


# ---------------------------------------------------------------------- sdk.loader


def test_a_bot_imported_into_a_bot_file_is_not_one_of_its_bots(tmp_path: Path) -> None:
    """LD1: without ``obj.__module__ == module.__name__`` a file that imports a bundled bot
    (to play against it, or to subclass it) "defined several bots"."""
    bot = tmp_path / "mine_ld1.py"
    bot.write_text(
        "from bots.random_bot import RandomBot\nfrom sdk import Bot\n\n\n"
        "class Mine(Bot):\n    pass\n"
    )
    assert load_bot(str(bot)).__name__ == "Mine"


def test_a_path_without_py_is_looked_up_as_a_file(tmp_path: Path) -> None:
    """LD5: a spec with a "/" but no ".py" was imported as a module named "sub/mybot":
    "no module 'sub/mybot'", though it names a path."""
    with pytest.raises(BotLoadError, match=r"^no file '[^']*/mybot'"):
        load_bot(f"{tmp_path}/mybot")


def test_a_missing_dependency_of_a_bot_module_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LD6, LD9: a bot module that imports a package not installed was said to be missing
    itself ("no module 'mutsdk_ld6' and no bundled bot") when the check of which module is
    missing was dropped; and a dotted module not found (``os.nowhere``: no package to
    install) got the "not installed for the Python that runs the bot" hint."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "mutsdk_ld6.py").write_text("import mutsdk_not_installed_ld6\n")
    with pytest.raises(BotLoadError) as e:
        load_bot("mutsdk_ld6")
    assert str(e.value).startswith("importing 'mutsdk_ld6' failed: ModuleNotFoundError")
    assert "it is not installed for the Python that runs the bot" in str(e.value)
    (tmp_path / "mutsdk_ld9.py").write_text("import os.nowhere_ld9\n")
    with pytest.raises(BotLoadError) as e:
        load_bot("mutsdk_ld9")
    assert "No module named 'os.nowhere_ld9'" in str(e.value)
    assert "not installed" not in str(e.value)


def test_loading_a_bot_leaves_no_import_in_progress() -> None:
    """LD12: ``importing`` not counted down after a load made ``sdk.run`` refuse to start
    in any program that had loaded a bot first ("called while arena-bot imported ...")."""
    from sdk import loader
    from sdk.client import _not_while_loading

    load_bot("random")
    with pytest.raises(BotLoadError):
        load_bot("no_such_bot_mutsdk")
    assert loader.importing == 0
    _not_while_loading("sdk.run()")


# ---------------------------------------------------------------------- sdk.workers


def _proc(send: Any = None, recv: Any = None, exitcode: int | None = None) -> _Proc:
    """A ``_Proc`` with no process behind it: its pipe's ``send`` and ``recv`` given."""
    p = _Proc.__new__(_Proc)
    p.conn = SimpleNamespace(send=send, recv=recv)  # type: ignore[assignment]
    p.process = SimpleNamespace(exitcode=exitcode, join=lambda timeout=None: None)
    p.pid = 4242
    p.alive = True
    p.ready = threading.Event()
    p._lock = threading.Lock()
    p._pending = {}
    p._ids = itertools.count()
    return p


def test_a_worker_that_leaves_hands_its_exit_code_on() -> None:
    """W8: a bot's ``SystemExit(3)`` in a worker was raised here as ``SystemExit(1)``:
    ``arena-bot run --workers`` lost the bot's own exit code."""
    p = _proc()

    def send(msg: tuple[int, str, tuple[object, ...]]) -> None:
        p._pending[msg[0]].set_result(("exit", 3))

    p.conn = SimpleNamespace(send=send)  # type: ignore[assignment]
    with pytest.raises(SystemExit) as e:
        p.call("decide")
    assert e.value.code == 3


def test_the_calls_of_a_worker_that_died_fail_and_say_how_it_died() -> None:
    """W7, W11: when a worker's pipe ends, the calls waiting on it fail at once (left
    pending, each runner thread waited for ever: the match's seat was never answered
    again), naming the signal that killed it (``signal -9`` for ``signal 9``)."""

    def recv() -> object:
        raise EOFError

    p = _proc(recv=recv, exitcode=-9)
    from concurrent.futures import Future

    waiting: Future[tuple[str, Any]] = Future()
    p._pending[0] = waiting
    p._read()
    assert waiting.done()
    assert waiting.result() == ("failed", "its worker process 4242 died, signal 9")
    assert not p.alive
    with pytest.raises(CallFailed, match="died, signal 9"):
        p.call("decide")


def _remote_whose_worker_is_gone() -> Remote:
    r = Remote.__new__(Remote)
    r.name, r.match_id, r.methods, r.hooks = "Mine", "m1", {}, frozenset()
    r._pool = SimpleNamespace(closing=False)  # type: ignore[assignment]

    def gone() -> _Proc:
        raise CallFailed("its worker process 4242 died, signal 9")

    r._worker = gone  # type: ignore[method-assign]
    return r


def test_a_call_a_dead_worker_did_not_answer_counts_as_the_bots_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """W9, W10: a decision a worker did not answer plays the fallback counted as an error
    (``"bot"`` hid it from the run's errors), and a hook it did not run counts as failed
    (``False`` said it ran)."""
    r = _remote_whose_worker_is_gone()
    view = _my_turn()
    with caplog.at_level(logging.ERROR, logger="sdk.client"):
        action, kind = r.decide(view, None)
        failed = r.hook("on_deal_end", ())
    assert kind == "its worker process failed" and action in view.legal_actions
    assert failed is True
    assert "did not answer in deal 1" in caplog.text


def test_no_pool_of_no_workers() -> None:
    """W12: ``n < 0`` let ``Processes(spec, 0, ...)`` make a pool without a worker, whose
    first match failed on an empty list."""
    with pytest.raises(ValueError, match="workers must be at least 1, got 0"):
        Processes("random", 0, "random")


class _FakeWorker:
    """A worker process as ``Processes`` sees it: makes any bot; notes being stopped."""

    def __init__(self, *args: object) -> None:
        self.alive = True
        self.pid = 7
        self.events: list[str] = []

    def call(self, op: str, *args: object) -> Any:
        return ("Mine", frozenset(), {})

    def tell(self, op: str, *args: object) -> None:
        self.events.append(op)

    def ask_to_stop(self) -> None:
        self.events.append("ask_to_stop")

    def stop(self) -> None:
        self.events.append("stop")


def _pool(n: int) -> Processes:
    p = Processes.__new__(Processes)
    p._ctx, p._args = None, ()
    p._lock = threading.Lock()
    p._procs = [_FakeWorker() for _ in range(n)]  # type: ignore[misc]
    p._load = [0] * n
    p._keys = itertools.count()
    p.closing = False
    return p


def test_a_match_goes_to_the_least_loaded_worker_and_leaves_it_once() -> None:
    """W1, W2, W3: a new match's bot is made in the worker with the fewest matches in
    progress (``slot = 0`` put all of them in the first), and its end takes it off that
    worker's count once (not at all, or once per ``close``)."""
    pool = _pool(3)
    pool._load = [2, 0, 1]
    r = pool.make("m1")
    assert r is not None and r._slot == 1 and pool._load == [2, 1, 1]
    r.close()
    r.close()
    assert pool._load == [2, 0, 1]
    assert pool._procs[1].events == ["drop"]  # type: ignore[attr-defined]


def test_shutdown_stops_every_worker_and_a_dead_one_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """W4, W6: ``shutdown`` asks every worker to stop and then waits for (or kills) each
    (without the second loop they were left running); a dead worker's slot gets a fresh
    one (``proc`` handed the dead one back: every later call of it failed)."""
    monkeypatch.setattr("sdk.workers._Proc", _FakeWorker)
    pool = _pool(2)
    dead = pool._procs[0]
    dead.alive = False
    fresh = pool.proc(0)
    assert fresh is not dead and fresh.alive
    pool.shutdown()
    for w in pool._procs:
        assert w.events == ["ask_to_stop", "stop"]  # type: ignore[attr-defined]
    assert pool.closing


def test_a_worker_that_does_not_exit_in_time_is_killed() -> None:
    """W5: ``stop`` left a worker that did not exit in time running (no ``kill``)."""
    done: list[str] = []
    p = _proc()
    p.process = SimpleNamespace(
        join=lambda timeout=None: None, is_alive=lambda: True, kill=lambda: done.append("kill")
    )
    p._reader = SimpleNamespace(join=lambda timeout=None: None)  # type: ignore[assignment]
    p.conn = SimpleNamespace(close=lambda: done.append("close"))  # type: ignore[assignment]
    p.stop()
    assert done == ["kill", "close"]


# ---------------------------------------------------------------------- more


class Forced(Bot):
    """Counts the decisions it is asked that have one legal action."""

    forced: ClassVar[int] = 0

    def act(self, view: PlayerView) -> Action:
        Forced.forced += len(view.legal_actions) == 1
        return view.legal_actions[0]


def test_a_ruleset_that_asks_forced_moves_asks_them_locally() -> None:
    """L1: ``play_local`` playing every single legal action itself, whatever the ruleset's
    ``ask_forced``, never asked a bot its forced moves where an arena does."""
    Forced.forced = 0
    play_local([Forced] * 3, seed=2, max_deals=1)
    assert Forced.forced == 0
    asking = dataclasses.replace(PRESETS["classic"], ask_forced=True)
    play_local([Forced] * 3, asking, seed=2, max_deals=1)
    assert Forced.forced > 0


def test_the_ace_marriage_proves_a_bid_only_where_it_counts_for_one() -> None:
    """S30: reading a bid's marriages, the four aces were taken as one (200) even where the
    ruleset says the ace marriage does not count for the bid."""
    aces = 0
    for c in (Card.SA, Card.CA, Card.DA, Card.HA):
        aces |= 1 << int(c)
    counts = dataclasses.replace(PRESETS["classic"], ace_marriage=True)
    assert aces in _marriage_sets(200, counts)
    not_for_bids = dataclasses.replace(counts, ace_marriage_counts_for_bid=False)
    assert all(m & aces == 0 for m in _marriage_sets(200, not_for_bids))


class QuickOrdered(Bot):
    """A quick bot whose ``on_match_start`` waits for ``release``; notes the order of its
    calls."""

    quick = True
    calls: ClassVar[list[str]] = []
    entered: ClassVar[threading.Event] = threading.Event()
    release: ClassVar[threading.Event] = threading.Event()

    def on_match_start(self, view: PlayerView) -> None:
        QuickOrdered.calls.append("start")
        QuickOrdered.entered.set()
        QuickOrdered.release.wait(30)
        QuickOrdered.calls.append("start done")

    def act(self, view: PlayerView) -> Action:
        QuickOrdered.calls.append("act")
        return view.legal_actions[0]


def test_a_quick_bot_is_not_asked_while_its_match_has_a_call_in_flight() -> None:
    """C50: a quick bot asked on the event loop even while a call of its match ran in its
    thread (``not busy`` dropped) had ``act`` run during its own ``on_match_start``: the
    calls of a match come one at a time, in order."""
    g = _game()
    seat = g.to_act
    assert seat is not None
    QuickOrdered.calls = []
    QuickOrdered.entered.clear()
    QuickOrdered.release.clear()

    async def main() -> list[str]:
        runner = BotRunner(QuickOrdered, "127.0.0.1:1", "tok")
        out = _Outbox()
        out.held = True
        runner._out = out
        runner._on_message(_started(g, seat), out)
        assert await asyncio.to_thread(QuickOrdered.entered.wait, 30)
        runner._on_message(_request(g, "r1", seat), out)
        QuickOrdered.release.set()
        while runner._tasks:
            await asyncio.wait(set(runner._tasks))
        if runner._pool is not None:
            runner._pool.shutdown()
        return [m.decision.request_id for m in out._buf if m is not None]

    assert asyncio.run(main()) == ["r1"]
    assert QuickOrdered.calls == ["start", "start done", "act"]


def test_a_stream_without_a_welcome_is_dropped_at_the_welcome_timeout_every_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """C46: once failing, a stream waited for its Welcome until --retry-for ran out (30 s
    here), not the welcome timeout (0.2 s): ``max(give_up, ...)`` without the ``min``."""

    async def play(request_iterator: Any, context: Any) -> Any:
        await request_iterator.__anext__()  # the Hello; then nothing, for ever
        await asyncio.Event().wait()
        yield b""  # (never reached: a generator, as a stream's handler is)

    async def main() -> list[str]:
        server, port = await play_server(play)
        runner = BotRunner(Bot, f"127.0.0.1:{port}", "tok", initial_backoff=0.01,
                           max_backoff=0.02, retry_for=30.0, welcome_timeout=0.2)  # fmt: skip
        said: list[str] = []

        class Second(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "reconnecting in" in record.getMessage():
                    said.append(record.getMessage())
                    if len(said) == 2:
                        runner.stop()

        log = logging.getLogger("sdk.client")
        watch = Second()
        log.addHandler(watch)
        try:
            await asyncio.wait_for(runner.run(), 120)
        finally:
            log.removeHandler(watch)
            await server.stop(0)
        return said

    said = asyncio.run(main())
    assert len(said) == 2
    assert all(re.match(r"no Welcome from the arena at \S+ within 0\.2 s;", s) for s in said), said
