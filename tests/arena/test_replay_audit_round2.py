"""Replay audit, round 2: what ``arena replay`` and the web replay show of a match against
the rules engine's own replay of its record (arena/render.py, arena/web/replay.py).

Each defect test says what was shown and what happened; the cross-check at the end asserts
real facts (trick cards in order, trick winners, deal deltas and scores) of a handful of
random matches per preset in the terminal output and the web API's JSON.
"""

from __future__ import annotations

import random
import re
from typing import Any

from rich.console import Console

from arena.render import render_record
from engine import Game, Phase, Play


def _text(rec: dict[str, Any]) -> str:
    console = Console(record=True, width=250)
    console.print(render_record(rec))
    return console.export_text()


def _declared_lead_then_stopped(preset: str, seed: int) -> Game:
    """A match stopped just after a lead that declared a marriage (an interrupted match)."""
    g = Game.new(preset, seed, ["ann", "bob", "cid"])
    rng = random.Random(seed)
    while not g.is_over:
        legal = g.legal_actions()
        declare = [a for a in legal if isinstance(a, Play) and a.declare and a.card.rank != 5]
        if declare and g.phase is Phase.PLAYING:
            g.apply_trusted(declare[0])
            return g
        g.apply_trusted(rng.choice(legal))
    raise AssertionError("no marriage declared")


def test_a_marriage_declared_in_the_unfinished_trick_is_shown() -> None:
    """Defect: the record of an interrupted match that stopped after a lead declaring a
    marriage (``play Q♠ declare``) showed the unfinished trick as ``bob Q♠`` with trump ♠,
    and nowhere that bob had declared the ♠ marriage (+40): the declaration was only
    written on the row of a finished trick. The engine's replay has the marriage (and the
    web replay shows it)."""
    for seed in range(40):
        g = _declared_lead_then_stopped("classic", seed)
        (seat, suit) = g.marriages[-1]
        assert g.trick and g.trick[0][0] == seat  # the declaring lead, and nothing more
        rec = g.record()
        rec["interrupted"] = True
        text = _text(rec)
        row = next(ln for ln in text.splitlines() if "(unfinished)" in ln)
        name = rec["players"][seat]
        assert f"{name} declares the {suit} marriage" in row, row
        assert re.search(rf"│ {suit}\s+│ \(unfinished\)", row), row
        assert text.count("declares the") == len([m for d in _marriages_of(rec) for m in d]), text
        return
    raise AssertionError("no seed stops on a declaring lead")


def _marriages_of(rec: dict[str, Any]) -> list[list[str]]:
    """The declaring plays of each deal of a record."""
    return [[a["action"] for a in d["actions"] if a["action"].endswith("declare")]
            for d in rec["deals"]]  # fmt: skip
