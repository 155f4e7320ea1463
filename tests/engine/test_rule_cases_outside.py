"""Rule cases of an outside checker: written from RULES.md and docs/rules-engine.md only.

Every expectation below was worked out by hand from the rule book (the comment on each
case names the rule), before the engine was run; the engine's own code was read only
afterwards, to explain a disagreement. Only names from ``engine`` (``engine.__all__``)
and the set-up that docs/rules-engine.md documents ("Setting up a rule case": ``deals=``,
``dealer=``, ``scores=``, ``barrel=``) are used.

Seating: 3 players, dealer 2, so seat 0 is first hand, 1 second hand, 2 last hand; with
4 players the dealer is seat 3 (dealt no cards) and 0, 1, 2 play.

The deals (talon last):

* ``D1``: 0 = A♠ 10♠ K♠ Q♠ J♠ 9♠ A♣ (♠ marriage), 1 = K♣ Q♣ J♣ 9♣ A♦ 10♦ K♦ (♣),
  2 = Q♦ J♦ A♥ 10♥ K♥ Q♥ J♥ (♥), talon 10♣ 9♥ 9♦. Seat 0 declares at 100, gives 10♣
  to 1 and 9♥ to 2 and plays ``D1_TRICKS``: he takes 107 card points + 40 (♠ marriage)
  = 147, seat 1 takes 13 (the last trick: 9♦ A♦ J♦), seat 2 nothing.
* ``D2``: 0 as in D1, 1 = K♣ Q♣ J♣ 9♣ Q♦ J♦ K♦, 2 = A♦ 10♦ A♥ 10♥ K♥ Q♥ J♥, same
  talon and gives. Seat 2 wins the first trick (9♦ J♦ A♦), declares K♥ Q♥ as a
  defender and takes every trick: 120 + 100, seat 0 nothing.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from engine import (
    BidError,
    CardNotHeldError,
    ContractError,
    Game,
    GiveError,
    IllegalActionError,
    MarriageError,
    NotYourTurnError,
    Phase,
    Play,
    PlayError,
    Suit,
    ThrowInError,
    WrongPhaseError,
    load_ruleset,
    observe,
    parse_action,
    parse_card,
    parse_cards,
    replay,
)

P3 = ["ann", "bob", "cid"]
P4 = ["ann", "bob", "cid", "dan"]

DEALS: dict[str, tuple[list[str], str]] = {
    "D1": (
        ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♣", "K♣ Q♣ J♣ 9♣ A♦ 10♦ K♦", "Q♦ J♦ A♥ 10♥ K♥ Q♥ J♥"],
        "10♣ 9♥ 9♦",
    ),
    "D2": (
        ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♣", "K♣ Q♣ J♣ 9♣ Q♦ J♦ K♦", "A♦ 10♦ A♥ 10♥ K♥ Q♥ J♥"],
        "10♣ 9♥ 9♦",
    ),
    # D1 with 9♣ and 10♣ swapped: the talon is three nines (1001, 4 players).
    "N9": (
        ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♣", "K♣ Q♣ J♣ 10♣ A♦ 10♦ K♦", "Q♦ J♦ A♥ 10♥ K♥ Q♥ J♥"],
        "9♣ 9♥ 9♦",
    ),
    # Four aces with seat 0 (+ K♠ Q♠), for the ace marriage.
    "ACES": (
        ["A♠ A♣ A♦ A♥ 10♠ K♠ Q♠", "J♠ 10♣ K♣ Q♣ J♣ 10♦ K♦", "Q♦ J♦ 10♥ K♥ Q♥ J♥ 9♥"],
        "9♠ 9♣ 9♦",
    ),
    # For following / trumping / must_beat: seat 0 holds K♥ Q♥ and passes A♦ away.
    "PLAY": (
        ["K♥ Q♥ A♠ K♠ 9♠ A♣ J♣", "9♥ 10♠ J♠ Q♠ 10♦ K♦ Q♦", "A♥ 10♥ J♥ J♦ K♣ Q♣ 10♣"],
        "9♣ 9♦ A♦",
    ),
}

# Seat 0 declares in D1 / D2 after these gives.
GIVES_0 = ["0 give 10♣ to 1", "0 give 9♥ to 2"]
D1_TRICKS = [
    "A♠ 9♣ J♥",
    "K♠! J♣ 9♥",  # ! = declare (the ♠ marriage, +40, trump ♠)
    "Q♠ Q♣ Q♥",
    "10♠ K♣ K♥",
    "J♠ 10♣ 10♥",
    "9♠ K♦ A♥",
    "A♣ 10♦ Q♦",
    "9♦ A♦ J♦",  # seat 1 wins: 11 + 2 = 13
]
D2_TRICKS = [
    "9♦ J♦ A♦",  # seat 2 wins and leads from now on
    "K♥! 9♠ 9♣",  # a defender's marriage: +100, trump ♥
    "Q♥ J♠ J♣",
    "A♥ Q♠ Q♣",
    "10♥ K♠ K♣",
    "J♥ 10♠ Q♦",
    "9♥ A♠ K♦",
    "10♦ A♣ 10♣",
]
# Seat 0 wins the bidding at the committed 100 (classic): both others pass.
AUCTION_0 = ["1 pass", "2 pass"]
# Seat 1 wins at an odd bid, 105 (classic: 0 is committed to 100 and passes after).
AUCTION_1_105 = ["1 bid 105", "2 pass", "0 pass"]
GIVES_1 = ["1 give 9♣ to 2", "1 give J♣ to 0"]


def rules(preset: str = "classic", **options: Any) -> Any:
    return dataclasses.replace(load_ruleset(preset), **options)


def new_game(
    ruleset: Any,
    deal: str,
    *,
    scores: Sequence[int] | None = None,
    barrel: Sequence[int] | None = None,
    players: int = 3,
) -> Game:
    hands_text, talon = DEALS[deal]
    hands: list[Sequence[Any]] = [parse_cards(h) for h in hands_text]
    if players == 4:
        hands.append(())  # the dealer's: he sits out
    return Game.new(
        ruleset,
        1,
        P3 if players == 3 else P4,
        deals={0: (hands, parse_cards(talon))},
        scores=scores,
        barrel=barrel,
        dealer=players - 1,
    )


def run(game: Game, script: Sequence[str]) -> None:
    """``"S action"`` applies an action for seat S; ``"trick: c1 c2 c3"`` plays one trick
    in turn order (``!`` after a card declares); ``"lead: c1 c2 ..."`` has the leader lead
    each card in turn and the others play their first legal card (for deals where the
    leader wins every trick whatever the others play)."""
    for step in script:
        if step.startswith("trick:"):
            for card in step.removeprefix("trick:").split():
                game.apply(Play(parse_card(card.rstrip("!")), card.endswith("!")), seat=game.to_act)
        elif step.startswith("lead:"):
            for card in step.removeprefix("lead:").split():
                leader = game.to_act
                game.apply(Play(parse_card(card.rstrip("!")), card.endswith("!")), seat=leader)
                for _ in range(len(game.active_seats) - 1):
                    game.apply(game.legal_actions()[0], seat=game.to_act)
        else:
            seat, text = step.split(" ", 1)
            game.apply(parse_action(text), seat=int(seat))


def tricks(rows: Sequence[str]) -> list[str]:
    return ["trick: " + row for row in rows]


D1_PLAY = tricks(D1_TRICKS)
D2_PLAY = tricks(D2_TRICKS)


# --- Whole deals: one table (what the other rule-case files do not already cover) ------
#
# (id, ruleset, deal, start scores, start barrel, script, expected DealResult fields)

CASES: list[tuple[Any, ...]] = [
    # §10: a made contract scores the contract (never more: 147 ≥ 100 scores 100), each
    # defender his take.
    ("d1-made-100", rules(), "D1", None, None,
     [*AUCTION_0, *GIVES_0, "0 contract 100", *D1_PLAY],
     {"deltas": (100, 13, 0), "outcome": "made", "takes": (147, 13, 0)}),
    # §8 + §10: "Each player's take = card points of the tricks he won + his declared
    # marriages": a defender's marriage counts in his take (120 + 100); the declarer fails.
    ("d2-defender-marriage", rules(), "D2", None, None,
     [*AUCTION_0, *GIVES_0, "0 contract 100", *D2_PLAY],
     {"deltas": (-100, 0, 220), "takes": (0, 0, 220), "outcome": "failed"}),
    # §6 concede_pays none, with concede penalty and with free, at an odd bid (105).
    ("concede-penalty-none-105", rules(concede="penalty", concede_pays="none"), "D1",
     None, None, [*AUCTION_1_105, *GIVES_1, "1 concede"],
     {"deltas": (0, -105, 0), "outcome": "conceded", "contract": None, "bid": 105}),
    ("concede-free-none-105", rules(concede_pays="none"), "D1", None, None,
     [*AUCTION_1_105, *GIVES_1, "1 concede"],
     {"deltas": (0, 0, 0), "outcome": "conceded"}),
    # Barrel options: barrel_at 500 (490 + 13 is set to 500), barrel_deals 2 on reaching.
    ("barrel-at-500", rules(barrel_at=500), "D1", (0, 490, 0), None,
     [*AUCTION_0, *GIVES_0, "0 contract 100", *D1_PLAY],
     {"scores": (100, 500, 0), "barrel": (0, 3, 0)}),
    ("barrel-deals-2-reach", rules(barrel_deals=2), "D1", (0, 870, 0), None,
     [*AUCTION_0, *GIVES_0, "0 contract 100", *D1_PLAY],
     {"scores": (100, 880, 0), "barrel": (0, 2, 0), "events": ["seat 1 gets on the barrel"]}),
    # 1001, 4 players: the throw-in pays the ruleset's bonus to the two others dealt in,
    # not to the dealer, who scores the talon (10♣ 9♥ 9♦ = 10) ...
    ("1001-4p-throw-in-bonus-option", rules("1001-4p", throw_in_bonus=30), "D1", None,
     None, ["0 pass", "1 pass", "2 give 10♣ to 0", "2 give 9♦ to 1", "2 throw-in"],
     {"deltas": (30, 30, 0, 10), "outcome": "thrown_in", "declarer": 2, "players": 4}),
    # ... or nines_talon_value for three nines.
    ("1001-4p-nines-value-option", rules("1001-4p", nines_talon_value=70), "N9", None,
     None, ["0 pass", "1 pass", "2 give 9♣ to 0", "2 give 9♦ to 1", "2 throw-in"],
     {"deltas": (50, 50, 0, 70), "players": 4}),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_deal_case(case: tuple[Any, ...]) -> None:
    _id, ruleset, deal, scores, barrel, script, want = case
    game = new_game(ruleset, deal, scores=scores, barrel=barrel, players=want.pop("players", 3))
    run(game, script)
    assert not game.is_over
    res = game.deal_results[0]
    if "scores" in want:
        assert game.scores == want["scores"]
    if "events" in want:
        want["events"] = tuple(want["events"])
    for key, value in want.items():
        assert getattr(res, key) == value, key


# --- Bidding caps (§2) -------------------------------------------------------------------


def max_bid(game: Game) -> int:
    return max(int(str(a).split()[1]) for a in game.legal_actions() if str(a).startswith("bid"))


@pytest.mark.parametrize(
    ("options", "cap"),
    [
        ({}, 360),  # 120 + 200 (ace marriage) + 40 (♠ marriage)
        ({"ace_marriage_counts_for_bid": False}, 160),
        ({"ace_marriage": False}, 160),  # no ace marriage at all: nothing to count
        ({"ace_marriage": False, "ace_marriage_counts_for_bid": True}, 160),
    ],
)
def test_bid_cap_with_four_aces(options: dict[str, Any], cap: int) -> None:
    # §2: "Nobody may bid above 120 + the marriages in his own hand (an ace marriage counts
    # as 200; option ace_marriage_counts_for_bid)". Seat 0 (first hand) raises after seat 1.
    game = new_game(rules(**options), "ACES")
    run(game, ["1 bid 105", "2 pass"])
    assert max_bid(game) == cap
    with pytest.raises(BidError):
        game.apply(parse_action(f"bid {cap + 5}"), seat=0)
    game.apply(parse_action(f"bid {cap}"), seat=0)


# --- 1001 auction and throw-in -------------------------------------------------------------


def test_1001_bid_after_one_pass_is_no_all_pass() -> None:
    # 1001: the last hand takes the talon only "if every player before the last hand
    # passes". Seat 1 bids 40 after seat 0 passed: the auction goes on; 2 passes: 1 declares at 40.
    game = new_game(rules("1001"), "D1")
    run(game, ["0 pass", "1 bid 40", "2 pass", "1 give 9♣ to 2", "1 give J♣ to 0"])
    assert game.declarer == 1
    assert "throw-in" not in [str(a) for a in game.legal_actions()]


# --- Play: following, trumping, must_beat (§7) ---------------------------------------------

PLAY_SETUP = [*AUCTION_0, "0 give A♦ to 1", "0 give 9♦ to 2", "0 contract 100"]


def legal_cards(game: Game) -> set[str]:
    return {str(a).split()[1] for a in game.legal_actions()}


@pytest.mark.parametrize("must_beat", [False, True])
def test_follow_trump_and_must_beat(must_beat: bool) -> None:
    ruleset = rules(marriage_needs_trick=False, must_beat=must_beat)
    game = new_game(ruleset, "PLAY")
    run(game, PLAY_SETUP)
    # §8 with marriage_needs_trick off: the ♥ marriage on the first lead, trump ♥.
    run(game, ["0 play K♥ declare"])
    assert game.trump == Suit.HEARTS
    assert game.marriage_points(0) == 100
    run(game, ["1 play 9♥"])
    # §7 must_beat: among the ♥ he must follow with, one that beats K♥.
    assert legal_cards(game) == ({"A♥", "10♥"} if must_beat else {"A♥", "10♥", "J♥"})
    run(game, ["2 play 10♥", "2 play J♦"])  # seat 2 wins and leads J♦
    # §7: seat 0 is void in ♦ and holds trump Q♥: he must trump.
    assert legal_cards(game) == {"Q♥"}
    with pytest.raises(PlayError):
        game.apply(parse_action("play A♠"), seat=0)
    run(game, ["0 play Q♥"])
    # A trump is in the trick: seat 1 follows ♦ with any ♦ (nothing of ♦ can beat it).
    assert legal_cards(game) == {"A♦", "10♦", "K♦", "Q♦"}
    run(game, ["1 play A♦", "0 play A♠"])  # seat 0 (trump) wins and leads A♠
    # Seat 1 holds only lower ♠: any ♠.
    assert legal_cards(game) == {"10♠", "J♠", "Q♠"}
    run(game, ["1 play 10♠"])
    # Seat 2 is void in ♠, holds trumps A♥ J♥: must trump (any trump beats a plain A♠).
    assert legal_cards(game) == {"A♥", "J♥"}
    run(game, ["2 play J♥", "2 play K♣"])  # seat 2 wins, leads K♣ (no declare)
    # must_beat: seat 0 holds A♣ J♣ 9♣: only A♣ beats K♣.
    assert legal_cards(game) == ({"A♣"} if must_beat else {"A♣", "J♣", "9♣"})


# --- Marriages (§8) and the ace marriage (§9) ----------------------------------------------


@pytest.mark.parametrize(
    ("options", "first", "ok"),
    [
        ({}, "10♠", True),  # a trick won with a non-ace: the ace marriage may be declared
        ({}, None, False),  # no trick won yet
        # docs Interpretations: the ace marriage needs a won trick whatever
        # marriage_needs_trick says (a holder of four aces can only have won with a non-ace)
        ({"marriage_needs_trick": False}, None, False),
        ({"ace_marriage": False}, "10♠", False),  # option off
    ],
)
def test_ace_marriage(options: dict[str, Any], first: str | None, ok: bool) -> None:
    # §9: "may declare it by leading an ace, once he has won a trick with a card other than
    # an ace. It scores 200 and changes no trump."
    game = new_game(rules(**options), "ACES")
    run(game, [*AUCTION_0, "0 give 9♣ to 1", "0 give 9♦ to 2", "0 contract 160"])
    if first:
        run(game, [f"lead: {first}"])
    if ok:
        run(game, ["0 play A♣ declare"])
        assert game.marriage_points(0) == 200
        assert game.trump is None  # no trump change
    else:
        with pytest.raises(MarriageError):
            game.apply(parse_action("play A♣ declare"), seat=0)


def test_ace_marriage_keeps_the_trump() -> None:
    # §9 "changes no trump" after §8's ♠ marriage set trump ♠: ♠ stays trump.
    game = new_game(rules(), "ACES")
    run(
        game,
        [
            *AUCTION_0,
            "0 give 9♣ to 1",
            "0 give 9♦ to 2",
            "0 contract 160",
            "lead: 10♠ K♠!",
            "0 play A♦ declare",
        ],
    )
    assert game.trump == Suit.SPADES
    assert game.marriage_points(0) == 240


# --- Bad input (refusals name the action, the rule, the legal actions; state unchanged) ---


def refused(game: Game, seat: int, text: str, error: type[IllegalActionError]) -> None:
    before = (game.record(), game.legal_actions(), game.to_act, game.phase)
    with pytest.raises(error) as info:
        game.apply(parse_action(text), seat=seat)
    message = str(info.value)
    assert message.startswith(f"illegal action '{text}' by seat {seat}: "), message
    rule = message.split(": ", 1)[1].split("; legal: ")[0]
    assert rule.strip(), message  # the rule broken
    assert "; legal: " in message, message
    legal = [str(a) for a in game.legal_actions()]
    listed = message.split("; legal: ", 1)[1]
    # The legal actions are named (long lists may be shortened with "…").
    assert legal[0] in listed and (legal[-1] in listed or "…" in listed), message
    assert info.value.action == parse_action(text) and info.value.seat == seat
    assert (game.record(), game.legal_actions(), game.to_act, game.phase) == before


def test_bad_input_bidding() -> None:
    game = new_game(rules(), "D1")
    refused(game, 1, "contract 100", WrongPhaseError)
    refused(game, 2, "bid 105", NotYourTurnError)
    refused(game, 1, "bid 103", BidError)
    refused(game, 1, "bid 100", BidError)  # not above the standing (committed) 100
    refused(game, 1, "bid 185", BidError)  # over 120 + ♣ 60
    refused(game, 1, "play K♣", WrongPhaseError)
    refused(game, 1, "throw-in", IllegalActionError)
    run(game, ["1 pass"])
    refused(game, 1, "bid 105", IllegalActionError)  # a pass is final (not his turn)


def test_bad_input_passing_contract_play() -> None:
    game = new_game(rules(), "D1")
    run(game, AUCTION_0)
    refused(game, 0, "give K♥ to 1", CardNotHeldError)
    refused(game, 0, "give 9♥ to 0", GiveError)
    run(game, ["0 give 9♥ to 2"])
    refused(game, 0, "give 10♣ to 2", GiveError)  # a second card to the same opponent
    run(game, ["0 give 10♣ to 1"])
    refused(game, 0, "contract 95", ContractError)
    refused(game, 0, "contract 165", ContractError)
    refused(game, 0, "contract 103", ContractError)
    refused(game, 0, "throw-in", ThrowInError)
    run(game, ["0 contract 100"])
    refused(game, 0, "play K♠ declare", MarriageError)  # before a won trick
    refused(game, 0, "play 10♣", CardNotHeldError)
    run(game, ["0 play A♣"])
    refused(game, 1, "play A♦", PlayError)  # must follow ♣
    refused(game, 0, "play A♠", NotYourTurnError)


# --- Every option of RULES.md can be set from a TOML file -----------------------------------


def test_every_rules_option_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(
        textwrap.dedent(
            """\
            preset = "classic"
            name = "house"
            ace_marriage_counts_for_bid = false
            opening_bid = 110
            bid_step = 10
            talon_visible = false
            concede = "penalty"
            concede_pays = "none"
            must_beat = true
            marriage_needs_trick = false
            ace_marriage = false
            rounding = 5
            barrel_at = 800
            barrel_deals = 2
            barrel_penalty = 100
            barrel_mode = "one"
            target = 1100
            max_deals = 7
            """
        ),
        encoding="utf-8",
    )
    r = load_ruleset(str(path))
    assert (r.ace_marriage_counts_for_bid, r.opening_bid, r.bid_step, r.talon_visible) == (
        False,
        110,
        10,
        False,
    )
    assert (r.concede, r.concede_pays, r.must_beat, r.marriage_needs_trick) == (
        "penalty",
        "none",
        True,
        False,
    )
    assert (r.ace_marriage, r.rounding, r.barrel_at, r.barrel_deals, r.barrel_penalty) == (
        False,
        5,
        800,
        2,
        100,
    )
    assert (r.barrel_mode, r.target, r.max_deals) == ("one", 1100, 7)


# --- An independent oracle of RULES.md over random matches ---------------------------------
#
# Every decision's legal actions (§2, §4–§9, 1001) and every deal's score changes (§6, §10,
# the barrel, 1001, the end) recomputed from the rule book and compared with the engine,
# over random matches under many option combinations and start positions.

RANKS = ["9", "J", "Q", "K", "10", "A"]  # low to high
POINTS = {"A": 11, "10": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
MARRIAGE = {"♥": 100, "♦": 80, "♣": 60, "♠": 40}


def suit_of(card: str) -> str:
    return card[-1]


def rank_of(card: str) -> str:
    return card[:-1]


def beats(new: str, old: str, trump: str | None) -> bool:
    if suit_of(new) == suit_of(old):
        return RANKS.index(rank_of(new)) > RANKS.index(rank_of(old))
    return suit_of(new) == trump


def winning(cards: Sequence[str], trump: str | None) -> int:
    best = 0
    for i, c in enumerate(cards[1:], 1):
        if beats(c, cards[best], trump):
            best = i
    return best


def marriages_value(hand: Sequence[str], r: Any, for_bid: bool = True) -> int:
    value = sum(v for s, v in MARRIAGE.items() if f"K{s}" in hand and f"Q{s}" in hand)
    if r.ace_marriage and r.ace_marriage_counts_for_bid and all(f"A{s}" in hand for s in MARRIAGE):
        value += 200
    return value


def half_up(x: float, unit: int) -> int:
    import math

    return math.floor(x / unit + 0.5) * unit


class Oracle:
    """The deal as RULES.md describes it, fed the actions the engine applies."""

    def __init__(self, game: Game) -> None:
        self.r = game.ruleset
        self.n = len(game.players)
        self.dealer = game.dealer
        self.active = [s for s in range(self.n) if not (self.n == 4 and s == self.dealer)]
        order = sorted(self.active, key=lambda s: (s - self.dealer - 1) % self.n)
        self.order = order  # first hand first, last hand last
        self.hands = {s: [str(c) for c in game.dealt_hands[s]] for s in range(self.n)}
        self.dealt = {s: list(h) for s, h in self.hands.items()}
        self.talon = [str(c) for c in game.talon]
        self.standing = self.r.opening_bid if self.r.first_hand_commits else None
        self.high = order[0] if self.r.first_hand_commits else None
        self.passed: set[int] = set()
        self.turn = 1 if self.r.first_hand_commits else 0  # index into order
        self.phase = "bidding"
        self.declarer: int | None = None
        self.all_pass = False
        self.given: set[int] = set()
        self.trick: list[tuple[int, str]] = []
        self.trump: str | None = None
        self.won: dict[int, list[str]] = {s: [] for s in self.active}  # winning cards
        self.points = dict.fromkeys(self.active, 0)
        self.mpoints = dict.fromkeys(self.active, 0)
        self.leader: int | None = None
        self.contract: int | None = None
        self.outcome: str | None = None

    def to_act(self) -> int:
        if self.phase == "bidding":
            return self.order[self.turn]
        if self.phase in ("passing", "contract"):
            assert self.declarer is not None
            return self.declarer
        if not self.trick:
            assert self.leader is not None
            return self.leader
        return self.active[(self.active.index(self.trick[-1][0]) + 1) % len(self.active)]

    def legal(self) -> set[str]:
        r, seat = self.r, self.to_act()
        hand = self.hands[seat]
        if self.phase == "bidding":
            low = r.opening_bid if self.standing is None else self.standing + r.bid_step
            cap = 120 + marriages_value(self.dealt[seat], r)
            return {"pass"} | {f"bid {b}" for b in range(low, cap + 1, r.bid_step)}
        if self.phase == "passing":
            opp = [s for s in self.active if s != seat and s not in self.given]
            # The all-pass last hand may throw in once he has seen the talon (RULES.md does
            # not make him pass his cards first).
            return {f"give {c} to {o}" for c in hand for o in opp} | (
                {"throw-in"} if self.all_pass else set()
            )
        if self.phase == "contract":
            assert self.standing is not None
            cap = max(self.standing, 120 + marriages_value(hand, r))
            out = {f"contract {c}" for c in range(self.standing, cap + 1, 5)}
            if self.all_pass:
                out.add("throw-in")
            elif r.concede != "off":
                out.add("concede")
            return out
        if not self.trick:
            out = {f"play {c}" for c in hand}
            if self.won[seat] or not r.marriage_needs_trick:
                for c in hand:
                    partner = {"K": "Q", "Q": "K"}.get(rank_of(c))
                    if partner and f"{partner}{suit_of(c)}" in hand:
                        out.add(f"play {c} declare")
            aces = [f"A{s}" for s in MARRIAGE]
            if (
                r.ace_marriage
                and all(a in hand for a in aces)
                and any(rank_of(c) != "A" for c in self.won[seat])
            ):
                out |= {f"play {a} declare" for a in aces}
            return out
        cards = [c for _, c in self.trick]
        led = suit_of(cards[0])
        best = cards[winning(cards, self.trump)]
        follow = [c for c in hand if suit_of(c) == led]
        trumps = [c for c in hand if suit_of(c) == self.trump]
        obliged = follow or trumps or hand
        if r.must_beat and (follow or trumps):
            beating = [c for c in obliged if beats(c, best, self.trump)]
            obliged = beating or obliged
        return {f"play {c}" for c in obliged}

    def apply(self, seat: int, text: str) -> None:
        words = text.split()
        if self.phase == "bidding":
            if words[0] == "bid":
                self.standing, self.high = int(words[1]), seat
            else:
                self.passed.add(seat)
            left = [s for s in self.order if s not in self.passed]
            if (
                self.r.all_pass == "last_hand"
                and self.standing is None
                and self.passed == set(self.order[:-1])
            ):
                self.declarer, self.standing, self.all_pass = (
                    self.order[-1],
                    self.r.opening_bid,
                    True,
                )
            elif len(left) == 1 and self.high is not None:
                self.declarer = left[0]
            elif not left:  # all_pass = first_hand: first hand plays the opening bid
                assert self.r.all_pass == "first_hand"
                self.declarer, self.standing = self.order[0], self.r.opening_bid
            if self.declarer is not None:
                self.phase = "passing"
                self.hands[self.declarer] += self.talon
                return
            self.turn = (self.turn + 1) % len(self.order)
            while self.order[self.turn] in self.passed:
                self.turn = (self.turn + 1) % len(self.order)
            return
        if self.phase == "passing" and words[0] == "throw-in":
            self.outcome = "thrown_in"
            return
        if self.phase == "passing":
            card, to = words[1], int(words[3])
            self.hands[seat].remove(card)
            self.hands[to].append(card)
            self.given.add(to)
            if len(self.given) == len(self.active) - 1:
                self.phase = "contract"
            return
        if self.phase == "contract":
            if words[0] == "contract":
                self.contract = int(words[1])
                self.phase, self.leader = "playing", seat
            else:
                self.outcome = "conceded" if words[0] == "concede" else "thrown_in"
            return
        card = words[1]
        if len(words) == 3:
            if rank_of(card) == "A":
                self.mpoints[seat] += 200
            else:
                self.mpoints[seat] += MARRIAGE[suit_of(card)]
                self.trump = suit_of(card)
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        if len(self.trick) == len(self.active):
            w = winning([c for _, c in self.trick], self.trump)
            winner, wcard = self.trick[w]
            self.won[winner].append(wcard)
            self.points[winner] += sum(POINTS[rank_of(c)] for _, c in self.trick)
            self.trick, self.leader = [], winner
            if not self.hands[winner]:
                assert self.contract is not None
                self.outcome = "made" if self.take(self.declarer) >= self.contract else "failed"

    def take(self, seat: int | None) -> int:
        assert seat is not None
        return self.points[seat] + self.mpoints[seat]

    def raw_deltas(self) -> dict[int, int]:
        """§6, §10, 1001: the changes before the barrel."""
        r, d, bid = self.r, self.declarer, self.standing
        assert d is not None and bid is not None
        out = dict.fromkeys(range(self.n), 0)
        others = [s for s in self.active if s != d]
        if self.outcome == "conceded":
            out[d] = -bid if r.concede == "penalty" else 0
            for s in others:
                out[s] = half_up(bid / 2, r.rounding) if r.concede_pays == "half" else 0
        elif self.outcome == "thrown_in":
            for s in others:
                out[s] = r.throw_in_bonus
        else:
            assert self.contract is not None
            out[d] = self.contract if self.outcome == "made" else -self.contract
            for s in others:
                out[s] = half_up(self.take(s), r.rounding)
        if self.n == 4:
            nines = all(rank_of(c) == "9" for c in self.talon)
            out[self.dealer] = (
                r.nines_talon_value if nines else sum(POINTS[rank_of(c)] for c in self.talon)
            )
        return out


def oracle_scores(
    r: Any, o: Oracle, scores: Sequence[int], barrel: Sequence[int]
) -> tuple[list[int], list[int]]:
    """The barrel rules of RULES.md applied to the raw changes."""
    raw = o.raw_deltas()
    new, left = list(scores), list(barrel)
    if not r.barrel:
        return [s + raw[i] for i, s in enumerate(scores)], left
    newcomers, fell = [], set()
    for s in range(o.n):
        if barrel[s]:
            if s == o.declarer:
                if o.outcome == "made" and (o.contract or 0) >= 120:
                    new[s], left[s] = r.target, 0
                    continue
                if o.outcome == "failed":
                    new[s] -= o.contract or 0
                    left[s] = 0
                    fell.add(s)
                    continue
                if o.outcome == "conceded" and r.concede == "penalty":
                    new[s] -= o.standing or 0
                    left[s] = 0
                    fell.add(s)
                    continue
            left[s] -= 1
            if left[s] == 0:
                new[s] -= r.barrel_penalty
                fell.add(s)
        else:
            new[s] += raw[s]
            if new[s] >= r.barrel_at:
                new[s], left[s] = r.barrel_at, r.barrel_deals
                newcomers.append(s)
    if r.barrel_mode == "one" and newcomers:
        fallers = newcomers if len(newcomers) > 1 else []
        sitters = [s for s in range(o.n) if barrel[s] and left[s] and s not in fell]
        for s in [*fallers, *sitters]:
            new[s] -= r.barrel_penalty
            left[s] = 0
    return new, left


ORACLE_RULESETS = [
    rules(),
    rules(must_beat=True, marriage_needs_trick=False, max_deals=2),
    rules(concede="penalty", barrel_mode="one", rounding=5),
    rules(concede="off", ace_marriage_counts_for_bid=False, barrel_deals=2, barrel_penalty=70),
    rules(ace_marriage=False, concede_pays="none", barrel_at=500, target=600),
    rules("1001"),
    rules("1001", must_beat=True, concede="free", concede_pays="half"),
    rules("1001-4p"),
    rules("1001-4p", max_deals=1, target=300),
    rules("1001-4p", barrel=True, rounding=1),
    rules("classic", first_hand_commits=False, all_pass="last_hand", barrel_mode="one"),
    rules("1001", all_pass="first_hand"),
    rules("1001-4p", all_pass="first_hand", bid_step=20),
    rules(opening_bid=110, bid_step=10, talon_visible=False, rounding=10),
    rules("1001", concede="off", ace_marriage=False, talon_visible=False),
    rules("1001-4p", must_beat=True, marriage_needs_trick=False, talon_visible=False),
    rules("1001-4p", barrel=True, barrel_mode="one", concede_pays="half", throw_in_bonus=35),
]


def oracle_start(r: Any, rng: Any) -> tuple[list[int], list[int]]:
    n = r.players
    if not r.barrel:
        return [rng.randrange(0, r.target // 5) * 5 + rng.choice([0, 1, 3]) for _ in range(n)], [
            0
        ] * n
    scores: list[int] = []
    barrel: list[int] = []
    for _ in range(n):
        sit = rng.random() < 0.3 and (r.barrel_mode == "many" or not any(barrel))
        if sit:
            scores.append(r.barrel_at)
            barrel.append(rng.randrange(1, r.barrel_deals + 1))
        else:
            scores.append(r.barrel_at - rng.choice([5, 13, 40, 60, 150, 400]))
            barrel.append(0)
    return scores, barrel


MATCHES = 25


def pick(game: Game, rng: Any) -> Any:
    legal = game.legal_actions()
    declares = [a for a in legal if "declare" in str(a)]
    if declares and rng.random() < 0.7:
        return rng.choice(declares)
    if game.phase == Phase.BIDDING:
        # mostly pass or the smallest raise, so that contracts are often made
        return (
            legal[-1]
            if rng.random() < 0.5
            else legal[0]
            if rng.random() < 0.8
            else rng.choice(legal)
        )
    if game.phase == Phase.PLAYING and game.to_act == game.declarer and rng.random() < 0.8:
        return max(legal, key=lambda a: RANKS.index(rank_of(str(a).split()[1])))
    if game.phase == Phase.CONTRACT:
        ends = [a for a in legal if str(a) in ("concede", "throw-in")]
        if ends and rng.random() < 0.2:
            return ends[0]
        contracts_ = [a for a in legal if str(a).startswith("contract")]
        return contracts_[0] if rng.random() < 0.7 else rng.choice(contracts_)
    return rng.choice(legal)


@pytest.mark.parametrize("index", range(len(ORACLE_RULESETS)))
def test_engine_agrees_with_the_oracle(index: int) -> None:
    import random

    r = ORACLE_RULESETS[index]
    rng = random.Random(index)
    for match in range(MATCHES):
        scores, barrel = oracle_start(r, rng)
        names = P3 if r.players == 3 else P4
        game = Game.new(r, f"o{index}-{match}", names, scores=scores, barrel=barrel)
        while not game.is_over:
            o = Oracle(game)
            before_scores, before_barrel = list(game.scores), list(game.barrel or [0] * o.n)
            number = game.deal_number
            while game.deal_number == number and not game.is_over:
                where = f"match {match} deal {number} actions {[str(a) for _, a in game.actions]}"
                assert game.to_act == o.to_act(), where
                legal = {str(a) for a in game.legal_actions()}
                assert legal == o.legal(), where
                check_views(game, o)
                action = pick(game, rng)
                seat = game.to_act
                o.apply(seat, str(action))
                game.apply(action, seat=seat)
            res = game.deal_results[number]
            assert res.outcome == o.outcome
            want_scores, want_barrel = oracle_scores(r, o, before_scores, before_barrel)
            assert list(res.scores) == want_scores, (match, number, res)
            assert [b + d for b, d in zip(before_scores, res.deltas, strict=True)] == want_scores
            if o.outcome in ("made", "failed"):
                card_points = [o.points.get(s, 0) for s in range(o.n)]
                assert list(res.card_points) == card_points and sum(card_points) == 120
                assert list(res.marriage_points) == [o.mpoints.get(s, 0) for s in range(o.n)]
            if r.barrel:
                assert list(res.barrel or []) == want_barrel, (match, number, res)
            reached = [s for s in want_scores if s >= r.target]
            assert game.is_over == bool(reached) or (
                r.max_deals and len(game.deal_results) >= r.max_deals
            ), (match, number)
            if game.is_over:
                check_result(r, game)
            if len(game.deal_results) >= 6 and not game.is_over:
                break
        # Invariants: replaying the record reproduces every score.
        again = replay(game.record())
        assert (again.scores, again.barrel, again.deal_results) == (
            game.scores,
            game.barrel,
            game.deal_results,
        )


def check_views(game: Game, o: Oracle) -> None:
    """§3, §4, Invariants: a seat sees its own hand; the talon only once taken and only
    if talon_visible or he is the declarer; a passed card only as giver or receiver;
    legal actions only when it is his turn."""
    for seat in range(o.n):
        view = observe(game, seat)
        assert sorted(map(str, view.hand)) == sorted(o.hands[seat])
        shown = o.phase != "bidding" and (o.r.talon_visible or seat == o.declarer)
        assert (view.talon is not None) == shown, (seat, o.phase)
        if shown:
            assert view.talon is not None and sorted(map(str, view.talon)) == sorted(o.talon)
        for to, card in view.gives:
            assert (card is not None) == (seat in (to, o.declarer)), (seat, to)
        assert bool(view.legal_actions) == (seat == game.to_act)


def check_result(r: Any, game: Game) -> None:
    """The end (RULES.md): places by score (1, 1, 3), the winner alone on top (the highest
    of several reaching the target), each loser's shortfall to the target."""
    scores = list(game.scores)
    result = game.result
    assert result is not None
    places = [1 + sum(other > s for other in scores) for s in scores]
    top = [i for i, s in enumerate(scores) if s == max(scores)]
    winner = top[0] if len(top) == 1 else None
    shortfalls = [0 if i == winner else max(0, r.target - s) for i, s in enumerate(scores)]
    reason = "target" if max(scores) >= r.target else "max_deals"
    assert (list(result.places), result.winner, list(result.shortfalls), result.reason) == (
        places,
        winner,
        shortfalls,
        reason,
    ), (scores, result)
