"""The referee's loop-stall meter: how long its event loop was held up while bots were
waiting on it, which is the referee's time, not theirs (a pending decision's clock and
deadline move on by it, and so does the grace period of a bot that is away)."""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["LoopLag", "loop_lag"]


class LoopLag:
    """How long the referee's loop was held up (busy elsewhere: other tables' moves, a
    record written to a slow disk, a big message parsed) while decisions were pending: a
    bot's time is the time that passed less this, which is the referee's.

    A timer ticks every ``PERIOD`` s while some decision is pending (``hold`` /
    ``release``; it stops at the first tick that finds none); what a tick runs late by
    over ``TOLERANCE`` is counted (``stalled``). A stall is so counted short by up to
    ``PERIOD`` + ``TOLERANCE`` (the bot is charged that), and the loop's ordinary latency
    not at all. It cannot tell when an answer read
    after a stall reached the host: the bot has the benefit of the doubt.
    """

    PERIOD = 0.01
    TOLERANCE = 0.005

    __slots__ = ("_due", "_holders", "_loop", "_ticking", "_total")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Its loop by a weak reference, and no handle of its timer kept: the meter is kept
        # by its loop in ``_LAGS`` (while ticking, by the timer too), and a reference back
        # would keep every loop that ever timed a decision alive.
        self._loop = weakref.ref(loop)
        self._total = 0.0
        self._holders = 0
        self._due = 0.0
        self._ticking = False

    def hold(self) -> None:
        self._holders += 1
        if not self._ticking:
            self._arm(self._now())

    def release(self) -> None:
        # The timer goes on to its next tick, which stops it if nothing is pending then:
        # at one table a decision follows the last at once, and a timer cancelled and made
        # again for each would cost a timer a decision more.
        self._holders = max(0, self._holders - 1)

    def stalled(self, now: float | None = None) -> float:
        """Seconds the loop was held up so far (while ticking), the stall in progress too,
        up to ``now`` (a time read from the loop just before; default: now). A caller that
        reads the clock too passes it: a pause of the process between its two reads would
        otherwise be in one and not the other."""
        if not self._ticking:
            return self._total
        if now is None:
            now = self._now()
        return self._total + max(0.0, now - self._due - self.TOLERANCE)

    def _now(self) -> float:
        loop = self._loop()
        return self._due if loop is None else loop.time()  # (None: the loop is gone)

    def _arm(self, now: float) -> None:
        loop = self._loop()
        self._ticking = loop is not None
        if loop is not None:
            self._due = now + self.PERIOD
            loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        now = self._now()
        self._total += max(0.0, now - self._due - self.TOLERANCE)
        if self._holders:
            self._arm(now)
        else:
            self._ticking = False


_LAGS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopLag] = weakref.WeakKeyDictionary()


def loop_lag(loop: asyncio.AbstractEventLoop) -> LoopLag:
    """The :class:`LoopLag` of ``loop`` (one per loop: every match's decisions share it)."""
    lag = _LAGS.get(loop)
    if lag is None:
        lag = _LAGS[loop] = LoopLag(loop)
    return lag
