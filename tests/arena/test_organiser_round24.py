"""Round 24 of the organiser's audit: what an organiser saw go wrong in their first hour."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.runner import TournamentError, _wait_for_bots


def test_every_line_of_a_stuck_bots_log_tail_is_indented_under_it() -> None:
    """Defect: two bots that never connected were listed with the last lines of their logs,
    but only the first line of each tail was indented: the others stood at the margin,
    where the next bot's heading and the arena's own lines stand.

        c: local bot, still starting or stuck (log out/cgarb/logs/c.log)
          garbage
    garbage
    """

    class Stuck:  # a _BotProcess that runs and prints, and never connects
        def __init__(self, name: str) -> None:
            self.spec = types.SimpleNamespace(name=name)
            self.proc = types.SimpleNamespace(returncode=None)
            self.restarts, self.given_up, self.exited = 0, False, False
            self.log_path = Path(f"{name}.log")

        def tail(self, lines: int = 8) -> str:
            return "\n".join(f"{self.spec.name} line {i}" for i in range(lines))

        def trim_log(self) -> None:
            pass

    class Referee:
        async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
            await asyncio.sleep(timeout)
            return names

        def welcomed_bots(self) -> list[str]:
            return []

    cfg: Any = types.SimpleNamespace(bot_names=["a", "b"], bot_wait_s=0.01, bots=[])
    procs: Any = {"a": Stuck("a"), "b": Stuck("b")}
    with pytest.raises(TournamentError) as err:
        asyncio.run(_wait_for_bots(cfg, Referee(), procs, 0))  # type: ignore[arg-type]
    assert str(err.value).splitlines() == [
        "2 of 2 bots did not connect within 0.01s:",
        "  a: local bot, still starting or stuck (log a.log)",
        "    a line 0",
        "    a line 1",
        "    a line 2",
        "  b: local bot, still starting or stuck (log b.log)",
        "    b line 0",
        "    b line 1",
        "    b line 2",
    ]
