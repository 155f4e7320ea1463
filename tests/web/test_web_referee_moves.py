"""The replay data marks the moves the referee played for a seat, with why (no browser).

Defect: the web replay viewer showed an action's ``by`` only in a tooltip of the action log,
so a reader could not see which moves were not the bot's (``arena replay`` marks them:
tests/arena/test_render.py). Each step's action now carries ``fallback``: the reason
:func:`arena.render.fallback_reasons` gives, or None for the bot's own and forced moves.
The page that draws it: tests/web/test_web_browser.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arena.render import fallback_reasons
from arena.web import MatchReplay
from engine import Give, parse_action
from tests.arena.test_render import _fallback_record

ACTION_KEYS = {"seat", "text", "ms", "by", "fallback", "fallback_why", "failed"}


def _actions(replay: MatchReplay, k: int, seat: int | None = None) -> list[dict[str, Any]]:
    return [st["action"] for st in replay.deal(k, seat)["steps"][1:]]


def test_face_up_actions_say_which_moves_the_referee_played_and_why() -> None:
    rec, v, _ = _fallback_record()
    replay = MatchReplay("t-m1", rec)
    reasons = fallback_reasons(rec)
    seen: set[str] = set()
    for k, deal in enumerate(rec["deals"]):
        for j, (got, a) in enumerate(zip(_actions(replay, k), deal["actions"], strict=True)):
            assert set(got) == ACTION_KEYS
            if a["by"] == "fallback":
                assert got["fallback"] == reasons[k][j] != "", (k, j, got)
                seen.add(got["fallback"])
            else:  # the bot's own move, and a forced one, are not the referee's
                assert got["fallback"] is None, (k, j, got)
    # the record's strikes in order, then the forfeit's: every reason the terminal tells
    assert seen == {"illegal", "timeout", "malformed", "forfeited"}
    first = next(a for a in _actions(replay, 0) if a["fallback"] is not None)
    assert first["seat"] == v and first["text"].startswith("give")
    assert first["fallback"] == "illegal"
    assert any(a["by"] == "forced" for k in range(2) for a in _actions(replay, k))


def test_seat_views_mark_the_same_moves_and_learn_no_card_from_it() -> None:
    """The reason is public (the incidents are served with the match summary to every
    view), so each seat view marks the same moves; the mark names no card, and a card
    passed between two other seats stays ``??``."""
    rec, _, _ = _fallback_record()
    replay = MatchReplay("t-m1", rec)
    for k, deal in enumerate(rec["deals"]):
        face_up = _actions(replay, k)
        for seat in range(3):
            got = _actions(replay, k, seat)
            assert [a["fallback"] for a in got] == [a["fallback"] for a in face_up]
            for a, recorded in zip(got, deal["actions"], strict=True):
                assert set(a) == ACTION_KEYS
                assert a["fallback"] is None or not re.search(r"[♠♣♦♥]", a["fallback"])
                act = parse_action(recorded["action"])
                if isinstance(act, Give) and seat not in (act.to, recorded["seat"]):
                    assert "??" in a["text"], a
    # at least one fallback give hidden from the third seat: the check above ran
    give = next(a for a in rec["deals"][0]["actions"] if a["by"] == "fallback")
    act = parse_action(give["action"])
    assert isinstance(act, Give)
    third = ({0, 1, 2} - {give["seat"], act.to}).pop()
    hidden = [a for a in _actions(replay, 0, third) if a["text"].startswith("give ??")]
    assert any(a["fallback"] == "illegal" for a in hidden), hidden
    assert give["action"].split()[1] not in json.dumps(hidden, ensure_ascii=False)


def test_fallbacks_without_incidents_have_no_reason_and_engine_records_none() -> None:
    rec, _, _ = _fallback_record()
    del rec["incidents"]
    replay = MatchReplay("t-m1", rec)
    marked = [a["fallback"] for k in range(2) for a in _actions(replay, k) if a["by"] == "fallback"]
    assert marked and set(marked) == {""}  # a fallback still, its reason unknown
    for d in rec["deals"]:
        for a in d["actions"]:
            del a["by"]
    replay = MatchReplay("t-m1", rec)
    assert all(a["fallback"] is None for k in range(2) for a in _actions(replay, k))
