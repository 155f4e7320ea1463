"""Round 34: a correctness audit of the bot ladder's search, with oracles built on the engine.

A silent bug in the search makes the strong bot weak without any test failing, so each piece
is checked here against the engine itself, not against a second reading of the rules:

1. ``bots._dds.Solver`` against a plain minimax over ``Game.legal_actions()`` (cloning the
   game, no pruning, no tables) on small endgames reached by real play in every preset and
   rule file: the same values for the position and for every root move, and the move with
   the best root value is an optimal one. The utility is the documented one: the
   declarer's future take (card points of the tricks he wins, the trick in progress
   included, plus the marriages he declares), maximized by him and minimized by the two
   defenders as a coalition; below the root a lead of a declarable K/Q (or an ace of the
   four) always declares — the engine's ``declare=False`` twin is dropped there only.
2. Every deal ``sdk.sampling.Sampler`` draws is a deal the view could have come from: the
   test rebuilds a whole history from the drawn hands (choosing the passes and, when hidden,
   the talon the view does not show), replays the deal's actions through ``Game.apply`` and
   compares ``observe`` with the view. That one oracle covers hand sizes, played and passed
   cards, voids, ``must_beat``, marriages and every bidding and contract cap at once. Where
   the sampler claims exactness, a chi-square test (fixed seed) compares its draws with
   the number of histories behind each deal, counted by the same replay.
3. Every bundled bot plays only legal actions under every preset and ``rulesets/*.toml``,
   and replays the same match for the same seed.
4. ``pimc``'s budget is work: the solver nodes of a decision stay within the budget's node
   count, and a clock that never moves (or one far slower) changes no decision.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as HPhase
from hypothesis import strategies as st

from bots import _dds, counting, load, pimc
from bots._dds import Budget, SearchTimeout, Solver, position_from_view, rule_options
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import (
    PRESETS,
    Action,
    Bid,
    Concede,
    Game,
    Give,
    IllegalActionError,
    Phase,
    Play,
    PlayerView,
    Ruleset,
    ThrowIn,
    load_ruleset,
    observe,
)
from engine.cards import bit_indices
from engine.game import cap_of
from sdk import hand as sdk_hand
from sdk.local import play_local
from sdk.sampling import Sampler

ROOT = Path(__file__).resolve().parents[2]
RULE_FILES = sorted((ROOT / "rulesets").glob("*.toml"))


def _named(path: Path) -> Ruleset:
    return load_ruleset(str(path))


#: The presets and every rule file of the repository (house-penalty: must_beat and a
#: penalty concession; tournament-1001: the talon hidden from the defenders).
RULESETS: list[Ruleset] = [PRESETS[p] for p in sorted(PRESETS)] + [_named(p) for p in RULE_FILES]
RULE_IDS = [r.name for r in RULESETS]
#: And the options that change what a view reveals, which no file sets: the 4-player dealer
#: without the talon, and declarations without a trick won.
VARIANTS: list[Ruleset] = [
    *RULESETS,
    dataclasses.replace(
        PRESETS["1001-4p"], name="4p-hidden-mb", talon_visible=False, must_beat=True
    ),
    dataclasses.replace(PRESETS["classic"], name="no-trick-needed", marriage_needs_trick=False),
]
VARIANT_IDS = [r.name for r in VARIANTS]
_ACES = (1 << 5) | (1 << 11) | (1 << 17) | (1 << 23)


def _mask(cards: Any) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def _rich_deal(
    rng: random.Random, rules: Ruleset, dealer: int
) -> tuple[list[list[int]], list[int]]:
    """A deal that often puts marriages (or the four aces) in one hand: random deals seldom
    do, and they are what changes trumps, caps and the solver's tree."""
    deck = list(range(24))
    rng.shuffle(deck)
    n = rules.players
    active = [s for s in range(n) if n == 3 or s != dealer]
    hands: list[list[int]] = [[] for _ in range(n)]
    kind = rng.random()
    if kind < 0.2:
        who = rng.choice(active)
        hands[who] = [5, 11, 17, 23]
    elif kind < 0.8:
        for suit in rng.sample(range(4), rng.choice((1, 2, 2, 3))):
            who = rng.choice(active)
            if len(hands[who]) <= 5:
                hands[who] += [6 * suit + 2, 6 * suit + 3]
    taken = {c for h in hands for c in h}
    deck = [c for c in deck if c not in taken]
    for s in active:
        while len(hands[s]) < 7:
            hands[s].append(deck.pop())
    return hands, deck[:3]


def _new_game(rules: Ruleset, rng: random.Random) -> Game:
    dealer = rng.randrange(rules.players)
    names = [f"p{i}" for i in range(rules.players)]
    return Game.new(rules, 0, names, dealer=dealer, deals={0: _rich_deal(rng, rules, dealer)})


def _random_action(game: Game, rng: random.Random) -> Action:
    """A legal action, biased towards long auctions (bids over 120 are what the caps read)
    and towards playing the deal out (no concession most of the time)."""
    legal = game.legal_actions()
    if game.phase is Phase.BIDDING:
        bids = [a for a in legal if isinstance(a, Bid)]
        if bids and rng.random() < 0.6:
            return rng.choice(bids[: 1 + len(bids) // 2]) if rng.random() < 0.7 else bids[-1]
    keep = [a for a in legal if not isinstance(a, Concede | ThrowIn)]
    if keep and rng.random() < 0.95:
        legal = tuple(keep)
    return rng.choice(legal)


# ------------------------------------------------------------------ 1. the solver


def _take(game: Game, seat: int) -> int:
    return game.card_points(seat) + game.marriage_points(seat)


def _children(game: Game, root: bool) -> tuple[Action, ...]:
    """The engine's legal actions; below the root a declarable lead always declares (the
    solver's documented model: its ``declare=False`` twin is dropped)."""
    legal = game.legal_actions()
    if root:
        return legal
    declared = {a.card for a in legal if isinstance(a, Play) and a.declare}
    return tuple(
        a for a in legal if not (isinstance(a, Play) and not a.declare and a.card in declared)
    )


def engine_minimax(game: Game, declarer: int) -> int:
    """The declarer's take at the end of the deal under best play of both sides: plain
    minimax over ``Game.legal_actions()``, each child a clone (no pruning, no table)."""
    if game.deal_number != 0 or game.phase is Phase.GAME_OVER:
        return game.deal_results[0].takes[declarer]
    values = []
    for action in _children(game, root=False):
        child = game.clone()
        child.apply(action)
        values.append(engine_minimax(child, declarer))
    return max(values) if game.to_act == declarer else min(values)


def _endgame(rules: Ruleset, rng: random.Random, cards: int) -> Game | None:
    """A game of deal 0 played at random until the player to move holds ``cards`` cards
    (at a trick's start or inside one); ``None`` if the deal ended before."""
    game = _new_game(rules, rng)
    stop_inside = rng.random() < 0.5
    while game.deal_number == 0 and game.phase is not Phase.GAME_OVER:
        if game.phase is Phase.PLAYING:
            seat = game.to_act
            assert seat is not None
            held = len(game.hand(seat))
            if held == cards and (not game.trick or stop_inside):
                return game
            if held < cards:
                return None
        game.apply(_random_action(game, rng))
    return None


def _solver_of(game: Game, **kw: Any) -> tuple[Solver, Any]:
    view = observe(game, game.to_act)  # type: ignore[arg-type]
    pos = position_from_view(view)
    hands = [game.hand_mask(s) for s in pos.active]
    solver = Solver(
        hands, pos.declarer, pos.leader, pos.trick, pos.trump, pos.won,
        won_nonace=pos.won_nonace, **rule_options(game.ruleset), **kw,
    )  # fmt: skip
    return solver, view


def check_endgame(game: Game) -> int:
    """The solver against engine minimax on ``game``'s position; returns its value."""
    declarer = game.declarer
    assert declarer is not None
    base = _take(game, declarer)
    exact = engine_minimax(game, declarer) - base
    solver, view = _solver_of(game)
    assert solver.value() == exact, (game.record(), exact)
    legal = [a for a in view.legal_actions if isinstance(a, Play)]
    assert set(solver.legal_cards()) == {int(a.card) for a in legal}
    moves = [(int(a.card), a.declare) for a in legal]
    wants = []
    for action in legal:
        child = game.clone()
        child.apply(action)
        wants.append(engine_minimax(child, declarer) - base)
    fresh, _ = _solver_of(game)
    got = fresh.root_values(moves)
    assert got == wants, (game.record(), moves, got, wants)
    # The move the solver's values pick is an optimal one.
    me_declarer = game.to_act == declarer
    best = max(range(len(moves)), key=lambda i: got[i] if me_declarer else -got[i])
    assert wants[best] == (max(wants) if me_declarer else min(wants))
    # Zero-window tests on one solver reused across thresholds (its table keeps bounds).
    shared, _ = _solver_of(game)
    for need in sorted({0, exact - 1, exact, exact + 1, exact + 10, max(0, exact - 20)}):
        assert shared.probe(need) == (exact >= need), (game.record(), need, exact)
    return exact


def _endgames(rules: Ruleset, seed: int, count: int, sizes: tuple[int, ...]) -> Iterator[Game]:
    rng = random.Random(f"{rules.name}:{seed}")
    made = 0
    while made < count:
        game = _endgame(rules, rng, rng.choice(sizes))
        if game is not None:
            made += 1
            yield game


@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_solver_equals_engine_minimax(rules: Ruleset) -> None:
    n = 0
    for game in _endgames(rules, 1, 8, (2, 3, 3, 4)):
        check_endgame(game)
        n += 1
    assert n == 8


@pytest.mark.slow
@pytest.mark.timeout(1800)  # past the default 300 s on a busy machine
@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_solver_equals_engine_minimax_long(rules: Ruleset) -> None:
    for game in _endgames(rules, 2, 120, (2, 3, 4, 4)):
        check_endgame(game)


# ------------------------------------------------------------------ 2. the sampler


@dataclasses.dataclass
class Story:
    """A deal-0 game as it was played: what a view's rebuilt histories must reproduce."""

    rules: Ruleset
    dealer: int
    actions: tuple[tuple[int, Action], ...]


def _story(game: Game) -> Story:
    assert game.deal_number == 0
    return Story(game.ruleset, game.dealer, game.actions)


def _played_by(view: PlayerView, seat: int) -> int:
    cards = [c for t in view.tricks for s, c in t.cards if s == seat]
    return _mask(cards + [c for s, c in view.trick if s == seat])


def _histories(
    story: Story, view: PlayerView, hands: tuple[int, ...], talon: int, *, count: bool
) -> int:
    """How many histories of the deal — the cards dealt, and the passes and talon the view
    does not show — lead from the deal's actions to ``hands`` (every seat's cards now, and
    the ``talon`` while it is face down) and to exactly ``view``. Each one is replayed through
    ``Game.apply`` (every bid, pass, contract and card checked by the engine) and then
    observed. ``count`` False: stop at the first (is the deal possible at all?).

    The first history found is replayed whole; one that fails in the play, or differs in
    the view once in it, ends the search (the play is the same in every history of one
    drawn deal: see below). The others of the same drawn deal differ
    only in the cards dealt (the hands after the passes, hence the contract and the play,
    are the drawn deal's own), so for them only the auction can fail: a bid above the
    bidder's cap (``engine.game.cap_of`` of his dealt cards, the engine's rule); that is
    what is checked for them."""
    n = story.rules.players
    names = [f"p{i}" for i in range(n)]
    if view.phase is Phase.BIDDING:
        candidates: Iterator[tuple[list[int], int, dict[int, int]]] = iter(
            [(list(hands), talon, {})]
        )
    else:
        declarer = view.declarer
        assert declarer is not None
        played = [0] * n
        for t in view.tricks:
            for s, c in t.cards:
                played[s] |= 1 << int(c)
        for s, c in view.trick:
            played[s] |= 1 << int(c)
        after_pass = [hands[s] | played[s] for s in range(n)]
        gives = [(i, a) for i, (_, a) in enumerate(story.actions) if isinstance(a, Give)]
        hidden = [
            (i, a.to) for i, a in gives if view.seat not in (declarer, a.to)
        ]  # the passes this seat does not see
        shown = _mask(view.talon) if view.talon is not None else None

        def gen() -> Iterator[tuple[list[int], int, dict[int, int]]]:
            for pick in itertools.product(*[bit_indices(after_pass[to]) for _, to in hidden]):
                chosen = {i: c for (i, _), c in zip(hidden, pick, strict=True)}
                received = {a.to: 1 << int(chosen.get(i, a.card)) for i, a in gives}
                if any(after_pass[o] & r != r for o, r in received.items()):
                    continue
                dealt = [after_pass[s] & ~received.get(s, 0) for s in range(n)]
                ten = after_pass[declarer]
                for r in received.values():
                    ten |= r
                talons = (
                    [shown]
                    if shown is not None
                    else [_mask(t) for t in itertools.combinations(bit_indices(ten), 3)]
                )
                for t in talons:
                    if t & ten != t:
                        continue
                    d = list(dealt)
                    d[declarer] = ten & ~t
                    yield d, t, chosen

        candidates = gen()
    unread = -1
    if n == 4 and view.seat == view.dealer and view.declarer is not None:
        # ... while he sees neither pass: a receiver who played a card of the shown talon
        # was passed that card, and with one pass unknown the bid is read again.
        face_up = _mask(view.talon or ())
        unsettled = [to for to, _ in view.gives if not _played_by(view, to) & face_up]
        if len(unsettled) > 1:
            unread = view.declarer
    bids = [(s, a.amount) for s, a in story.actions if isinstance(a, Bid) and s != unread]
    found = 0
    for dealt, t, chosen in candidates:
        if any(len(bit_indices(d)) not in (0, 7) for d in dealt):
            continue
        capped = all(b <= cap_of(dealt[s], story.rules) for s, b in bids)
        if found or not capped:
            # (Not capped: the replay would stop at that bid; skipped for speed.)
            found += capped
            continue
        deal = ([bit_indices(d) for d in dealt], bit_indices(t))
        try:
            g = Game.new(story.rules, 0, names, dealer=story.dealer, deals={0: deal})
        except ValueError:
            continue
        ok = True
        for i, (seat, action) in enumerate(story.actions):
            if i in chosen:
                assert isinstance(action, Give)
                action = Give(chosen[i], action.to)  # type: ignore[arg-type]
            try:
                if seat == unread and isinstance(action, Bid):
                    g.apply_trusted(action)
                else:
                    g.apply(action, seat=seat)
            except IllegalActionError:
                ok = False
                break
        if not ok and g.phase is not Phase.PLAYING:
            continue
        same = (
            ok
            and observe(g, view.seat) == view
            and tuple(g.hand_mask(s) for s in range(n)) == tuple(hands)
            and (view.phase is not Phase.BIDDING or _mask(g.talon) == talon)
        )
        if not same:
            if g.phase is Phase.PLAYING:
                break  # (failed in the play, which no other history changes: none holds)
            continue
        found += 1
        if not count:
            break
    return found


def _positions(rules: Ruleset, rng: random.Random, stops: int) -> Iterator[tuple[Game, int]]:
    """Up to ``stops`` (game, seat) positions of one random deal 0, at random moments, for
    a random seat (the one to act, or any other: every view must be samplable)."""
    game = _new_game(rules, rng)
    moments = sorted(rng.sample(range(36), stops))  # (a played-out deal: ~30-40 actions)
    step = 0
    while game.deal_number == 0 and game.phase is not Phase.GAME_OVER and moments:
        if step == moments[0]:
            moments.pop(0)
            seat = game.to_act if rng.random() < 0.5 else rng.randrange(rules.players)
            assert seat is not None
            yield game.clone(), seat
        game.apply(_random_action(game, rng))
        step += 1


def check_hand_helpers(view: PlayerView, hands: tuple[int, ...]) -> None:
    """``sdk.hand``'s readings hold in a deal the engine accepted as a history of ``view``:
    no seat holds a suit ``voids`` says it lacks, the cards ``outstanding_cards`` names are
    the others' (and the face-down talon's), and the trump of the trick in progress is the
    view's."""
    shown = sdk_hand.voids(view)
    for s, suits in shown.items():
        for suit in suits:
            assert not hands[s] >> (6 * int(suit)) & 63, (s, suit)
    others = 0
    for s, m in enumerate(hands):
        if s != view.seat:
            others |= m
    out = _mask(sdk_hand.outstanding_cards(view))
    assert others & ~out == 0
    if view.phase is not Phase.BIDDING:
        assert out == others
    assert sdk_hand.trumps_by_trick(view)[-1] == view.trump


def check_draws(game: Game, seat: int, rng: random.Random, draws: int) -> None:
    view = observe(game, seat)
    story = _story(game)
    # The true deal is a history of its own view.
    truth = tuple(game.hand_mask(s) for s in range(game.players.__len__()))
    true_talon = _mask(game.talon) if view.phase is Phase.BIDDING else 0
    assert _histories(story, view, truth, true_talon, count=False) == 1
    check_hand_helpers(view, truth)
    sampler = Sampler(view)
    for _ in range(draws):
        deal = sampler.sample(rng)
        assert deal.hand_masks[seat] == _mask(view.hand)
        assert _histories(story, view, deal.hand_masks, deal.talon_mask, count=False) == 1, (
            game.record(),
            seat,
            deal,
        )
        check_hand_helpers(view, deal.hand_masks)


PROFILE: dict[str, Any] = {
    "deadline": None,
    "derandomize": True,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "phases": (HPhase.explicit, HPhase.generate),
}


@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
@settings(max_examples=12, **PROFILE)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_every_draw_is_a_history_of_the_view(rules: Ruleset, seed: int) -> None:
    rng = random.Random(seed)
    for game, seat in _positions(rules, rng, 4):
        check_draws(game, seat, rng, 4)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # past the default 300 s on a busy machine
@pytest.mark.parametrize("rules", VARIANTS, ids=VARIANT_IDS)
@settings(max_examples=200, **PROFILE)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_every_draw_is_a_history_of_the_view_long(rules: Ruleset, seed: int) -> None:
    rng = random.Random(seed)
    for game, seat in _positions(rules, rng, 8):
        check_draws(game, seat, rng, 8)


def _worlds(view: PlayerView) -> list[tuple[int, ...]]:
    """Every way to give the cards this seat cannot see to the other seats, hand sizes
    kept (play phase: the talon is in the declarer's hand)."""
    n = len(view.scores)
    played = 0
    sizes = dict.fromkeys(range(n), 0)
    for s in view.active_seats:
        sizes[s] = 8
    for t in view.tricks:
        for s, c in t.cards:
            played |= 1 << int(c)
            sizes[s] -= 1
    for s, c in view.trick:
        played |= 1 << int(c)
        sizes[s] -= 1
    mine = _mask(view.hand)
    unknown = bit_indices(((1 << 24) - 1) & ~played & ~mine)
    others = [s for s in range(n) if s != view.seat and sizes[s] > 0]
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: list[int], masks: list[int]) -> None:
        if i == len(others) - 1:
            masks[others[i]] = _mask(left)
            out.append(tuple(masks))
            return
        for pick in itertools.combinations(left, sizes[others[i]]):
            masks[others[i]] = _mask(pick)
            rec(i + 1, [c for c in left if c not in pick], masks)

    base = [0] * n
    base[view.seat] = mine
    rec(0, unknown, base)
    return out


def _chi2_p(observed: list[int], expected: list[float]) -> tuple[float, int]:
    """Pearson's chi-square (bins with an expectation under 5 pooled) and its p-value by
    the Wilson–Hilferty approximation; returns (p, degrees of freedom)."""
    pairs = sorted(zip(expected, observed, strict=True))
    bins: list[tuple[float, int]] = []
    acc_e, acc_o = 0.0, 0
    for e, o in pairs:
        acc_e += e
        acc_o += o
        if acc_e >= 5:
            bins.append((acc_e, acc_o))
            acc_e, acc_o = 0.0, 0
    if acc_e and bins:
        e, o = bins.pop()
        bins.append((e + acc_e, o + acc_o))
    k = len(bins) - 1
    if k < 1:
        return 1.0, 0
    x = sum((o - e) ** 2 / e for e, o in bins)
    z = ((x / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2)), k


def _late_views(
    rules: Ruleset,
    seed: int,
    want: int,
    max_worlds: int,
    pick: Callable[[PlayerView], bool],
    sizes: tuple[int, ...] = (3, 4),
) -> Iterator[tuple[Story, PlayerView]]:
    """Views late in deal 0 (few unknown cards) that ``pick`` accepts."""
    rng = random.Random(f"late:{rules.name}:{seed}")
    found = 0
    while found < want:
        game = _new_game(rules, rng)
        cards = rng.choice(sizes)
        while game.deal_number == 0 and game.phase is not Phase.GAME_OVER:
            if game.phase is Phase.PLAYING and len(game.hand(game.to_act)) == cards:  # type: ignore[arg-type]
                # A defender (twice as likely), the declarer, the 4-player dealer.
                seat = rng.choice([*game.active_seats, *range(rules.players)])
                view = observe(game, seat)
                if pick(view) and len(_worlds(view)) <= max_worlds:
                    found += 1
                    yield _story(game), view
                break
            game.apply(_random_action(game, rng))


def check_uniform(story: Story, view: PlayerView, draws: int, seed: int) -> tuple[float, int]:
    worlds = _worlds(view)
    weights = [_histories(story, view, w, 0, count=True) for w in worlds]
    total = sum(weights)
    assert total > 0
    index = {w: i for i, w in enumerate(worlds)}
    sampler = Sampler(view)
    rng = random.Random(seed)
    seen = Counter(index[sampler.sample(rng).hand_masks] for _ in range(draws))
    for i in seen:
        assert weights[i] > 0, ("drew an impossible deal", worlds[i])
    observed = [seen.get(i, 0) for i in range(len(worlds))]
    expected = [draws * w / total for w in weights]
    return _chi2_p(observed, expected)


def _not_declarer(view: PlayerView) -> bool:
    """A view with a hidden pass (a defender's, the 4-player dealer's)."""
    return view.declarer is not None and view.seat != view.declarer


@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_draws_follow_the_histories_late_in_a_deal(rules: Ruleset) -> None:
    """Uniform over histories: each drawn deal as often as the histories (deals dealt, with
    the passes and talon the view hides) that lead to it and to the view."""
    # (The talon hidden, each deal has up to 8 x 120 histories to replay: smaller views.)
    small = 70 if rules.talon_visible else 35
    pvalues = []
    for i, (story, view) in enumerate(_late_views(rules, 1, 3, small, _not_declarer)):
        p, k = check_uniform(story, view, 3000, seed=i)
        pvalues.append(p)
        assert p > 1e-4, (p, k, story.actions, view.seat)
    assert len(pvalues) == 3


def test_the_four_player_dealers_draws_follow_the_histories() -> None:
    """The dealer sees neither pass: each drawn deal as often as the pairs of passes (and
    deals dealt) behind it, his documented exception aside (the declarer's bid unread)."""
    rules = PRESETS["1001-4p"]

    def dealer(view: PlayerView) -> bool:
        return view.declarer is not None and view.seat == view.dealer

    views = list(_late_views(rules, 3, 2, 90, dealer, sizes=(2,)))
    for i, (story, view) in enumerate(views):
        p, k = check_uniform(story, view, 3000, seed=i)
        assert p > 1e-4, (p, k, story.actions)


# ------------------------------------------------------------------ budgets and cut-offs


def test_a_probe_cut_off_by_its_budget_resumes_on_the_same_position() -> None:
    """Defect (fixed in bots/_dds.py): a search cut off by ``SearchTimeout`` unwound
    without putting back the cards it had taken out of ``Solver.hands``, so the next call
    on that solver searched another position (cards missing). ``pimc``'s contract search
    resumes cut-off probes on the same solver ("a probe cut off keeps its solver's table and
    is resumed later"): 5 of 34 resumed probes answered wrongly on random 8-card deals."""
    rng = random.Random(34)
    cut = 0
    for _ in range(30):
        deck = list(range(24))
        rng.shuffle(deck)
        hands = [_mask(deck[i * 6 : (i + 1) * 6]) for i in range(3)]
        need = rng.choice((30, 45, 60, 75))
        kind = rng.randrange(3)
        # A budget of work only (a backstop far away): the cut is at the same node each run.
        solver = Solver(hands, 0, 0, won=7, budget=Budget(0.0002, safety=1e9))
        moves = [(c, False) for c in solver.legal_cards()]
        try:
            if kind == 0:
                solver.probe(need)
            elif kind == 1:
                solver.root_values(moves, need - 1, need)
            else:
                solver.value()
            continue
        except SearchTimeout:
            cut += 1
        assert solver.hands == hands
        solver.budget = None
        fresh = Solver(hands, 0, 0, won=7)
        assert solver.probe(need) == fresh.probe(need)
        # (Fail-soft bounds may differ with what the table holds; the verdicts may not.)
        got = solver.root_values(moves, need - 1, need)
        want = Solver(hands, 0, 0, won=7).root_values(moves, need - 1, need)
        assert [v >= need for v in got] == [v >= need for v in want]
    assert cut >= 10


class _Clock:
    """A stand-in for ``time`` in ``bots._dds``: ``perf_counter`` advances ``step`` seconds
    a call (0: frozen)."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 1000.0

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


class _Counted(Solver):
    """The solver, every instance kept (to add up the work of a decision)."""

    made: ClassVar[list[Solver]] = []

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        _Counted.made.append(self)


def _decisions(
    bot_factory: Callable[[], Any], rules: Ruleset, seed: int, limit: int
) -> Iterator[tuple[PlayerView, Any]]:
    """Views of deal 0 (random play) at which a fresh bot from ``bot_factory`` decides."""
    rng = random.Random(f"decide:{rules.name}:{seed}")
    game = _new_game(rules, rng)
    made = 0
    while game.deal_number == 0 and game.phase is not Phase.GAME_OVER and made < limit:
        seat = game.to_act
        assert seat is not None
        view = observe(game, seat)
        if len(view.legal_actions) > 1:
            made += 1
            yield view, bot_factory()
        game.apply(_random_action(game, rng))


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    """The solver's clock stopped: only the work budget can end a search."""
    clock = _Clock(0.0)
    monkeypatch.setattr(_dds, "time", clock)
    return clock


def _pimc(budget: float, searched: bool) -> Any:
    bot = PimcBot(budget=budget, seed=1)
    if searched:
        bot.delegate = frozenset()  # the auction, passing and contract searched as well
    return bot


def _work_of(bot: Any, view: PlayerView, monkeypatch: pytest.MonkeyPatch) -> tuple[Action, int]:
    """The bot's action and every solver node it cost (pimc's and counting's solvers)."""
    _Counted.made = []
    monkeypatch.setattr(pimc, "Solver", _Counted)
    monkeypatch.setattr(counting, "Solver", _Counted)
    action = bot.act(view)
    return action, sum(s.nodes for s in _Counted.made)


def _nodes_of(budget: float, view: PlayerView) -> int:
    scale = 1.6 if view.phase is Phase.CONTRACT else 1.0
    return round(budget * 0.9 * scale * _dds.NODES_PER_SECOND)


@pytest.mark.parametrize("searched", [False, True], ids=["delegated", "all-searched"])
@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_pimc_stays_within_its_budget_of_work(
    rules: Ruleset, searched: bool, frozen_clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defects (fixed in bots/_dds.py, bots/pimc.py, bots/counting.py): the work of one pimc
    decision overran its budget of solver nodes. The solver charged its budget by whole
    64s, so every search's last 0–63 nodes went uncharged (a decision of 30 small endgame
    solves ran ~1,700 nodes, a quarter, over a budget of 7,200); a new search started on a
    spent budget ran 63 nodes before its first check; and the fallback card (no sample
    solved in the budget) was ``counting``'s, which searched on with a fresh budget of its
    own (16,000 nodes more: 23,247 nodes on a budget of 7,200). Now every node is charged
    and a decision's work is at most its budget plus the 63 nodes before the next check."""
    budget = 0.01
    checked = 0
    for seed in range(2):
        for view, bot in _decisions(lambda: _pimc(budget, searched), rules, seed, 12):
            action, nodes = _work_of(bot, view, monkeypatch)
            assert action in view.legal_actions
            assert nodes <= _nodes_of(budget, view) + 63, (view.phase, len(view.hand), nodes)
            checked += 1
    assert checked >= 12
    assert not frozen_clock.step  # (the clock never moved: only the nodes ended searches)


def test_the_fallback_after_a_spent_budget_searches_no_more(
    frozen_clock: _Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a budget too small to solve one sample, pimc plays counting's card (the
    fallback) without searching past its budget: before, counting's endgame search ran its
    own 16,000 nodes after pimc's were spent (and, after a cut by the wall clock, up to
    0.4 s more, past the 0.9 s backstop and the arena's 1 s deadline)."""
    budget = 0.0001  # 36 nodes: no 5-card endgame is solved in it
    fallbacks = 0
    for rules in RULESETS[:3]:
        for view, bot in _decisions(lambda: _pimc(budget, False), rules, 7, 60):
            if view.phase is not Phase.PLAYING or len(view.hand) > 5:
                continue
            action, nodes = _work_of(bot, view, monkeypatch)
            assert action in view.legal_actions
            assert nodes <= _nodes_of(budget, view) + 63, nodes
            fallbacks += bot.stats.fallbacks
    assert fallbacks >= 10


def test_pimc_decisions_do_not_depend_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget is work, not time: a stopped clock and a running one (that never reaches
    the backstop) give the same decisions after the same work; a clock past the backstop
    cuts every search, and the decision is still a legal one (and says so in its stats)."""
    budget = 0.01
    cut = 0
    for rules in (PRESETS["classic"], PRESETS["1001-4p"]):
        for view, _ in _decisions(lambda: None, rules, 3, 12):
            runs = []
            for step in (0.0, 1e-6):
                monkeypatch.setattr(_dds, "time", _Clock(step))
                runs.append(_work_of(_pimc(budget, True), view, monkeypatch))
            assert runs[0] == runs[1], (view.phase, runs)
            monkeypatch.setattr(_dds, "time", _Clock(60.0))
            bot = _pimc(budget, True)
            action, _ = _work_of(bot, view, monkeypatch)
            assert action in view.legal_actions
            assert bot.stats.samples == 0
            if bot.stats.fallbacks:  # a card decided without a sample: the clock's doing
                assert bot.stats.clock_stops == 1
                cut += 1
    assert cut >= 3


# ------------------------------------------------------------------ 3. the ladder


def _ladder() -> list[Any]:
    """A fresh instance of each bundled bot (pimc with a small budget: which code runs
    does not depend on its size)."""
    return [load("random")(), load("heuristic")(), load("counting")(), PimcBot(budget=0.005)]


def check_legal_deals(rules: Ruleset, seed: int, deals: int) -> int:
    """Every bundled bot asked at every decision of ``deals`` random deals (the game moved
    on by random actions): each answer is legal. Returns the decisions asked."""
    rng = random.Random(f"legal:{rules.name}:{seed}")
    asked = 0
    for _ in range(deals):
        game = _new_game(rules, rng)
        bots = _ladder()
        while game.deal_number == 0 and game.phase is not Phase.GAME_OVER:
            seat = game.to_act
            assert seat is not None
            view = observe(game, seat)
            for bot in bots:
                action = bot.act(view)
                assert action in view.legal_actions, (bot.name, view.phase, action)
            asked += 1
            game.apply(_random_action(game, rng))
    return asked


@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_every_bot_plays_legal_actions(rules: Ruleset) -> None:
    assert check_legal_deals(rules, 1, 3) > 30


@pytest.mark.slow
@pytest.mark.timeout(1800)  # past the default 300 s on a busy machine
@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_every_bot_plays_legal_actions_long(rules: Ruleset) -> None:
    assert check_legal_deals(rules, 2, 300) > 3000


def _match(rules: Ruleset, seats: list[str], seed: int, deals: int) -> dict[str, Any]:
    made = {
        "random": lambda: load("random")(),
        "heuristic": lambda: load("heuristic")(),
        "counting": lambda: load("counting")(),
        "pimc": lambda: PimcBot(budget=0.005, seed=seed),
    }
    bots = [made[name]() for name in seats]
    return play_local(bots, rules, seed=seed, max_deals=deals, strict=True).record


@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_every_bot_replays_its_match_for_the_same_seed(
    rules: Ruleset, frozen_clock: _Clock
) -> None:
    """The same seed, the same match (counting's and pimc's searches end on their work,
    so the clock, stopped here, has no say)."""
    names = ["random", "heuristic", "counting", "pimc"]
    i = RULESETS.index(rules)
    seats = [names[(i + k) % 4] for k in range(rules.players)]
    first = _match(rules, seats, 5, 2)
    assert first == _match(rules, seats, 5, 2)
    assert len(first["deals"]) == 2


@pytest.mark.slow
@pytest.mark.timeout(1800)  # past the default 300 s on a busy machine
@pytest.mark.parametrize("name", ["random", "heuristic", "counting", "pimc"])
@pytest.mark.parametrize("rules", RULESETS, ids=RULE_IDS)
def test_every_bot_replays_its_match_for_the_same_seed_long(
    rules: Ruleset, name: str, frozen_clock: _Clock
) -> None:
    seats = [name] * rules.players
    assert _match(rules, seats, 9, 8) == _match(rules, seats, 9, 8)


def test_counting_with_no_budget_left_plays_its_rule_of_thumb(frozen_clock: _Clock) -> None:
    """counting's endgame search given a spent budget searches nothing and keeps the
    heuristic's card (legal), as pimc's fallback relies on."""
    asked = 0
    for rules in RULESETS[:3]:
        for view, bot in _decisions(lambda: load("counting")(), rules, 11, 80):
            if view.phase is not Phase.PLAYING or len(view.hand) > 5:
                continue
            spent = Budget(0.0, safety=1e9)
            action = bot.play(view, spent)
            assert action in view.legal_actions
            assert action == HeuristicBot.play(bot, view)
            asked += 1
    assert asked >= 10
