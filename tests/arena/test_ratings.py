"""TrueSkill ratings: checked against hand-computed values and trueskill's documentation."""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import pytest
import trueskill

from arena.ratings import BETA, MU, SIGMA, TAU, RatingBook, make_env, rate_results
from arena.storage import MatchResult

N = NormalDist()


def _hand_1vs1(draw_probability: float) -> tuple[float, float, float]:
    """The TrueSkill update of two fresh players, winner first, by the paper's formulas."""
    s2 = SIGMA**2 + TAU**2  # dynamics first
    c = math.sqrt(2 * BETA**2 + 2 * s2)
    eps = N.inv_cdf((draw_probability + 1) / 2) * math.sqrt(2) * BETA  # draw margin
    t = 0.0 - eps / c  # (mu_w - mu_l - eps) / c with equal means
    v = N.pdf(t) / N.cdf(t)
    w = v * (v + t)
    mu_w = MU + s2 / c * v
    mu_l = MU - s2 / c * v
    sigma = math.sqrt(s2 * (1 - s2 / c**2 * w))
    return mu_w, mu_l, sigma


def test_documented_1vs1_value() -> None:
    # trueskill's documentation: rate_1vs1(Rating(), Rating()) with the default environment
    # gives (mu=29.396, sigma=7.171) and (mu=20.604, sigma=7.171).
    env = trueskill.TrueSkill()
    (w,), (lo,) = env.rate([(env.create_rating(),), (env.create_rating(),)], ranks=[0, 1])
    assert (round(w.mu, 3), round(w.sigma, 3)) == (29.396, 7.171)
    assert (round(lo.mu, 3), round(lo.sigma, 3)) == (20.604, 7.171)
    # and the hand formulas reproduce it (default draw probability 0.1)
    mu_w, mu_l, sigma = _hand_1vs1(0.1)
    assert (round(mu_w, 3), round(mu_l, 3), round(sigma, 3)) == (29.396, 20.604, 7.171)


def test_two_player_match_equals_hand_computation() -> None:
    book = RatingBook(["w", "l"])
    w, lo = book.rate(("w", "l"), (1, 2))
    mu_w, mu_l, sigma = _hand_1vs1(book.env.draw_probability)
    assert w.mu == pytest.approx(mu_w, abs=1e-6) and lo.mu == pytest.approx(mu_l, abs=1e-6)
    assert w.sigma == pytest.approx(sigma, abs=1e-6) and lo.sigma == pytest.approx(sigma, abs=1e-6)


def test_environment_is_explicit() -> None:
    env = make_env(0.05)
    assert (env.mu, env.sigma, env.beta, env.tau) == (MU, SIGMA, BETA, TAU)
    assert env.draw_probability == 0.05
    assert RatingBook().env is not trueskill.global_env()


def test_three_player_free_for_all() -> None:
    book = RatingBook(["a", "b", "c"])
    a, b, c = book.rate(("a", "b", "c"), (1, 2, 3))
    assert a.mu > b.mu > c.mu
    assert b.mu == pytest.approx(MU, abs=1e-6)  # by symmetry the middle one keeps his mean
    assert a.mu - MU == pytest.approx(MU - c.mu, abs=1e-6)
    assert a.sigma == pytest.approx(c.sigma, abs=1e-6)
    assert b.sigma < a.sigma < SIGMA
    # pinned values of this known case (draw probability 0.02)
    assert (round(a.mu, 3), round(a.sigma, 3)) == (31.383, 6.690)
    assert (round(b.mu, 3), round(b.sigma, 3)) == (25.000, 6.232)
    assert [r.bot for r in book.leaderboard()] == ["a", "b", "c"]


def test_ties_share_a_rank() -> None:
    book = RatingBook(["a", "b", "c"])
    a, b, c = book.rate(("a", "b", "c"), (1, 1, 3))
    assert a.mu == pytest.approx(b.mu, abs=1e-3) and a.sigma == pytest.approx(b.sigma, abs=1e-3)
    assert a.mu > MU > c.mu


def test_seat_order_does_not_matter() -> None:
    one = RatingBook()
    two = RatingBook()
    r1 = {r.bot: r for r in one.rate(("a", "b", "c"), (2, 3, 1))}
    r2 = {r.bot: r for r in two.rate(("c", "a", "b"), (1, 2, 3))}
    for bot in "abc":
        assert r1[bot].mu == pytest.approx(r2[bot].mu) and r1[bot].sigma == pytest.approx(
            r2[bot].sigma
        )


def test_results_are_rated_in_schedule_order() -> None:
    results = [
        MatchResult(f"m{i}", i, seats, (0, 0, 0), places, (), 1, 0.0)
        for i, (seats, places) in enumerate(
            [
                (("a", "b", "c"), (1, 2, 3)),
                (("b", "c", "a"), (1, 2, 3)),
                (("c", "a", "b"), (3, 1, 2)),
                (("a", "c", "b"), (2, 1, 3)),
            ]
        )
    ]
    book1, hist1 = rate_results(results)
    book2, hist2 = rate_results(list(reversed(results)))  # completion order differs
    assert hist1 == hist2
    assert book1.leaderboard() == book2.leaderboard()
    assert [p.index for p in hist1] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_leaderboard_sorts_by_conservative_rating() -> None:
    book = RatingBook(["steady", "lucky", "new"])
    for _ in range(10):
        book.rate(("steady", "lucky"), (1, 2))
        book.rate(("lucky", "steady"), (2, 1))
    board = book.leaderboard()
    assert board[0].bot == "steady"
    assert all(x.conservative >= y.conservative for x, y in itertools.pairwise(board))
    assert book.get("new").conservative == pytest.approx(MU - 3 * SIGMA)
    with pytest.raises(ValueError):
        book.rate(("a", "a"), (1, 2))
