"""Round 55 (limits): what a bot author prints.

A phase printed as ``<Phase.BIDDING: 'bidding'>`` and a suit as ``<Suit.HEARTS: 3>``:
Python's enum reprs. A suit's, rank's and phase's repr is now their name
(``Suit.HEARTS``), which evaluates to them. A card's repr stays the enum's
(``<Card.HK: 21>``): bots seed from texts of their hands (the bundled random bot does,
and its module's digest is what a resumed tournament compares), so a new card repr would
change how they play the same seeds; ``format_cards`` (exported by ``sdk``) writes a hand
as players do. ``str`` and every wire and record format are unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import sdk
from engine import DECK, Card, Game, Phase, Rank, Suit, observe, parse_action, parse_cards

#: What a bot author's module has imported (``from sdk import *``): a repr evaluates there.
NAMES: dict[str, Any] = {"Card": Card, "Suit": Suit, "Rank": Rank, "Phase": Phase}


def test_suits_ranks_and_phases_are_written_by_name() -> None:
    for value in (*Suit, *Rank, *Phase):
        assert repr(value) == f"{type(value).__name__}.{value.name}"
        assert eval(repr(value), NAMES) is value
    assert (str(Suit.HEARTS), str(Rank.TEN), str(Phase.BIDDING)) == ("♥", "10", "bidding")


def test_a_cards_repr_stays_the_enums_and_a_hand_is_written_by_format_cards() -> None:
    """The random bot's seed text holds ``list(view.hand)``: the enum's repr, unchanged."""
    for card in DECK:
        assert repr(card) == f"<Card.{card.name}: {int(card)}>"
        assert parse_cards(sdk.format_cards([card])) == (card,)
    hand = observe(Game.new("classic", seed=1, players=["a", "b", "c"]), 1).hand
    assert sdk.format_cards(hand) == "Q♠ 10♠ A♠ 10♣ Q♦ K♦ A♥"
    assert parse_cards(sdk.format_cards(hand)) == tuple(sorted(hand))
    # the formats that carry cards are unchanged: ints in JSON, the notation in text
    assert json.dumps([Card.HK, Card.SA]) == "[21, 5]" and f"{Card.HK}" == "K♥"


def test_what_a_bot_prints_of_a_match_names_its_enums() -> None:
    """Every view of a played match (each seat's at each step): no phase, suit or rank
    printed as ``<...: value>``, and each action's text reads back as the action."""
    game = Game.new("classic", seed=4, players=["a", "b", "c"])
    seen: set[str] = set()
    while not game.is_over and game.deal_number < 2:
        for seat in range(3):
            text = repr(observe(game, seat))
            assert "<Phase." not in text and "<Suit." not in text and "<Rank." not in text
            assert "phase=Phase." in text
        for action in game.legal_actions():
            assert parse_action(str(action)) == action
            seen.add(type(action).__name__)
        game.apply_trusted(game.legal_actions()[0])
    assert {"Bid", "Pass", "Give", "Play"} <= seen


def test_the_sdk_exports_the_same_types() -> None:
    """A bot imports them from ``sdk``: the same classes, so the same reprs."""
    assert (sdk.Card, sdk.Suit, sdk.Rank, sdk.Phase) == (Card, Suit, Rank, Phase)
    assert "format_cards" in sdk.__all__
