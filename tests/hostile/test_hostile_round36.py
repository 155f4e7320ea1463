"""Hostile round 36: a stateful fuzzer of the protocol. Earlier rounds pinned one abuse at a
time; here a hypothesis ``RuleBasedStateMachine`` drives *sequences* of a raw client's moves
on real ``Play`` streams against a real referee started in this process on port 0: Hellos
right and wrong (token, version, features, ``running`` lists naming its own, unknown,
ended and other seats' matches, a first message that is no Hello, none at all), answers to
its requests (legal, illegal, malformed, for a wrong or unsent id, for another seat's match
or none, duplicated, late, after its ``MatchEnded``, alone or in a batch, carrying unknown
fields), stray messages (empty, an unknown oneof case, a second Hello, an empty batch, one
of 257 decisions, bytes that do not parse), half-closes, cancels, reconnects mid-match with
the same token and two streams of one token. One to three hostile seats sit with honest SDK
bots (``RandomBot`` over the wire) at a table, while another table of honest SDK bots plays
match after match for the whole run.

After every step: the referee answers ``GetInfo``; every message a hostile client got is
for a match it sits in (or one it named itself); every refusal names what was wrong (a
``DecisionRejected`` by what the answer was, a stream's status by how it was opened and
ended). After each example: its matches end, every honest seat of them played its own
moves in time (no incident, no fallback, no decision time past ``decision_ms``: what the
referee's loop stalls cost is excused by ``arena/referee/lag.py``), each hostile seat is
forfeited exactly when docs/referee.md says (``max_strikes`` strikes, or away past the
grace), every record file ends and ``arena replay --check`` accepts it, the referee holds
nothing of the example's streams, and logged no error. After the run: the honest table
had no incident at all, and no task or arena object outlives it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import gc
import json
import logging
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from arena.referee import Referee, RefereeConfig, start_server
from arena.referee.core import REPLACED
from arena.referee.match import GONE_HELLO_GRACE_S
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from engine import PRESETS
from tests.support.harness import errors_logged, on_the_loop

ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)
PLAY = "/arena.v1.Arena/Play"
# (400 + 300 ms once let an honest SDK bot of the same process time out on a CI machine
# under load: its worker thread and the GIL are not the referee's loop, whose stalls alone
# are excused)
DECISION_MS = 600
BANK_MS = 400
GRACE_S = 2.0
STRIKES = 3
FLOOD = 40
HONEST_TABLE = ("h1", "h2", "h3")
HONEST_GUESTS = ("h4", "h5")  # the honest seats at the hostile table

#: A ``BotMessage`` with only a field of an unknown kind (a newer protocol's oneof case).
UNKNOWN_KIND = b"\x9a\x06\x02\x08\x01"  # field 99, length 2: {1: 1}
PASS = pb.Action()
getattr(PASS, "pass").SetInParent()
#: An unknown field (number 50, varint) to append to a serialized message.
UNKNOWN_FIELD = b"\x90\x03\x07"


def _status_ok(code: grpc.StatusCode, details: str, how: str, ended_by: set[str]) -> str | None:
    """Why the final status of a call opened as ``how`` and ended by the client's own
    moves ``ended_by`` is wrong (None when it is one the docs promise, naming its cause)."""
    d = details or ""
    if code == grpc.StatusCode.CANCELLED and "cancel" in ended_by:
        return None
    if code == grpc.StatusCode.OK:
        return None if ({"half_close", "final"} & ended_by) else "OK without a half-close"
    allowed: list[tuple[grpc.StatusCode, str]] = [
        # (whatever the opening, when the arena or the client's own moves did it)
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "before reconnecting"),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "streams open"),
        (grpc.StatusCode.ALREADY_EXISTS, "is saying Hello; retry after it"),
        (grpc.StatusCode.UNAVAILABLE, "the arena is stopping"),
        # A write that raced the referee's status (docs/protocol.md: gRPC core's words).
        (grpc.StatusCode.INTERNAL, "Internal error from Core"),
    ]
    if how == "wrong":
        allowed.append((grpc.StatusCode.UNAUTHENTICATED, "unknown token"))
    if how == "missing":
        allowed.append((grpc.StatusCode.UNAUTHENTICATED, "missing token"))
    if how.startswith("version"):
        allowed.append((grpc.StatusCode.INVALID_ARGUMENT, f"protocol version {how[7:]} is not"))
    if how.startswith("first:"):
        allowed.append((grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello, not"))
    if how == "garbage":
        allowed.append((grpc.StatusCode.INVALID_ARGUMENT, "could not parse the message as"))
    if how == "silent":
        allowed.append((grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello: none"))
    if how == "hello":
        allowed += [
            (grpc.StatusCode.ABORTED, REPLACED),
            (grpc.StatusCode.RESOURCE_EXHAUSTED, "answering no pending request"),
            (grpc.StatusCode.INVALID_ARGUMENT, "a DecisionBatch holds at most 256 decisions"),
            (grpc.StatusCode.INVALID_ARGUMENT, "could not parse the message as"),
        ]
    if any(code == c and text in d for c, text in allowed):
        return None
    return f"status {code.name} {d!r} for a call opened as {how!r} (the client did {ended_by})"


class Call:
    """One raw ``Play`` call of a hostile client: what it received, and how it ended."""

    def __init__(self, bot: Hostile, how: str) -> None:
        self.bot, self.how = bot, how
        self.msgs: list[pb.ServerMessage] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""
        self.ended_by: set[str] = set()
        self.checked = 0
        #: per match, on this call: the last event's seq (from the match_started's on)
        self.seqs: dict[str, int] = {}
        #: per match, on this call: the last request id; matches whose end came
        self.rids: dict[str, int] = {}
        self.over: set[str] = set()
        #: whether the first message came inside a Batch (the Welcome must come alone)
        self.first_batched = False
        self.call: Any = None
        self.reader: asyncio.Task[None] | None = None

    async def open(self, channel: Any, metadata: tuple[tuple[str, str], ...]) -> None:
        method = channel.stream_stream(
            PLAY, request_serializer=lambda b: b, response_deserializer=pb.ServerMessage.FromString
        )
        self.call = method(metadata=metadata)
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
            while True:
                m = await self.call.read()
                if m is grpc.aio.EOF:
                    break
                inner = m.batch.messages if m.HasField("batch") else [m]
                if not self.msgs and m.HasField("batch"):
                    self.first_batched = True
                self.msgs.extend(inner)
        with contextlib.suppress(asyncio.CancelledError):
            self.code = await self.call.code()
            self.details = await self.call.details() or ""

    @property
    def welcomed(self) -> bool:
        return bool(self.msgs) and self.msgs[0].HasField("welcome")

    @property
    def open_(self) -> bool:
        return self.code is None and not ({"cancel", "half_close"} & self.ended_by)

    async def write(self, data: bytes) -> None:
        if not self.open_ or self.call.done():
            return
        with contextlib.suppress(Exception):  # (a write racing the end: the client's own)
            await self.call.write(data)

    async def half_close(self) -> None:
        if self.open_ and not self.call.done():
            self.ended_by.add("half_close")
            with contextlib.suppress(Exception):
                await self.call.done_writing()

    def cancel(self) -> None:
        if self.code is None:
            self.ended_by.add("cancel")
            self.call.cancel()


@dataclasses.dataclass
class Hostile:
    name: str
    token: str
    calls: list[Call] = dataclasses.field(default_factory=list)
    #: (match id, request id) -> the kinds of answer sent for it
    sent: dict[tuple[str, str], set[str]] = dataclasses.field(
        default_factory=lambda: defaultdict(set)
    )
    last_sent: tuple[str, str, bytes] | None = None
    #: match ids this bot named in a Hello's ``running`` (it is told they ended)
    named: set[str] = dataclasses.field(default_factory=set)

    def requests(self) -> list[pb.DecisionRequest]:
        return [m.decision_request for c in self.calls for m in c.msgs
                if m.HasField("decision_request")]  # fmt: skip

    def ended(self) -> set[str]:
        return {m.match_ended.match_id for c in self.calls for m in c.msgs
                if m.HasField("match_ended")}  # fmt: skip

    def live(self) -> Call | None:
        """The newest welcomed call still open."""
        for c in reversed(self.calls):
            if c.welcomed and c.open_:
                return c
        return None


class World:
    """The arena of a whole run: a referee and its server on a free port, honest SDK bots,
    the honest table playing match after match, in an event loop on a thread of its own
    (so that the arena lives on between the machine's steps, as a real one would)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.rec_dir = tmp / "rec"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.records: dict[str, dict[str, Any]] = {}
        self.honest_records: list[dict[str, Any]] = []
        self.stopping = False
        self.examples = 0
        #: what the run saw (printed at its end: that the moves reached where they aim)
        self.seen: Counter[str] = Counter()
        start = asyncio.run_coroutine_threadsafe(self._start(), self.loop)
        try:
            start.result(120)
        except BaseException:
            # A failed start stops what it had started (the server, the bots' tasks, the
            # loop's thread), so that nothing is left running in the test's worker to upset
            # the tests after it: the failure raised is the one to report.
            start.cancel()
            self._abandon()
            raise

    def run(self, coro: Any, timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> None:
        from bots.random_bot import RandomBot
        from sdk.client import BotRunner

        self.ref = Referee(RefereeConfig(
            decision_ms=DECISION_MS, time_bank_ms=BANK_MS, max_strikes=STRIKES,
            reconnect_grace_s=GRACE_S, record_dir=self.rec_dir, flood_limit=FLOOD,
        ))  # fmt: skip
        self.server, self.port = await start_server(self.ref)
        self.target = f"127.0.0.1:{self.port}"
        self.info = grpc.aio.insecure_channel(self.target)
        names = [*HONEST_TABLE, *HONEST_GUESTS]
        self.runners = []
        for n in names:
            self.ref.add_bot(n, f"tok-{n}")
            runner = BotRunner(RandomBot, self.target, f"tok-{n}", name=n, retry_for=10)
            # The honest bots are the control: every call of theirs runs on this loop, not
            # in the runner's worker threads (on a loaded machine a worker waited 2.4 s for
            # the GIL to make a RandomBot, and its first request timed out): see on_the_loop.
            self.runners.append(on_the_loop(runner))
        self.runner_tasks = [asyncio.create_task(r.run()) for r in self.runners]
        assert not await self.ref.wait_for_bots(names, 30)
        self.table = asyncio.create_task(self._honest_table())

    async def _honest_table(self) -> None:
        k = 0
        while not self.stopping:
            mid = f"honest-{k:04d}"
            self.honest_records.append(
                await self.ref.run_match(mid, ONE_DEAL, 1000 + k, list(HONEST_TABLE))
            )
            k += 1
            await asyncio.sleep(0.05)  # (a table of a real arena waits for its bots too)

    def honest_match(self) -> str:
        running = [m for m in self.ref.running_matches() if m.startswith("honest-")]
        return running[0] if running else f"honest-{len(self.honest_records):04d}"

    async def get_info(self) -> pb.ServerInfo:
        """GetInfo's answer; asked again as told when the referee's limit of requests
        without a token (200 per address in 2 s, docs/referee.md) refuses it: the machine
        asks after every step, and many steps take no time."""
        for _ in range(20):
            try:
                info: pb.ServerInfo = await pb_grpc.ArenaStub(self.info).GetInfo(
                    pb.GetInfoRequest(), timeout=30
                )
                return info
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                assert "requests without a token" in (e.details() or ""), e
                wait = dict(e.trailing_metadata() or ())["retry-after-ms"]
                self.seen["GetInfo refused: wait"] += 1
                await asyncio.sleep(int(wait) / 1000)
        raise AssertionError("GetInfo refused 20 times in a row")

    async def _stop(self) -> None:
        self.stopping = True
        await asyncio.wait_for(self.table, 60)
        await self.ref.end_streams(final=True)
        await asyncio.wait_for(asyncio.gather(*self.runner_tasks), 30)
        await self.info.close()
        await self.server.stop(1.0)

    def _abandon(self) -> None:
        """Stop whatever a failed ``_start`` had started, then the loop and its thread."""

        async def stop_started() -> None:
            # In _stop's order (the table, the streams ended, the bots' runs, the server),
            # each step bounded, so that one that hangs leaves the others done.
            table = getattr(self, "table", None)
            if table is not None:
                table.cancel()
                await asyncio.gather(table, return_exceptions=True)
            if hasattr(self, "ref"):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.ref.end_streams(final=True), 30)
            runs = getattr(self, "runner_tasks", [])
            if runs:
                _, late = await asyncio.wait(runs, timeout=30)
                for task in late:
                    task.cancel()
                await asyncio.gather(*runs, return_exceptions=True)
            if hasattr(self, "info"):
                await self.info.close()
            if hasattr(self, "server"):
                await self.server.stop(0)

        try:
            asyncio.run_coroutine_threadsafe(stop_started(), self.loop).result(120)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()

    def stop(self, check: bool = True) -> None:
        """Stop the arena; with ``check``, assert that it ended clean (else only stop it:
        the run failed already, and that failure is the one to report)."""
        try:
            self.run(self._stop())
            self.run(asyncio.sleep(0.3))  # (grpc.aio's last callbacks)
            left = self.run(self._others())
            if check:
                assert left == [], f"tasks outlive the arena: {left}"
                for r in self.runners:  # (the honest bots: no refusal, error or reconnect)
                    sm = r.summary
                    assert (sm.errors, sm.rejected, sm.connections) == (0, 0, 1), (r.name, sm)
                    assert sm.matches > 0 and sm.decisions > 0, (r.name, sm)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()

    async def _others(self) -> list[str]:
        me = asyncio.current_task()
        return [repr(t) for t in asyncio.all_tasks() if t is not me and not t.done()]


WORLD: World | None = None


def _replay_check(path: Path) -> None:
    from arena.cli import main

    out = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert out.exit_code == 0 and "OK" in out.output, (path.name, out.output)


def _honest_seats_untouched(rec: dict[str, Any], honest: set[int]) -> None:
    """Every move of an honest seat its bot's (or forced), in ``decision_ms``; no incident."""
    for inc in rec["incidents"]:
        assert inc["seat"] not in honest, f"{rec['match_id']}: incident on an honest seat: {inc}"
    for s in honest:
        assert s not in rec["forfeits"], rec["match_id"]
    for deal in rec["deals"]:
        for a in deal["actions"]:
            if a["seat"] in honest:
                assert a["by"] in ("bot", "forced"), (rec["match_id"], a)
                # (the loop's stalls are excused by LoopLag: an honest bot answers at once)
                assert a["ms"] <= DECISION_MS, (rec["match_id"], a)


def _forfeits_as_documented(rec: dict[str, Any], hostile: set[int]) -> None:
    """docs/referee.md: a seat forfeits at ``max_strikes`` strikes (timeouts, illegal,
    malformed: not wrong requests), or when away past the grace; forfeiters place last."""
    strikes: dict[int, int] = defaultdict(int)
    forfeited: dict[int, str] = {}
    gone_at_start: dict[int, bool] = {}
    for inc in rec["incidents"]:
        s = inc["seat"]
        assert s in hostile
        if inc["kind"] in ("timeout", "illegal", "malformed"):
            assert s not in forfeited, f"a strike after the forfeit: {inc}"
            strikes[s] += 1
            assert f"strike {strikes[s]} of {STRIKES}" in inc["detail"], inc
        elif inc["kind"] == "forfeit":
            assert s not in forfeited, inc
            forfeited[s] = inc["detail"]
            if inc["detail"].startswith("not connected at the start: "):
                # (a bot taken for gone, its grace run out in an earlier match: its later
                # seats forfeit at once, docs/referee.md)
                assert gone_at_start.get(s), inc
            elif inc["detail"] != f"{STRIKES} strikes":
                # (a gone bot with a stream saying Hello at the start has the shorter grace)
                graces = {f"{g:g}" for g in (GRACE_S, min(GRACE_S, GONE_HELLO_GRACE_S))}
                assert inc["detail"] in {f"disconnected for more than {g} s" for g in graces}, inc
                assert strikes[s] < STRIKES, inc
            else:
                assert strikes[s] == STRIKES, inc
        elif inc["kind"] == "wrong_request":
            assert "refused" in inc["detail"], inc
        else:
            assert inc["kind"] == "disconnect", inc
            if inc["detail"] == "not connected at the start; forfeits at once":
                gone_at_start[s] = True
            else:
                assert "s to reconnect" in inc["detail"], inc
    for s, n in strikes.items():
        assert n <= STRIKES
        assert (n == STRIKES) == (forfeited.get(s) == f"{STRIKES} strikes"), (s, n, forfeited)
    assert sorted(forfeited) == rec["forfeits"], (forfeited, rec["forfeits"])
    places = rec["result"]["places"]
    for s in rec["forfeits"]:
        others = [places[o] for o in range(len(places)) if o not in rec["forfeits"]]
        assert all(places[s] > p for p in others), (places, rec["forfeits"])
    if rec.get("abandoned"):
        assert sorted(rec["forfeits"]) == list(range(len(places)))


#: What a refusal of each kind of answer must say (any of).
REASONS = {
    # (the id of a request not yet read is "1", perhaps not sent yet)
    "legal": (
        "timed out",
        "has forfeited",
        "answered already",
        "no seat in a running match",
        "has not been sent to this seat",
    ),
    "illegal": ("illegal action",),
    "malformed": ("malformed action",),
    "wrong_id": ("is no request id",),
    "unsent_id": ("has not been sent to this seat",),
    "other_match": ("you have no seat in a running match",),
    "unknown_match": ("you have no seat in a running match",),
    "no_match_id": ("you have no seat in a running match ''",),
}
REASONS["duplicate"] = REASONS["legal"]
REASONS["late"] = (
    "answered already",
    "timed out",
    "answered or timed out",
    "has forfeited",
    "has not been sent to this seat",
    "no seat in a running match",
)
REASONS["ended"] = ("you have no seat in a running match",)


class Machine(RuleBasedStateMachine):
    """One example: 1-3 hostile bots (new names), their table with honest SDK bots."""

    def __init__(self) -> None:
        super().__init__()
        assert WORLD is not None
        self.w = WORLD
        WORLD.examples += 1
        self.ex = WORLD.examples
        self.bots: list[Hostile] = []
        self.matches: list[str] = []
        self.match_tasks: list[concurrent.futures.Future[Any]] = []
        self.seats: dict[str, list[str]] = {}
        self.log = _Capture()
        logging.getLogger().addHandler(self.log)
        self.channel: Any = None

    # ------------------------------------------------------------------ helpers
    def run(self, coro: Any, timeout: float = 120) -> Any:
        return self.w.run(coro, timeout)

    async def _settle(self, s: float = 0.03) -> None:
        await asyncio.sleep(s)

    def _start_match(self) -> None:
        k = len(self.matches)
        mid = f"x{self.ex:03d}-{k}"
        names = [b.name for b in self.bots]
        seats = (names + list(HONEST_GUESTS))[:3]
        seats = seats[k % 3 :] + seats[: k % 3]  # (the hostile in another seat each time)
        self.matches.append(mid)
        self.seats[mid] = seats

        async def play() -> None:
            self.w.records[mid] = await self.w.ref.run_match(mid, ONE_DEAL, 7 * self.ex + k,
                                                             seats)  # fmt: skip

        self.match_tasks.append(asyncio.run_coroutine_threadsafe(play(), self.w.loop))

    async def _open(self, b: Hostile, how: str, first: bytes | None, md: Any) -> Call:
        if self.channel is None:
            self.channel = grpc.aio.insecure_channel(self.w.target)
        c = Call(b, how)
        b.calls.append(c)
        await c.open(self.channel, md)
        if first is not None:
            await c.write(first)
        # (until the Welcome or the status: a step sees what its move caused)
        for _ in range(300):
            if c.msgs or c.code is not None or first is None:
                break
            await asyncio.sleep(0.01)
        return c

    # ------------------------------------------------------------------ rules
    @initialize(n=st.integers(1, 3), connect=st.lists(st.booleans(), min_size=3, max_size=3),
                batch=st.booleans())  # fmt: skip
    def setup(self, n: int, connect: list[bool], batch: bool) -> None:
        for i in range(n):
            b = Hostile(f"x{self.ex:03d}-{i}", f"tok-x{self.ex:03d}-{i}")
            self.w.ref.add_bot(b.name, b.token)
            self.bots.append(b)
        for b, c in zip(self.bots, connect, strict=False):
            if c:
                features = ["batch"] if batch else []
                hello = pb.BotMessage(hello=pb.Hello(protocol_version=1, features=features))
                md = (("authorization", f"Bearer {b.token}"),)
                self.run(self._open(b, "hello", hello.SerializeToString(), md))
        self._start_match()
        self.run(self._settle(0.05))

    bot_index = st.integers(0, 2)

    @rule(i=bot_index, token=st.sampled_from(["right"] * 6 + ["wrong", "missing"]),
          first=st.sampled_from(["hello"] * 8 + ["decision", "empty", "unknown", "garbage",
                                                 "silent", "version"]),
          version=st.sampled_from([0, 1, 2, 7]),
          features=st.sampled_from([(), ("batch",), ("batch", "zzz-newer"), ("zzz",)]),
          running=st.lists(st.sampled_from(["mine", "unknown", "other", "ended", "empty"]),
                           max_size=4),
          matches=st.sampled_from([None, 0, 1, 5]),
          unknown_field=st.booleans())  # fmt: skip
    def connect(
        self,
        i: int,
        token: str,
        first: str,
        version: int,
        features: tuple[str, ...],
        running: list[str],
        matches: int | None,
        unknown_field: bool,
    ) -> None:
        """A new stream of a hostile bot (a reconnect, or a second stream beside one)."""
        b = self.bots[i % len(self.bots)]
        md: tuple[tuple[str, str], ...] = ()
        if token == "right":
            md = (("authorization", f"Bearer {b.token}"),)
        elif token == "wrong":
            md = (("authorization", f"Bearer {b.token}-not"),)
        ids = []
        for r in running:
            mid = {"mine": self.matches[-1], "unknown": f"gone-{self.ex}", "empty": "",
                   "other": self.w.honest_match(),
                   "ended": self.matches[0]}[r]  # fmt: skip
            ids.append(mid)
        hello = pb.Hello(protocol_version=version if first == "version" else 1,
                         features=list(features), running=ids)  # fmt: skip
        if matches is not None:
            hello.matches = matches
        data = pb.BotMessage(hello=hello).SerializeToString()
        if unknown_field:
            data += UNKNOWN_FIELD
        how = "hello"
        if token != "right":
            how = token
        elif first == "version" and version not in (0, 1):
            how = f"version{version}"
        elif first == "decision":
            how, data = "first:decision", pb.BotMessage(decision=pb.Decision()).SerializeToString()
        elif first == "empty":
            how, data = "first:empty", b""
        elif first == "unknown":
            how, data = "first:unknown", UNKNOWN_KIND
        elif first == "garbage":
            how, data = "garbage", b"\xff\xff\xff\xff"
        elif first == "silent":
            how, data = "silent", None  # type: ignore[assignment]
        if how == "hello":
            b.named |= {m for m in ids if m}
        self.run(self._open(b, how, data, md))

    def _target(self, b: Hostile) -> pb.DecisionRequest | None:
        reqs = b.requests()
        return reqs[-1] if reqs else None

    @rule(i=bot_index,
          kind=st.sampled_from(["legal", "legal", "legal", "illegal", "malformed", "wrong_id",
                                "unsent_id", "other_match", "unknown_match", "no_match_id",
                                "duplicate", "late", "ended"]),
          pick=st.integers(0, 40), batch=st.integers(0, 2), unknown_field=st.booleans(),
          old_call=st.booleans())  # fmt: skip
    def answer(
        self, i: int, kind: str, pick: int, batch: int, unknown_field: bool, old_call: bool
    ) -> None:
        """An answer (of some kind) to the bot's latest request, on its live stream (or,
        ``old_call``, on any of its streams still open: a replaced one's word is not the
        bot's any more)."""
        b = self.bots[i % len(self.bots)]
        req = self._target(b)
        mid, rid = (req.match_id, req.request_id) if req is not None else (self.matches[-1], "1")
        legal = list(req.view.legal_actions) if req is not None else []
        action = legal[pick % len(legal)] if legal else PASS
        if kind == "illegal":
            action = pb.Action(bid=pb.Bid(amount=7))
        elif kind == "malformed":
            action = pb.Action()
        elif kind == "wrong_id":
            rid = f"r{pick}"
        elif kind == "unsent_id":
            rid = str(int(rid) + 5 + pick)
        elif kind == "other_match":
            mid = self.w.honest_match()
        elif kind == "unknown_match":
            mid = f"nope-{pick}"
        elif kind == "no_match_id":
            mid = ""
        elif kind == "late":
            old = [r for r in b.requests() if r.match_id == mid]
            rid = old[pick % len(old)].request_id if old else "1"
        elif kind == "ended":
            ended = sorted(b.ended() & set(self.matches))
            if ended:
                mid = ended[pick % len(ended)]
        d = pb.Decision(request_id=rid, match_id=mid, action=action)
        if kind == "duplicate" and b.last_sent is not None:
            mid, rid, raw = b.last_sent
            d = pb.Decision.FromString(raw)
        raw = d.SerializeToString() + (UNKNOWN_FIELD if unknown_field else b"")
        b.sent[(clip_id(mid), clip_id(rid))].add(kind)
        self.w.seen[f"sent {kind}{' batch' if batch else ''}"] += 1
        b.last_sent = (mid, rid, raw)
        dec = pb.Decision.FromString(raw)
        if batch == 0:
            msg = pb.BotMessage(decision=dec)
        else:  # (a batch of one, or the answer with a duplicate of it)
            msg = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[dec] * batch))
            if batch == 2:
                b.sent[(clip_id(mid), clip_id(rid))].add("duplicate")
        calls = [c for c in b.calls if c.welcomed and c.open_]
        call = b.live() if not old_call or not calls else calls[pick % len(calls)]
        if call is not None:
            self.run(call.write(msg.SerializeToString()))
            self.run(self._settle())

    @rule(i=bot_index, pick=st.integers(0, 40), batch=st.booleans())
    def play_along(self, i: int, pick: int, batch: bool) -> None:
        """A legal answer to the bot's latest request (the seat plays on for a while)."""
        self.answer(i, "legal", pick, int(batch), False, False)

    @rule(i=bot_index,
          kind=st.sampled_from(["empty", "unknown_kind", "second_hello", "empty_batch",
                                "oversize_batch", "garbage"]),
          count=st.sampled_from([1, 2, 4, 12, 45]))  # fmt: skip
    def stray(self, i: int, kind: str, count: int) -> None:
        """Messages that answer nothing, after the Welcome."""
        b = self.bots[i % len(self.bots)]
        call = b.live()
        if call is None:
            return
        data = {
            "empty": b"",
            "unknown_kind": UNKNOWN_KIND,
            "second_hello": pb.BotMessage(hello=pb.Hello(protocol_version=2)).SerializeToString(),
            "empty_batch": pb.BotMessage(decisions=pb.DecisionBatch()).SerializeToString(),
            "oversize_batch": pb.BotMessage(decisions=pb.DecisionBatch(
                decisions=[pb.Decision(request_id="1", match_id="m")] * 257)).SerializeToString(),
            "garbage": b"\x0a\xff",
        }[kind]  # fmt: skip

        async def send() -> None:
            for _ in range(count):
                await call.write(data)
            await self._settle()

        self.run(send())

    @rule(i=bot_index, how=st.sampled_from(["half_close", "cancel", "cancel_all"]))
    def leave(self, i: int, how: str) -> None:
        """The bot's live stream half-closed or cancelled (or every stream of it cancelled)."""
        b = self.bots[i % len(self.bots)]
        live = b.live()
        if how == "cancel_all":
            for c in b.calls:
                c.cancel()
        elif live is not None:
            if how == "cancel":
                live.cancel()
            else:
                self.run(live.half_close())
        self.run(self._settle())

    @rule(s=st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.2]))
    def wait(self, s: float) -> None:
        """Time passes: requests time out, the grace runs out, matches end."""
        self.run(asyncio.sleep(s))

    @rule()
    def next_match(self) -> None:
        """If the hostile table's match ended: another one, the seats turned. (Not a
        precondition: what the draws are must not hang on the arena's timing.)"""
        if self.match_tasks[-1].done() and len(self.matches) < 4:
            self.match_tasks[-1].result()
            self._start_match()

    # ------------------------------------------------------------------ invariants
    @invariant()
    def referee_answers(self) -> None:
        info = self.run(self.w.get_info(), 60)
        assert info.protocol_version == 1

    @invariant()
    def messages_and_refusals(self) -> None:
        for b in self.bots:
            mine = set(self.matches)
            for c in b.calls:
                for m in c.msgs[c.checked :]:
                    self._check_message(b, c, m, mine)
                    k: str = m.WhichOneof("kind") or "events"
                    if k == "decision_rejected":
                        k += ":" + pb.Incident.Name(m.decision_rejected.incident)
                        k += ":" + m.decision_rejected.message.split(":")[0][:40]
                    self.w.seen[k] += 1
                c.checked = len(c.msgs)
                if c.code is not None:
                    why = _status_ok(c.code, c.details, c.how, c.ended_by)
                    assert why is None, f"{b.name}: {why}"

    def _check_message(self, b: Hostile, c: Call, m: pb.ServerMessage, mine: set[str]) -> None:
        kind = m.WhichOneof("kind")
        assert c.how == "hello", f"a message on a call opened as {c.how!r}: {m}"
        if kind == "welcome":
            assert m is c.msgs[0], "a Welcome that is not the first message"
            assert not c.first_batched, "the Welcome came inside a Batch"
            assert m.welcome.bot_name == b.name
            return
        assert kind != "batch", "a Batch inside a Batch"
        for e in m.events:
            assert e.match_id in mine, f"{b.name} was sent an event of {e.match_id}"
            # docs/protocol.md: seq counts a match's events by one, with no gap, from the
            # match_started's seq on (after a reconnect too); nothing after its end
            assert e.match_id in c.seqs, f"an event of {e.match_id} before its match_started"
            assert e.match_id not in c.over, f"an event of {e.match_id} after its end"
            assert e.seq == c.seqs[e.match_id] + 1, (e.match_id, c.seqs[e.match_id], e.seq)
            c.seqs[e.match_id] = e.seq
        if kind == "match_started":
            ms = m.match_started
            assert ms.match_id not in c.over, f"{ms.match_id} started again after its end"
            assert ms.players[ms.seat] == b.name, ms.players
            assert ms.resumed or ms.seq == 0, ms
            c.seqs[ms.match_id] = ms.seq
        if kind == "decision_request":
            dr = m.decision_request
            assert dr.match_id in c.seqs and dr.match_id not in c.over, dr.match_id
            assert dr.view.legal_actions, dr
            # ids count the seat's requests; one asked again (a reconnect) keeps its id
            n = int(dr.request_id)
            assert n >= c.rids.get(dr.match_id, 0), (dr.match_id, c.rids, n)
            c.rids[dr.match_id] = n
        if kind == "match_ended" and m.match_ended.match_id in mine:
            c.over.add(m.match_ended.match_id)
        if kind == "decision_rejected":
            r = m.decision_rejected
            assert r.message, r
            assert r.strikes_allowed == STRIKES
            sent = b.sent.get((r.match_id, r.request_id), set())
            if r.incident == pb.INCIDENT_WRONG_REQUEST:
                assert "refused" in r.message or "no seat in a running match" in r.message, r
                reasons = [t for k in sent for t in REASONS[k]]
                if r.match_id in mine:  # (sent before the match seated the bot, or after)
                    reasons.append(f"you have no seat in a running match {r.match_id!r}")
                if r.match_id in mine and sent - {"wrong_id", "unsent_id"}:
                    # a real id of the bot's match: the request timed out first, was
                    # answered already, or (the match not started or ended yet) none of it
                    reasons += REASONS["late"]
                assert sent, f"a refusal of an answer never sent: {r}"
                assert any(t in r.message for t in reasons), (sent, r.message)
            else:
                assert r.match_id in mine, r
                want = {pb.INCIDENT_TIMEOUT: "timeout", pb.INCIDENT_ILLEGAL: "illegal",
                        pb.INCIDENT_MALFORMED: "malformed"}[r.incident]  # fmt: skip
                assert want in r.message.lower() or (want == "timeout" and "time" in r.message)
                assert 1 <= r.strikes <= STRIKES, r
                assert r.HasField("fallback") and r.legal_actions, r
            return
        mid = {
            "match_started": m.match_started.match_id,
            "decision_request": m.decision_request.match_id,
            "match_ended": m.match_ended.match_id,
        }.get(kind or "")
        if kind == "match_ended" and mid not in mine:
            # a match the bot named in its Hello's `running`: told "interrupted", no more
            assert mid in b.named, f"{b.name} was told the end of {mid}"
            assert m.match_ended.result == pb.MatchResult(reason="interrupted"), m
            assert not m.match_ended.HasField("view")
            return
        if kind is not None:
            assert mid in mine, f"{b.name} was sent a {kind} of {mid}"

    # ------------------------------------------------------------------ the end
    def teardown(self) -> None:
        try:
            self.run(self._teardown(), 180)
            self._check_records()
        finally:
            logging.getLogger().removeHandler(self.log)
        errors = errors_logged(self.log.records)
        assert not errors, [r.getMessage() for r in errors]
        assert not [r for r in self.log.records if r.exc_info], "a traceback in the log"

    async def _teardown(self) -> None:
        await self._play_out()
        for b in self.bots:
            for c in b.calls:
                if "half_close" not in c.ended_by:  # (its OK comes by itself)
                    c.cancel()
        await asyncio.gather(*(asyncio.wrap_future(t) for t in self.match_tasks))
        for b in self.bots:
            for c in b.calls:
                if c.reader is not None:
                    await asyncio.wait_for(c.reader, 30)
        for b in self.bots:
            for c in b.calls[:]:
                why = _status_ok(c.code, c.details, c.how, c.ended_by)
                assert why is None, f"{b.name}: {why}"
        if self.channel is not None:
            await self.channel.close()
        ref = self.w.ref
        # nothing of this example's streams is left at the referee
        for b in self.bots:
            s = ref.session(b.name)
            for _ in range(500):
                if s.stream is None and s.reserved is None and s.open_calls == 0:
                    break
                await asyncio.sleep(0.01)
            assert s.stream is None and s.reserved is None and s.open_calls == 0, b.name
            assert not s.seats, (b.name, list(s.seats))
            assert len(s.ends) <= 64

    async def _play_out(self) -> None:
        """Every hostile bot back on a stream of its own, answering each request with its
        first legal action, until the example's matches end (rather than wait out the
        grace): the seats not forfeited play on, honestly."""
        md = {b.name: (("authorization", f"Bearer {b.token}"),) for b in self.bots}
        hello = pb.BotMessage(hello=pb.Hello(protocol_version=1)).SerializeToString()
        answered: set[tuple[str, str]] = set()
        for _ in range(3000):
            if all(t.done() for t in self.match_tasks):
                return
            for b in self.bots:
                c = b.live()
                if c is None:
                    if b.calls and b.calls[-1].code is None and not b.calls[-1].welcomed:
                        b.calls[-1].cancel()  # (a silent one, say)
                    c = await self._open(b, "hello", hello, md[b.name])
                    if not c.welcomed:
                        continue
                reqs = [m.decision_request for m in c.msgs if m.HasField("decision_request")]
                if reqs and (reqs[-1].match_id, reqs[-1].request_id) not in answered:
                    r = reqs[-1]
                    answered.add((r.match_id, r.request_id))
                    b.sent[(r.match_id, r.request_id)].add("legal")
                    d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                    action=r.view.legal_actions[0])  # fmt: skip
                    await c.write(pb.BotMessage(decision=d).SerializeToString())
            await asyncio.sleep(0.01)

    def _check_records(self) -> None:
        for b in self.bots:
            for c in b.calls:
                self.w.seen[f"status {c.how}: {c.code.name if c.code else None}"] += 1
        for mid in self.matches:
            rec = self.w.records[mid]
            self.w.seen["match"] += 1
            self.w.seen["abandoned"] += bool(rec.get("abandoned"))
            for deal in rec["deals"]:
                for a in deal["actions"]:
                    self.w.seen[f"action by {a['by']}"] += 1
            for inc in rec["incidents"]:
                self.w.seen[f"incident {inc['kind']}: {inc['detail'][:30]}"] += 1
            names = self.seats[mid]
            hostile = {i for i, n in enumerate(names) if n.startswith("x")}
            _honest_seats_untouched(rec, set(range(3)) - hostile)
            _forfeits_as_documented(rec, hostile)
            files = list(self.w.rec_dir.glob(f"{mid}.jsonl"))
            assert len(files) == 1, files
            last = json.loads(files[0].read_text().splitlines()[-1])
            assert last["type"] == "end", last["type"]
            _replay_check(files[0])
            # the strikes each hostile bot was told of are the record's
            for s in hostile:
                b = next(b for b in self.bots if b.name == names[s])
                told = [m.decision_rejected.strikes for c in b.calls for m in c.msgs
                        if m.HasField("decision_rejected") and m.decision_rejected.match_id == mid
                        and m.decision_rejected.incident != pb.INCIDENT_WRONG_REQUEST]  # fmt: skip
                struck = [i for i in rec["incidents"] if i["seat"] == s
                          and i["kind"] in ("timeout", "illegal", "malformed")]  # fmt: skip
                assert len(told) <= len(struck), (told, struck)
                assert told == sorted(told) and len(set(told)) == len(told), told


def clip_id(text: str) -> str:
    from arena.referee.match import clip

    return clip(text)


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.records.append(record)


def _run(tmp: Path, examples: int, steps: int, derandomize: bool = True) -> None:
    global WORLD
    logging.getLogger("arena").setLevel(logging.INFO)
    WORLD = World(tmp)
    ok = False
    try:
        run_state_machine_as_test(Machine, settings=settings(
            max_examples=examples, stateful_step_count=steps, derandomize=derandomize,
            deadline=None, database=None, print_blob=True,
            suppress_health_check=list(HealthCheck),
        ))  # fmt: skip
        for k, n in sorted(WORLD.seen.items()):
            print(f"{n:6d}  {k}")
        honest = WORLD.honest_records
        assert honest, "the honest table played no match"
        for rec in honest:
            _honest_seats_untouched(rec, {0, 1, 2})
            assert not rec["forfeits"] and rec["result"]["reason"] != "interrupted"
        # no arena object of the examples outlives them (the honest table's last aside)
        gc.collect()
        from arena.referee.match import MatchRunner
        from arena.referee.sessions import Stream

        runners = [o for o in gc.get_objects() if isinstance(o, MatchRunner)]
        streams = [o for o in gc.get_objects() if isinstance(o, Stream)]
        assert len(runners) <= 2, f"{len(runners)} match runners alive"
        # (a session keeps the stream each of its latest 64 ends went out on, until the
        # bot is known to have read it: bounded per bot; nothing else may keep one)
        ref = WORLD.ref
        kept = {id(on) for n in ref.bot_names() for on, _, _ in ref.session(n).ends.values()}
        kept |= {id(ref.session(n).stream) for n in ref.bot_names()}
        assert all(len(ref.session(n).ends) <= 64 for n in ref.bot_names())
        stray = [o for o in streams if id(o) not in kept]
        assert not stray, f"{len(stray)} streams kept by no session: {stray}"
        del streams, runners
        ok = True
    finally:
        world, WORLD = WORLD, None
        world.stop(check=ok)
    for rec_file in sorted(world.rec_dir.glob("honest-*.jsonl")):
        _replay_check(rec_file)


def test_sequences_of_hostile_moves_leave_the_referee_and_honest_tables_whole(
    tmp_path: Path,
) -> None:
    """The default run: a few dozen short examples, derandomized (the same every run)."""
    _run(tmp_path, examples=24, steps=12)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # (some 130-160 s alone; far more on a loaded machine)
def test_sequences_of_hostile_moves_at_length(tmp_path: Path) -> None:
    """The bigger run: more and longer examples, random (a failure prints its blob)."""
    _run(tmp_path, examples=50, steps=30, derandomize=False)
