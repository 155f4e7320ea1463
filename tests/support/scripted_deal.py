"""One classic deal dealt with chosen hands, for tests that need a declarer who has passed
cards: seed 7 (dealer 1, first hand 2, second hand 0, last hand 1). Seat 2 holds the ♥
marriage and becomes the declarer at 100 when both others pass; the talon is A♦ 10♦ 9♦;
he gives A♦ to seat 0 and 9♦ to seat 1, keeping 10♦."""

from __future__ import annotations

from engine import PRESETS, Card, Contract, Game, Give, Pass, Phase, Play, parse_cards

SEED = 7
HANDS = {
    0: "10♠ 9♠ 10♥ 9♥ K♦ Q♦ J♦",
    1: "K♠ Q♠ J♠ J♥ Q♣ J♣ 9♣",
    2: "A♠ A♥ K♥ Q♥ A♣ 10♣ K♣",
}
TALON = "A♦ 10♦ 9♦"
DECLARER = 2


def scripted_game() -> Game:
    """The deal above, after the auction, the passing and a contract of 100."""
    hands = [parse_cards(HANDS[s]) for s in range(3)]
    deals = {0: (hands, parse_cards(TALON))}
    g = Game.new(PRESETS["classic"], SEED, ["ann", "bob", "cid"], deals=deals)
    assert g.dealer == 1 and g.to_act == 0
    g.apply(Pass(), seat=0)
    g.apply(Pass(), seat=1)
    assert g.phase is Phase.PASSING and g.declarer == DECLARER
    g.apply(Give(Card.DA, 0), seat=2)
    g.apply(Give(Card.D9, 1), seat=2)
    g.apply(Contract(100), seat=2)
    return g


def play(g: Game, seat: int, text: str, *, declare: bool = False) -> None:
    """Seat ``seat`` plays the card ``text`` (``"K♥"``)."""
    (card,) = parse_cards(text)
    g.apply(Play(card, declare=declare), seat=seat)
