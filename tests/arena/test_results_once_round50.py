"""Round 50 (performance): the "results_once" feature. Deal results were 63 % of a request's
view (540 of 862 bytes on average over matches of 12 deals), and every request carried
every earlier result again. A bot whose Hello lists "results_once" gets them once per
match and stream: a request's view leaves out those sent before
(``PlayerView.deal_results_omitted``) and the SDK takes them from the match's last view.
A bot that does not ask (an older SDK, the raw bots of the referee's tests) gets every
result in every view, as before."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any, ClassVar

import pytest

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
from arena.referee import Referee
from arena.referee import core as core_mod
from arena.referee import match as match_mod
from arena.referee.sessions import BotSession
from arena.v1 import arena_pb2 as pb
from engine import Game, PlayerView
from engine.rules import PRESETS
from engine.view import observe
from sdk.bot import Bot
from tests.support.harness import as_message, play_sdk_match
from tests.support.streams import referee_with_streams


def _seat_views(seed: int, deals: int) -> list[list[PlayerView]]:
    """Each seat's views of its decisions in a random classic match, in order."""
    rng = random.Random(seed)
    g = Game.new("classic", seed=seed, players=["a", "b", "c"])
    out: list[list[PlayerView]] = [[], [], []]
    while not g.is_over and len(g.deal_results) < deals:
        legal = g.legal_actions()
        seat = g.to_act
        assert seat is not None
        if len(legal) > 1:
            out[seat].append(observe(g, seat))
        g.apply(rng.choice(legal), seat=seat)
    return out


def test_a_view_without_the_results_sent_before_decodes_to_the_whole_view() -> None:
    trimmed = 0
    for seat_views in _seat_views(seed=4, deals=8):
        previous: PlayerView | None = None
        for v in seat_views:
            omit = len(previous.deal_results) if previous is not None else 0
            whole = view_to_pb(v)
            msg = view_to_pb(v, results_omitted=omit)
            # The bytes: the whole view's, less the results left out, plus the count.
            expected = pb.PlayerView()
            expected.CopyFrom(whole)
            del expected.deal_results[:omit]
            expected.deal_results_omitted = omit
            assert msg.SerializeToString() == expected.SerializeToString()
            assert view_from_pb(msg, v.ruleset, previous) == v == view_from_pb(whole, v.ruleset)
            trimmed += omit > 0
            previous = v
    assert trimmed > 20


def test_a_view_leaving_out_results_the_bot_never_had_is_malformed() -> None:
    views = _seat_views(seed=4, deals=8)[0]
    late = next(v for v in views if len(v.deal_results) >= 3)
    early = next(v for v in views if len(v.deal_results) == 1)
    msg = view_to_pb(late, results_omitted=2)
    with pytest.raises(MalformedMessageError, match=r"deal_results_omitted.*2 results left out, 1"):
        view_from_pb(msg, late.ruleset, early)
    with pytest.raises(MalformedMessageError, match="0 known"):
        view_from_pb(msg, late.ruleset, None)
    with pytest.raises(ValueError):
        view_to_pb(late, results_omitted=len(late.deal_results) + 1)


class _Captures(_AnswerAtOnce):
    """An in-process bot, with or without "results_once", that keeps the views it gets."""

    __slots__ = ("views",)

    def __init__(self, referee: Referee, session: BotSession, results_once: bool) -> None:
        super().__init__(referee, session)
        self.results_once = results_once
        self.views: list[pb.PlayerView] = []

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        if msg.HasField("decision_request"):
            view = pb.PlayerView()
            view.CopyFrom(msg.decision_request.view)
            self.views.append(view)
        super().put(msg)


def test_only_a_bot_that_asked_gets_views_without_the_results_it_has() -> None:
    async def main() -> list[_Captures]:
        referee, streams = referee_with_streams(  # (b did not ask)
            lambda referee, name, session: _Captures(referee, session, name != "b")
        )
        rules = dataclasses.replace(PRESETS["classic"], max_deals=6)
        await referee.run_match("m1", rules, 5, ["a", "b", "c"])
        return streams

    asked, plain, _ = asyncio.run(main())
    assert all(v.deal_results_omitted == 0 for v in plain.views)
    assert all(len(v.deal_results) == v.deal_number for v in plain.views)
    # Every result once: what was left out is what the views before held.
    held = 0
    for v in asked.views:
        assert v.deal_results_omitted == held
        held += len(v.deal_results)
        assert held == v.deal_number
    assert held >= 4 and sum(len(v.deal_results) for v in asked.views) == held


class _Recorder(Bot):
    """Keeps the deal results of every view it is asked with (by its name)."""

    quick = True
    seen: ClassVar[dict[str, list[tuple[Any, ...]]]] = {}

    def act(self, view: PlayerView) -> Any:
        self.seen.setdefault(view.players[view.seat], []).append(view.deal_results)
        return view.legal_actions[0]


def test_the_sdk_rebuilds_every_view_a_real_referee_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through gRPC, the SDK asking for "results_once": each bot's views hold every earlier
    result, equal to the referee's own (recorded as it made each request), though most
    requests carried none of them."""
    made: dict[int, list[tuple[Any, ...]]] = {0: [], 1: [], 2: []}
    omitted: list[int] = []
    real = match_mod.game_view_bytes

    def recording(
        game: Game, seat: int, results_omitted: int = 0, *more: Any, **given: Any
    ) -> bytes:
        # (a request's view, made from the game: the engine's view of it is observe's)
        made[seat].append(observe(game, seat).deal_results)
        omitted.append(results_omitted)
        # (more: "deal_once", round 51, and the legal actions; given: the game's tuples, 58)
        return real(game, seat, results_omitted, *more, **given)

    monkeypatch.setattr(match_mod, "game_view_bytes", recording)
    # A referee without "ahead" (round 53): every view a bot gets is then a request's (with
    # it, also the views the SDK foresees: tests/sdk/test_ahead_round53.py checks those).
    monkeypatch.setattr(core_mod, "FEATURES", tuple(f for f in core_mod.FEATURES if f != "ahead"))
    _Recorder.seen = {}

    play_sdk_match(_Recorder, max_deals=5)
    for seat, name in enumerate(["ann", "bob", "cid"]):
        assert _Recorder.seen[name] == made[seat]
    assert max(len(r) for r in made[0]) >= 3
    assert sum(k > 0 for k in omitted) > len(omitted) // 2


class _Holds(_Captures):
    """Leaves the first request whose view leaves results out unanswered, and comes back
    on a new stream (``then``) instead, as a bot reconnecting would."""

    __slots__ = ("held", "then")

    def __init__(self, referee: Referee, session: BotSession, then: _Captures) -> None:
        super().__init__(referee, session, results_once=True)
        self.then = then
        self.held: pb.DecisionRequest | None = None

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        r = msg.decision_request if msg.HasField("decision_request") else None
        if self.held is None and r is not None and r.view.deal_results_omitted:
            self.held = pb.DecisionRequest()
            self.held.CopyFrom(r)
            asyncio.get_running_loop().call_soon(self.session.attach, self.then)
            return
        if self.held is None:
            super().put(msg)


@pytest.mark.parametrize("asks_again", [True, False])
def test_a_request_sent_again_on_a_new_stream_holds_every_result(asks_again: bool) -> None:
    """The pending request, sent again after a reconnection, had its results left out for
    the old stream: it goes whole (the new stream's bot may be another process, or an
    older SDK that did not ask), and the new stream leaves out only what it was sent."""

    async def main() -> tuple[_Holds, _Captures]:
        def stream(referee: Referee, name: str, session: BotSession) -> _Captures:
            if name == "a":  # (its stream held, then this new one said Hello)
                later = _Captures(referee, session, results_once=asks_again)
                return _Holds(referee, session, later)
            return _Captures(referee, session, results_once=True)

        referee, streams = referee_with_streams(stream)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=6)
        await referee.run_match("m1", rules, 5, ["a", "b", "c"])
        first = streams[0]
        assert isinstance(first, _Holds)
        return first, first.then

    first, later = asyncio.run(main())
    held = first.held
    assert held is not None and held.view.deal_results_omitted > 0
    again = later.views[0]
    assert again.deal_results_omitted == 0 and len(again.deal_results) == again.deal_number
    whole = pb.PlayerView()
    whole.CopyFrom(held.view)
    whole.ClearField("deal_results")
    whole.ClearField("deal_results_omitted")
    again_less = pb.PlayerView()
    again_less.CopyFrom(again)
    again_less.ClearField("deal_results")
    assert again_less == whole  # the same request's view, its results whole
    if asks_again:
        assert any(v.deal_results_omitted for v in later.views[1:])
    else:
        assert all(v.deal_results_omitted == 0 for v in later.views)
    for v in later.views:
        assert v.deal_results_omitted + len(v.deal_results) == v.deal_number
