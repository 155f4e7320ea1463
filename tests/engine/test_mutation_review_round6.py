"""Mutation review, round 6, of the rules engine (``engine/``): tests for the mutants of
``engine/`` that lived through ``tests/engine``, each expectation taken from the rule text
(``docs/RULES.md``, the docstrings of the public API), not from the engine.

Mutants that lived but cannot change behaviour (equivalent, so no test) are listed in the
round's report; the docstrings below name the mutant each test kills.
"""

from __future__ import annotations

import pytest

from engine import Game, MarriageError, Play, Ruleset, Suit, parse_card, trick_winner
from tests.engine.test_rule_cases_external import (
    NAMES3,
    SOLID,
    SOLID_GIVES,
    F,
    acts,
    new_game,
    refused,
    ruleset,
)


# =========================================================================== start positions
@pytest.mark.parametrize("score", [881, 885, 999])
def test_a_start_score_just_over_barrel_at_is_refused(score: int) -> None:
    """Mutant killed: ``_check_start`` refusing a start score only past ``barrel_at + 1``
    (``score > r.barrel_at + 1``), which let a match start at 881.

    RULES.md, "The barrel": "A player whose score would reach 880 or more is set to exactly
    880", so no classic match reaches 881..999; ``Game.new``'s start positions are those a
    match can reach (a score over ``barrel_at`` is refused, the existing cases try 900 only).
    """
    with pytest.raises(ValueError, match=f"starts at {score}, over barrel_at 880"):
        Game.new("classic", 1, NAMES3, scores=[0, score, 0], dealer=2)


def test_a_start_score_of_exactly_barrel_at_on_the_barrel_is_accepted() -> None:
    """The other side of the boundary above: 880 with deals left on the barrel is a
    position the rules reach ("set to exactly 880 and is 'on the barrel' for the next 3
    deals")."""
    g = Game.new("classic", 1, NAMES3, scores=[0, 880, 0], barrel=[0, 3, 0], dealer=2)
    assert g.scores == (0, 880, 0) and g.barrel == (0, 3, 0)


# =========================================================================== rulesets
def test_a_dict_that_sets_players_starts_from_the_preset_it_names() -> None:
    """Mutant killed: ``Ruleset.from_dict`` starting from the preset sized for the table
    (``PRESETS[sized]``) even when the dict sets ``players`` itself.

    ``Ruleset.from_dict``'s contract: "a ``preset`` that has a ruleset of that size and a
    dict that does not set ``players`` itself start from it". A 1001 file that says
    ``players = 3``, read for a 4-player table, is the 3-player 1001 edited (named
    ``1001+custom``, as any edited preset), not ``1001-4p+custom`` with 3 players: a name
    that says four players for a ruleset of three.
    """
    r = Ruleset.from_dict({"preset": "1001", "players": 3}, players=4)
    assert (r.name, r.players) == ("1001+custom", 3)
    # Not setting players: the sized preset, as documented (and unedited: its own name).
    sized = Ruleset.from_dict({"preset": "1001"}, players=4)
    assert (sized.name, sized.players) == ("1001-4p", 4)


# =========================================================================== marriages
def test_declaring_with_a_ten_names_the_k_or_q_rule_even_holding_the_marriage() -> None:
    """Mutant killed: ``_refuse_play`` accepting rank 4 (a 10) among the ranks that may be
    declared (``rank not in (2, 3, 4, 5)``), so that declaring with 10♠ while holding K♠ Q♠
    was refused as "a marriage may be declared only after winning a trick".

    RULES.md §8: "A player who leads a K or Q while holding its partner may declare the
    marriage"; "Bad input": each refusal names "the rule broken". A 10 is no marriage card
    at all, whatever else is in hand or has been won.
    """
    g = new_game(ruleset(), *SOLID)  # F: A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥, talon A♦ 9♣ 9♦
    acts(g, (1, "pass"), (2, "pass"), *SOLID_GIVES, (F, "contract 100"))
    assert g.to_act == F and not g.trick
    with pytest.raises(MarriageError, match="only a K or Q"):
        g.apply(Play(parse_card("10S"), declare=True), seat=F)
    refused(g, F, Play(parse_card("10S"), declare=True), MarriageError)
    # The same card played without declaring is a legal lead.
    g.apply(Play(parse_card("10S")), seat=F)
    assert g.trick[0] == (F, parse_card("10S"))


@pytest.mark.parametrize("score", [879, 875])
def test_a_seat_on_the_barrel_just_under_barrel_at_is_refused(score: int) -> None:
    """Mutant killed: ``_check_start`` refusing a sitter's score only below ``barrel_at - 1``
    (``score < r.barrel_at - 1``), which let a match start with a seat on the barrel at 879.

    RULES.md, "The barrel": a player who reaches it "is set to exactly 880 and is 'on the
    barrel'"; while he sits, his defender takes are not scored and a made contract below
    120 scores nothing, so a sitter's score is 880 and nothing else.
    """
    with pytest.raises(ValueError, match="a player on the barrel has exactly 880"):
        Game.new("classic", 1, NAMES3, scores=[score, 0, 0], barrel=[2, 0, 0], dealer=2)


# =========================================================================== trick_winner
@pytest.mark.parametrize("trump", [-1, 4, True])
def test_trick_winner_refuses_a_trump_that_is_no_suit(trump: object) -> None:
    """Mutant killed: ``trick_winner`` accepting ``trump=-1`` (``not -1 <= trump < 4``),
    the engine's own "no trump" code, which then read the trick as played without trumps.

    ``trick_winner``'s contract: ``trump`` is a ``Suit`` or ``None`` (``None``: no trump);
    anything else is a ``ValueError``, so a caller who means "no trump" says so and one who
    passes a wrong number learns it instead of getting another trick's winner.
    """
    cards = [parse_card("KH"), parse_card("AH"), parse_card("9S")]
    with pytest.raises(ValueError, match="trump must be a Suit or None"):
        trick_winner(cards, trump)  # type: ignore[arg-type]
    assert trick_winner(cards, None) == 1  # A♥ is the highest of the led suit
    assert trick_winner(cards, Suit.SPADES) == 2  # "the highest trump wins the trick"
