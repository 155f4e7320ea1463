"""Rule cases as an outside examiner would write them (round 26).

Each case is set up and played with the public API only, as docs/rules-engine.md
("Setting up a rule case") shows an examiner who has read nothing else: explicit hands and
talon, the dealer, start scores and barrel, then the actions by seat. Each test is named
after the RULES.md sentence it checks, quoted in its docstring, and adds what the earlier
audits (test_rule_cases*.py, test_rules_audit*.py, test_rule_lawyer_round18.py, ...) did
not: the exact legal actions offered along a whole deal, a marriage's trump ending with its
deal, four aces completed by a passed ace, a barrel win carried by a marriage, another
sitter's last barrel deal in the deal that ends the match, the throw-in bonus under
rounding, and start barrels a ruleset cannot have.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from engine import Game, Ruleset, load_ruleset, parse_action, parse_cards

NAMES3 = ["ann", "bob", "cid"]
NAMES4 = ["ann", "bob", "cid", "dan"]


def ruleset(preset: str, **options: Any) -> Ruleset:
    return dataclasses.replace(load_ruleset(preset), **options)


def deal(hands: list[str], talon: str) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    """``(hands, talon)`` for ``Game.new(deals=...)``; an empty text is the 4-player dealer."""
    return [parse_cards(h) if h else () for h in hands], parse_cards(talon)


def play(game: Game, *steps: str) -> None:
    """Apply ``"seat: action"`` steps; the seat check catches a wrong script."""
    for step in steps:
        seat, text = step.split(":", 1)
        game.apply(parse_action(text.strip()), seat=int(seat))


def legal(game: Game) -> list[str]:
    return [str(a) for a in game.legal_actions()]


# Dealer 2: seat 0 is first hand, seat 1 second hand, seat 2 the dealer (last hand).
# Seat 0 holds the ♠ marriage (cap 160), seat 1 the ♣ and ♥ marriages (cap 280), seat 2
# the ♦ marriage (cap 200).
CAPS_HANDS = ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "A♣ 10♣ K♣ Q♣ K♥ Q♥ 9♣", "Q♦ J♦ 9♥ J♥ A♦ K♦ 10♥"]
CAPS_TALON = "10♦ J♣ 9♦"


def test_each_phase_offers_exactly_the_actions_the_rules_allow() -> None:
    """RULES.md §2: "each player either raises (a multiple of 5, at least 5 above the
    standing bid) or passes"; "Nobody may bid above 120 + the marriages in his own hand";
    §3 "He now holds 10"; §4 "The declarer gives one card, face down, to each opponent (one
    each, any of his 10 cards)"; §5 "a multiple of 5, at least the winning bid, at most the
    greater of the winning bid and 120 + the marriages in his 8 cards now"; §6 "Instead of
    naming a contract, the declarer may concede"; §8 a marriage only after a won trick (so
    never on the first lead)."""
    g = Game.new("classic", 1, NAMES3, deals={0: deal(CAPS_HANDS, CAPS_TALON)}, dealer=2)
    # second hand speaks first (first hand is committed to 100): 105 .. his cap 280
    assert g.to_act == 1
    assert legal(g) == [f"bid {b}" for b in range(105, 281, 5)] + ["pass"]
    play(g, "1: bid 105")
    assert legal(g) == [f"bid {b}" for b in range(110, 201, 5)] + ["pass"]  # seat 2: 200
    play(g, "2: pass")
    assert legal(g) == [f"bid {b}" for b in range(110, 161, 5)] + ["pass"]  # seat 0: 160
    play(g, "0: pass")
    # seat 1 won at 105 and holds 10 cards: any of them to either opponent, nothing else
    assert str(g.phase) == "passing" and g.declarer == 1 and g.bid == 105
    ten = g.hand(1)
    assert len(ten) == 10
    assert sorted(legal(g)) == sorted(f"give {c} to {to}" for c in ten for to in (0, 2))
    play(g, "1: give 9♣ to 0")
    # one card each: the second goes to the other opponent
    assert sorted(legal(g)) == sorted(f"give {c} to 2" for c in g.hand(1))
    play(g, "1: give 9♦ to 2")
    # both marriages still held: contracts 105 .. 280 by 5, or the concession; no throw-in
    assert str(g.phase) == "contract"
    assert legal(g) == [f"contract {c}" for c in range(105, 281, 5)] + ["concede"]
    play(g, "1: contract 105")
    # the first lead: any of his 8 cards, no marriage yet (he has won no trick)
    assert sorted(legal(g)) == sorted(f"play {c}" for c in g.hand(1))
    assert len(legal(g)) == 8


def test_a_marriages_trump_lasts_until_the_end_of_its_deal() -> None:
    """RULES.md §8: "its suit is trump from that trick on, until another marriage is
    declared" (the 1000 source: "козыри действительны до конца игры", the trumps hold
    until the end of the deal). The next deal starts without a trump: a player void in the
    led suit who holds the old trump suit may play any card, and the old trump takes
    nothing."""
    deal1 = deal(
        # dealer 0: seat 1 first hand, seat 2 second hand, seat 0 the dealer
        ["Q♠ J♠ 9♠ Q♥ J♥ Q♦ J♦", "A♥ 10♥ K♥ 9♥ A♦ 10♦ K♦", "A♠ 10♠ K♠ 9♣ J♣ Q♣ K♣"],
        "9♦ A♣ 10♣",
    )
    g = Game.new("classic", 1, NAMES3, deals={0: deal(CAPS_HANDS, CAPS_TALON), 1: deal1}, dealer=2)
    play(g, "1: pass", "2: pass", "0: give 10♦ to 1", "0: give 9♦ to 2", "0: contract 100")
    play(g, "0: play A♠", "1: play 9♣", "2: play J♦", "0: play K♠ declare")
    assert g.trump is not None and str(g.trump) == "♠"
    while g.deal_number == 0:  # the rest of deal 0, whatever is played
        g.apply(g.legal_actions()[0], seat=g.to_act)
    assert g.deal_results[0].marriage_points[0] == 40
    assert g.dealer == 0 and g.trump is None
    play(g, "2: pass", "0: pass", "1: give 9♦ to 2", "1: give A♣ to 0", "1: contract 100")
    play(g, "1: play A♥")
    # seat 2 has no ♥ and no trump is set: his spades are no obligation
    assert sorted(legal(g)) == sorted(f"play {c}" for c in g.hand(2))
    assert len(legal(g)) == 8
    play(g, "2: play A♠", "0: play Q♥")
    assert g.tricks[-1].winner == 1 and g.to_act == 1, "A♠ is no trump in this deal: A♥ wins"


def test_four_aces_completed_by_a_passed_ace_make_the_receivers_ace_marriage() -> None:
    """RULES.md §9: "A player holding all four aces may declare it by leading an ace, once
    he has won a trick with a card other than an ace. It scores 200 and changes no trump";
    §4 "The declarer gives one card, face down, to each opponent (one each, any of his 10
    cards)". A defender dealt three aces and passed the fourth holds the four aces: after
    winning a trick with a ten he is offered the ace marriage with each ace."""
    hands = ["A♦ K♠ Q♠ J♠ 9♠ 9♦ J♦", "A♠ A♣ A♥ 10♦ 9♣ J♣ Q♣", "10♠ 10♣ K♣ K♥ Q♥ J♥ 9♥"]
    g = Game.new("classic", 1, NAMES3, deals={0: deal(hands, "K♦ Q♦ 10♥")}, dealer=2)
    play(g, "1: pass", "2: pass", "0: give A♦ to 1", "0: give 10♥ to 2", "0: contract 100")
    play(g, "0: play 9♦", "1: play 10♦", "2: play 9♥")
    assert g.to_act == 1
    assert [a for a in legal(g) if "declare" in a] == [
        f"play {ace} declare" for ace in ("A♠", "A♣", "A♦", "A♥")
    ]
    play(g, "1: play A♦ declare")
    assert g.marriage_points(1) == 200 and g.marriages == ((1, None),) and g.trump is None


# Dealer 2: seat 0 (first hand) holds every spade with the ♠ marriage and takes all tricks
# but one worth 7; played out by ``sitter_makes_120``.
WIN_HANDS = ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "A♣ 10♣ K♣ Q♣ J♣ 9♣ 10♥", "A♦ 10♦ K♦ Q♦ J♦ 9♦ K♥"]
WIN_TALON = "Q♥ J♥ 9♥"


def sitter_makes_120(scores: tuple[int, ...], barrel: tuple[int, ...]) -> Game:
    """Seat 0 declares at 100, names 120 and takes 113 card points + the ♠ marriage."""
    g = Game.new(
        "classic", 1, NAMES3, deals={0: deal(WIN_HANDS, WIN_TALON)}, dealer=2,
        scores=scores, barrel=barrel,
    )  # fmt: skip
    play(g, "1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
    assert legal(g)[-2:] == ["contract 160", "concede"]
    play(g, "0: contract 120")
    play(
        g,
        "0: play A♠", "1: play 9♣", "2: play 9♦",
        "0: play K♠ declare", "1: play J♣", "2: play J♦",
        "0: play 10♠", "1: play Q♣", "2: play Q♦",
        "0: play Q♠", "1: play K♣", "2: play K♦",
        "0: play J♠", "1: play 10♣", "2: play 10♦",
        "0: play 9♠", "1: play A♣", "2: play A♦",
        "0: play Q♥", "1: play 9♥", "2: play K♥",  # seat 2's K♥ takes 7 points
        "2: play J♥", "0: play A♥", "1: play 10♥",
    )  # fmt: skip
    res = g.deal_results[0]
    assert res.card_points == (113, 0, 7) and res.marriage_points == (40, 0, 0)
    assert res.outcome == "made"
    return g


def test_a_sitters_marriage_counts_toward_the_120_that_wins_from_the_barrel() -> None:
    """RULES.md, the barrel: "He wins the game (score 1000) by winning the bidding and
    making a contract of at least 120"; §10 "Each player's take = card points of the tricks
    he won + his declared marriages. Declarer: take ≥ contract". The sitter takes 113 card
    points and the ♠ marriage (40): 153 makes his 120, so he wins with 1000 (113 alone
    would have failed it)."""
    g = sitter_makes_120((880, 500, 300), (2, 0, 0))
    assert g.deal_results[0].events == ("seat 0 wins from the barrel",)
    assert g.is_over and g.result is not None
    assert g.result.scores == (1000, 500, 307) and g.result.winner == 0
    assert g.result.shortfalls == (0, 500, 693) and g.result.reason == "target"


def test_a_sitters_last_barrel_deal_costs_120_even_when_another_sitter_wins_it() -> None:
    """RULES.md, the barrel: "Three deals on the barrel without a win: −120 (option
    `barrel_penalty`) and off"; "several players may sit on it" (`barrel_mode = many`);
    "the result also states each loser's shortfall to the target". RULES.md does not say
    whether the deal that ends the match still charges another sitter's third deal; the
    engine scores the deal whole, then ends the match (docs/rules-engine.md,
    Interpretations), so seat 1 ends at 760 and his shortfall is 240."""
    g = sitter_makes_120((880, 880, 300), (2, 1, 0))
    assert g.deal_results[0].events == (
        "seat 0 wins from the barrel",
        "seat 1 sat 3 deals on the barrel: -120",
    )
    assert g.result is not None and g.result.scores == (1000, 760, 307)
    assert g.result.places == (1, 2, 3) and g.result.shortfalls == (0, 240, 693)
    assert g.deal_results[0].barrel == (0, 0, 0)


def test_the_throw_in_bonus_is_not_rounded_like_a_take() -> None:
    """RULES.md, 1001: "the last hand ... may ... throw in: then each other player dealt
    into the deal scores +50 and he scores 0"; "Opponents' takes are rounded to a multiple
    of 5". The bonus is no take: a house bonus of 52 is scored as 52 under rounding 5
    (docs/rules-engine.md, the `throw_in_bonus` row, says so)."""
    rules = ruleset("1001", throw_in_bonus=52)
    assert rules.rounding == 5
    g = Game.new(rules, 1, NAMES3, deals={0: deal(CAPS_HANDS, CAPS_TALON)}, dealer=2)
    play(g, "0: pass", "1: pass", "2: give 10♦ to 0", "2: give 9♦ to 1")
    assert "throw-in" in legal(g) and "concede" not in legal(g)
    play(g, "2: throw-in")
    assert g.deal_results[0].deltas == (52, 52, 0)


@pytest.mark.parametrize(
    ("preset", "names", "barrel", "words"),
    [
        # RULES.md 1001: "no barrel": nobody can be on it, whatever the deals left
        ("1001", NAMES3, (0, 3, 0), "seat 1 is on the barrel (3 deals left), but this "
         "ruleset has no barrel"),
        ("1001", NAMES4, (0, 0, 0, 1), "seat 3 is on the barrel (1 deal left), but this "
         "ruleset has no barrel"),
        # classic: "on the barrel for the next 3 deals": 0 (off) to 3 deals left
        ("classic", NAMES3, (0, 4, 0), "seat 1 has 4 deals left on the barrel: at most 3"),
        ("classic", NAMES3, (-1, 0, 0), "seat 0 has -1 deals left on the barrel"),
    ],
)  # fmt: skip
def test_a_start_barrel_that_the_rules_cannot_have_is_refused_naming_the_seat(
    preset: str, names: list[str], barrel: tuple[int, ...], words: str
) -> None:
    """RULES.md, preset 1001: "Target 1001; no barrel"; the barrel: "is on the barrel for
    the next 3 deals". docs/rules-engine.md: "Only positions a match can reach are accepted
    (`ValueError` naming the seat)". Defect: a barrel count under a ruleset without the
    barrel, or out of range, was refused with "barrel must be deals left (0..3) per seat",
    naming no seat and, without the barrel, offering counts (1..3) that are refused too."""
    scores = tuple(880 if b else 0 for b in barrel)
    with pytest.raises(ValueError, match=re.escape(words)):
        Game.new(preset, 1, names, scores=scores, barrel=barrel)
    # every seat off the barrel is accepted (the one start a ruleset without it has)
    off = Game.new(preset, 1, names, barrel=(0,) * len(names))
    assert off.start[1] == (0,) * len(names)
