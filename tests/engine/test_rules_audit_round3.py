"""Rules audit, round 3: the RULES.md sentences no earlier rule case played, written the way a
hidden rule case would be (the public API of ``docs/rules-engine.md``, a crafted deal, the
engine's answer checked against a value worked out by hand from the quoted clause).

Rounds 1-2 and the external cases (``test_rule_cases_external.py``, ``test_rules_audit*.py``)
cover the rest of RULES.md; this file adds: the whole rank order and every card's points,
each suit marriage's value when declared (and all four in the contract cap), the ace
marriage keeping a trump already set, "won a trick in this deal" across deals, the target
option without the barrel, the shipped house-rule files played as they are named, and
``arena rules --json`` naming every option. Seating as in the external cases: 3 players,
dealer 2, so first hand F = 0, second hand S = 1, last hand L = 2.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from engine import (
    DECK,
    Concede,
    Game,
    MarriageError,
    NotYourTurnError,
    Phase,
    Play,
    Ruleset,
    Suit,
    card_points,
    load_ruleset,
    observe,
    parse_card,
    parse_cards,
    trick_winner,
)
from tests.engine.test_rule_cases_external import (
    NAMES3,
    SOLID,
    SOLID_GIVES,
    SOLID_PLAY,
    TR,
    TR_GIVES,
    TR_PLAY,
    F,
    L,
    S,
    acts,
    bids,
    cards,
    contracts,
    last,
    new_game,
    play_tricks,
    plays,
    refused,
    ruleset,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "rulesets").glob("*.toml"))


# =========================================================================== cards
def test_rank_order_high_to_low_in_every_suit() -> None:
    # RULES "Cards": "Rank, high to low: A, 10, K, Q, J, 9." Each rank takes a trick led by
    # any lower one (no trump), and a higher card of another suit never takes it.
    order = ["A", "10", "K", "Q", "J", "9"]
    for suit in "SCDH":
        other = "C" if suit == "S" else "S"
        for hi, lo in itertools.combinations(order, 2):
            assert trick_winner(parse_cards(f"{lo}{suit} {hi}{suit} A{other}"), None) == 1
            assert trick_winner(parse_cards(f"{hi}{suit} {lo}{suit} A{other}"), None) == 0


def test_card_points_and_the_deck_total() -> None:
    # RULES "Cards": "Points: A 11, 10 10, K 4, Q 3, J 2, 9 0 — 120 in the deck."
    want = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
    for rank, points in want.items():
        for suit in "♠♣♦♥":
            assert card_points([parse_card(rank + suit)]) == points
    assert len(DECK) == 24 and card_points(DECK) == 120


# =========================================================================== marriages
# ALL4: F is dealt the four kings and three queens; the talon brings Q♥. F gives the two
# nines away and holds the four marriages: 40 + 60 + 80 + 100 = 280.
ALL4 = (
    {F: "KS QS KC QC KD QD KH", S: "AS 10S JS AC 10C JC AD", L: "10D JD AH 10H JH 9H 9D"},
    "QH 9S 9C",
)


@pytest.mark.parametrize(
    ("king", "suit", "value"),
    [("KS", Suit.SPADES, 40), ("KC", Suit.CLUBS, 60), ("KD", Suit.DIAMONDS, 80),
     ("KH", Suit.HEARTS, 100)],
)  # fmt: skip
def test_each_marriage_scores_its_value_and_sets_its_trump(king: str, suit: Suit, value: int):
    # RULES "Cards": "Marriage (K+Q of one suit): ♥ 100, ♦ 80, ♣ 60, ♠ 40"; §8: "He scores
    # its value at once; its suit is trump from that trick on". §5: the contract is at most
    # "120 + the marriages in his 8 cards now": all four, 120 + 280.
    g = new_game(ruleset(marriage_needs_trick=False), *ALL4)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9S to 1"), (F, "give 9C to 2"))
    assert max(contracts(g)) == 400
    acts(g, (F, "contract 100"))
    play_tricks(g, king + "*")
    assert g.marriage_points(F) == value and g.trump is suit and g.marriages == ((F, suit),)


def test_the_bidding_cap_counts_the_dealt_cards_the_contract_cap_the_eight_held() -> None:
    # RULES §2: "Nobody may bid above 120 + the marriages in his own hand" (the 7 dealt: F
    # holds K♥ without Q♥, which is in the talon): 120 + 40 + 60 + 80. §5: the contract
    # counts "the marriages in his 8 cards now": Q♥ from the talon adds ♥ 100.
    g = new_game(ruleset(), *ALL4)
    acts(g, (S, "bid 105"), (L, "pass"))
    assert g.to_act == F and max(bids(g)) == 300
    acts(g, (F, "bid 300"), (S, "pass"), (F, "give 9S to 1"), (F, "give 9C to 2"))
    assert min(contracts(g)) == 300 and max(contracts(g)) == 400


# ACE_T: F holds the four aces and K♥ Q♥ 10♥. Trick 1: 10♥ wins (not an ace); trick 2:
# K♥ declared (♥ trump); trick 3: the ace marriage with A♠.
ACE_T = (
    {F: "AS AC AD AH KH QH 10H", S: "KS QS JS 10S JH 9H 10C", L: "KC QC JC 10D KD QD JD"},
    "9S 9C 9D",
)


def test_the_ace_marriage_keeps_the_trump_a_marriage_set() -> None:
    # RULES §9: the ace marriage "scores 200 and changes no trump" (with a trump already set
    # by a marriage, that trump stays); §8: trump "until another marriage is declared" is a
    # suit marriage's doing.
    g = new_game(ruleset(), *ACE_T)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "10H 9H JC", "KH* JH 10D")
    assert g.trump is Suit.HEARTS and [t.winner for t in g.tricks] == [F, F]
    play_tricks(g, "AS*")
    assert g.marriage_points(F) == 300 and g.marriages == ((F, Suit.HEARTS), (F, None))
    assert g.trump is Suit.HEARTS
    play_tricks(g, "10S")  # S follows spades
    assert plays(g) == cards("KC QC KD QD JD 9D")  # L: no spade, no heart: any card
    play_tricks(g, "KC")
    assert g.tricks[-1].winner == F


def test_a_trick_won_in_an_earlier_deal_does_not_open_marriages() -> None:
    # RULES §8: "A marriage may be declared only by a player who has already won a trick in
    # this deal". Deal 0 (TR, dealer 2): S wins tricks 3 and 4. Deal 1 (dealer 0, so seat 1
    # is first hand): seat 1 is dealt TR's K♥ Q♥ hand and leads the first trick.
    hands1 = [TR[0][L], TR[0][F], TR[0][S]]
    g = Game.new(
        ruleset(),
        1,
        NAMES3,
        deals={
            0: ([parse_cards(TR[0][s]) for s in (F, S, L)], parse_cards(TR[1])),
            1: ([parse_cards(h) for h in hands1], parse_cards(TR[1])),
        },
        dealer=2,
    )
    acts(g, (S, "pass"), (L, "pass"), *TR_GIVES, (F, "contract 100"))
    play_tricks(g, *TR_PLAY[:7])
    assert S in {t.winner for t in g.tricks}
    play_tricks(g, TR_PLAY[7])
    assert g.deal_number == 1 and g.dealer == 0 and g.first_hand == 1
    acts(g, (2, "pass"), (0, "pass"), (1, "give JD to 2"), (1, "give QD to 0"))
    acts(g, (1, "contract 100"))
    assert Play(parse_card("KH"), declare=True) not in g.legal_actions()
    refused(g, 1, Play(parse_card("KH"), declare=True), MarriageError)


# =========================================================================== the end
def test_option_target_without_the_barrel() -> None:
    # RULES "The end": "The game ends when a player reaches 1000 (option target)"; without
    # the barrel nothing stops a score on its way there. SOLID: F makes 100 from 400.
    g = new_game(ruleset(barrel=False, target=500), *SOLID, scores=(400, 0, 0))
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "contract 100"))
    play_tricks(g, *SOLID_PLAY)
    res = g.result
    assert g.is_over and res is not None and res.reason == "target"
    assert res.scores == (500, 0, 0) and res.winner == F and res.shortfalls == (0, 500, 500)


# =========================================================================== house-rule files
def test_house_penalty_file_plays_its_three_rules() -> None:
    # rulesets/house-penalty.toml: "conceding costs the bid, only one player may sit on the
    # barrel, and a player must beat the trick when he can" (RULES §6 concede = penalty
    # with the classic halves, barrel_mode = one, §7 must_beat).
    house = load_ruleset(ROOT / "rulesets" / "house-penalty.toml")
    g = new_game(house, *SOLID)
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "concede"))
    assert last(g).outcome == "conceded" and last(g).deltas == (-100, 50, 50)
    # must_beat: over F's K♥ (the ♥ marriage) S holds A♥ and 9♥ and must play the ace.
    g = new_game(house, *TR)
    acts(g, (S, "pass"), (L, "pass"), *TR_GIVES, (F, "contract 100"))
    play_tricks(g, "AS KS JC", "KH*")
    assert plays(g) == cards("AH")
    # barrel_mode = one: F (a newcomer at 880) knocks the sitter L off (SOLID's play is
    # legal under must_beat: the followers never hold the led suit).
    g = new_game(house, *SOLID, scores=(780, 0, 880), barrel=(0, 0, 2))
    acts(g, (S, "pass"), (L, "pass"), *SOLID_GIVES, (F, "contract 100"))
    play_tricks(g, *SOLID_PLAY)
    assert g.scores == (880, 0, 760) and g.barrel == (3, 0, 0)


def test_tournament_1001_file_hides_the_talon_from_the_defenders() -> None:
    # rulesets/tournament-1001.toml: "the talon hidden from the defenders" (RULES §3 option
    # talon_visible) and a deal cap (max_deals 60); otherwise the 1001 preset.
    t = load_ruleset(ROOT / "rulesets" / "tournament-1001.toml")
    assert (t.talon_visible, t.max_deals) == (False, 60)
    assert dataclasses.replace(t, name="1001", talon_visible=True, max_deals=0) == load_ruleset(
        "1001"
    )
    g = new_game(t, *SOLID)
    acts(g, (F, "bid 40"), (S, "pass"), (L, "pass"))
    assert g.phase is Phase.PASSING
    assert [observe(g, s).talon is not None for s in (F, S, L)] == [True, False, False]


def test_classic_capped_file_stops_at_40_deals() -> None:
    # rulesets/classic-capped.toml: classic "capped at 40 deals"; RULES "The end": "at the
    # cap, the standings decide the places". Every seat passes and every declarer concedes
    # (free: the declarer 0, each opponent +50): the match never reaches the target.
    capped = load_ruleset(ROOT / "rulesets" / "classic-capped.toml")
    assert dataclasses.replace(capped, name="classic", max_deals=0) == load_ruleset("classic")
    g = Game.new(capped, 3, NAMES3)
    while not g.is_over:
        legal = g.legal_actions()
        g.apply(Concede() if Concede() in legal else legal[-1 if g.phase is Phase.BIDDING else 0])
    res = g.result
    assert res is not None and res.reason == "max_deals" and res.deals == 40
    assert len(g.deal_results) == 40 and {r.outcome for r in g.deal_results} == {"conceded"}
    assert res.places == tuple(1 + sum(o > s for o in res.scores) for s in res.scores)


# =========================================================================== arena rules
@pytest.mark.parametrize("name", ["classic", "1001", "1001-4p", *map(str, SHIPPED)])
def test_arena_rules_names_every_option_with_its_value(name: str) -> None:
    # RULES: "every point marked option must be a setting of a ruleset"; `arena rules
    # PRESET --json` is how a case writer reads one: every option, with its value.
    want = load_ruleset(name).to_dict()
    assert set(want) == {f.name for f in dataclasses.fields(Ruleset)}
    r = CliRunner().invoke(main, ["rules", name, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output) == want
    text = CliRunner().invoke(main, ["rules", name])
    assert text.exit_code == 0
    for key, value in want.items():
        shown = json.dumps(value) if not isinstance(value, str) else f'"{value}"'
        assert f"{key} = {shown}" in text.output, key


# =========================================================================== setting up a case
# docs/rules-engine.md "Setting up a rule case": one hand per seat, one integer per seat.
# Defects (audit round 3): the natural mistakes of a case writer were read silently as
# something else, or failed with a bare TypeError/AttributeError naming nothing.
def _solid_hands() -> list[tuple]:
    return [parse_cards(SOLID[0][s]) for s in (F, S, L)]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        # a dict {seat: score} was read as its keys: scores 0, 1, 2
        ({"scores": {0: 800, 1: 0, 2: 0}}, "scores must be 3 integers, one per seat"),
        ({"barrel": {0: 0, 1: 0, 2: 0}}, "barrel must be 3 integers, one per seat"),
        ({"scores": 5}, "scores must be 3 integers"),
        # a str was read as one player per letter
        ({"players": "abc"}, "players must be a sequence of names"),
        # a count of players (or None) was a bare TypeError: 'int' object is not iterable
        ({"players": 3}, "players must be a sequence of names, one per seat, got 3"),
        ({"players": None}, "players must be a sequence of names"),
        # (review) bytes were read as one player per byte: players 97, 98 and 99
        ({"players": b"abc"}, "players must be names \\(texts\\), one per seat, got 97"),
        (
            {"players": ["a", None, "c"]},
            "players must be names \\(texts\\), one per seat, got None",
        ),
    ],
)
def test_start_values_of_the_wrong_shape_are_refused(kwargs: dict, words: str) -> None:
    args = {"players": NAMES3, **kwargs}
    with pytest.raises(ValueError, match=words):
        Game.new("classic", 1, **args)


@pytest.mark.parametrize(
    ("deals", "words"),
    [
        ("seats", "deals must map a deal number to (hands, talon)"),
        ([0], "deals must map a deal number to (hands, talon)"),
        ({0: "x"}, "deal 0 must be a pair (hands, talon)"),
        ({0: (1,)}, "deal 0 must be a pair (hands, talon)"),
        ({0: ({F: "AS"}, ())}, "deal 0: hands must be a list of one hand per seat"),
        ({0: (None, ())}, "deal 0: hands must be a list of one hand per seat"),
        ({0: ([(), None, ()], ())}, "deal 0: seat 1's hand must be a sequence of cards"),
        ({0: ([(), (), ()], None)}, "deal 0: the talon must be a sequence of cards"),
    ],
)
def test_explicit_deals_of_the_wrong_shape_name_what_is_wrong(deals: object, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        Game.new("classic", 1, NAMES3, deals=deals, dealer=2)  # type: ignore[arg-type]
    # the same cards in the documented shapes are a deal
    g = Game.new("classic", 1, NAMES3, deals={0: (_solid_hands(), parse_cards(SOLID[1]))})
    assert g.hand(F) == tuple(sorted(parse_cards(SOLID[0][F])))


@pytest.mark.parametrize("seat", ["1", 1.0, True])
def test_a_seat_that_is_not_a_seat_number_is_refused(seat: object) -> None:
    # docs: "`seat=True` is not seat 1"; nor is "1" (it read "it is seat 1's turn, not seat
    # 1's") or 1.0 (it was accepted).
    g = new_game(ruleset(), *SOLID)
    assert g.to_act == S
    refused(g, seat, g.legal_actions()[-1], NotYourTurnError)  # type: ignore[arg-type]
    with pytest.raises(NotYourTurnError, match=r"seat must be a seat number \(an int\)"):
        g.apply(g.legal_actions()[-1], seat=seat)  # type: ignore[arg-type]
    g.apply(g.legal_actions()[-1], seat=S)


def test_a_seat_of_any_integer_type_is_a_seat_number() -> None:
    """Defect (review of the check above): it refused every seat that is not an ``int``,
    ``numpy.int64(1)`` too (an integer type: ``__index__``), which an author's search code
    may well hold."""

    class Int64:  # (numpy's integers are not ints, but have __index__)
        def __init__(self, v: int) -> None:
            self.v = v

        def __index__(self) -> int:
            return self.v

    g = new_game(ruleset(), *SOLID)
    other = (S + 1) % 3
    with pytest.raises(NotYourTurnError, match=rf"it is seat {S}'s turn, not seat {other}'s"):
        g.apply(g.legal_actions()[-1], seat=Int64(other))  # type: ignore[arg-type]
    g.apply(g.legal_actions()[-1], seat=Int64(S))  # type: ignore[arg-type]
    assert g.to_act != S


@pytest.mark.parametrize(
    ("cards", "trump", "words"),
    [
        ([], None, "a trick holds 1 to 3 cards, got 0"),  # was 0: "the first card"
        (["KH", "AH"], None, "not a card: 'KH'"),  # was a bare TypeError
        ([True, 0], None, "not a card: True"),  # was J♠
        ([-1, 0], None, "not a card: -1"),  # was A♥
        ([21, 23], "H", "trump must be a Suit or None, got 'H'"),  # was a bare TypeError
        ([21, 23], -2, "trump must be a Suit or None, got -2"),  # was ♥
        ([21, 23], True, "trump must be a Suit or None, got True"),  # was ♣
        ([0, 1, 2, 3], None, "a trick holds 1 to 3 cards, got 4"),
    ],
)
def test_trick_winner_refuses_what_is_not_a_trick(cards: list, trump: object, words: str) -> None:
    # docs/rules-engine.md: "trick_winner(cards, trump): the position in cards (a trick in
    # play order, possibly unfinished) ...; trump a Suit or None" — a case writer's helper.
    with pytest.raises(ValueError, match=re.escape(words)):
        trick_winner(cards, trump)  # type: ignore[arg-type]
    assert trick_winner(parse_cards("KH AH 9S"), Suit.SPADES) == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("bid abc", "an amount is a whole number, got 'abc'"),
        ("contract 1e3", "an amount is a whole number, got '1e3'"),
        ("give K♥ to bob", "a seat number is a whole number, got 'bob'"),
    ],
)
def test_parse_action_says_what_a_number_should_be(text: str, words: str) -> None:
    """Defect (human seat walkthrough): a word where a number goes was refused with int()'s
    "invalid literal for int() with base 10: 'abc'"."""
    from engine import ActionParseError, parse_action

    with pytest.raises(ActionParseError, match=re.escape(words)):
        parse_action(text)


def test_parse_action_reads_throw_in_as_two_words() -> None:
    """`throw in` as a person types it (rules audit round 3: it was refused)."""
    from engine import ThrowIn, parse_action

    assert parse_action("throw in") == parse_action("Throw-In") == ThrowIn()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("bid +-5", "an amount is a whole number, got '+-5'"),
        ("bid --5", "an amount is a whole number, got '--5'"),
        ("give K♥ to +-1", "a seat number is a whole number, got '+-1'"),
        ("bid " + "9" * 5000, "an amount is too large: 5000 digits"),
        ("give K♥ to " + "1" * 5000, "a seat number is too large: 5000 digits"),
    ],
)
def test_parse_action_says_what_a_number_should_be_with_signs_and_many_digits(
    text: str, words: str
) -> None:
    """Defect (review): two signs passed the check and reached int() ("invalid literal for
    int() with base 10: '+-5'"), and 5000 digits its digit limit ("Exceeds the limit (4300
    digits) ..."), a message of 5000 characters quoting the whole text twice."""
    from engine import ActionParseError, parse_action

    with pytest.raises(ActionParseError, match=re.escape(words)) as got:
        parse_action(text)
    assert "int()" not in str(got.value) and len(str(got.value)) < 300
    assert parse_action("bid +105") == parse_action("bid 105")
