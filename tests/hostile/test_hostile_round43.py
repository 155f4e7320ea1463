"""Hostile round 43: the code of round 42 no hostile round had attacked, ``Decision.failed``
and the stream-end verdict (``Referee.serve_stream``'s ``ended``, its settle of
``CORE_END_SETTLE_S``, ``_stream_gone``), over real gRPC.

- ``failed`` on an answer read past its deadline, and on answers to a request asked again
  after a reconnect; ``failed`` holding bytes that are not UTF-8 (the stream is refused
  with INVALID_ARGUMENT, the request is asked again on the next); ``failed`` of combining
  marks (a 64-character tower over the organiser's web page and terminal);
- a bot seated in two matches that answers half of its pending requests in a
  ``DecisionBatch`` (every answer saying ``failed``) and then resets, half-closes, or
  half-closes and resets within the settle, stream after stream, faster than the settle,
  beside an honest match: every match ends and replays, the incidents stay bounded, the
  referee's tasks come back to what they were;
- a bot that reads its match's end, half-closes and opens its next stream within the
  first one's settle, many times: each new stream gets the end again, none is left
  attached, and its last stream, left as the SDK leaves, is left;
- a bot that half-closes mid-match (leaving) and comes back, within the first stream's
  settle and after it: no forfeit, the match goes on with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import arena, attach_in_process, no_error_logged, until  # noqa: F401 (a fixture)

from arena.cli import main as arena_cli
from arena.referee import core
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
                await until(lambda: any(i["kind"] == "timeout" for i in ref._matches["f"].incidents),
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
