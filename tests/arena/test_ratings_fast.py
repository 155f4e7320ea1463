"""arena.ffa_trueskill against ``trueskill`` itself: the same ratings, bit for bit.

The contract of the fast rater is equality with ``env.rate`` (compared with ``==`` and by
the bytes of each float, so a zero's sign counts too; never approximately), or
``env.rate``'s own answer for what it does not cover.
"""

from __future__ import annotations

import itertools
import os
import random
import struct
from collections import Counter
from functools import partial
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import ffa_trueskill
from arena.ratings import SIGMA, RatingLedger, make_env, rate_results
from arena.storage import MatchResult, Storage
from tests.arena.fake_referee import make_config, run_fake

DRAWS = [0.0001, 0.001, 0.01, 0.02, 0.1, 0.25, 0.5]


def _outcome(call: Any) -> tuple[Any, ...]:
    """The ratings as (mu, sigma) pairs and their bytes, or the exception raised."""
    try:
        groups = call()
    except Exception as e:  # the package's error is the answer expected then
        return ("raised", type(e), str(e))
    ratings = [r for g in groups for r in (g.values() if isinstance(g, dict) else g)]
    assert all(type(r) is trueskill.Rating for r in ratings)
    pairs = [(r.mu, r.sigma) for r in ratings]
    shape = [(type(g), list(g)) if isinstance(g, dict) else (type(g), len(g)) for g in groups]
    return ("rated", shape, pairs, [struct.pack("<dd", mu, sigma) for mu, sigma in pairs])


def _check(env: trueskill.TrueSkill, teams: list[Any], ranks: list[int]) -> tuple[Any, ...]:
    want = _outcome(lambda: env.rate(teams, ranks=ranks))
    got = _outcome(lambda: ffa_trueskill.rate(env, teams, ranks))
    assert got == want, (teams, ranks, env.draw_probability)
    return want


@settings(max_examples=400, deadline=None)
@given(
    draw=st.sampled_from(DRAWS),
    players=st.lists(
        st.tuples(
            st.floats(-1000, 1000, allow_nan=False),
            st.one_of(st.floats(1e-6, SIGMA), st.sampled_from([1e-6, 0.01, 1.0, SIGMA])),
        ),
        min_size=2,
        max_size=5,
    ),
    data=st.data(),
)
def test_equal_to_trueskill_bit_for_bit(
    draw: float, players: list[tuple[float, float]], data: st.DataObject
) -> None:
    n = len(players)
    ranks = data.draw(st.lists(st.integers(1, n), min_size=n, max_size=n), label="ranks")
    env = make_env(draw)
    _check(env, [(env.create_rating(mu, sigma),) for mu, sigma in players], ranks)


def test_every_shape_of_ties() -> None:
    """Every ranking of 2, 3 and 4 seats (all equal, pairs, a pair and a triple, ...) on
    ratings an arena sees: fresh, apart, and settled."""
    rng = random.Random(3)
    for n in (2, 3, 4):
        for ranks in itertools.product(range(1, n + 1), repeat=n):
            for draw in (0.0001, 0.02, 0.5):
                env = make_env(draw)
                fresh = [(env.create_rating(),) for _ in range(n)]
                apart = [(env.create_rating(20 + 4 * i, 3.0 + i),) for i in range(n)]
                settled = [(env.create_rating(rng.uniform(15, 35), rng.uniform(0.8, 2)),)
                           for _ in range(n)]  # fmt: skip
                for teams in (fresh, apart, settled):
                    assert _check(env, teams, list(ranks))[0] == "rated"


def test_a_deterministic_loop_of_random_cases() -> None:
    """Ratings an arena sees (mu 0-50, sigma 0.5-25/3) and far wider ones (mu -100-150,
    sigma 1e-6-25/3, where the package's caught divisions by zero and its errors show):
    the fast path itself (no fallback) gives what the package gives, errors included.
    ``ARENA_RATING_CASES=100000`` runs the loop of docs/performance.md (3,000 here)."""
    rng = random.Random(20261203)
    cases = int(os.environ.get("ARENA_RATING_CASES", "3000"))
    outcomes: Counter[str] = Counter()
    for case in range(cases):
        env = make_env(rng.choice(DRAWS))
        n = rng.randint(2, 4)
        if case % 2:
            players = [(rng.uniform(-100, 150), 10 ** rng.uniform(-6, 0.92)) for _ in range(n)]
        else:
            players = [(rng.uniform(0, 50), rng.uniform(0.5, SIGMA)) for _ in range(n)]
        teams = [(env.create_rating(mu, sigma),) for mu, sigma in players]
        ranks = [rng.randint(1, n) for _ in range(n)]
        want = _check(env, teams, ranks)
        direct = partial(ffa_trueskill._rate, env, [g[0] for g in teams], ranks)
        assert _outcome(direct) == want, (players, ranks, env.draw_probability)
        outcomes[f"{want[0]} {'wide' if case % 2 else 'arena'}"] += 1
    print(dict(outcomes))
    assert outcomes["rated arena"] == (cases + 1) // 2  # the arena's never raise
    assert outcomes["rated wide"] > cases * 0.4


def test_the_packages_errors_are_raised_as_they_are() -> None:
    """A winner far below the loser: the package raises (FloatingPointError from w_win);
    so does the fast rater, with the same error (it asks the package)."""
    env = make_env()
    teams = [(env.create_rating(-900, 0.01),), (env.create_rating(900, 0.01),)]
    want = _check(env, teams, [1, 2])
    assert want[:2] == ("raised", FloatingPointError)


class _Subclass(trueskill.TrueSkill):  # type: ignore[misc]  # (trueskill is untyped)
    def v_win(self, diff: float, draw_margin: float) -> float:
        return 0.5 * float(super().v_win(diff, draw_margin))


def _uncovered() -> list[tuple[str, trueskill.TrueSkill, list[Any], Any]]:
    env = make_env()
    a, b, c = env.create_rating(), env.create_rating(30, 3), env.create_rating(20, 5)
    nd = NormalDist()
    other_backend = trueskill.TrueSkill(
        mu=25.0, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.02,
        backend=(nd.cdf, nd.pdf, nd.inv_cdf),
    )  # fmt: skip
    dynamic = trueskill.TrueSkill(draw_probability=lambda r1, r2, env: 0.02)
    sub = _Subclass(mu=25.0, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100, draw_probability=0.02)
    replaced = make_env()
    replaced.v_win = lambda diff, margin: 0.0
    int_beta = trueskill.TrueSkill(beta=4, tau=0.1, draw_probability=0.02)
    return [
        ("a team of two", env, [(a, b), (c,)], [1, 2]),
        ("a dict team", env, [{"a": a}, {"b": b}, {"c": c}], [1, 2, 3]),
        ("no ranks", env, [(a,), (b,), (c,)], None),
        ("another backend", other_backend, [(a,), (b,), (c,)], [2, 1, 3]),
        ("a dynamic draw probability", dynamic, [(a,), (b,), (c,)], [1, 1, 2]),
        ("a subclass", sub, [(a,), (b,), (c,)], [3, 1, 2]),
        ("a method replaced", replaced, [(a,), (b,), (c,)], [3, 1, 2]),
        ("an int beta", int_beta, [(a,), (b,), (c,)], [1, 2, 3]),
        ("one team", env, [(a,)], [1]),
        ("ranks of another length", env, [(a,), (b,)], [1, 2, 3]),
    ]


@pytest.mark.parametrize(
    ("what", "env", "teams", "ranks"), _uncovered(), ids=[c[0] for c in _uncovered()]
)
def test_what_it_does_not_cover_goes_to_the_package(
    what: str, env: trueskill.TrueSkill, teams: list[Any], ranks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    def not_here(*args: Any) -> Any:
        raise AssertionError(f"{what}: rated by the fast path")

    monkeypatch.setattr(ffa_trueskill, "_rate", not_here)
    want = _outcome(lambda: env.rate(teams, ranks=ranks))
    assert _outcome(lambda: ffa_trueskill.rate(env, teams, ranks)) == want


def test_the_arenas_case_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """(So the tests above compare the fast path with the package, not the package with
    itself.)"""
    calls: list[int] = []
    real = ffa_trueskill._rate

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(ffa_trueskill, "_rate", counted)
    env = make_env()
    ffa_trueskill.rate(env, [(env.create_rating(),)] * 3, [1, 2, 2])
    assert calls == [1]


def _old_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rate as the code did before the fast rater: ``env.rate`` for every match."""
    monkeypatch.setattr(
        ffa_trueskill, "rate", lambda env, teams, ranks: env.rate(teams, ranks=ranks)
    )


def _rated(results: list[MatchResult], bots: list[str], draw: float) -> tuple[Any, ...]:
    book, history = rate_results(results, bots, draw_probability=draw)
    ledger = RatingLedger(bots, draw_probability=draw)
    ledger.add(results[1::2])  # out of order, as a followed tournament adds them
    ledger.add(results[0::2])
    return book.leaderboard(), history, ledger.history()


def test_a_long_sequence_gives_the_same_book_and_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """800 matches of 3 and 4 seats among 7 bots, ties included: ratings drift apart
    and sigmas shrink as in a real tournament; every rating of the way is equal."""
    rng = random.Random(7)
    bots = [f"b{i}" for i in range(7)]
    results = []
    for index in range(800):
        n = rng.choice((3, 4))
        places = tuple(rng.randint(1, n) for _ in range(n))
        seats = tuple(rng.sample(bots, n))
        results.append(MatchResult(f"m{index}", index, seats, (0,) * n, places, (), 1, 0.0))
    for draw in (0.02, 0.25):
        new = _rated(results, bots, draw)
        with monkeypatch.context() as m:
            _old_path(m)
            old = _rated(results, bots, draw)
        assert new == old


def test_a_stored_tournament_rates_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tournament stored by the runner (its ``finalize`` rated it with the fast rater):
    the stored ratings and ``rate_results`` on its results are those of ``env.rate``."""
    cfg = make_config(tmp_path, bots=5, matches_per_table=3, ratings={"draw_probability": 0.1})
    assert run_fake(cfg).finished
    with Storage(cfg.db) as store:
        results = store.match_results(cfg.tournament_id)
        stored = store.rating_history(cfg.tournament_id)
    assert len(results) > 50
    new_book, new_history = rate_results(results, cfg.bot_names, draw_probability=0.1)
    _old_path(monkeypatch)
    old_book, old_history = rate_results(results, cfg.bot_names, draw_probability=0.1)
    assert new_book.leaderboard() == old_book.leaderboard()
    assert new_history == old_history
    key = lambda p: (p.index, p.bot)  # noqa: E731
    assert sorted(stored, key=key) == sorted(old_history, key=key)
