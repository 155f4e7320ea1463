"""Round 58 (performance, #7): the referee reads the game's state once a decision.

``MatchRunner._decide`` reads the deal's bids and tricks to decide what a view leaves out;
it now hands them to ``game_view_bytes`` (which read them again), and ``_after`` asks
``public_action`` only about a give. What a bot receives must not change: these tests hold
the view written from the tuples handed in to the one written from the game; in real
matches with "results_once", every request's ``deal_results_omitted`` to the results that
seat's bot was sent before on its stream (a count kept in the ``Pending`` was tried and
not kept: round 57's byte-equality tests pass with a wrong count, this one does not); and
every give's event to what each seat may see of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import game_view_bytes
from arena.referee import Referee, RefereeConfig
from arena.referee.sessions import BotSession
from arena.v1 import arena_pb2 as pb
from engine import Game
from engine.rules import PRESETS


def test_a_view_from_the_tuples_handed_in_is_the_view_from_the_game() -> None:
    """Every seat's view over random play of the three presets, with and without parts
    left out: the same bytes whether ``game_view_bytes`` reads the bids and tricks
    itself or is handed the ones the referee read."""
    checked = omitted = 0
    for m, (preset, n) in enumerate([("classic", 3), ("1001", 3), ("1001", 4)] * 2):
        g = Game.new(preset, m, [f"p{i}" for i in range(n)])
        rng = random.Random(m)
        while not g.is_over and len(g.deal_results) < 4:
            bids, tricks, results = g.auction(), g.tricks, g.deal_results
            legal = g.legal_actions()
            for seat in range(n):
                for left_out in {(0, 0, 0), (len(results), len(bids), len(tricks))}:
                    want = game_view_bytes(g, seat, *left_out)
                    got = game_view_bytes(g, seat, *left_out, legal, bids=bids, tricks=tricks)
                    assert got == want, (preset, m, seat, left_out)
                    checked += 1
                    omitted += sum(left_out) > 0
            g.apply(rng.choice(legal), seat=g.to_act)
    assert checked > 1000 and omitted > 500


class _ResultsKept(_AnswerAtOnce):
    """A bot with "results_once": per match, how many deal results it was sent in views on
    its stream (its MatchStarted's view is whole); each request must leave out exactly
    those (more would hide a result it never had, fewer resend one)."""

    __slots__ = ("known", "omitting", "requests")

    def __init__(self, referee: Referee, session: BotSession) -> None:
        super().__init__(referee, session, as_sdk=True)
        self.known: dict[str, int] = {}
        self.requests = 0
        self.omitting = 0

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        parsed = pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg
        if parsed.HasField("match_started"):
            started = parsed.match_started
            self.known[started.match_id] = len(started.view.deal_results)
        elif parsed.HasField("decision_request"):
            req = parsed.decision_request
            v = req.view
            assert v.deal_results_omitted == self.known[req.match_id], req.request_id
            self.known[req.match_id] = v.deal_results_omitted + len(v.deal_results)
            self.requests += 1
            self.omitting += v.deal_results_omitted > 0
        super().put(msg)


def test_each_request_leaves_out_the_results_its_bot_was_sent() -> None:
    async def run() -> list[_ResultsKept]:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        streams = []
        for name in ("a", "b", "c"):
            referee.add_bot(name, f"token-{name}")
            session = referee.session(name)
            stream = _ResultsKept(referee, session)
            session.attach(stream)
            streams.append(stream)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
        await asyncio.gather(
            *(referee.run_match(f"t{t}", rules, 40 + t, ["a", "b", "c"]) for t in range(2))
        )
        return streams

    streams = asyncio.run(run())
    assert all(s.requests > 20 and s.omitting > 5 for s in streams)


class _GivesSeen(_AnswerAtOnce):
    """Every give's event as each seat is told of it: its card for the declarer (the actor)
    and the receiver, hidden from the third seat; every other action's the same to all."""

    __slots__ = ("gives",)

    def __init__(self, referee: Referee, session: BotSession) -> None:
        super().__init__(referee, session, as_sdk=True)
        self.gives: list[tuple[int, bool]] = []  # (to, card shown) of each give told

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        parsed = pb.ServerMessage.FromString(msg) if isinstance(msg, bytes) else msg
        for ev in parsed.events:
            if ev.HasField("action") and ev.action.action.HasField("give"):
                give = ev.action.action.give
                self.gives.append((give.to_seat, give.HasField("card")))
        super().put(msg)


def test_a_give_is_hidden_from_the_third_seat_only() -> None:
    async def run() -> list[_GivesSeen]:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        streams = []
        for name in ("a", "b", "c"):
            referee.add_bot(name, f"token-{name}")
            session = referee.session(name)
            stream = _GivesSeen(referee, session)
            session.attach(stream)
            streams.append(stream)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=3)
        await referee.run_match("g", rules, 7, ["a", "b", "c"])
        return streams

    streams = asyncio.run(run())
    told = [s.gives for s in streams]
    assert all(len(t) == len(told[0]) >= 4 for t in told)
    for k in range(len(told[0])):
        # (seats in this match are a, b, c: 0, 1, 2; the declarer is the one not given to
        # among the two who see the card)
        shown = [told[seat][k][1] for seat in range(3)]
        to = told[0][k][0]
        assert shown.count(False) == 1 and shown[to], (k, shown, to)
