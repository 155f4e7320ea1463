"""Hostile round 48: a sloppy third-party client written from proto/ and docs/protocol.md
alone (the generated stubs, bytes it writes itself; no SDK), against the referee's real
server on a free port and against a real ``arena serve``.

What it does that the earlier rounds did not drive together in one seat of one match:

- answers every request twice, the second time with another legal action (as a client
  with two threads answering the same queue would); sends a deal's first answer again in
  the next deal, and (at ``arena serve``) a match's last answer again in the next match,
  under either match's id;
- spells the pending request id otherwise ("02", " 2", "2 ", a fullwidth digit) and names
  its match in upper case before answering rightly;
- drops its stream at a request and, on the new one, writes its answer to that request
  right after its Hello, before the Welcome comes (a client that answers from memory);
- races two streams of its token: the answer on the old one as the new one says Hello,
  the same answer again on the new one;
- writes fields of a newer protocol version (unknown to v1) in its Hello, its Decisions,
  their Actions and Cards.

Checked for each: the referee stays up and the other seats play on with no incident; the
client gets the documented refusal (WRONG_REQUEST, no strike) naming what was wrong; no
answer is applied twice, none is lost (the seat's every action is its bot's or forced:
no timeout, no fallback); the record replays; and no message to the client, refusals and
their texts included, holds a card its seat may not see. With ``arena serve`` (slow): a
seat that answers illegally, then with a card of a rank v1 lacks, strikes out in each
match, the matches are stored, ``arena replay --check`` passes, and the leaderboard places
and counts as the records say.

Found (docs): a client without ``Hello.matches`` that leaves by a half-close (after its
last ``match_ended``, or right after the ``Welcome``, to check its token) is idle until
then, and ``arena serve``'s lobby seats an idle bot at once: it was seated as it left, its
new match counting its disconnect (and its forfeit past the grace), which nothing in
docs/protocol.md told its author, nor how to stop later without it (a second Hello on
the stream is ignored). The doc and the proto's comment say so now, and the way out: a
new stream's ``Hello{matches: 0}``; the last test shows both.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import Referee, RefereeConfig, start_server
from arena.v1 import arena_pb2 as pb
from engine import PRESETS
from tests.hostile.test_hostile_audit import Client, _audit
from tests.hostile.test_hostile_round32 import _field, _passer
from tests.hostile.test_hostile_round34 import _replays
from tests.support.harness import attach_in_process, no_error_logged, until  # noqa: F401 (a fixture)

# No test here may make the referee (or gRPC under it) log an error or a traceback.
pytestmark = pytest.mark.usefixtures("no_error_logged")

ROOT = Path(__file__).parents[2]
PLAY = "/arena.v1.Arena/Play"
TWO_DEALS = dataclasses.replace(PRESETS["classic"], max_deals=2)
#: A field number no v1 message uses: what a newer protocol's field looks like on the wire.
NEWER = 99


def _newer(msg: Any) -> bytes:
    """``msg`` serialized with a string field of a newer protocol version after it."""
    return bytes(msg.SerializeToString()) + _field(NEWER, 2, b"from protocol v9")


def _answer(r: pb.DecisionRequest, action: pb.Action, *, rid: str | None = None,
            mid: str | None = None) -> bytes:  # fmt: skip
    """A ``BotMessage`` answering ``r`` with ``action`` (``rid``/``mid``: other ids), with a
    newer version's field in the ``Decision``, its ``Action`` and the ``Card`` in it."""
    kind = action.WhichOneof("kind")
    assert kind is not None
    inner = getattr(action, kind)
    body = inner.SerializeToString()
    if kind in ("give", "play"):  # the card first, with a newer field of its own
        rest = type(inner)()
        rest.CopyFrom(inner)
        rest.ClearField("card")
        body = _field(1, 2, _newer(inner.card)) + rest.SerializeToString()
    number = pb.Action.DESCRIPTOR.fields_by_name[kind].number
    action_bytes = _field(number, 2, body) + _field(NEWER, 2, b"v9")
    d = pb.Decision(request_id=r.request_id if rid is None else rid,
                    match_id=r.match_id if mid is None else mid)  # fmt: skip
    decision = d.SerializeToString() + _field(3, 2, action_bytes) + _field(NEWER, 2, b"v9")
    return _field(2, 2, decision)


HELLO = _field(1, 2, _newer(pb.Hello(bot_name="third-party", protocol_version=1)))


class ThirdParty:
    """Bot x as a client of its own writes it: one ``Play`` call at a time (sometimes two),
    bytes out, ``ServerMessage`` in. Keeps every message got and sent, in order."""

    def __init__(self, channel: grpc.aio.Channel, token: str = "tok-x") -> None:
        self.play = channel.stream_stream(
            PLAY, request_serializer=lambda b: b,
            response_deserializer=pb.ServerMessage.FromString,
        )  # fmt: skip
        self.md = (("authorization", f"Bearer {token}"),)
        self.got: list[pb.ServerMessage] = []
        self.sent: list[pb.BotMessage] = []
        self.statuses: list[tuple[grpc.StatusCode, str]] = []
        #: Where in ``got`` each stream's messages start.
        self.starts: list[int] = []

    def open(self) -> Any:
        self.starts.append(len(self.got))
        return self.play(metadata=self.md)

    async def write(self, call: Any, data: bytes) -> None:
        self.sent.append(pb.BotMessage.FromString(data))
        await call.write(data)

    async def read(self, call: Any) -> pb.ServerMessage | None:
        """The next message of ``call`` (``None`` at its end, its status kept)."""
        try:
            m = await call.read()
        except grpc.aio.AioRpcError as e:
            self.statuses.append((e.code(), e.details() or ""))
            return None
        if m is grpc.aio.EOF:
            self.statuses.append((await call.code(), await call.details() or ""))
            return None
        self.got.append(m)
        return m  # type: ignore[no-any-return]

    def client(self) -> Client:
        return Client(call=None, got=self.got, sent=self.sent)

    def refusals(self) -> list[pb.DecisionRejected]:
        return [m.decision_rejected for m in self.got if m.HasField("decision_rejected")]


async def _sloppy_x(bot: ThirdParty, other: ThirdParty) -> dict[str, Any]:
    """x's session (``other``: a client of x's token on another connection, for the race):
    see the module's docstring; what it did, by request id."""
    did: dict[str, Any] = {"odd": None, "dropped": None, "raced": None, "twice": [],
                           "replayed": None}  # fmt: skip
    first_answer = b""
    call = bot.open()
    await bot.write(call, HELLO)
    asked: set[str] = set()
    while (m := await bot.read(call)) is not None:
        if m.HasField("match_ended"):
            await call.done_writing()  # leaves: reads on to the OK
            continue
        if not m.HasField("decision_request"):
            continue
        r = m.decision_request
        legal = list(r.view.legal_actions)
        first = r.request_id not in asked
        asked.add(r.request_id)
        if not first:  # asked again on a new stream: answered already, before the Welcome
            continue
        if did["odd"] is None:
            did["odd"] = r.request_id
            for rid in ("0" + r.request_id, " " + r.request_id, r.request_id + " ", "\uff11"):
                await bot.write(call, _answer(r, legal[0], rid=rid))
            await bot.write(call, _answer(r, legal[0], mid=r.match_id.upper()))
            first_answer = _answer(r, legal[0])
        elif did["replayed"] is None and r.deal_number == 1:
            did["replayed"] = r.request_id  # deal 0's first answer, sent again
            await bot.write(call, first_answer)
        elif did["dropped"] is None and r.view.phase != pb.PHASE_BIDDING:
            did["dropped"] = r.request_id
            call.cancel()  # (a call cancelled here is not read: grpc.aio would raise)
            call = bot.open()
            await bot.write(call, HELLO)
            await bot.write(call, _answer(r, legal[-1]))  # before the Welcome
            continue
        elif did["raced"] is None and r.view.phase == pb.PHASE_PLAYING:
            did["raced"] = r.request_id
            new = other.open()
            await asyncio.gather(bot.write(call, _answer(r, legal[0])),
                                 bot.write(new, HELLO))  # fmt: skip
            await bot.write(new, _answer(r, legal[0]))
            while await bot.read(call) is not None:  # the old call, to its ABORTED
                pass
            call = new
            bot.starts.append(len(bot.got))  # (its messages are read from here on)
            continue
        await bot.write(call, _answer(r, legal[0]))
        if len(legal) > 1 and len(did["twice"]) < 10:  # (all refused one by one: < 20)
            did["twice"].append(r.request_id)
            await bot.write(call, _answer(r, legal[-1]))
    return did


def test_a_sloppy_third_party_client_harms_only_itself_and_learns_nothing() -> None:
    """Classic, two deals, seed 3 (x, seat 0, declares at deal 0: it is asked in every
    phase), x over the wire as in the module's docstring, y and z in process. Every
    refusal x gets is a WRONG_REQUEST without a strike naming why; x's every action in the
    record is its bot's (the request it dropped at too, answered before the Welcome) or
    forced, and the second answers are not among them; y and z have no incident; the
    record replays; nothing x got holds a card its seat may not see."""

    async def main() -> tuple[dict[str, Any], ThirdParty, dict[str, Any]]:
        ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, reconnect_grace_s=60))
        ref.add_bot("x", "tok-x")
        server, port = await start_server(ref)
        attach_in_process(ref, ("y", "z"), _passer(ref))
        target = f"127.0.0.1:{port}"
        async with (grpc.aio.insecure_channel(target) as ch,
                    grpc.aio.insecure_channel(target) as ch2):  # fmt: skip
            bot = ThirdParty(ch)
            task = asyncio.create_task(_sloppy_x(bot, ThirdParty(ch2)))
            try:
                await until(lambda: ref.session("x").connected, "x connected")
                rec = await ref.run_match("m1", TWO_DEALS, 3, ["x", "y", "z"])
                did = await asyncio.wait_for(task, 30)
            finally:
                task.cancel()
                await ref.end_streams()
                await server.stop(1.0)
        return rec, bot, did

    rec, bot, did = asyncio.run(main())
    assert all(did.values()), did
    # Nothing was applied twice, nothing lost: every action of x is its bot's or forced.
    x = [(a["action"], a["by"]) for d in rec["deals"] for a in d["actions"] if a["seat"] == 0]
    assert {by for _, by in x} <= {"bot", "forced"}, x
    kinds = {(i["seat"], i["kind"]) for i in rec["incidents"]}
    assert kinds == {(0, "wrong_request"), (0, "disconnect")}, rec["incidents"]
    assert rec["forfeits"] == [] and rec["result"]["reason"] == "max_deals"
    _replays(rec)
    # Every refusal: WRONG_REQUEST, no strike, saying why.
    refusals = bot.refusals()
    assert refusals and all(
        t.incident == pb.INCIDENT_WRONG_REQUEST and t.strikes == 0 and not t.HasField("fallback")
        for t in refusals
    ), refusals
    odd = [t.message for t in refusals if t.request_id != did["odd"] and t.match_id == "m1"]
    rid = did["odd"]
    for spelled in ("0" + rid, " " + rid, rid + " ", "\uff11"):
        assert any(f"{spelled!r} is no request id" in t for t in odd), (spelled, odd)
    upper = [t for t in refusals if t.match_id == "M1"]
    assert [t.message for t in upper] == ["you have no seat in a running match 'M1'"], upper
    assert not upper[0].legal_actions
    # Each second answer, and deal 0's first answer sent again in deal 1, is refused as
    # answered already, never applied, recorded one by one (under 20, the referee's
    # ``max_wrong_recorded``) and counted; the race's loser may be the old stream's
    # answer, never read once it was replaced. A refusal on its way as x cancelled its
    # stream, or as the race replaced it, is lost with that stream (the referee sends
    # requests and ends again, not refusals): at most one each.
    seat_refusals = [t for t in refusals if t.match_id == "m1"]
    total = rec["wrong_requests"][0]
    assert 4 + len(did["twice"]) + 1 <= total <= 4 + len(did["twice"]) + 2, (total, did)
    recorded = [i for i in rec["incidents"] if i["kind"] == "wrong_request"]
    assert len(recorded) == total < 20, recorded
    assert len(recorded) - 2 <= len(seat_refusals) <= len(recorded), seat_refusals
    assert {t.message for t in seat_refusals} <= {i["detail"] for i in recorded}
    replayed = [t.message for t in seat_refusals if t.request_id == did["odd"]
                and f"(the pending request is {did['replayed']!r})" in t.message]  # fmt: skip
    assert len(replayed) == 1, seat_refusals
    assert f"request {did['odd']!r} was answered already" in replayed[0], replayed
    for t in seat_refusals[4:]:
        assert t.request_id in did["twice"] or t.request_id == did["raced"], t
        assert f"request {t.request_id!r} was answered already" in t.message, t.message
    # The drop: a disconnect, the request asked again on the new stream, the answer
    # written before its Welcome taken as the bot's; the race: one stream ABORTED.
    codes = [c for c, _ in bot.statuses]
    assert grpc.StatusCode.ABORTED in codes and codes[-1] == grpc.StatusCode.OK, bot.statuses
    asked = [m.decision_request.request_id for m in bot.got if m.HasField("decision_request")]
    assert asked.count(did["dropped"]) == 2, asked
    # The Welcome is the first message of each of x's three streams; no card leaked.
    assert len(bot.starts) == 3 and all(
        bot.got[k].HasField("welcome") and bot.got[k].welcome.bot_name == "x" for k in bot.starts
    ), [bot.got[k] for k in bot.starts]
    assert _audit(bot.client(), {"m1": rec}, {"m1": 0}) > 10


# ------------------------------------------------------------------ against arena serve


def _serve(tmp: Path) -> tuple[subprocess.Popen[str], int]:
    names = ("ann", "bob", "cid")
    tokens = tmp / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "tok-{n}-0123456789"\n' for n in names))
    tokens.chmod(0o600)
    cmd = [sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--tokens", str(tokens),
           "--record-dir", str(tmp / "rec"), "--db", str(tmp / "db.sqlite"), "--matches", "2",
           "--max-deals", "2", "--max-strikes", "2", "--grace-s", "60", "--seed", "7",
           "--decision-ms", "10000"]  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("port "):
            return p, int(line.split()[1])
    p.kill()
    raise AssertionError(f"arena serve printed no port: {p.communicate()[1]}")


async def _serve_bot(port: int, name: str) -> ThirdParty:
    """ann answers rightly; bob sloppily (each request twice, the second another legal
    action; the first match's second request also under odd ids; at the second match's
    first request, the first match's last answer again, under its own match id and under
    the new one's); cid illegally (a bid off the step), then malformed (a card of rank 7).
    Each leaves when the arena ends its stream (OK: its two matches played)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        bot = ThirdParty(ch, f"tok-{name}-0123456789")
        call = bot.open()
        await bot.write(call, HELLO)
        n = 0
        last: tuple[pb.DecisionRequest, pb.Action] | None = None
        while (m := await bot.read(call)) is not None:
            if not m.HasField("decision_request"):
                continue
            r = m.decision_request
            legal = list(r.view.legal_actions)
            n += 1
            if name == "cid":  # (two requests a match: it strikes out at the second)
                if n % 2:
                    bad = pb.Action(bid=pb.Bid(amount=3))
                else:  # a rank no v1 enum has (an open enum: protobuf keeps the number)
                    bad = pb.Action(play=pb.PlayCard(card=pb.Card(suit=pb.SUIT_SPADES, rank=7)))  # type: ignore[arg-type]
                await bot.write(call, _answer(r, bad))
                continue
            if name == "bob" and n == 2:
                for rid in ("0" + r.request_id, "\uff11"):
                    await bot.write(call, _answer(r, legal[0], rid=rid))
            if name == "bob" and last is not None and last[0].match_id != r.match_id:
                await bot.write(call, _answer(*last))
                await bot.write(call, _answer(*last, mid=r.match_id))
            await bot.write(call, _answer(r, legal[0]))
            last = (r, legal[0])
            if name == "bob":
                await bot.write(call, _answer(r, legal[-1]))
        return bot


@pytest.mark.slow
def test_third_party_clients_at_arena_serve_leave_whole_results(tmp_path: Path) -> None:
    """``arena serve --matches 2 --max-strikes 2`` with three third-party clients (see
    ``_serve_bot``): both matches are stored and replay (``arena replay --check``); cid
    strikes out in each (ILLEGAL and MALFORMED naming what was wrong, then the forfeit)
    and is placed last;
    bob's second answers are refused without a strike and never applied; every client's
    stream ends OK; the leaderboard counts cid's 4 strikes as illegal (its column counts
    illegal and malformed answers) and its 2 forfeits, nothing
    against ann, and bob's answers to no pending request apart (``other``); no message to
    any of them holds a card it may not see."""
    p, port = _serve(tmp_path)
    try:

        async def bots() -> list[ThirdParty]:
            return list(
                await asyncio.wait_for(
                    asyncio.gather(*(_serve_bot(port, n) for n in ("ann", "bob", "cid"))), 120
                )
            )

        ann, bob, cid = asyncio.run(bots())
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err[-3000:]
    assert "Traceback" not in err and " ERROR " not in err, err[-3000:]
    for b in (ann, bob, cid):
        assert [c for c, _ in b.statuses] == [grpc.StatusCode.OK], b.statuses
    recs = {}
    for f in sorted((tmp_path / "rec").glob("*.jsonl")):
        last = json.loads(f.read_text().splitlines()[-1])
        assert last["type"] == "end", f.name
        recs[last["record"]["match_id"]] = last["record"]
        check = subprocess.run([sys.executable, "-m", "arena.cli", "replay", "--check", str(f)],
                               capture_output=True, text=True, cwd=ROOT, timeout=60)  # fmt: skip
        assert check.returncode == 0, check.stdout + check.stderr
    assert len(recs) == 2
    for mid, rec in recs.items():
        seat = rec["players"].index("cid")
        assert rec["forfeits"] == [seat] and rec["result"]["places"][seat] == 3, mid
        mine = [i for i in rec["incidents"] if i["seat"] == seat]
        assert [i["kind"] for i in mine] == ["illegal", "malformed", "forfeit"], mine
        assert "a bid must be a multiple of 5" in mine[0]["detail"], mine[0]
        assert "unknown rank value 7" in mine[1]["detail"], mine[1]
        others = {(rec["players"][i["seat"]], i["kind"]) for i in rec["incidents"]} - {
            ("cid", "illegal"),
            ("cid", "malformed"),
            ("cid", "forfeit"),
        }
        assert others <= {("bob", "wrong_request")}, rec["incidents"]
        bob_seat = rec["players"].index("bob")
        assert {a["by"] for d in rec["deals"] for a in d["actions"]
                if a["seat"] == bob_seat} <= {"bot", "forced"}  # fmt: skip
    for b, name in ((ann, "ann"), (bob, "bob"), (cid, "cid")):
        seat_of = {mid: rec["players"].index(name) for mid, rec in recs.items()}
        assert _audit(Client(call=None, got=b.got, sent=b.sent), recs, seat_of) > 5, name
    assert {t.incident for t in bob.refusals()} == {pb.INCIDENT_WRONG_REQUEST}
    first = min(recs)  # (the ids of a run sort by match number)
    said = [t.message for t in bob.refusals()]
    assert f"you have no seat in a running match {first!r}" in said, said
    assert any("has not been sent to this seat (the pending request is '1')" in t for t in said), (
        said
    )
    assert [(t.incident, t.strikes) for t in cid.refusals()] == 2 * [
        (pb.INCIDENT_ILLEGAL, 1),
        (pb.INCIDENT_MALFORMED, 2),
    ]
    board = subprocess.run(
        [sys.executable, "-m", "arena.cli", "leaderboard", "--db", str(tmp_path / "db.sqlite"),
         "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert board.returncode == 0, board.stderr
    rows = {r["bot"]: r for r in json.loads(board.stdout)["rows"]}
    assert rows["cid"]["places"] == [0, 0, 2], rows["cid"]
    strikes = {n: rows[n]["strikes"] for n in rows}
    assert strikes["cid"] == {"timeouts": 0, "illegal": 4, "disconnects": 0, "forfeits": 2,
                              "other": 0}, strikes  # fmt: skip
    assert not any(strikes["ann"].values()), strikes
    # bob's answers to no pending request are no strike: counted apart, in ``other``, all
    # of them (the records list the first 20 of a seat one by one and count the rest).
    wrong = sum(r["wrong_requests"][r["players"].index("bob")] for r in recs.values())
    assert wrong > 20 and strikes["bob"] == {
        "timeouts": 0,
        "illegal": 0,
        "disconnects": 0,
        "forfeits": 0,
        "other": wrong,
    }, (wrong, strikes)


# ------------------------------------------------- leaving arena serve's lobby, and how


def test_a_client_leaving_without_matches_is_seated_as_it_leaves_and_the_way_out() -> None:
    """``arena serve``'s lobby, a and b idle (in process), x a third-party client that only
    checks its token: Hello without ``matches``, the Welcome read, a half-close. The lobby
    seats x at once (it is idle): its stream carries the ``match_started`` of L00000 before
    the OK, and that match counts x's disconnect. docs/protocol.md says so now, and the way
    out: x back on a new stream with ``Hello{matches: 0, running}`` resumes its seat, plays
    L00000 to its end, is seated in no more (L00001 seats a, b and c) and, half-closed
    after its ``match_ended``, is counted nothing more: one disconnect, no forfeit, the
    records replay."""
    from arena.referee.lobby import FinishedMatch, Lobby
    from tests.hostile.test_hostile_round34 import _attach
    from tests.hostile.test_hostile_round37 import _served

    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=0, reconnect_grace_s=60))
    _attach(ref, ("a", "b"), _passer(ref))
    ref.add_bot("x", "tok-x")
    one_deal = dataclasses.replace(PRESETS["classic"], max_deals=1)

    async def body(port: int) -> tuple[list[FinishedMatch], ThirdParty, ThirdParty]:
        done: list[FinishedMatch] = []

        async def keep(fm: FinishedMatch) -> None:
            done.append(fm)

        lobby = asyncio.create_task(
            Lobby(ref, one_deal, seed=1, max_matches=2, prefix="L", on_finished=keep).run()
        )
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            probe = ThirdParty(ch)
            call = probe.open()
            await probe.write(
                call, pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
            )
            welcome = await probe.read(call)
            assert welcome is not None and welcome.HasField("welcome"), welcome
            await call.done_writing()
            while await probe.read(call) is not None:
                pass
            # Back, to leave the documented way: matches 0, naming the match it holds.
            back = ThirdParty(ch)
            call = back.open()
            held = [m.match_started.match_id for m in probe.got if m.HasField("match_started")]
            hello = pb.Hello(protocol_version=1, matches=0, running=held)
            await back.write(call, pb.BotMessage(hello=hello).SerializeToString())
            _attach(ref, ("c",), _passer(ref))  # (the next match has its third bot)
            while (m := await back.read(call)) is not None:
                if m.HasField("decision_request"):
                    r = m.decision_request
                    await back.write(call, _answer(r, r.view.legal_actions[0]))
                elif m.HasField("match_ended"):
                    await call.done_writing()
            await asyncio.wait_for(lobby, 30)
        return done, probe, back

    done, probe, back = asyncio.run(_served(ref, body))
    assert [sorted(fm.seats) for fm in done] == [["a", "b", "x"], ["a", "b", "c"]], done
    first = done[0]
    assert [m.match_started.match_id for m in probe.got if m.HasField("match_started")] == [
        first.match_id
    ]
    assert [c for c, _ in probe.statuses] == [grpc.StatusCode.OK]
    started = [m.match_started for m in back.got if m.HasField("match_started")]
    assert [(s.match_id, s.resumed) for s in started] == [(first.match_id, True)], started
    assert [m.match_ended.match_id for m in back.got if m.HasField("match_ended")] == [
        first.match_id
    ]
    assert [c for c, _ in back.statuses] == [grpc.StatusCode.OK]
    rec = first.record
    x = list(first.seats).index("x")
    assert [(i["seat"], i["kind"]) for i in rec["incidents"]] == [(x, "disconnect")]
    assert rec["forfeits"] == [] and done[1].record["incidents"] == []
    for fm in done:
        _replays(fm.record)
