"""Helpers of the hostile-bot suite: run a real tournament, compute what honest play gives.

A tournament here is the real runner (``arena.tournament.run_tournament``) with the real
referee and gRPC server on a free loopback port; every bot is a process of
``hostile_bot.py`` (honest or hostile), launched and stopped by the runner.
"""

from __future__ import annotations

import asyncio
import json
import sys
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
from hostile_bot import honest_choice

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

    def incidents(self) -> Counter[tuple[str, str]]:
        c: Counter[tuple[str, str]] = Counter()
        for _, seats, rec in self.records:
            for inc in rec["incidents"]:
                c[(seats[inc["seat"]], inc["kind"])] += 1
        return c


def run(cfg: TournamentConfig) -> Run:
    import time

    t0 = time.monotonic()
    outcome = asyncio.run(run_tournament(cfg, RunOptions(progress=False)))
    elapsed = time.monotonic() - t0
    with Storage(cfg.db) as s:
        records = list(s.iter_records(cfg.tournament_id))
    return Run(cfg, outcome, records, elapsed)


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
