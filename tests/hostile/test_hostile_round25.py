"""Hostile round 25: raw gRPC clients (the generated stubs, no SDK) against a referee on a
free port."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, attach_in_process, no_error_logged  # noqa: F401 (a fixture)

from arena.cli import main as cli_main
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.support.core_internal import asking_again, core_internal

pytestmark = pytest.mark.usefixtures("no_error_logged")

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


def _md(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _flat(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]


def test_a_refused_answer_says_which_request_it_named(tmp_path: Path) -> None:
    """Defect: every answer to a request that was not pending, other than a timed-out one,
    was refused "the request is unknown, stale or not yours": a duplicate answer (the first
    one counted), an id the bot made up ('01', 'abc') and one not asked yet alike, and "not
    yours" never applies (ids count the requests of the answering seat). The referee knows
    which: the refusal says so, here and in the record, which still replays."""

    async def main() -> tuple[list[str], dict[str, Any], pb.MatchResult]:
        async with arena(tmp_path, decision_ms=10_000, time_bank_ms=0) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")

            def answer(bot: str, r: pb.DecisionRequest) -> None:
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                ref.on_decision(ref.session(bot), d)

            attach_in_process(ref, ("y", "z"), answer)
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=_md("tok-x"))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                assert (await call.read()).WhichOneof("kind") == "welcome"
                match = asyncio.create_task(ref.run_match("m", ONE_DEAL, 5, ["x", "y", "z"]))
                refused, ended = await _answer_with_wrong_ids_first(call)
                return refused, await match, ended

    refused, rec, ended = asyncio.run(main())
    assert refused == [
        "decision 'bid 110' for request '2' refused: request '2' has not been sent to this seat "
        "(the pending request is '1'); legal now: bid 110, bid 115, bid 120, pass",
        "decision 'bid 110' for request '01' refused: '01' is no request id: they count the "
        "seat's requests, '1', '2', ... (the pending request is '1'); legal now: bid 110, "
        "bid 115, bid 120, pass",
        "decision 'bid 110' for request 'abc' refused: 'abc' is no request id: they count the "
        "seat's requests, '1', '2', ... (the pending request is '1'); legal now: bid 110, "
        "bid 115, bid 120, pass",
        "decision 'bid 110' for request '1' refused: request '1' was answered already (no "
        "decision of yours is pending); legal now: nothing (no request of yours pending)",
    ], refused
    details = [i["detail"] for i in rec["incidents"] if i["kind"] == "wrong_request"]
    assert details == refused
    assert list(ended.places) == rec["result"]["places"]
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"type": "end", "record": rec}) + "\n")
    result = CliRunner().invoke(cli_main, ["replay", "--check", str(path)])
    assert result.exit_code == 0, result.output


async def _answer_with_wrong_ids_first(call: Any) -> tuple[list[str], pb.MatchResult]:
    """Answer the first request with three wrong ids (the next request's, '01', 'abc'),
    then rightly twice in one batch (nothing is asked between the two); every later one
    rightly. The refusals' messages and the match's result."""
    refused: list[str] = []
    first = True
    while True:
        for m in _flat(await call.read()):
            kind = m.WhichOneof("kind")
            if kind == "decision_rejected":
                refused.append(m.decision_rejected.message)
            elif kind == "match_ended":
                await call.done_writing()
                return refused, m.match_ended.result
            elif kind == "decision_request":
                r = m.decision_request
                good = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                   action=r.view.legal_actions[0])  # fmt: skip
                if first:
                    for rid in (str(int(r.request_id) + 1), "01", "abc"):
                        wrong = pb.Decision(request_id=rid, match_id=r.match_id,
                                            action=good.action)  # fmt: skip
                        await call.write(pb.BotMessage(decision=wrong))
                    twice = pb.DecisionBatch(decisions=[good, good])
                    await call.write(pb.BotMessage(decisions=twice))
                    first = False
                else:
                    await call.write(pb.BotMessage(decision=good))


def test_an_answer_of_a_seat_that_forfeited_is_told_so_alone() -> None:
    """With the refusal above: a seat that has forfeited is asked nothing more, whatever id
    its answer names; the refusal says that alone (it said "the request is unknown, stale
    or not yours (the seat has forfeited)")."""
    from arena.referee.match import SeatState, _not_pending

    st = SeatState.__new__(SeatState)  # the fields _not_pending reads
    st.forfeited, st.requests, st.timed_out = True, 4, ("3",)
    for rid in ("3", "4", "5", "abc"):
        assert _not_pending(st, None, rid) == "the seat has forfeited: it is asked nothing more"


def test_metadata_past_grpcs_hard_limit_is_refused_by_grpc_and_the_bot_still_gets_in(
    tmp_path: Path,
) -> None:
    """Holds (checked, as docs/protocol.md says): a Play call whose metadata is over 16 KiB
    (a token of 16,000 characters, or the right token beside a padding header) is refused
    by gRPC before the referee sees it, RESOURCE_EXHAUSTED naming the hard limit; nothing
    is logged, and the bot's next call with its token alone is welcomed."""

    async def main() -> tuple[list[str], str | None]:
        async with arena(tmp_path) as a:
            a.referee.add_bot("x", "tok-x")
            got: list[str] = []
            async with grpc.aio.insecure_channel(a.target) as ch:
                stub = pb_grpc.ArenaStub(ch)

                async def refused(md: Any) -> tuple[str, str] | None:
                    call = stub.Play(metadata=md)
                    try:
                        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                        await call.read()
                    except grpc.aio.AioRpcError as e:
                        return e.code().name, e.details() or ""
                    return None

                for md in (
                    (("authorization", "Bearer " + "t" * 16_000),),
                    (*_md("tok-x"), ("x-pad", "p" * 17_000)),
                ):
                    # (gRPC core's INTERNAL, the Hello's write racing the refusal: again)
                    status = await asking_again(
                        functools.partial(refused, md),
                        lambda r: r is not None and core_internal(*r, answered=False),
                    )
                    if status is not None:
                        got.append(": ".join(status))
                call = stub.Play(metadata=_md("tok-x"))
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                then = (await call.read()).WhichOneof("kind")
                call.cancel()
            return got, then

    got, then = asyncio.run(main())
    assert len(got) == 2, got
    for status in got:
        assert status.startswith("RESOURCE_EXHAUSTED: received metadata size exceeds hard limit")
    assert then == "welcome"
