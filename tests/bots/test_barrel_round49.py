"""The barrel sitter's last deal, round 49: where passing costs the barrel's penalty anyway.

On his last deal on the barrel (``view.barrel[seat] == 1``) a sitter who does not win loses
the barrel's 120 whatever he does: passing, a free concession and a made contract below 120
all end the three deals without a win (RULES.md), and a failed 120 costs the same 120. The
bots bid and played as on any barrel deal (even odds under the free concession, an ordinary
bid's 0.65 where the sitter must play or pay), so they passed or conceded hands that win
the game a good part of the time. Now the sitter bids and plays 120 whenever the chance
beats the break-even of that trade (``HeuristicBot.barrel_win_confidence``: 0 for 120 in the
presets; above 120, what failing costs beyond the penalty). The other barrel deals are
unchanged.

Positions are built card by card through the engine (``Game.new(..., deals=...)``, scores
and barrel counters given); the searching bots end on their nodes (no wall-clock cut), so
every answer here is deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import Bid, Concede, Contract, Game, Pass, Phase, Ruleset, observe
from engine.rules import PRESETS
from tests.bots.test_blunders_round35 import _bot, _finish_setup, _game
from tests.bots.test_weaknesses_round36 import _BARE, _BARE_TALON, _dd_rate

_NAMES = ("heuristic", "counting", "pimc")
_CLASSIC = PRESETS["classic"]
_PENALTY = dataclasses.replace(_CLASSIC, concede="penalty")


def _at_120(barrel: Sequence[int], ruleset: Ruleset = _CLASSIC) -> Game:
    """Seat 1 sits on the barrel (880) holding two bare marriages, K♥ Q♥ K♦ Q♦ 9♠ J♣ 9♣;
    seat 0 opened 105 and seat 2 raised to 115: to stay in, seat 1 must bid 120."""
    return _game(
        _BARE, _BARE_TALON, ["bid 105", "bid 115", "pass"], ruleset=ruleset,  # type: ignore[arg-type]
        scores=[0, 880, 0], barrel=list(barrel),
    )  # fmt: skip


def _penalty_game(barrel: Sequence[int]) -> Game:
    return _at_120(barrel, _PENALTY)


@pytest.mark.parametrize("name", _NAMES)
def test_last_deal_sitter_bids_120_where_the_rules_make_him_play_or_pay(name: str) -> None:
    """Under ``concede = penalty`` the round-45 rule (an ordinary bid's 0.65) made every bot
    pass two bare marriages at 120: right with deals to come, wrong on the last one, where
    passing costs the barrel's 120 for sure and the bid wins the game in 0.30 of the deals
    (double-dummy) for the same 120 when it fails. Now all three bid; with deals left they
    still pass."""
    last = observe(_penalty_game([0, 1, 0]), 1)
    assert last.seat == 1 and last.barrel == (0, 1, 0)
    assert min(a.amount for a in last.legal_actions if isinstance(a, Bid)) == 120
    assert _bot(name).act(last) == Bid(120)
    assert _bot(name).act(observe(_penalty_game([0, 3, 0]), 1)) == Pass()


def test_the_bid_wins_the_game_in_a_fair_share_of_the_deals() -> None:
    """What the bid above is worth: the hand makes 120 in about 0.3 of the deals consistent
    with the sitter's view (double-dummy, taking the talon and giving two cards), each a
    won game, where the pass is a certain −120."""
    view = observe(_penalty_game([0, 1, 0]), 1)
    assert 0.15 < _dd_rate(view, 120, samples=40) < 0.5


def test_barrel_win_confidence_is_the_break_even_on_the_last_deal_only() -> None:
    """120 risks nothing beyond the penalty; 150 risks 30 more against a won game's 120
    (30 / 270); with deals left, the barrel's usual odds (even under the free concession,
    0.65 where the sitter must play or pay)."""
    bot = HeuristicBot()
    last = observe(_at_120([0, 1, 0]), 1)
    assert bot.barrel_win_confidence(last, 120) == 0.0
    assert bot.barrel_win_confidence(last, 150) == pytest.approx(30 / 270)
    assert bot.barrel_win_confidence(observe(_at_120([0, 2, 0]), 1), 120) == 0.5
    assert bot.barrel_win_confidence(observe(_penalty_game([0, 3, 0]), 1), 120) == 0.65
    # A house rule without a barrel penalty: passing costs nothing, so even odds again.
    free = _at_120([0, 1, 0], dataclasses.replace(_CLASSIC, barrel_penalty=0))
    assert bot.barrel_win_confidence(observe(free, 1), 120) == 0.5


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_last_deal_sitter_plays_120_rather_than_concede_it(name: str) -> None:
    """The sitter won the auction at 120 with two bare marriages; the talon (Q♠ J♠ 9♦)
    brings no entry. With deals left, under the free concession, conceding keeps his seat
    for nothing, and the bots concede. On the last deal the concession costs the barrel's
    120, exactly what a failed 120 costs: before, they conceded all the same; now they
    name 120 (a pimc's contract is counting's)."""
    for barrel, want in (([0, 3, 0], Concede), ([0, 1, 0], Contract)):
        g = _at_120(barrel)
        g.apply(Bid(120), seat=1)
        g.apply(Pass(), seat=2)
        assert g.phase is not Phase.BIDDING and g.declarer == 1
        done = _finish_setup(g, _bot(name))
        assert isinstance(done[-1], want), (barrel, done)
        if want is Contract:
            assert done[-1] == Contract(120)


def test_pimc_own_auction_bids_the_last_deal() -> None:
    """``pimc``'s own auction (not the default: ``delegate``) bid the barrel at its usual
    0.6 of samples; on the last deal it now takes the same break-even as the rule bots."""
    last = observe(_penalty_game([0, 1, 0]), 1)
    p = PimcBot(budget=0.05, samples=8, seed=0)
    p.safety = 1e6
    p.delegate = frozenset({"PASSING", "CONTRACT"})
    assert p.act(last) == Bid(120)
    p = PimcBot(budget=0.05, samples=8, seed=0)
    p.safety = 1e6
    p.delegate = frozenset({"PASSING", "CONTRACT"})
    assert p.act(observe(_penalty_game([0, 3, 0]), 1)) == Pass()


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_a_seeded_last_deal_now_won(name: str) -> None:
    """A whole deal of a seeded game, every seat the same bot, seat 0 on its last barrel
    deal: before, it passed and fell to 760; now it bids 120 and wins the game (one of the
    120 heuristic / 37 counting deals of 900 / 300 so turned in the round's measurement,
    none turned the other way)."""
    g = Game.new(
        _CLASSIC, "b9", ["a", "b", "c"], scores=[880, 640, 680], barrel=[1, 0, 0], dealer=0
    )
    seats = [CountingBot() if name == "counting" else HeuristicBot() for _ in range(3)]
    while not g.is_over and not g.deal_results:
        s = g.to_act
        assert s is not None
        g.apply(seats[s].act(observe(g, s)), seat=s)
    assert g.deal_results[0].declarer == 0
    assert g.scores[0] == 1000 and g.is_over
