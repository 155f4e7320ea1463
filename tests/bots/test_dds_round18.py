"""bots._dds.Solver against a plain minimax written from RULES.md (not from the solver).

Small endgames (2–5 cards each), at a trick's start and in the middle of a trick, under
every option the solver models: must_beat, marriage_needs_trick, trump changes by
marriages, the ace marriage. The solver's documented model: the declarer maximizes his
future take (card points of the tricks he wins, the trick in progress included, plus the
marriages he declares from now on), the two defenders minimize it; inside the search a
player leading a K or Q of a marriage he may declare always declares it (and the ace
marriage likewise); at the root ``root_values`` scores declaring and not declaring apart.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Iterable
from dataclasses import dataclass

import pytest

from bots._dds import Solver, position_from_view, rule_options
from bots.heuristic import HeuristicBot
from engine import PRESETS, Game, Phase, Play, Ruleset, observe

_POINTS = (0, 2, 3, 4, 10, 11)  # 9, J, Q, K, 10, A (RULES.md, Cards)
_MARRIAGE = (40, 60, 80, 100)  # ♠ ♣ ♦ ♥
_ACES = (1 << 5) | (1 << 11) | (1 << 17) | (1 << 23)


def _pts(c: int) -> int:
    return _POINTS[c % 6]


def _mask(cards: Iterable[int]) -> int:
    return sum(1 << int(c) for c in cards)


def _cards(m: int) -> list[int]:
    return [c for c in range(24) if m >> c & 1]


@dataclass(frozen=True)
class Rules:
    must_beat: bool
    needs_trick: bool
    ace_marriage: bool


def _winner(trick: tuple[int, ...], trump: int) -> int:
    """RULES.md §7: the highest trump, else the highest card of the led suit."""
    best = 0
    for i, c in enumerate(trick):
        b = trick[best]
        if (c // 6 == trump and b // 6 != trump) or (c // 6 == b // 6 and c % 6 > b % 6):
            best = i
    return best


def legal(hand: int, trick: tuple[int, ...], trump: int, rules: Rules) -> list[int]:
    """RULES.md §7: follow suit; else trump if a trump is set; else anything. must_beat:
    among the obliged cards, one that beats the card taking the trick, if he has one."""
    cards = _cards(hand)
    if not trick:
        return cards
    led = trick[0] // 6
    obliged = [c for c in cards if c // 6 == led]
    if not obliged and trump >= 0:
        obliged = [c for c in cards if c // 6 == trump]
    if not obliged:
        return cards
    if rules.must_beat:
        best = trick[_winner(trick, trump)]
        beating = [c for c in obliged if _winner((best, c), trump) == 1]
        if beating:
            return beating
    return obliged


def declarations(hand: int, card: int, won: bool, won_nonace: bool, rules: Rules) -> bool:
    """May a lead of ``card`` declare (RULES.md §8, §9)?"""
    if card % 6 in (2, 3):
        partner = card - 1 if card % 6 == 3 else card + 1
        return bool(hand >> partner & 1) and (won or not rules.needs_trick)
    if card % 6 == 5:
        return rules.ace_marriage and hand & _ACES == _ACES and won_nonace
    return False


class Reference:
    """Plain minimax (memoized on the whole state, no pruning)."""

    def __init__(self, declarer: int, rules: Rules) -> None:
        self.declarer = declarer
        self.rules = rules
        self.value = functools.lru_cache(maxsize=None)(self._value)

    def _value(
        self,
        hands: tuple[int, int, int],
        leader: int,
        trick: tuple[int, ...],
        trump: int,
        won: int,
        won_nonace: int,
    ) -> int:
        p = (leader + len(trick)) % 3
        if not trick and not hands[p]:
            return 0
        vals = [
            self.after(hands, leader, trick, trump, won, won_nonace, c, declare=None)
            for c in legal(hands[p], trick, trump, self.rules)
        ]
        return max(vals) if p == self.declarer else min(vals)

    def after(
        self,
        hands: tuple[int, int, int],
        leader: int,
        trick: tuple[int, ...],
        trump: int,
        won: int,
        won_nonace: int,
        card: int,
        declare: bool | None,
    ) -> int:
        """The value after playing ``card``; ``declare`` None: declare whenever allowed."""
        p = (leader + len(trick)) % 3
        hand = hands[p]
        extra = 0
        if not trick:
            may = declarations(
                hand, card, bool(won >> p & 1), bool(won_nonace >> p & 1), self.rules
            )
            if may and declare is not False:
                if card % 6 == 5:
                    extra = 200 if p == self.declarer else 0
                else:
                    trump = card // 6
                    extra = _MARRIAGE[trump] if p == self.declarer else 0
        nh = list(hands)
        nh[p] = hand & ~(1 << card)
        new = (*trick, card)
        if len(new) < 3:
            return extra + self.value(tuple(nh), leader, new, trump, won, won_nonace)
        w = (leader + _winner(new, trump)) % 3
        gain = sum(_pts(c) for c in new) if w == self.declarer else 0
        nonace = new[_winner(new, trump)] % 6 != 5
        return (
            extra
            + gain
            + self.value(
                tuple(nh), w, (), trump, won | 1 << w, won_nonace | (1 << w if nonace else 0)
            )
        )


@dataclass
class Position:
    hands: tuple[int, int, int]
    declarer: int
    leader: int
    trick: tuple[int, ...]
    trump: int
    won: int
    won_nonace: int
    rules: Rules

    def solver(self) -> Solver:
        return Solver(
            self.hands, self.declarer, self.leader, self.trick, self.trump, self.won,
            marriage_needs_trick=self.rules.needs_trick, must_beat=self.rules.must_beat,
            ace_marriage=self.rules.ace_marriage, won_nonace=self.won_nonace,
        )  # fmt: skip

    def to_move(self) -> int:
        return (self.leader + len(self.trick)) % 3


def random_position(rng: random.Random, n: int, mid_trick: bool) -> Position:
    """Three hands of ``n`` cards (often a marriage or all four aces in one), the options,
    trump and won tricks at random; ``mid_trick``: then 1 or 2 legal cards played (a lead
    may declare, changing the trump)."""
    deck = list(range(24))
    rng.shuffle(deck)
    hands = [0, 0, 0]
    kind = rng.random()
    if kind < 0.3 and n >= 4:
        who = rng.randrange(3)
        hands[who] = _ACES
        deck = [c for c in deck if c % 6 != 5]
    elif kind < 0.8:
        for suit in rng.sample(range(4), rng.choice((1, 2))):
            who = rng.randrange(3)
            if hands[who].bit_count() <= n - 2:
                hands[who] |= 3 << (6 * suit + 2)
                deck = [c for c in deck if c not in (6 * suit + 2, 6 * suit + 3)]
    for p in range(3):
        while hands[p].bit_count() < n:
            hands[p] |= 1 << deck.pop()
    rules = Rules(rng.random() < 0.5, rng.random() < 0.7, rng.random() < 0.8)
    won = rng.randrange(8)
    won_nonace = won & rng.randrange(8)
    trump = rng.choice((-1, -1, 0, 1, 2, 3))
    leader = rng.randrange(3)
    trick: tuple[int, ...] = ()
    if mid_trick:
        for _ in range(rng.choice((1, 2))):
            p = (leader + len(trick)) % 3
            c = rng.choice(legal(hands[p], trick, trump, rules))
            if (
                not trick
                and c % 6 in (2, 3)
                and declarations(hands[p], c, bool(won >> p & 1), False, rules)
                and rng.random() < 0.7
            ):
                trump = c // 6
            hands[p] &= ~(1 << c)
            trick = (*trick, c)
    return Position(
        (hands[0], hands[1], hands[2]), rng.randrange(3), leader, trick, trump, won,
        won_nonace, rules,
    )  # fmt: skip


def check_position(pos: Position, rng: random.Random) -> None:
    ref = Reference(pos.declarer, pos.rules)
    args = (pos.hands, pos.leader, pos.trick, pos.trump, pos.won, pos.won_nonace)
    exact = ref.value(*args)
    p = pos.to_move()
    assert pos.solver().legal_cards() == legal(pos.hands[p], pos.trick, pos.trump, pos.rules)
    assert pos.solver().value() == exact, (pos, exact)
    # Zero-window tests, on a fresh solver and on one reused for many thresholds (its table
    # keeps bounds from other windows), in random order.
    top = exact + 12
    needs = list(range(-1, top))
    rng.shuffle(needs)
    shared = pos.solver()
    for need in needs:
        assert shared.probe(need) == (exact >= need), (pos, exact, need)
    for need in rng.sample(needs, 4):
        assert pos.solver().probe(need) == (exact >= need), (pos, exact, need)
    # Root moves: every legal card, declaring and not where the lead allows it.
    moves: list[tuple[int, bool]] = []
    for c in legal(pos.hands[p], pos.trick, pos.trump, pos.rules):
        moves.append((c, False))
        if not pos.trick and declarations(
            pos.hands[p], c, bool(pos.won >> p & 1), bool(pos.won_nonace >> p & 1), pos.rules
        ):
            moves.append((c, True))
    want = [ref.after(*args, c, declare=d) for c, d in moves]
    assert shared.root_values(moves) == want, (pos, moves, want)
    for need in rng.sample(needs, 4):
        got = pos.solver().root_values(moves, need - 1, need)
        for v, w in zip(got, want, strict=True):
            # Fail-soft: at or below alpha an upper bound, at or above beta a lower bound.
            assert (v >= need) == (w >= need), (pos, moves, need, got, want)
            assert (w <= v) if v <= need - 1 else (w >= v) if v >= need else v == w


@pytest.mark.parametrize("mid_trick", [False, True], ids=["trick start", "mid trick"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_solver_matches_minimax_from_the_rules(n: int, mid_trick: bool) -> None:
    rng = random.Random(n * 10 + mid_trick)
    for _ in range(40):
        check_position(random_position(rng, n, mid_trick), rng)


@pytest.mark.slow
@pytest.mark.parametrize("mid_trick", [False, True], ids=["trick start", "mid trick"])
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_solver_matches_minimax_from_the_rules_long(n: int, mid_trick: bool) -> None:
    rng = random.Random(1000 + n * 10 + mid_trick)
    for _ in range(400 if n < 5 else 60):
        check_position(random_position(rng, n, mid_trick), rng)


_RULESETS = [
    PRESETS["classic"],
    PRESETS["1001-4p"],
    dataclasses.replace(PRESETS["classic"], must_beat=True, name="mb"),
    dataclasses.replace(PRESETS["1001"], marriage_needs_trick=False, must_beat=True, name="mb-nt"),
    dataclasses.replace(PRESETS["classic"], ace_marriage=False, name="no-aces"),
]


def _real_deal(
    rng: random.Random, rules: Ruleset, dealer: int
) -> tuple[list[list[int]], list[int]]:
    """A deal holding marriages or all four aces in one hand more often than chance."""
    deck = list(range(24))
    rng.shuffle(deck)
    active = [s for s in range(rules.players) if rules.players == 3 or s != dealer]
    hands: list[list[int]] = [[] for _ in range(rules.players)]
    if rng.random() < 0.4:
        hands[rng.choice(active)] = [5, 11, 17, 23]
    else:
        s = rng.choice(active)
        hands[s] = [20, 21, 14, 15]
    deck = [c for c in deck if all(c not in h for h in hands)]
    for s in active:
        while len(hands[s]) < 7:
            hands[s].append(deck.pop())
    return hands, deck


@pytest.mark.parametrize("rules", _RULESETS, ids=lambda r: r.name)
def test_real_positions(rules: Ruleset) -> None:
    """At every card of real games (random and heuristic players): the reference's rules
    are the engine's (legal cards and declarations, through ``position_from_view``), and
    from 4 cards on the solver's value of the true position is the reference's."""
    checked = 0
    for seed in range(6):
        rng = random.Random(seed)
        n = rules.players
        dealer = rng.randrange(n)
        g = Game.new(
            rules, seed, [f"p{i}" for i in range(n)], dealer=dealer,
            deals={0: _real_deal(rng, rules, dealer)},
        )  # fmt: skip
        bot = HeuristicBot()
        while g.deal_number == 0:
            seat = g.to_act
            assert seat is not None
            view = observe(g, seat)
            if g.phase is Phase.PLAYING:
                pos = position_from_view(view)
                decl = g.declarer
                assert decl is not None and g.contract is not None
                taken = g.card_points(decl) + g.marriage_points(decl)
                assert pos.need == g.contract - taken
                assert pos.active[pos.declarer] == decl
                hands = tuple(_mask(g.hand(s)) for s in pos.active)
                o = Rules(rules.must_beat, rules.marriage_needs_trick, rules.ace_marriage)
                me = pos.me
                cards = legal(hands[me], pos.trick, pos.trump, o)
                plays = [a for a in view.legal_actions if isinstance(a, Play)]
                assert {int(a.card) for a in plays} == set(cards)
                declares = {int(a.card) for a in plays if a.declare}
                want = {
                    c
                    for c in cards
                    if not pos.trick
                    and declarations(
                        hands[me], c, bool(pos.won >> me & 1), bool(pos.won_nonace >> me & 1), o
                    )
                }
                assert declares == want
                if hands[me].bit_count() <= 4:
                    args = (hands[0], hands[1], hands[2])
                    ref = Reference(pos.declarer, o)
                    exact = ref.value(
                        args, pos.leader, pos.trick, pos.trump, pos.won, pos.won_nonace
                    )
                    solver = Solver(
                        args, pos.declarer, pos.leader, pos.trick, pos.trump, pos.won,
                        won_nonace=pos.won_nonace, **rule_options(rules),
                    )  # fmt: skip
                    assert solver.value() == exact
                    checked += 1
            action = bot.act(view) if rng.random() < 0.7 else rng.choice(view.legal_actions)
            g.apply(action, seat=seat)
    assert checked > 0
