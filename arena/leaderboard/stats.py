"""Leaderboard statistics, computed from the stored match records of one tournament."""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.ratings import DEFAULT_DRAW_PROBABILITY, MU, SIGMA, rate_results
from arena.storage import Storage, StorageError, deal_summary
from engine.rules import describe_run

__all__ = ["BotStats", "HeadToHead", "Leaderboard", "build_leaderboard"]

#: Incident kinds grouped into the leaderboard's strike columns. ``wrong_request`` (an
#: answer to no pending request: mostly a late one, already counted as its timeout) is no
#: strike (docs/protocol.md) and is left out.
STRIKE_GROUPS: dict[str, tuple[str, ...]] = {
    "timeouts": ("timeout",),
    "illegal": ("illegal", "malformed"),
    "disconnects": ("disconnect",),
    "forfeits": ("forfeit",),
}


@dataclass(slots=True)
class BotStats:
    """One row of the leaderboard."""

    rank: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    places: list[int]  # places[k] = how often the bot finished (k+1)-th
    deals: int
    mean_per_deal: float | None
    ci95: float | None  # half-width of the 95% interval of mean_per_deal
    bids_won: int
    contracts: int
    contracts_made: int
    concessions: int
    strikes: dict[str, int]
    decisions: int
    median_ms: float | None
    mean_score: float | None  # final match score, averaged

    @property
    def made_pct(self) -> float | None:
        return 100.0 * self.contracts_made / self.contracts if self.contracts else None


@dataclass(slots=True)
class HeadToHead:
    """``cells[a][b]``: in the matches a and b played together, how often a finished ahead."""

    bots: list[str]
    ahead: dict[str, dict[str, int]]
    together: dict[str, dict[str, int]]

    def behind(self, a: str, b: str) -> int:
        return self.ahead[b][a]

    def ties(self, a: str, b: str) -> int:
        return self.together[a][b] - self.ahead[a][b] - self.ahead[b][a]

    def score(self, a: str, b: str) -> float | None:
        """a's share against b (a tie counts half), or None if they never met."""
        n = self.together[a][b]
        return None if n == 0 else (self.ahead[a][b] + 0.5 * self.ties(a, b)) / n


@dataclass(slots=True)
class Leaderboard:
    tournament_id: str
    name: str
    ruleset: str
    players: int
    total_matches: int
    completed: int
    created_at: str
    finished_at: str | None
    generated_at: str
    rows: list[BotStats]
    h2h: HeadToHead
    #: bot -> [(schedule index, mu, sigma)], starting with (-1, MU, SIGMA).
    history: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    #: The ruleset for people, with the deal cap (:func:`engine.rules.describe_run`, the
    #: table size left out: the title says it): ``ruleset`` is its name alone, the same
    #: for two tournaments whose house rules or deal caps differ.
    ruleset_description: str = ""
    #: The stored ruleset's options as they are (an older row may lack some).
    ruleset_options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``leaderboard.json``)."""
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["made_pct"] = r.made_pct
            rows.append(d)
        return {
            "format": "thousand-arena/leaderboard/1",
            "tournament": {
                "id": self.tournament_id,
                "name": self.name,
                "ruleset": self.ruleset,
                "ruleset_description": self.ruleset_description or self.ruleset,
                "ruleset_options": self.ruleset_options,
                "players": self.players,
                "total_matches": self.total_matches,
                "completed": self.completed,
                "created_at": self.created_at,
                "finished_at": self.finished_at,
            },
            "generated_at": self.generated_at,
            "sort": "conservative = mu - 3*sigma, descending",
            "rows": rows,
            "head_to_head": {
                a: {
                    b: {
                        "matches": self.h2h.together[a][b],
                        "ahead": self.h2h.ahead[a][b],
                        "behind": self.h2h.behind(a, b),
                        "ties": self.h2h.ties(a, b),
                    }
                    for b in self.h2h.bots
                    if b != a
                }
                for a in self.h2h.bots
            },
            "rating_history": {
                bot: [{"index": i, "mu": mu, "sigma": s} for i, mu, s in pts]
                for bot, pts in self.history.items()
            },
        }


def median_of_counts(counts: Counter[float]) -> float | None:
    """The median of the values ``counts`` counts (value -> how many times), exactly as
    :func:`statistics.median` of the values themselves, or None if there are none: the
    middle value, or, of an even number of values, the mean of the two middle ones.

    Decision times are whole milliseconds: a bot's hundreds of thousands of decisions take
    a few thousand distinct values. The list of them all was most of the memory the
    leaderboard took (about 400 MB at 10,000 matches).

    >>> median_of_counts(Counter({5.0: 1, 7.0: 3, 20.0: 2}))
    7.0
    >>> median_of_counts(Counter({1.0: 1, 2.0: 1, 4.0: 1, 9.0: 1}))
    3.0
    """
    ordered = sorted((value, k) for value, k in counts.items() if k > 0)
    n = sum(k for _, k in ordered)
    if n == 0:
        return None

    def at(i: int) -> float:  # the i-th of the sorted values, from 0
        seen = 0
        for value, k in ordered:
            seen += k
            if seen > i:
                return value
        raise IndexError(i)

    mid = n // 2  # as statistics.median: data[mid], or (data[mid - 1] + data[mid]) / 2
    return at(mid) if n % 2 else (at(mid - 1) + at(mid)) / 2


def _ci95(values: list[int]) -> float | None:
    if len(values) < 2:
        return None
    return 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def _damaged(storage: Storage, tournament_id: str, what: str) -> StorageError:
    return StorageError(
        f"{storage.path}: the stored config of tournament {tournament_id} is damaged ({what}); "
        "it was changed outside the arena"
    )


def build_leaderboard(storage: Storage, tournament_id: str) -> Leaderboard:
    """Everything the outputs show, from the stored records of ``tournament_id``."""
    info = storage.tournament(tournament_id)
    if info is None:
        known = ", ".join(t.id for t in storage.tournaments()) or "none"
        raise LookupError(f"no tournament {tournament_id!r} in {storage.path} (stored: {known})")
    cfg = info.config
    draw = cfg.get("draw_probability", DEFAULT_DRAW_PROBABILITY)
    # (what a config may give: arena.tournament.config.MAX_DRAW_PROBABILITY at most)
    if type(draw) not in (int, float) or not 0 < draw <= 0.99:
        raise _damaged(storage, tournament_id, f"draw_probability {draw!r:.40} is not a "
                       "number above 0 and at most 0.99")  # fmt: skip
    bots = list(info.bots)
    ruleset = cfg.get("ruleset") or {}
    if not isinstance(ruleset, dict):  # a preset named by a hand-made config (the web demo)
        ruleset = {"name": str(ruleset)}
    results = storage.match_results(tournament_id)
    stored = ruleset.get("players")
    if stored and (type(stored) is not int or stored not in (3, 4)):  # (as a ruleset allows)
        raise _damaged(storage, tournament_id, f"ruleset.players {stored!r:.40} is not 3 or 4")
    players = int(stored or max((len(m.seats) for m in results), default=3))
    book, history_pts = rate_results(results, bots, draw_probability=draw)

    places: dict[str, list[int]] = {b: [0] * players for b in bots}
    matches: Counter[str] = Counter()
    final_scores: dict[str, list[int]] = defaultdict(list)
    deltas: dict[str, list[int]] = defaultdict(list)
    bids_won: Counter[str] = Counter()
    contracts: Counter[str] = Counter()
    made: Counter[str] = Counter()
    concessions: Counter[str] = Counter()
    strikes: dict[str, Counter[str]] = defaultdict(Counter)
    # bot -> decision time (ms) -> how many decisions took it (a list of every time would
    # be most of the memory: see median_of_counts)
    times: dict[str, Counter[float]] = defaultdict(Counter)
    ahead: dict[str, dict[str, int]] = {a: dict.fromkeys(bots, 0) for a in bots}
    together: dict[str, dict[str, int]] = {a: dict.fromkeys(bots, 0) for a in bots}

    kind_group = {k: g for g, kinds in STRIKE_GROUPS.items() for k in kinds}
    for _idx, seats, rec in storage.iter_records(tournament_id):
        for name in seats:
            if name not in places:  # a bot not in the config's list (should not happen)
                bots.append(name)
                places[name] = [0] * players
                ahead[name] = dict.fromkeys(bots, 0)
                together[name] = dict.fromkeys(bots, 0)
                for a in bots:
                    ahead[a].setdefault(name, 0)
                    together[a].setdefault(name, 0)
        result = rec.get("result") or {}
        pl = [int(p) for p in result.get("places", [])]
        sc = [int(x) for x in result.get("scores", [])]
        for s, bot in enumerate(seats):
            matches[bot] += 1
            if s < len(pl) and 1 <= pl[s] <= players:
                places[bot][pl[s] - 1] += 1
            if s < len(sc):
                final_scores[bot].append(sc[s])
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if i != j and i < len(pl) and j < len(pl):
                    together[a][b] += 1
                    if pl[i] < pl[j]:
                        ahead[a][b] += 1
        for deal in rec.get("deals") or ():
            for s, d in enumerate(deal.get("deltas") or ()):
                if s < len(seats):
                    deltas[seats[s]].append(int(d))
            if "deltas" not in deal:
                continue  # an unfinished deal (should not be stored)
            summ = deal_summary(deal)
            if summ.declarer is not None and summ.declarer < len(seats):
                who = seats[summ.declarer]
                bids_won[who] += 1
                if summ.conceded:
                    concessions[who] += 1
                elif summ.contract is not None:
                    contracts[who] += 1
                    made[who] += int(bool(summ.made))
            for a in deal.get("actions") or ():
                seat = a.get("seat")
                ms = a.get("ms")
                if (
                    isinstance(seat, int)
                    and 0 <= seat < len(seats)
                    and isinstance(ms, int | float)
                    and a.get("by", "bot") == "bot"
                ):
                    times[seats[seat]][float(ms)] += 1
        recorded: Counter[tuple[int, str]] = Counter()
        for inc in rec.get("incidents") or ():
            seat = inc.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(seats):
                kind = str(inc.get("kind"))
                strikes[seats[seat]][kind_group.get(kind, "other")] += 1
                recorded[seat, kind] += 1
        # The referee records only the first few disconnects and late answers of a seat
        # one by one (the record's size stays bounded) and counts them all: the totals win.
        for key, kind in (("disconnects", "disconnect"), ("wrong_requests", "wrong_request")):
            totals = rec.get(key)
            if isinstance(totals, list):
                for s, total in enumerate(totals[: len(seats)]):
                    if type(total) is int and total > recorded[s, kind]:
                        group = kind_group.get(kind, "other")
                        strikes[seats[s]][group] += total - recorded[s, kind]

    rows: list[BotStats] = []
    for rank, r in enumerate(book.leaderboard(), 1):
        b = r.bot
        dl = deltas.get(b, [])
        fs = final_scores.get(b, [])
        rows.append(
            BotStats(
                rank=rank,
                bot=b,
                mu=r.mu,
                sigma=r.sigma,
                conservative=r.conservative,
                matches=matches[b],
                places=places.get(b, [0] * players),
                deals=len(dl),
                mean_per_deal=statistics.fmean(dl) if dl else None,
                ci95=_ci95(dl),
                bids_won=bids_won[b],
                contracts=contracts[b],
                contracts_made=made[b],
                concessions=concessions[b],
                strikes={g: strikes[b][g] for g in (*STRIKE_GROUPS, "other")},
                decisions=sum(times[b].values()) if b in times else 0,
                median_ms=median_of_counts(times[b]) if b in times else None,
                mean_score=statistics.fmean(fs) if fs else None,
            )
        )

    history: dict[str, list[tuple[int, float, float]]] = {b: [(-1, MU, SIGMA)] for b in bots}
    for p in history_pts:
        history.setdefault(p.bot, [(-1, MU, SIGMA)]).append((p.index, p.mu, p.sigma))

    return Leaderboard(
        tournament_id=info.id,
        name=info.name,
        ruleset=str(ruleset.get("name", "?")),
        players=players,
        total_matches=info.total_matches,
        completed=info.completed,
        created_at=info.created_at,
        finished_at=info.finished_at,
        generated_at=time.strftime("%Y-%m-%d %H:%M:%S"),
        rows=rows,
        h2h=HeadToHead(bots=[r.bot for r in rows], ahead=ahead, together=together),
        history=history,
        config=cfg,
        ruleset_description=describe_run(ruleset, players=False),
        ruleset_options=dict(ruleset) if isinstance(cfg.get("ruleset"), dict) else {},
    )
