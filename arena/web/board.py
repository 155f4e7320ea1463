"""The leaderboard document of the web page, built from stored results.

The ratings come from :mod:`arena.ratings` (the stored history when the tournament has
written it, else :func:`arena.ratings.rate_results` over the stored results); the
per-bot statistics from :mod:`arena.leaderboard` when it offers them, else from the
records here (see :func:`_stats_from_records`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from arena.ratings import rate_results
from arena.storage import MatchResult, RatingPoint, Storage, TournamentInfo, deal_summary

__all__ = ["compute"]

JSON = dict[str, Any]

RECENT = 25


def compute(
    st: Storage,
    info: TournamentInfo,
    results: Sequence[MatchResult],
    history: Sequence[RatingPoint],
) -> JSON:
    bots = list(info.bots)
    for m in results:
        for b in m.seats:
            if b not in bots:
                bots.append(b)
    last_rated = max((p.index for p in history), default=-1)
    if results and last_rated < max(m.index for m in results):
        # the tournament has not stored the ratings of its latest matches (yet): rate here
        _, computed = rate_results(results, bots)
        history = computed
    hist: dict[str, list[JSON]] = {b: [] for b in bots}
    for p in history:
        hist.setdefault(p.bot, []).append(
            {"index": p.index, "match_id": p.match_id, "mu": p.mu, "sigma": p.sigma}
        )
    n_seats = max((len(m.seats) for m in results), default=3)
    stats = _stats_from_records(st, info, bots, n_seats)
    rows: list[JSON] = []
    for b in bots:
        h = hist.get(b) or []
        mu = h[-1]["mu"] if h else 25.0
        sigma = h[-1]["sigma"] if h else 25.0 / 3
        s = stats.get(b, {})
        rows.append(
            {
                "bot": b,
                "mu": mu,
                "sigma": sigma,
                "conservative": mu - 3 * sigma,
                "matches": sum(1 for m in results if b in m.seats),
                **s,
            }
        )
    rows.sort(key=lambda r: (-round(r["conservative"], 9), -r["mu"], r["bot"]))
    for i, r in enumerate(rows):
        r["rank"] = i + 1
    return {
        "rows": rows,
        "seats": n_seats,
        "history": hist,
        "head_to_head": _head_to_head([r["bot"] for r in rows], results),
        "recent": [_recent(m) for m in list(results)[-RECENT:][::-1]],
    }


def _recent(m: MatchResult) -> JSON:
    return {
        "match_id": m.match_id,
        "index": m.index,
        "players": list(m.seats),
        "scores": list(m.scores),
        "places": list(m.places),
        "deals": m.deals,
        "status": "forfeit" if m.forfeits else "",
    }


def _head_to_head(bots: Sequence[str], results: Sequence[MatchResult]) -> JSON:
    """For each ordered pair (a, b): matches together, a placed ahead of b, tied."""
    cells: dict[str, dict[str, JSON]] = {a: {} for a in bots}
    for m in results:
        place = dict(zip(m.seats, m.places, strict=False))
        for a in m.seats:
            for b in m.seats:
                if a == b:
                    continue
                c = cells.setdefault(a, {}).setdefault(b, {"played": 0, "ahead": 0, "tied": 0})
                c["played"] += 1
                if place[a] < place[b]:
                    c["ahead"] += 1
                elif place[a] == place[b]:
                    c["tied"] += 1
    return {"bots": list(bots), "cells": cells}


def _stats_from_records(
    st: Storage, info: TournamentInfo, bots: Sequence[str], n_seats: int
) -> dict[str, JSON]:
    """Places, score per deal (mean ± 95% CI), auctions won, contracts made, strikes and the
    median decision time of each bot, from the stored records."""
    deltas: dict[str, list[int]] = {b: [] for b in bots}
    places: dict[str, list[int]] = {b: [0] * n_seats for b in bots}
    declared: dict[str, int] = dict.fromkeys(bots, 0)
    contracts: dict[str, int] = dict.fromkeys(bots, 0)
    made: dict[str, int] = dict.fromkeys(bots, 0)
    ms: dict[str, list[float]] = {b: [] for b in bots}
    for _idx, seats, record in st.iter_records(info.id):
        for b in seats:
            deltas.setdefault(b, [])
            places.setdefault(b, [0] * n_seats)
            ms.setdefault(b, [])
            for d in (declared, contracts, made):
                d.setdefault(b, 0)
        result = record.get("result") or {}
        for seat, p in enumerate(result.get("places") or ()):
            if 1 <= int(p) <= n_seats:
                places[seats[seat]][int(p) - 1] += 1
        for deal in record.get("deals") or ():
            for seat, dv in enumerate(deal.get("deltas") or ()):
                if seat < len(seats):
                    deltas[seats[seat]].append(int(dv))
            s = deal_summary(deal)
            if s.declarer is not None and s.declarer < len(seats):
                who = seats[s.declarer]
                declared[who] += 1
                if s.contract is not None and not s.conceded:
                    contracts[who] += 1
                    made[who] += int(bool(s.made))
            for a in deal.get("actions") or ():
                t = a.get("ms")
                seat = a.get("seat")
                if (
                    isinstance(t, int | float)
                    and isinstance(seat, int)
                    and seat < len(seats)
                    and a.get("by", "bot") == "bot"
                ):
                    ms[seats[seat]].append(float(t))
    strikes: dict[str, int] = {}
    for inc in st.incidents(info.id):
        culprit = inc.get("bot")
        if isinstance(culprit, str):
            strikes[culprit] = strikes.get(culprit, 0) + 1
    out: dict[str, JSON] = {}
    for b in deltas:
        xs = deltas[b]
        out[b] = {
            "places": places[b],
            "deals": len(xs),
            "mean_per_deal": statistics.fmean(xs) if xs else None,
            "ci95": 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else None,
            "bidding_wins": declared[b],
            "contracts": contracts[b],
            "contracts_made": made[b],
            "strikes": strikes.get(b, 0),
            "median_ms": statistics.median(ms[b]) if ms[b] else None,
        }
    return out
