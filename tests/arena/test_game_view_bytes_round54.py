"""``game_view_bytes``: a request's view written from the game in one pass, without the
``PlayerView`` in between, is byte for byte what ``view_to_pb`` makes of ``observe``'s view.

``observe`` stays the one function that decides what a seat sees; the referee's requests
are now made by ``game_view_bytes``, so these tests hold it to ``observe`` everywhere: in
random play over the presets and over random rulesets, at every state, for every seat (the
seat to act and the others), with every count of results, bids and tricks left out that a
view may leave out, and at the end of a match.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.protocol import game_view_bytes, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, Ruleset, load_ruleset, observe
from tests.engine.test_option_combinations_round47 import rulesets
from tests.engine.test_properties import PROFILE


def _check(game: Game, seat: int, rng: random.Random, counts: dict[str, int]) -> None:
    """``game_view_bytes`` of ``game`` for ``seat`` against ``view_to_pb(observe(...))``,
    whole and with random counts left out."""
    view = observe(game, seat)
    omissions = [(0, 0, 0)]
    if view.deal_results or view.bids or view.tricks:
        omissions.append(
            (
                rng.randint(0, len(view.deal_results)),
                rng.randint(0, len(view.bids)),
                rng.randint(0, len(view.tricks)),
            )
        )
        omissions.append((len(view.deal_results), len(view.bids), len(view.tricks)))
    for results, bids, tricks in omissions:
        want = view_to_pb(view, None, results, bids, tricks)
        data = game_view_bytes(game, seat, results, bids, tricks)
        # The same bytes as view_to_pb joins (so the same message, field for field), and
        # protobuf's own serialization of it.
        assert pb.PlayerView.FromString(data) == want, (view, results, bids, tricks)
        assert pb.PlayerView.FromString(data).SerializeToString() == want.SerializeToString()
        # As the referee calls it (round 55): with the legal actions it already has, the
        # seat's when it is to act, ignored for the others.
        legal = game.legal_actions() if not game.is_over else ()
        assert game_view_bytes(game, seat, results, bids, tricks, legal) == data
        counts["omitted"] += results + bids + tricks > 0
    counts["views"] += 1
    counts["hand"] += bool(view.hand)
    counts["talon"] += view.talon is not None
    counts["hidden_give"] += any(card is None for _, card in view.gives)
    counts["seen_give"] += any(card is not None for _, card in view.gives)
    counts["marriage"] += bool(view.marriages)
    counts["legal"] += bool(view.legal_actions)
    counts["barrel"] += bool(view.barrel and any(view.barrel))


def _walk(
    rule: Ruleset | str, seed: int, rng: random.Random, deals: int, **start: Any
) -> dict[str, int]:
    """Random play of up to ``deals`` deals (to the end when the match ends sooner), every
    seat's view checked at every state; returns what the views held. ``start``: the
    match's starting scores and barrel (``Game.new``'s)."""
    n = rule.players if isinstance(rule, Ruleset) else load_ruleset(rule).players
    game = Game.new(rule, seed, [f"p{i}" for i in range(n)], **start)
    counts = dict.fromkeys(
        ("views", "omitted", "hand", "talon", "hidden_give", "seen_give", "marriage", "legal",
         "barrel", "over"), 0,
    )  # fmt: skip
    while not game.is_over and len(game.deal_results) < deals:
        for seat in range(n):
            _check(game, seat, rng, counts)
        game.apply_trusted(rng.choice(game.legal_actions()))
    if game.is_over:
        counts["over"] += 1
        for seat in range(n):
            _check(game, seat, rng, counts)
    return counts


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_presets_every_seat_every_state(preset: str) -> None:
    total: dict[str, int] = {}
    for seed in range(4):
        for k, v in _walk(preset, seed, random.Random(seed), deals=5).items():
            total[k] = total.get(k, 0) + v
    # Every kind of part a view has was met (the comparison above is not vacuous).
    for part in ("omitted", "hand", "talon", "hidden_give", "seen_give", "marriage", "legal"):
        assert total[part] > 0, (preset, part, total)


def test_matches_near_their_end_on_the_barrel_and_over() -> None:
    """Matches started near the target, a seat on the barrel, played to their end (capped
    at 20 deals): the barrel's views, and those of a finished game, are observe's."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=20)
    total: dict[str, int] = {}
    for seed in range(3):
        rng = random.Random(seed)
        start = {"scores": [880, 700, 640], "barrel": [3, 0, 0]}
        for k, v in _walk(rules, seed, rng, deals=10_000, **start).items():
            total[k] = total.get(k, 0) + v
    assert total["over"] == 3
    assert total["barrel"] > 0


@settings(max_examples=30, **PROFILE)
@given(rule=rulesets(), seed=st.integers(0, 2**31 - 1), rng=st.randoms(use_true_random=False))
def test_random_rulesets(rule: Ruleset, seed: int, rng: random.Random) -> None:
    _walk(rule, seed, rng, deals=2)


@pytest.mark.parametrize("seat", [-1, 3, True, "0", None])
def test_a_seat_the_game_has_not_is_refused_as_observe_refuses_it(seat: object) -> None:
    game = Game.new("classic", 1, ["a", "b", "c"])
    with pytest.raises(ValueError, match="no seat") as want:
        observe(game, seat)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no seat") as got:
        game_view_bytes(game, seat)  # type: ignore[arg-type]
    assert str(got.value) == str(want.value)


def test_more_left_out_than_the_view_holds_is_refused() -> None:
    game = Game.new("classic", 1, ["a", "b", "c"])
    seat = game.to_act
    assert seat is not None
    for omitted in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
        with pytest.raises(ValueError, match="to leave out of 0"):
            game_view_bytes(game, seat, *omitted)
