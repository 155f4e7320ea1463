"""Rule lawyer, round 18: RULES.md read sentence by sentence against the tests of
``tests/engine/``; these are the situations no earlier case reached exactly (random play
almost never does), each written from the quoted clause with the value worked out by hand,
through the public API of ``docs/rules-engine.md`` only.

- the ace marriage declared by a defender (§9, §10), and refused after his only trick was
  won with an ace;
- a marriage card *led* away (§8: "a card that a player has led ... is gone");
- a player void in the led suit whose only trumps cannot beat the trick: he still trumps
  (§7, with and without ``must_beat``);
- the concession at 4 players with ``concede_pays = "half"`` (§6, 1001 4 players);
- "rounded half up to the ruleset's rounding unit" with units where the half falls
  exactly between two multiples (2 and 3), for halves (§6) and for takes (§10);
- the barrel: climbing back on after falling off (a fresh count), a sitter who wins in
  the deal a newcomer arrives (``barrel_mode = "one"``: the winner is not knocked off),
  a sitter's bidding (no limit but the cap), and with ``barrel_penalty = 0`` a player
  left at 880 off the barrel (the next deal that leaves him there seats him again);
- every option and every value of it set through a TOML file and read back resolved by
  ``arena rules FILE --json``, and a bad value of every option refused, naming the key;
  the option table of ``docs/rules-engine.md`` states each preset's value.

Seating as in ``test_rule_cases_external.py``: 3 players, dealer 2, so first hand F = 0,
second hand S = 1, last hand L = 2; with 4 players the dealer is seat 3 (dealt no cards).
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import floor
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from engine import (
    PRESETS,
    Concede,
    Game,
    Give,
    MarriageError,
    Phase,
    Play,
    PlayError,
    Ruleset,
    load_ruleset,
    parse_card,
    parse_cards,
)
from tests.engine.test_rule_cases_external import (
    NAMES3,
    SOLID,
    SPLIT,
    SPLIT_GIVES,
    SPLIT_PLAY,
    F,
    L,
    S,
    acts,
    bids,
    cards,
    last,
    new_game,
    play_tricks,
    plays,
    refused,
    ruleset,
)


def follow(g: Game, lead: str, *, declare: bool = False) -> None:
    """The seat to act leads ``lead``; the two others play their first legal card (the
    tests below only lead cards that win whatever the others play)."""
    g.apply(Play(parse_card(lead), declare=declare), seat=g.to_act)
    for _ in range(2):
        g.apply(next(a for a in g.legal_actions() if isinstance(a, Play)), seat=g.to_act)


def concede(g: Game) -> None:
    """The declarer gives his first two legal cards and concedes."""
    d = g.declarer
    for _ in range(2):
        g.apply(next(a for a in g.legal_actions() if isinstance(a, Give)), seat=d)
    g.apply(Concede(), seat=d)


def finish(g: Game) -> None:
    """Every seat plays its first legal card, declaring nothing, to the end of the deal."""
    number = g.deal_number
    while not g.is_over and g.deal_number == number:
        plain = [a for a in g.legal_actions() if isinstance(a, Play) and not a.declare]
        g.apply(plain[0], seat=g.to_act)


def half_up(num: int, den: int, unit: int) -> int:
    """``num / den`` rounded half up to a multiple of ``unit``, worked out with fractions."""
    return floor(Fraction(num, den) / unit + Fraction(1, 2)) * unit


# =========================================================================== §9 ace marriage
# S holds the four aces. F declares at 100 (S, L pass) and leads 9♦; S takes the trick with
# 10♦ (or A♦) and L follows with J♦.
ACES_DEFENDER = (
    {F: "9D KS QS JS 9S 10C KC", S: "AS AC AD AH 10D 9C 9H", L: "JD QD KD 10S QC JC 10H"},
    "KH QH JH",
)


@pytest.mark.parametrize("rounding", [1, 5])
def test_a_defender_declares_the_ace_marriage_after_a_trick_won_with_a_ten(rounding: int) -> None:
    # §9: "A player holding all four aces may declare it by leading an ace, once he has won
    # a trick with a card other than an ace. It scores 200 and changes no trump." §10: "Each
    # player's take = card points of the tricks he won + his declared marriages. ... Each
    # opponent: + his take (rounded to option rounding)".
    g = new_game(ruleset(rounding=rounding), *ACES_DEFENDER)
    acts(g, (S, "pass"), (L, "pass"), (F, "give JH to 1"), (F, "give KC to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "9D 10D JD")  # S wins with a ten
    assert g.to_act == S
    for ace in ("AS", "AC", "AD", "AH"):
        assert Play(parse_card(ace), declare=True) in g.legal_actions()
    play_tricks(g, "AS*")
    assert g.marriages == ((S, None),) and g.trump is None and g.marriage_points(S) == 200
    assert g.scores == (0, 0, 0)  # "scores its value at once": in his take, not yet the match's
    finish(g)
    r = last(g)
    assert r.marriage_points == (0, 200, 0)
    assert r.takes[S] == r.card_points[S] + 200
    assert r.deltas[S] == half_up(r.card_points[S] + 200, 1, rounding)


def test_a_defender_whose_only_trick_was_won_with_an_ace_cannot_declare_the_aces() -> None:
    # §9: "once he has won a trick with a card other than an ace".
    g = new_game(ruleset(), *ACES_DEFENDER)
    acts(g, (S, "pass"), (L, "pass"), (F, "give JH to 1"), (F, "give KC to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "9D AD JD")  # S wins with the ace of diamonds: three aces left anyway
    assert not any(isinstance(a, Play) and a.declare for a in g.legal_actions())
    refused(g, S, Play(parse_card("AS"), declare=True), MarriageError)


# =========================================================================== §8 marriages
# F holds A♠ and the ♥ marriage with A♥ 10♥: he takes the first trick with A♠ and the second
# with Q♥ (S and L hold only J♥ and 9♥).
LED_AWAY = (
    {F: "AS AH 10H KH QH AC 10C", S: "10S KS QS JH KC QC JC", L: "JS 9S 9H AD 10D KD QD"},
    "JD 9D 9C",
)


def test_a_marriage_card_led_away_leaves_no_marriage_to_declare() -> None:
    # §8: "A card that a player has led or passed away is gone: a marriage needs both cards
    # in hand at the lead." The Q♥ could have been declared; led plainly, it is gone.
    g = new_game(ruleset(), *LED_AWAY)
    acts(g, (S, "pass"), (L, "pass"), (F, "give 9C to 1"), (F, "give 9D to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "AS 10S JS")
    assert Play(parse_card("QH"), declare=True) in g.legal_actions()
    play_tricks(g, "QH JH 9H")
    assert g.to_act == F and g.trump is None
    assert Play(parse_card("KH"), declare=True) not in g.legal_actions()
    refused(g, F, Play(parse_card("KH"), declare=True), MarriageError)
    assert Play(parse_card("KH")) in g.legal_actions()


# =========================================================================== §7 must trump
# F declares ♥ on the second trick; S takes it with A♥ and leads A♦: L, void in ♦, trumps
# with 10♥; F, void in ♦ too, holds only Q♥ of the trumps (lower than 10♥) and clubs.
TRUMP_LOW = (
    {F: "AC KH QH 10C KC QC JC", S: "AH AD 10D KD QD JD 9D", L: "10H JH 9H AS 10S KS QS"},
    "JS 9S 9C",
)


@pytest.mark.parametrize("must_beat", [False, True])
def test_a_void_player_whose_trumps_cannot_beat_still_must_trump(must_beat: bool) -> None:
    # §7: "without it he must play a trump if a trump is set and he has one ... (option
    # must_beat ...: among the cards he is obliged to play he must choose one that beats the
    # trick if he can": the obliged cards are his trumps; none beats 10♥, so any of them,
    # never a discard.
    g = new_game(ruleset(must_beat=must_beat), *TRUMP_LOW)
    acts(g, (S, "pass"), (L, "pass"), (F, "give JS to 1"), (F, "give 9S to 2"))
    acts(g, (F, "contract 100"))
    play_tricks(g, "AC 9D QS", "KH* AH 9H", "AD")
    assert g.trump is not None and g.to_act == L
    assert plays(g) == cards("10H JH")  # both trumps beat a diamond
    play_tricks(g, "10H")
    assert plays(g) == cards("QH")
    refused(g, F, Play(parse_card("JC")), PlayError)
    play_tricks(g, "QH")
    assert g.tricks[-1].winner == L


# =========================================================================== §6 concession
# 4 players, dealer 3: F bids 65 and concedes. The talon K♠ J♣ 9♦ is worth 4 + 2 + 0 = 6.
FOUR = (
    {F: "AS 10S QS 9S AC 10C KC", S: "AD 10D KD QD JD JS QC", L: "AH 10H KH QH JH 9H 9C"},
    "KS JC 9D",
)


@pytest.mark.parametrize(
    ("mode", "rounding", "deltas"),
    [
        # 65 / 2 = 32.5: to a multiple of 5 it is 6.5 fives, half up 7: 35; unrounded 33.
        ("free", 5, (0, 35, 35, 6)),
        ("penalty", 5, (-65, 35, 35, 6)),
        ("free", 1, (0, 33, 33, 6)),
    ],
)
def test_4p_concession_pays_halves_to_the_two_dealt_in_and_the_dealer_his_talon(
    mode: str, rounding: int, deltas: tuple[int, ...]
) -> None:
    # §6: "the declarer may concede at the winning bid (option concede: free — he scores 0;
    # penalty — he scores −bid; off). Each opponent then scores half the bid, rounded half up
    # to the ruleset's rounding unit (option concede_pays: half ...)". 1001, 4 players: "the
    # dealer is dealt no cards and sits out the deal. Every deal, whatever happens at the
    # table, he scores the talon: ... its card points (not rounded)".
    rules = ruleset("1001-4p", concede=mode, concede_pays="half", rounding=rounding)
    g = new_game(rules, *FOUR)
    acts(g, (F, "bid 65"), (S, "pass"), (L, "pass"), (F, "give KS to 1"), (F, "give JC to 2"))
    acts(g, (F, "concede"))
    r = last(g)
    assert r.outcome == "conceded" and r.contract is None and r.bid == 65
    assert r.deltas == deltas and g.scores == deltas


# =========================================================================== rounding
@pytest.mark.parametrize(("unit", "half"), [(1, 53), (2, 52), (3, 54), (5, 55), (10, 50)])
def test_concession_halves_round_half_up_to_any_unit(unit: int, half: int) -> None:
    # §6: "half the bid, rounded half up to the ruleset's rounding unit": 105 / 2 = 52.5 is
    # 26.25 twos (26: 52), 17.5 threes (exactly half: up, 18: 54), 5.25 tens (5: 50).
    assert half == half_up(105, 2, unit)
    g = Game.new(ruleset(rounding=unit), 1, NAMES3, dealer=2)
    acts(g, (S, "bid 105"), (L, "pass"), (F, "pass"))
    assert g.declarer == S and g.bid == 105
    concede(g)
    assert last(g).deltas == (half, 0, half)


@pytest.mark.parametrize(("unit", "l_delta"), [(1, 171), (2, 172), (3, 171), (5, 170), (10, 170)])
def test_an_opponents_take_rounds_half_up_to_any_unit_the_declarers_never(
    unit: int, l_delta: int
) -> None:
    # §10: "Declarer: take ≥ contract → +contract (never more); else −contract. Each
    # opponent: + his take (rounded to option rounding)". L takes 71 + ♥ 100 = 171: 85.5
    # twos (exactly half: up, 86: 172), 57 threes, 34.2 fives, 17.1 tens. F takes 89 < 100.
    assert l_delta == half_up(171, 1, unit)
    g = new_game(ruleset(rounding=unit), *SPLIT)
    acts(g, (S, "pass"), (L, "pass"), *SPLIT_GIVES, (F, "contract 100"))
    play_tricks(g, *SPLIT_PLAY)
    r = last(g)
    assert r.takes == (89, 0, 171) and r.outcome == "failed"
    assert r.deltas == (-100, 0, l_delta)


# =========================================================================== the barrel
# Seat 0 holds every spade and A♥; the talon brings A♣ 10♣ A♦; he gives 10♣ and A♦ away and
# takes every trick: 120 card points + ♠ 40.
SWEEP = {
    0: "AS 10S KS QS JS 9S AH",
    1: "10H KH QH JH 9H KC QC",
    2: "JC 9C 10D KD QD JD 9D",
}
SWEEP_TALON = "AC 10C AD"


def test_a_player_who_fell_off_the_barrel_climbs_back_on_for_a_fresh_three_deals() -> None:
    # Barrel: "Three deals on the barrel without a win: −120 ... and off"; "A player whose
    # score would reach 880 or more ... is set to exactly 880 and is 'on the barrel' for the
    # next 3 deals": falling off does not keep him from climbing on again, with 3 deals.
    hands = [parse_cards(SWEEP[s]) for s in range(3)]
    g = Game.new(
        ruleset(), 1, NAMES3, dealer=2, scores=(880, 0, 0), barrel=(1, 0, 0),
        deals={1: (hands, parse_cards(SWEEP_TALON))},
    )  # fmt: skip
    # Deal 0: seat 0, first hand on his last barrel deal, concedes the committed 100 (free).
    acts(g, (1, "pass"), (2, "pass"))
    concede(g)
    r = last(g)
    assert r.deltas == (-120, 50, 50) and r.barrel == (0, 0, 0)
    assert r.events == ("seat 0 sat 3 deals on the barrel: -120",)
    # Deal 1 (dealer 0: seat 1 first hand, committed): seat 0 bids 120 and sweeps.
    assert g.dealer == 0
    acts(g, (2, "pass"), (0, "bid 120"), (1, "pass"))
    acts(g, (0, "give 10C to 1"), (0, "give AD to 2"), (0, "contract 120"))
    follow(g, "AS")
    follow(g, "10S")
    follow(g, "KS", declare=True)
    for lead in ("QS", "JS", "9S", "AH", "AC"):
        follow(g, lead)
    r = last(g)
    assert r.takes == (160, 0, 0) and r.outcome == "made"
    assert g.scores == (880, 50, 50) and g.barrel == (3, 0, 0)
    assert r.events == ("seat 0 gets on the barrel",)
    # Deal 2 counts the first of the fresh three.
    acts(g, (0, "pass"), (1, "pass"))
    concede(g)
    assert g.barrel == (2, 0, 0) and g.scores[0] == 880


# Seat 0 (sitter) holds every spade and K♥; S holds A♥ and takes the last trick: K♥ A♥ A♦,
# 26 card points; seat 0 takes 94 + ♠ 40 = 134.
WIN_AND_NEWCOMER = (
    {F: "AS 10S KS QS JS 9S KH", S: "AH 10H QH JH 9H KC QC", L: "JC 9C 10D KD QD JD 9D"},
    "AC 10C AD",
)
WIN_AND_NEWCOMER_PLAY = (
    "AS QC 9C",
    "10S KC JC",
    "KS* 10C 9D",
    "QS 9H JD",
    "JS JH QD",
    "9S QH KD",
    "AC 10H 10D",
    "KH AH AD",
)


@pytest.mark.parametrize(
    ("mode", "contract", "scores", "barrel", "events"),
    [
        # The sitter wins: the game is over, a newcomer of the same deal knocks nobody off.
        ("one", 120, (1000, 880, 0), (0, 3, 0),
         ("seat 0 wins from the barrel", "seat 1 gets on the barrel")),
        ("many", 120, (1000, 880, 0), (0, 3, 0),
         ("seat 0 wins from the barrel", "seat 1 gets on the barrel")),
        # Below 120 the sitter scores nothing and sits on: the newcomer knocks him off (one).
        ("one", 115, (760, 880, 0), (0, 3, 0),
         ("seat 0 is knocked off the barrel: -120", "seat 1 gets on the barrel")),
        ("many", 115, (880, 880, 0), (1, 3, 0), ("seat 1 gets on the barrel",)),
    ],
)  # fmt: skip
def test_a_sitter_who_wins_in_the_deal_a_newcomer_arrives_is_not_knocked_off(
    mode: str,
    contract: int,
    scores: tuple[int, ...],
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    # Barrel: "He wins the game (score 1000) by winning the bidding and making a contract of
    # at least 120; a made contract below 120 scores nothing." barrel_mode "one": "a newcomer
    # knocks the sitter off, −120". S: 860 + 26 reaches 880.
    g = new_game(
        ruleset(barrel_mode=mode), *WIN_AND_NEWCOMER, scores=(880, 860, 0), barrel=(2, 0, 0)
    )
    acts(g, (S, "pass"), (L, "pass"), (F, "give 10C to 1"), (F, "give AD to 2"))
    acts(g, (F, f"contract {contract}"))
    play_tricks(g, *WIN_AND_NEWCOMER_PLAY)
    r = last(g)
    assert r.takes == (134, 26, 0) and r.outcome == "made"
    assert g.scores == scores and r.barrel == barrel and r.events == events
    assert g.is_over is (contract == 120)
    if g.is_over:
        res = g.result
        assert res is not None and res.winner == F and res.places == (1, 2, 3)
        assert res.shortfalls == (0, 120, 1000) and res.reason == "target"


@pytest.mark.parametrize("on_barrel", [False, True])
def test_a_sitter_bids_like_anyone_else(on_barrel: bool) -> None:
    # §2: "Nobody may bid above 120 + the marriages in his own hand"; the barrel rules set
    # no other bidding limit: a sitter may bid below 120 (he wins only with a contract of
    # at least 120, which he may name after the talon) and not above his cap.
    scores, barrel = ((0, 880, 0), (0, 3, 0)) if on_barrel else ((0, 0, 0), (0, 0, 0))
    g = new_game(ruleset(), *SOLID, scores=scores, barrel=barrel)
    assert g.to_act == S and bids(g) == list(range(105, 185, 5))  # S holds K♣ Q♣: 180
    acts(g, (S, "bid 105"), (L, "pass"), (F, "pass"))
    assert g.declarer == S and g.bid == 105 and g.phase is Phase.PASSING


@pytest.mark.parametrize(
    ("second_deal", "score", "barrel", "events"),
    [
        # Seat 1 concedes: seat 0 scores nothing and stays at 880: on again.
        (True, 880, (3, 0, 0), ("seat 0 gets on the barrel",)),
        # Seat 0 bids 105 and concedes (penalty): his score falls below 880: he stays off.
        (False, 775, (0, 0, 0), ()),
    ],
)
def test_with_no_barrel_penalty_a_player_left_at_880_gets_on_again_after_his_next_deal(
    second_deal: bool,
    score: int,
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    # Barrel: "Three deals on the barrel without a win: −120 (option barrel_penalty) and
    # off"; "A player whose score would reach 880 or more ... is set to exactly 880 and is
    # on the barrel". With barrel_penalty = 0 the sitter falls off at 880; the 1000 source
    # reads "после очередного розыгрыша достигает 880 или более" (after a deal he has 880
    # or more): a deal that leaves him at 880 seats him again, one that lowers him does not.
    rules = ruleset(barrel_penalty=0, concede="penalty", concede_pays="none")
    g = Game.new(rules, 1, NAMES3, dealer=2, scores=(880, 0, 0), barrel=(1, 0, 0))
    # Deal 0, seat 0's last on the barrel: seat 1 wins the bidding at 105 and concedes.
    acts(g, (1, "bid 105"), (2, "pass"), (0, "pass"))
    concede(g)
    first = last(g)
    assert first.scores == (880, -105, 0) and first.barrel == (0, 0, 0)
    assert first.events == ("seat 0 sat 3 deals on the barrel (no penalty)",)
    # Deal 1: dealer 0, first hand seat 1 (committed), then seat 2, then seat 0.
    acts(g, (2, "pass"))
    if second_deal:
        acts(g, (0, "pass"))  # seat 1 plays the committed 100 and concedes
    else:
        acts(g, (0, "bid 105"), (1, "pass"))  # seat 0 concedes 105
    concede(g)
    r = last(g)
    assert (r.scores[0], r.barrel, r.events) == (score, barrel, events)


def test_with_no_barrel_penalty_a_player_left_at_880_knocks_the_sitter_off_under_one() -> None:
    # As above, under barrel_mode "one": "a newcomer knocks the sitter off". Seat 0 starts
    # at 880 off the barrel (a start position only barrel_penalty = 0 makes reachable),
    # concedes freely and scores nothing: he is at 880 after the deal, a newcomer.
    rules = ruleset(barrel_penalty=0, barrel_mode="one", concede_pays="none")
    g = Game.new(rules, 1, NAMES3, dealer=2, scores=(880, 880, 0), barrel=(0, 3, 0))
    acts(g, (1, "pass"), (2, "pass"))
    concede(g)
    r = last(g)
    assert r.scores == (880, 880, 0) and r.barrel == (3, 0, 0)
    assert r.events == (
        "seat 1 is knocked off the barrel (no penalty)",
        "seat 0 gets on the barrel",
    )


# =========================================================================== options in TOML
# Every option of RULES.md with every value of a choice, both of a flag and a non-default
# number, as a case writer sets it: (preset, option, value, other options it needs).
OPTION_VALUES: list[tuple[str, str, object, dict[str, object]]] = [
    ("classic", "name", "house rules", {}),
    ("1001", "players", 4, {}),
    ("1001-4p", "players", 3, {}),
    ("classic", "target", 1500, {}),
    ("classic", "opening_bid", 60, {}),
    ("classic", "opening_bid", 120, {}),
    ("classic", "bid_step", 10, {}),
    ("classic", "bid_step", 20, {"opening_bid": 100}),
    ("classic", "rounding", 5, {}),
    ("classic", "rounding", 10, {}),
    ("1001", "rounding", 1, {}),
    ("1001", "barrel", True, {}),
    ("classic", "barrel", False, {}),
    ("classic", "barrel_at", 700, {}),
    ("classic", "barrel_deals", 1, {}),
    ("classic", "barrel_deals", 5, {}),
    ("classic", "barrel_penalty", 0, {}),
    ("classic", "barrel_penalty", 200, {}),
    ("classic", "throw_in_bonus", 0, {"first_hand_commits": False, "all_pass": "last_hand"}),
    ("1001", "throw_in_bonus", 70, {}),
    ("1001-4p", "nines_talon_value", 0, {}),
    ("1001-4p", "nines_talon_value", 150, {}),
    ("classic", "max_deals", 25, {}),
    ("classic", "max_deals", 0, {}),
    *(
        (base, key, value, {})
        for key in (
            "first_hand_commits", "ace_marriage_counts_for_bid", "talon_visible", "must_beat",
            "marriage_needs_trick", "ace_marriage", "ask_forced",
        )
        for base in ("classic", "1001")
        for value in (True, False)
    ),
    *(("classic", "concede", v, {}) for v in ("free", "penalty", "off")),
    *(("1001", "concede", v, {}) for v in ("free", "penalty", "off")),
    *(("classic", "concede_pays", v, {}) for v in ("half", "none")),
    *(("1001", "concede_pays", v, {}) for v in ("half", "none")),
    *(("classic", "barrel_mode", v, {}) for v in ("many", "one")),
    *(("classic", "all_pass", v, {}) for v in ("first_hand", "last_hand")),
    *(("1001", "all_pass", v, {}) for v in ("first_hand", "last_hand")),
]  # fmt: skip


def _toml(value: object) -> str:
    return json.dumps(value)  # true/false, numbers and "strings" read the same in TOML


def _write(tmp_path: Path, lines: dict[str, object]) -> Path:
    path = tmp_path / "house.toml"
    path.write_text("".join(f"{k} = {_toml(v)}\n" for k, v in lines.items()), encoding="utf-8")
    return path


def test_the_option_list_covers_every_field_of_a_ruleset() -> None:
    fields = set(Ruleset().to_dict())
    assert {key for _, key, _, _ in OPTION_VALUES} == fields
    assert {key for key, _ in BAD_VALUES} == fields


@pytest.mark.parametrize(("base", "key", "value", "needs"), OPTION_VALUES)
def test_every_option_value_from_a_toml_file_is_what_arena_rules_resolves(
    tmp_path: Path, base: str, key: str, value: object, needs: dict[str, object]
) -> None:
    # RULES.md: "every point marked option must be a setting of a ruleset, and a ruleset is
    # data (a named preset, or a TOML file)"; `arena rules FILE` prints it resolved.
    lines: dict[str, object] = {"preset": base, "name": "t", **needs, key: value}
    path = _write(tmp_path, lines)
    out = CliRunner().invoke(main, ["rules", str(path), "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got[key] == value
    # Every other option is the preset's (a file changes only what it names).
    want = {**load_ruleset(base).to_dict(), **{k: v for k, v in lines.items() if k != "preset"}}
    assert got == want


BAD_VALUES: list[tuple[str, object]] = [
    ("name", ""),
    ("name", 5),
    ("name", "a\tb"),
    ("players", 2),
    ("players", 5),
    ("players", "3"),
    ("target", 0),
    ("target", True),
    ("opening_bid", 0),
    ("opening_bid", 103),
    ("opening_bid", 125),
    ("bid_step", 0),
    ("bid_step", 12),
    ("bid_step", 5.0),
    ("first_hand_commits", 1),
    ("ace_marriage_counts_for_bid", "yes"),
    ("talon_visible", 0),
    ("concede", "none"),
    ("concede", True),
    ("concede_pays", "full"),
    ("must_beat", "true"),
    ("marriage_needs_trick", 1),
    ("ace_marriage", []),
    ("rounding", 0),
    ("rounding", -5),
    ("barrel", "on"),
    ("barrel_at", 0),
    ("barrel_at", 1000),
    ("barrel_deals", 0),
    ("barrel_penalty", -1),
    ("barrel_mode", "two"),
    ("all_pass", "dealer"),
    ("throw_in_bonus", -50),
    ("nines_talon_value", -1),
    ("max_deals", -1),
    ("max_deals", 1_000_001),
    ("ask_forced", "no"),
]


@pytest.mark.parametrize(("key", "value"), BAD_VALUES)
def test_a_bad_value_of_every_option_is_refused_naming_the_key(
    tmp_path: Path, key: str, value: object
) -> None:
    # docs/rules-engine.md: "unknown keys, wrong types and bad values raise RulesetError,
    # whose key names the option"; `arena rules` prints it (exit code 2).
    path = _write(tmp_path, {"preset": "classic", "name": "t", key: value})
    out = CliRunner().invoke(main, ["rules", str(path)])
    assert out.exit_code == 2, out.output
    assert f"{path}: {key}: " in out.output, out.output


def test_the_docs_option_table_states_every_option_with_each_presets_value() -> None:
    # docs/rules-engine.md "Rulesets": the table a case writer reads the presets from.
    text = (Path(__file__).parents[2] / "docs" / "rules-engine.md").read_text(encoding="utf-8")
    table: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0].strip("`").isidentifier():  # (an option; not the examples' tables)
                table[cells[0].strip("`")] = cells[1:4]
    assert set(table) == set(Ruleset().to_dict())
    for column, name in enumerate(("classic", "1001", "1001-4p")):
        for key, value in PRESETS[name].to_dict().items():
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            assert table[key][column] == shown, (name, key)
