"""The bundled bots under every ruleset option, round 36.

The bots were tuned on the presets; these tests play and probe them under rulesets drawn
from every option a ruleset may set (each value, in combination; 3 and 4 players) and pin
what was checked:

- no bot raises, and none answers illegally (``play_local(strict=True)`` turns either into
  an exception): no bid above a cap, no card against must-follow/must-trump/``must_beat``,
  no marriage before a won trick where ``marriage_needs_trick`` is on;
- ``pimc``'s sampler never finds the view inconsistent (``stats.sampler_errors``), and the
  facts it reads from a view (:func:`sdk.sampling.constraints_of`: cards held, voids,
  ``must_beat`` limits, the marriages a bid or contract proves, the hidden passes, the
  face-down talon) always hold for the true deal;
- the solver (:mod:`bots._dds`, with ``rule_options``) models the rules as the engine does:
  its legal cards and declarable marriages equal the engine's at every decision, and its
  exact value equals a brute force over the engine itself (always declaring, as the solver
  does) on endgames, four-aces deals included (the ace marriage and its non-ace trick);
- every bot concedes a hopeless bid wherever ``concede`` allows it, and under ``concede =
  "off"`` names a contract.

No defect was found in ``bots/`` or ``sdk/sampling.py`` by these sweeps: the tests pin the
behaviour. Searches end on their node budgets (the wall-clock backstop is set out of reach)
and every random choice is seeded: every answer is deterministic.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from bots._dds import Solver, position_from_view, rule_options
from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import Concede, Contract, Game, Pass, Phase, Play, Ruleset, observe, parse_cards
from engine.cards import MARRIAGE_VALUES, mask_of
from engine.game import trick_winner
from engine.rules import PRESETS
from engine.tables import POINTS
from sdk.bot import Bot
from sdk.local import play_local
from sdk.sampling import TALON, Sampler, constraints_of

_ACES = (5, 11, 17, 23)
_ACE_MASK = sum(1 << c for c in _ACES)


def draw_ruleset(rng: random.Random) -> Ruleset:
    """A ruleset with every option drawn (each value of each), valid by construction."""
    d = PRESETS[rng.choice(["classic", "1001"])].to_dict()
    d["players"] = rng.choice([3, 4])
    d["target"] = rng.choice([1000, 1001, 500, 300])
    d["bid_step"] = rng.choice([5, 10])
    d["opening_bid"] = rng.choice([v for v in (40, 60, 80, 100, 120) if v % d["bid_step"] == 0])
    flags = ("first_hand_commits", "ace_marriage_counts_for_bid", "talon_visible", "must_beat",
             "marriage_needs_trick", "ace_marriage", "barrel", "ask_forced")  # fmt: skip
    for key in flags:
        d[key] = rng.random() < 0.5
    d["concede"] = rng.choice(["free", "penalty", "off"])
    d["concede_pays"] = rng.choice(["half", "none"])
    d["barrel_mode"] = rng.choice(["many", "one"])
    d["all_pass"] = rng.choice(["first_hand", "last_hand"])
    d["rounding"] = rng.choice([1, 5, 10])
    d["barrel_at"] = rng.choice([100, 200, 880] if d["target"] > 880 else [100, 200])
    d["barrel_deals"] = rng.choice([1, 3])
    d["barrel_penalty"] = rng.choice([0, 120])
    d["throw_in_bonus"] = rng.choice([0, 50])
    d["nines_talon_value"] = rng.choice([0, 100])
    d["name"] = "drawn"
    return Ruleset(**d)


def _pimc(budget: float = 0.02, samples: int = 8, delegate: bool = True) -> PimcBot:
    p = PimcBot(budget=budget, samples=samples, seed=1)
    p.safety = 1e6  # (nodes only: no wall-clock cut)
    p._counting.safety = 1e6
    if not delegate:
        p.delegate = frozenset()  # pimc's own auction, passing and contract searches
    return p


def _counting() -> CountingBot:
    c = CountingBot()
    c.safety = 1e6
    return c


def _checked(make: Callable[[], Bot], found: list[str]) -> Callable[[], Bot]:
    """``make``'s bot, comparing at each of its plays the solver's legal cards and
    declarable marriages with the engine's (a view's cards alone decide them)."""

    def factory() -> Bot:
        bot = make()
        inner = bot.act

        def act(view):  # type: ignore[no-untyped-def]
            if view.phase is Phase.PLAYING:
                pos = position_from_view(view)
                hands = [0, 0, 0]
                hands[pos.me] = mask_of(view.hand)
                s = Solver(hands, pos.declarer, pos.leader, pos.trick, pos.trump, pos.won,
                           won_nonace=pos.won_nonace, **rule_options(view.ruleset))  # fmt: skip
                engine_cards = sorted({int(a.card) for a in view.legal_actions})
                if s.legal_cards() != engine_cards:
                    found.append(f"legal {view.ruleset.to_dict()} {pos} {engine_cards}")
                if not pos.trick:
                    kq = {int(a.card) for a in view.legal_actions if a.declare and a.card % 6 != 5}
                    mine = {
                        c
                        for c in engine_cards
                        if s.can_declare_in(c, hands[pos.me], pos.me, pos.won)
                    }
                    if kq != mine:
                        found.append(f"declare {view.ruleset.to_dict()} {pos} {kq} {mine}")
            return inner(view)

        bot.act = act  # type: ignore[method-assign]
        return bot

    return factory


def _sweep(first: int, count: int, deals: int, delegate: bool = True) -> None:
    found: list[str] = []
    for i in range(first, first + count):
        rng = random.Random(i)
        rules = draw_ruleset(rng)
        pimcs: list[PimcBot] = []

        def pimc(pimcs: list[PimcBot] = pimcs) -> Bot:
            p = _pimc(delegate=delegate)
            pimcs.append(p)
            return p

        pool: list[Callable[[], Bot]] = [pimc, _counting, HeuristicBot]
        makers = [pimc] + [rng.choice(pool) for _ in range(rules.players - 1)]
        rng.shuffle(makers)
        m = play_local([_checked(f, found) for f in makers], rules, seed=i, max_deals=deals,
                       strict=True)  # fmt: skip
        assert m.incidents == ()
        assert 1 <= len(m.record["deals"]) <= deals
        for p in pimcs:
            assert p.stats.sampler_errors == 0, (i, rules.to_dict())
            assert p.stats.decisions > 0
    assert found == []


def test_bots_play_drawn_rulesets_legally() -> None:
    """heuristic, counting and pimc (with its default delegation) play 10 matches of 3
    deals under drawn rulesets: no exception, no illegal answer, no sampler error, the
    solver's legal cards and marriages the engine's at every play."""
    _sweep(0, 10, 3)


def test_pimc_own_searches_under_drawn_rulesets() -> None:
    """pimc's own auction, passing and contract searches (``delegate`` empty: they read the
    other bids through the sampler) under drawn rulesets: no sampler error."""
    _sweep(500, 5, 3, delegate=False)


@pytest.mark.slow
def test_bots_play_drawn_rulesets_sweep() -> None:
    """The larger sweep of this round: 120 matches of 5 deals, 40 with pimc's own searches."""
    _sweep(1000, 80, 5)
    _sweep(3000, 40, 5, delegate=False)


# ---------------------------------------------------------------- the sampler's facts


def _holds(extra: dict[int, int], truth: dict[int, int]) -> bool:
    return all(m & ~truth.get(s, 0) == 0 for s, m in extra.items())


def _false_facts(view, truth: dict[int, int]) -> list[str]:  # type: ignore[no-untyped-def]
    """The facts of ``constraints_of(view)`` that the true deal ``truth`` breaks."""
    c = constraints_of(view)
    masks = [truth.get(s, 0) for s in range(c.n)]
    out = [f"fixed {s}" for s, m in c.fixed.items() if m & ~truth.get(s, 0)]
    out += [f"excluded {s}" for s, m in c.excluded.items() if m & truth.get(s, 0)]
    out += [
        f"count {s}" for s, n in c.counts.items() if truth.get(s, 0).bit_count() != n
    ]  # fmt: skip
    out += [f"any_of {f}" for f in c.any_of if not any(_holds(a, truth) for a in f)]
    if c.cases and not any(
        _holds(extra, truth)
        and all(any(_holds(a, truth) for a in f) for f in (c.case_any_of or [[]] * len(c.cases))[i])
        and ((c.case_reading or [None] * len(c.cases))[i] is None
             or c.case_reading[i].weight(masks) > 0)  # type: ignore[union-attr]
        for i, (_, extra) in enumerate(c.cases)
    ):  # fmt: skip
        out.append("no case holds")
    if c.reading is not None and c.reading.weight(masks) <= 0:
        out.append("reading")
    return out


@pytest.mark.parametrize("seed", range(4))
def test_sampler_facts_hold_for_the_true_deal(seed: int) -> None:
    """At every decision of a match under a drawn ruleset, every active seat's view yields
    facts the true deal meets (a false fact would make the sampler draw deals that cannot
    be, or none), and the sampler draws a deal from it."""
    rng = random.Random(100 + seed)
    rules = dataclasses.replace(draw_ruleset(rng), max_deals=4)
    g = Game.new(rules, seed, [f"p{k}" for k in range(rules.players)])
    bots = [rng.choice([HeuristicBot, _counting])() for _ in range(rules.players)]
    views = 0
    while g.phase is not Phase.GAME_OVER:
        truth = {s: g.hand_mask(s) for s in range(rules.players)}
        if g.phase is Phase.BIDDING:
            truth[TALON] = mask_of(g.talon)
        for s in g.active_seats:
            view = observe(g, s)
            assert _false_facts(view, truth) == [], (seed, s, g.phase, rules.to_dict())
            if views % 7 == 0:
                Sampler(view).sample(rng)  # (a ValueError if it finds none)
            views += 1
        seat = g.to_act
        assert seat is not None
        g.apply_trusted(bots[seat].act(observe(g, seat)))
    assert views > 100


# ---------------------------------------------------------------- the solver vs the engine


def _brute(g: Game, declarer: int) -> int:
    """The declarer's future take by minimax over the engine's own legal plays, a marriage
    (or the ace marriage) always declared where it may be (as the solver models it)."""
    if g.phase is not Phase.PLAYING or g.deal_results:
        return 0
    legal = g.legal_actions()
    declared = {int(a.card) for a in legal if isinstance(a, Play) and a.declare}
    seat = g.to_act
    best: int | None = None
    for a in legal:
        assert isinstance(a, Play)
        c = int(a.card)
        if c in declared and not a.declare:
            continue
        gain = 0
        if a.declare and seat == declarer:
            gain = 200 if c % 6 == 5 else MARRIAGE_VALUES[c // 6]
        if len(g.trick) == 2:
            cards = [int(x) for _, x in g.trick] + [c]
            seats = [s for s, _ in g.trick] + [seat]
            if seats[trick_winner(cards, g.trump)] == declarer:
                gain += sum(POINTS[x] for x in cards)
        h = g.clone()
        h.apply_trusted(a)
        v = gain + _brute(h, declarer)
        if best is None or (v > best if seat == declarer else v < best):
            best = v
    assert best is not None
    return best


def _endgame(i: int, stop: int = 0) -> tuple[Game, Ruleset] | None:
    """A classic deal (half of them with the four aces in one hand) under drawn
    ``must_beat`` / ``marriage_needs_trick`` / ``ace_marriage``, bid and played at random
    (declaring when it may, mostly) to a trick start with 2 or 3 cards in each hand (or
    ``stop``)."""
    rng = random.Random(i)
    rules = dataclasses.replace(
        PRESETS["classic"], must_beat=rng.random() < 0.5,
        marriage_needs_trick=rng.random() < 0.5, ace_marriage=rng.random() < 0.7,
        concede="off", barrel=False,
    )  # fmt: skip
    deck = list(range(24))
    rng.shuffle(deck)
    if rng.random() < 0.5:
        rest = [c for c in deck if c not in _ACES]
        hands = [[*_ACES, *rest[:3]], rest[3:10], rest[10:17]]
        rng.shuffle(hands)
        talon = rest[17:20]
    else:
        hands, talon = [deck[0:7], deck[7:14], deck[14:21]], deck[21:]
    g = Game.new(rules, 1, ["a", "b", "c"], deals={0: (hands, talon)}, dealer=2)
    holder = next((s for s in range(3) if g.hand_mask(s) & _ACE_MASK == _ACE_MASK), None)
    # The four aces kept to the end (played before, they leave no ace marriage to model).
    stop = stop or (4 if holder is not None else rng.choice([2, 3]))
    while g.phase is not Phase.PLAYING or len(g.hand(g.to_act or 0)) > stop or g.trick:
        if g.deal_results or g.phase is Phase.GAME_OVER:
            return None
        legal = g.legal_actions()
        if g.phase is Phase.BIDDING:
            a = next((x for x in legal if isinstance(x, Pass)), legal[0])
        elif g.phase is Phase.CONTRACT:
            a = next(x for x in legal if isinstance(x, Contract))
        else:
            if g.to_act == holder and any(int(x.card) % 6 != 5 for x in legal):  # type: ignore[union-attr]
                legal = tuple(x for x in legal if int(x.card) % 6 != 5)  # type: ignore[union-attr]
            declaring = [x for x in legal if isinstance(x, Play) and x.declare]
            a = rng.choice(declaring) if declaring and rng.random() < 0.7 else rng.choice(legal)
        g.apply_trusted(a)
    return g, rules


def test_solver_values_match_the_engine_on_endgames() -> None:
    """The solver's exact value equals a brute force over the engine's legal plays on 120
    endgames under every combination of the play options, four-aces deals included."""
    checked = aces = 0
    for i in range(120):
        made = _endgame(i)
        if made is None:
            continue
        g, rules = made
        active = g.active_seats
        pos = {s: k for k, s in enumerate(active)}
        assert g.declarer is not None and g.to_act is not None
        view = observe(g, g.to_act)
        p = position_from_view(view)
        solver = Solver([g.hand_mask(s) for s in active], pos[g.declarer], p.leader, (),
                        p.trump, p.won, won_nonace=p.won_nonace, **rule_options(rules))  # fmt: skip
        assert solver.value() == _brute(g, g.declarer), (i, rules.to_dict())
        checked += 1
        aces += solver.aces
    assert checked > 90 and aces >= 4


@pytest.mark.parametrize("seed", [7, 173, 198, 249])
def test_solver_models_must_beat_in_endgames(seed: int) -> None:
    """Endgames of four cards under ``must_beat`` where the duty to beat changes the
    declarer's take (a solver without it, ``must_beat=False``, gets each wrong): the
    solver's value is the engine's brute force."""
    made = _endgame(seed, stop=4)
    assert made is not None
    g, rules = made
    assert rules.must_beat and g.declarer is not None and g.to_act is not None
    active = g.active_seats
    pos = {s: k for k, s in enumerate(active)}
    p = position_from_view(observe(g, g.to_act))
    hands = [g.hand_mask(s) for s in active]
    args = (hands, pos[g.declarer], p.leader, (), p.trump, p.won)
    truth = _brute(g, g.declarer)
    assert Solver(*args, won_nonace=p.won_nonace, **rule_options(rules)).value() == truth
    # (the case matters: without the duty the value differs)
    loose = {**rule_options(rules), "must_beat": False}
    assert Solver(*args, won_nonace=p.won_nonace, **loose).value() != truth  # type: ignore[arg-type]


# ---------------------------------------------------------------- concession

_WEAK = (
    [parse_cards("9♠ J♠ 9♣ J♣ 9♦ J♦ Q♠"), parse_cards("A♠ 10♠ K♠ A♣ 10♣ K♣ A♦"),
     parse_cards("10♦ K♦ A♥ 10♥ K♥ Q♥ Q♣")],
    parse_cards("9♥ J♥ Q♦"),
)  # fmt: skip


def _at_contract(rules: Ruleset, make: Callable[[], Bot]) -> tuple[Game, Bot]:
    """Seat 0 (first hand, committed to 100) holds nines and jacks, the others pass: the
    bot in seat 0 takes the talon, passes its two cards and stands at the contract."""
    g = Game.new(rules, 1, ["a", "b", "c"], deals={0: _WEAK}, dealer=2)
    bot = make()
    while g.phase is not Phase.CONTRACT:
        if g.phase is Phase.BIDDING:
            g.apply_trusted(next(a for a in g.legal_actions() if isinstance(a, Pass)))
        else:
            g.apply_trusted(bot.act(observe(g, 0)))
    assert g.to_act == 0 and g.bid == 100
    return g, bot


_MAKERS: dict[str, Callable[[], Bot]] = {
    "heuristic": HeuristicBot,
    "counting": _counting,
    "pimc": lambda: _pimc(budget=0.05, samples=8),
    "pimc-own": lambda: _pimc(budget=0.05, samples=8, delegate=False),
}


# (pimc's own contract search under penalty + half played this hand on until round 37,
# which has it weigh the defenders' takes: tests/bots/test_judgement_round37.py)
_CONCEDING = [(name, concede, pays) for name in _MAKERS
              for concede, pays in [("free", "half"), ("free", "none"), ("penalty", "half"),
                                    ("penalty", "none")]]  # fmt: skip


@pytest.mark.parametrize(("name", "concede", "pays"), _CONCEDING)
def test_a_hopeless_bid_is_conceded_where_the_rules_allow(
    name: str, concede: str, pays: str
) -> None:
    """100 on a hand of nines and jacks (the defenders hold every ace, ten and king): the
    declarer takes next to nothing, and conceding costs him no more than failing (−100, or
    0 under ``free``) while it denies the defenders their takes: every bot concedes."""
    rules = dataclasses.replace(PRESETS["classic"], concede=concede, concede_pays=pays,
                                barrel=False)  # fmt: skip
    g, bot = _at_contract(rules, _MAKERS[name])
    assert bot.act(observe(g, 0)) == Concede()


@pytest.mark.parametrize("name", list(_MAKERS))
def test_no_concession_offered_under_concede_off(name: str) -> None:
    """``concede = "off"``: the same hand names a contract (the bid), no fallback needed."""
    rules = dataclasses.replace(PRESETS["classic"], concede="off", barrel=False)
    g, bot = _at_contract(rules, _MAKERS[name])
    view = observe(g, 0)
    assert not any(isinstance(a, Concede) for a in view.legal_actions)
    assert bot.act(view) == Contract(100)
