"""TrueSkill for a free-for-all of one-player teams: ``env.rate``'s floats, to the bit, faster.

Why it exists: ``trueskill.TrueSkill.rate`` builds a general factor graph for every match
(``Gaussian`` objects, a dict of messages per variable, generators per layer) and costs
about 0.3-0.4 ms for 3 seats. ``finalize``, ``arena leaderboard``, ``arena web`` and the
live standings rate every stored match again in schedule order (a 12,000-match tournament
took seconds). Every match of the arena is the same small case: 3 or 4 teams of one
player, ranks with ties, no weights, a fixed draw probability, the package's default
backend (any number of teams from 2 works the same; 2-5 are tested).

The contract is bit-exactness with the package: :func:`rate` runs the schedule of
``TrueSkill.run_schedule`` for that case on plain floats, each message a (pi, tau) pair,
with the same floating-point operations in the same order as ``trueskill.factorgraph``
and ``trueskill.mathematics.Gaussian`` (each step below names the code it mirrors). The
maths stays the package's: the truncation uses the env's own ``v_win``/``w_win``/
``v_draw``/``w_draw`` and the draw margin ``trueskill.calc_draw_margin``. The package is
also the fallback: any input this does not cover exactly (a team of several players, a
``TrueSkill`` subclass or an instance with a method replaced, a dynamic draw probability,
another backend, values that are not floats, no ranks) goes to ``env.rate`` unchanged,
and so does an arithmetic error on the way: ``env.rate`` then raises it itself.
tests/arena/test_ratings_fast.py compares the two bit for bit, errors included.

>>> env = trueskill.TrueSkill(draw_probability=0.02)
>>> teams = [(env.create_rating(),), (env.create_rating(30, 2),), (env.create_rating(),)]
>>> [tuple(g[0]) for g in rate(env, teams, [2, 1, 2])] == [
...     tuple(g[0]) for g in env.rate(teams, ranks=[2, 1, 2])]
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import trueskill
from trueskill import backends

__all__ = ["rate"]

_INF = math.inf
#: The attributes ``TrueSkill.__init__`` sets: one more on an instance may replace a method.
_ENV_ATTRS = frozenset(
    ("mu", "sigma", "beta", "tau", "draw_probability", "backend", "cdf", "pdf", "ppf")
)


def _covered(env: trueskill.TrueSkill, groups: Sequence[Any], ranks: Any) -> bool:
    """Whether :func:`_rate` computes exactly what ``env.rate(groups, ranks=ranks)`` does."""
    if (
        type(env) is not trueskill.TrueSkill
        or not env.__dict__.keys() <= _ENV_ATTRS
        or env.backend is not None
        or env.cdf is not backends.cdf
        or env.pdf is not backends.pdf
        or env.ppf is not backends.ppf
        or type(env.beta) is not float
        or type(env.tau) is not float
        or type(env.draw_probability) is not float
        or ranks is None
        or len(groups) < 2
        or len(ranks) != len(groups)
    ):
        return False
    for g in groups:
        if type(g) is not tuple or len(g) != 1:
            return False
        r = g[0]
        if type(r) is not trueskill.Rating or type(r.pi) is not float or type(r.tau) is not float:
            return False
    return True


def rate(
    env: trueskill.TrueSkill, rating_groups: Sequence[Any], ranks: Sequence[Any]
) -> list[tuple[trueskill.Rating, ...]]:
    """``env.rate(rating_groups, ranks=ranks)``, the same ratings to the bit, for teams of
    one player each (``[(a,), (b,), (c,)]``); anything else is ``env.rate``'s own answer.
    There are no weights: a caller with weights calls ``env.rate`` itself."""
    if _covered(env, rating_groups, ranks):
        try:
            return _rate(env, [g[0] for g in rating_groups], ranks)
        except (ArithmeticError, ValueError):
            # An error env.rate meets too (w_win's FloatingPointError, a square root of a
            # negative, an overflow): let it raise its own, whatever this path would say.
            pass
    rated: list[tuple[trueskill.Rating, ...]] = env.rate(rating_groups, ranks=ranks)
    return rated


def _rate(
    env: trueskill.TrueSkill, ratings: list[trueskill.Rating], ranks: Sequence[Any]
) -> list[tuple[trueskill.Rating, ...]]:
    """The factor graph of ``TrueSkill.factor_graph_builders`` and the schedule of
    ``TrueSkill.run_schedule`` for one-player teams, on floats.

    Messages start as ``Gaussian()``, (0, 0); int 0 and +0.0 give the same float in every
    operation below, so 0.0 stands for them. Each ``Variable`` keeps its value as the
    package's does (``set`` copies the new pi and tau), not as the product of its messages.
    """
    n = len(ratings)
    # TrueSkill.rate: teams sorted by rank (stable), ties keep their order.
    order = sorted(range(n), key=ranks.__getitem__)
    sorted_ranks = [ranks[i] for i in order]
    beta2 = env.beta**2  # LikelihoodFactor's variance
    dynamic = env.tau
    # build_trunc_layer: every pair of adjacent teams holds 2 players.
    draw_margin = trueskill.calc_draw_margin(env.draw_probability, 2, env)

    # Rating, performance and team performance variables (value and the messages read later).
    r_pi = [0.0] * n
    r_tau = [0.0] * n
    p_pi = [0.0] * n
    p_tau = [0.0] * n
    pl_pi = [0.0] * n  # perf var's message from its LikelihoodFactor
    pl_tau = [0.0] * n
    t_pi = [0.0] * n
    t_tau = [0.0] * n
    ts_pi = [0.0] * n  # team perf var's message from its team SumFactor
    ts_tau = [0.0] * n
    for i, x in enumerate(order):
        rating = ratings[x]
        # PriorFactor.down: Gaussian(val.mu, sqrt(val.sigma**2 + dynamic**2)).
        sigma = math.sqrt(rating.sigma**2 + dynamic**2)
        if sigma == 0:
            raise ValueError("sigma**2 should be greater than 0")  # Gaussian.__init__
        pi = sigma**-2
        tau = pi * rating.mu
        r_pi[i], r_tau[i] = pi, tau  # update_value: set(value)
        # LikelihoodFactor.down: msg = mean / mean[self] (that message is still (0, 0)).
        m_pi, m_tau = r_pi[i] - 0.0, r_tau[i] - 0.0
        a = 1.0 / (1.0 + beta2 * m_pi)
        pl_pi[i], pl_tau[i] = a * m_pi, a * m_tau
        # update_message: value / old (0, 0) * message.
        p_pi[i], p_tau[i] = (0.0 - 0.0) + pl_pi[i], (0.0 - 0.0) + pl_tau[i]
        # SumFactor.down (team perf = 1 * perf): update() over one term.
        d_pi, d_tau = p_pi[i] - 0.0, p_tau[i] - 0.0
        mu = 0.0 + 1 * (d_tau / d_pi if d_pi else d_pi)  # Gaussian.mu: pi and tau / pi
        # pi_inv += coeff**2 / float(div.pi); its except ZeroDivisionError sets inf.
        pi_inv = 0.0 + 1 / d_pi if d_pi else _INF
        pi = 1.0 / pi_inv
        ts_pi[i], ts_tau[i] = pi, pi * mu
        t_pi[i], t_tau[i] = (0.0 - 0.0) + ts_pi[i], (0.0 - 0.0) + ts_tau[i]

    # Team difference variables j = team j - team j+1, their SumFactor (coefficients
    # +1, -1) and TruncateFactor, built after the downward pass as run_schedule does.
    k = n - 1
    d_var_pi = [0.0] * k
    d_var_tau = [0.0] * k
    df_pi = [0.0] * k  # diff var's message from its SumFactor
    df_tau = [0.0] * k
    du_pi = [0.0] * k  # diff var's message from its TruncateFactor
    du_tau = [0.0] * k
    tl_pi = [0.0] * k  # team j's message from SumFactor j (its left term)
    tl_tau = [0.0] * k
    tr_pi = [0.0] * k  # team j+1's message from SumFactor j (its right term)
    tr_tau = [0.0] * k
    v_fn = []
    w_fn = []
    for j in range(k):
        if sorted_ranks[j] == sorted_ranks[j + 1]:  # a tie
            v_fn.append(env.v_draw)
            w_fn.append(env.w_draw)
        else:
            v_fn.append(env.v_win)
            w_fn.append(env.w_win)

    def diff_down(j: int) -> None:
        # SumFactor.down: update(diff, [team j, team j+1], msgs, [+1, -1]).
        a_pi, a_tau = t_pi[j] - tl_pi[j], t_tau[j] - tl_tau[j]
        b_pi, b_tau = t_pi[j + 1] - tr_pi[j], t_tau[j + 1] - tr_tau[j]
        mu = 0.0 + 1 * (a_tau / a_pi if a_pi else a_pi)
        pi_inv = 0.0 + 1 / a_pi if a_pi else _INF
        mu += -1 * (b_tau / b_pi if b_pi else b_pi)
        if pi_inv != _INF:
            pi_inv = pi_inv + 1 / b_pi if b_pi else _INF
        pi = 1.0 / pi_inv
        tau = pi * mu
        # Variable.update_message: set(self / old_message * message).
        old_pi, old_tau = df_pi[j], df_tau[j]
        df_pi[j], df_tau[j] = pi, tau
        d_var_pi[j] = (d_var_pi[j] - old_pi) + pi
        d_var_tau[j] = (d_var_tau[j] - old_tau) + tau

    def trunc_up(j: int) -> float:
        # TruncateFactor.up; returns Variable.set's delta.
        val_pi, val_tau = d_var_pi[j], d_var_tau[j]
        div_pi, div_tau = val_pi - du_pi[j], val_tau - du_tau[j]
        sqrt_pi = math.sqrt(div_pi)
        x, margin = div_tau / sqrt_pi, draw_margin * sqrt_pi
        v = v_fn[j](x, margin)
        w = w_fn[j](x, margin)
        denom = 1.0 - w
        pi, tau = div_pi / denom, (div_tau + sqrt_pi * v) / denom
        # Variable.update_value: self[factor] = value * old_message / self; set(value).
        du_pi[j] = (pi + du_pi[j]) - val_pi
        du_tau[j] = (tau + du_tau[j]) - val_tau
        d_var_pi[j], d_var_tau[j] = pi, tau
        # Variable.delta; max(a, b) keeps a unless b > a (so with a NaN, too).
        pi_delta = abs(val_pi - pi)
        if pi_delta == _INF:
            return 0.0
        tau_delta, root = abs(val_tau - tau), math.sqrt(pi_delta)
        return root if root > tau_delta else tau_delta

    def diff_up_left(j: int) -> None:
        # SumFactor.up(0): team j = diff + team j+1 (coefficients 1/1 and -(-1)/1).
        a_pi, a_tau = d_var_pi[j] - df_pi[j], d_var_tau[j] - df_tau[j]
        b_pi, b_tau = t_pi[j + 1] - tr_pi[j], t_tau[j + 1] - tr_tau[j]
        mu = 0.0 + 1.0 * (a_tau / a_pi if a_pi else a_pi)
        pi_inv = 0.0 + 1.0 / a_pi if a_pi else _INF
        mu += 1.0 * (b_tau / b_pi if b_pi else b_pi)
        if pi_inv != _INF:
            pi_inv = pi_inv + 1.0 / b_pi if b_pi else _INF
        pi = 1.0 / pi_inv
        tau = pi * mu
        old_pi, old_tau = tl_pi[j], tl_tau[j]
        tl_pi[j], tl_tau[j] = pi, tau
        t_pi[j] = (t_pi[j] - old_pi) + pi
        t_tau[j] = (t_tau[j] - old_tau) + tau

    def diff_up_right(j: int) -> None:
        # SumFactor.up(1): team j+1 = team j - diff (coefficients -1/-1 and 1/-1).
        a_pi, a_tau = t_pi[j] - tl_pi[j], t_tau[j] - tl_tau[j]
        b_pi, b_tau = d_var_pi[j] - df_pi[j], d_var_tau[j] - df_tau[j]
        mu = 0.0 + 1.0 * (a_tau / a_pi if a_pi else a_pi)
        pi_inv = 0.0 + 1.0 / a_pi if a_pi else _INF
        mu += -1.0 * (b_tau / b_pi if b_pi else b_pi)
        if pi_inv != _INF:
            pi_inv = pi_inv + 1.0 / b_pi if b_pi else _INF
        pi = 1.0 / pi_inv
        tau = pi * mu
        old_pi, old_tau = tr_pi[j], tr_tau[j]
        tr_pi[j], tr_tau[j] = pi, tau
        t_pi[j + 1] = (t_pi[j + 1] - old_pi) + pi
        t_tau[j + 1] = (t_tau[j + 1] - old_tau) + tau

    # run_schedule: arrows #1-#3, at most 10 times, until the largest delta <= min_delta.
    min_delta = trueskill.DELTA
    for _ in range(10):
        if k == 1:
            diff_down(0)
            delta = trunc_up(0)
        else:
            delta = 0.0  # the package starts from int 0: the same in every comparison
            for j in range(k - 1):
                diff_down(j)
                d = trunc_up(j)
                if d > delta:  # delta = max(delta, d)
                    delta = d
                diff_up_right(j)
            for j in range(k - 1, 0, -1):
                diff_down(j)
                d = trunc_up(j)
                if d > delta:
                    delta = d
                diff_up_left(j)
        if delta <= min_delta:
            break
    diff_up_left(0)
    diff_up_right(k - 1)

    out: list[tuple[trueskill.Rating, ...]] = [()] * n
    for i, x in enumerate(order):
        # Team SumFactor.up(0): perf = team / 1 (coefficient 1. / 1).
        d_pi, d_tau = t_pi[i] - ts_pi[i], t_tau[i] - ts_tau[i]
        mu = 0.0 + 1.0 * (d_tau / d_pi if d_pi else d_pi)
        pi_inv = 0.0 + 1.0 / d_pi if d_pi else _INF
        pi = 1.0 / pi_inv
        tau = pi * mu
        p_pi[i] = (p_pi[i] - 0.0) + pi  # its old message was (0, 0)
        p_tau[i] = (p_tau[i] - 0.0) + tau
        # LikelihoodFactor.up: msg = value / value[self].
        m_pi, m_tau = p_pi[i] - pl_pi[i], p_tau[i] - pl_tau[i]
        a = 1.0 / (1.0 + beta2 * m_pi)
        pi = (r_pi[i] - 0.0) + a * m_pi
        tau = (r_tau[i] - 0.0) + a * m_tau
        # TrueSkill.rate: Rating(float(var.mu), float(var.sigma)), unsorted.
        mu = tau / pi if pi else pi
        sigma = math.sqrt(1 / pi) if pi else _INF
        out[x] = (trueskill.Rating(float(mu), float(sigma)),)
    return out
