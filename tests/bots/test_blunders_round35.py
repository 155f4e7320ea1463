"""Blunder audit, round 35: decisions a strong player never gets wrong, on positions built
card by card through the engine (``Game.new(..., deals=...)``), asked of ``heuristic``,
``counting`` and ``pimc``.

Defects found and fixed (each test's docstring says what the bots did before):

- a barrel sitter passed a hand that makes 130+ once an opponent bid above 120
  (``bots/heuristic.py`` and ``bots/counting.py``: the barrel's bid limit was exactly 120);
- on the barrel after a bid above 120, the heuristic weighed the contract at 120, not at the
  bid it must make (``bots/heuristic.py``);
- a defender of ``counting`` or ``pimc`` led the queen (or king) of his marriage without
  declaring it: the solver counts the declarer's take only, so the defender's own 40-100
  points were worth nothing to the search (``bots/counting.py``, ``bots/pimc.py``).

The rest pins behaviour checked and found right. Search budgets are counted in solver nodes
(the wall-clock backstop is set out of reach), so every answer here is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from bots._dds import Solver, position_from_view, rule_options
from bots.counting import CountingBot, own_declaration
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import (
    Action,
    Bid,
    Concede,
    Contract,
    Game,
    Pass,
    Phase,
    Play,
    PlayerView,
    Rank,
    Suit,
    ThrowIn,
    observe,
    parse_action,
    parse_cards,
)
from sdk.bot import Bot
from sdk.sampling import Sampler

_NAMES = ("heuristic", "counting", "pimc")


def _bot(name: str) -> Bot:
    """A fresh bot whose searches end on their nodes only (no wall-clock cut)."""
    if name == "heuristic":
        return HeuristicBot()
    if name == "counting":
        c = CountingBot()
        c.safety = 1e6
        return c
    p = PimcBot(budget=0.1, samples=16, seed=0)
    p.safety = 1e6
    p._counting.safety = 1e6
    return p


def _game(
    hands: Sequence[str],
    talon: str,
    actions: Sequence[str] = (),
    *,
    ruleset: str = "classic",
    dealer: int = 2,
    scores: Sequence[int] | None = None,
    barrel: Sequence[int] | None = None,
) -> Game:
    g = Game.new(
        ruleset, 0, [f"p{i}" for i in range(len(hands))],
        deals={0: ([parse_cards(h) for h in hands], parse_cards(talon))},
        dealer=dealer, scores=scores, barrel=barrel,
    )  # fmt: skip
    for a in actions:
        g.apply(parse_action(a), seat=g.to_act)
    return g


def _view(g: Game) -> PlayerView:
    assert g.to_act is not None
    return observe(g, g.to_act)


def _finish_setup(g: Game, bot: Bot) -> list[Action]:
    """Let ``bot`` play the declarer's passing and contract; its actions."""
    done: list[Action] = []
    while g.phase in (Phase.PASSING, Phase.CONTRACT):
        a = bot.act(_view(g))
        done.append(a)
        g.apply(a, seat=g.to_act)
    return done


# ---------------------------------------------------------------------- the barrel

# Seat 1 (second hand, dealer 2) holds the heart marriage, three aces and two tens: 60 card
# points and 100 in hand, so a contract of 130 is safe (cap 220). Seat 2 raised to 125.
_STRONG = ["10♠ K♠ Q♠ J♠ 9♠ J♥ 9♥", "A♥ 10♥ K♥ Q♥ A♦ 10♦ A♠", "K♣ Q♣ A♣ 10♣ J♣ 9♣ K♦"]
_STRONG_TALON = "Q♦ J♦ 9♦"
_TO_125 = ["bid 105", "bid 125", "pass"]


@pytest.mark.parametrize("name", _NAMES)
def test_barrel_sitter_bids_past_120_with_a_hand_that_makes_it(name: str) -> None:
    """On the barrel any contract of 120 or more wins the game (RULES.md, the barrel).
    Before: the bid limit on the barrel was exactly 120, so a sitter holding 160 in hand
    passed as soon as an opponent bid 125 (and the opponent's contract went on)."""
    g = _game(_STRONG, _STRONG_TALON, _TO_125, scores=[0, 880, 0], barrel=[0, 3, 0])
    view = _view(g)
    assert view.seat == 1 and view.barrel == (0, 3, 0)
    assert _bot(name).act(view) == Bid(130)


@pytest.mark.parametrize("name", _NAMES)
def test_the_same_hand_off_the_barrel_bids_the_same(name: str) -> None:
    """Pin: off the barrel the same hand raises the same (the fix changes the barrel only)."""
    assert _bot(name).act(_view(_game(_STRONG, _STRONG_TALON, _TO_125))) == Bid(130)


@pytest.mark.parametrize("name", _NAMES)
def test_barrel_sitter_with_a_weak_hand_passes_above_120(name: str) -> None:
    """Pin: a sitter whose hand cannot make 125 does not bid for it (a failed contract
    costs it and drops him off the barrel)."""
    hands = ["A♥ 10♥ K♥ Q♥ A♦ 10♦ A♠", "10♠ K♠ Q♠ J♠ 9♠ J♥ 9♥", "K♣ Q♣ A♣ 10♣ J♣ 9♣ K♦"]
    g = _game(hands, _STRONG_TALON, _TO_125, scores=[0, 880, 0], barrel=[0, 3, 0])
    assert _bot(name).act(_view(g)) == Pass()


class _Fixed(HeuristicBot):
    """The heuristic with its contract estimate fixed: the rule alone under test."""

    def __init__(self, estimate: float) -> None:
        super().__init__()
        self.estimate = estimate

    def contract_estimate(self, view: PlayerView) -> float:
        return self.estimate


def test_heuristic_on_the_barrel_weighs_the_contract_it_must_make() -> None:
    """After winning the auction at 130 on the barrel, a take predicted at 125 makes 120
    more often than not but 130 less often. Before: the heuristic judged the contract at
    120 and named 130 (a failed 130 costs 130 and the barrel); now it weighs 130 and
    concedes for free (it stays on the barrel, RULES.md)."""
    g = _game(_STRONG, _STRONG_TALON, ["bid 105", "bid 125", "pass", "bid 130", "pass"],
              scores=[0, 880, 0], barrel=[0, 3, 0])  # fmt: skip
    bot = _Fixed(125.0 - HeuristicBot.take_offset)
    g.apply(bot.act(_view(g)), seat=1)
    g.apply(bot.act(_view(g)), seat=1)
    view = _view(g)
    assert view.phase is Phase.CONTRACT and view.bid == 130
    assert bot.act(view) == Concede()
    # And a hand predicted at 140 names the bid, 130.
    assert _Fixed(140.0 - HeuristicBot.take_offset).act(view) == Contract(130)


# ---------------------------------------------------------------------- defenders' marriages

# Positions reached by three heuristic bots from these deals (dealer 2); the defender to
# lead holds a marriage and has won a trick. On the true deal the contract is settled (made
# or out of reach) whether he declares or not: declaring is his 40-100 points for nothing.
_DEFENDER_MARRIAGES = {
    "made-120": (
        ["A♠ J♣ Q♦ K♦ 9♥ 10♥ A♥", "9♣ Q♣ K♣ J♦ 10♦ J♥ K♥", "9♠ J♠ Q♠ K♠ A♣ A♦ Q♥"],
        "10♠ 10♣ 9♦",
        "pass, bid 105, bid 110, bid 115, bid 120, pass, give 9♥ to 1, give 9♦ to 2, "
        "contract 120, play A♥, play 9♥, play Q♥, play Q♦ declare, play J♦, play A♦, "
        "play Q♠ declare, play 10♠, play 9♣, play A♠, play J♥, play 9♠, play K♦, "
        "play 10♦, play 9♦",
    ),
    "failed-225": (
        ["A♠ 10♣ A♣ J♦ A♦ 9♥ A♥", "J♠ 9♣ 9♦ Q♦ K♦ 10♦ K♥", "Q♠ 10♠ J♣ Q♣ K♣ J♥ 10♥"],
        "9♠ K♠ Q♥",
        "bid 105, pass, bid 110, bid 115, bid 120, pass, give 9♠ to 1, give 9♥ to 2, "
        "contract 225, play A♥, play K♥, play 9♥, play A♦, play 9♦, play J♥, play A♣, "
        "play 9♣, play J♣, play A♠, play 9♠, play Q♠, play J♦, play 10♦, play 10♠",
    ),
    "two-left": (
        ["9♠ J♠ A♣ A♦ J♥ Q♥ A♥", "10♠ Q♣ K♣ 9♦ J♦ 9♥ 10♥", "Q♠ 9♣ J♣ 10♣ Q♦ K♦ 10♦"],
        "K♠ A♠ K♥",
        "pass, pass, give 9♠ to 1, give J♠ to 2, contract 225, play A♥, play 9♥, play 9♣, "
        "play Q♥ declare, play 10♥, play J♠, play Q♣ declare, play J♣, play A♣, play A♦, "
        "play 9♦, play 10♦, play A♠, play 9♠, play Q♠, play J♥, play K♣, play 10♣",
    ),
    "three-left": (
        ["A♠ K♣ Q♦ 10♦ A♦ 9♥ 10♥", "9♠ 10♣ J♦ K♦ J♥ Q♥ K♥", "J♠ Q♠ K♠ 10♠ 9♣ Q♣ A♥"],
        "J♣ A♣ 9♦",
        "pass, pass, give 9♦ to 1, give J♣ to 2, contract 100, play A♦, play 9♦, play 9♣, "
        "play A♣, play 10♣, play J♣, play A♠, play 9♠, play J♠, play K♣, play J♦, "
        "play Q♣, play 9♥, play J♥, play A♥",
    ),
}


def _defender_position(key: str) -> Game:
    hands, talon, actions = _DEFENDER_MARRIAGES[key]
    return _game(hands, talon, [a.strip() for a in actions.split(",")])


def _true_values(g: Game, view: PlayerView) -> dict[Action, int]:
    """The declarer's take from here of each legal lead, solved on the true deal."""
    p = position_from_view(view)
    hands = [g.hand_mask(s) for s in view.active_seats]
    solver = Solver(
        hands, p.declarer, p.leader, list(p.trick), p.trump, p.won,
        won_nonace=p.won_nonace, **rule_options(view.ruleset),
    )  # fmt: skip
    legal = [a for a in view.legal_actions if isinstance(a, Play)]
    values = solver.root_values([(int(a.card), a.declare) for a in legal])
    return dict(zip(legal, values, strict=True))


@pytest.mark.parametrize("key", sorted(_DEFENDER_MARRIAGES))
@pytest.mark.parametrize("name", _NAMES)
def test_defender_declares_a_marriage_that_changes_nothing_else(key: str, name: str) -> None:
    """Before: ``counting`` (made-120) and ``pimc`` (all four) led the marriage's queen or
    king without declaring it, or led it plain for a tie it broke by list order: the
    solver's utility is the declarer's take, where a defender's marriage scores nothing
    (RULES.md 8: he scores its value at once)."""
    g = _defender_position(key)
    view = _view(g)
    assert view.seat != view.declarer and view.phase is Phase.PLAYING
    values = _true_values(g, view)
    assert any(a.declare for a in values)
    # The set-up: the contract is settled on the true deal whatever this lead is.
    need = position_from_view(view).need
    assert len({v >= need for v in values.values()}) == 1 or need <= 0
    action = _bot(name).act(view)
    assert isinstance(action, Play) and action.declare, action


def test_own_declaration_values() -> None:
    """What a declaring lead scores for the one who leads it."""
    assert own_declaration(Play(parse_cards("Q♥")[0], declare=True)) == 100
    assert own_declaration(Play(parse_cards("K♠")[0], declare=True)) == 40
    assert own_declaration(Play(parse_cards("A♣")[0], declare=True)) == 200
    assert own_declaration(Play(parse_cards("Q♥")[0])) == 0
    assert [s.marriage_value for s in Suit] == [40, 60, 80, 100]
    assert Rank.ACE > Rank.TEN


# ---------------------------------------------------------------------- pinned: found right

_HOPELESS = "9♠ J♠ 9♣ J♣ 9♦ J♦ 9♥"
_OTHERS = ["A♥ 10♥ K♥ Q♥ A♦ 10♦ A♠", "K♣ Q♣ A♣ 10♣ Q♠ K♦ 10♠"]


@pytest.mark.parametrize("name", _NAMES)
def test_hopeless_first_hand_concedes(name: str) -> None:
    """Pin: first hand committed to 100 with nines and jacks (and J♥ Q♦ K♠ in the talon)
    concedes for free (0 and 50 to each opponent) rather than fail (−100)."""
    g = _game([_HOPELESS, *_OTHERS], "J♥ Q♦ K♠", ["pass", "pass"])
    done = _finish_setup(g, _bot(name))
    assert done[-1] == Concede()
    assert [str(a) for a in done[:2]] == ["give 9♠ to 1", "give 9♣ to 2"]


@pytest.mark.parametrize("name", _NAMES)
def test_1001_last_hand_throws_in_a_hopeless_hand_and_plays_a_strong_one(name: str) -> None:
    """Pin (1001, all pass): the last hand throws in nines and jacks, and names a contract
    of 140 with the heart marriage, three aces and two tens (never throws that in)."""
    g = _game([_OTHERS[0], _OTHERS[1], _HOPELESS], "J♥ Q♦ K♠", ["pass", "pass"],
              ruleset="1001")  # fmt: skip
    assert _finish_setup(g, _bot(name))[-1] == ThrowIn()
    g = _game([_HOPELESS, _OTHERS[1], _OTHERS[0]], "J♥ Q♦ K♠", ["pass", "pass"],
              ruleset="1001")  # fmt: skip
    done = _finish_setup(g, _bot(name))
    assert isinstance(done[-1], Contract) and done[-1].amount >= 120, done
    kept = set(g.hand(2))
    assert set(parse_cards("K♥ Q♥ A♥ A♦ A♠")) <= kept


@pytest.mark.parametrize("name", _NAMES)
def test_declarer_declares_as_soon_as_he_may(name: str) -> None:
    """Pin: the declarer, having won the first trick with A♠, leads Q♥ of his heart marriage
    declaring it (100 at once and the trump)."""
    g = _game(
        ["A♠ K♥ Q♥ 9♣ J♣ 9♦ J♦", "10♠ A♥ 10♥ A♦ 10♦ K♠ Q♠", "K♣ Q♣ A♣ 10♣ K♦ Q♦ J♠"],
        "9♠ J♥ 9♥",
        ["pass", "pass", "give 9♠ to 1", "give J♥ to 2", "contract 100", "play A♠",
         "play 9♠", "play J♠"],
    )  # fmt: skip
    view = _view(g)
    assert view.seat == 0
    assert _bot(name).act(view) == Play(parse_cards("Q♥")[0], declare=True)


@pytest.mark.parametrize("name", _NAMES)
def test_1001_four_players_the_dealer_sits_out(name: str) -> None:
    """Pin (1001-4p): the dealer is dealt nothing and never asked; the last hand after
    three passes throws in a hopeless hand, and another seat plays the strong hand."""
    hands = ["", _OTHERS[0], _OTHERS[1], _HOPELESS]
    g = _game(hands, "J♥ Q♦ K♠", ["pass", "pass"], ruleset="1001-4p", dealer=0)
    assert g.to_act == 3 and g.phase is Phase.PASSING
    assert _finish_setup(g, _bot(name))[-1] == ThrowIn()
    g = _game(["", _HOPELESS, _OTHERS[1], _OTHERS[0]], "J♥ Q♦ K♠", ["pass", "pass"],
              ruleset="1001-4p", dealer=0)  # fmt: skip
    done = _finish_setup(g, _bot(name))
    assert isinstance(done[-1], Contract) and done[-1].amount >= 120, done


def _consistent_deals(view: PlayerView, draws: int = 200) -> list[tuple[int, ...]]:
    """The other hands of the deals consistent with ``view`` (seeded draws, deduplicated:
    with three cards a hand or fewer that is every deal, or nearly)."""
    sampler = Sampler(view)
    rng = random.Random(1)
    seen: dict[tuple[int, ...], None] = {}
    for _ in range(draws):
        d = sampler.sample(rng)
        seen[tuple(d.hand_masks[s] for s in view.active_seats)] = None
    return list(seen)


def test_counting_declarer_never_plays_a_dominated_card_in_the_endgame() -> None:
    """Pin: in thirty self-play deals of ``counting``, at every declarer's decision with three
    cards or fewer and the contract still open, no other card makes the contract in every
    consistent deal where its card does and in one more (its endgame search is exact from
    five cards). The heuristic, which has no memory, fails this in 2 of 40 such deals (it
    does not know a ten is a master once its ace has fallen): that is its design."""
    checked = 0
    for seed in range(1000, 1030):
        g = Game.new("classic", seed, ["a", "b", "c"])
        seats = [_bot("counting") for _ in range(3)]
        while g.deal_number == 0:
            view = _view(g)
            action = seats[view.seat].act(view)
            if (
                g.phase is Phase.PLAYING
                and view.seat == view.declarer
                and len(view.hand) <= 3
                and len(view.legal_actions) > 1
            ):
                p = position_from_view(view)
                legal = [a for a in view.legal_actions if isinstance(a, Play)]
                moves = [(int(a.card), a.declare) for a in legal]
                made: list[list[bool]] = [[] for _ in legal]
                if p.need > 0:
                    for hands in _consistent_deals(view):
                        solver = Solver(
                            list(hands), p.declarer, p.leader, list(p.trick), p.trump, p.won,
                            won_nonace=p.won_nonace, **rule_options(view.ruleset),
                        )  # fmt: skip
                        for i, v in enumerate(solver.root_values(moves)):
                            made[i].append(v >= p.need)
                    mine = made[legal.index(action)]  # type: ignore[arg-type]
                    for other in made:
                        better = all(a >= b for a, b in zip(other, mine, strict=True))
                        assert not (better and sum(other) > sum(mine)), (seed, view.hand)
                    checked += 1
            g.apply(action, seat=view.seat)
    # (7 such decisions in the first 20 deals until round 45 named lower contracts on hands
    # with several marriages, 5 since: 30 deals keep the coverage)
    assert checked >= 7, checked
