"""The lobby of ``arena serve``: seats connected idle bots into matches, continuously.

Whenever at least ``ruleset.players`` bots are connected and idle, the lobby draws that
many of them (seeded: the draw and each match's seed follow from the lobby's seed) and
starts a match. It stops starting matches after ``max_matches`` (``None``: never) or when
:meth:`Lobby.stop` is called, and then waits for the running ones.
"""

from __future__ import annotations

import asyncio
import logging
import random

from arena.referee.core import Referee
from engine import Ruleset

__all__ = ["Lobby"]

log = logging.getLogger("arena.referee")


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
    ) -> None:
        self.referee = referee
        self.ruleset = ruleset
        self.seed = seed
        self.max_matches = max_matches
        self.prefix = prefix
        self.started = 0
        #: Matches played to their end (their records are the referee's files: keeping them
        #: here grew an `arena serve` by 20–120 kB a match, without bound).
        self.finished = 0
        self._rng = random.Random(f"{seed}:lobby")
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._seated: set[str] = set()  # bots of matches started by this lobby

    def stop(self) -> None:
        """Start no more matches (running ones go on)."""
        self._stopping.set()
        self.referee._notify()

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def run(self) -> None:
        """Seat bots until stopped or ``max_matches`` were started, then wait for them."""
        n = self.ruleset.players
        while not self._stopping.is_set():
            if self.max_matches is not None and self.started >= self.max_matches:
                break
            idle = sorted(b for b in self.referee.idle_bots() if b not in self._seated)
            if len(idle) >= n:
                seats = self._rng.sample(idle, n)
                self._start(seats)
                continue
            await self.referee.wait_changed(1.0)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _start(self, seats: list[str]) -> None:
        k = self.started
        self.started += 1
        match_id = f"{self.prefix}{k:05d}"
        seed = self._rng.randrange(2**62)
        self._seated.update(seats)
        task = asyncio.create_task(self._play(match_id, seed, seats), name=match_id)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play(self, match_id: str, seed: int, seats: list[str]) -> None:
        try:
            await self.referee.run_match(match_id, self.ruleset, seed, seats)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("match %s failed", match_id)
            return
        finally:
            self._seated.difference_update(seats)
            self.referee._notify()
        self.finished += 1

    async def cancel_running(self) -> None:
        """Interrupt the running matches (each is recorded as interrupted)."""
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
