"""Leaderboard statistics, computed from the stored match records of one tournament."""

from __future__ import annotations

import math
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any

from arena.ratings import DEFAULT_DRAW_PROBABILITY, MU, SIGMA, RatingLedger
from arena.storage import MatchResult, Storage, StorageError, TournamentInfo, deal_summary
from engine.record import COUNTED_INCIDENTS
from engine.rules import describe_run

__all__ = ["BotStats", "HeadToHead", "Leaderboard", "LeaderboardBuilder", "build_leaderboard"]

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
    #: Of ``strikes["other"]`` (no strike): the decisions the bot failed (``bot_error``
    #: incidents: it raised, or answered no action, and its client sent a fallback).
    bot_errors: int = 0

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
    #: The ruleset for people, with the deal cap (:func:`engine.rules.describe_run`):
    #: ``ruleset`` is its name alone, the same for two tournaments whose house rules or
    #: deal caps differ. The table size is said where it is not the preset's, as the web's
    #: API and ``arena tournament``'s first line say it: a classic for four read "classic"
    #: in the CSV, which has no column of the table size.
    ruleset_description: str = ""
    #: The same without the table size, for the title, which says it (``, 4 players``).
    ruleset_heading: str = ""
    #: The stored ruleset's options as they are (an older row may lack some).
    ruleset_options: dict[str, Any] = field(default_factory=dict)
    #: How the matches were dealt, the config's ``deals``: ``"duplicate"`` or
    #: ``"independent"`` (``arena serve``'s are). Two runs of one config but for it
    #: otherwise read the same everywhere. A season's: ``"mixed"`` when its tournaments
    #: were dealt some one way, some the other.
    deals: str = "duplicate"
    #: A season's tournaments (:mod:`arena.leaderboard.season`), in the order rated: id,
    #: name, matches, dates, ``bots_changed``. Empty for one tournament's leaderboard.
    season: list[dict[str, Any]] = field(default_factory=list)
    #: What the reader must know of a season's figures (a bot's code changed between its
    #: tournaments, one unfinished), said under the standings in every format.
    notes: list[str] = field(default_factory=list)

    @property
    def deals_note(self) -> str:
        """``"independent deals"`` for a tournament of ``deals = "independent"``, for its
        title; "" for duplicate deals (the format's default) and for ``arena serve``, whose
        matches are all dealt on seeds of their own; ``"duplicate and independent deals"``
        for a season whose tournaments were dealt both ways."""
        if self.deals == "independent" and self.config.get("kind") != "serve":
            return "independent deals"
        if self.deals == "mixed":  # (a season's: which luck is in its standings varies)
            return "duplicate and independent deals"
        return ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``leaderboard.json``)."""
        rows = []
        for r in self.rows:
            d = asdict(r)
            d["made_pct"] = r.made_pct
            rows.append(d)
        season = {"tournaments": self.season, "notes": self.notes}
        return {
            "format": "thousand-arena/leaderboard/1",
            "tournament": {
                "id": self.tournament_id,
                "name": self.name,
                "ruleset": self.ruleset,
                "ruleset_description": self.ruleset_description or self.ruleset,
                "ruleset_options": self.ruleset_options,
                "deals": self.deals,
                "players": self.players,
                "total_matches": self.total_matches,
                "completed": self.completed,
                "created_at": self.created_at,
                "finished_at": self.finished_at,
            },
            **({"season": season} if self.season else {}),
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


def _count(sums: list[int], x: int) -> None:
    """Count the whole number ``x`` into ``sums`` ([how many, sum, sum of squares])."""
    sums[0] += 1
    sums[1] += x
    sums[2] += x * x


def _mean(sums: list[int]) -> float | None:
    """The mean of the values counted in ``sums`` (see :func:`_count`), as
    :func:`statistics.fmean` gives it."""
    n, total, _ = sums
    return float(total) / n if n else None


def _ci95(sums: list[int]) -> float | None:
    """The half-width of the 95 % interval of the mean of the values counted in ``sums``:
    1.96 standard deviations (:func:`statistics.stdev`'s, from the exact sums) over √n.

    >>> import statistics
    >>> sums = [0, 0, 0]
    >>> for x in (120, 50, 40):
    ...     _count(sums, x)
    >>> _ci95(sums) == 1.96 * statistics.stdev([120, 50, 40]) / math.sqrt(3)
    True
    """
    n, total, squares = sums
    if n < 2:
        return None
    variance = Fraction(n * squares - total * total, n * (n - 1))
    return 1.96 * _sqrt(variance) / math.sqrt(n)


def _sqrt(x: Fraction) -> float:
    """√x correctly rounded, as :func:`statistics.stdev` takes the root of its exact
    variance (to 2 * 53 + 3 bits rounded to odd, then to the float): a float's root of
    the float nearest x may be 1 ulp off, and the leaderboard's figures are the same
    whichever way they were counted."""
    n, m = x.numerator, x.denominator
    q = (n.bit_length() - m.bit_length() - 2 * sys.float_info.mant_dig - 3) // 2
    if q >= 0:
        m <<= 2 * q
    else:
        n <<= -2 * q
    root = math.isqrt(n // m)
    root |= root * root * m != n  # (round to odd: the bits past the float's are not all 0)
    return root * 2.0**q if q >= 0 else root / (1 << -q)


def _damaged(storage: Storage, tournament_id: str, what: str) -> StorageError:
    return StorageError(
        f"{storage.path}: the stored config of tournament {tournament_id} is damaged ({what}); "
        "it was changed outside the arena"
    )


def _check_record_agrees(storage: Storage, row: MatchResult, rec: dict[str, Any]) -> None:
    """A StorageError unless a stored record's players and result are its row's: both are
    written from the record in one transaction, so a difference is a hand edit. The ratings
    are made from the rows and the rest of the leaderboard from the records: a record
    emptied (``{}``) or a place edited in it was counted as it stood, the figures then
    disagreeing with the ratings (and `arena replay` of that match calling it damaged)."""
    stored = rec.get("result")
    result: dict[str, Any] = stored if isinstance(stored, dict) else {}
    checks = [
        ("players", rec.get("players", list(row.seats)), list(row.seats)),
        ("result.places", result.get("places"), list(row.places)),
        ("result.scores", result.get("scores"), list(row.scores)),
    ]
    for key, theirs, ours in checks:
        if theirs != ours:
            raise StorageError(
                f"{storage.path}: the stored record of match {row.match_id} is damaged (its "
                f"{key} is {theirs!r:.60}, its row says {ours!r:.60}); it was changed outside "
                "the arena"
            )


def build_leaderboard(storage: Storage, tournament_id: str) -> Leaderboard:
    """Everything the outputs show, from the stored records of ``tournament_id``."""
    info = storage.tournament(tournament_id)
    if info is None:
        known = ", ".join(t.id for t in storage.tournaments()) or "none"
        raise LookupError(f"no tournament {tournament_id!r} in {storage.path} (stored: {known})")
    builder = LeaderboardBuilder(storage, info)
    builder.update(storage)
    return builder.build(info)


class StoredSince:
    """What reads a tournament's stored matches a batch at a time: :meth:`update` reads
    only those stored since it last did (:meth:`_read_since`), and tells when matches it
    read were deleted since, which only a new reader can account for."""

    def __init__(self, tournament_id: str) -> None:
        self.tournament_id = tournament_id
        #: The matches read so far, and where the last of them is in the order of storing.
        self.read = 0
        self.mark = 0
        self._at_mark: tuple[str, str] | None = None  # (the match stored there, see update)

    def update(self, storage: Storage) -> bool:
        """Read the matches stored since the last update; ``False`` (nothing read) when
        stored matches were deleted since."""
        with storage.reading():
            count, top = storage.stored_state(self.tournament_id)
            # The latest match read was deleted (and its position taken again: the count
            # cannot tell a replay stored there from the match read before).
            if storage.stored_at(self.mark) != self._at_mark:
                return False
            if top <= self.mark:
                return count == self.read
            if not self._read_since(storage, count - self.read):
                return False
            self.read, self.mark, self._at_mark = count, top, storage.stored_at(top)
        return True

    def _read_since(self, storage: Storage, new: int) -> bool:
        """Read the matches stored after ``self.mark`` (in ``storage.reading()``), unless
        they are not ``new`` many (an earlier one deleted): then ``False``, nothing read."""
        raise NotImplementedError


class LeaderboardBuilder(StoredSince):
    """:func:`build_leaderboard` of one tournament, kept up to date: :meth:`update` reads
    only the matches stored since it last did (their records, and their results rated in
    schedule order by a :class:`~arena.ratings.RatingLedger`), and :meth:`build` makes the
    leaderboard of every match read so far. `arena web` follows a running tournament with
    one: reading every stored match at each refresh took 11 s at 10,000 matches."""

    def __init__(self, storage: Storage, info: TournamentInfo) -> None:
        tournament_id = info.id
        cfg = info.config
        draw = cfg.get("draw_probability", DEFAULT_DRAW_PROBABILITY)
        # (what a config may give: arena.tournament.config.MAX_DRAW_PROBABILITY at most)
        if type(draw) not in (int, float) or not 0 < draw <= 0.99:
            raise _damaged(storage, tournament_id, f"draw_probability {draw!r:.40} is not a "
                           "number above 0 and at most 0.99")  # fmt: skip
        ruleset = cfg.get("ruleset") or {}
        if not isinstance(ruleset, dict):  # a preset named by a hand-made config (the web demo)
            ruleset = {"name": str(ruleset)}
        stored = ruleset.get("players")
        if stored and (type(stored) is not int or stored not in (3, 4)):  # (as a ruleset allows)
            raise _damaged(storage, tournament_id, f"ruleset.players {stored!r:.40} is not 3 or 4")
        super().__init__(tournament_id)
        #: What tells this tournament from another stored later under its id (--fresh), and
        #: its config from one changed since (by hand: the draw and ruleset are read here).
        self.made_for = (info.created_at, info.fingerprint, info.bots, info.config)
        self.ruleset = ruleset
        self._stored_players = int(stored or 0)
        self._seen_players = 0  # the most seats of a match read (when the ruleset says none)
        self.ratings = RatingLedger(info.bots, draw_probability=draw)
        bots = self.bots = list(info.bots)
        self.place_counts: dict[str, Counter[int]] = {b: Counter() for b in bots}
        self.matches: Counter[str] = Counter()
        # bot -> [how many, their sum, the sum of their squares] of its final match scores,
        # and of its deal deltas: whole numbers, so the sums are exact and the mean and the
        # deviation are those of every value (a list of each was most of the memory)
        self.final_scores: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.deltas: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.bids_won: Counter[str] = Counter()
        self.contracts: Counter[str] = Counter()
        self.made: Counter[str] = Counter()
        self.concessions: Counter[str] = Counter()
        self.strikes: dict[str, Counter[str]] = defaultdict(Counter)
        self.bot_errors: Counter[str] = Counter()
        # bot -> decision time (ms) -> how many decisions took it (a list of every time would
        # be most of the memory: see median_of_counts)
        self.times: dict[str, Counter[float]] = defaultdict(Counter)
        self.ahead: dict[str, dict[str, int]] = {a: dict.fromkeys(bots, 0) for a in bots}
        self.together: dict[str, dict[str, int]] = {a: dict.fromkeys(bots, 0) for a in bots}

    def _read_since(self, storage: Storage, new: int) -> bool:
        results = storage.match_results(self.tournament_id, stored_after=self.mark)
        if len(results) != new:
            return False
        self.read_matches(storage, self.tournament_id, results, stored_after=self.mark)
        return True

    def read_matches(
        self,
        storage: Storage,
        tournament_id: str,
        results: list[MatchResult],
        *,
        stored_after: int = 0,
        offset: int = 0,
    ) -> None:
        """Count the records of ``results`` (``tournament_id``'s matches stored after
        ``stored_after``) and rate them, their schedule indices moved by ``offset``: a
        season (:mod:`arena.leaderboard.season`) rates its tournaments one after another."""
        rows = {m.index: m for m in results}
        for idx, seats, rec in storage.iter_records(tournament_id, stored_after=stored_after):
            row = rows.get(idx)
            if row is not None:
                _check_record_agrees(storage, row, rec)
            self._add(seats, rec)
        self._seen_players = max(self._seen_players, *(len(m.seats) for m in results), 0)
        self.ratings.add([replace(m, index=m.index + offset) for m in results])

    def _add(self, seats: list[str], rec: dict[str, Any]) -> None:
        """Count one match's record."""
        bots, ahead, together = self.bots, self.ahead, self.together
        for name in seats:
            if name not in self.place_counts:  # a bot not in the config's list (should not happen)
                bots.append(name)
                self.place_counts[name] = Counter()
                ahead[name] = dict.fromkeys(bots, 0)
                together[name] = dict.fromkeys(bots, 0)
                for a in bots:
                    ahead[a].setdefault(name, 0)
                    together[a].setdefault(name, 0)
        result = rec.get("result") or {}
        pl = [int(p) for p in result.get("places", [])]
        sc = [int(x) for x in result.get("scores", [])]
        for s, bot in enumerate(seats):
            self.matches[bot] += 1
            if s < len(pl):
                self.place_counts[bot][pl[s]] += 1
            if s < len(sc):
                _count(self.final_scores[bot], sc[s])
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if i != j and i < len(pl) and j < len(pl):
                    together[a][b] += 1
                    if pl[i] < pl[j]:
                        ahead[a][b] += 1
        deltas, times, strikes = self.deltas, self.times, self.strikes
        for deal in rec.get("deals") or ():
            for s, d in enumerate(deal.get("deltas") or ()):
                if s < len(seats):
                    _count(deltas[seats[s]], int(d))
            # Every decision a bot answered is timed, in the deal an abandoned match stopped
            # in too (it was left out with that deal: a bot's decisions and median said less
            # than its record).
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
            if "deltas" not in deal:
                continue  # the deal an abandoned match stopped in: no outcome, no score
            summ = deal_summary(deal)
            if summ.declarer is not None and summ.declarer < len(seats):
                who = seats[summ.declarer]
                self.bids_won[who] += 1
                if summ.conceded:
                    self.concessions[who] += 1
                elif summ.contract is not None:
                    self.contracts[who] += 1
                    self.made[who] += int(bool(summ.made))
        recorded: Counter[tuple[int, str]] = Counter()
        for inc in rec.get("incidents") or ():
            seat = inc.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(seats):
                kind = str(inc.get("kind"))
                strikes[seats[seat]][_KIND_GROUP.get(kind, "other")] += 1
                if kind == "bot_error":  # (of "other", told apart: decisions the bot failed)
                    self.bot_errors[seats[seat]] += 1
                recorded[seat, kind] += 1
        # The referee records only the first few disconnects, late answers and failed
        # decisions of a seat one by one (the record's size stays bounded) and counts them
        # all: the totals win.
        for key, kind in COUNTED_INCIDENTS:
            totals = rec.get(key)
            if isinstance(totals, list):
                for s, total in enumerate(totals[: len(seats)]):
                    if type(total) is int and total > recorded[s, kind]:
                        group = _KIND_GROUP.get(kind, "other")
                        strikes[seats[s]][group] += total - recorded[s, kind]
                        if kind == "bot_error":
                            self.bot_errors[seats[s]] += total - recorded[s, kind]

    def build(self, info: TournamentInfo) -> Leaderboard:
        """The leaderboard of the matches read so far (``info``: the tournament as it is)."""
        players = self._stored_players or self._seen_players or 3
        book = self.ratings.book
        rows: list[BotStats] = []
        for rank, r in enumerate(book.leaderboard(), 1):
            b = r.bot
            dl = self.deltas.get(b, [0, 0, 0])
            fs = self.final_scores.get(b, [0, 0, 0])
            counts = self.place_counts.get(b, Counter())
            times = self.times.get(b)
            rows.append(
                BotStats(
                    rank=rank,
                    bot=b,
                    mu=r.mu,
                    sigma=r.sigma,
                    conservative=r.conservative,
                    matches=self.matches[b],
                    places=[counts[k] for k in range(1, players + 1)],
                    deals=dl[0],
                    mean_per_deal=_mean(dl),
                    ci95=_ci95(dl),
                    bids_won=self.bids_won[b],
                    contracts=self.contracts[b],
                    contracts_made=self.made[b],
                    concessions=self.concessions[b],
                    strikes={g: self.strikes[b][g] for g in (*STRIKE_GROUPS, "other")},
                    decisions=sum(times.values()) if times is not None else 0,
                    median_ms=median_of_counts(times) if times is not None else None,
                    mean_score=_mean(fs),
                    bot_errors=self.bot_errors[b],
                )
            )

        history: dict[str, list[tuple[int, float, float]]] = {
            b: [(-1, MU, SIGMA)] for b in info.bots
        }
        for bot, pts in self.ratings.history().items():
            history.setdefault(bot, [(-1, MU, SIGMA)]).extend(pts)

        cfg = info.config
        ruleset = self.ruleset
        return Leaderboard(
            tournament_id=info.id,
            name=info.name,
            ruleset=str(ruleset.get("name", "?")),
            players=players,
            total_matches=info.total_matches,
            completed=info.completed,
            created_at=info.created_at,
            finished_at=info.finished_at,
            # local time with its UTC offset, as the stored `created_at` and `finished_at`:
            # without one, a leaderboard written in New York said it was generated five
            # hours before its tournament was created
            generated_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            rows=rows,
            h2h=HeadToHead(
                bots=[r.bot for r in rows],
                ahead={a: dict(row) for a, row in self.ahead.items()},
                together={a: dict(row) for a, row in self.together.items()},
            ),
            history=history,
            config=cfg,
            ruleset_description=describe_run(ruleset),
            ruleset_heading=describe_run(ruleset, players=False),
            ruleset_options=dict(ruleset) if isinstance(cfg.get("ruleset"), dict) else {},
            deals="independent" if cfg.get("deals") == "independent" else "duplicate",
        )


_KIND_GROUP = {k: g for g, kinds in STRIKE_GROUPS.items() for k in kinds}
