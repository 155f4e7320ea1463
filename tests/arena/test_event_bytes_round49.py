"""Round 49: the referee keeps action events as the wire bytes of a message's ``events``
item until a message carries them (docs/performance.md, "Changes of 2026-12-08"): the
events a bot gets, and the bytes of the messages that carry them, are what the events
built field by field gave."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import (
    action_event_bytes,
    action_event_items,
    action_event_to_pb,
    event_item,
    seat_action_to_pb,
)
from arena.referee import Referee
from arena.referee import match as match_module
from arena.referee.sessions import BotSession, Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Bid, Card, Concede, Game, Give, HiddenGive, Pass, Play
from tests.support.harness import as_message
from tests.support.streams import referee_with_streams

_ACTIONS: list[Any] = [
    Bid(120),
    Pass(),
    Give(Card.HA, 1),
    HiddenGive(2),
    Play(Card.SK, declare=True),
    Play(Card.D9),
    Concede(),
]


def _reference(match_id: str, seq: int, source: int, seat: int, action: Any) -> pb.Event:
    """The event built field by field (what the cached bytes must equal)."""
    return pb.Event(
        match_id=match_id, seq=seq, source=source, action=seat_action_to_pb(seat, action)
    )


@pytest.mark.parametrize("seq", [1, 4095, 4096, 300_000])
def test_action_event_items_are_the_actors_and_the_others_events(seq: int) -> None:
    """Round 55: ``action_event_items`` makes the actor's event (its source) and the one the
    other seats get (no source) together: each is ``action_event_bytes``'s, byte for byte,
    and the event built field by field."""
    for action in _ACTIONS:
        if isinstance(action, HiddenGive):
            continue  # (never an actor's own: the referee censors it for a third seat)
        for source in pb.ActionSource.values():
            for seat in range(4):
                own, public = action_event_items("m-7", seq, source, seat, action)
                assert own == action_event_bytes("m-7", seq, source, seat, action)
                assert own == event_item(_reference("m-7", seq, source, seat, action))
                hidden = pb.ACTION_SOURCE_UNSPECIFIED
                assert public == action_event_bytes("m-7", seq, hidden, seat, action)
                assert public == event_item(_reference("m-7", seq, hidden, seat, action))
    # A match id long enough that the item's length takes more than the cached varints.
    long_id = "m" * 5000
    own, public = action_event_items(long_id, seq, pb.ACTION_SOURCE_BOT, 1, Pass())
    assert own == event_item(_reference(long_id, seq, pb.ACTION_SOURCE_BOT, 1, Pass()))
    assert public == event_item(_reference(long_id, seq, 0, 1, Pass()))


@pytest.mark.parametrize("seq", [0, 1, 4095, 4096, 300_000])
def test_action_event_bytes_are_the_event_built_field_by_field(seq: int) -> None:
    for action in _ACTIONS:
        for source in pb.ActionSource.values():
            for seat in range(4):
                item = action_event_bytes("m-7", seq, source, seat, action)
                want = _reference("m-7", seq, source, seat, action)
                got = pb.ServerMessage.FromString(item)
                assert list(got.events) == [want]
                # (as sent: the message carrying it is serialized again; seq 0, which the
                # referee never uses, is written out in the cached bytes)
                assert got.SerializeToString() == event_item(want)
                assert item == event_item(want) or seq == 0
                assert action_event_to_pb("m-7", seq, source, seat, action) == want
    # (the caches are by match id and the action's identity: another match, an equal
    # action made anew, the same seat)
    item = action_event_bytes("other", seq, 0, 1, Bid(120))
    assert pb.ServerMessage.FromString(item).events[0] == _reference("other", seq, 0, 1, Bid(120))


def test_a_session_sends_the_bytes_the_event_messages_gave() -> None:
    """Events added as messages and as bytes, in any order, reach the next message in
    order and give it the bytes ``msg.events.extend`` of the messages gave."""

    async def go() -> None:
        s = BotSession("x", "tok-x")
        stream = Stream("one")
        s.attach(stream)
        events = [
            _reference("m", 1, 1, 0, Bid(120)),
            pb.Event(match_id="m", seq=2, deal_started=3),
            _reference("m", 3, 0, 2, HiddenGive(1)),
            pb.Event(match_id="n", seq=9, talon_taken=pb.TalonTaken(seat=1)),
        ]
        for i, ev in enumerate(events):
            if i % 2:
                s.add_event(ev)
            else:  # (as MatchRunner._after adds an action's event: its item's bytes)
                s.events.append(event_item(ev))
        msg = pb.ServerMessage()
        msg.decision_request.request_id = "4"
        msg.decision_request.view.seat = 2
        assert s.send(msg)
        want = pb.ServerMessage()
        want.decision_request.request_id = "4"
        want.decision_request.view.seat = 2
        want.events.extend(events)
        sent = stream._queue.get_nowait()
        assert sent is msg
        assert sent.SerializeToString() == want.SerializeToString()
        assert not s.events
        s.flush()  # nothing buffered: nothing sent
        assert stream._queue.empty()
        s.detach(stream, 5.0)
        s.add_event(events[1])  # away: dropped
        assert not s.events

    asyncio.run(go())


class _Recording(_AnswerAtOnce):
    """The bench's in-process bot, keeping every event it is sent, in order."""

    __slots__ = ("got",)

    def __init__(self, referee: Referee, session: BotSession) -> None:
        super().__init__(referee, session)
        self.got: list[bytes] = []

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        self.got += [e.SerializeToString() for e in msg.events]
        super().put(msg)


def _events_of_matches() -> list[list[bytes]]:
    async def run() -> list[list[bytes]]:
        referee, streams = referee_with_streams(
            lambda referee, _name, session: _Recording(referee, session)
        )
        rules = dataclasses.replace(PRESETS["classic"], max_deals=3)
        # Two matches at once, then one more: the caches shared across matches and ids.
        await asyncio.gather(
            *(referee.run_match(f"t{t}", rules, 11 + t, ["a", "b", "c"]) for t in range(2))
        )
        await referee.run_match("t0-again", rules, 13, ["c", "a", "b"])
        return [s.got for s in streams]

    return asyncio.run(run())


def test_matches_send_the_events_built_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _events_of_matches()

    def by_fields(match_id: str, seq: int, source: int, seat: int, action: Any) -> bytes:
        return event_item(_reference(match_id, seq, source, seat, action))

    def pair_by_fields(
        match_id: str, seq: int, source: int, seat: int, action: Any
    ) -> tuple[bytes, bytes]:
        # (the actor's event and the others', made together since round 55)
        return (by_fields(match_id, seq, source, seat, action),
                by_fields(match_id, seq, pb.ACTION_SOURCE_UNSPECIFIED, seat, action))  # fmt: skip

    monkeypatch.setattr(match_module, "action_event_bytes", by_fields)
    monkeypatch.setattr(match_module, "action_event_items", pair_by_fields)
    want = _events_of_matches()
    assert got == want
    # Every seat was told every action (and the rest), hidden gives included.
    actions = [pb.Event.FromString(e) for e in got[0]]
    assert sum(e.HasField("action") for e in actions) > 100
    assert all(len(g) == len(got[0]) for g in got)


def test_the_referee_applies_the_engines_own_action(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's answer (decoded anew from its message) that is one of the legal actions is
    applied and sent on as the engine's own equal object: the one whose event and view
    bytes the referee keeps by its identity. The events are the same (above)."""
    applied: list[bool] = []
    apply_trusted = Game.apply_trusted

    def checked(self: Game, action: Any) -> None:
        legal = self.legal_actions()
        applied.append(any(a is action for a in legal))
        apply_trusted(self, action)

    monkeypatch.setattr(Game, "apply_trusted", checked)
    _events_of_matches()
    assert len(applied) > 100
    assert all(applied)  # (every answer of the bench's bot is legal)
