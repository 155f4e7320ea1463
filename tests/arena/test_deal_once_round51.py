"""Round 51 (performance): the "deal_once" feature. After round 50's "results_once", a
request's view still carried the deal's whole auction and every completed trick of the
deal again at every decision. A bot whose Hello lists "deal_once" gets the bids and
tricks of its last view of the same deal once: a request's view leaves them out
(``PlayerView.bids_omitted``, ``tricks_omitted``) and the SDK takes them from the match's
last view. A bot that does not ask (an older SDK, the raw bots of the referee's tests)
gets whole views; an older referee never leaves any out."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import defaultdict
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


def _seat_views(seed: int, deals: int, preset: str = "classic") -> list[list[PlayerView]]:
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
    return out


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_a_view_without_the_deals_bids_and_tricks_sent_before_decodes_whole(preset: str) -> None:
    trimmed_bids = trimmed_tricks = 0
    for seat_views in _seat_views(seed=7, deals=5, preset=preset):
        previous: PlayerView | None = None
        for v in seat_views:
            same = previous is not None and previous.deal_number == v.deal_number
            nb = len(previous.bids) if same and previous is not None else 0
            nt = len(previous.tricks) if same and previous is not None else 0
            whole = view_to_pb(v)
            msg = view_to_pb(v, bids_omitted=nb, tricks_omitted=nt)
            # The bytes: the whole view's, less the items left out, plus the counts.
            expected = pb.PlayerView()
            expected.CopyFrom(whole)
            del expected.bids[:nb]
            del expected.tricks[:nt]
            expected.bids_omitted, expected.tricks_omitted = nb, nt
            assert msg.SerializeToString() == expected.SerializeToString()
            assert view_from_pb(msg, v.ruleset, previous) == v == view_from_pb(whole, v.ruleset)
            trimmed_bids += nb > 0
            trimmed_tricks += nt > 0
            previous = v
    assert trimmed_bids > 20 and trimmed_tricks > 20


def test_a_view_leaving_out_what_the_bot_never_had_is_malformed() -> None:
    views = _seat_views(seed=4, deals=3)[0]
    late = next(v for v in views if len(v.tricks) >= 3)
    early = next(v for v in views if v.deal_number == late.deal_number and len(v.tricks) == 1)
    other_deal = next(v for v in views if v.deal_number != late.deal_number and len(v.tricks) >= 3)
    msg = view_to_pb(late, tricks_omitted=2)
    with pytest.raises(MalformedMessageError, match=r"tricks_omitted.*2 tricks left out, 1 known"):
        view_from_pb(msg, late.ruleset, early)
    # Tricks of another deal are not this deal's, however many.
    with pytest.raises(MalformedMessageError, match="0 known"):
        view_from_pb(msg, late.ruleset, other_deal)
    with pytest.raises(MalformedMessageError, match="0 known"):
        view_from_pb(msg, late.ruleset, None)
    bids_msg = view_to_pb(late, bids_omitted=len(late.bids))
    with pytest.raises(MalformedMessageError, match="bids_omitted"):
        view_from_pb(bids_msg, late.ruleset, other_deal)
    with pytest.raises(ValueError):
        view_to_pb(late, tricks_omitted=len(late.tricks) + 1)
    with pytest.raises(ValueError):
        view_to_pb(late, bids_omitted=len(late.bids) + 1)


class _Captures(_AnswerAtOnce):
    """An in-process bot, with or without "deal_once", that keeps the views it gets, by
    match (its starts' too)."""

    __slots__ = ("views",)

    def __init__(self, referee: Referee, session: BotSession, deal_once: bool) -> None:
        super().__init__(referee, session)
        self.results_once = self.deal_once = deal_once
        self.views: dict[str, list[pb.PlayerView]] = defaultdict(list)

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        kind = msg.WhichOneof("kind")
        if kind in ("decision_request", "match_started"):
            inner = getattr(msg, kind)
            view = pb.PlayerView()
            view.CopyFrom(inner.view)
            self.views[inner.match_id].append(view)
        super().put(msg)


def test_only_a_bot_that_asked_gets_views_without_what_it_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three tables at once, the same three bots at each (two of them asking): every view
    each bot got, each rebuilt from the match's view before it, equals the engine's view
    the referee made it from; nothing is taken across deals, matches or seats."""
    made: dict[tuple[str, int], list[PlayerView]] = defaultdict(list)
    real_observe = match_mod.observe
    runner_of: dict[int, str] = {}
    real_run = match_mod.MatchRunner.run

    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        runner_of[id(self.game)] = self.match_id
        return await real_run(self, *args, **kwargs)

    def observing(game: Game, seat: int, **kw: Any) -> PlayerView:
        view = real_observe(game, seat, **kw)
        if not kw:  # (not the final view, with MatchEnded)
            made[(runner_of[id(game)], seat)].append(view)
        return view

    # A request's view is made from the game in one pass (round 54): the engine's view it
    # shows is observe's of the game at that moment.
    real_bytes = match_mod.game_view_bytes

    def view_bytes(game: Game, seat: int, *omitted: Any, **given: Any) -> bytes:
        made[(runner_of[id(game)], seat)].append(real_observe(game, seat))
        return real_bytes(game, seat, *omitted, **given)  # (given: the game's tuples, round 58)

    monkeypatch.setattr(match_mod.MatchRunner, "run", run)
    monkeypatch.setattr(match_mod, "observe", observing)
    monkeypatch.setattr(match_mod, "game_view_bytes", view_bytes)

    async def main() -> list[_Captures]:
        referee, streams = referee_with_streams(  # (b did not ask)
            lambda referee, name, session: _Captures(referee, session, name != "b")
        )
        rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
        await asyncio.gather(
            *(referee.run_match(f"m{i}", rules, 11 + i, ["a", "b", "c"]) for i in range(3))
        )
        return streams

    streams = asyncio.run(main())
    plain = streams[1]
    assert all(v.bids_omitted == v.tricks_omitted == 0 for vs in plain.views.values() for v in vs)
    left_out = 0
    for seat, stream in enumerate(streams):
        assert sorted(stream.views) == ["m0", "m1", "m2"]
        for match_id, views in stream.views.items():
            # The engine's views the referee made for this seat, in order (its starts' and
            # requests'; the talon events' observe only the talon, not made here).
            engine_views = made[(match_id, seat)]
            assert len(engine_views) == len(views)
            previous: PlayerView | None = None
            for msg, engine_view in zip(views, engine_views, strict=True):
                got = view_from_pb(msg, engine_view.ruleset, previous)
                assert got == engine_view
                if msg.bids_omitted or msg.tricks_omitted:
                    assert previous is not None and previous.deal_number == msg.deal_number
                    assert (msg.bids_omitted, msg.tricks_omitted) == (
                        len(previous.bids), len(previous.tricks)
                    )  # fmt: skip
                    left_out += 1
                previous = got
    assert left_out > 100


class _Recorder(Bot):
    """Keeps the bids and tricks of every view it is asked with (by its name)."""

    quick = True
    seen: ClassVar[dict[str, list[tuple[Any, ...]]]] = {}

    def act(self, view: PlayerView) -> Any:
        self.seen.setdefault(view.players[view.seat], []).append((view.bids, view.tricks))
        return random.Random(len(view.bids) + 7 * len(view.tricks)).choice(view.legal_actions)


def _play_over_grpc(monkeypatch: pytest.MonkeyPatch, referee_knows: bool) -> list[tuple[int, int]]:
    """A real referee and three SDK bots over gRPC: each bot's views equal the referee's
    own (recorded as it made each request). ``referee_knows`` False: the referee behaves
    as one of round 50 (it takes no "deal_once" from any Hello). Returns the counts left
    out of each request."""
    made: dict[int, list[tuple[Any, ...]]] = {0: [], 1: [], 2: []}
    omitted: list[tuple[int, int]] = []
    real = match_mod.game_view_bytes

    def recording(game: Game, seat: int, results: int = 0, *more: Any, **given: Any) -> bytes:
        # (a request's view, made from the game: the engine's view of it is observe's)
        view = observe(game, seat)
        made[view.seat].append((view.bids, view.tricks))
        bids, tricks = (*more, 0, 0)[:2]
        omitted.append((bids, tricks))
        return real(game, seat, results, *more, **given)  # (given: the game's tuples, round 58)

    monkeypatch.setattr(match_mod, "game_view_bytes", recording)
    # A referee without "ahead" (round 53): every view a bot gets is then a request's (with
    # it, also the views the SDK foresees: tests/sdk/test_ahead_round53.py checks those).
    monkeypatch.setattr(core_mod, "FEATURES", tuple(f for f in core_mod.FEATURES if f != "ahead"))
    if not referee_knows:
        real_hello = core_mod._await_hello

        async def old_hello(*args: Any) -> pb.Hello:
            hello = await real_hello(*args)
            hello.features[:] = [f for f in hello.features if f != "deal_once"]
            return hello

        monkeypatch.setattr(core_mod, "_await_hello", old_hello)
    _Recorder.seen = {}

    play_sdk_match(_Recorder, max_deals=3)
    for seat, name in enumerate(["ann", "bob", "cid"]):
        assert _Recorder.seen[name] == made[seat]
    assert max(len(t) for _, t in made[0]) >= 5
    return omitted


def test_the_sdk_rebuilds_every_view_a_real_referee_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    omitted = _play_over_grpc(monkeypatch, referee_knows=True)
    assert sum(b > 0 for b, _ in omitted) > len(omitted) // 2
    assert sum(t > 0 for _, t in omitted) > len(omitted) // 3


def test_the_sdk_plays_a_referee_that_does_not_know_the_feature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK asks, a referee of round 50 ignores the name: whole views, the same play."""
    omitted = _play_over_grpc(monkeypatch, referee_knows=False)
    assert omitted and all(o == (0, 0) for o in omitted)


class _Holds(_Captures):
    """Leaves the first request whose view leaves tricks out unanswered, and comes back
    on a new stream (``then``) instead, as a bot reconnecting would."""

    __slots__ = ("held", "then")

    def __init__(self, referee: Referee, session: BotSession, then: _Captures) -> None:
        super().__init__(referee, session, deal_once=True)
        self.then = then
        self.held: pb.DecisionRequest | None = None

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        r = msg.decision_request if msg.HasField("decision_request") else None
        if self.held is None and r is not None and r.view.tricks_omitted:
            self.held = pb.DecisionRequest()
            self.held.CopyFrom(r)
            asyncio.get_running_loop().call_soon(self.session.attach, self.then)
            return
        if self.held is None:
            super().put(msg)


@pytest.mark.parametrize("asks_again", [True, False])
def test_a_request_sent_again_on_a_new_stream_is_whole(asks_again: bool) -> None:
    """The pending request, sent again after a reconnection, had its bids and tricks left
    out for the old stream: it goes whole (the new stream's bot may be another process, or
    an older SDK), and the new stream leaves out only what it was sent."""

    async def main() -> tuple[_Holds, _Captures]:
        def stream(referee: Referee, name: str, session: BotSession) -> _Captures:
            if name == "a":  # (its stream held, then this new one said Hello)
                later = _Captures(referee, session, deal_once=asks_again)
                return _Holds(referee, session, later)
            return _Captures(referee, session, deal_once=True)

        referee, streams = referee_with_streams(stream)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=3)
        await referee.run_match("m1", rules, 5, ["a", "b", "c"])
        first = streams[0]
        assert isinstance(first, _Holds)
        return first, first.then

    first, later = asyncio.run(main())
    held = first.held
    assert held is not None and held.view.tricks_omitted > 0
    views = later.views["m1"]
    # The new stream's MatchStarted (resumed), then the request again, whole.
    again = views[1]
    assert again.bids_omitted == again.tricks_omitted == 0
    assert len(again.tricks) == held.view.tricks_omitted + len(held.view.tricks)
    assert list(again.tricks[held.view.tricks_omitted :]) == list(held.view.tricks)
    if asks_again:
        assert any(v.tricks_omitted for v in views[2:])
    else:
        assert all(v.bids_omitted == v.tricks_omitted == 0 for v in views)
    previous: PlayerView | None = None
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=3)
    for v in views:
        previous = view_from_pb(v, ruleset, previous)  # each rebuilt from the one before


def test_the_benchs_sample_requests_leave_out_the_deals_bids_and_tricks_sent_before() -> None:
    """The bare baseline's messages are the size of those the SDK's bots get: its sampled
    requests leave out the bids and tricks of the seat's last view of the deal."""
    from arena.bench.grpc_baseline import SAMPLE_MAX_DEALS, SAMPLE_PRESET, _sample_match

    requests: list[Any] = []
    _sample_match(SAMPLE_PRESET, SAMPLE_MAX_DEALS, 1, requests, [])
    held: dict[int, tuple[int, int, int]] = {}
    left_out = 0
    for m in requests:
        v = m.decision_request.view
        deal, bids, tricks = held.get(v.seat, (-1, 0, 0))
        if deal != v.deal_number:
            bids = tricks = 0
        assert (v.bids_omitted, v.tricks_omitted) == (bids, tricks)
        held[v.seat] = (v.deal_number, bids + len(v.bids), tricks + len(v.tricks))
        left_out += tricks > 0
    assert left_out > len(requests) // 4
