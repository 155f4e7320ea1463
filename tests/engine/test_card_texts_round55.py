"""Card and play texts read from tables (round 55: most of a match record's building was
making these texts from the rank and the suit): the same texts as before, for every card,
every play and every hand a mask can hold."""

from __future__ import annotations

import random

from engine import PRESETS, Game
from engine.actions import Play, parse_action
from engine.cards import CARD_TEXT, DECK, card_texts, cards_from_mask
from engine.record import record


def test_every_card_text_is_its_rank_then_its_suit() -> None:
    assert len(CARD_TEXT) == 24
    for card in DECK:
        assert str(card) == CARD_TEXT[card] == card.rank.label + card.suit.symbol
    assert [str(c) for c in DECK[:6]] == ["9♠", "J♠", "Q♠", "K♠", "10♠", "A♠"]
    assert str(DECK[-1]) == "A♥"


def test_every_play_text_reads_back_as_the_play() -> None:
    for card in DECK:
        for declare in (False, True):
            text = str(Play(card, declare=declare))
            assert text == f"play {card.rank.label}{card.suit.symbol}" + (
                " declare" if declare else ""
            )
            assert parse_action(text) == Play(card, declare=declare)


def test_the_texts_of_a_mask_are_its_cards_texts_in_order() -> None:
    masks = [0, (1 << 24) - 1]
    masks += [v << shift for shift in (0, 8, 16) for v in range(256)]  # every byte alone
    rng = random.Random(55)
    masks += [rng.getrandbits(24) for _ in range(3000)]
    for mask in masks:
        texts = card_texts(mask)
        assert texts == [str(c) for c in cards_from_mask(mask)]
        assert isinstance(texts, list)  # (a record's JSON list, as before)
    assert card_texts(1 << 24 | 1) == ["9♠"]  # bits past the deck ignored, as cards_from_mask


def test_a_records_hands_and_actions_are_the_texts() -> None:
    game = Game.new(PRESETS["classic"], 3, ["a", "b", "c"])
    rng = random.Random(3)
    while not game.is_over and game.deal_number < 2:
        acts = game.legal_actions()
        game.apply_trusted(acts[int(rng.random() * len(acts))])
    rec = record(game)
    deal = rec["deals"][0]
    log = game._logs[0]
    assert deal["hands"] == [[str(c) for c in cards_from_mask(m)] for m in log.hands]
    assert deal["talon"] == [str(c) for c in cards_from_mask(log.talon)]
    assert [a["action"] for a in deal["actions"]] == [str(a) for _, a in log.actions]
    assert any(a["action"].startswith("play ") for a in deal["actions"])
