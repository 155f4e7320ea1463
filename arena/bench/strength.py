"""Strength benchmark of the bundled bots, with duplicate deals.

For each bot of the ladder against the one below it (``random < heuristic < counting <
pimc``), one copy of the stronger bot plays two copies of the weaker one (three with four
players); every match seed
is played once with the stronger bot in each seat, so every seat's cards (the deals depend
only on the seed and the deal number) are played by both bots — luck of the cards cancels
out. The seats of one seed form one observation. Printed per pair: the stronger bot's points
per deal minus the mean of its two opponents' (with a 95% confidence interval over seeds),
its own and their points per deal, its match win rate (first place; a shared first
place counts as a share), and its decision times: the mean, the 99th percentile and the
slowest (``--json`` adds the median and the 90th percentile), wall time in this process.

Matches run in-process over the engine (no referee, no gRPC), on several processes::

    .venv/bin/python -m arena.bench.strength --matches 20 --max-deals 20
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import bots
from arena import strict_json
from engine import PRESETS, Game, Ruleset, load_ruleset, observe
from sdk.bot import Bot

__all__ = ["LADDER", "bench_strength", "check_run_args", "main", "play_match", "run_tasks"]

T = TypeVar("T")
R = TypeVar("R")

LADDER: tuple[str, ...] = ("random", "heuristic", "counting", "pimc")


def _make(name: str, seed: int, pimc_budget: float | None) -> Bot:
    cls = bots.load(name)
    if name == "pimc":
        kwargs: dict[str, Any] = {"seed": seed}
        if pimc_budget is not None:
            kwargs["budget"] = pimc_budget
        return cls(**kwargs)
    return cls()


def play_match(
    ruleset: Ruleset, seed: int, names: Sequence[str], pimc_budget: float | None = None
) -> dict[str, Any]:
    """Play one match between bundled bots ``names`` (by seat); return scores, places,
    deals played, the decision time per seat and each decision's time (``times``, seconds,
    by seat)."""
    seats = [_make(n, seed * 10 + i, pimc_budget) for i, n in enumerate(names)]
    for bot in seats:  # (named in their log lines: pimc's cut by the clock said "match -")
        bot.match_id = f"strength-{seed}-{'-'.join(names)}"
    game = Game.new(ruleset, seed, [f"{n}#{i}" for i, n in enumerate(names)])
    spent = [0.0] * len(names)
    calls = [0] * len(names)
    times: list[list[float]] = [[] for _ in names]
    while not game.is_over:
        seat = game.to_act
        assert seat is not None
        t = time.perf_counter()
        action = seats[seat].act(observe(game, seat))
        took = time.perf_counter() - t
        spent[seat] += took
        calls[seat] += 1
        times[seat].append(took)
        game.apply(action, seat=seat)
    result = game.result
    assert result is not None
    return {
        "names": list(names),
        "scores": list(result.scores),
        "places": list(result.places),
        "deals": result.deals,
        "seconds": spent,
        "decisions": calls,
        "times": times,
    }


def _task(args: tuple[dict[str, Any], int, list[str], float | None]) -> dict[str, Any]:
    rules, seed, names, budget = args
    return play_match(Ruleset.from_dict(rules), seed, names, budget)


#: The decision-time percentiles reported per pair (name, quantile).
_TAIL = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))


def _percentile(xs: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``xs`` (nearest rank; 0 for none)."""
    if not xs:
        return 0.0
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _ci95(xs: Sequence[float]) -> tuple[float, list[float] | None]:
    """The mean of ``xs`` and its 95% interval, rounded; no interval (``None``, JSON's
    null: ``[-Infinity, Infinity]`` is no JSON) for one value."""
    mean = statistics.fmean(xs)
    if len(xs) < 2:
        return mean, None
    half = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))
    return mean, [round(mean - half, 2), round(mean + half, 2)]


def run_tasks(fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> list[R]:
    """``fn`` of each task, in order: in ``workers`` processes (one task at a time each, as
    the tasks are long and uneven), or here for one worker."""
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            return list(pool.map(fn, tasks, chunksize=1))
    return [fn(t) for t in tasks]


def check_run_args(
    ap: argparse.ArgumentParser, matches: int, workers: int, pimc_budget: float | None
) -> None:
    """``ap.error`` (exit 2) naming ``--matches`` or ``--workers`` below 1, or a
    ``--pimc-budget`` that is no positive number of seconds: the benches' own checks (0
    matches ended in a traceback, 0 workers and a budget of 0 or NaN ran, unsaid)."""
    for flag, value in (("--matches", matches), ("--workers", workers)):
        if value < 1:
            ap.error(f"{flag} must be at least 1, got {value}")
    if pimc_budget is not None and not (math.isfinite(pimc_budget) and pimc_budget > 0):
        ap.error(f"--pimc-budget must be a positive number of seconds, got {pimc_budget}")


def bench_strength(
    ladder: Sequence[str] = LADDER,
    matches: int = 10,
    seed: int = 1,
    ruleset: str | Ruleset = "classic",
    max_deals: int = 20,
    workers: int = 2,
    pimc_budget: float | None = None,
    out: Any = None,
) -> dict[str, Any]:
    """Run the duplicate strength benchmark; ``matches`` seeds per pair, each played in
    every seat; ``max_deals`` caps each match (0: play to the target). Returns the figures
    (and prints a table to ``out`` when given)."""
    rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
    if max_deals:
        rules = dataclasses.replace(rules, max_deals=max_deals)
    n = rules.players
    pairs = [(ladder[i + 1], ladder[i]) for i in range(len(ladder) - 1)]
    tasks = []
    for strong, weak in pairs:
        for k in range(matches):
            for pos in range(n):
                names = [weak] * n
                names[pos] = strong
                tasks.append((rules.to_dict(), seed + k, names, pimc_budget))
    start = time.perf_counter()
    results = run_tasks(_task, tasks, workers)
    elapsed = time.perf_counter() - start

    report: dict[str, Any] = {
        "ruleset": rules.name, "players": n, "matches": matches, "seed": seed,
        "max_deals": max_deals, "seconds": round(elapsed, 1), "pairs": [],
    }  # fmt: skip
    for strong, weak in pairs:
        per_seed: dict[int, list[float]] = {}
        own: list[float] = []
        opp: list[float] = []
        wins = 0.0
        games = 0
        spent = 0.0
        calls = 0
        took: list[float] = []
        for (_, s, names, _), r in zip(tasks, results, strict=True):
            if sorted(set(names)) != sorted({strong, weak}) or names.count(strong) != 1:
                continue
            pos = names.index(strong)
            deals = max(1, r["deals"])
            mine = r["scores"][pos] / deals
            theirs = statistics.fmean(r["scores"][i] / deals for i in range(n) if i != pos)
            per_seed.setdefault(s, []).append(mine - theirs)
            own.append(mine)
            opp.append(theirs)
            places = r["places"]
            if places[pos] == 1:
                wins += 1 / places.count(1)
            games += 1
            spent += r["seconds"][pos]
            calls += r["decisions"][pos]
            took.extend(r["times"][pos])
        diffs = [statistics.fmean(v) for v in per_seed.values()]
        mean, ci = _ci95(diffs)
        report["pairs"].append({
            "bot": strong, "vs": weak, "games": games,
            "diff_per_deal": round(mean, 2), "ci95": ci,
            "bot_per_deal": round(statistics.fmean(own), 2),
            "opp_per_deal": round(statistics.fmean(opp), 2),
            "win_rate": round(wins / games, 3),
            "ms_per_decision": round(1000 * spent / max(1, calls), 1),
            # (the tail, not the mean, is what meets the referee's per-decision limit)
            **{f"ms_{name}": round(1000 * _percentile(took, q), 1) for name, q in _TAIL},
        })  # fmt: skip
    if out is not None:
        _print(report, out)
    return report


def _print(report: dict[str, Any], out: Any) -> None:
    print(
        f"strength: ruleset={report['ruleset']} matches={report['matches']} "
        f"seed={report['seed']} max_deals={report['max_deals']} ({report['seconds']} s)",
        file=out,
    )
    copies = f"vs {report.get('players', 3) - 1}x"  # the weaker bot's copies
    print(
        f"{'bot':>10} {copies:>10} {'games':>6} {'Δpts/deal':>10} {'95% CI':>18} "
        f"{'own/deal':>9} {'opp/deal':>9} {'win rate':>9} {'ms/dec':>7} {'p99 ms':>7} "
        f"{'max ms':>7}",
        file=out,
    )
    for p in report["pairs"]:
        lo_hi = p["ci95"]
        ci = "none: 1 seed" if lo_hi is None else f"[{lo_hi[0]:+.1f}, {lo_hi[1]:+.1f}]"
        print(
            f"{p['bot']:>10} {p['vs']:>10} {p['games']:>6} {p['diff_per_deal']:>+10.1f} "
            f"{ci:>18} {p['bot_per_deal']:>9.1f} {p['opp_per_deal']:>9.1f} "
            f"{p['win_rate']:>9.1%} {p['ms_per_decision']:>7.1f} {p['ms_p99']:>7.0f} "
            f"{p['ms_max']:>7.0f}",
            file=out,
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m arena.bench.strength",
        description="Duplicate-deal strength benchmark of the bundled bots (each against "
        "two copies of the one below it in the ladder; three with four players).",
    )
    ap.add_argument(
        "--bots",
        default=",".join(LADDER),
        help="the ladder, weakest first, comma-separated (default: %(default)s)",
    )
    ap.add_argument(
        "--matches",
        "--deals",
        type=int,
        default=10,
        dest="matches",
        help="match seeds per pair; each is played in every seat (default: 10)",
    )
    ap.add_argument("--seed", type=int, default=1, help="first match seed (default: 1)")
    ap.add_argument(
        "--ruleset",
        default="classic",
        help=f"preset ({', '.join(PRESETS)}) or TOML file (default: classic)",
    )
    ap.add_argument(
        "--max-deals", type=int, default=20, help="cap on deals per match, 0 for none (default: 20)"
    )
    ap.add_argument("--workers", type=int, default=2, help="processes (default: 2)")
    ap.add_argument(
        "--pimc-budget",
        type=float,
        default=None,
        help="pimc's seconds per decision (default: the bot's own)",
    )
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)  # fmt: skip
    ladder = [b.strip() for b in args.bots.split(",") if b.strip()]
    if len(ladder) < 2:
        ap.error("--bots needs at least two bots")
    twice = [a for a, b in itertools.pairwise(ladder) if a == b]
    if twice:  # (its pair has no game of one against two others: a traceback)
        ap.error(f"--bots: {twice[0]} follows itself (each bot plays the one before it)")
    unknown = [b for b in ladder if b not in bots.BUNDLED]
    if unknown:
        # (a bot author's file met a KeyError's traceback: `try` is the duplicate run for it)
        ap.error(
            f"--bots: {', '.join(unknown)} is no bundled bot ({', '.join(bots.BUNDLED)}); "
            "to measure a bot of your own on duplicate deals, with a 95% interval: "
            "arena-bot try mybot.py:New --vs mybot.py:Old -n 60 (docs/writing-a-bot.md)"
        )
    check_run_args(ap, args.matches, args.workers, args.pimc_budget)
    try:  # (an unknown preset, a bad file, a negative --max-deals: a traceback)
        rules = load_ruleset(args.ruleset)
        if args.max_deals:
            rules = dataclasses.replace(rules, max_deals=args.max_deals)
    except ValueError as exc:
        ap.error(str(exc))
    report = bench_strength(
        ladder, args.matches, args.seed, rules, args.max_deals, args.workers,
        args.pimc_budget, out=None if args.json else sys.stdout,
    )  # fmt: skip
    if args.json:
        print(strict_json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
