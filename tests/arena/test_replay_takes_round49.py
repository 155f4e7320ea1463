"""`arena replay` says what each seat took in a played deal (round 49).

A spectator checking a deal by hand had only the declarer's take ("declarer took 99") and
the deltas, a defender's being his take rounded (and nothing on the barrel): the takes line
gives every seat's, card points and marriages apart, over the result line. A dealer of four
sat the deal out and is not in it; a concession or a throw-in has no tricks and no line.
"""

from __future__ import annotations

import io
import random
import re

import pytest
from rich.console import Console

from arena.render import render_record
from engine import Game
from engine.record import record

_TAKES = re.compile(r"^takes (.*)$", re.M)
_SEAT = re.compile(r"(\S+) (-?\d+)(?: \(cards (\d+), marriages (\d+)\))?(?:, |$)")


def _text(rec: dict[str, object]) -> str:
    console = Console(width=400, no_color=True, record=True, file=io.StringIO())
    console.print(render_record(rec))
    return console.export_text()


@pytest.mark.parametrize(("preset", "names"), [
    ("classic", ["ann", "bob", "cid"]),
    ("1001", ["ann", "bob", "cid"]),
    ("1001-4p", ["ann", "bob", "cid", "dan"]),
])  # fmt: skip
def test_each_played_deal_says_every_playing_seats_take(preset: str, names: list[str]) -> None:
    rng = random.Random(49)
    g = Game.new(preset, seed=49, players=names)
    while not g.is_over and len(g.deal_results) < 12:
        g.apply(rng.choice(g.legal_actions()))
    text = _text(record(g))
    said = [list(_SEAT.finditer(m[1])) for m in _TAKES.finditer(text)]
    played = [r for r in g.deal_results if r.outcome in ("made", "failed")]
    assert played
    assert len(said) == len(played)  # (none for a deal conceded or thrown in)
    for seats, res in zip(said, played, strict=True):
        sitting_out = res.dealer if len(names) == 4 else None
        want = [s for s in range(len(names)) if s != sitting_out]
        assert [m[1] for m in seats] == [names[s] for s in want]
        for m, s in zip(seats, want, strict=True):
            assert int(m[2]) == res.takes[s]
            marriages = res.marriage_points[s]
            assert (m[4] is None) == (marriages == 0)
            if marriages:
                assert (int(m[3]), int(m[4])) == (res.card_points[s], marriages)
    assert any(m[4] for seats in said for m in seats) or preset != "classic"  # (one shown)
