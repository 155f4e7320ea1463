"""Round 54 (performance): the SDK decodes a request's view with ``sdk.wire_view.request_view``,
its repeated items looked up by their bytes. A bot must see exactly the view it saw before:
``view_from_pb``'s view (equal, of the same type) over many random matches, with the deal
results, bids and tricks left out as the referee leaves them out for the SDK, cold (every
item new) and warm (none: ``view_from_pb`` then not called at all); and every malformed
view refused with ``view_from_pb``'s own error, naming the same field."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import Game, PlayerView
from engine.rules import PRESETS
from engine.view import observe
from sdk import wire_view
from sdk.wire_view import request_view
from tests.bots.test_bots_under_rulesets_round36 import draw_ruleset


def _seat_views(seed: int, deals: int, preset: str) -> Iterator[list[PlayerView]]:
    """Each seat's views of its decisions in a random match, in order."""
    rng = random.Random(seed)
    players = PRESETS[preset].players
    g = Game.new(preset, seed=seed, players=[f"p{i}" for i in range(players)])
    out: list[list[PlayerView]] = [[] for _ in range(players)]
    while not g.is_over and len(g.deal_results) < deals:
        legal = g.legal_actions()
        seat = g.to_act
        assert seat is not None
        if len(legal) > 1:
            out[seat].append(observe(g, seat))
        g.apply(rng.choice(legal), seat=seat)
    yield from out


def _as_sent(views: list[PlayerView]) -> list[pb.PlayerView]:
    """The messages the referee sends a bot that asked for "results_once" and "deal_once":
    what the match's last view held is left out."""
    out, previous = [], None
    for v in views:
        results = len(previous.deal_results) if previous is not None else 0
        same = previous is not None and previous.deal_number == v.deal_number
        bids = len(previous.bids) if same and previous is not None else 0
        tricks = len(previous.tricks) if same and previous is not None else 0
        out.append(view_to_pb(v, None, results, bids, tricks))
        previous = v
    return out


def _matches() -> list[tuple[list[PlayerView], list[pb.PlayerView]]]:
    out = []
    for preset in ("classic", "1001", "1001-4p"):
        for seed in range(4):
            for views in _seat_views(seed, 6, preset):
                out.append((views, _as_sent(views)))
    return out


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]

    def counted(*args: Any) -> PlayerView:
        calls[0] += 1
        return view_from_pb(*args)

    monkeypatch.setattr(wire_view, "view_from_pb", counted)
    return calls


def test_the_bot_sees_the_view_view_from_pb_decodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_view, "_KNOWN", {})  # (cold: nothing learnt by other tests)
    calls = _counting(monkeypatch)
    matches = _matches()
    decoded = 0
    for warm in (False, True):
        calls[0] = 0
        for views, sent in matches:
            ruleset, previous, previous_ref = views[0].ruleset, None, None
            for v, msg in zip(views, sent, strict=True):
                got = request_view(msg, ruleset, previous)
                ref = view_from_pb(msg, ruleset, previous_ref)
                assert got == ref == v
                assert type(got) is PlayerView
                assert got.hand == tuple(sorted(got.hand))
                previous, previous_ref = got, ref
                decoded += 1
        if warm:  # every item seen: decoded without view_from_pb
            assert calls[0] == 0
        else:  # the first views of a run teach it the items (a quarter of these few)
            assert 0 < calls[0] < decoded // 2
    assert decoded > 2000
    omitted = sum(m.bids_omitted > 0 or m.tricks_omitted > 0 for _, s in matches for m in s)
    assert omitted > 500 and sum(m.deal_results_omitted > 0 for _, s in matches for m in s) > 500


def test_random_rulesets_too() -> None:
    rng = random.Random(54)
    checked = 0
    for seed in range(12):
        ruleset = draw_ruleset(rng)
        g = Game.new(ruleset, seed=seed, players=[f"p{i}" for i in range(ruleset.players)])
        views: dict[int, list[PlayerView]] = {}
        while not g.is_over and len(g.deal_results) < 4:
            legal, seat = g.legal_actions(), g.to_act
            assert seat is not None
            if len(legal) > 1:
                views.setdefault(seat, []).append(observe(g, seat))
            g.apply(rng.choice(legal), seat=seat)
        for seat_views in views.values():
            previous = None
            for v, msg in zip(seat_views, _as_sent(seat_views), strict=True):
                previous = request_view(msg, v.ruleset, previous)
                assert previous == v
                checked += 1
    assert checked > 300


def _mid_deal_view() -> tuple[PlayerView, PlayerView]:
    """A view of a seat to play with completed tricks and deal results before it, and the
    seat's view before it in the deal."""
    for views in _seat_views(3, 6, "classic"):
        for before, v in itertools.pairwise(views):
            if (
                v.deal_results
                and v.tricks
                and len(v.trick) == 1
                and before.tricks
                and (before.deal_number == v.deal_number)
            ):
                return before, v
    raise AssertionError("no such view")


def _edits() -> list[tuple[str, Callable[[pb.PlayerView], None]]]:
    def dup_hand(m: pb.PlayerView) -> None:
        m.hand.add().CopyFrom(m.hand[0])

    def bad_trick_seat(m: pb.PlayerView) -> None:
        m.tricks[-1].cards[0].seat = 5

    def empty_trick(m: pb.PlayerView) -> None:
        del m.tricks[-1].cards[:]

    def bad_result(m: pb.PlayerView) -> None:
        del m.deal_results[-1].scores[:]

    def set_to(name: str, value: int) -> Callable[[pb.PlayerView], None]:
        return lambda m: setattr(m, name, value)

    return [
        ("seat", set_to("seat", 3)),
        ("dealer", set_to("dealer", 7)),
        ("to_act", set_to("to_act", 3)),
        ("declarer", set_to("declarer", 4)),
        ("phase unspecified", set_to("phase", 0)),
        ("phase unknown", set_to("phase", 99)),
        ("trump", set_to("trump", 9)),
        ("results omitted", set_to("deal_results_omitted", 40)),
        ("bids omitted", set_to("bids_omitted", 40)),
        ("tricks omitted", set_to("tricks_omitted", 9)),
        ("deal number", set_to("deal_number", 0)),
        ("hand twice", dup_hand),
        ("no active seat", lambda m: m.ClearField("active_seats")),
        ("active seat", lambda m: m.active_seats.append(6)),
        ("scores", lambda m: m.scores.append(5)),
        ("barrel", lambda m: m.barrel.append(-1)),
        ("players", lambda m: m.players.append("x")),
        ("trick seat", bad_trick_seat),
        ("empty trick", empty_trick),
        ("result scores", bad_result),
        ("hand card", lambda m: setattr(m.hand[0], "rank", 9)),
        ("legal action", lambda m: m.legal_actions[0].play.ClearField("card")),
    ]


@pytest.mark.parametrize("name", [name for name, _ in _edits()])
def test_a_malformed_view_is_refused_as_view_from_pb_refuses_it(name: str) -> None:
    before, v = _mid_deal_view()
    edit = dict(_edits())[name]
    for previous in (before, None):
        msg = view_to_pb(v)
        request_view(msg, v.ruleset, previous)  # (its items known: the fast path next)
        edit(msg)
        with pytest.raises(MalformedMessageError) as want:
            view_from_pb(msg, v.ruleset, previous)
        with pytest.raises(MalformedMessageError) as got:
            request_view(msg, v.ruleset, previous)
        assert type(got.value) is type(want.value)
        assert (got.value.what, str(got.value)) == (want.value.what, str(want.value))


def test_the_hand_in_any_order_is_the_sorted_hand() -> None:
    _, v = _mid_deal_view()
    msg = view_to_pb(v)
    request_view(msg, v.ruleset)
    cards = list(msg.hand)[::-1]
    del msg.hand[:]
    msg.hand.extend(cards)
    assert request_view(msg, v.ruleset) == v == view_from_pb(msg, v.ruleset)


def test_the_items_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_view, "_KNOWN", {})
    monkeypatch.setattr(wire_view, "_CACHE_MAX", 8)
    for views, sent in _matches()[:6]:
        previous = None
        for v, msg in zip(views, sent, strict=True):
            previous = request_view(msg, v.ruleset, previous)
            assert previous == v
    assert wire_view._KNOWN and all(len(c) <= 8 for c in wire_view._KNOWN.values())
