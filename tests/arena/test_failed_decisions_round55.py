"""Round 55 (limits): a decision the bot failed is said in the record's action.

Limit left by round 54: when a bot raised, the SDK sent its fallback as the bot's answer and
the record said ``"by": "bot"``, the same as a move the bot chose; only the seat's
``bot_error`` incident told. The action now carries ``"failed": true`` (``by`` keeps its
three values, which older readers check: a key they do not know, which they ignore), and
``arena replay`` says it after the move. Old records, without it, read as before.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena.render import CLIENT_FALLBACK_NOTE, render_record
from arena.storage import Storage
from engine import ReplayError, replay
from engine.record import check_record_shape
from sdk import Bot, Phase, PlayerView
from sdk.bot import Action
from tests.support.harness import play_sdk_match

DATA = Path(__file__).parent / "data"


class FailsItsFirstBids(Bot):
    """Raises at its first two decisions of an auction; the first legal action otherwise."""

    def __init__(self) -> None:
        super().__init__()
        self.bids = 0

    def act(self, view: PlayerView) -> Action:
        if view.phase is Phase.BIDDING and self.bids < 2:
            self.bids += 1
            raise RuntimeError("boom")
        return view.legal_actions[0]


def _text(record: dict[str, Any]) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(render_record(record))
    return out.getvalue()


def test_a_failed_decision_is_marked_in_the_record_and_in_arena_replay() -> None:
    rec = play_sdk_match(FailsItsFirstBids, max_deals=1, incidents=True)
    actions = [a for d in rec["deals"] for a in d["actions"]]
    failed = [a for a in actions if "failed" in a]
    errors = [i for i in rec["incidents"] if i["kind"] == "bot_error"]
    assert failed and len(failed) == len(errors) == sum(rec["bot_errors"])
    assert all(a["failed"] is True and a["by"] == "bot" for a in failed)
    # each seat's failed moves are its bot_error incidents', in order
    assert sorted(a["seat"] for a in failed) == sorted(i["seat"] for i in errors)
    assert not any("failed" in a for a in actions if a not in failed)
    replay(rec)  # the record replays; the key is checked, not refused
    text = _text(rec)
    assert text.count(CLIENT_FALLBACK_NOTE) == len(failed), text
    line = f"{rec['players'][failed[0]['seat']]}: {failed[0]['action']} {CLIENT_FALLBACK_NOTE}"
    assert line in text, text


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"failed": False}, "'failed' must be true, on an action 'by' 'bot', got False by 'bot'"),
        ({"failed": "yes"}, "'failed' must be true, on an action 'by' 'bot', got 'yes'"),
        ({"failed": True, "by": "forced"}, "on an action 'by' 'bot', got True by 'forced'"),
    ],
)
def test_a_failed_mark_that_is_no_such_mark_is_refused(change: dict[str, Any], said: str) -> None:
    rec = play_sdk_match(FailsItsFirstBids, max_deals=1, incidents=True)
    bad = copy.deepcopy(rec)
    bad["deals"][0]["actions"][0].update(change)
    with pytest.raises(ReplayError) as refused:
        check_record_shape(bad)
    assert "deal 0, action 0: 'failed' must be true" in str(refused.value)
    assert said in str(refused.value)


def test_old_records_without_the_mark_read_as_before() -> None:
    """Records stored by earlier rounds' arenas (tests/arena/data): checked, replayed and
    rendered as they were, no move said to be a client's fallback."""
    dbs = sorted(DATA.glob("**/*.sqlite"))
    assert dbs
    seen = 0
    for db in dbs:
        with Storage.open_readonly(db) as st:
            ids = [r[0] for r in st.conn.execute("SELECT id FROM matches LIMIT 3")]
            for match_id in ids:
                rec = st.load_record(match_id)
                check_record_shape(rec)
                assert not any("failed" in a for d in rec["deals"] for a in d["actions"])
                replay(rec)
                assert CLIENT_FALLBACK_NOTE not in _text(rec)
                seen += 1
    assert seen
