"""Golden replays: hand-checked deals stored as match records (tests/engine/golden/*.json).

Each record has explicit hands/talon, the actions, and deltas/scores worked out by hand from
RULES.md (the arithmetic is in its ``comment``). ``replay`` must accept it (it checks every
stored score) and reproduce it; a record with a wrong score must be refused.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from engine import ReplayError, replay
from engine.cards import parse_cards

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_golden_records():
    assert len(GOLDEN) >= 4


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_replays_with_the_hand_checked_scores(path):
    rec = load(path)
    game = replay(rec)
    want = rec["deals"][0]
    res = game.deal_results[0]
    assert list(res.deltas) == want["deltas"]
    assert list(res.scores) == want["scores"]
    assert res.dealer == want["dealer"]
    out = game.record()
    d0 = out["deals"][0]
    assert [a["action"] for a in d0["actions"]] == [a["action"] for a in want["actions"]]
    assert [a["seat"] for a in d0["actions"]] == [a["seat"] for a in want["actions"]]
    assert [sorted(parse_cards(" ".join(h))) for h in d0["hands"]] == [
        sorted(parse_cards(" ".join(h))) for h in want["hands"]
    ]
    talon = sorted(parse_cards(" ".join(d0["talon"])))
    assert talon == sorted(parse_cards(" ".join(want["talon"])))
    assert list(d0["deltas"]) == want["deltas"]


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_with_a_wrong_score_is_refused(path):
    rec = copy.deepcopy(load(path))
    d0 = rec["deals"][0]
    d0["deltas"][0] += 5
    d0["scores"][0] += 5
    with pytest.raises(ReplayError) as info:
        replay(rec)
    assert "0" in str(info.value)


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_with_an_illegal_action_is_refused(path):
    rec = copy.deepcopy(load(path))
    d0 = rec["deals"][0]
    d0["actions"][0]["action"] = "bid 107"
    with pytest.raises(ReplayError):
        replay(rec)
