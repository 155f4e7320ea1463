"""Round 47: ``view_from_pb`` finds the items that repeat from view to view (bids, the
trick in progress, completed tricks, deal results, legal actions) by their wire bytes
among those decoded before. An item valid at a table of four must still be refused at a
table of three (the seat's range is part of what was checked), and a view decoded with
every item already known is the view ``observe`` made."""

from __future__ import annotations

import dataclasses
import random

import pytest

from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, Phase, observe
from engine.view import PlayerView


def _views_of_a_match(preset: str, seed: int) -> list[PlayerView]:
    """Every seat's view at every decision of a random match of three deals."""
    rules = dataclasses.replace(PRESETS[preset], max_deals=3)
    g = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
    rng = random.Random(seed)
    out = []
    while not g.is_over:
        out += [observe(g, s) for s in range(rules.players)]
        g.apply_trusted(rng.choice(g.legal_actions()))
    return out


def _naming_seat_3(field: str, players: int) -> pb.PlayerView:
    """A view of a 3-player match, with ``players`` names and scores, whose first item of
    ``field`` names seat 3 (or, for a deal result, holds 4 values per seat)."""
    v = next(
        v
        for seed in range(20)
        for v in _views_of_a_match("1001", seed)
        if v.deal_results and v.tricks and v.trick and v.bids
    )
    m = view_to_pb(v)
    if field == "bids":
        m.bids[0].seat = 3
    elif field == "trick":
        m.trick[0].seat = 3
    elif field == "tricks":
        m.tricks[0].winner = 3
    widened = m.deal_results[:1] if field == "deal_results" else ()
    if players == 4:
        widened = m.deal_results
        m.players.append("p3")
        m.scores.append(0)
        if m.barrel:
            m.barrel.append(-1)
    for r in widened:
        for name in ("card_points", "marriage_points", "takes", "deltas", "scores"):
            getattr(r, name).append(0)
        if r.barrel:
            r.barrel.append(-1)
    return m


@pytest.mark.parametrize(
    ("field", "what"),
    [
        ("bids", "view.bids.seat"),
        ("trick", "view.trick.seat"),
        ("tricks", "view.tricks.winner"),
        ("deal_results", "deal_result.card_points"),
    ],
)
def test_an_item_known_at_four_seats_is_refused_at_three(field: str, what: str) -> None:
    four = view_from_pb(_naming_seat_3(field, 4), PRESETS["1001-4p"])
    assert len(four.players) == 4  # decoded, and so its items known by their bytes
    with pytest.raises(MalformedMessageError) as e:
        view_from_pb(_naming_seat_3(field, 3), PRESETS["1001"])
    assert e.value.what == what, e.value


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_views_decoded_twice_are_observes(preset: str) -> None:
    """The second pass finds every item among those decoded in the first."""
    views = _views_of_a_match(preset, 5)
    rules = views[0].ruleset
    wire = [pb.PlayerView.FromString(view_to_pb(v).SerializeToString()) for v in views]
    for _ in range(2):
        for v, m in zip(views, wire, strict=True):
            assert view_from_pb(m, rules) == v
    assert any(v.phase is Phase.PLAYING and v.trick and v.tricks for v in views)


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_a_views_bids_and_tricks_encode_alike_whatever_tuple_holds_them(preset: str) -> None:
    """``view_to_pb`` keeps the bytes of a view's ``bids`` and ``tricks`` by the tuple's
    identity (``observe`` hands out the game's own): a view holding copies of them, or
    another deal's, gets the same bytes as one holding the game's."""
    views = _views_of_a_match(preset, 2)
    for v in views:
        copied = dataclasses.replace(v, bids=tuple(list(v.bids)), tricks=tuple(list(v.tricks)))
        assert copied.bids is not v.bids or not v.bids
        assert view_to_pb(copied).SerializeToString() == view_to_pb(v).SerializeToString()
    assert sum(bool(v.bids and v.tricks) for v in views) > 10
