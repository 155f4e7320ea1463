"""Round 57 (performance): the ``*_from_pb`` decoders the SDK calls (``view_from_pb`` on a
view with items not seen before, ``deal_result_from_pb``, ``match_result_from_pb``) and
``sdk.wire_view._learn`` read protobuf's repeated fields by a slice, never by iteration: a
upb container has no ``__iter__``, and a ``for`` over one ended in an ``IndexError``
raised and caught, its message formatted (some 1,800 instructions a loop, 2.5 loops a
request). Each decoder must give what it gave before, and refuse what it refused."""

from __future__ import annotations

from typing import Any

import pytest

from arena import protocol
from arena.protocol import (
    MalformedMessageError,
    deal_result_from_pb,
    deal_result_to_pb,
    match_result_from_pb,
    view_from_pb,
    view_to_pb,
)
from arena.v1 import arena_pb2 as pb
from sdk import wire_view
from tests.sdk.test_wire_view_round54 import _matches
from tests.support.no_iter import NoIterMsg


def _cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing decoded before: every item goes through the decoders' loops."""
    for name in ("_ACTION_BY_BYTES", "_TRICK_BY_BYTES", "_BID_BY_BYTES",
                 "_SEAT_CARD_BY_BYTES", "_RESULT_BY_BYTES"):  # fmt: skip
        monkeypatch.setattr(protocol, name, {})
    monkeypatch.setattr(wire_view, "_KNOWN", {})


def test_view_from_pb_reads_repeated_fields_by_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    _cold(monkeypatch)
    checked = results = 0
    for views, sent in _matches():
        ruleset, previous = views[0].ruleset, None
        for v, msg in zip(views, sent, strict=True):
            # The whole view (every result, bid and trick in it) and as sent (left out).
            assert view_from_pb(NoIterMsg(view_to_pb(v)), ruleset) == v
            got = view_from_pb(NoIterMsg(msg), ruleset, previous)
            assert got == view_from_pb(msg, ruleset, previous) == v
            previous = got
            checked += 1
            results += len(v.deal_results)
    assert checked > 300 and results > 100  # (views with talons, tricks and results)


def test_learn_reads_the_items_by_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    """``request_view`` on new items learns them (``_learn``) from a stand-in that refuses
    iteration, and then knows them: the same view without ``view_from_pb``."""
    monkeypatch.setattr(wire_view, "_KNOWN", {})
    views, sent = _matches()[0]
    ruleset, previous = views[0].ruleset, None
    for v, msg in zip(views, sent, strict=True):
        items = wire_view._ItemView.FromString(msg.SerializeToString())
        wrapped = NoIterMsg(items)
        view = wire_view.view_from_pb(msg, ruleset, previous)
        wire_view._learn(wrapped, ruleset.players, view)
        assert wire_view._known_view(items, ruleset.players, ruleset, previous) == view == v
        previous = view


def _a_result() -> Any:
    views = next(vs for vs, _ in _matches() if vs[-1].deal_results)
    return views[-1].deal_results[-1], views[-1].ruleset.players


def test_deal_result_from_pb_reads_by_a_slice() -> None:
    result, n = _a_result()
    msg = deal_result_to_pb(result)
    assert deal_result_from_pb(NoIterMsg(msg), n) == deal_result_from_pb(msg, n) == result
    assert deal_result_from_pb(NoIterMsg(msg)) == result  # (no table size: no per-seat check)
    del msg.takes[0]
    with pytest.raises(MalformedMessageError, match=rf"deal_result\.takes: {n - 1} values"):
        deal_result_from_pb(NoIterMsg(msg), n)


def test_match_result_from_pb_reads_by_a_slice() -> None:
    msg = pb.MatchResult(scores=[1010, 420, -60], places=[1, 2, 3], shortfalls=[0, 3, 5],
                         deals=12, reason="score")  # fmt: skip
    got = match_result_from_pb(NoIterMsg(msg), 3)
    assert got == match_result_from_pb(msg, 3)
    assert (got.scores, got.places, got.shortfalls, got.winner) == (
        (1010, 420, -60),
        (1, 2, 3),
        (0, 3, 5),
        0,
    )
    msg.places[2] = 4
    with pytest.raises(MalformedMessageError, match=r"match_result\.places: place 4 at a 3-player"):
        match_result_from_pb(NoIterMsg(msg), 3)
