"""Round 29 strictness audit: RULES.md's permissions, pinned where the engine could be
stricter than the rule book (the 1001 all-pass throw-in before the gives was one such
place). Each case quotes the sentence it reads; every refusal checked here is one that
RULES.md states.

Seating: 3 players with dealer 2, so first hand F = 0, second hand S = 1, last hand L = 2;
4 players with dealer 3 (who sits out): F = 0, S = 1, L = 2.
"""

from __future__ import annotations

import pytest

from engine import (
    BidError,
    ConcedeError,
    Contract,
    ContractError,
    Game,
    GiveError,
    IllegalActionError,
    Phase,
    ThrowIn,
    ThrowInError,
    WrongPhaseError,
    load_ruleset,
    parse_action,
    parse_cards,
)

F, S, L = 0, 1, 2

# F holds the ♠ marriage (cap 160), S the ♣ one (cap 180), L the ♥ one (cap 220); the
# talon's K♦ makes a ♦ marriage with L's Q♦ once L takes it.
HANDS3 = [
    parse_cards("A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥"),
    parse_cards("A♣ 10♣ K♣ Q♣ J♣ 10♦ A♦"),
    parse_cards("Q♦ J♦ 9♥ J♥ Q♥ K♥ 10♥"),
]
TALON = parse_cards("K♦ 9♣ 9♦")


def new(preset: str = "classic") -> Game:
    return Game.new(
        load_ruleset(preset), 1, ["ann", "bob", "cid"], deals={0: (HANDS3, TALON)}, dealer=2
    )


def act(g: Game, seat: int, *texts: str) -> None:
    for text in texts:
        g.apply(parse_action(text), seat=seat)


def legal(g: Game) -> set[str]:
    return {str(a) for a in g.legal_actions()}


def refused(g: Game, seat: int, text: str, error: type[IllegalActionError]) -> None:
    before = (g.phase, g.to_act, g.actions, tuple(g.hand(seat)))
    with pytest.raises(error):
        g.apply(parse_action(text), seat=seat)
    assert (g.phase, g.to_act, g.actions, tuple(g.hand(seat))) == before


def test_a_bid_may_equal_the_cap_and_jump_to_it() -> None:
    """§2: "raises (a multiple of 5, at least 5 above the standing bid)"; "Nobody may bid
    above 120 + the marriages in his own hand": his cap itself is a bid he may make."""
    g = new()
    act(g, S, "pass")
    assert {"bid 105", "bid 220"} <= legal(g)
    refused(g, L, "bid 225", BidError)
    refused(g, L, "bid 222", BidError)
    act(g, L, "bid 220")
    act(g, F, "pass")
    assert (g.declarer, g.bid) == (L, 220)


@pytest.mark.parametrize("first", [S, L])
def test_the_declarer_gives_to_either_opponent_first_any_of_his_10_cards(first: int) -> None:
    """§4: "gives one card, face down, to each opponent (one each, any of his 10 cards)":
    no order between the opponents, a talon card as well as a dealt one."""
    g = new()
    act(g, S, "pass")
    act(g, L, "pass")  # F plays the committed 100
    assert g.phase is Phase.PASSING and g.declarer == F
    gives = legal(g)
    for card in [*HANDS3[F], *TALON]:
        for to in (S, L):
            assert f"give {card} to {to}" in gives
    second = L if first == S else S
    act(g, F, f"give K♦ to {first}")  # a talon card
    refused(g, F, f"give 9♣ to {first}", GiveError)  # "one each"
    assert legal(g) == {f"give {c} to {second}" for c in g.hand(F)}
    act(g, F, f"give A♥ to {second}")  # a dealt card
    assert legal(g) == {f"contract {a}" for a in range(100, 165, 5)} | {"concede"}


def test_the_contract_ranges_from_the_bid_to_the_cap_of_the_8_cards_talon_included() -> None:
    """§5: "a multiple of 5, at least the winning bid, at most the greater of the winning
    bid and 120 + the marriages in his 8 cards now": both ends may be named."""
    g = new()
    act(g, S, "pass")
    act(g, L, "bid 105")
    act(g, F, "pass")
    act(g, L, "give 9♣ to 0", "give 9♦ to 1")  # keeps ♥ (100) and, from the talon, ♦ (80)
    assert legal(g) == {f"contract {a}" for a in range(105, 305, 5)} | {"concede"}
    refused(g, L, "contract 100", ContractError)
    refused(g, L, "contract 305", ContractError)
    refused(g, L, "contract 107", ContractError)
    act(g, L, "contract 300")
    assert g.contract == 300 and g.phase is Phase.PLAYING


def test_a_bid_above_the_cap_of_the_8_cards_is_still_the_contract_floor() -> None:
    """§5: "at most the greater of the winning bid and ...": a declarer who bid on a
    marriage and passed a card of it away names exactly his bid."""
    g = new()
    act(g, S, "pass")
    act(g, L, "bid 220")
    act(g, F, "pass")
    act(g, L, "give K♥ to 0", "give K♦ to 1")  # no marriage left: 120 < 220
    assert legal(g) == {"contract 220", "concede"}
    refused(g, L, "contract 225", ContractError)


def test_1001_the_winning_bidder_concedes_after_the_gives_and_never_throws_in() -> None:
    """1001: "A declarer who won the bidding may concede in place of naming the contract
    (after passing the two cards)"; the throw-in is the all-pass last hand's alone."""
    g = new("1001")
    act(g, F, "bid 40")
    act(g, S, "pass")
    act(g, L, "pass")
    refused(g, F, "concede", WrongPhaseError)
    refused(g, F, "throw-in", ThrowInError)
    act(g, F, "give 9♠ to 1", "give A♥ to 2")
    assert "concede" in legal(g) and "throw-in" not in legal(g)
    refused(g, F, "throw-in", ThrowInError)
    act(g, F, "concede")
    assert g.deal_results[-1].outcome == "conceded"


@pytest.mark.parametrize("gives", [0, 1, 2])
def test_1001_the_all_pass_last_hand_plays_at_the_opening_bid_or_raises(gives: int) -> None:
    """1001: the last hand "takes the talon at the opening bid and may play, raise the
    contract, or throw in": the throw-in stays open until he names a contract, and the
    contract runs from the opening bid to his cap; he may not concede (that is for "a
    declarer who won the bidding")."""
    g = new("1001")
    act(g, F, "pass")
    act(g, S, "pass")
    assert (g.declarer, g.bid, g.phase) == (L, 40, Phase.PASSING)
    for text in ["give 9♣ to 0", "give 9♦ to 1"][:gives]:
        assert "throw-in" in legal(g)
        act(g, L, text)
    assert "throw-in" in legal(g)
    refused(g, L, "concede", WrongPhaseError if gives < 2 else ConcedeError)
    if gives == 2:
        assert {"contract 40", "contract 300"} <= legal(g)
        refused(g, L, "contract 305", ContractError)
        g.apply(Contract(40), seat=L)  # "play" at the opening bid
        assert g.contract == 40 and g.phase is Phase.PLAYING
        assert ThrowIn() not in g.legal_actions()
    else:
        g.apply(ThrowIn(), seat=L)
        assert g.deal_results[-1].outcome == "thrown_in"


def test_4p_the_declarer_gives_to_either_opponent_dealt_in_first_never_the_dealer() -> None:
    """1001, 4 players: "the dealer is dealt no cards and sits out the deal"; the two cards
    go one to each opponent dealt in, in either order."""
    hands = [*HANDS3, []]
    g = Game.new("1001", 1, ["a", "b", "c", "d"], deals={0: (hands, TALON)}, dealer=3)
    act(g, F, "bid 40")
    act(g, S, "pass")
    act(g, L, "pass")
    assert {"give 9♠ to 1", "give 9♠ to 2"} <= legal(g)
    refused(g, F, "give 9♠ to 3", GiveError)
    act(g, F, "give 9♠ to 2", "give 9♦ to 1")
    assert g.phase is Phase.CONTRACT


def test_a_marriage_is_declared_with_the_queen_as_with_the_king() -> None:
    """§8: "A player who leads a K or Q while holding its partner may declare the
    marriage with that lead (his choice)", once he has won a trick."""
    g = new()
    act(g, S, "pass")
    act(g, L, "pass")
    act(g, F, "give 9♠ to 1", "give J♠ to 2", "contract 100")
    assert "play Q♠ declare" not in legal(g)  # no trick won yet
    # F leads A♥; S (no ♥, no trump) plays any card; L follows with a low ♥: F wins.
    act(g, F, "play A♥")
    act(g, S, "play 9♠")
    act(g, L, "play 9♥")
    assert g.to_act == F
    assert {"play Q♠ declare", "play K♠ declare", "play Q♠", "play K♠"} <= legal(g)
    act(g, F, "play Q♠ declare")
    assert g.marriage_points(F) == 40 and str(g.trump) == "♠"


def test_cards_typed_with_an_emoji_variation_selector_are_read() -> None:
    """Defect: a suit with an emoji variation selector (``"K♥️"``: ``"K♥"`` and U+FE0F, as
    phones and some editors type or copy a suit) was "not a card", so a rule case pasted
    from such a text failed at its first hand. Text and emoji presentation are the same
    card."""
    from engine import Card, parse_card

    assert parse_card("K\u2665\ufe0f") is Card.HK
    assert parse_card("10\u2660\ufe0e") is Card.S10
    assert parse_cards("A\u2666\ufe0f 9\u2663\ufe0f") == (Card.DA, Card.C9)
    assert str(parse_action("play Q\u2660\ufe0f declare")) == "play Q♠ declare"


def test_cards_in_the_russian_notation_are_read() -> None:
    """Defect: the game's own notation (В Д К Т for J Q K A; п, т or к, б, ч for ♠ ♣ ♦ ♥,
    as the source texts and Russian players write cards) was "not a card" to the engine:
    only the human seat translated it, so a rule case, a record's hands or a bot's
    ``parse_card`` written that way failed. It reads as the card, in either case and mixed
    with the other notations; other letters are still refused."""
    from engine import Card, CardParseError, parse_card

    assert parse_card("Д♥") is Card.HQ
    assert parse_card("Тп") is Card.SA
    assert parse_card("тт") is Card.CA and parse_card("Кк") is Card.CK
    assert parse_card("10ч") is Card.H10 and parse_card("9Б") is Card.D9
    assert parse_card("Вs") is Card.SJ and parse_card("Qч") is Card.HQ
    assert parse_cards("Тч 10ч Кч") == (Card.HA, Card.H10, Card.HK)
    assert str(parse_action("play Дп declare")) == "play Q♠ declare"
    for text in ("Ж♥", "Тх", "Т", "1ч"):
        with pytest.raises(CardParseError):
            parse_card(text)
