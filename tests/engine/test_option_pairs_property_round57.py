"""Round 57: random matches under rulesets that cover every PAIR of option values.

Earlier drawn-ruleset tests (rounds 37, 47, 51) start from a preset and move a few options
off it, so a pair of non-default values, say ``bid_step = 120`` with ``all_pass =
"last_hand"`` on four players, comes up by luck or not at all. Here :data:`VALUES` gives
each option of ``engine.rules.Ruleset`` a few values (its defaults, its edges, values a
house rule might set, and for the options a ruleset may leave unused, values it does not
use), :func:`covering_rows` builds a small set of rulesets in which every pair of values
of every two options occurs (a pairwise covering array, built greedily and
deterministically; ``test_the_rows_cover_every_pair`` checks that it does), and each row
is played as a random match. Hypothesis then draws further whole combinations.

Each match is checked step by step against round 51's oracle (``oracle_round51.py``,
written from RULES.md alone: the seat to act, its legal actions, every deal's outcome,
deltas, scores, barrel counters and events, the end of the match), and against RULES.md's
invariants stated plainly here: the 24 cards partitioned at every step, the seat to act
the only one offered actions, a played deal's takes summing to 120 plus the marriages
declared, an opponent's score moving only by a take rounded to ``rounding`` (or a half,
the throw-in bonus, the talon), the barrel counters and scores consistent, and the
record replaying to the same match. Any ruleset drawn from :data:`VALUES` is valid; a
combination the rules forbid is refused when built, naming the options
(``test_an_invalid_combination_is_refused_naming_its_options``).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, Play, Ruleset, RulesetError, observe, parse_action, replay

from .oracle_round51 import MARRIAGE, DealOracle, check_record, match_end, round_half_up
from .test_oracle_round51 import check_state, choose, craft, draw_start
from .test_properties import PROFILE

#: The values each option is crossed at. ``opening_bid`` and ``barrel_at`` depend on other
#: options (a multiple of ``bid_step``; below ``target``), so they are named by a kind that
#: :func:`resolve` turns into a number.
VALUES: dict[str, tuple[Any, ...]] = {
    # (the options that switch others on or off first: see NEEDS)
    "players": (3, 4),
    "barrel": (True, False),
    "first_hand_commits": (True, False),
    "all_pass": ("first_hand", "last_hand"),
    "concede": ("free", "penalty", "off"),
    "ace_marriage": (True, False),
    "target": (1000, 1001, 400),
    "bid_step": (5, 20, 25, 120),
    "opening_bid": ("low", "high"),
    "ace_marriage_counts_for_bid": (True, False),
    "talon_visible": (True, False),
    "concede_pays": ("half", "none"),
    "must_beat": (False, True),
    "marriage_needs_trick": (True, False),
    "rounding": (1, 5, 7),
    "barrel_at": ("near", "usual", "low"),
    "barrel_deals": (3, 1),
    "barrel_penalty": (120, 0, 500),
    "barrel_mode": ("many", "one"),
    "throw_in_bonus": (50, 0, 33),
    "nines_talon_value": (100, 0, 73),
    "max_deals": (5, 1, 0),
    "ask_forced": (False, True),
}
OPTIONS = tuple(VALUES)
#: What an option needs to be in force (to change anything): the barrel's numbers the
#: barrel, the dealer's talon value four players, the throw-in bonus an uncommitted first
#: hand with ``all_pass = "last_hand"``, the concession's pay a concession, the aces'
#: count for the bid the ace marriage. A pair counts as covered only in a row where both
#: its options are in force: "barrel_mode one with must_beat" in a row without the barrel
#: would test nothing.
NEEDS: dict[str, dict[str, Any]] = {
    **{k: {"barrel": True} for k in ("barrel_at", "barrel_deals", "barrel_penalty", "barrel_mode")},
    "nines_talon_value": {"players": 4},
    "throw_in_bonus": {"first_hand_commits": False, "all_pass": "last_hand"},
    "concede_pays": {"concede": ("free", "penalty")},
    "ace_marriage_counts_for_bid": {"ace_marriage": True},
}
#: Deals played at most in a match without a deal cap (``max_deals = 0``).
UNCAPPED_DEALS = 6


def allows(need: Any, value: Any) -> bool:
    return value in need if isinstance(need, tuple) else value == need


def in_force(key: str, row: dict[str, Any]) -> bool:
    return all(allows(need, row[k]) for k, need in NEEDS.get(key, {}).items())


def possible(a: str, x: Any, b: str, y: Any) -> bool:
    """Whether ``a = x`` and ``b = y`` can both be in force in one row."""
    wants = {a: x, b: y}
    for key in (a, b):
        for k, need in NEEDS.get(key, {}).items():
            if k in wants and not allows(need, wants[k]):
                return False
    for k in NEEDS.get(a, {}).keys() & NEEDS.get(b, {}).keys():
        if NEEDS[a][k] != NEEDS[b][k]:
            return False
    return True


def resolve(row: dict[str, Any]) -> dict[str, Any]:
    """A row of option values as a ruleset dict: the kinds of ``opening_bid`` (the lowest
    multiple of the step from 40, or the highest to 120) and ``barrel_at`` (just below the
    target, 88 % of it as classic's 880 of 1000, or 50) made numbers."""
    d = dict(row)
    step = d["bid_step"]
    d["opening_bid"] = (
        max(step, -(-40 // step) * step) if d["opening_bid"] == "low" else 120 // step * step
    )
    d["barrel_at"] = {"near": d["target"] - 1, "usual": d["target"] * 88 // 100, "low": 50}[
        d["barrel_at"]
    ]
    d["name"] = "pairs57"
    return d


def pairs_of(row: dict[str, Any]) -> Iterator[tuple[str, Any, str, Any]]:
    """The value pairs ``row`` covers: those of two options both in force in it."""
    forced = [k for k in OPTIONS if in_force(k, row)]
    for a, b in itertools.combinations(forced, 2):
        yield a, row[a], b, row[b]


def wanted_pairs() -> set[tuple[str, Any, str, Any]]:
    return {
        (a, x, b, y)
        for a, b in itertools.combinations(OPTIONS, 2)
        for x in VALUES[a]
        for y in VALUES[b]
        if possible(a, x, b, y)
    }


#: The options each option switches on or off (those whose NEEDS name it), and itself.
AFFECTS = {key: {key} | {k for k, need in NEEDS.items() if key in need} for key in OPTIONS}


def new_pairs(
    todo: set[tuple[str, Any, str, Any]], row: dict[str, Any], key: str, value: Any
) -> int:
    """How many pairs of ``todo`` the row covers with ``key = value``, counting only those
    the choice of ``key`` can change (the others are the same whatever its value)."""
    trial = {**row, key: value}
    forced = [k for k in OPTIONS if in_force(k, trial)]
    touched = AFFECTS[key]
    return sum(
        (a, trial[a], b, trial[b]) in todo
        for a, b in itertools.combinations(forced, 2)
        if a in touched or b in touched
    )


#: Every option at its first value: where a row starts.
VALUES_FIRST = {k: v[0] for k, v in VALUES.items()}


def covering_rows() -> list[dict[str, Any]]:
    """Rows of :data:`VALUES` in which every possible pair of values of two options occurs
    in force: each row starts from the first pair not yet covered (with what its options
    need), every other option at its first value, then improves them one at a time."""
    todo = wanted_pairs()
    rows: list[dict[str, Any]] = []
    while todo:
        a, x, b, y = min(todo, key=lambda p: (OPTIONS.index(p[0]), OPTIONS.index(p[2]), repr(p)))
        fixed: dict[str, Any] = {a: x, b: y}
        for key in (a, b):
            for k, need in NEEDS.get(key, {}).items():
                fixed.setdefault(k, need[0] if isinstance(need, tuple) else need)
        # From the first values, each option in turn takes the value covering the most
        # pairs still to cover with the rest of the row (the first on a tie), three times
        # round: an option chosen early (the barrel, say) sees the options it switches on.
        row = {**VALUES_FIRST, **fixed}
        for _ in range(3):
            for key in OPTIONS:
                if key not in fixed:
                    row[key] = max(VALUES[key], key=lambda v, k=key: new_pairs(todo, row, k, v))
        assert (a, x, b, y) in set(pairs_of(row)), (a, x, b, y, row)
        rows.append(row)
        todo -= set(pairs_of(row))
    return rows


ROWS = covering_rows()


def test_the_rows_cover_every_pair() -> None:
    """Every value pair of every two options that can be in force together is in force
    together in some row, and each row is a valid ruleset (``Ruleset.from_dict``
    validates it); the rows are far fewer than the combinations (a covering array, not
    the product)."""
    seen = {p for row in ROWS for p in pairs_of(row)}
    wanted = wanted_pairs()
    assert wanted <= seen, sorted(wanted - seen, key=repr)[:5]
    # (the pairs left out are the impossible ones: an option with one that switches it off)
    assert ("barrel_mode", "one", "max_deals", 0) in wanted
    assert not possible("barrel", False, "barrel_mode", "one")
    assert not possible("throw_in_bonus", 33, "first_hand_commits", True)
    for row in ROWS:
        Ruleset.from_dict(resolve(row))
    assert len(ROWS) < 60


# ----------------------------------------------------------------------- one match
def check_cards(game: Game) -> None:
    """RULES.md "Hands and the talon partition the 24 cards": the hands, the talon (until
    it is taken) and the cards played in this deal are the 24 cards, each once."""
    cards = [c for s in range(game.ruleset.players) for c in game.hand(s)]
    if game.declarer is None:
        cards += game.talon
    cards += [c for t in game.tricks for _, c in t.cards] + [c for _, c in game.trick]
    assert len(cards) == 24 and len(set(cards)) == 24, sorted(map(str, cards))


def check_one_actor(game: Game) -> None:
    """The seat to act, and it alone, is offered actions (in its view as in the state)."""
    for s in range(game.ruleset.players):
        offered = observe(game, s).legal_actions
        assert bool(offered) == (s == game.to_act), (s, game.to_act, offered)


def check_deal(game: Game, d: dict[str, Any], before: list[int], sitting: set[int]) -> None:
    """A deal's figures by RULES.md's amounts (the oracle checks them exactly as well)."""
    res = game.deal_results[-1]
    n = d["players"]
    declared = sum(
        200 if suit is None else MARRIAGE[str(suit)] for _, suit in game_marriages(game, res)
    )
    if res.outcome in ("made", "failed"):
        # "The card points taken in a deal sum to 120"; takes = card points + marriages.
        assert sum(res.card_points) == 120, res
        assert sum(res.takes) == 120 + sum(res.marriage_points) == 120 + declared, res
    else:
        assert sum(res.takes) == 0 and res.contract is None, res
    opponents = [s for s in range(n) if s != res.declarer and (n == 3 or s != res.dealer)]
    for s in opponents:
        if s in sitting or (d["barrel"] and res.scores[s] == d["barrel_at"]):
            continue  # (a sitter's take is not scored; a newcomer's is cut to barrel_at)
        if d["barrel"] and res.events and d["barrel_mode"] == "one":
            continue  # (a knock-off or a double arrival moves him by the penalty too)
        amounts = {
            "made": {round_half_up(res.takes[s], 1, d["rounding"])},
            "failed": {round_half_up(res.takes[s], 1, d["rounding"])},
            "conceded": {round_half_up(res.bid, 2, d["rounding"])}
            if d["concede_pays"] == "half"
            else {0},
            "thrown_in": {d["throw_in_bonus"]},
        }[res.outcome]
        assert res.deltas[s] in amounts, (s, res, amounts)
        if res.outcome in ("made", "failed", "conceded"):
            assert res.deltas[s] % d["rounding"] == 0, (s, res)  # "rounded to the unit"
    if not d["barrel"] or res.declarer not in sitting:
        decl = res.deltas[res.declarer]
        allowed = {
            "made": {res.contract},
            "failed": {-(res.contract or 0)},
            "conceded": {-res.bid if d["concede"] == "penalty" else 0},
            "thrown_in": {0},
        }[res.outcome]
        if d["barrel"]:  # (reaching barrel_at cuts it; one mode may knock him off)
            allowed |= {d["barrel_at"] - before[res.declarer]}
            allowed |= {d["barrel_at"] - d["barrel_penalty"] - before[res.declarer]}
        assert decl in allowed, (res, allowed)


def game_marriages(game: Game, res: Any) -> list[tuple[int, Any]]:
    """The marriages declared in the deal just scored, read from its record (the state has
    moved on to the next deal)."""
    deal = game.record()["deals"][res.number]
    out = []
    for step in deal["actions"]:
        action = parse_action(step["action"])
        if isinstance(action, Play) and action.declare:
            out.append((step["seat"], None if action.card.rank.name == "ACE" else action.card.suit))
    return out


def check_barrel(game: Game, d: dict[str, Any]) -> None:
    """The barrel counters: none without the barrel; with it, each from 0 to
    ``barrel_deals``, a sitter at exactly ``barrel_at``, nobody else above it (but the
    winner from the barrel, at the target), one sitter at most under ``"one"``."""
    if not d["barrel"]:
        assert game.barrel is None or not any(game.barrel)
        return
    barrel = game.barrel
    assert barrel is not None
    for s, left in enumerate(barrel):
        assert 0 <= left <= d["barrel_deals"], (s, barrel)
        if left:
            assert game.scores[s] == d["barrel_at"], (s, game.scores, barrel)
        elif not game.is_over or game.scores[s] != d["target"]:
            assert game.scores[s] <= d["barrel_at"], (s, game.scores, barrel)
    if d["barrel_mode"] == "one":
        assert sum(1 for left in barrel if left) <= 1, barrel


def play(d: dict[str, Any], seed: int) -> int:
    """Play one match of ruleset ``d`` at random (round 51's policy, some deals crafted,
    a start near the barrel or the target), checking every step; returns the deals."""
    rng = random.Random(seed)
    ruleset = Ruleset.from_dict(d)
    n = d["players"]
    scores, barrel = draw_start(rng, d)
    dealer = rng.randrange(n)
    deals = {
        k: craft(rng, n, (dealer + k) % n) for k in range(UNCAPPED_DEALS) if rng.random() < 0.4
    }
    game = Game.new(ruleset, seed, [f"p{i}" for i in range(n)], deals=deals or None,
                    scores=scores, barrel=barrel, dealer=dealer)  # fmt: skip
    expected, left = list(scores), list(barrel or [0] * n)
    greedy = rng.random() < 0.5
    steps = 0
    while not game.is_over and game.deal_number < UNCAPPED_DEALS:
        number = game.deal_number
        where = f"seed {seed} deal {number} ruleset {d}"
        oracle = DealOracle(d, game.dealer, [[str(c) for c in game.hand(s)] for s in range(n)],
                            [str(c) for c in game.talon], expected, left)  # fmt: skip
        sitting = {s for s in range(n) if left[s]}
        before = list(game.scores)
        while oracle.phase != "done":
            assert game.to_act == oracle.to_act, where
            legal = sorted(str(a) for a in game.legal_actions())
            assert set(legal) == oracle.legal() and len(legal) == len(oracle.legal()), where
            check_cards(game)
            steps += 1
            if steps % 3 == 0:
                check_one_actor(game)
            check_state(game, oracle, where, views=steps % 5 == 0)
            action = choose(rng, legal, greedy)
            oracle.apply(action)
            game.apply(parse_action(action), seat=game.to_act)
        exp = oracle.result
        assert exp is not None
        got = game.deal_results[-1]
        assert (got.outcome, list(got.deltas), list(got.scores)) == (
            exp.outcome, exp.deltas, exp.scores,
        ), (where, got, exp)  # fmt: skip
        assert list(got.takes) == exp.takes and list(got.card_points) == exp.card_points, where
        if d["barrel"]:
            assert list(got.barrel or ()) == exp.barrel and sorted(got.events) == sorted(exp.events)
        check_deal(game, d, before, sitting)
        check_barrel(game, d)
        expected, left = exp.scores, exp.barrel or [0] * n
        end = match_end(d, expected, number + 1)
        assert game.is_over == (end is not None), where
        if end is not None:
            res = game.result
            assert res is not None
            assert (res.reason, list(res.places), list(res.shortfalls), res.winner) == end, where
    if not game.is_over:
        # (an uncapped match stopped here: nothing decided, nothing to compare at the end)
        assert d["max_deals"] == 0 or game.deal_number < d["max_deals"]
        assert game.deal_number == UNCAPPED_DEALS
    # "Replaying a recorded deal's actions from its seed reproduces every state and score",
    # the record read as it is stored (JSON), and the oracle alone agreeing with it.
    record = json.loads(json.dumps(game.record()))
    again = replay(record)
    assert again.deal_results == game.deal_results and again.result == game.result
    assert again.scores == game.scores and again.barrel == game.barrel
    assert check_record(record, {**d, "name": record["ruleset"]["name"]}) == len(record["deals"])
    return game.deal_number


@pytest.mark.parametrize("index", range(len(ROWS)))
def test_each_covering_row_plays_by_the_rules(index: int) -> None:
    d = resolve(ROWS[index])
    assert play(d, seed=5700 + index) >= 1


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    """Any combination of :data:`VALUES`, not only those of the covering rows."""
    return {key: draw(st.sampled_from(values)) for key, values in VALUES.items()}


@settings(max_examples=40, **PROFILE)
@given(row=rows(), seed=st.integers(0, 2**31 - 1))
def test_drawn_combinations_play_by_the_rules(row: dict[str, Any], seed: int) -> None:
    assert play(resolve(row), seed) >= 1


# ----------------------------------------------------------- invalid combinations
#: The rules tying two or more options (docs/rules-engine.md "Rulesets"): which options a
#: refusal must name, given the key it is refused under.
def faults(v: dict[str, Any]) -> dict[str, set[str]]:
    """The options at fault in ``v``, each with the other options its rule ties it to."""
    out: dict[str, set[str]] = {}
    if v["bid_step"] <= 0 or v["bid_step"] % 5 or v["bid_step"] > 120:
        out["bid_step"] = set()
    if v["opening_bid"] <= 0 or v["opening_bid"] > 120:
        out["opening_bid"] = set()
    elif "bid_step" not in out and v["opening_bid"] % v["bid_step"]:
        out["opening_bid"] = {"bid_step"}
    if v["target"] <= 0:
        out["target"] = set()
    if v["barrel_at"] <= 0:
        out["barrel_at"] = set()
    elif v["barrel"] and "target" not in out and v["barrel_at"] >= v["target"]:
        out["barrel_at"] = {"target", "barrel"}
    return out


@settings(max_examples=300, **PROFILE)
@given(
    bid_step=st.sampled_from([-5, 0, 3, 5, 10, 15, 25, 40, 60, 120, 125, 240]),
    opening_bid=st.sampled_from([-40, 0, 5, 30, 40, 45, 50, 60, 75, 100, 120, 125, 240]),
    target=st.sampled_from([-1, 0, 1, 400, 879, 880, 881, 1000]),
    barrel_at=st.sampled_from([-1, 0, 1, 50, 880, 881, 1000, 2000]),
    barrel=st.booleans(),
)
def test_an_invalid_combination_is_refused_naming_its_options(
    bid_step: int, opening_bid: int, target: int, barrel_at: int, barrel: bool
) -> None:
    """Build a ruleset from values of the options that constrain one another: it is built
    exactly when no rule is broken, and refused with a ``RulesetError`` whose ``key`` is
    an option at fault and whose message names the options it is tied to (``opening_bid``
    to ``bid_step``; ``barrel_at`` to ``target`` and ``barrel``)."""
    v = {"bid_step": bid_step, "opening_bid": opening_bid, "target": target,
         "barrel_at": barrel_at, "barrel": barrel}  # fmt: skip
    wrong = faults(v)
    try:
        Ruleset(**v)
    except RulesetError as e:
        assert e.key in wrong, (v, str(e))
        for other in wrong[e.key]:
            assert other in e.message, (v, str(e))
        assert str(e).startswith(f"{e.key}: ")
    else:
        assert not wrong, v


@pytest.mark.parametrize(
    ("written", "key", "named"),
    [
        ({"preset": "1001", "barrel_mode": "one"}, "barrel_mode", "barrel = false"),
        ({"preset": "classic", "barrel": False, "barrel_penalty": 0}, "barrel_penalty", "barrel"),
        ({"preset": "classic", "nines_talon_value": 70}, "nines_talon_value", "players = 4"),
        ({"preset": "classic", "throw_in_bonus": 30}, "throw_in_bonus", "first_hand_commits"),
        (
            {"preset": "classic", "all_pass": "last_hand", "throw_in_bonus": 30},
            "throw_in_bonus",
            "first_hand_commits = false",
        ),
    ],
)
def test_an_option_its_partner_leaves_unused_is_refused_naming_the_partner(
    written: dict[str, Any], key: str, named: str
) -> None:
    """A file that sets an option which another option of the same ruleset switches off
    (the barrel's numbers without the barrel, the dealer's talon value at a 3-player
    table, the throw-in bonus where first hand commits) is refused naming both. (One that writes
    the switch itself, ``first_hand_commits = true`` beside the bonus, is accepted: docs/
    rules-engine.md, a knowing choice.)"""
    with pytest.raises(RulesetError) as caught:
        Ruleset.from_dict(written, unused=False)
    assert caught.value.key == key and named in caught.value.message
