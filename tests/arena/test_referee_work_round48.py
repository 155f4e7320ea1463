"""Round 48: the referee's per-decision work cut (docs/performance.md, "Referee changes of
2026-12-07"), and the promises kept around it.

- A seat's deadline timer is kept from decision to decision (``SeatState.arm``/``due``)
  rather than made and cancelled for each: a kept timer that runs while a later request of
  the seat is pending moves on to that request's deadline, and times nothing out early.
- A completed trick's view item is assembled from wire bytes: the same bytes protobuf
  writes for the message built field by field.
- ``talon_taken`` events take the talon from ``visible_talon``, which ``observe`` itself
  uses: what each seat is told is what its view shows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

import pytest

from arena import protocol
from arena.v1 import arena_pb2 as pb
from engine import Game, observe
from engine.cards import Card
from engine.game import Trick
from engine.view import visible_talon
from tests.arena.test_decision_clock_round40 import VirtualLoop, check, play
from tests.support.harness import as_message


class _CountingLoop(VirtualLoop):
    """Counts the deadline timers the match makes (callbacks named ``due``)."""

    def __init__(self) -> None:
        super().__init__({})
        self.deadline_timers = 0

    def call_at(self, when: float, callback: Any, *args: Any, context: Any = None) -> Any:
        if getattr(callback, "__name__", "") == "due":
            self.deadline_timers += 1
        return super().call_at(when, callback, *args, context=context)


def test_a_seats_deadline_timer_is_kept_from_decision_to_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bots that answer at once: a deal's 15-odd requests make one timer per seat, not one
    per request (each made, cancelled and cleared by the loop cost a few µs)."""
    loop = _CountingLoop()
    loop, order = play(monkeypatch, {}, [0.0], loop=loop)
    assert len(order) >= 10
    assert not any(a.timed_out for a in order)
    assert loop.deadline_timers <= 3, (loop.deadline_timers, len(order))
    check(loop, order)


def test_a_kept_timer_running_during_a_later_request_times_out_only_that_requests_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The timer kept from seat 0's first request (answered in 0.05 s) runs while its later
    requests are pending: one thinking past the first deadline but within its own budget is
    not a timeout; one thinking past its own budget is, with the whole budget charged."""
    think_of = {(0, "1"): 0.05, (0, "2"): 0.155, (0, "3"): 0.3}
    loop, order = play(monkeypatch, {}, [0.0], think_of, loop=_CountingLoop())
    mine = {a.rid: a for a in order if a.seat == 0}
    assert {"1", "2", "3"} <= set(mine)
    # (request 2 was sent before request 1's deadline and answered after it)
    assert mine["2"].sent < mine["1"].sent + 0.16 < mine["2"].read  # type: ignore[operator]
    assert not mine["2"].timed_out, mine["2"]
    assert mine["3"].timed_out, mine["3"]
    check(loop, order)


def test_the_timers_of_a_match_are_cancelled_when_it_ends() -> None:
    """A match that ended leaves no timer of its seats on the loop (a kept timer would hold
    the match, its game and record, until its deadline)."""
    from arena.referee import Referee, RefereeConfig
    from arena.referee.sessions import Stream
    from engine import PRESETS

    async def main() -> list[Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))

        class Bot(Stream):
            __slots__ = ("name",)

            def put(self, msg: pb.ServerMessage | bytes) -> None:
                msg = as_message(msg)  # (a request comes as its wire bytes)
                if msg.HasField("decision_request"):
                    r = msg.decision_request
                    d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                    action=r.view.legal_actions[0])  # fmt: skip
                    asyncio.get_running_loop().call_soon(ref.on_decision, ref.session(self.name), d)

        for n in "abc":
            ref.add_bot(n, f"tok-{n}")
            bot = Bot(f"fake-{n}")
            bot.name = n
            ref.session(n).attach(bot)
        await ref.run_match(
            "m1", dataclasses.replace(PRESETS["classic"], max_deals=1), 3, list("abc")
        )
        loop = asyncio.get_running_loop()
        return [h for h in loop._scheduled if not h.cancelled() and "due" in repr(h)]  # type: ignore[attr-defined]

    assert asyncio.run(main()) == []


def test_a_tricks_item_is_the_bytes_protobuf_writes() -> None:
    rng = random.Random(48)
    for _ in range(3000):
        k = rng.choice([3, 4])
        cards = tuple((rng.randrange(4), Card(rng.randrange(24))) for _ in range(k))
        trick = Trick(rng.randrange(4), cards, rng.randrange(4))
        m = pb.Trick(leader=trick.leader, winner=trick.winner)
        for seat, card in trick.cards:
            m.cards.add(seat=seat, card=pb.Card(suit=card.suit + 1, rank=card.rank + 1))  # type: ignore[arg-type]
        assert protocol._trick_item(trick) == pb.PlayerView(tricks=[m]).SerializeToString(), trick


def test_views_with_tricks_encode_as_built_field_by_field() -> None:
    """Every view of a random classic match: ``view_to_pb``'s tricks are the engine's."""
    rng = random.Random(7)
    g = Game.new("classic", seed=4, players=["a", "b", "c"])
    seen = 0
    while not g.is_over and len(g.deal_results) < 3:
        for seat in range(3):
            v = observe(g, seat)
            got = protocol.view_to_pb(v)
            wire = [
                (t.leader, t.winner, [(c.seat, c.card.suit - 1, c.card.rank - 1) for c in t.cards])
                for t in got.tricks
            ]
            assert wire == [
                (t.leader, t.winner, [(s, c.suit, c.rank) for s, c in t.cards]) for t in v.tricks
            ]
            seen += len(v.tricks)
        g.apply_trusted(rng.choice(g.legal_actions()))
    assert seen > 100


def test_the_talon_told_is_the_talon_each_view_shows() -> None:
    for preset, n in (("classic", 3), ("1001", 4)):
        for seed in range(20):
            g = Game.new(preset, seed=seed, players=[f"p{i}" for i in range(n)])
            rng = random.Random(seed)
            while not g.is_over and len(g.deal_results) < 2:
                for seat in range(n):
                    assert visible_talon(g, seat) == observe(g, seat).talon
                g.apply_trusted(rng.choice(g.legal_actions()))
