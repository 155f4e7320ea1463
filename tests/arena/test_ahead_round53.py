"""Round 53 (performance): the "ahead" feature. A bot whose Hello lists "ahead" may send,
with an answer, its answers to its next decisions (``Decision.ahead``), chosen on the views
``own_next_view`` foresees; the referee plays them without a round trip when its own
foresight of that view equals the view it would send and the action is legal, and asks as
usual otherwise, with no strike and no incident (the proto's ``Decision.ahead``).

In-process: the real ``Referee`` and ``MatchRunner`` against streams whose bot answers at
once with a fixed policy (the first legal action), so that a match played with answers
ahead must be the very match played without them, fewer requests apart."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from arena.bench.referee_logic import _AnswerAtOnce
from arena.protocol import action_to_pb, view_from_pb
from arena.referee import Referee, RefereeConfig
from arena.referee import match as match_mod
from arena.referee.sessions import BotSession
from arena.v1 import arena_pb2 as pb
from engine import Action, PlayerView, own_next_view, replay
from engine.actions import Bid, Play
from engine.cards import Card
from engine.rules import PRESETS
from tests.support.harness import as_message
from tests.support.streams import referee_with_streams

#: Given the view answered and the action chosen: the actions ahead to send with it.
Ahead = Callable[[PlayerView, Action], list[pb.Action]]


def honest(view: PlayerView, action: Action) -> list[pb.Action]:
    """What the SDK sends: the policy's answers on the views foreseen, while there are."""
    out: list[pb.Action] = []
    while (view_next := own_next_view(view, action)) is not None and len(out) < 3:
        view, action = view_next, view_next.legal_actions[0]
        out.append(action_to_pb(action))
    return out


class _Bot(_AnswerAtOnce):
    """Answers each request at once with its first legal action, and what ``ahead`` says
    with it; ``mangle`` may change the decision before it is sent. Counts the requests."""

    __slots__ = ("ahead_of", "ids", "mangle", "previous", "requests")

    def __init__(
        self,
        referee: Referee,
        session: BotSession,
        ahead: Ahead | None,
        mangle: Callable[[pb.Decision], list[pb.Decision]] | None = None,
    ) -> None:
        super().__init__(referee, session)
        self.ahead = ahead is not None
        self.ahead_of = ahead
        self.mangle = mangle
        self.requests = 0
        self.ids: list[int] = []
        self.previous: dict[str, PlayerView] = {}

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        if not msg.HasField("decision_request"):
            return
        r = msg.decision_request
        self.requests += 1
        self.ids.append(int(r.request_id))
        ruleset = PRESETS["classic"]
        view = view_from_pb(r.view, ruleset, self.previous.get(r.match_id))
        self.previous[r.match_id] = view
        action = view.legal_actions[0]
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=action_to_pb(action))
        if self.ahead_of is not None:
            d.ahead.extend(self.ahead_of(view, action))
        sent = self.mangle(d) if self.mangle is not None else [d]
        loop = asyncio.get_running_loop()
        for one in sent:
            loop.call_soon(self.referee.on_decision, self.session, one)


def _play(
    ahead: Ahead | None,
    *,
    seed: int = 5,
    deals: int = 4,
    feature: bool = True,
    mangle: Callable[[pb.Decision], list[pb.Decision]] | None = None,
    config: RefereeConfig | None = None,
) -> tuple[dict[str, Any], list[_Bot], Referee]:
    async def main() -> tuple[dict[str, Any], list[_Bot], Referee]:
        def bot(referee: Referee, _name: str, session: BotSession) -> _Bot:
            made = _Bot(referee, session, ahead, mangle)
            made.ahead = feature  # (as its Hello said: set before it is attached)
            return made

        referee, bots = referee_with_streams(bot, config)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=deals)
        rec = await referee.run_match("m1", rules, seed, ["a", "b", "c"])
        return rec, bots, referee

    return asyncio.run(main())


def _moves(rec: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(a["seat"], a["action"], a["by"]) for d in rec["deals"] for a in d["actions"]]


def _requests(bots: list[_Bot]) -> int:
    return sum(b.requests for b in bots)


@pytest.fixture(scope="module")
def plain() -> tuple[dict[str, Any], int]:
    rec, bots, _ = _play(None)
    return rec, _requests(bots)


def test_answers_ahead_play_the_same_match_with_fewer_requests(
    plain: tuple[dict[str, Any], int],
) -> None:
    base, base_requests = plain
    rec, bots, _ = _play(honest)
    assert _moves(rec) == _moves(base)
    assert rec["result"] == base["result"] and not rec["incidents"]
    decided = sum(1 for m in _moves(rec) if m[2] == "bot")
    assert base_requests == decided  # without: one request per decision of the bots
    saved = base_requests - _requests(bots)
    # The declarer's second give, contract and lead in every deal (3 a deal, none
    # forced in these deals), and leads after taking a trick.
    assert saved >= 3 * len(rec["deals"]), (saved, len(rec["deals"]))
    replay(rec)  # the record replays (what `arena replay --check` does first)


def test_an_answer_ahead_uses_no_request_id() -> None:
    """Request ids count the requests sent to a seat, one by one: none is skipped for a
    decision played ahead (a gap would tell a seat nothing, but the ids say requests)."""
    _, bots, _ = _play(honest)
    assert all(b.ids == list(range(1, len(b.ids) + 1)) for b in bots)


def test_a_bot_that_did_not_ask_for_the_feature_is_always_asked(
    plain: tuple[dict[str, Any], int],
) -> None:
    base, base_requests = plain
    rec, bots, _ = _play(honest, feature=False)
    assert _moves(rec) == _moves(base) and not rec["incidents"]
    assert _requests(bots) == base_requests


def _junk(action: pb.Action) -> Ahead:
    def ahead(view: PlayerView, chosen: Action) -> list[pb.Action]:
        return [action] if own_next_view(view, chosen) is not None else []

    return ahead


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(action_to_pb(Bid(300)), id="illegal"),
        pytest.param(pb.Action(), id="malformed"),
        pytest.param(action_to_pb(Play(card=Card.S9, declare=True)), id="illegal-play"),
    ],
)
def test_an_ahead_action_that_is_not_legal_costs_only_the_request(
    plain: tuple[dict[str, Any], int], bad: pb.Action
) -> None:
    base, base_requests = plain
    rec, bots, _ = _play(_junk(bad))
    assert _moves(rec) == _moves(base)
    assert not rec["incidents"] and all(s == 0 for s in rec.get("strikes", [0, 0, 0]))
    assert _requests(bots) == base_requests


def test_an_ahead_action_after_a_decision_that_foresees_nothing_is_not_played(
    plain: tuple[dict[str, Any], int],
) -> None:
    """Sent with every answer, legal or not where it lands: played only where the referee
    foresees the seat's next view itself."""
    base, base_requests = plain

    def always(view: PlayerView, chosen: Action) -> list[pb.Action]:
        return [action_to_pb(view.legal_actions[0])]

    rec, bots, _ = _play(always)
    assert not rec["incidents"]
    # The action the seat just played, sent again as its next: never legal there.
    assert _moves(rec) == _moves(base)
    assert _requests(bots) == base_requests


def test_a_foresight_that_differs_from_the_view_to_send_is_not_played(
    monkeypatch: pytest.MonkeyPatch, plain: tuple[dict[str, Any], int]
) -> None:
    base, base_requests = plain
    real = match_mod.own_next_view

    def off(view: PlayerView, action: Action) -> PlayerView | None:
        v = real(view, action)
        return None if v is None else dataclasses.replace(v, scores=(1, 2, 3))

    monkeypatch.setattr(match_mod, "own_next_view", off)
    rec, bots, _ = _play(honest)
    assert _moves(rec) == _moves(base) and not rec["incidents"]
    assert _requests(bots) == base_requests


def test_an_ahead_with_failed_set_is_not_played(plain: tuple[dict[str, Any], int]) -> None:
    base, base_requests = plain

    def failed(d: pb.Decision) -> list[pb.Decision]:
        if d.ahead:
            d.failed = "ValueError"
        return [d]

    rec, bots, _ = _play(honest, mangle=failed)
    assert _moves(rec) == _moves(base)
    assert _requests(bots) == base_requests
    assert {i["kind"] for i in rec["incidents"]} == {"bot_error"}


def test_an_answer_sent_twice_plays_its_ahead_once(plain: tuple[dict[str, Any], int]) -> None:
    base, _ = plain

    def twice(d: pb.Decision) -> list[pb.Decision]:
        return [d, d]

    rec, bots, _ = _play(honest, mangle=twice)
    assert _moves(rec) == _moves(base)
    assert {i["kind"] for i in rec["incidents"]} <= {"wrong_request"}
    assert _requests(bots) < sum(1 for m in _moves(rec) if m[2] == "bot")


def test_an_ahead_on_a_request_that_does_not_exist_is_refused_as_before(
    plain: tuple[dict[str, Any], int],
) -> None:
    """A made-up request id (and one of a match the bot has no seat in) with actions ahead:
    WRONG_REQUEST as any such answer; nothing of it is played."""
    base, base_requests = plain
    sent: list[pb.ServerMessage] = []

    def stray(d: pb.Decision) -> list[pb.Decision]:
        fake = pb.Decision()
        fake.CopyFrom(d)
        fake.request_id = "999"
        other = pb.Decision()
        other.CopyFrom(d)
        other.match_id = "left-long-ago"
        plain_answer = pb.Decision()
        plain_answer.CopyFrom(d)
        del plain_answer.ahead[:]
        return [fake, other, plain_answer]

    real_put = _Bot.put

    def put(self: _Bot, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        if msg.HasField("decision_rejected"):
            sent.append(msg)
        real_put(self, msg)

    try:
        _Bot.put = put  # type: ignore[method-assign]
        rec, bots, _ = _play(honest, mangle=stray)
    finally:
        _Bot.put = real_put  # type: ignore[method-assign]
    assert _moves(rec) == _moves(base)
    assert _requests(bots) == base_requests
    assert sent and all(m.decision_rejected.incident == pb.INCIDENT_WRONG_REQUEST for m in sent)
    assert {i["kind"] for i in rec["incidents"]} == {"wrong_request"}


def test_ahead_in_a_decision_batch_is_handled_as_alone(plain: tuple[dict[str, Any], int]) -> None:
    base, base_requests = plain

    class _Batched(_Bot):
        def put(self, msg: pb.ServerMessage | bytes) -> None:
            msg = as_message(msg)  # (a request comes as its wire bytes)
            if not msg.HasField("decision_request"):
                return
            self.requests += 1
            r = msg.decision_request
            view = view_from_pb(r.view, PRESETS["classic"], self.previous.get(r.match_id))
            self.previous[r.match_id] = view
            action = view.legal_actions[0]
            d = pb.Decision(
                request_id=r.request_id, match_id=r.match_id, action=action_to_pb(action)
            )
            d.ahead.extend(honest(view, action))
            batch = pb.BotMessage()
            batch.decisions.decisions.append(d)
            asyncio.get_running_loop().call_soon(self.referee.on_message, self.session, batch)

    real = _Bot.put
    try:
        _Bot.put = _Batched.put  # type: ignore[method-assign]
        rec, bots, _ = _play(honest)
    finally:
        _Bot.put = real  # type: ignore[method-assign]
    assert _moves(rec) == _moves(base) and not rec["incidents"]
    assert _requests(bots) < base_requests
