"""Round 57 (performance): the runner reads a message's and an event's kind through the
classes' own ``WhichOneof`` (``msg.WhichOneof`` made upb look the name up among the
message's fields first, then bind a method), once per message read once the Welcome has
come (``_in_order`` needs no kind then), and wire_view's ``HasField`` likewise. What the
runner does with each kind is unchanged: a message before the Welcome is still refused,
named by its kind."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from arena.protocol import action_event_to_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import Pass
from sdk import client, wire_view
from sdk.client import BotRunner, _Outbox
from tests.sdk.test_wire_view_round54 import _matches


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    calls: list[str] = []
    real = getattr(module, name)  # (AttributeError before the change: no such function)

    def counted(msg: Any, oneof: str) -> Any:
        calls.append(oneof)
        return real(msg, oneof)

    monkeypatch.setattr(module, name, counted)
    return calls


def _message() -> bytes:
    """Three action events of match "m", and a request of a match the runner does not hold."""
    msg = pb.ServerMessage(
        events=[
            action_event_to_pb("m", i, pb.ACTION_SOURCE_UNSPECIFIED, 1, Pass()) for i in (1, 2, 3)
        ],
        decision_request=pb.DecisionRequest(request_id="r1", match_id="gone"),
    )
    return msg.SerializeToString()


def test_a_message_read_has_its_kind_read_once_and_each_events_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kinds = _counted(monkeypatch, client, "_server_kind")
    events = _counted(monkeypatch, client, "_event_kind")
    views, _ = _matches()[0]
    runner = BotRunner(RandomBot, "in-process", "token", name="kinds")
    runner._welcomed = True
    m = runner._matches["m"] = client._Match("m", views[0].seat, views[0].ruleset, None, views[0])
    m.on_action = False  # (as for the random bot, made: no hook to schedule)
    runner._on_read(_message(), _Outbox())
    # (_on_read's, for wire_items, handed to _on_message (round 58: it read it again);
    # none in _in_order once welcomed)
    assert kinds == ["kind"]
    assert events == ["kind"] * 3
    assert runner._matches["m"].last_seq == 3  # (the events were handled)


def test_a_message_before_the_welcome_is_still_refused_by_its_kind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    kinds = _counted(monkeypatch, client, "_server_kind")
    runner = BotRunner(RandomBot, "in-process", "token", name="early")
    with caplog.at_level(logging.WARNING, logger="sdk"):
        runner._on_read(_message(), _Outbox())
    assert kinds == ["kind"]  # (read by _in_order, which refuses it: not handled)
    assert "protocol violation: decision_request from the arena before its Welcome " \
        "(match gone): ignored" in caplog.text  # fmt: skip


def test_known_views_read_presence_through_the_class_and_only_of_a_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An optional field (to_act, declarer, bid, contract) other than 0 is set: its
    presence is asked (of the class's ``HasField``) only when it reads 0, where an unset
    field and a set 0 (seat 0 to act) differ."""
    asked: list[tuple[str, int]] = []
    real = wire_view._has

    def has(items: Any, name: str) -> bool:
        asked.append((name, getattr(items, name)))
        return bool(real(items, name))

    monkeypatch.setattr(wire_view, "_has", has)
    seen_zero_seat = False
    for views, sent in _matches()[:6]:
        ruleset, previous = views[0].ruleset, None
        for v, msg in zip(views, sent, strict=True):
            previous = wire_view.request_view(msg, ruleset, previous)
            assert previous == v
            seen_zero_seat |= v.to_act == 0
    assert seen_zero_seat  # (seat 0 to act: a set 0, told from an unset one)
    names = {name for name, _ in asked}
    assert names <= {"to_act", "declarer", "bid", "contract"} and "to_act" in names
    assert {value for _, value in asked} == {0}


def test_an_unset_optional_field_is_none_and_a_set_zero_is_zero() -> None:
    """A view of seat 0 whose to_act (or declarer) is left out, read warm (its items
    known), is the view ``view_from_pb`` reads: ``None`` there, not seat 0; with them set
    to 0, 0."""
    views, sent = next((vs, ss) for vs, ss in _matches() if vs[0].seat == 0)
    ruleset, previous = views[0].ruleset, None
    for msg in sent:
        previous = wire_view.request_view(msg, ruleset, previous)  # (learns the items)
    checked = 0
    for i, msg in enumerate(sent):
        before = views[i - 1] if i else None
        for name in ("to_act", "declarer", "bid", "contract"):
            for value in (None, 0):
                changed = pb.PlayerView()
                changed.CopyFrom(msg)
                if value is None:
                    changed.ClearField(name)
                else:
                    setattr(changed, name, value)
                got = wire_view._known_view(
                    wire_view._ItemView.FromString(changed.SerializeToString()),
                    ruleset.players, ruleset, before,
                )  # fmt: skip
                assert getattr(got, name) == value
                assert got == wire_view.view_from_pb(changed, ruleset, before)
                checked += 1
    assert checked > 50
