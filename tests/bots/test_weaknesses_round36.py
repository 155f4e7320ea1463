"""The bots' weaknesses left by the round-35 audit, round 36: positions built card by card
through the engine (``Game.new(..., deals=...)``), judged against double-dummy solves.

Defects found and fixed (each test's docstring says what the bots did before):

- :func:`bots.heuristic.estimate_take` counted a fourth card of the longest marriage suit as
  an entry (a trick won by length or a ruff) before any trump exists, so a marriage with no
  way to get the lead was valued at 90% instead of 40%: the heuristic bid to 150 on
  K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠, and ``counting``'s talon enumeration (680 ten-card hands, many of
  them with four cards of a marriage suit) put two bare marriages at 0.67 to make 120;
- with four marriages and one ace, ``heuristic`` and ``counting`` (and ``pimc``, which
  leaves passing to ``counting``) gave the ace away: round 35's rule never gives a marriage
  card while another card can go, and the hand's two other cards were the ace and a nine.
  Without the ace the defenders hold every ace and ten and the declarer takes nothing.

Search budgets are counted in solver nodes (the wall-clock backstop is set out of reach),
and every sample is drawn from a seeded generator: every answer here is deterministic.
"""

from __future__ import annotations

import pytest

from bots._dds import Budget, Solver, rule_options
from bots.counting import CountingBot
from bots.heuristic import HeuristicBot, estimate_take, kept_in_passing
from bots.pimc import PimcBot
from engine import (
    Bid,
    Card,
    Game,
    Give,
    Pass,
    Phase,
    PlayerView,
    load_ruleset,
    observe,
    parse_action,
    parse_cards,
)
from sdk.bot import Bot
from tests.bots.test_blunders_round35 import _bot, _game

_NAMES = ("heuristic", "counting", "pimc")
_CLASSIC = load_ruleset("classic")


def _view(g: Game) -> PlayerView:
    assert g.to_act is not None
    return observe(g, g.to_act)


def _dd_rate(view: PlayerView, level: int, samples: int = 60) -> float:
    """The share of ``samples`` deals consistent with the bidding ``view`` (seeded) in which
    its seat, taking the talon and giving its two cheapest cards, takes ``level``
    double-dummy: pimc's auction test, with a node budget it never reaches."""
    p = PimcBot(samples=samples, seed=0)
    rate, done = p._declarer_success(view, Budget(1000.0, safety=1e6), level)
    assert done == samples
    return rate


# ---------------------------------------------------------------------- two bare marriages

# Seat 1 (second hand, dealer 2) holds the ♥ and ♦ marriages and three low cards; seat 2
# raised to 115: to stay in, seat 1 must bid 120.
_BARE = ["A♥ 10♥ A♦ 10♦ A♠ J♥ 9♥", "K♥ Q♥ K♦ Q♦ 9♠ J♣ 9♣", "K♣ Q♣ A♣ 10♣ 10♠ K♠ J♦"]
_BARE_TALON = "Q♠ J♠ 9♦"


def test_counting_does_not_bid_120_on_two_bare_marriages() -> None:
    """Two bare marriages make 120 in 0.30 of 60 sampled deals double-dummy (no entry
    unless the talon brings an ace). Before: ``counting`` put them at 0.67 (each talon
    giving a fourth ♥ or ♦ counted as an entry) and bid 120; now 0.61, and it passes."""
    g = _game(_BARE, _BARE_TALON, ["bid 105", "bid 115", "pass"])
    view = _view(g)
    assert view.seat == 1 and min(a.amount for a in view.legal_actions if isinstance(a, Bid)) == 120
    counting = CountingBot()
    assert counting.p_make_bid(view, 120) < 0.62
    assert _dd_rate(view, 120) < 0.4
    for name in _NAMES:
        assert _bot(name).act(view) == Pass(), name


def test_counting_still_bids_two_marriages_at_the_opening() -> None:
    """Pin: the same hand still competes at 105 (0.67 by counting's estimate, 0.62
    double-dummy): the fix removes a false entry, not the marriages' value."""
    g = _game(_BARE, _BARE_TALON, [])
    view = _view(g)
    assert view.seat == 1
    assert CountingBot().act(view) == Bid(105)
    assert _dd_rate(view, 105) >= 0.5


# ---------------------------------------------------------------------- a fourth trump

_LONG = parse_cards("K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠ J♣")  # no ace, four hearts
_SHORT = parse_cards("K♥ Q♥ J♥ 9♣ K♦ Q♦ 9♠ J♣")  # the same with three hearts


def test_a_fourth_card_of_a_marriage_suit_is_no_entry_before_a_trump() -> None:
    """A trick is won by length or by a ruff only once a trump is set, and with no ace the
    first marriage is what sets it. Before: the fourth heart counted as an entry, which
    took the ♥ marriage from 40% to 90% and the ♦ from 15% to 40% (+70 points: 137.95
    against 58.0 with three hearts). Now it is an entry for the second marriage only
    (+20 for the ♦ marriage, +~10 for the longer trump suit)."""
    long, short = estimate_take(_LONG, _CLASSIC), estimate_take(_SHORT, _CLASSIC)
    assert short == pytest.approx(58.0)
    assert long == pytest.approx(87.95)


def test_no_ace_four_hearts_is_not_bid_to_150() -> None:
    """K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠ (seat 1), seat 2 raised to 140. Before: the heuristic's bid
    limit was 153 and all three bid 145; double-dummy makes 145 in 0.32 of 60 deals (the
    talon must bring an entry). Now its limit is ~103 and it passes (and so do the
    others)."""
    hands = ["A♥ 10♥ A♦ 10♦ A♠ 10♠ J♠", "K♥ Q♥ J♥ 9♥ K♦ Q♦ 9♠", "K♣ Q♣ A♣ 10♣ K♠ J♦ 9♦"]
    g = _game(hands, "Q♠ J♣ 9♣", ["bid 105", "bid 140", "pass"])
    view = _view(g)
    assert view.seat == 1
    assert HeuristicBot().bid_limit(view) < 110
    assert _dd_rate(view, 145) < 0.4
    for name in _NAMES:
        assert _bot(name).act(view) == Pass(), name


# ---------------------------------------------------------------------- four marriages, one ace

# Seat 0 (first hand, all pass) takes K♥ Q♥ 9♣: K Q of every suit, A♠ and 9♣.
_FOUR = ["K♠ Q♠ K♣ Q♣ K♦ Q♦ A♠", "A♥ 10♥ A♦ 10♦ J♠ 9♠ J♥", "A♣ 10♣ J♣ 10♠ J♦ 9♦ 9♥"]
_FOUR_TALON = "K♥ Q♥ 9♣"


def _gives(bot: Bot) -> tuple[Game, list[Card]]:
    g = _game(_FOUR, _FOUR_TALON, ["pass", "pass"])
    given: list[Card] = []
    while g.phase is Phase.PASSING:
        action = bot.act(_view(g))
        assert isinstance(action, Give)
        given.append(action.card)
        g.apply(action, seat=g.to_act)
    return g, given


def _true_take(g: Game, declarer: int = 0) -> int:
    """The declarer's take on the true deal once the gives are done, double-dummy."""
    hands = [g.hand_mask(s) for s in range(3)]
    return Solver(hands, declarer, declarer, **rule_options(_CLASSIC)).value()


@pytest.mark.parametrize("name", _NAMES)
def test_four_marriages_keep_the_only_ace(name: str) -> None:
    """Before: all three gave A♠ and 9♣ (the only cards outside the marriages): with no ace
    the declarer never wins a trick, declares nothing and takes 0 on this deal (double-
    dummy, 0 in each of 30 random deals too). Now a card of the ♠ marriage goes and A♠
    stays: 114-115 here."""
    g, given = _gives(_bot(name))
    assert parse_cards("A♠")[0] not in given
    assert len(given) == 2 and set(given) <= set(parse_cards("K♠ Q♠ 9♣"))
    assert _true_take(g) >= 100
    # The gift of the ace: nothing.
    g2 = _game(_FOUR, _FOUR_TALON, ["pass", "pass"])
    for a in ("give A♠ to 1", "give 9♣ to 2"):
        g2.apply(parse_action(a), seat=0)
    assert _true_take(g2) == 0


def test_kept_in_passing() -> None:
    """The rule itself: marriage cards are kept, except the cheapest marriage's when the
    only other cards include an ace that would otherwise go; no ace, nothing changes."""
    four_ace = parse_cards("K♠ Q♠ K♣ Q♣ K♦ Q♦ K♥ Q♥ A♠ 9♣")
    assert kept_in_passing(four_ace, 2) == set(parse_cards("K♣ Q♣ K♦ Q♦ K♥ Q♥"))
    four_no_ace = parse_cards("K♠ Q♠ K♣ Q♣ K♦ Q♦ K♥ Q♥ 10♠ 9♣")
    assert kept_in_passing(four_no_ace, 2) == set(four_no_ace[:8])
    three = parse_cards("K♠ Q♠ K♣ Q♣ K♦ Q♦ A♥ 9♣ J♣ A♠")
    assert kept_in_passing(three, 2) == set(three[:6])


@pytest.mark.parametrize("bot", [HeuristicBot, CountingBot])
def test_no_marriage_broken_but_for_the_only_ace_in_300_seeded_decisions(
    bot: type[HeuristicBot],
) -> None:
    """Round 35's guarantee still holds on the first deals of seeds 0-299 (classic): the
    gives never break a marriage unless the hand has four and the ace would go."""
    from tests.bots.test_passing_round35 import _married, _passing_view

    for seed in range(300):
        view = _passing_view(seed)
        held = _married(view.hand)
        given = bot().choose_gives(view)
        if set(given) & held:
            assert len(held) == 8 and any(c.rank.name == "ACE" for c in view.hand), seed
