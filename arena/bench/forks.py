"""Decision-level forks: what a change to pimc's delegated decisions is worth, deal by deal.

A change to pimc's auction or contract (decided by its ``counting`` delegate,
``bots.pimc._Delegate``) touches a few decisions in a hundred deals; whole games of pimc
(``arena.bench.strength``) need hours to separate a few points per deal from zero on this
machine. Here, for every seed and every seat, deal 0 is dealt with pimc in that seat and
``counting`` bots in the others; at each of pimc's delegated decisions (bidding, passing,
contract) the variant's answer is compared with the delegate's, and at the first that
differs the deal is forked: played to its end once with each answer, pimc (with that
delegate) playing its cards. Deals where nothing differs count 0 (they replay the same).

Printed: the variant's gain in pimc's deal score minus its opponents' mean, per deal (a seed's
seats averaged), with a 95% interval over seeds, and how many decisions changed::

    .venv/bin/python -m arena.bench.forks --variant bid-confidence=0.7 --ruleset 1001 --matches 60

Variants (round 54, ``docs/bots.md``): ``bid-confidence=X`` (the auction's confidence where
a concession costs the bid, counting's 0.65), ``auction-offset=X`` (the auction's take
offset there, counting's 15), ``raise-cap`` (a raise above the bid capped at the level
pimc's weak-hand take model scores best, the four aces excepted), ``free-concede=X``
(counting's break-even chance of the bid under a free concession paying half the bid,
0.36: below it the contract is conceded); the chances run from 0 to 1. The play-outs are pimc's
searches (its default budget, counted in work): a machine so loaded that a search is cut
by its wall-clock backstop makes a rerun differ slightly.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from arena import strict_json
from arena.bench.strength import check_run_args, run_tasks
from bots.counting import CountingBot
from bots.heuristic import made_contract_scores, relative_score_of_play
from bots.pimc import PimcBot, _Delegate
from engine import (
    Action,
    Bid,
    Contract,
    Game,
    Phase,
    PlayerView,
    Rank,
    Ruleset,
    load_ruleset,
    observe,
)

__all__ = ["VARIANTS", "fork_seed", "forks", "main", "variant"]

_DELEGATED = (Phase.BIDDING, Phase.PASSING, Phase.CONTRACT)


class _PenaltyAuction(_Delegate):
    """The delegate with its auction's confidence and take offset changed where a
    concession costs the bid (``concede = "penalty"``, off the barrel)."""

    confidence = 0.65
    offset = 15.0

    def _changed(self, view: PlayerView) -> bool:
        return view.ruleset.concede == "penalty" and not self._on_barrel(view)

    def p_make_bid(self, view: PlayerView, amount: float) -> float:
        if not self._changed(view):
            return super().p_make_bid(view, amount)
        ests = self.talon_estimates(view)
        return sum(self.p_make(e + self.offset, amount, self.sigma) for e in ests) / len(ests)

    def bid_limit(self, view: PlayerView) -> float:
        if not self._changed(view):
            return super().bid_limit(view)
        limit = 0.0
        for amount in sorted(a.amount for a in view.legal_actions if isinstance(a, Bid)):
            if self.p_make_bid(view, amount) < self.confidence:
                break
            limit = float(amount)
        return limit


class _RaiseCap(_Delegate):
    """The delegate naming, of the levels from the bid to counting's, the one pimc's
    weak-hand take model (the estimate + ``concede_offset``, spread ``concede_sigma``)
    scores best relative to the opponents; a hand holding the four aces keeps counting's
    level (its own measured model, ``aces_ten_offset``)."""

    def contract(self, view: PlayerView) -> Action:
        choice = super().contract(view)
        if not isinstance(choice, Contract) or view.bid is None or choice.amount <= view.bid:
            return choice
        if view.ruleset.ace_marriage and sum(c.rank == Rank.ACE for c in view.hand) == 4:
            return choice
        pred = self.contract_estimate(view) + self.concede_offset
        levels = sorted(
            (
                a
                for a in view.legal_actions
                if isinstance(a, Contract) and a.amount <= choice.amount
            ),
            key=lambda a: a.amount,
        )

        def score(a: Contract) -> float:
            p = self.p_make(pred, a.amount, self.concede_sigma)
            return relative_score_of_play(
                p, a.amount, pred, self.concede_sigma,
                made_scores=made_contract_scores(view, a.amount),
            )  # fmt: skip

        return max(levels, key=score)  # (the lowest of equals: max keeps the first)


def _bid_confidence(value: float | None) -> _Delegate:
    bot = _PenaltyAuction()
    bot.confidence = _chance(value, "bid-confidence")
    return bot


def _auction_offset(value: float | None) -> _Delegate:
    bot = _PenaltyAuction()
    bot.offset = _required(value, "auction-offset")
    return bot


def _free_concede(value: float | None) -> _Delegate:
    bot = _Delegate()
    bot.concede_free_at = _chance(value, "free-concede")
    return bot


def _raise_cap(value: float | None) -> _Delegate:
    if value is not None:
        raise ValueError("raise-cap takes no value")
    return _RaiseCap()


def _required(value: float | None, name: str) -> float:
    if value is None:
        raise ValueError(f"{name} needs a value: {name}=X")
    return value


def _chance(value: float | None, name: str) -> float:
    """A variant's value that is a chance, from 0 to 1 (``bid-confidence=5`` was taken, and
    pimc then never bid: a measure of nothing, unsaid)."""
    chance = _required(value, name)
    if not 0.0 <= chance <= 1.0:
        raise ValueError(f"{name}={chance:g}: a chance, from 0 to 1")
    return chance


#: Variant name -> the delegate it builds from its value (``name=X``, or ``name``).
VARIANTS: dict[str, Callable[[float | None], _Delegate]] = {
    "bid-confidence": _bid_confidence,
    "auction-offset": _auction_offset,
    "raise-cap": _raise_cap,
    "free-concede": _free_concede,
}


def variant(spec: str) -> _Delegate:
    """The delegate of a variant ``spec`` (``name`` or ``name=X``); a clear ValueError
    naming what is wrong otherwise."""
    name, sep, raw = spec.partition("=")
    if name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})")
    value: float | None = None
    if sep:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"variant {name}: {raw!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"variant {name}: {raw!r} is not a finite number")
    return VARIANTS[name](value)


def _play_out(game: Game, seat: int, delegate: _Delegate, seed: int, budget: float | None) -> float:
    """Play ``game`` to its end, pimc (with ``delegate``; ``budget``: its seconds per
    decision, default its own) in ``seat``, counting bots in the other seats; pimc's score
    minus its opponents' mean."""
    pimc = PimcBot(seed=seed) if budget is None else PimcBot(budget=budget, seed=seed)
    pimc._counting = delegate
    others = {s: CountingBot() for s in range(game.ruleset.players) if s != seat}
    while not game.is_over:
        s = game.to_act
        assert s is not None
        view = observe(game, s)
        game.apply(pimc.act(view) if s == seat else others[s].act(view), seat=s)
    scores = game.scores
    return scores[seat] - statistics.fmean(x for i, x in enumerate(scores) if i != seat)


def fork_seed(
    rules: Ruleset, seed: int, spec: str, pimc_budget: float | None = None
) -> list[dict[str, Any]]:
    """Deal 0 of ``seed`` with pimc in each seat in turn: one row per seat, with the first
    changed decision (if any) and both outcomes (``old``, ``new``; equal when unchanged)."""
    rules = dataclasses.replace(rules, max_deals=1)
    rows: list[dict[str, Any]] = []
    for seat in range(rules.players):
        game = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
        old, new = _Delegate(), variant(spec)
        others = {s: CountingBot() for s in range(rules.players) if s != seat}
        row: dict[str, Any] = {"seed": seed, "seat": seat, "old": 0.0, "new": 0.0}
        while not game.is_over and game.phase in _DELEGATED:
            s = game.to_act
            assert s is not None
            view = observe(game, s)
            if s != seat or len(view.legal_actions) == 1:
                game.apply(others[s].act(view) if s != seat else view.legal_actions[0], seat=s)
                continue
            a_old, a_new = old.act(view), new.act(view)
            if a_old != a_new:
                row["decision"] = f"{view.phase.name.lower()} at {view.bid}: {a_old} -> {a_new}"
                branches = game.clone(), game.clone()
                branches[0].apply(a_old, seat=s)
                branches[1].apply(a_new, seat=s)
                pimc_seed = seed * 10 + seat
                row["old"] = _play_out(branches[0], seat, _Delegate(), pimc_seed, pimc_budget)
                row["new"] = _play_out(branches[1], seat, variant(spec), pimc_seed, pimc_budget)
                break
            game.apply(a_old, seat=s)
        rows.append(row)
    return rows


def _task(args: tuple[dict[str, Any], int, str, float | None]) -> list[dict[str, Any]]:
    rules, seed, spec, budget = args
    return fork_seed(Ruleset.from_dict(rules), seed, spec, budget)


def forks(
    spec: str,
    ruleset: str | Ruleset = "1001",
    seed: int = 0,
    matches: int = 60,
    workers: int = 2,
    pimc_budget: float | None = None,
) -> dict[str, Any]:
    """Fork ``matches`` seeds from ``seed`` on variant ``spec`` (``pimc_budget``: pimc's
    seconds per decision in the play-outs, default its own); the figures as a dict."""
    variant(spec)  # (a bad spec named here, not in a worker)
    if matches < 1:
        raise ValueError(f"matches must be at least 1, got {matches}")
    if workers < 1:  # (0 or less ran in this process, as 1 does, unsaid)
        raise ValueError(f"workers must be at least 1, got {workers}")
    if pimc_budget is not None and not (math.isfinite(pimc_budget) and pimc_budget > 0):
        # (0, a negative or a NaN was taken as pimc's budget, unsaid)
        raise ValueError(f"pimc_budget must be a positive number of seconds, got {pimc_budget}")
    rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
    tasks = [(rules.to_dict(), s, spec, pimc_budget) for s in range(seed, seed + matches)]
    start = time.perf_counter()
    per_seed = run_tasks(_task, tasks, workers)
    diffs = [statistics.fmean(r["new"] - r["old"] for r in rows) for rows in per_seed]
    mean = statistics.fmean(diffs)
    # (one seed has no interval: null, not [-Infinity, Infinity], which is no JSON)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else None
    changed = [r for rows in per_seed for r in rows if "decision" in r]
    return {
        "variant": spec, "ruleset": rules.name, "seed": seed, "matches": matches,
        "deals": sum(len(rows) for rows in per_seed), "changed": len(changed),
        "better": sum(r["new"] > r["old"] for r in changed),
        "worse": sum(r["new"] < r["old"] for r in changed),
        "gain_per_deal": round(mean, 2),
        "ci95": None if half is None else [round(mean - half, 2), round(mean + half, 2)],
        "seconds": round(time.perf_counter() - start, 1), "forks": changed,
    }  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m arena.bench.forks",
        description="What a variant of pimc's delegated decisions gains, by forking deal 0 "
        "of each seed (pimc in each seat, counting bots elsewhere) at the first decision "
        "it changes and playing both branches out.",
    )
    ap.add_argument("--variant", required=True, help=f"one of {', '.join(VARIANTS)} (name=X)")
    ap.add_argument("--ruleset", default="1001", help="preset or TOML file (default: 1001)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default: 0)")
    ap.add_argument("--matches", type=int, default=60, help="seeds (default: 60)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default: 2)")
    ap.add_argument("--pimc-budget", type=float, default=None, help="pimc's seconds per decision")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    check_run_args(ap, args.matches, args.workers, args.pimc_budget)
    try:
        report = forks(
            args.variant, args.ruleset, args.seed, args.matches, args.workers, args.pimc_budget
        )
    except ValueError as exc:  # a bad variant or ruleset: named, no traceback
        ap.error(str(exc))
    if args.json:
        print(strict_json.dumps(report, indent=2))
        return 0
    for f in report["forks"]:
        print(f"  seed {f['seed']} seat {f['seat']} {f['decision']}: "
              f"{f['old']:+.1f} -> {f['new']:+.1f}")  # fmt: skip
    ci = report["ci95"]
    interval = "(no interval: one seed)" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"
    print(
        f"forks: variant={report['variant']} ruleset={report['ruleset']} "
        f"seeds {report['seed']}-{report['seed'] + report['matches'] - 1} "
        f"({report['seconds']} s): {report['gain_per_deal']:+.2f} {interval} "
        f"per deal; {report['changed']} of {report['deals']} deals changed "
        f"({report['better']} better, {report['worse']} worse)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
