"""The leaderboard document of the web page: a :class:`arena.leaderboard.Leaderboard` (the
statistics of ``arena leaderboard`` and the tournament's files) in the page's JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from arena.leaderboard import Leaderboard
from arena.leaderboard.stats import STRIKE_GROUPS
from arena.storage import MatchResult

__all__ = ["compute"]

JSON = dict[str, Any]


def compute(lb: Leaderboard, results: Iterable[MatchResult]) -> JSON:
    """Rows, rating history per bot and head-to-head, as the pages expect them (``results``:
    the matches ``lb`` was made of, for their ids)."""
    match_ids = {m.index: m.match_id for m in results}
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
            # disconnects, forfeits); its "other" group (an answer to no pending request)
            # is no strike, counted apart
            "strikes": sum(r.strikes.get(g, 0) for g in STRIKE_GROUPS),
            "strike_groups": {g: r.strikes.get(g, 0) for g in STRIKE_GROUPS},
            "other_incidents": r.strikes.get("other", 0),
            "median_ms": r.median_ms,
        }
        for r in lb.rows
    ]
    history = {  # the pages draw the prior (index -1) themselves
        bot: [
            {"index": i, "match_id": match_ids.get(i), "mu": mu, "sigma": sigma}
            for i, mu, sigma in pts
            if i >= 0
        ]
        for bot, pts in lb.history.items()
    }
    return {"rows": rows, "seats": lb.players, "history": history, "head_to_head": _h2h(lb)}


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
