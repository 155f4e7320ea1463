"""arena.protocol: details of the view encoding that a plain round trip does not pin down.

Each test names the mutant of the mutation audit it guards against. The views are real ones
(``engine.observe`` on a played match); the expected values come from the engine's state at
the moment of the action, not from the protocol's own reading of the view.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from scripted_deal import DECLARER, play, scripted_game

from arena.protocol import view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import (
    PRESETS,
    Game,
    Phase,
    Play,
    PlayerView,
    Ruleset,
    Suit,
    observe,
)


def _wire(msg: pb.PlayerView) -> pb.PlayerView:
    return pb.PlayerView.FromString(msg.SerializeToString())


# ------------------------------------------------------------------ P5: deal results + previous


def _random_match(rules: Ruleset, seed: int) -> Iterator[Game]:
    """The game at every decision of a match played with random legal actions (and over)."""
    g = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
    rng = random.Random(seed)
    while not g.is_over:
        yield g
        g.apply_trusted(rng.choice(g.legal_actions()))
    yield g


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_view_from_pb_with_previous_decodes_every_new_deal_result(preset: str) -> None:
    """Mutation audit: ``_deal_results_from_pb`` decoding ``range(k + 1, n)`` after the ``k``
    results already known from ``previous`` dropped the deal that had just ended.

    Each seat decodes every view of a 4-deal match with its previous decoded view, as the SDK
    does; the deal results must be observe's, deal by deal, after every deal that ends."""
    rules = dataclasses.replace(PRESETS[preset], max_deals=4)
    n = rules.players
    grown_from_known = [0] * n
    for seed in range(2):
        previous: list[PlayerView | None] = [None] * n
        last: PlayerView | None = None
        for g in _random_match(rules, seed):
            for seat in range(n):
                v = observe(g, seat)
                prev = previous[seat]
                got = view_from_pb(_wire(view_to_pb(v)), rules, prev)
                assert len(got.deal_results) == len(v.deal_results)
                pairs = zip(got.deal_results, v.deal_results, strict=True)
                for k, (mine, theirs) in enumerate(pairs):
                    assert mine == theirs, f"seed {seed} seat {seat}: deal result {k} differs"
                assert got == v
                if prev is not None and 0 < len(prev.deal_results) < len(v.deal_results):
                    grown_from_known[seat] += 1
                previous[seat] = got
            last = observe(g, 0)
        assert last is not None and last.phase is Phase.GAME_OVER
        assert len(last.deal_results) == 4
    # A new result after known ones: deals 2, 3 and 4 of each match, for every seat.
    assert all(c >= 4 for c in grown_from_known), grown_from_known


# ------------------------------------------------------------------ P7: the marriage's trick


def test_marriage_trick_on_the_wire_is_the_trick_it_was_declared_on() -> None:
    """Mutation audit: ``_marriage_tricks`` giving ``i + 1`` (the trick after the declaring
    lead) put the wrong ``Marriage.trick`` on the wire.

    Seat 2 wins trick 0, then declares ♥ leading K♥ on trick 1 (0-based): every seat's view
    says trick 1, while the trick is in progress and after it and later tricks are done."""
    g = scripted_game()
    play(g, 2, "A♠")
    play(g, 0, "9♠")
    play(g, 1, "J♠")
    assert len(g.tricks) == 1
    play(g, 2, "K♥", declare=True)
    assert g.marriages == ((2, Suit.HEARTS),) and g.trump is Suit.HEARTS

    def check() -> None:
        for seat in range(3):
            v = observe(g, seat)
            m = view_to_pb(v)
            assert [(mm.seat, mm.suit, mm.trick) for mm in m.marriages] == [
                (2, pb.SUIT_HEARTS, 1)
            ], f"seat {seat}"
            assert m.marriages[0].value == 100

    check()  # declared on the trick in progress
    play(g, 0, "9♥")
    play(g, 1, "J♥")
    check()  # the declaring trick is complete
    play(g, 2, "A♣")
    play(g, 0, "10♥")
    play(g, 1, "9♣")
    assert len(g.tricks) == 3
    check()


def test_marriage_tricks_on_the_wire_match_the_engine_in_played_matches() -> None:
    """Mutation audit (as above): in random matches whose players declare whenever they may
    (the ace marriage of 1001 included), ``Marriage.trick`` is the number of tricks complete
    when the declaring card was led, in every seat's view for the rest of the deal."""
    checked = 0
    for preset in ("classic", "1001"):
        rules = dataclasses.replace(PRESETS[preset], max_deals=6)
        for seed in range(6):
            g = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
            rng = random.Random(seed)
            declared: list[tuple[int, int]] = []  # (seat, trick index) by declaration
            deal = g.deal_number
            while not g.is_over:
                if g.deal_number != deal:
                    deal, declared = g.deal_number, []
                if declared and g.phase is Phase.PLAYING:
                    for seat in range(rules.players):
                        m = view_to_pb(observe(g, seat))
                        assert [(mm.seat, mm.trick) for mm in m.marriages] == declared
                        checked += 1
                legal = g.legal_actions()
                declaring = [a for a in legal if isinstance(a, Play) and a.declare]
                action = rng.choice(declaring or list(legal))
                if isinstance(action, Play) and action.declare:
                    assert g.to_act is not None
                    declared = [*declared, (g.to_act, len(g.tricks))]
                g.apply_trusted(action)
    assert checked > 100


# ------------------------------------------------------------------ P3: the giver of a give


def test_gives_on_the_wire_name_the_declarer_as_giver_in_every_view() -> None:
    """Mutation audit: ``view_to_pb`` writing the viewing seat (``view.seat``) as the giver of
    each ``PlayerView.gives`` entry instead of the declarer.

    The declarer is seat 2; the views of seats 0 and 1 (receivers, not the declarer) must say
    that seat 2 gave, like the declarer's own view."""
    g = scripted_game()
    for seat in range(3):
        m = _wire(view_to_pb(observe(g, seat)))
        assert m.declarer == DECLARER
        assert [sa.seat for sa in m.gives] == [DECLARER, DECLARER], f"seat {seat}"
        assert [sa.action.give.to_seat for sa in m.gives] == [0, 1]
        # The card only for giver and receiver.
        shown = [sa.action.give.HasField("card") for sa in m.gives]
        assert shown == [seat in (2, 0), seat in (2, 1)]


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_gives_name_the_declarer_in_played_matches(preset: str) -> None:
    """Mutation audit (as above), over random matches of each table size."""
    rules = dataclasses.replace(PRESETS[preset], max_deals=3)
    other_seats = 0
    for seed in range(3):
        for g in _random_match(rules, seed):
            for seat in range(rules.players):
                v = observe(g, seat)
                if not v.gives:
                    continue
                m = view_to_pb(v)
                assert g.declarer is not None
                assert [sa.seat for sa in m.gives] == [g.declarer] * len(v.gives)
                other_seats += seat != g.declarer
    assert other_seats > 20


def test_an_action_of_a_kind_from_a_newer_protocol_is_named_as_such() -> None:
    """Defect (hostile audit round 10): an Action whose only field is one this protocol
    does not know (a newer version's kind, field 8) was refused "no kind set": a bot author
    chasing a version mismatch was told they had sent nothing."""
    from arena.protocol import MalformedActionError, action_from_pb

    with pytest.raises(MalformedActionError, match="a kind this referee does not know"):
        action_from_pb(pb.Action.FromString(bytes([0x42, 0x00])))
    with pytest.raises(MalformedActionError, match="no kind set"):
        action_from_pb(pb.Action())
