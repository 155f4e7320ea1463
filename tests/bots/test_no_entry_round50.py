"""A marriage and no ace, round 50: the contract played where it is almost never made.

Where a marriage needs a won trick (every preset), a hand holding marriages and no ace has
no sure winner: the defenders hold every ace, the declarer rarely wins a trick, and the
marriage (``estimate_take`` counts it at 0.4, its suit's length as trumps) is rarely
declared. In counting's own play (three counting bots, 175 seeded deals: 1001 at 40,
classic at 100) those contracts were made in 0.13 and the take averaged ~18, mostly 0; the
bots played them (in 1001 all three named 40 on every such hand). Now the contract rule
takes their chance as at most ``no_entry_rate`` (and the take as ``no_entry_take``), so
they concede where the concession costs less than failing (1001: −40 against −40 and the
defenders' takes; classic: half the bid to each defender, for nothing).

Positions are built card by card through the engine; the searches end on their nodes (no
wall-clock cut), so every answer here is deterministic.
"""

from __future__ import annotations

import pytest

from bots._dds import Solver, rule_options
from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from engine import Concede, Contract, Game, Phase, observe
from engine.cards import mask_of
from sdk.bot import Bot
from tests.bots.test_blunders_round35 import _NAMES, _bot, _game

# 1001, dealer 2: seat 0 bids 40 holding K♥ Q♥ Q♦ 9♣ 9♠ K♠ J♦ and the others pass; the
# talon brings Q♠ K♦ 10♥: three marriages, no ace (seed 2002 of the measurement).
_HANDS = [
    "K♥ Q♥ Q♦ 9♣ 9♠ K♠ J♦",
    "A♦ J♠ J♣ 10♣ 10♦ 10♠ A♣",
    "A♠ K♣ 9♦ 9♥ Q♣ J♥ A♥",
]
_TALON = "Q♠ K♦ 10♥"


class _OldCounting(CountingBot):
    no_entry_rate = 1.0
    no_entry_take = 1e9


class _OldHeuristic(HeuristicBot):
    no_entry_rate = 1.0
    no_entry_take = 1e9


def _old(name: str) -> Bot:
    if name == "heuristic":
        return _OldHeuristic()
    bot = _OldCounting()
    bot.safety = 1e6
    return bot


def _at_contract(hands: list[str], bot: Bot) -> Game:
    g = _game(hands, _TALON, ["bid 40", "pass", "pass"], ruleset="1001")
    while g.phase is Phase.PASSING:
        g.apply(bot.act(observe(g, 0)), seat=0)
    assert g.phase is Phase.CONTRACT and g.declarer == 0 and g.bid == 40
    return g


@pytest.mark.parametrize("name", _NAMES)
def test_a_marriage_without_an_ace_concedes_the_40_it_fails(name: str) -> None:
    """Before, every bot named 40 here (the heuristic's chance 0.88): the real deal takes
    0 double-dummy, so it scored −40 and the defenders their takes. Now all three concede
    (−40, the defenders nothing); the rule before still names 40."""
    g = _at_contract(_HANDS, _bot(name))
    view = observe(g, 0)
    assert _bot(name).act(view) == Concede()
    old = _old("counting" if name == "pimc" else name)
    assert isinstance(old.act(view), Contract)
    masks = [mask_of(observe(g, s).hand) for s in range(3)]
    assert Solver(masks, 0, 0, **rule_options(g.ruleset)).value() < 40


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_with_an_ace_the_contract_is_as_before(name: str) -> None:
    """The same deal with seat 1's A♦ for the declarer's J♦: an entry, so the rule does not
    bind and the bot plays as before."""
    hands = ["K♥ Q♥ Q♦ 9♣ 9♠ K♠ A♦", "J♦ J♠ J♣ 10♣ 10♦ 10♠ A♣", _HANDS[2]]
    g = _at_contract(hands, _bot(name))
    view = observe(g, 0)
    assert not _bot(name).no_entry(view)  # type: ignore[attr-defined]
    assert _bot(name).act(view) == _old(name).act(view)
    assert isinstance(_bot(name).act(view), Contract)
