"""observe(): what each seat may see, and nothing more."""

from __future__ import annotations

import dataclasses
import random

import pytest

from engine import PRESETS, Game, Give, HiddenGive, Phase, PlayerView, observe, public_action
from engine.cards import Card

NAMES = ["ann", "bob", "cid"]


def _to(g: Game, phase: Phase, rng: random.Random) -> None:
    while g.phase is not phase:
        legal = g.legal_actions()
        g.apply(legal[-1] if g.phase is Phase.BIDDING else rng.choice(legal))


def test_view_is_frozen_and_hashable() -> None:
    g = Game.new("classic", 1, NAMES)
    v = observe(g, 0)
    assert isinstance(v, PlayerView)
    hash(v)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.seat = 1  # type: ignore[misc]


def test_legal_actions_only_for_the_seat_to_act() -> None:
    g = Game.new("classic", 1, NAMES)
    for seat in range(3):
        v = observe(g, seat)
        assert v.legal_actions == (g.legal_actions() if seat == g.to_act else ())
        assert v.hand == g.hand(seat) and v.talon is None


@pytest.mark.parametrize("visible", [True, False])
def test_talon_and_gives_visibility(visible: bool) -> None:
    rs = dataclasses.replace(PRESETS["classic"], talon_visible=visible)
    g = Game.new(rs, 4, NAMES)
    rng = random.Random(0)
    _to(g, Phase.PASSING, rng)
    d = g.declarer
    assert d is not None
    talon = g.talon
    for seat in range(3):
        v = observe(g, seat)
        assert v.talon == (talon if visible or seat == d else None)
    _to(g, Phase.CONTRACT, rng)
    gives = g.gives
    for seat in range(3):
        v = observe(g, seat)
        for (to, card), (vto, vcard) in zip(gives, v.gives, strict=True):
            assert vto == to
            assert vcard == (card if seat in (d, to) else None)


def test_reshuffling_hidden_cards_never_changes_a_view() -> None:
    """Swap cards between the opponents' hands (and the talon before it is shown)."""
    rng = random.Random(7)
    for trial in range(30):
        g = Game.new("classic", trial, NAMES)
        steps = rng.randrange(0, 20)
        for _ in range(steps):
            g.apply(rng.choice(g.legal_actions()))
        if g.deal_number:
            continue
        me = rng.randrange(3)
        others = [s for s in range(3) if s != me]
        h = g._hands
        a, b = others
        if not h[a] or not h[b]:
            continue
        ca = (h[a] & -h[a]).bit_length() - 1
        cb = (h[b] & -h[b]).bit_length() - 1
        gives_seen = {c for to, c in g._gives if me in (g._declarer, to)}
        if ca in gives_seen or cb in gives_seen:
            continue
        v1 = observe(g, me)
        g2 = g.clone()
        g2._hands[a] ^= (1 << ca) | (1 << cb)
        g2._hands[b] ^= (1 << ca) | (1 << cb)
        assert observe(g2, me) == v1
        if g.phase is Phase.BIDDING:
            # During the auction the talon is hidden too: swap a talon card into b's hand.
            t = (g._talon & -g._talon).bit_length() - 1
            g3 = g.clone()
            g3._talon ^= (1 << t) | (1 << cb)
            g3._hands[b] ^= (1 << t) | (1 << cb)
            assert observe(g3, me) == v1


def test_no_unseen_card_in_any_view() -> None:
    rng = random.Random(3)
    g = Game.new("1001-4p", 8, [*NAMES, "dan"])
    while g.deal_number < 3:
        for seat in range(4):
            v = observe(g, seat)
            seen = set(v.hand) | {c for _, c in v.trick}
            seen |= {c for t in v.tricks for _, c in t.cards}
            seen |= {c for _, c in v.gives if c is not None}
            if v.talon:
                seen |= set(v.talon)
            allowed = set(g.hand(seat)) | {c for _, c in g.trick}
            allowed |= {c for t in g.tricks for _, c in t.cards}
            allowed |= {c for to, c in g.gives if seat in (g.declarer, to)}
            if g.phase is not Phase.BIDDING and (g.ruleset.talon_visible or seat == g.declarer):
                allowed |= set(g.talon)
            assert seen <= allowed
        g.apply(rng.choice(g.legal_actions()))


def test_public_action() -> None:
    give = Give(Card.HK, 2)
    assert public_action(give, 0, 0) == give and public_action(give, 0, 2) == give
    hidden = public_action(give, 0, 1)
    assert hidden == HiddenGive(2) and str(hidden) == "give ?? to 2"


def test_view_after_game_over() -> None:
    rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
    g = Game.new(rs, 2, NAMES)
    while not g.is_over:
        g.apply(g.legal_actions()[0])
    v = observe(g, 0)
    assert v.phase is Phase.GAME_OVER and v.legal_actions == () and len(v.deal_results) == 1
