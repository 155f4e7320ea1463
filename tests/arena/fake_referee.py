"""An in-process referee for tournament tests: the real engine, no gRPC, no processes.

It implements the ``arena.referee.Referee`` interface the tournament uses (``add_bot``,
``wait_for_bots``, ``run_match``) and plays every seat itself with a seeded random policy,
so a match's record depends only on (ruleset, seed, seats): an interrupted and resumed
tournament can be compared with an uninterrupted one.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from engine import Game, Ruleset, fallback_action

__all__ = ["FakeReferee", "make_config", "run_fake"]


class FakeReferee:
    """``faulty``: bots that get one timeout incident per match (and a slow ``ms``).
    ``fail``: schedule indices (by match id suffix) whose ``run_match`` raises.
    ``forfeit``: bots that forfeit (placed last) every match. ``absent``: bots that never
    connect. ``delay``: seconds each match takes (lets tests interrupt a run)."""

    def __init__(
        self,
        *,
        faulty: set[str] | None = None,
        fail: set[int] | None = None,
        forfeit: set[str] | None = None,
        absent: set[str] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.tokens: dict[str, str] = {}
        self.calls: Counter[str] = Counter()
        self.faulty = faulty or set()
        self.fail = fail or set()
        self.forfeit = forfeit or set()
        self.absent = absent or set()
        self.delay = delay
        self.running = 0
        self.max_running = 0
        #: The time limit each match was given (the config's match_timeout_s).
        self.time_limits: list[float | None] = []

    def add_bot(self, name: str, token: str) -> None:
        self.tokens[name] = token

    async def wait_for_bots(self, names: list[str], timeout: float) -> list[str]:
        await asyncio.sleep(0)
        missing = [n for n in names if n not in self.tokens or n in self.absent]
        if missing:
            await asyncio.sleep(min(timeout, 0.05))
        return missing

    async def run_match(
        self,
        match_id: str,
        ruleset: Ruleset,
        seed: int,
        seats: list[str],
        time_limit_s: float | None = None,
    ) -> dict[str, Any]:
        self.calls[match_id] += 1
        self.time_limits.append(time_limit_s)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            index = int(match_id.rsplit("-m", 1)[1])
            if index in self.fail:
                raise RuntimeError(f"scripted failure of {match_id}")
            return self.play(ruleset, seed, seats)
        finally:
            self.running -= 1

    def play(self, ruleset: Ruleset, seed: int, seats: list[str]) -> dict[str, Any]:
        game = Game.new(ruleset, seed, seats)
        rngs = [random.Random(f"{seed}/{name}/{i}") for i, name in enumerate(seats)]
        # A faulty seat times out on its first decision: the referee plays the fallback for
        # it (the record's timeout incident and its fallback go together).
        late = {s for s, name in enumerate(seats) if name in self.faulty}
        fallbacks: dict[int, int] = {}  # seat: the deal of its fallback
        moves: list[int] = []  # the seats of the fallback moves, in the order played
        while not game.is_over:
            seat = game.to_act
            assert seat is not None
            legal = game.legal_actions()
            if seat in late:
                late.discard(seat)
                fallbacks[seat] = game.deal_number
                moves.append(seat)
                game.apply(fallback_action(legal), seat=seat)
                continue
            moves.append(-1)
            game.apply(rngs[seat].choice(legal), seat=seat)
        rec = game.record()
        # The referee's additions: decision times and who decided.
        played = iter(moves)
        for d in rec["deals"]:
            for i, a in enumerate(d["actions"]):
                slow = seats[a["seat"]] in self.faulty
                a["ms"] = 900.0 if slow else float(1 + (i % 5))
                a["by"] = "fallback" if next(played) >= 0 else "bot"
        incidents = [
            {"kind": "timeout", "seat": s, "deal": deal, "detail": "no decision within 1000 ms"}
            for s, deal in sorted(fallbacks.items())
        ]
        forfeits = [s for s, name in enumerate(seats) if name in self.forfeit]
        if forfeits:
            n = len(seats)
            order = sorted(range(n), key=lambda s: (s in forfeits, -rec["result"]["scores"][s]))
            places = [0] * n
            for rank, s in enumerate(order, 1):
                places[s] = rank
            rec["result"]["places"] = places
            incidents += [
                {"kind": "forfeit", "seat": s, "deal": 0, "detail": "3 strikes"} for s in forfeits
            ]
        rec["incidents"] = incidents
        rec["forfeits"] = forfeits
        return rec


def make_config(tmp: Any, bots: int = 4, **kw: Any) -> Any:
    """A small tournament config for the fake referee (db and out under ``tmp``)."""
    from arena.tournament.config import parse_config

    data: dict[str, Any] = {
        "name": "t",
        "ruleset": "classic",
        "max_deals": 4,
        "matches_per_table": 1,
        "concurrency": 3,
        "seed": 7,
        "db": str(tmp / "t.sqlite"),
        "out": str(tmp / "out"),
        "bots": {name: "random" for name in ["ann", "bob", "cid", "dan", "eve"][:bots]},
    }
    data.update(kw)
    data = {k: v for k, v in data.items() if v is not None}  # seed=None: no seed key
    return parse_config(data, source="test.toml", base_dir=tmp)


def run_fake(cfg: Any, fake: FakeReferee | None = None, **opts: Any) -> Any:
    """Run tournament ``cfg`` against ``fake`` (a new FakeReferee by default), without a
    server, bot processes or a live display; ``opts`` are ``RunOptions``."""
    from arena.tournament import RunOptions, run

    referee = fake or FakeReferee()
    return run(cfg, RunOptions(progress=False, **opts), referee_factory=lambda _cfg: referee,
               serve=False, launch_bots=False)  # fmt: skip
