"""Hostile round 51: an answer that comes in many tiny HTTP/2 frames, fast or slowly.

A hand-made HTTP/2 client (``tests/support/raw_h2.py``: no generated stub could split a
message so) plays seat x of a 1001 match of one deal beside two honest in-process bots, while
another match of three honest bots runs on the same referee. It writes its first answer
one byte a DATA frame (the gRPC length prefix too):

- back to back: the referee's gRPC core puts the message together, and the answer is
  taken as any other (no incident);
- slowly, a byte every 10 ms, its last byte held until the referee has said that the
  request timed out (its limit, 1 s, no bank): the seat times out at its deadline (the
  clock runs on the referee's side, and bytes of an answer still on their way do not hold
  it), the fallback is played, and the answer, once whole, is refused as
  ``WRONG_REQUEST`` (stale), as docs/protocol.md says of an answer read after limit + bank.

Then it answers every request at once to the match's end. Checked: both matches end and
their records replay; x's seat has that one timeout and that one wrong request and no other
incident, the honest seats none; the other match was not held up (it ends with no
incident); and no message x got holds a card its seat may not see.
"""

from __future__ import annotations

import asyncio
import dataclasses
import struct
import time
from typing import Any

import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.hostile.test_hostile_audit import Client, _audit
from tests.hostile.test_hostile_round34 import _replays
from tests.support.harness import attach_in_process, no_error_logged, until  # noqa: F401
from tests.support.raw_h2 import DATA, RawH2, frame, grpc_message

pytestmark = pytest.mark.usefixtures("no_error_logged")

SHORT = dataclasses.replace(PRESETS["1001"], max_deals=1)
WINDOW_UPDATE = 0x8


def _first_legal(r: pb.DecisionRequest) -> pb.Decision:
    return pb.Decision(request_id=r.request_id, match_id=r.match_id, action=r.view.legal_actions[0])


class Dribbler(RawH2):
    """Seat x on one ``Play`` call of a raw HTTP/2 connection: every message it got, and
    those it sent."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        # A window as large as HTTP/2 allows: what the referee sends never waits on it.
        self.sock.sendall(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 2**31 - 1 - 65535)))
        hello = pb.BotMessage(hello=pb.Hello(bot_name="x", protocol_version=1))
        self.sid = self.call("/arena.v1.Arena/Play", data=grpc_message(hello.SerializeToString()),
                             end=False, extra=((b"authorization", b"Bearer tok-x"),))  # fmt: skip
        self.sock.sendall(frame(WINDOW_UPDATE, 0, self.sid, struct.pack(">I", 2**30)))
        self.client = Client(call=None, sent=[hello])
        self._data = b""

    def pump(self, seconds: float) -> list[pb.ServerMessage]:
        """Read for up to ``seconds``: the messages that came whole meanwhile."""
        new: list[pb.ServerMessage] = []
        for f in self.frames(seconds):
            if f.kind == DATA and f.stream == self.sid:
                self._data += f.payload
        while len(self._data) >= 5:
            size = int.from_bytes(self._data[1:5], "big")
            if len(self._data) < 5 + size:
                break
            new.append(pb.ServerMessage.FromString(self._data[5 : 5 + size]))
            self._data = self._data[5 + size :]
        self.client.got.extend(new)
        return new

    def answer(self, r: pb.DecisionRequest, *, gap_s: float | None = None,
               hold_last: bool = False) -> None:  # fmt: skip
        """Answer ``r`` with its first legal action: in one DATA frame (``gap_s`` None), or
        one byte a frame, ``gap_s`` apart (reading meanwhile); ``hold_last``: the last
        byte once the referee said that ``r`` timed out."""
        msg = pb.BotMessage(decision=_first_legal(r))
        self.client.sent.append(msg)
        raw = grpc_message(msg.SerializeToString())
        if gap_s is None:
            self.sock.sendall(frame(DATA, 0, self.sid, raw))
            return
        for i in range(len(raw)):
            if hold_last and i == len(raw) - 1:
                deadline = time.monotonic() + 30
                while not any(m.decision_rejected.request_id == r.request_id
                              and m.decision_rejected.incident == pb.INCIDENT_TIMEOUT
                              for m in self.client.got):  # fmt: skip
                    assert time.monotonic() < deadline, "no TIMEOUT within 30 s"
                    self.pump(0.05)
            self.sock.sendall(frame(DATA, 0, self.sid, raw[i : i + 1]))
            if gap_s:
                self.pump(gap_s)


def _play_x(port: int, gap_s: float) -> dict[str, Any]:
    """x's session, in a thread: the first answer dribbled, the rest at once, to the end."""
    x = Dribbler(port)
    try:
        seen = 0  # (of x.client.got: what came while dribbling too)
        first: dict[str, Any] = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            x.pump(0.05)
            while seen < len(x.client.got):
                m = x.client.got[seen]
                seen += 1
                if m.HasField("match_ended"):
                    return {"client": x.client, **first}
                if not m.HasField("decision_request"):
                    continue
                r = m.decision_request
                if not first:
                    x.answer(r, gap_s=gap_s, hold_last=gap_s > 0)
                    first = {"request": r}
                else:
                    x.answer(r)
        raise AssertionError("x's match did not end within 120 s")
    finally:
        x.close()


def _run(gap_s: float) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(time_bank_ms=0))

        def honest(name: str, r: pb.DecisionRequest) -> None:
            ref.on_decision(ref.session(name), _first_legal(r))

        attach_in_process(ref, ("a", "b", "c", "d", "e"), honest)
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        try:
            x_task = asyncio.create_task(asyncio.to_thread(_play_x, port, gap_s))
            await until(lambda: ref.session("x").stream is not None or x_task.done(), "x in")
            slow = asyncio.create_task(ref.run_match("slow", SHORT, 5, ["a", "x", "b"]))
            other = asyncio.create_task(ref.run_match("other", SHORT, 6, ["c", "d", "e"]))
            recs = {"slow": await slow, "other": await other}
            return {"recs": recs, **await x_task}
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    return asyncio.run(main())


def _incidents(rec: dict[str, Any]) -> list[tuple[int, str]]:
    return [(i["seat"], i["kind"]) for i in rec["incidents"]]


def _check(out: dict[str, Any]) -> None:
    recs = out["recs"]
    for rec in recs.values():
        assert rec["result"]["reason"] == "max_deals", rec["result"]
        assert not rec["forfeits"]
        _replays(rec)
    assert _incidents(recs["other"]) == []
    checked = _audit(out["client"], {"slow": recs["slow"]}, {"slow": 1})
    assert checked > 5


def test_an_answer_in_one_byte_frames_back_to_back_is_taken() -> None:
    out = _run(gap_s=0.0)
    _check(out)
    assert _incidents(out["recs"]["slow"]) == []
    refused = [m for m in out["client"].got if m.HasField("decision_rejected")]
    assert refused == []


def test_an_answer_dribbled_past_its_deadline_times_out_and_is_then_stale() -> None:
    out = _run(gap_s=0.01)
    _check(out)
    rec = out["recs"]["slow"]
    assert sorted(_incidents(rec)) == [(1, "timeout"), (1, "wrong_request")], rec["incidents"]
    rid = out["request"].request_id
    refused = [m.decision_rejected for m in out["client"].got if m.HasField("decision_rejected")]
    assert [(d.request_id, d.incident) for d in refused] == [
        (rid, pb.INCIDENT_TIMEOUT),
        (rid, pb.INCIDENT_WRONG_REQUEST),
    ], refused
    assert refused[0].strikes == 1 and refused[0].HasField("fallback")
    assert refused[1].strikes == 1  # (no strike for a stale answer)
    assert "timed out" in refused[1].message or "stale" in refused[1].message, refused[1].message
