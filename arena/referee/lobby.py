"""The lobby of ``arena serve``: seats connected idle bots into matches, continuously.

Whenever at least ``ruleset.players`` bots are connected and idle, the lobby draws that
many of them (seeded: the draw and each match's seed follow from the lobby's seed) and
starts a match. It stops starting matches after ``max_matches`` (``None``: never) or when
:meth:`Lobby.stop` is called, and then waits for the running ones.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from arena.referee.core import Referee
from engine import Ruleset

__all__ = ["FinishedMatch", "Lobby", "lobby_seed"]

log = logging.getLogger("arena.referee")


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    """A lobby's match played to its end: its number ``k`` in the lobby, and its record."""

    match_id: str
    k: int
    seed: int
    seats: tuple[str, ...]
    record: dict[str, Any]
    started_at: float
    finished_at: float


def lobby_seed(seed: int, k: int) -> int:
    """The deal seed of a lobby's match ``k``: a hash of the lobby's seed. They came from one
    Mersenne Twister, whose later outputs follow from some hundreds of earlier ones: records
    of finished matches (their seeds) would have told every later match's cards."""
    digest = hashlib.sha256(f"thousand-arena/lobby/{seed}/{k}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 2  # 62 bits, as before


class Lobby:
    """Seats idle bots of a referee into matches of one ruleset."""

    def __init__(
        self,
        referee: Referee,
        ruleset: Ruleset,
        *,
        seed: int = 0,
        max_matches: int | None = None,
        prefix: str = "m",
        on_finished: Callable[[FinishedMatch], Awaitable[None]] | None = None,
        members: dict[str, str] | None = None,
    ) -> None:
        self.referee = referee
        #: bot -> its member (``arena serve``'s ``[members]``): two bots of one member are
        #: never seated at one table (one person would see two hands of it). A bot not in
        #: it is a member of its own. Replaced when the tokens file is read again.
        self.members: dict[str, str] = dict(members or {})
        #: Called with every match played to its end (``arena serve --db`` stores it).
        self.on_finished = on_finished
        self.ruleset = ruleset
        self.seed = seed
        self.max_matches = max_matches
        self.prefix = prefix
        self.started = 0
        #: Matches played to their end (their records are the referee's files: keeping them
        #: here grew an `arena serve` by 20–120 kB a match, without bound).
        self.finished = 0
        #: Matches that failed before their end (their record file could not be made, say).
        self.failed = 0
        #: Matches still running at a stop, interrupted (recorded as such, no result).
        self.interrupted = 0
        self._rng = random.Random(f"{seed}:lobby")
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._seated: set[str] = set()  # bots of matches started by this lobby
        #: After a match that failed (its record could not be written, say), no match starts
        #: before this loop time, and the pause doubles while they keep failing: a failure
        #: that repeats at once would otherwise start thousands of matches a second.
        self._pause_until = 0.0
        self._pause_s = 0.0
        #: bot -> the table (its bots) of its last match, and how long that match took: a
        #: table that ends while the others still play is not seated again as it was at once
        #: (see ``_hold``).
        self._last: dict[str, tuple[frozenset[str], float]] = {}
        self._held_since: float | None = None

    def stop(self) -> None:
        """Start no more matches (running ones go on)."""
        self._stopping.set()
        self.referee.notify_changed()

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def run(self) -> None:
        """Seat bots until stopped or ``max_matches`` were started, then wait for them."""
        n = self.ruleset.players
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            if self.max_matches is not None and self.started >= self.max_matches:
                break
            now = loop.time()
            if now < self._pause_until:
                await self.referee.wait_changed(min(1.0, self._pause_until - now))
                continue
            idle = sorted(b for b in self.referee.idle_bots() if b not in self._seated)
            enough = self._members_among(idle) >= n
            held = self._hold(idle, now) if enough else 0.0
            if enough and not held:
                self._start(self._draw(idle, n))
                continue
            # (A held table is looked at again when its hold ends, not a second later.)
            await self.referee.wait_changed(min(1.0, held) if held else 1.0)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def waiting_for_bots(self) -> bool:
        """No match is being played and none can start: the idle bots are of fewer members
        than a table seats (``arena serve`` then says whom it waits for)."""
        if self._tasks or self._stopping.is_set():
            return False
        if self.max_matches is not None and self.started >= self.max_matches:
            return False
        idle = [b for b in self.referee.idle_bots() if b not in self._seated]
        return self._members_among(idle) < self.ruleset.players

    def _member(self, bot: str) -> tuple[str, str]:
        return ("member", self.members[bot]) if bot in self.members else ("bot", bot)

    def _members_among(self, bots: list[str]) -> int:
        """How many distinct members ``bots`` are of: the most one table of them seats."""
        if not self.members:
            return len(bots)
        return len({self._member(b) for b in bots})

    def _draw(self, idle: list[str], n: int) -> list[str]:
        """``n`` of ``idle`` drawn at random, no two of one member (there are ``n``
        members among them): in a random order of them, the first bot of each member.
        (Without members, the draw of every earlier run: a ``--seed`` deals as before.)"""
        if not self.members:
            return self._rng.sample(idle, n)
        seats: list[str] = []
        taken: set[tuple[str, str]] = set()
        for bot in self._rng.sample(idle, len(idle)):
            if self._member(bot) not in taken:
                taken.add(self._member(bot))
                seats.append(bot)
                if len(seats) == n:
                    break
        return seats

    def _hold(self, idle: list[str], now: float) -> float:
        """How long to wait still rather than seat ``idle`` (0: seat them): they are exactly
        the table of their last match and other matches are still being played. With as
        many bots as a whole number of tables, a table that ends would otherwise always be
        seated again as it was (the others are still playing), and the same few bots would
        only ever meet each other. The wait lasts until another match ends (``idle``
        changes), or as long as their last match took at most."""
        last = self._last.get(idle[0])
        # Others play while bots other than ``idle`` are seated: a task of ``self._tasks``
        # may be a match already over whose result is still being stored (``--db``), and
        # counting it held a lone table after every match.
        if last is None or not self._seated or last[0] != frozenset(idle):
            self._held_since = None
            return 0.0
        if self._held_since is None:
            self._held_since = now
        left = last[1] - (now - self._held_since)
        if left > 0:
            return left
        self._held_since = None
        return 0.0

    def _start(self, seats: list[str]) -> None:
        k = self.started
        self.started += 1
        match_id = f"{self.prefix}{k:05d}"
        seed = lobby_seed(self.seed, k)
        self._seated.update(seats)
        task = asyncio.create_task(self._play(match_id, k, seed, seats), name=match_id)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play(self, match_id: str, k: int, seed: int, seats: list[str]) -> None:
        loop = asyncio.get_running_loop()
        start, started_at = loop.time(), time.time()
        try:
            record = await self.referee.run_match(match_id, self.ruleset, seed, seats)
        except asyncio.CancelledError:
            self.interrupted += 1  # (recorded as interrupted by run_match)
            raise
        except Exception as e:
            self.failed += 1
            self._pause_s = min(60.0, max(1.0, 2 * self._pause_s))
            self._pause_until = loop.time() + self._pause_s
            if isinstance(e, OSError):  # the machine's (a full disk): no traceback to read
                log.error("match %s failed: %s; no match starts for %g s", match_id, e,
                          self._pause_s)  # fmt: skip
            else:
                log.exception("match %s failed; no match starts for %g s", match_id,
                              self._pause_s)  # fmt: skip
            return
        finally:
            self._seated.difference_update(seats)
            self.referee.notify_changed()
        self._pause_s = 0.0
        table = frozenset(seats)
        for bot in seats:
            self._last[bot] = (table, loop.time() - start)
        self.finished += 1
        if self.on_finished is not None:
            done = FinishedMatch(match_id, k, seed, tuple(seats), record, started_at, time.time())
            await self.on_finished(done)

    async def cancel_running(self) -> None:
        """Interrupt the running matches (each is recorded as interrupted; ``interrupted``
        counts them)."""
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
