"""Helpers of the hostile-bot suite: run a real tournament, compute what honest play gives.

A tournament here is the real runner (``arena.tournament.run_tournament``) with the real
referee and gRPC server on a free loopback port; every bot is a process of
``hostile_bot.py`` (honest or hostile), launched and stopped by the runner.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.protocol import action_from_pb, view_to_pb
from arena.storage import Storage
from arena.tournament import RunOptions, TournamentOutcome, run_tournament
from arena.tournament.config import TournamentConfig, parse_config
from engine import Game, GameResult, Ruleset, observe

sys.path.insert(0, str(Path(__file__).parent))
from hostile_bot import STALL_S, honest_choice, paused_for

HOSTILE_BOT = Path(__file__).with_name("hostile_bot.py")
HONEST = ("h1", "h2", "h3")


def bot_entry(mode: str, *extra: str) -> dict[str, Any]:
    return {
        "command": ["{python}", str(HOSTILE_BOT), "--target", "{arena}", "--token={token}",
                    "--name", "{name}", "--mode", mode, *extra]
    }  # fmt: skip


def make_config(tmp: Path, hostile: dict[str, dict[str, Any]], *, tid: str = "hostile",
                decision_ms: int = 300, max_deals: int = 1, concurrency: int = 8,
                grace_s: float = 5.0, seed: int = 11,
                time_bank_ms: int = 1000) -> TournamentConfig:  # fmt: skip
    bots: dict[str, Any] = {h: bot_entry("honest") for h in HONEST}
    bots.update(hostile)
    data = {
        "id": tid, "name": "hostile", "ruleset": "classic", "max_deals": max_deals,
        "seed": seed, "concurrency": concurrency, "db": str(tmp / f"{tid}.sqlite"),
        "out": str(tmp / f"out-{tid}"), "bot_wait_s": 60,
        "deadlines": {"decision_ms": decision_ms, "time_bank_ms": time_bank_ms},
        "referee": {"max_strikes": 3, "reconnect_grace_s": grace_s},
        "bots": bots,
    }  # fmt: skip
    return parse_config(data, source="hostile-test", base_dir=tmp)


def simulate(ruleset: Ruleset, seed: int, seats: tuple[str, ...]) -> GameResult:
    """The result of a match every seat of which plays ``honest_choice`` in time."""
    g = Game.new(ruleset, seed, list(seats))
    while not g.is_over:
        legal = g.legal_actions()
        seat = g.to_act
        assert seat is not None
        if len(legal) == 1 and not ruleset.ask_forced:
            g.apply_trusted(legal[0])
            continue
        g.apply(action_from_pb(honest_choice(view_to_pb(observe(g, seat)))), seat=seat)
    assert g.result is not None
    return g.result


@dataclass
class Run:
    cfg: TournamentConfig
    outcome: TournamentOutcome
    records: list[tuple[int, list[str], dict[str, Any]]]
    elapsed_s: float

    def log_events(self, bot: str) -> list[dict[str, Any]]:
        path = self.cfg.out / "logs" / f"{bot}.log"
        out = []
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("EVENT "):
                out.append(json.loads(line[6:]))
        return out

    def honest_ms(self) -> list[int]:
        """Decision times (ms, as the referee measured them) of the honest bots' own moves."""
        ms = []
        for _, seats, rec in self.records:
            for d in rec["deals"]:
                for a in d["actions"]:
                    if a["by"] == "bot" and seats[a["seat"]] in HONEST:
                        ms.append(int(a["ms"]))
        return ms

    def stalled(self) -> float:
        """The longest pause a bot process said it had (``stall`` events), in s."""
        return max((e["s"] for bot in self.cfg.bot_names for e in self.log_events(bot)
                    if e["event"] == "stall"), default=0.0)  # fmt: skip

    def incidents(self) -> Counter[tuple[str, str]]:
        c: Counter[tuple[str, str]] = Counter()
        for _, seats, rec in self.records:
            for inc in rec["incidents"]:
                c[(seats[inc["seat"]], inc["kind"])] += 1
        return c


async def _watched(cfg: TournamentConfig) -> tuple[TournamentOutcome, float]:
    """Run the tournament; its outcome, and the longest this process (the referee's) was
    paused meanwhile, in s: see ``hostile_bot.paused_for``."""
    longest = 0.0

    async def tick() -> None:
        nonlocal longest
        clocks = time.monotonic(), time.process_time()
        while True:
            await asyncio.sleep(0.01)
            was, clocks = clocks, (time.monotonic(), time.process_time())
            longest = max(longest, paused_for(was, clocks))

    ticker = asyncio.create_task(tick())
    try:
        return await run_tournament(cfg, RunOptions(progress=False)), longest
    finally:
        ticker.cancel()


def run(cfg: TournamentConfig, tries: int = 5) -> Run:
    """The tournament of ``cfg``, made again from scratch (``tries`` times in all at most)
    while the referee's process or a bot's was paused for ``STALL_S`` or more during it: a
    loaded machine pauses processes (CI's for seconds now and then), and an honest bot then
    times out, or its decision times stretch, by the machine's doing, not a hostile bot's.
    (A process held up by its own work is not paused: a hostile bot that kept the referee's
    loop busy is still caught.) The last run is the one checked, whatever it saw."""
    import shutil

    stalled = 0.0
    for attempt in range(tries):
        if attempt:
            print(f"{cfg.tournament_id}: paused {stalled:.2f} s: made again")
            shutil.rmtree(cfg.out, ignore_errors=True)
            for path in cfg.db.parent.glob(cfg.db.name + "*"):  # (-wal, -shm, .lock)
                path.unlink()
        t0 = time.monotonic()
        outcome, stalled = asyncio.run(_watched(cfg))
        elapsed = time.monotonic() - t0
        with Storage(cfg.db) as s:
            records = list(s.iter_records(cfg.tournament_id))
        r = Run(cfg, outcome, records, elapsed)
        stalled = max(stalled, r.stalled())
        if stalled < STALL_S:
            break
    else:
        print(f"{cfg.tournament_id}: paused in each of {tries} runs (the last {stalled:.2f} s)")
    return r


def check_common(r: Run, hostile: set[str]) -> None:
    """What every hostile run must show: everything recorded, honest bots untouched."""
    o = r.outcome
    assert o.failed == [], o.failed
    assert o.completed == o.total == len(r.records), (o.completed, o.total, len(r.records))
    ruleset = r.cfg.ruleset
    honest_only = 0
    for _index, seats, rec in r.records:
        forfeits = set(rec["forfeits"])
        for inc in rec["incidents"]:
            assert seats[inc["seat"]] in hostile, f"incident on an honest seat: {inc}"
        for s in forfeits:
            assert seats[s] in hostile
        if not set(seats) & hostile:
            honest_only += set(seats) <= set(HONEST)
            want = simulate(ruleset, rec["seed"], tuple(seats))
            assert rec["result"]["scores"] == list(want.scores), "an honest match changed"
            assert rec["result"]["places"] == list(want.places)
        else:
            places = rec["result"]["places"]
            for s in forfeits:  # a forfeiter places last, below every honest seat
                assert all(places[s] > places[o] for o in range(len(seats)) if o not in forfeits)
    assert honest_only == 6  # the honest table, in its six seatings
