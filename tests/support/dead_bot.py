"""A stand-in for the runner's ``_BotProcess`` of a bot that connected once and exited
(code 1) before the tournament began, and a referee whose wait for bots never ends by
itself: what ``runner._wait_for_bots`` is tested with when a bot dies before the start."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path

from arena.tournament.runner import TournamentError


class DeadBot:
    """Exited with code 1; ``start()`` raises ``TournamentError(fails)`` when ``fails``
    is given (its program or its cwd gone), else starts it (counted in ``starts``)."""

    def __init__(self, name: str, fails: str | None = None, tail: str = "") -> None:
        self.spec = types.SimpleNamespace(name=name, cwd=None)
        self.argv = (name,)
        self.proc = types.SimpleNamespace(returncode=1, pid=0)
        self.log_path = Path(f"{name}.log")
        self.restarts, self.starts, self.stopped, self.given_up = 0, 0, 0, False
        self.given_up_why = ""
        self.fails, self._tail = fails, tail

    @property
    def exited(self) -> bool:
        return True

    def trim_log(self) -> None:
        pass

    def tail(self, lines: int = 8) -> str:
        return self._tail

    def note(self, text: str) -> None:
        pass

    async def stop(self) -> None:
        self.stopped += 1

    async def start(self) -> None:
        self.starts += 1
        if self.fails is not None:
            raise TournamentError(self.fails)

    def give_up(self, why: str) -> None:
        self.given_up, self.given_up_why = True, why

    def code_changed(self) -> list[Path]:
        return []  # its code as it was launched (round 53: a changed one is not restarted)


class WaitingReferee:
    """Welcomed ``names`` once; its wait for the bots lasts its whole timeout."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)

    async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
        await asyncio.sleep(timeout)
        return names

    def welcomed_bots(self) -> list[str]:
        return self.names
