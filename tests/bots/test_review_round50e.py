"""Review round 50e: the contract rules of bots50 (four aces with a ten, a marriage and no
ace, two marriages) and four mutants of the 48th session's bot changes that round 50's
review left alive, each pinned by a deal where the mutant decides differently and worse.

Positions are seeded deals or built card by card through the engine; the searches end on
their nodes (no wall-clock cut), so every answer here is deterministic. Each test names the
mutant it kills. Left alive, with the reason:

- B9 (the heuristic's barrel concession ``or not any(c.amount >= 120 …)`` dropped) is
  equivalent: the contracts run from the bid to max(bid, 120 + the marriages) in steps of
  5, and bids are multiples of 5, so a contract of 120 or more is always legal.
- B14 (pimc's own auction, ``barrel[seat] == 1`` → ``> 0``) differs only under the free
  concession on the barrel's other deals, where the mutant asks the rule bots' 0.5 instead
  of pimc's 0.6: docs/bots.md's known weakness (not measured), not shown worse: not pinned.
- Counting's own ``no_entry`` lines (``p = min(p, no_entry_rate)`` dropped or made ``max``)
  are equivalent: where they concede, the heuristic's rule it falls back on concedes too
  (its chance at most 0.13, below ``concede_free_below``).
"""

from __future__ import annotations

import dataclasses

import pytest

from bots._dds import Solver, rule_options
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import Bid, Concede, Contract, Game, Pass, Phase, Ruleset, observe, parse_cards
from engine.cards import mask_of
from engine.rules import PRESETS
from sdk.bot import Bot
from tests.bots.test_blunders_round35 import _NAMES, _bot, _finish_setup

_CLASSIC = PRESETS["classic"]


def _dd(g: Game) -> int:
    """The declarer's (seat 0's) take of the real deal, double-dummy, from the contract."""
    masks = [mask_of(observe(g, s).hand) for s in g.active_seats]
    return Solver(masks, 0, 0, **rule_options(g.ruleset)).value()


def _committed(g: Game) -> Game:
    """Everyone passes: seat 0, first hand, holds the contract at the committed 100."""
    while g.phase is Phase.BIDDING:
        g.apply(Pass(), seat=g.to_act)
    assert g.declarer == 0 and g.bid == 100
    return g


# --------------------------------------------------------- the barrel's last deal (B10, B15)


def _last_barrel_deal(seed: int, ruleset: Ruleset = _CLASSIC) -> Game:
    """Seat 0 (first hand) sits on the barrel (880) on his last deal there and holds the
    contract at the committed 100: a contract below 120 wins nothing and costs the barrel's
    penalty, as a failed 120 or a concession does (RULES.md)."""
    g = Game.new(ruleset, seed, ["a", "b", "c"], scores=[880, 300, 300], barrel=[1, 0, 0], dealer=2)
    return _committed(g)


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_last_barrel_deal_names_120_at_a_chance_below_045(name: str) -> None:
    """Seed 421: 9♠ 9♥ A♠ A♥ J♠ J♣ Q♥ and K♠ Q♠ 10♥ from the talon (♠ marriage, two aces).
    The rule bots' chance of 120 is 0.39, under the 0.45 the contract asks on the other
    barrel deals, but on the last one any chance is worth it; the real deal takes 137+
    double-dummy: 120 wins the game (mutant B10, ``min(0.45, barrel_win_confidence)`` →
    0.45: named the committed 100, made for nothing, and lost the barrel's 120)."""
    bot = _bot(name)
    assert isinstance(bot, HeuristicBot)  # counting's contract is the heuristic's here
    g = _last_barrel_deal(421)
    done = _finish_setup(g, bot)
    assert done[-1] == Contract(120)
    view = observe(g, 0)
    assert bot.p_make(bot.contract_estimate(view) + bot.take_offset, 120) < 0.45
    assert _dd(g) >= 120


def _own_contract_pimc() -> PimcBot:
    """pimc searching its own contract (not the default, where counting's is used)."""
    p = PimcBot(budget=0.05, samples=8, seed=0)
    p.safety = 1e6
    p._counting.safety = 1e6
    p.delegate = frozenset({"BIDDING", "PASSING"})
    return p


def test_pimc_own_contract_names_120_on_the_last_barrel_deal() -> None:
    """Seed 17 (9♠ 9♣ 10♠ A♣ J♠ J♣ K♦ and the talon): pimc's samples make 120 in under
    0.35, so on the barrel's other deals it concedes (free); on the last deal a concession
    costs the barrel's penalty, as a failed 120 does, and 120 is named. The real deal takes
    122 double-dummy: the game is won (mutant B15, ``min(0.35, …)`` → 0.35: conceded)."""
    g = _last_barrel_deal(17)
    assert _finish_setup(g, _own_contract_pimc())[-1] == Contract(120)
    assert _dd(g) >= 120
    # With deals left on the barrel the same hand concedes, keeping the seat.
    more = Game.new(
        _CLASSIC, 17, ["a", "b", "c"], scores=[880, 300, 300], barrel=[2, 0, 0], dealer=2
    )
    assert _finish_setup(_committed(more), _own_contract_pimc())[-1] == Concede()


# ------------------------------------------------------------ four aces, no ace marriage (B12)

# Seat 0 (first hand, committed at 100): the four aces, K♥ Q♥ J♥ 9♥ and no ten (the
# talon brings A♥ 9♥ 9♣; 9♠ 9♣ go).
_ACES = ["A♠ A♣ A♦ K♥ Q♥ J♥ 9♠", "K♠ Q♠ 10♠ J♣ 10♦ 9♦ 10♥", "J♠ K♣ Q♣ 10♣ K♦ Q♦ J♦"]
_ACES_TALON = "A♥ 9♥ 9♣"


def _aces_contract(ruleset: Ruleset, bot: Bot) -> tuple[Game, int]:
    g = Game.new(
        ruleset, 0, ["a", "b", "c"], dealer=2,
        deals={0: ([parse_cards(h) for h in _ACES], parse_cards(_ACES_TALON))},
    )  # fmt: skip
    done = _finish_setup(_committed(g), bot)
    assert isinstance(done[-1], Contract), done
    return g, done[-1].amount


@pytest.mark.parametrize("name", _NAMES)
def test_four_bare_aces_without_the_ace_marriage_use_the_normal_model(name: str) -> None:
    """The bare-aces model (the estimate − 59.5) prices a 200 rarely declared; where the
    ruleset plays no ace marriage the estimate never counted one, so the normal model's
    raise stays: 155 on a hand that takes 220 double-dummy (mutant B12, the ruleset check
    dropped: 105, 50 points left unnamed on a made contract)."""
    off = dataclasses.replace(_CLASSIC, ace_marriage=False)
    g, named = _aces_contract(off, _bot(name))
    assert named == 155
    assert _dd(g) >= named


# ------------------------------------------------------------------- bots50: four aces


def _aces_named(hands: list[str], talon: str, ruleset: Ruleset) -> tuple[Game, int]:
    """Counting's contract with ``hands``, seat 0 (first hand) committed at 100."""
    g = Game.new(
        ruleset, 0, ["a", "b", "c"], dealer=2,
        deals={0: ([parse_cards(h) for h in hands], parse_cards(talon))},
    )  # fmt: skip
    done = _finish_setup(_committed(g), _bot("counting"))
    assert isinstance(done[-1], Contract), done
    return g, done[-1].amount


def test_four_aces_with_a_ten_without_the_ace_marriage_are_not_raised() -> None:
    """``aces_ten_offset`` is the take of a hand that declares the 200; where the ruleset
    plays no ace marriage there is none to declare, and the normal model names the bid:
    100 on a hand (A♠ A♣ A♥ A♦ 10♠ 10♥ K♣ K♦) that takes 103 double-dummy (mutant: the
    ruleset check dropped, 110, failed)."""
    hands = ["A♠ A♣ 10♠ A♥ 10♥ K♣ K♦", "Q♥ K♠ 9♥ K♥ Q♣ 10♦ 9♠", "J♦ J♠ 9♦ Q♠ J♣ Q♦ 10♣"]
    g, named = _aces_named(hands, "J♥ A♦ 9♣", dataclasses.replace(_CLASSIC, ace_marriage=False))
    assert named == 100
    assert named <= _dd(g) < 110


def test_four_aces_without_a_ten_keep_the_bare_aces_limit_in_counting() -> None:
    """Round 50's deal with the declarer's 10♠ swapped for seat 1's 9♥: four aces, no ten
    and no marriage. The bare-aces model names the bid, 100 (the take is 89 double-dummy);
    the ten's model must not replace it (mutant: ``elif`` → ``if``, 160)."""
    from tests.bots.test_aces_round50 import _HANDS, _TALON

    hands = [_HANDS[0].replace("10♠", "9♥"), _HANDS[1].replace("9♥", "10♠"), _HANDS[2]]
    g, named = _aces_named(hands, _TALON, _CLASSIC)
    assert named == 100
    assert _dd(g) < 110


# ----------------------------------------------------------- bots50: a marriage and no ace

# Seat 0: K♥ Q♥ 10♥ J♥ 10♠ 10♦ 9♠ and the talon 9♥ 10♣ 9♣: the ♥ marriage, five hearts,
# three tens, no ace (the defenders hold all four): it takes nothing double-dummy.
_NO_ACE = ["K♥ Q♥ 10♥ J♥ 10♠ 10♦ 9♠", "A♠ A♣ K♠ Q♠ J♦ 9♦ J♣", "A♦ A♥ J♠ K♣ Q♣ K♦ Q♦"]
_NO_ACE_TALON = "9♥ 10♣ 9♣"


def _no_ace_contract(
    name: str, ruleset: Ruleset, hands: list[str] = _NO_ACE, talon: str = _NO_ACE_TALON
) -> tuple[Game, object]:
    g = Game.new(
        ruleset, 0, ["a", "b", "c"], dealer=2,
        deals={0: ([parse_cards(h) for h in hands], parse_cards(talon))},
    )  # fmt: skip
    if not ruleset.first_hand_commits:
        g.apply(Bid(ruleset.opening_bid), seat=0)
    bot = _bot(name)
    while g.phase is not Phase.CONTRACT:
        if g.phase is Phase.BIDDING:
            g.apply(Pass(), seat=g.to_act)
        else:
            g.apply(bot.act(observe(g, 0)), seat=0)
    assert g.declarer == 0
    return g, bot.act(observe(g, 0))


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_a_marriage_without_an_ace_concedes_at_a_normal_chance_near_one_half(name: str) -> None:
    """Classic at 100 (free concession): the normal model gives this hand 0.44, enough to
    play; read as a hand without an entry (at most 0.13) it concedes, and the real deal
    takes 0 (mutants: ``no_entry_rate`` 0.33, the heuristic played; 0.37, both played,
    −100 and the defenders' takes against their 50 each)."""
    g, action = _no_ace_contract(name, _CLASSIC)
    view = observe(g, 0)
    bot = _bot(name)
    assert isinstance(bot, HeuristicBot) and bot.no_entry(view)
    assert bot.p_make(bot.contract_estimate(view) + bot.take_offset, 100) > 0.4
    assert action == Concede()
    assert _dd(g) < 100


@pytest.mark.parametrize("name", ("heuristic", "counting"))
def test_a_marriage_without_an_ace_names_the_bid_where_it_cannot_concede(name: str) -> None:
    """1001 with ``concede = off`` at 40: the take is read as ``no_entry_take`` (18), so the
    contract is the bid, failed for 40 (mutant: the take left at the estimate + 15, 95: it
    raised to 45 on a deal that takes 0)."""
    g, action = _no_ace_contract(name, dataclasses.replace(PRESETS["1001"], concede="off"))
    assert action == Contract(40)
    assert _dd(g) < 40


def test_the_no_entry_rule_needs_a_marriage_that_needs_a_trick() -> None:
    """Where a marriage needs no won trick (a house rule) the declarer declares on his first
    lead: round 50's 1001 hand (three marriages, no ace) names 40 and takes 100
    double-dummy (mutant: ``marriage_needs_trick`` dropped, conceded the 40). A hand
    with no marriage (four tens, four kings) committed at a house opening of 20 plays it
    and takes 31 (mutant: the marriage check dropped, conceded)."""
    from tests.bots.test_no_entry_round50 import _HANDS, _TALON

    loose = dataclasses.replace(PRESETS["1001"], marriage_needs_trick=False)
    for name in _NAMES:
        g, action = _no_ace_contract(name, loose, _HANDS, _TALON)
        assert action == Contract(40)
        assert _dd(g) >= 40
    tens = ["10♠ 10♣ 10♦ K♠ K♣ K♦ 9♠", "A♠ A♣ Q♠ J♠ J♦ 9♦ J♣", "A♦ A♥ Q♥ J♥ Q♣ Q♦ 9♥"]
    low = dataclasses.replace(_CLASSIC, opening_bid=20)
    for name in _NAMES:
        g, action = _no_ace_contract(name, low, tens, "10♥ K♥ 9♣")
        assert action == Contract(20)
        assert _dd(g) >= 20


def test_the_ten_model_is_for_the_four_aces_only() -> None:
    """Seed 256, seat 0 committed at 100: A♠ A♣ A♥ 10♠ 10♣ 10♥ Q♣ J♦ after the gives, no
    marriage and three aces. The four aces' measured take (the estimate + 27.5) is not
    this hand's: counting names 100, made (103 double-dummy); mutant (``has_ace_marriage``
    dropped from the ten's model): 110, failed."""
    g = _committed(Game.new(_CLASSIC, 256, ["a", "b", "c"], dealer=2))
    done = _finish_setup(g, _bot("counting"))
    assert done[-1] == Contract(100)
    assert 100 <= _dd(g) < 110
