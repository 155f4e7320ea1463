"""Hostile round 43: the code of round 42 no hostile round had attacked, ``Decision.failed``
and the stream-end verdict (``Referee.serve_stream``'s ``ended``, its settle of
``CORE_END_SETTLE_S``, ``_stream_gone``), over real gRPC.

- ``failed`` on an answer read past its deadline (a ``wrong_request``, no ``bot_error``),
  and on the answer to a request asked again after a reconnect; ``failed`` holding bytes
  that are not UTF-8 (the stream is refused with INVALID_ARGUMENT, the request is asked
  again on the next); ``failed`` of one letter under 63 combining marks (defect: kept as
  sent, it drew a tower of accents over the rows around it on the bot's web page and on
  a terminal; marks past three in a row are now written out, ``\\u0301``);
- a bot seated in two matches that answers half of its pending requests in a
  ``DecisionBatch`` (every answer saying ``failed``) and then resets, half-closes, or
  half-closes and resets within the settle, stream after stream, faster than the settle,
  beside an honest match: every match ends and replays, the incidents stay bounded, the
  referee's tasks come back to what they were;
- a bot that reads its match's end, half-closes and opens its next stream within the
  first one's settle, many times: each new stream gets the end again, none is left
  attached, and its last stream, left as the SDK leaves, is left;
- a bot that half-closes mid-match (leaving) and comes back, within the first stream's
  settle and after it: no forfeit, the match goes on with it;
- 300 streams, each half-closed after its Welcome and reset within its settle.

Round 42's review (tests/review/test_review_round42.py) covers ``failed`` of a MiB, with
escape and direction characters, empty, on an illegal answer, in a ``DecisionBatch``, on
a stray answer, and the leaderboard's formats and the web's JSON for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import (  # noqa: F401 (a fixture)
    arena,
    attach_in_process,
    get_json,
    no_error_logged,
    until,
    web_server,
)

from arena.cli import main as arena_cli
from arena.referee import core
from arena.storage import Storage
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS

pytestmark = pytest.mark.usefixtures("no_error_logged")

TWO_DEALS = dataclasses.replace(PRESETS["classic"], max_deals=2)
MD = (("authorization", "Bearer tok-x"),)
HELLO = pb.Hello(protocol_version=1)


def _flat(m: pb.ServerMessage) -> list[pb.ServerMessage]:
    return list(m.batch.messages) if m.WhichOneof("kind") == "batch" else [m]


def _others(ref: Any, names: tuple[str, ...] = ("y", "z", "a", "b", "c")) -> None:
    """``names`` play in process, each answering its first legal action at once."""

    def answer(bot: str, r: pb.DecisionRequest) -> None:
        d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                        action=r.view.legal_actions[0])  # fmt: skip
        ref.on_decision(ref.session(bot), d)

    attach_in_process(ref, names, answer)


def _replays(record_dir: Path, match_id: str) -> None:
    """``arena replay --check`` accepts the match's record file."""
    out = CliRunner().invoke(
        arena_cli, ["replay", "--check", str(record_dir / f"{match_id}.jsonl")]
    )
    assert out.exit_code == 0, out.output


async def _requests(call: Any, want: int = 1) -> list[pb.DecisionRequest]:
    """Read ``call`` until ``want`` decision requests came (or a match ended: then those
    read so far)."""
    got: list[pb.DecisionRequest] = []
    while len(got) < want:
        m = await asyncio.wait_for(call.read(), 30)
        assert m is not grpc.aio.EOF, "the stream ended"
        for one in _flat(m):
            if one.HasField("decision_request"):
                got.append(one.decision_request)
            if one.HasField("match_ended"):
                return got
    return got


def _answer(r: pb.DecisionRequest, failed: str | None = None) -> pb.Decision:
    d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=r.view.legal_actions[0])
    if failed is not None:
        d.failed = failed
    return d


# ----------------------------------------------------------------------------- Decision.failed


def test_failed_on_a_late_answer_and_on_a_request_asked_again(tmp_path: Path) -> None:
    """A late answer saying ``failed`` is a ``wrong_request`` (timed out), no ``bot_error``;
    ``failed`` holding bytes that are not UTF-8 ends the stream with INVALID_ARGUMENT (no
    error logged), and the request, asked again on the next stream, answered with
    ``failed`` set, is one ``bot_error``."""
    rec_dir = tmp_path / "rec"

    async def main() -> tuple[dict[str, Any], Any, str]:
        async with arena(tmp_path, decision_ms=300, time_bank_ms=0, reconnect_grace_s=30,
                         record_dir=rec_dir) as a:  # fmt: skip
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                await until(lambda: ref.session("x").connected, "x in")
                match = asyncio.create_task(ref.run_match("f", TWO_DEALS, 4, ["x", "y", "z"]))
                (r,) = await _requests(call)
                incidents = ref._matches["f"].incidents
                await until(lambda: any(i["kind"] == "timeout" for i in incidents),
                            "x's first request timed out")  # fmt: skip
                await call.write(pb.BotMessage(decision=_answer(r, "late\x1b[2J")))
                (r,) = await _requests(call)
                # "failed" holding two bytes that are not UTF-8 (the field is a string)
                raw = _answer(r, "OK")
                data = pb.BotMessage(decision=raw).SerializeToString().replace(b"OK", b"\xff\xfe")
                call.cancel()
                bad_call = ch.stream_stream("/arena.v1.Arena/Play")(metadata=MD)  # bytes as given
                await bad_call.write(pb.BotMessage(hello=HELLO).SerializeToString())
                await bad_call.write(data)
                with contextlib.suppress(grpc.aio.AioRpcError):  # (the status comes after them)
                    while await bad_call.read() is not grpc.aio.EOF:
                        pass
                code, details = await bad_call.code(), await bad_call.details()
                # back: the request is asked again; answered with ``failed`` set, and every
                # later one in time
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                first = True
                while not match.done():
                    rs = await _requests(call)
                    if not rs:
                        break
                    await call.write(
                        pb.BotMessage(decision=_answer(rs[0], "again" if first else None))
                    )
                    first = False
                rec = await asyncio.wait_for(match, 60)
                await call.done_writing()
            await until(lambda: not ref._attached, "x's streams gone")
            return rec, code, details

    rec, code, details = asyncio.run(main())
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    assert "could not parse the message as arena.v1.BotMessage" in details, details
    kinds = [i["kind"] for i in rec["incidents"] if i["seat"] == 0]
    errors = [i["detail"] for i in rec["incidents"] if i["kind"] == "bot_error"]
    assert rec["bot_errors"] == [1, 0, 0], rec["incidents"]
    assert errors and errors[0].startswith("the bot's decision failed (again)"), errors
    late = [i["detail"] for i in rec["incidents"] if i["kind"] == "wrong_request"]
    assert len(late) == 1 and "timed out" in late[0], late
    assert kinds.count("timeout") == 1 and "forfeit" not in kinds, kinds
    assert rec["forfeits"] == []
    _replays(rec_dir, "f")


#: A failed decision's text as a hostile client sends it: a letter under 200 combining
#: marks (an acute accent, and a circle that encloses what it follows).
TOWER = "x" + "\u0301\u20dd" * 100


def test_failed_of_combining_marks_does_not_stack_them(tmp_path: Path) -> None:
    """Defect: ``failed`` of one letter and 63 combining marks was kept as sent: the
    incident's detail drew a tower of accents over the rows around it on the bot's web
    page (``td`` of one line) and on a terminal (`arena replay`, the referee's log). A mark
    past the third in a row is now written out (``\\u0301``), as control characters are;
    a letter's own marks (up to three) stay."""
    rec_dir = tmp_path / "rec"

    async def main() -> dict[str, Any]:
        async with arena(tmp_path, decision_ms=5000, record_dir=rec_dir) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=HELLO))
                await until(lambda: ref.session("x").connected, "x in")
                match = asyncio.create_task(ref.run_match("z", TWO_DEALS, 4, ["x", "y", "z"]))
                texts = iter([TOWER, "Vi\u1ec7\u0323\u0301t", "e\u0301\u0300\u0302\u0303"])
                while rs := await _requests(call):
                    await call.write(pb.BotMessage(decision=_answer(rs[0], next(texts, None))))
                rec = await asyncio.wait_for(match, 60)
                await call.done_writing()
            return rec

    rec = asyncio.run(main())
    errors = [i["detail"] for i in rec["incidents"] if i["kind"] == "bot_error"]
    assert len(errors) == 3, errors
    shown = [e[len("the bot's decision failed (") : e.index("); its client")] for e in errors]
    assert shown[0] == "x\u0301\u20dd\u0301" + "\\u20dd\\u0301" * 29 + "\\u20dd…", shown[0]
    assert shown[1] == "Vi\u1ec7\u0323\u0301t"  # a letter's own marks stay
    assert shown[2] == "e\u0301\u0300\u0302\\u0303"
    _replays(rec_dir, "z")
    shown = CliRunner().invoke(arena_cli, ["replay", str(rec_dir / "z.jsonl")]).output
    assert "x (0): not strikes: 3 bot_errors" in shown, shown
    # the bot's web page lists the detail as recorded
    db = tmp_path / "t.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("t", name="t", fingerprint="f", total_matches=1,
                             config={"ruleset": {"name": "classic", "players": 3}},
                             bots=[("x", "r"), ("y", "r"), ("z", "r")])  # fmt: skip
        st.save_match("t", match_id="z", index=0, table=0, set_no=0, seed=4,
                      seats=rec["players"], record=rec, started_at=0.0,
                      finished_at=1.0)  # fmt: skip
    with web_server(db) as server:
        page = get_json(server.url, "/api/bots/x?tournament=t")
    listed = [i["detail"] for i in page["other_incidents"] if i["kind"] == "bot_error"]
    assert sorted(listed) == sorted(errors)


# ----------------------------------------------------------------------------- stream ends


async def _half_and_gone(call: Any, rng: random.Random, running: list[str]) -> bool:
    """One stream of ``x`` (seated in the matches of ``running``): Hello, read the requests
    pending, answer about half of them (at least one) in a ``DecisionBatch``, each saying
    ``failed``, then end the stream one of three ways: reset it, half-close it (and read
    to its end), or half-close it and reset it within the settle. Whether a request came."""
    feats = ["batch"] if rng.random() < 0.5 else []
    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, features=feats,
                                                  running=running)))  # fmt: skip
    pending: dict[str, pb.DecisionRequest] = {}
    with contextlib.suppress(TimeoutError):  # (a match waits for the other seats)
        while len(pending) < len(running):
            m = await asyncio.wait_for(call.read(), 1.0 if pending else 10)
            if m is grpc.aio.EOF:
                break
            for one in _flat(m):
                if one.HasField("decision_request"):
                    pending[one.decision_request.match_id] = one.decision_request
                if one.HasField("match_ended") and one.match_ended.match_id in running:
                    running.remove(one.match_ended.match_id)  # (an end may come again)
    if pending:
        some = rng.sample(sorted(pending), max(1, len(pending) // 2))
        batch = [_answer(pending[mid], "Half\u202e" * 20) for mid in some]
        await call.write(pb.BotMessage(decisions=pb.DecisionBatch(decisions=batch)))
    how = rng.choice(["reset", "half-close", "half-close, reset"])
    if how != "reset":
        await call.done_writing()
    if how == "half-close":
        with contextlib.suppress(grpc.aio.AioRpcError):
            while await asyncio.wait_for(call.read(), 10) is not grpc.aio.EOF:
                pass
    else:
        await asyncio.sleep(rng.random() * core.CORE_END_SETTLE_S)
        call.cancel()
    return bool(pending)


def test_resets_and_half_closes_with_batches_half_answered(tmp_path: Path) -> None:
    """``x``, seated in two matches, answers half of what is pending (``failed`` set on
    each answer), then resets, half-closes, or half-closes and resets within the settle,
    stream after stream, beside an honest match: both of x's matches are played to their
    end without a forfeit and replay, x's incidents stay within their limits (each count
    is in the record), the honest match has none, and once x stops no stream is left
    attached, no call open and the referee's tasks are what they were."""
    rec_dir = tmp_path / "rec"
    rng = random.Random(43)

    async def main() -> tuple[list[dict[str, Any]], dict[str, Any], int, int, int]:
        async with arena(tmp_path, decision_ms=4000, reconnect_grace_s=30,
                         reconnect_limit=10_000, record_dir=rec_dir) as a:  # fmt: skip
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            before = len(asyncio.all_tasks())
            honest = asyncio.create_task(ref.run_match("h", TWO_DEALS, 3, ["a", "b", "c"]))
            streams = 0
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=HELLO))
                await until(lambda: ref.session("x").connected, "x in")
                mids = ["m1", "m2"]
                matches = [asyncio.create_task(ref.run_match(m, TWO_DEALS, i, ["x", "y", "z"]))
                           for i, m in enumerate(mids)]  # fmt: skip
                call.cancel()
                running = list(mids)
                while running:
                    call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                    await _half_and_gone(call, rng, running)
                    streams += 1
                recs = [await asyncio.wait_for(m, 60) for m in matches]
            await until(lambda: not ref._attached and not ref.session("x").open_calls,
                        "x's streams gone")  # fmt: skip
            rec_h = await asyncio.wait_for(honest, 60)
            await until(lambda: len(asyncio.all_tasks()) <= before, "the tasks back")
            return recs, rec_h, streams, before, len(asyncio.all_tasks())

    recs, rec_h, streams, before, after = asyncio.run(main())
    assert streams > 10, streams
    assert after <= before
    assert rec_h["incidents"] == [] and rec_h["result"]["reason"] == "max_deals"
    for rec in recs:
        assert rec["forfeits"] == [] and rec["result"]["reason"] == "max_deals", rec["result"]
        kinds = [i["kind"] for i in rec["incidents"]]
        assert set(kinds) <= {"disconnect", "bot_error"}, kinds
        assert kinds.count("bot_error") == min(20, rec["bot_errors"][0]) > 0
        assert kinds.count("disconnect") == min(20, rec["disconnects"][0]) > 0
        errors = [i["detail"] for i in rec["incidents"] if i["kind"] == "bot_error"]
        assert all("Half\\u202e" in e for e in errors), errors
        _replays(rec_dir, rec["match_id"])


async def _to_the_end(call: Any) -> list[str]:
    """Answer ``call``'s requests with their first legal action up to a match's end (not
    past it); the ids of the ends read."""
    while True:
        m = await asyncio.wait_for(call.read(), 30)
        assert m is not grpc.aio.EOF, "the stream ended before the match did"
        ends = [one.match_ended.match_id for one in _flat(m) if one.HasField("match_ended")]
        if ends:
            return ends
        for one in _flat(m):
            if one.HasField("decision_request"):
                await call.write(pb.BotMessage(decision=_answer(one.decision_request)))


@pytest.mark.parametrize("then", ["half-close", "reset"])
def test_streams_opened_within_the_last_one_s_settle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: str
) -> None:
    """``x`` reads its match's end, half-closes, and opens its next stream (naming the
    match as running) within that stream's settle; that one, once it has the end again,
    half-closes (or resets) and the next comes within its settle, ten times; the last
    reads the end and leaves as the SDK does. Every stream gets the end, the last ends
    with OK, x is not taken as away with a result, and no stream stays attached, no call
    open, no task of the referee's left over; the honest match beside is not touched."""
    # Long enough that each next stream comes within the last one's settle, whatever
    # the machine's load (the verdict waits for it).
    monkeypatch.setattr(core, "CORE_END_SETTLE_S", 3.0)

    async def main() -> tuple[list[list[str]], Any, list[str], dict[str, Any], int, int]:
        async with arena(tmp_path, decision_ms=4000, reconnect_grace_s=30) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            before = len(asyncio.all_tasks())
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=HELLO))
                await until(lambda: ref.session("x").connected, "x in")
                match = asyncio.create_task(ref.run_match("m", TWO_DEALS, 7, ["x", "y", "z"]))
                honest = asyncio.create_task(ref.run_match("h", TWO_DEALS, 3, ["a", "b", "c"]))
                ends = [await _to_the_end(call)]
                await call.done_writing()
                settling = [call]
                for k in range(11):
                    call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1,
                                                                  running=["m"])))  # fmt: skip
                    assert (await call.read()).WhichOneof("kind") == "welcome"
                    ends.append(await _to_the_end(call))
                    assert ref._attached >= 2, "the last stream's settle was over"
                    if k < 10:
                        if then == "reset":
                            call.cancel()
                        else:
                            await call.done_writing()
                            settling.append(call)
                await call.done_writing()
                while await call.read() is not grpc.aio.EOF:
                    pass
                code = await call.code()
                for c in settling:
                    assert await c.code() == grpc.StatusCode.OK
                await until(lambda: not ref._attached and not ref.session("x").open_calls,
                            "x's streams gone")  # fmt: skip
                away = ref.away_with_results()
                rec, rec_h = await match, await asyncio.wait_for(honest, 60)
            assert rec["forfeits"] == [], rec["incidents"]
            await until(lambda: len(asyncio.all_tasks()) <= before, "the tasks back")
            return ends, code, away, rec_h, before, len(asyncio.all_tasks())

    ends, code, away, rec_h, before, after = asyncio.run(main())
    assert ends == [["m"]] * 12
    assert code == grpc.StatusCode.OK
    assert away == []
    assert rec_h["incidents"] == [] and rec_h["result"]["reason"] == "max_deals"
    assert after <= before


def test_a_bot_that_half_closes_mid_match_and_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``x`` half-closes mid-match (it leaves: a disconnect, its grace starts) and comes
    back, once within that stream's settle and once after it: it is asked again, plays
    the match to its end without a forfeit, and the record replays."""
    monkeypatch.setattr(core, "CORE_END_SETTLE_S", 3.0)
    rec_dir = tmp_path / "rec"

    async def main() -> tuple[dict[str, Any], list[int]]:
        async with arena(tmp_path, decision_ms=4000, reconnect_grace_s=30,
                         record_dir=rec_dir) as a:  # fmt: skip
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            attached: list[int] = []
            async with grpc.aio.insecure_channel(a.target) as ch:
                call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                await call.write(pb.BotMessage(hello=HELLO))
                await until(lambda: ref.session("x").connected, "x in")
                match = asyncio.create_task(ref.run_match("b", TWO_DEALS, 9, ["x", "y", "z"]))
                for within in (True, False):
                    await _requests(call)  # a request pending, not answered
                    await call.done_writing()
                    await until(lambda: not ref.session("x").connected, "x left")
                    if not within:
                        while await call.read() is not grpc.aio.EOF:
                            pass
                        await until(lambda: not ref._attached, "the settle over")
                    attached.append(ref._attached)
                    call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1,
                                                                  running=["b"])))  # fmt: skip
                assert await _to_the_end(call) == ["b"]
                await call.done_writing()
                rec = await asyncio.wait_for(match, 60)
            return rec, attached

    rec, attached = asyncio.run(main())
    assert attached == [1, 0]
    assert rec["forfeits"] == [] and rec["result"]["reason"] == "max_deals"
    assert [i["kind"] for i in rec["incidents"]] == ["disconnect", "disconnect"]
    _replays(rec_dir, "b")


def test_half_close_and_reset_in_a_loop_faster_than_the_settle(tmp_path: Path) -> None:
    """``x`` opens 300 streams one after another, each half-closed after its Welcome and
    reset a few ms later (within its settle): the calls open at once stay within
    ``MAX_OPEN_STREAMS_PER_BOT`` (the rest are refused, RESOURCE_EXHAUSTED), the honest
    match beside ends with no incident, and once x stops no stream is left attached, no
    call open, and the referee's tasks are what they were."""

    async def main() -> tuple[int, int, dict[str, Any], int, int, Any]:
        async with arena(tmp_path, decision_ms=4000, reconnect_limit=10_000) as a:
            ref = a.referee
            ref.add_bot("x", "tok-x")
            _others(ref)
            before = len(asyncio.all_tasks())
            honest = asyncio.create_task(ref.run_match("h", TWO_DEALS, 3, ["a", "b", "c"]))
            session = ref.session("x")
            most = welcomed = 0
            async with grpc.aio.insecure_channel(a.target) as ch:
                for _ in range(300):
                    call = pb_grpc.ArenaStub(ch).Play(metadata=MD)
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await call.write(pb.BotMessage(hello=HELLO))
                        welcomed += (await call.read()).WhichOneof("kind") == "welcome"
                        await call.done_writing()
                        await asyncio.sleep(0.002)
                    call.cancel()
                    most = max(most, session.open_calls)
                await until(lambda: not ref._attached and not session.open_calls,
                            "x's streams gone")  # fmt: skip
            rec_h = await asyncio.wait_for(honest, 60)
            await until(lambda: len(asyncio.all_tasks()) <= before, "the tasks back")
            left = (session.ends, session.events, session.seats, session.stream)
            return most, welcomed, rec_h, before, len(asyncio.all_tasks()), left

    most, welcomed, rec_h, before, after, left = asyncio.run(main())
    assert 0 < most <= core.MAX_OPEN_STREAMS_PER_BOT
    assert welcomed > 100, welcomed
    assert rec_h["incidents"] == [] and rec_h["result"]["reason"] == "max_deals"
    assert after <= before
    assert left == ({}, [], {}, None)
