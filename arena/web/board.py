"""The leaderboard document of the web page: a :class:`arena.leaderboard.Leaderboard` (the
statistics of ``arena leaderboard`` and the tournament's files) in the page's JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.leaderboard import Leaderboard
from arena.leaderboard.stats import STRIKE_GROUPS

__all__ = ["HISTORY_BUCKETS", "HISTORY_DECIMALS", "compute", "thin"]

JSON = dict[str, Any]

#: A bot's rating history is sent whole up to ``4 * HISTORY_BUCKETS`` points; past that,
#: its points are split into this many runs of consecutive matches, and of each run only
#: the points that draw its extremes are sent (see :func:`thin`): at most 802 points a
#: bot however long the tournament (every point was sent: 3.7 MB a poll at 12,000
#: matches). The plot is 840 px wide: a run is 4 px or less.
HISTORY_BUCKETS = 200

#: The decimals of μ and σ a rating history's point is sent with, but its last, sent whole
#: (the current rating: the table's μ and σ, which the plot ends at, exactly). 1e-4 is far
#: below a pixel of the plot (260 px for a range of tens); the hover names the last alone.
#: Sent whole, their digits were most of a poll: a club's season of four weeks (30 bots,
#: 11,700 points) was 256,216 bytes gzipped, 106,567 so.
HISTORY_DECIMALS = 4


def compute(lb: Leaderboard) -> JSON:
    """Rows, rating history per bot (thinned: :func:`thin`) and head-to-head, as the pages
    expect them."""
    rows = [
        {
            "rank": r.rank,
            "bot": r.bot,
            "mu": r.mu,
            "sigma": r.sigma,
            "conservative": r.conservative,
            "matches": r.matches,
            "places": r.places,
            "deals": r.deals,
            "mean_per_deal": r.mean_per_deal,
            "ci95": r.ci95,
            "bidding_wins": r.bids_won,
            "contracts": r.contracts,
            "contracts_made": r.contracts_made,
            # the strike columns of `arena leaderboard` (timeouts, illegal or malformed,
            # disconnects, forfeits); its "other" group (an answer to no pending request,
            # a decision the bot failed) is no strike, counted apart, and of it the
            # decisions the bot failed (bot_error: it raised, its client sent a fallback)
            "strikes": sum(r.strikes.get(g, 0) for g in STRIKE_GROUPS),
            "strike_groups": {g: r.strikes.get(g, 0) for g in STRIKE_GROUPS},
            "other_incidents": r.strikes.get("other", 0),
            "bot_errors": r.bot_errors,
            "median_ms": r.median_ms,
        }
        for r in lb.rows
    ]
    history = {  # the pages draw the prior (index -1) themselves
        bot: _as_sent(thin([p for p in pts if p[0] >= 0])) for bot, pts in lb.history.items()
    }
    return {"rows": rows, "seats": lb.players, "history": history, "head_to_head": _h2h(lb)}


Point = tuple[int, float, float]  # (schedule index, mu, sigma)


def thin(points: Sequence[Point], buckets: int = HISTORY_BUCKETS) -> list[Point]:
    """``points`` (a bot's rating after each of its matches, in order) as the plot needs
    them: all of them up to ``4 * buckets``; past that, split into ``buckets`` runs of
    consecutive points, of each run only the points of least and greatest μ, least μ−σ and
    greatest μ+σ, in their order, and the first and last point of all: at most
    ``4 * buckets + 2`` points. What the plot draws from them:
    the same vertical extent of the line and of the band in every run (so the same axes),
    the same start and end (the current rating); what it loses: the order of the wiggles
    inside a run (the line goes straight from one kept extreme to the next), which at 4 px
    a run is below what it shows.

    >>> pts = [(i, float(i % 7), 1.0) for i in range(1000)]
    >>> kept = thin(pts, buckets=10)
    >>> len(kept) <= 40 + 2, kept[0] == pts[0], kept[-1] == pts[-1]
    (True, True, True)
    >>> min(p[1] for p in kept), max(p[1] for p in kept)
    (0.0, 6.0)
    >>> thin(pts[:40], buckets=10) == pts[:40]
    True
    """
    n = len(points)
    if n <= 4 * buckets:
        return list(points)
    keep = {0, n - 1}
    for b in range(buckets):
        run = range(b * n // buckets, (b + 1) * n // buckets)
        keep.add(min(run, key=lambda k: points[k][1]))
        keep.add(max(run, key=lambda k: points[k][1]))
        keep.add(min(run, key=lambda k: points[k][1] - points[k][2]))
        keep.add(max(run, key=lambda k: points[k][1] + points[k][2]))
    return [points[k] for k in sorted(keep)]


def _as_sent(points: Sequence[Point]) -> list[JSON]:
    """A bot's rating history as sent: μ and σ to ``HISTORY_DECIMALS``, but the last point's
    whole (the table's)."""
    last = len(points) - 1
    return [
        {"index": i, "mu": mu, "sigma": sigma}
        if k == last
        else {
            "index": i,
            "mu": round(mu, HISTORY_DECIMALS),
            "sigma": round(sigma, HISTORY_DECIMALS),
        }
        for k, (i, mu, sigma) in enumerate(points)
    ]


def _h2h(lb: Leaderboard) -> JSON:
    """For each ordered pair (a, b) that met: matches together, a placed ahead of b, tied."""
    h = lb.h2h
    cells = {
        a: {
            b: {"played": h.together[a][b], "ahead": h.ahead[a][b], "tied": h.ties(a, b)}
            for b in h.bots
            if b != a and h.together[a][b]
        }
        for a in h.bots
    }
    return {"bots": h.bots, "cells": cells}
