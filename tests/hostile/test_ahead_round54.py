"""Hostile round 54: ``Decision.ahead`` (the "ahead" feature) from new angles, over a real
gRPC referee (port 0), against a raw client ``x`` (the generated stubs only) and two honest
bots in process that always pass, so that ``x``, bidding, is the declarer of every deal and
has answers ahead to give (its second give, its contract, its lead).

- What x is asked must not tell it anything its views do not: a tournament's time limit
  reached while x decides caps the match's deals in the engine's ruleset, which no view on
  the wire carries (a view's ruleset is ``MatchStarted``'s); comparing the whole engine
  view, the referee refused x's answers ahead then and asked, telling x that this deal
  was its match's last.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from arena.protocol import action_from_pb, action_to_pb, view_from_pb
from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS, PlayerView, own_next_view
from tests.support.harness import attach_in_process, no_error_logged  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

RULES = dataclasses.replace(PRESETS["classic"], max_deals=3)
#: Long enough never to be reached on a loaded machine: nothing here is timed.
SLOW = {"decision_ms": 60_000, "time_bank_ms": 60_000}


def honest_ahead(view: PlayerView, chosen: pb.Action, most: int = 3) -> list[pb.Action]:
    """The first legal action of each view ``own_next_view`` foresees after ``chosen``."""
    out: list[pb.Action] = []
    action = action_from_pb(chosen)
    while (nxt := own_next_view(view, action)) is not None and len(out) < most:
        view, action = nxt, nxt.legal_actions[0]
        out.append(action_to_pb(action))
    return out


def first_or_bid(view: pb.PlayerView) -> pb.Action:
    """x's choice: the lowest bid while it may bid, else the first legal action."""
    return view.legal_actions[0]


def pass_always(ref: Referee) -> Callable[[str, pb.DecisionRequest], None]:
    """An in-process bot's answer: pass when it may, else the first legal action."""

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        legal = list(r.view.legal_actions)
        pick = next((a for a in legal if a.HasField("pass")), legal[0])
        ref.on_message(ref.session(bot), pb.BotMessage(decision=pb.Decision(
            request_id=r.request_id, match_id=r.match_id, action=pick)))  # fmt: skip

    return answer


@dataclasses.dataclass
class Seen:
    """What x read: each request as (deal, phase, request id), and the match's end."""

    requests: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)
    rejected: list[pb.DecisionRejected] = dataclasses.field(default_factory=list)
    ended: pb.MatchEnded | None = None


Decide = Callable[[pb.DecisionRequest, PlayerView], list[pb.BotMessage]]


def plain_ahead(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
    d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=first_or_bid(r.view))
    d.ahead.extend(honest_ahead(view, d.action))
    return [pb.BotMessage(decision=d)]


async def raw_x(port: int, seen: Seen, decide: Decide, features: tuple[str, ...] = ("ahead",),
                token: str = "tok-x") -> None:  # fmt: skip
    """x: one stream; answers each request with ``decide``'s messages; stops at the end."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", f"Bearer {token}"),))
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name="x", features=features)))
        while (msg := await call.read()) is not grpc.aio.EOF:
            for m in msg.batch.messages if msg.HasField("batch") else [msg]:
                kind = m.WhichOneof("kind")
                if kind == "decision_rejected":
                    seen.rejected.append(m.decision_rejected)
                elif kind == "match_ended":
                    seen.ended = m.match_ended
                    call.cancel()
                    return
                elif kind == "decision_request":
                    r = m.decision_request
                    seen.requests.append((r.deal_number, r.view.phase, r.request_id))
                    for out in decide(r, view_from_pb(r.view, RULES)):
                        await call.write(out)


async def _match_with_x(
    decide: Decide, *, time_limit_s: float | None = None, prepare: Any = None, **config: Any
) -> tuple[dict[str, Any], Seen, Referee]:
    ref = Referee(RefereeConfig(**{**SLOW, **config}))
    attach_in_process(ref, ("h1", "h2"), pass_always(ref))
    ref.add_bot("x", "tok-x")
    if prepare is not None:
        prepare(ref)
    server, port = await start_server(ref)
    seen = Seen()
    client = asyncio.create_task(raw_x(port, seen, decide))
    try:
        assert not await ref.wait_for_bots(["x"], 30)
        rec = await ref.run_match("m", RULES, 5, ["h1", "x", "h2"], time_limit_s=time_limit_s)
        await asyncio.wait_for(client, 30)
        return rec, seen, ref
    finally:
        client.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
            await client
        await ref.end_streams()
        await server.stop(0)


# ---------------------------------------------------------------- the time limit


def _deal0(seen: Seen) -> list[tuple[int, int, str]]:
    return [q for q in seen.requests if q[0] == 0]


def test_a_time_limit_reached_while_x_decides_does_not_show_in_what_it_is_asked() -> None:
    """x answers its first give with its second give, contract and lead ahead. In one run
    the match's time limit is reached while x decides that give (the deal is then the
    match's last); in the other it never is. x is asked the very same requests in that
    deal in both: its answers ahead are played either way."""

    def run(reach: bool) -> tuple[dict[str, Any], Seen]:
        ref_box: list[Referee] = []

        def decide(r: pb.DecisionRequest, view: PlayerView) -> list[pb.BotMessage]:
            if reach and r.view.phase == pb.PHASE_PASSING and not r.view.gives:
                runner = ref_box[0]._matches[r.match_id]
                runner._end_at = runner._loop.time()  # the limit: reached as x decides
            return plain_ahead(r, view)

        rec, seen, _ = asyncio.run(
            _match_with_x(decide, time_limit_s=3600.0, prepare=ref_box.append)
        )
        return rec, seen

    limited, seen_limited = run(reach=True)
    free, seen_free = run(reach=False)
    assert limited["time_limit_s"] == 3600.0 and limited["result"]["deals"] == 1
    assert free["result"]["deals"] == 3 and "time_limit_s" not in free
    x = free["players"].index("x")
    gives = [a for a in free["deals"][0]["actions"] if a["seat"] == x and "give" in a["action"]]
    assert len(gives) == 2 and all(a["by"] == "bot" for a in gives)  # x was the declarer
    # Its second give, contract and lead were played from its answer ahead in both runs,
    # and so it was asked nothing more in deal 0 in the run whose limit was reached.
    assert _deal0(seen_limited) == _deal0(seen_free)
    asked_phases = [phase for _, phase, _ in _deal0(seen_free)]
    assert asked_phases.count(pb.PHASE_PASSING) == 1 and pb.PHASE_CONTRACT not in asked_phases
    moves = [(a["seat"], a["action"], a["by"]) for a in limited["deals"][0]["actions"]]
    assert moves == [(a["seat"], a["action"], a["by"]) for a in free["deals"][0]["actions"]]
    assert not limited["incidents"] and not free["incidents"]
    assert not seen_limited.rejected and not seen_free.rejected
