"""Round 49: a record says its match was abandoned only when every seat forfeited.

The referee stops a match unfinished (``"abandoned": true``) only once every seat has
forfeited, and lists them in ``forfeits``. ``replay`` did not check that: a record cut
short (say, a match won by one seat, its last deals dropped) and marked abandoned passed
``arena replay --check`` with every seat placed last, and since the 47th session's
allowance for the first day's referees, with no ``rules_result`` and every seat placed 1st:
a lost match turned into a shared first place by editing three keys.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from engine import replay
from engine.record import ReplayError

OLD = Path(__file__).parent.parent / "arena" / "data" / "abandoned_6960bee0.json"


def _only_seat_0_forfeited(rec: dict[str, Any]) -> dict[str, Any]:
    rec = copy.deepcopy(rec)
    rec["forfeits"] = [0]
    rec["result"]["forfeits"] = [0]
    rec["incidents"] = [
        i for i in rec["incidents"] if not (i["kind"] == "forfeit" and i["seat"] != 0)
    ]
    return rec


@pytest.mark.parametrize("form", ["older", "current"])
def test_an_abandoned_record_whose_seats_did_not_all_forfeit_is_refused(form: str) -> None:
    rec: dict[str, Any] = json.loads(OLD.read_text(encoding="utf-8"))
    if form == "current":  # (as a referee since 2026-12-01 writes it: every seat last)
        rec.update(rules_result=None, disconnects=[1, 1, 1])
        rec["result"]["places"] = [3, 3, 3]
    replay(rec)  # as the referee wrote it: accepted
    with pytest.raises(ReplayError, match=r"abandoned: .*every seat has forfeited.*\[0\]"):
        replay(_only_seat_0_forfeited(rec))
    gone = copy.deepcopy(rec)
    del gone["forfeits"]
    with pytest.raises(ReplayError, match=r"abandoned: .*every seat has forfeited"):
        replay(gone)
