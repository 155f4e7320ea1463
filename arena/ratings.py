"""TrueSkill ratings of a tournament, from its stored results in schedule order.

Each match is one free-for-all: every bot is a one-player team ranked by its final place;
equal places share a rank (a tie). The environment is explicit (never trueskill's global
one). Leaderboards are ordered by the conservative estimate ``mu - 3*sigma``.

>>> book = RatingBook(["a", "b", "c"])
>>> _ = book.rate(("a", "b", "c"), (1, 2, 3))
>>> [r.bot for r in book.leaderboard()]
['a', 'b', 'c']
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import trueskill

from arena import ffa_trueskill
from arena.storage import MatchResult, RatingPoint

__all__ = [
    "BETA",
    "DEFAULT_DRAW_PROBABILITY",
    "MU",
    "SIGMA",
    "TAU",
    "BotRating",
    "RatingBook",
    "RatingLedger",
    "make_env",
    "rate_results",
]

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2
TAU = SIGMA / 100
#: Exact ties are rare in a free-for-all of 1000: two bots must end a match on the same
#: score. A small draw probability keeps the draw margin narrow (0 is not allowed by the
#: factor graph); the tournament config can change it (``[ratings] draw_probability``).
DEFAULT_DRAW_PROBABILITY = 0.02


def make_env(draw_probability: float = DEFAULT_DRAW_PROBABILITY) -> trueskill.TrueSkill:
    """The explicit TrueSkill environment of the arena (the standard constants)."""
    return trueskill.TrueSkill(
        mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=draw_probability
    )


@dataclass(frozen=True, slots=True)
class BotRating:
    """A bot's rating after some matches."""

    bot: str
    mu: float
    sigma: float
    matches: int

    @property
    def conservative(self) -> float:
        """``mu - 3*sigma``: the leaderboard's sort key (99.7% the skill is at least this)."""
        return self.mu - 3 * self.sigma


class RatingBook:
    """The current rating of every bot; :meth:`rate` applies one match."""

    def __init__(
        self, bots: Iterable[str] = (), *, draw_probability: float = DEFAULT_DRAW_PROBABILITY
    ) -> None:
        self.env = make_env(draw_probability)
        self._ratings: dict[str, trueskill.Rating] = {}
        self._matches: dict[str, int] = {}
        for b in bots:
            self._ensure(b)

    def _ensure(self, bot: str) -> trueskill.Rating:
        if bot not in self._ratings:
            self._ratings[bot] = self.env.create_rating()
            self._matches[bot] = 0
        return self._ratings[bot]

    def rate(self, seats: Sequence[str], places: Sequence[int]) -> list[BotRating]:
        """Rate one match: ``seats[i]`` finished ``places[i]`` (1 = first; ties share)."""
        if len(seats) != len(places) or len(seats) < 2:
            raise ValueError(f"need one place per seat, got {seats!r} / {places!r}")
        if len(set(seats)) != len(seats):
            raise ValueError(f"a bot sits twice in {seats!r}")
        teams = [(self._ensure(b),) for b in seats]
        # env.rate's ratings to the bit, several times faster (arena/ffa_trueskill.py).
        new = ffa_trueskill.rate(self.env, teams, [int(p) for p in places])
        out = []
        for bot, (r,) in zip(seats, new, strict=True):
            self._ratings[bot] = r
            self._matches[bot] += 1
            out.append(BotRating(bot, float(r.mu), float(r.sigma), self._matches[bot]))
        return out

    def get(self, bot: str) -> BotRating:
        r = self._ensure(bot)
        return BotRating(bot, float(r.mu), float(r.sigma), self._matches[bot])

    def leaderboard(self) -> list[BotRating]:
        """Every bot, best first by ``mu - 3*sigma`` (then mu, then name: deterministic)."""
        rows = [self.get(b) for b in self._ratings]
        return sorted(rows, key=lambda r: (-round(r.conservative, 9), -r.mu, r.bot))


def rate_results(
    results: Iterable[MatchResult],
    bots: Iterable[str] = (),
    *,
    draw_probability: float = DEFAULT_DRAW_PROBABILITY,
) -> tuple[RatingBook, list[RatingPoint]]:
    """Rate stored results in schedule order (by ``index``, never by completion time).

    Returns the final book and the history: one point per bot per match it played.
    """
    book = RatingBook(bots, draw_probability=draw_probability)
    history: list[RatingPoint] = []
    for m in sorted(results, key=lambda m: m.index):
        for r in book.rate(m.seats, m.places):
            history.append(RatingPoint(m.index, m.match_id, r.bot, r.mu, r.sigma))
    return book, history


class RatingLedger:
    """:func:`rate_results` kept up to date as results come in, in any order: each
    :meth:`add` rates the new matches in schedule order, again from the first place one of
    them takes in it (matches played at once end out of order, a few places from the end).
    The ratings are those :func:`rate_results` gives for every result added so far, to the
    bit: the same TrueSkill objects go into the same calls. An ``arena web`` following a
    running tournament rated every stored match at each refresh (12,000 matches: 6 s)."""

    def __init__(
        self, bots: Iterable[str] = (), *, draw_probability: float = DEFAULT_DRAW_PROBABILITY
    ) -> None:
        self.book = RatingBook(bots, draw_probability=draw_probability)
        #: The results rated, in schedule order, and their indices.
        self.results: list[MatchResult] = []
        self._indices: list[int] = []
        #: bot -> (schedule index, rating after that match), in schedule order.
        self._after: dict[str, list[tuple[int, trueskill.Rating]]] = {}
        self._first = {b: r for b, r in self.book._ratings.items()}  # (each bot's prior)

    def add(self, results: Iterable[MatchResult]) -> None:
        """Rate ``results`` (matches not added before) into the ledger."""
        new = sorted(results, key=lambda m: m.index)
        if not new:
            return
        start = new[0].index
        at = bisect.bisect_right(self._indices, start)
        redo = self.results[at:]
        del self.results[at:], self._indices[at:]
        book = self.book
        for bot, after in self._after.items():
            del after[bisect.bisect_right(after, start, key=lambda p: p[0]) :]
            book._ratings[bot] = after[-1][1] if after else self._first[bot]
            book._matches[bot] = len(after)
        # Equal indices keep their order (sorted() is stable, as rate_results' is).
        for m in sorted([*redo, *new], key=lambda m: m.index):
            for b in m.seats:
                if b not in self._first:
                    self._first[b] = book._ensure(b)
            book.rate(m.seats, m.places)
            for b in m.seats:
                self._after.setdefault(b, []).append((m.index, book._ratings[b]))
            self.results.append(m)
            self._indices.append(m.index)

    def history(self) -> dict[str, list[tuple[int, float, float]]]:
        """bot -> [(schedule index, mu, sigma)] after each of its matches, in order; the bots
        in the order :func:`rate_results` first rates them (schedule order, then seat), not
        the order their matches came in."""

        def first(bot: str) -> tuple[int, int]:
            index = self._after[bot][0][0]
            return index, self.results[bisect.bisect_left(self._indices, index)].seats.index(bot)

        return {
            bot: [(i, float(r.mu), float(r.sigma)) for i, r in self._after[bot]]
            for bot in sorted(self._after, key=first)
        }
