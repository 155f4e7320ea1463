"""Round 55: the referee's work per decision cut (docs/performance.md, "Referee changes
of 2026-12-14, measured in instructions") without changing what a seat is sent: the
legal actions handed to ``game_view_bytes`` rather than asked for again, and a view's
legal actions written from the bytes kept by their tuple's identity."""

from __future__ import annotations

import random

from arena import protocol
from arena.protocol import game_view_bytes, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, Phase, observe


def _states(seed: int) -> list[Game]:
    """Every state of a random classic match of two deals, as copies."""
    rng = random.Random(seed)
    game = Game.new(PRESETS["classic"], seed, ["a", "b", "c"])
    out = []
    while not game.is_over and len(game.deal_results) < 2:
        out.append(game.clone())
        game.apply(rng.choice(game.legal_actions()), seat=game.to_act)
    return out


def test_the_legal_actions_given_are_those_of_the_seat_to_act_only() -> None:
    seen = set()
    for game in _states(3):
        legal = game.legal_actions()
        seen.add(game.phase)
        for seat in range(3):
            want = view_to_pb(observe(game, seat))
            assert pb.PlayerView.FromString(game_view_bytes(game, seat, 0, 0, 0, legal)) == want
        assert game.to_act is not None
        # Another seat's view never carries them, whatever is handed in.
        other = (game.to_act + 1) % 3
        got = pb.PlayerView.FromString(game_view_bytes(game, other, 0, 0, 0, legal))
        assert not got.legal_actions
    assert {Phase.BIDDING, Phase.PASSING, Phase.CONTRACT, Phase.PLAYING} <= seen


def test_a_legal_tuple_is_kept_by_identity_not_by_a_reused_id() -> None:
    """The bytes of a view's legal actions are kept by the tuple's identity: a tuple equal
    to one kept, or an entry whose id another tuple now has, is written anew (mutant: the
    entry's tuple not compared, a stale list of moves sent)."""
    game = _states(5)[0]  # (the auction's first bid: a shared tuple of the engine's)
    seat = game.to_act
    assert seat is not None
    legal = game.legal_actions()
    assert game.legal_actions() is legal
    want = view_to_pb(observe(game, seat))
    first = game_view_bytes(game, seat, 0, 0, 0, legal)
    assert pb.PlayerView.FromString(first) == want
    assert protocol._LEGAL_BY_ID[id(legal)][0] is legal
    # An equal tuple made anew: the same bytes.
    assert game_view_bytes(game, seat, 0, 0, 0, tuple(legal)) == first
    # A stale entry under this tuple's id (another tuple that once had it): not served.
    stale = (legal[-1],)
    protocol._LEGAL_BY_ID[id(legal)] = (stale, b"stale")
    assert game_view_bytes(game, seat, 0, 0, 0, legal) == first
    assert protocol._LEGAL_BY_ID[id(legal)][0] is legal
