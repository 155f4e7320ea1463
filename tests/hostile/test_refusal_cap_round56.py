"""Hostile round 56: a client past the cap of refusals answered and recorded one by one.

docs/protocol.md ("Floods") and docs/referee.md: per seat and match, only the first
``max_wrong_recorded`` (20) answers to no pending request are recorded and answered one by
one; the record's ``wrong_requests`` counts them all, and ``arena replay`` shows that
count. Round 55's machine never passed the cap; round 56's reaches it at random. Here,
exactly: raw client x sits in two matches at once (with in-process honest bots) while a
third match plays next door. It sends 50 answers naming requests never sent for its first
match in one ``DecisionBatch``, then 5 for its second, then answers its requests: it reads
exactly the first 20 refusals of the first match, in order, and all 5 of the second; its
answers to its pending requests are played as its own all the while; both records list 20
and 5 ``wrong_request`` incidents and count 50 and 5; the match next door has no incident.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.render import incident_summary
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.hostile.test_ahead_round54 import pass_always
from tests.support.harness import attach_in_process, no_error_logged, welcomed_call  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)
CAP = 20  # RefereeConfig().max_wrong_recorded


def _unsent(mid: str, n: int) -> pb.BotMessage:
    """A batch of ``n`` answers naming requests of ``mid`` never sent (ids 1000...)."""
    msg = pb.BotMessage()
    for k in range(n):
        d = msg.decisions.decisions.add(request_id=str(1000 + k), match_id=mid)
        getattr(d.action, "pass").SetInParent()
    return msg


def test_wrong_answers_past_the_cap_are_counted_and_the_rest_goes_on(tmp_path: Path) -> None:
    assert RefereeConfig().max_wrong_recorded == CAP

    async def main() -> tuple[dict[str, dict[str, Any]], list[pb.DecisionRejected], int]:
        # (a minute a decision: x's requests never time out here, whatever the machine)
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, record_dir=tmp_path))
        attach_in_process(ref, ("h1", "h2", "h3", "h4", "n1", "n2", "n3"), pass_always(ref))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        refused: list[pb.DecisionRejected] = []
        played = 0
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                call = await welcomed_call(ch, "tok-x", "x")
                games = asyncio.gather(
                    ref.run_match("a", ONE_DEAL, 5, ["x", "h1", "h2"]),
                    ref.run_match("b", ONE_DEAL, 6, ["h3", "x", "h4"]),
                    ref.run_match("n", ONE_DEAL, 7, ["n1", "n2", "n3"]),
                )
                ended: set[str] = set()
                sent = False
                while ended != {"a", "b"}:
                    m = await asyncio.wait_for(call.read(), 60)
                    for inner in m.batch.messages if m.HasField("batch") else [m]:
                        kind = inner.WhichOneof("kind")
                        if kind == "match_ended":
                            ended.add(inner.match_ended.match_id)
                        elif kind == "decision_rejected":
                            refused.append(inner.decision_rejected)
                        elif kind == "decision_request":
                            r = inner.decision_request
                            if not sent:  # (both matches started: x sits in each)
                                sent = True
                                await call.write(_unsent("a", 50))
                                await call.write(_unsent("b", 5))
                            played += 1
                            await call.write(pb.BotMessage(decision=pb.Decision(
                                request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])))  # fmt: skip
                a, b, n = await games
                call.cancel()
        finally:
            await ref.end_streams()
            await server.stop(1.0)
        return {"a": a, "b": b, "n": n}, refused, played

    recs, refused, played = asyncio.run(main())
    assert played > 0
    # the refusals x read: the first 20 of match a, in order, and the 5 of match b
    ids = {mid: [r.request_id for r in refused if r.match_id == mid] for mid in "ab"}
    assert ids["a"] == [str(1000 + k) for k in range(CAP)], ids["a"]
    assert ids["b"] == [str(1000 + k) for k in range(5)], ids["b"]
    assert all(r.incident == pb.INCIDENT_WRONG_REQUEST and "has not been sent to this seat"
               in r.message for r in refused), refused  # fmt: skip
    for mid, seat, total in (("a", 0, 50), ("b", 1, 5)):
        rec = recs[mid]
        listed = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
        assert [i["seat"] for i in listed] == [seat] * min(total, CAP), listed
        assert rec["wrong_requests"][seat] == total, rec["wrong_requests"]
        assert {i["kind"] for i in rec["incidents"]} == {"wrong_request"}, rec["incidents"]
        # every action of x its bot's: the answers after the burst were played
        mine = [a for d in rec["deals"] for a in d["actions"] if a["seat"] == seat]
        assert mine and all(a["by"] in ("bot", "forced") for a in mine), mine
        # `arena replay` (and the web) say the whole count, not the 20 listed
        summary = incident_summary(rec, rec["players"])
        assert summary == [f"x ({seat}): not strikes: {total} wrong_requests"], summary
    assert recs["n"]["incidents"] == [] and recs["n"]["wrong_requests"] == [0, 0, 0]
