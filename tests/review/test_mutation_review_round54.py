"""Review round 54: a coverage-guided mutation review of the engine's game flow (bidding,
talon, passing, contract, tricks, marriages, concession, a deal's end: engine/game.py but
the scoring round 53 reviewed), what a seat sees (engine/view.py), match records
(engine/record.py) and the bot author's helpers (sdk/hand.py, sdk/sampling.py,
sdk/local.py). Each test names the mutant it kills (its id and the edit) in its docstring.

Coverage first (``coverage run --branch``, not slow, tests/engine and tests/sdk): game 98%,
view 92%, record 75% (its replay checks are played by tests/arena), hand 100%, sampling
98%, local 92%. Never reached: ``_check_deal``'s refusals of a card twice, a hand or a
talon of the wrong size; ``apply_trusted`` after the match; ``observe``'s refusal of a
seat; ``own_next_view``'s refusals of a bid, a throw-in and a concession and its ace
marriage flag; ``record_decisions``. The tests here reach each of them.

64 hand mutants run (of 158 written; the rest were not run in this round's time): G 25
game, V 20 view, R 2 record, H 13 hand, S 2 sampling, L 2 local. The existing tests kill
37 (G27 only by tests/engine/test_dealer_of_four_round48.py, outside the files first
run); the tests here kill 10 (G3, G7, G45, G47, V1, V4, V8, V17, R1, H12); 16 are
equivalent: G6 (the rank bits above a card, its own included: the card is on the table,
not in the hand), G13, G17, V16 (the ace marriage's "a trick won with a card other than
an ace": a seat that took a trick with an ace no longer holds the four, so every trick a
holder of the four has won was won with another card), G18, G20, G21, G23, G25 (with three
seats dealt in, the auction never counts a third pass while a bid stands, nor skips two
passed seats in a row; a deal has 8 tricks, a declarer 2 cards to pass), G28 (dataclass
equality already compares the class), V7, V14, V19 (a bid's, the deal's last card's and
an unknown bid's views are refused further on, or the hand is empty), H7, H8 (only the
declarer of a marriage ever leads its K or Q, once), S1 (under must_beat the best card of a
trick is of the led suit or a trump); 1 is left: L2 (a decision taking exactly its limit
plus the bank, a float clock reading). No live mutant showed a defect.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine import (
    PRESETS,
    Card,
    Concede,
    Contract,
    Game,
    Give,
    Pass,
    Play,
    Ruleset,
    ThrowIn,
    parse_cards,
)
from engine.errors import GameOverError
from engine.game import trick_winner
from engine.record import ordinal
from engine.view import observe, own_next_view, visible_talon
from sdk.hand import masters, outstanding_cards

NAMES3 = ["a", "b", "c"]


# ------------------------------------------------------------------ engine/game.py


def test_trick_winner_refuses_a_trick_of_four_cards() -> None:
    """G3 (``not 0 < len(cards) <= 4``): a trick holds at most 3 cards (one per seat
    dealt in, four players too); a fourth card is a caller's mistake, said as such, not a
    trick whose winner is computed over cards no trick can hold."""
    with pytest.raises(ValueError, match="a trick holds 1 to 3 cards, got 4"):
        trick_winner([0, 1, 2, 3], None)
    assert trick_winner([0, 1, 2], None) == 2  # (three: the highest of the led suit)


@pytest.mark.parametrize("players", [3, 4])
def test_game_new_refuses_a_dealer_one_past_the_last_seat(players: int) -> None:
    """G7 (``not 0 <= dealer <= n``): ``dealer=n`` is no seat; taken, it dealt as seat 0
    modulo ``n`` and the record kept ``start.dealer`` = n, which no table has."""
    names = [f"p{i}" for i in range(players)]
    with pytest.raises(ValueError, match=rf"dealer must be a seat number \(0..{players - 1}\)"):
        Game.new("1001", 1, names, dealer=players)
    assert Game.new("1001", 1, names, dealer=players - 1).dealer == players - 1


# ------------------------------------------------------------------ engine/view.py


def test_visible_talon_shows_nothing_once_the_match_is_over() -> None:
    """V1 (``visible_talon`` without its ``GAME_OVER`` case): at a match's end the game
    still holds its last deal's talon; ``visible_talon`` (the referee's ``talon_taken``
    events) must answer as ``observe`` does, nothing, not that old talon."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed=5, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    assert g.talon  # (the state keeps it)
    for seat in range(3):
        assert visible_talon(g, seat) is None
        assert observe(g, seat).talon is None


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_observe_refuses_the_seat_one_past_the_last(preset: str) -> None:
    """V4 (``not 0 <= seat <= game.n``): ``observe(game, n)`` is no seat of the game; it
    must be refused naming it, not fail with a bare ``IndexError`` in the hands."""
    n = PRESETS[preset].players
    g = Game.new(preset, 1, [f"p{i}" for i in range(n)])
    with pytest.raises(ValueError, match=rf"no seat {n} in a {n}-player game"):
        observe(g, n)
    assert observe(g, n - 1).seat == n - 1


def test_own_next_view_is_none_for_an_action_not_legal() -> None:
    """V8 (its ``action not in view.legal_actions`` refusal dropped): the declarer's view
    after a give of a card he does not hold, or a contract below his bid, is no view the
    game can reach: ``None``, as its docstring says, not a view built on that action."""
    hands = [
        parse_cards("A♠ A♣ A♦ A♥ 10♠ 10♣ 9♠"),
        parse_cards("K♠ Q♠ J♠ K♣ Q♣ J♣ 9♣"),
        parse_cards("K♦ Q♦ J♦ 9♦ 10♦ K♥ Q♥"),
    ]
    g = Game.new("classic", 1, NAMES3, deals={0: (hands, parse_cards("10♥ J♥ 9♥"))}, dealer=2)
    g.apply(Pass(), seat=1)
    g.apply(Pass(), seat=2)
    view = observe(g, 0)
    assert own_next_view(view, Give(Card.H9, 1)) is not None  # (a legal give has one)
    assert own_next_view(view, Give(Card.SK, 1)) is None  # K♠ is seat 1's
    g.apply(Give(Card.H9, 1), seat=0)
    g.apply(Give(Card.HJ, 2), seat=0)
    view = observe(g, 0)
    assert own_next_view(view, Contract(100)) is not None
    assert own_next_view(view, Contract(95)) is None  # below the bid


# ------------------------------------------------------------------ engine/record.py


def test_ordinal_of_the_teens_is_th() -> None:
    """R1 (``10 <= place % 100 <= 10``): 11, 12 and 13 take "th" (11th, not 11st), as
    do 111 to 113; 21 is 21st again (a table of 12 matches' places, a season's ranks)."""
    assert [ordinal(p) for p in (1, 2, 3, 4, 10, 11, 12, 13, 20, 21, 22, 111, 112, 121)] == [
        "1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "20th", "21st", "22nd",
        "111th", "112th", "121st",
    ]  # fmt: skip


@pytest.mark.parametrize("ace_marriage", [True, False])
def test_own_next_view_offers_the_ace_marriage_only_where_it_is_played(
    ace_marriage: bool,
) -> None:
    """V17 (the ace marriage's flag set without ``r.ace_marriage``): the declarer holding
    the four aces wins a trick with a 10, played third; his next lead as
    ``own_next_view`` foresees it is ``observe``'s after the trick, the aces declarable
    only where the ruleset plays the ace marriage (``ace_marriage = false``: never)."""
    rule = Ruleset.from_dict({"preset": "classic", "ace_marriage": ace_marriage})
    hands = [
        parse_cards("A♠ A♣ A♦ A♥ 10♠ 10♣ 9♠"),
        parse_cards("K♠ Q♠ J♠ K♣ Q♣ J♣ 9♣"),
        parse_cards("K♦ Q♦ J♦ 9♦ 10♦ K♥ Q♥"),
    ]
    g = Game.new(rule, 1, NAMES3, deals={0: (hands, parse_cards("10♥ J♥ 9♥"))}, dealer=2)
    for seat, action in [
        (1, Pass()), (2, Pass()), (0, Give(Card.H9, 1)), (0, Give(Card.HJ, 2)),
        (0, Contract(100)), (0, Play(Card.S9)), (1, Play(Card.SK)), (2, Play(Card.D9)),
        (1, Play(Card.CJ)), (2, Play(Card.DJ)),
    ]:  # fmt: skip
        g.apply(action, seat=seat)
    view = observe(g, 0)
    predicted = own_next_view(view, Play(Card.C10))
    g.apply(Play(Card.C10), seat=0)
    assert g.to_act == 0 and g.tricks[-1].winner == 0
    assert predicted is not None and predicted == observe(g, 0)
    assert (Play(Card.HA, declare=True) in predicted.legal_actions) is ace_marriage


def _deal() -> tuple[list[tuple[Card, ...]], tuple[Card, ...]]:
    return [parse_cards(h) for h in _HANDS], parse_cards("10♥ J♥ 9♥")


_HANDS = ("A♠ A♣ A♦ A♥ 10♠ 10♣ 9♠", "K♠ Q♠ J♠ K♣ Q♣ J♣ 9♣", "K♦ Q♦ J♦ 9♦ 10♦ K♥ Q♥")


@pytest.mark.parametrize(
    ("hands", "talon", "said"),
    [
        # G45 (``seen >> c & 1``: a card twice in one hand went unseen, the deal then
        # refused as "must hold all 24 cards", which names no card)
        ((_HANDS[0], _HANDS[1], "K♦ K♦ J♦ 9♦ 10♦ K♥ Q♥"), "10♥ J♥ 9♥", "card K♦ appears twice"),
        ((*_HANDS,), "10♥ 10♥ 9♥", "card 10♥ appears twice"),
        # G47 (``len(talon) > 3``: a short talon was said to leave cards out)
        ((*_HANDS,), "10♥ J♥", "the talon must have 3 cards, got 2"),
        ((_HANDS[0], _HANDS[1], "K♦ Q♦ J♦ 9♦ 10♦ K♥"), "10♥ J♥ 9♥", "seat 2 must be dealt 7 cards"),
    ],
)
def test_explicit_deals_are_refused_naming_what_is_wrong(
    hands: tuple[str, ...], talon: str, said: str
) -> None:
    """Game.new's ``deals`` (a rule case's, a bug report's cards): each wrong deal is
    refused naming its fault, the card dealt twice or the count (G45, G47; these
    refusals were reached by no test of tests/engine or tests/sdk)."""
    deals = {0: ([parse_cards(h) for h in hands], parse_cards(talon))}
    with pytest.raises(ValueError, match=f"deal 0: {said}"):
        Game.new("classic", 1, NAMES3, deals=deals, dealer=2)


def test_the_fast_door_refuses_an_action_once_the_match_is_over() -> None:
    """``apply_trusted`` after the match's end (reached by no test before): a
    ``GameOverError``, the state unchanged, not an action applied to a finished game."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=1), seed=2, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    with pytest.raises(GameOverError):
        g.apply_trusted(Pass())
    assert g.is_over and len(g.deal_results) == 1


def test_own_next_view_is_none_where_the_deal_ends_or_the_auction_goes_on() -> None:
    """``own_next_view``'s refusals of a bid, a throw-in (1001's last hand, after an
    all-pass) and a concession: the next decision comes after something this seat cannot
    foresee, or in another deal (reached by no test before)."""
    g = Game.new("1001", 4, NAMES3, dealer=2)
    bidding = observe(g, 0)
    assert own_next_view(bidding, bidding.legal_actions[0]) is None
    g.apply(Pass(), seat=0)
    g.apply(Pass(), seat=1)
    assert g.declarer == 2 and g.last_hand_take
    view = observe(g, 2)
    assert ThrowIn() in view.legal_actions
    assert own_next_view(view, ThrowIn()) is None
    c = Game.new("classic", 4, NAMES3, dealer=2)
    c.apply(Pass(), seat=1)
    c.apply(Pass(), seat=2)
    hand = c.hand(0)
    c.apply(Give(hand[0], 1), seat=0)
    c.apply(Give(hand[1], 2), seat=0)
    contract = observe(c, 0)
    assert Concede() in contract.legal_actions
    assert own_next_view(contract, Concede()) is None


# ------------------------------------------------------------------ sdk/hand.py


def test_masters_of_cards_still_out_count_no_card_as_outranking_itself() -> None:
    """H12 (``o.rank >= c.rank``): ``masters(view, cards)`` of cards other than the hand
    (an opponent's possible masters, the cards still out): A♠, out, is a master, not
    outranked by itself; K♠ is outranked by it."""
    g = Game.new("classic", 1, NAMES3, deals={0: _deal()}, dealer=2)
    view = observe(g, 1)
    assert Card.SA in outstanding_cards(view)
    assert masters(view, [Card.SA, Card.SK]) == {Card.SA}
