"""Round 55: ``python -m arena.bench.sdk_requests``, the SDK's request handling replayed
from recorded matches (docs/performance.md, "SDK changes of 2026-12-14"), and the answer's
bytes as ``BotRunner._send_answer`` now fills them in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.bench import sdk_requests
from arena.bench.sdk_requests import Recording, record, replay
from arena.protocol import action_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Bid, Card, Play
from engine.rules import PRESETS
from sdk import client
from sdk.client import BotRunner, _Match, _Outbox
from tests.sdk.test_hot_path_round48 import _playing_view, _Same


@pytest.fixture(scope="module")
def small() -> Recording:
    return record(seed=5, tables=2, matches=1, max_deals=2)


def test_a_recording_holds_real_matches_of_every_preset_batched(small: Recording) -> None:
    assert sorted({name.split("/")[0] for name in small.bots}) == ["1001", "1001-4p", "classic"]
    assert len(small.bots) == 3 + 3 + 4  # (a bot per seat of each preset)
    kinds: set[str] = set()
    for messages in small.bots.values():
        first = pb.ServerMessage.FromString(messages[0])
        assert "ahead" in first.welcome.features and "batch" in first.welcome.features
        for data in messages:
            msg = pb.ServerMessage.FromString(data)
            kinds.add(msg.WhichOneof("kind") or "events only")
            for inner in msg.batch.messages:
                kinds.add(inner.WhichOneof("kind") or "events only")
    assert {"welcome", "match_started", "decision_request", "match_ended", "batch"} <= kinds
    assert small.requests() > 100


def test_the_replay_answers_through_the_runners_read_path(
    small: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rec.bin"
    sdk_requests._save([small, small], path)
    loaded = sdk_requests._load(path)
    assert [r.bots for r in loaded] == [small.bots, small.bots]
    reads = [0]
    on_read = BotRunner._on_read

    def counted(self: BotRunner, data: object, out: _Outbox) -> None:
        reads[0] += 1
        on_read(self, data, out)

    monkeypatch.setattr(BotRunner, "_on_read", counted)
    decisions, written = replay([small])
    assert reads[0] == sum(len(m) for m in small.bots.values())
    # Every request answered (some answers carry the next decisions, chosen ahead).
    assert written > 0 and decisions > small.requests()


def test_the_answer_filled_in_place_is_the_decision_it_was() -> None:
    runner = BotRunner(_Same, "127.0.0.1:1", "tok")
    out = _Outbox()
    runner._out = out
    m = _Match("m-1", 0, PRESETS["classic"], None, _playing_view())
    play = m.view.legal_actions[0]
    runner._send_answer(m, "17", play, out, None, [play, Bid(120)])
    got = out._buf.pop()
    assert got is not None
    want = pb.Decision(request_id="17", match_id="m-1", action=action_to_pb(play))
    want.ahead.extend([action_to_pb(play), action_to_pb(Bid(120))])
    assert got.SerializeToString() == pb.BotMessage(decision=want).SerializeToString()
    # A play whose card is set before its declare is found wrong: nothing of it is sent,
    # only an action of no kind (which the referee refuses as malformed).
    card = next(iter(Card))
    runner._send_answer(m, "18", Play(card, "no"), out)  # type: ignore[arg-type]
    got = out._buf.pop()
    assert got is not None and got.decision.HasField("action")
    assert got.decision.action.WhichOneof("kind") is None
    assert got.decision.action.ByteSize() == 0


def test_a_slow_machine_keeps_the_bot_on_the_loop(
    small: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (every call "slow": without the replay's own limit, the bot went to the thread)
    monkeypatch.setattr(client, "_SLOW_S", 0.0)
    decisions, _ = replay([small])
    assert decisions > small.requests()
    assert client._SLOW_S == 0.0  # (the limit is the replay's only)


def test_the_bytecodes_are_counted_by_function(small: Recording) -> None:
    text = sdk_requests._opcodes([small], 60)
    head, *rows = text.splitlines()
    per_request = float(head.split()[1].replace(",", ""))
    assert 500 < per_request < 100_000
    named = {row.split()[1]: float(row.split()[0]) for row in rows}
    assert named["client.py:_on_request"] > 0 and named["wire_view.py:_known_view"] > 0


def test_recording_leaves_the_arena_loggers_level_as_it_was() -> None:
    """Defect (found by CI): ``record`` quieted the "arena" logger for good; this file's
    module fixture left it at WARNING for the rest of the test worker, and later tests saw
    none of the runner's INFO lines (a resumed tournament's "2 of 6 matches already
    stored", "referee listening on", a stored ruleset's "never uses")."""
    import logging

    arena_log = logging.getLogger("arena")
    level = arena_log.level
    arena_log.setLevel(logging.INFO)
    try:
        record(seed=6, tables=1, matches=1, max_deals=1)
        assert arena_log.level == logging.INFO
    finally:
        arena_log.setLevel(level)
