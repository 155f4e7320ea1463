"""Round 56 (performance): the SDK reads a request's view items from the bytes it read
(``sdk.wire_view.wire_items``: the message parsed again as wire_view's copy) instead of
serializing the parsed view again, and reads protobuf's repeated fields by a slice (a
upb container has no ``__iter__``: iterating one raised and caught an ``IndexError`` at
its end, a formatted message each). A bot must still get exactly ``view_from_pb``'s view."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.protocol import view_from_pb
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PlayerView
from sdk import client, wire_view
from sdk.client import BotRunner, _Outbox
from sdk.wire_view import _known_view, request_view, wire_items
from tests.sdk.test_wire_view_round54 import _counting, _matches
from tests.support.no_iter import NoIterMsg


def _request(view: pb.PlayerView, rid: str) -> pb.ServerMessage:
    return pb.ServerMessage(
        decision_request=pb.DecisionRequest(request_id=rid, match_id="m", view=view)
    )


def test_the_views_read_from_the_wire_bytes_are_view_from_pbs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wire_view, "_KNOWN", {})  # (cold: nothing learnt by other tests)
    calls = _counting(monkeypatch)
    checked = batched = 0
    for warm in (False, True):
        calls[0] = 0
        for views, sent in _matches():
            ruleset, previous = views[0].ruleset, None
            # every third pair of requests in one Batch, as the referee batches them
            i = 0
            while i < len(sent):
                group = sent[i : i + 2] if i % 3 == 0 else sent[i : i + 1]
                msg = (
                    pb.ServerMessage(batch=pb.Batch(messages=[_request(v, "r") for v in group]))
                    if len(group) > 1
                    else _request(group[0], "r")
                )
                data = msg.SerializeToString()
                parsed, wired = pb.ServerMessage.FromString(data), wire_items(data)
                inner = parsed.batch.messages if len(group) > 1 else [parsed]
                winner = wired.batch.messages if len(group) > 1 else [wired]
                batched += len(group) > 1
                for k, (p, w) in enumerate(zip(inner, winner, strict=True)):
                    got = request_view(
                        p.decision_request.view, ruleset, previous, w.decision_request.view
                    )
                    ref = view_from_pb(p.decision_request.view, ruleset, previous)
                    assert got == ref == views[i + k]
                    assert type(got) is PlayerView
                    previous = got
                    checked += 1
                i += len(group)
        if warm:  # every item known, read from the wire bytes: view_from_pb not called
            assert calls[0] == 0
    assert checked > 2000 and batched > 300


def test_a_view_sent_in_two_parts_is_merged_as_protobuf_merges_it() -> None:
    """The same bytes parsed twice give the same view: a view field that comes twice in a
    request is merged (its lists joined, its numbers the last ones) by both parses."""
    views, sent = _matches()[0]
    full = sent[0]
    first = pb.PlayerView()
    first.CopyFrom(full)
    del first.legal_actions[1:]
    # (the second part's phase is the one kept; a phase is never 0 on the wire)
    first.phase = pb.PHASE_BIDDING if full.phase != pb.PHASE_BIDDING else pb.PHASE_PLAYING
    second = pb.PlayerView(legal_actions=full.legal_actions[1:], phase=full.phase)
    assert len(full.legal_actions) > 1
    data = (
        pb.ServerMessage(decision_request=pb.DecisionRequest(view=first)).SerializeToString()
        + pb.ServerMessage(decision_request=pb.DecisionRequest(view=second)).SerializeToString()
    )
    parsed = pb.ServerMessage.FromString(data)
    assert parsed.decision_request.view == full
    got = request_view(
        parsed.decision_request.view,
        views[0].ruleset,
        None,
        wire_items(data).decision_request.view,
    )
    assert got == view_from_pb(full, views[0].ruleset, None) == views[0]


def test_the_view_items_are_read_by_a_slice_not_iterated(monkeypatch: pytest.MonkeyPatch) -> None:
    # (wire_view calls ItemView's HasField unbound, which only a real message takes)
    monkeypatch.setattr(wire_view, "_has", lambda items, name: items.HasField(name))
    views, sent = _matches()[0]
    ruleset, previous = views[0].ruleset, None
    for v, msg in zip(views, sent, strict=True):
        view = request_view(msg, ruleset, previous)  # (learns what is new)
        items = NoIterMsg(wire_view._ItemView.FromString(msg.SerializeToString()))
        assert _known_view(items, ruleset.players, ruleset, previous) == view == v
        previous = view


def test_a_runner_reads_its_requests_views_from_the_bytes_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_on_read`` hands each request's view to ``request_view`` as read from the bytes,
    a batch's too, each with its own request."""
    views, sent = _matches()[0]
    given: list[tuple[int, Any]] = []

    # (round 58: the runner calls request_view_of, which reads req.view only if needed)
    def spy(req: Any, ruleset: Any, previous: Any, items: Any = None) -> PlayerView:
        msg = req.view
        given.append((msg.deal_number, items))
        return request_view(msg, ruleset, previous, items)

    monkeypatch.setattr(client, "request_view_of", spy)

    async def run() -> None:
        runner = BotRunner(RandomBot, "in-process", "token", name="spy")
        runner._welcomed = True
        out = _Outbox()
        batch = pb.ServerMessage(
            batch=pb.Batch(messages=[_request(sent[0], "r1"), _request(sent[1], "r2")])
        )
        runner._on_read(batch.SerializeToString(), out)  # (an unknown match: not decoded)
        assert given == []
        # The view is read only for a match the runner holds: one is faked in (its bot
        # not made: the requests wait for it, and are then dropped).
        runner._matches["m"] = client._Match("m", views[0].seat, views[0].ruleset, None, views[0])
        runner._on_read(batch.SerializeToString(), out)
        for task in list(runner._tasks):
            task.cancel()
        await asyncio.gather(*runner._tasks, return_exceptions=True)

    asyncio.run(run())
    assert [d for d, _ in given] == [sent[0].deal_number, sent[1].deal_number]
    for (_, items), v in zip(given, sent[:2], strict=True):
        wired = wire_view._ItemView.FromString(v.SerializeToString())
        assert items is not None and items.SerializeToString() == wired.SerializeToString()
