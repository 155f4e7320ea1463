"""Round 46: a newcomer at the human seat, played over a pty and through its seams."""

from __future__ import annotations

import io

from engine import Game, Phase, Play, PlayerView, observe
from sdk.human import HumanBot, choose


def _my_play_with_a_card_i_do_not_hold() -> tuple[PlayerView, Play]:
    """Seat 0's first decision in play, with a card of the deck seat 0 does not hold."""
    g = Game.new("classic", seed=1, players=["me", "bob", "cid"])
    while not (g.phase is Phase.PLAYING and g.to_act == 0):
        g.apply(g.legal_actions()[-1] if g.phase is Phase.BIDDING else g.legal_actions()[0])
    view = observe(g, 0)
    held = set(view.hand)
    other = next(c for s in (1, 2) for c in g.hand(s) if c not in held)
    return view, Play(other)


def test_a_card_not_held_is_said_not_held_not_unplayable_now() -> None:
    # "10♥ cannot be played now" of a card the person does not hold read as "wait till
    # later": the give already said "You do not hold"; a play says it too.
    view, play = _my_play_with_a_card_i_do_not_hold()
    action, why = choose(f"play {play.card}", view.legal_actions, ["me", "bob", "cid"], view)
    assert action is None
    assert why.startswith(f"You do not hold {play.card}. Legal: ")
    # the bare card, ASCII and Russian forms say the same
    ascii_card = f"{play.card.rank.label}{play.card.suit.name[0]}"
    assert choose(ascii_card, view.legal_actions, (), view)[1].startswith("You do not hold")
    # a card held but not playable (not following suit) keeps its own words
    unplayable = [c for c in view.hand if Play(c) not in view.legal_actions]
    if unplayable:
        said = choose(f"play {unplayable[0]}", view.legal_actions, (), view)[1]
        assert said.startswith(f"{unplayable[0]} cannot be played now")


def test_the_seat_says_not_held_and_asks_again() -> None:
    view, play = _my_play_with_a_card_i_do_not_hold()
    out = io.StringIO()
    human = HumanBot(stdin=io.StringIO(f"{play.card}\n1\n"), stdout=out, color=False)
    assert human.act(view) == view.legal_actions[0]
    text = out.getvalue()
    assert f"You do not hold {play.card}." in text
    assert text.count("Your move, me") == 2
