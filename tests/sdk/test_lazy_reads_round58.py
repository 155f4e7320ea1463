"""Round 58 (performance): the runner reads less of a upb message per request.

- ``request_view_of(req, ...)`` reads ``req.view`` (a upb wrapper made and freed each
  time) only when it needs the full view: no wire items given, or a view with something
  not known (cold, an item not seen, one that breaks a check): then it gives
  ``view_from_pb``'s view or raises its very error, as ``request_view`` does.
- ``_on_message`` is handed the kind ``_on_read`` (or the batch's loop) read already: a
  message's kind is read once, each of a batch's messages' once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.protocol import MalformedMessageError, view_from_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PlayerView
from sdk import client, wire_view
from sdk.client import BotRunner, _Outbox
from sdk.wire_view import request_view, request_view_of
from tests.sdk.test_kind_reads_round57 import _counted, _message
from tests.sdk.test_wire_view_round54 import _counting, _matches


class _Req:
    """A ``DecisionRequest`` stand-in counting the reads of its ``view``."""

    def __init__(self, view: pb.PlayerView) -> None:
        self._view = view
        self.reads = 0

    @property
    def view(self) -> pb.PlayerView:
        self.reads += 1
        return self._view


def _items(msg: pb.PlayerView) -> Any:
    return wire_view._ItemView.FromString(msg.SerializeToString())


def test_the_view_is_read_only_when_it_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold: every view equals view_from_pb's, read where view_from_pb decodes it. Warm
    (every item learnt): the same views, ``req.view`` never read. Without items: read to
    serialize it, once."""
    monkeypatch.setattr(wire_view, "_KNOWN", {})  # (cold: nothing learnt by other tests)
    calls = _counting(monkeypatch)
    matches = _matches()[:6]
    for warm in (False, True):
        calls[0] = reads = 0
        for views, sent in matches:
            ruleset, previous = views[0].ruleset, None
            for v, msg in zip(views, sent, strict=True):
                req = _Req(msg)
                got = request_view_of(req, ruleset, previous, _items(msg))  # type: ignore[arg-type]
                assert got == view_from_pb(msg, ruleset, previous) == v
                assert type(got) is PlayerView
                reads += req.reads
                previous = got
        if warm:
            assert calls[0] == 0 and reads == 0
        else:  # each view that view_from_pb decoded was read once for it, no other
            assert 0 < reads == calls[0]
    views, sent = matches[0]
    req = _Req(sent[0])
    assert request_view_of(req, views[0].ruleset, None, None) == views[0]  # type: ignore[arg-type]
    assert req.reads == 1  # (serialized for the items; known then: not decoded again)


def test_a_view_with_an_unknown_or_bad_item_is_read_and_refused_alike() -> None:
    """A warm cache, then a view with an item never seen (a poisoned hand card: a card
    value out of range) and one whose seat is out of range: read, and refused with
    view_from_pb's very error, as request_view refuses them."""
    views, sent = _matches()[0]
    ruleset = views[0].ruleset
    previous = None
    for msg in sent:  # (learn every item)
        previous = request_view(msg, ruleset, previous)
    bad_card = pb.PlayerView()
    bad_card.CopyFrom(sent[0])
    bad_card.hand[0].rank = 99
    bad_seat = pb.PlayerView()
    bad_seat.CopyFrom(sent[0])
    bad_seat.seat = 7
    for bad in (bad_card, bad_seat):
        with pytest.raises(MalformedMessageError) as want:
            view_from_pb(bad, ruleset)
        with pytest.raises(MalformedMessageError) as old:
            request_view(bad, ruleset, None, _items(bad))
        req = _Req(bad)
        with pytest.raises(MalformedMessageError) as got:
            request_view_of(req, ruleset, None, _items(bad))  # type: ignore[arg-type]
        assert str(got.value) == str(old.value) == str(want.value)
        assert got.value.what == want.value.what
        assert req.reads == 1
    # (and a good view after them is still decoded from the cache, unread)
    req = _Req(sent[1])
    assert request_view_of(req, ruleset, views[0], _items(sent[1])) == views[1]  # type: ignore[arg-type]
    assert req.reads == 0


def test_a_message_has_its_kind_read_once_a_batchs_messages_once_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kinds = _counted(monkeypatch, client, "_server_kind")
    views, sent = _matches()[0]
    runner = BotRunner(RandomBot, "in-process", "token", name="kinds")
    runner._welcomed = True
    m = runner._matches["m"] = client._Match("m", views[0].seat, views[0].ruleset, None, views[0])
    m.on_action = False  # (as for the random bot, made: no hook to schedule)
    runner._on_read(_message(), _Outbox())
    assert kinds == ["kind"]  # (read by _on_read, handed to _on_message)
    assert m.last_seq == 3  # (its events were handled)
    kinds.clear()

    def request(rid: str, view: pb.PlayerView) -> pb.ServerMessage:
        return pb.ServerMessage(
            decision_request=pb.DecisionRequest(request_id=rid, match_id="m", view=view)
        )

    batch = pb.ServerMessage(batch=pb.Batch(messages=[request("r1", sent[0]),
                                                      request("r2", sent[1])]))  # fmt: skip

    async def run() -> None:
        runner._on_read(batch.SerializeToString(), _Outbox())
        for task in list(runner._tasks):  # (its bot not made: the requests wait, dropped)
            task.cancel()
        await asyncio.gather(*runner._tasks, return_exceptions=True)

    asyncio.run(run())
    assert kinds == ["kind"] * 3  # (the batch's, then each of its two messages')
    assert m.view == views[1]  # (both requests read, in order)


def test_a_batch_in_a_batch_and_a_message_of_no_kind_are_handled_as_before(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The kind handed on is the one read: a Batch inside a Batch is still refused, and
    a message of no kind (``None``) with events still has them handled."""
    views, _ = _matches()[0]
    runner = BotRunner(RandomBot, "in-process", "token", name="kinds")
    runner._welcomed = True
    m = runner._matches["m"] = client._Match("m", views[0].seat, views[0].ruleset, None, views[0])
    m.on_action = False
    inner = pb.ServerMessage(batch=pb.Batch())
    outer = pb.ServerMessage(batch=pb.Batch(messages=[inner]))
    with caplog.at_level("ERROR", logger="sdk"):
        runner._on_read(outer.SerializeToString(), _Outbox())
    assert "batch: a Batch inside a Batch" in caplog.text
    none = pb.ServerMessage()
    none.MergeFromString(_message())
    none.ClearField("decision_request")
    runner._on_read(none.SerializeToString(), _Outbox())
    assert m.last_seq == 3
