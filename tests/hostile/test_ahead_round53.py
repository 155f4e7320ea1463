"""Round 53 hostile: ``Decision.ahead`` (the "ahead" feature) over a real gRPC referee,
from raw clients (no SDK). Each misuse must be handled as the proto says: an ahead action
that is illegal, malformed, with ``failed`` set, sent twice, on a request that does not
exist, for a match the bot is not in, in a ``DecisionBatch``, or from a bot that did not
ask for the feature, costs at most the request it would have spared (no strike, no
incident of its own); the match is the very match a bot answering plainly plays."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import grpc
import pytest

from arena.protocol import action_from_pb, action_to_pb, view_from_pb
from arena.referee import Referee, RefereeConfig
from arena.referee.server import start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PlayerView, own_next_view
from engine.rules import PRESETS

NAMES = ["ann", "bob", "cid"]
RULES = dataclasses.replace(PRESETS["classic"], max_deals=2)


def _honest(view: PlayerView, chosen_pb: pb.Action) -> list[pb.Action]:
    """The first legal action on each view foreseen, as the SDK would send them."""
    out: list[pb.Action] = []
    action = action_from_pb(chosen_pb)
    while (nxt := own_next_view(view, action)) is not None and len(out) < 3:
        view, action = nxt, nxt.legal_actions[0]
        out.append(action_to_pb(action))
    return out


def _decisions(mode: str, req: pb.DecisionRequest, view: PlayerView) -> pb.BotMessage | list[Any]:
    """The messages a client in ``mode`` sends to answer ``req`` (first legal action)."""
    d = pb.Decision(request_id=req.request_id, match_id=req.match_id)
    d.action.CopyFrom(req.view.legal_actions[0])
    ahead = _honest(view, d.action)
    if mode == "illegal" and ahead:
        ahead = [action_to_pb(view.legal_actions[0])]  # the card or give just played: gone
    elif mode == "malformed" and ahead:
        ahead = [pb.Action(), *ahead]
    d.ahead.extend(ahead)
    if mode == "failed" and ahead:
        d.failed = "ValueError"
    if mode == "twice":
        return [pb.BotMessage(decision=d), pb.BotMessage(decision=d)]
    if mode == "stray":
        fake = pb.Decision()
        fake.CopyFrom(d)
        fake.request_id = "999"
        gone = pb.Decision()
        gone.CopyFrom(d)
        gone.match_id = "a-match-it-left"
        return [pb.BotMessage(decision=fake), pb.BotMessage(decision=gone),
                pb.BotMessage(decision=d)]  # fmt: skip
    if mode == "batch":
        msg = pb.BotMessage()
        msg.decisions.decisions.extend([d, d])
        return [msg]
    return [pb.BotMessage(decision=d)]


async def _client(port: int, name: str, mode: str, got: dict[str, Any]) -> None:
    features = [] if mode in ("plain", "unasked") else ["ahead"]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(
            metadata=[("authorization", f"Bearer token-{name}-0123456789")]
        )
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name=name, features=features)))
        previous: PlayerView | None = None
        got[name] = {"requests": 0, "rejected": [], "welcome": None}
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                break
            inner = list(msg.batch.messages) if msg.HasField("batch") else [msg]
            for m in inner:
                kind = m.WhichOneof("kind")
                if kind == "welcome":
                    got[name]["welcome"] = list(m.welcome.features)
                elif kind == "decision_rejected":
                    got[name]["rejected"].append(m.decision_rejected.incident)
                elif kind == "match_ended":
                    got[name]["status"] = "ended"
                    call.cancel()
                    return
                elif kind == "decision_request":
                    req = m.decision_request
                    got[name]["requests"] += 1
                    view = view_from_pb(req.view, RULES, previous)
                    previous = view
                    for out in _decisions(mode, req, view):
                        await call.write(out)


def _play(mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A match: ``ann`` in ``mode``, ``bob`` and ``cid`` answering plainly (no feature)."""

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        for n in NAMES:
            referee.add_bot(n, f"token-{n}-0123456789")
        server, port = await start_server(referee)
        got: dict[str, Any] = {}
        modes = {"ann": mode, "bob": "plain", "cid": "plain"}
        clients = [asyncio.create_task(_client(port, n, modes[n], got)) for n in NAMES]
        try:
            assert not await referee.wait_for_bots(NAMES, 30)
            rec = await referee.run_match("m1", RULES, 21, NAMES)
            await asyncio.wait_for(asyncio.gather(*clients), 30)
            return rec, got
        finally:
            for c in clients:
                c.cancel()
            await server.stop(0)

    return asyncio.run(main())


def _moves(rec: dict[str, Any]) -> list[tuple[int, str, str]]:
    return [(a["seat"], a["action"], a["by"]) for d in rec["deals"] for a in d["actions"]]


@pytest.fixture(scope="module")
def plain() -> tuple[dict[str, Any], dict[str, Any]]:
    return _play("plain")


def test_honest_answers_ahead_spare_requests_and_change_nothing_else(
    plain: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    rec, got = _play("honest")
    base, base_got = plain
    assert got["ann"]["welcome"] == ["batch", "results_once", "deal_once", "ahead"]
    assert _moves(rec) == _moves(base) and not rec["incidents"]
    assert got["ann"]["requests"] < base_got["ann"]["requests"]
    assert got["bob"]["requests"] == base_got["bob"]["requests"]


@pytest.mark.parametrize("mode", ["illegal", "malformed", "unasked"])
def test_an_ahead_that_is_not_played_costs_only_the_request(
    plain: tuple[dict[str, Any], dict[str, Any]], mode: str
) -> None:
    """Illegal where it lands, malformed before an honest one (the rest are dropped with
    it), or sent by a bot whose Hello did not ask for "ahead": asked as usual."""
    rec, got = _play(mode)
    base, base_got = plain
    assert _moves(rec) == _moves(base)
    assert not rec["incidents"] and not got["ann"]["rejected"]
    assert got["ann"]["requests"] == base_got["ann"]["requests"]


def test_an_ahead_with_failed_set_is_not_played(
    plain: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    rec, got = _play("failed")
    base, base_got = plain
    assert _moves(rec) == _moves(base)
    assert got["ann"]["requests"] == base_got["ann"]["requests"]
    assert {i["kind"] for i in rec["incidents"]} == {"bot_error"}
    assert not got["ann"]["rejected"]


@pytest.mark.parametrize("mode", ["twice", "batch", "stray"])
def test_an_ahead_in_an_answer_that_answers_nothing_is_refused_with_it(
    plain: tuple[dict[str, Any], dict[str, Any]], mode: str
) -> None:
    """Sent twice (alone or in one DecisionBatch), or naming a request that does not exist
    or a match the bot is not in: that answer is WRONG_REQUEST as always, its actions
    ahead are not played; the answer that does answer plays its own."""
    rec, got = _play(mode)
    base, base_got = plain
    assert _moves(rec) == _moves(base)
    assert got["ann"]["requests"] < base_got["ann"]["requests"]
    assert got["ann"]["rejected"] and set(got["ann"]["rejected"]) == {pb.INCIDENT_WRONG_REQUEST}
    assert {i["kind"] for i in rec["incidents"]} == {"wrong_request"}
