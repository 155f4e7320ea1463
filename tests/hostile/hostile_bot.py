"""A bot written straight against the generated stubs (``arena.v1``): honest or hostile.

Launched by a tournament as a ``command`` bot::

    python tests/hostile/hostile_bot.py --target {arena} --token {token} --name {name} --mode M

Modes:

- ``honest``     a deterministic legal action: a pure function of the view (so the result of
                 a match of honest bots depends only on its seed and seating)
- ``decisions``  seated like any bot, but misbehaves in every match, one way per match
                 (chosen from the match id): ``illegal-card`` (a held card that breaks the
                 trick rules), ``not-held`` (a card it does not hold), ``off-step`` (a bid or
                 contract off the step), ``malformed`` (an empty Action), ``stale`` (first
                 answers with the previous request id), ``other-seat`` (first answers with
                 ids of other requests), ``replay`` (re-sends its earlier answers, also out of
                 turn), ``silent`` (never answers), ``late`` (answers just after the deadline:
                 once the referee has said the request timed out)
- ``streams``    plays honestly on its own stream, and attacks the referee around it: garbage
                 bytes and an oversized message (before its session), a missing and a wrong
                 token, its valid token used twice at once, hundreds of streams opened at once,
                 a flood of decisions, one disconnect mid-trick followed by a reconnect
- any ``decisions`` kind alone (``--mode silent`` ...), for the per-kind runs

Everything it observes goes to stdout as ``EVENT <json>`` lines (the tournament keeps them
in ``<out>/logs/<name>.log``): each ``DecisionRejected`` (incident and message) and each
attack's outcome (the gRPC status it got). Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import random
import sys
import threading
import time
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

KINDS = ("illegal-card", "not-held", "off-step", "malformed", "stale", "other-seat",
         "replay", "silent", "late")  # fmt: skip
PLAY_METHOD = "/arena.v1.Arena/Play"


_EMITTING = threading.Lock()  # (the stall watcher's thread emits too)

#: Tries of a stream or call that ends INTERNAL (the client's write racing the referee's
#: refusal in gRPC core). Under load the 300 streams opened at once race again: 4 tries
#: 0.1-0.3 s apart left 24 of them INTERNAL on one loaded core.
_INTERNAL_TRIES = 8


async def _after_internal(attempt: int) -> None:
    """The wait before try ``attempt + 2``: doubling, at most 2 s, jittered so the streams
    of a burst do not race again all at once."""
    await asyncio.sleep(min(2.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.0))


#: A pause of a process of a hostile test (a bot's, or the referee's) that makes its run be
#: made again (``common.run``): honest decisions held up that long near what
#: ``test_hostile._check_timings`` allows (500 ms over the baseline's p99), and one held up
#: for 1.3 s times out (300 ms and a bank of 1 s).
STALL_S = 0.4


def emit(kind: str, **fields: Any) -> None:
    line = "EVENT " + json.dumps({"event": kind, "t": time.monotonic(), **fields}) + "\n"
    with _EMITTING:
        sys.stdout.write(line)
        sys.stdout.flush()


def paused_for(was: tuple[float, float], now: tuple[float, float]) -> float:
    """How long a ticker of 10 ms, which read (``time.monotonic()``, ``time.process_time()``)
    as ``was`` and then ``now``, was late while its process did not run (0.0 if it ran for
    half that time or more: a process held up by its own work is no paused one)."""
    late = now[0] - was[0] - 0.01
    return late if now[1] - was[1] < late / 2 else 0.0


def watch_stalls(least_s: float) -> None:
    """Emit a ``stall`` event whenever this process was paused for ``least_s`` or more (a
    loaded machine pauses processes, CI's for seconds now and then): the hostile tests make
    such a run again (``common.run``), since an honest bot's timeout is then the machine's
    doing."""

    def tick() -> None:
        clocks = time.monotonic(), time.process_time()
        while True:
            time.sleep(0.01)
            was, clocks = clocks, (time.monotonic(), time.process_time())
            if (paused := paused_for(was, clocks)) >= least_s:
                emit("stall", s=round(paused, 3))

    threading.Thread(target=tick, name="stall-watch", daemon=True).start()


def honest_choice(view: pb.PlayerView) -> pb.Action:
    """A legal action, a pure function of the view; passes often so matches stay short."""
    legal = list(view.legal_actions)
    digest = hashlib.sha256(view.SerializeToString(deterministic=True)).digest()
    rng = random.Random(digest)
    kinds = [a.WhichOneof("kind") for a in legal]
    if "pass" in kinds:
        bids = [a for a in legal if a.WhichOneof("kind") == "bid"]
        if bids and rng.random() < 0.15:
            return bids[0]
        return legal[kinds.index("pass")]
    declares = [a for a in legal if a.WhichOneof("kind") == "play" and a.play.declare]
    if declares:
        return declares[0]
    return rng.choice(legal)


def _card(suit: int, rank: int) -> pb.Card:
    return pb.Card(suit=suit, rank=rank)  # type: ignore[arg-type]


def bad_action(kind: str, view: pb.PlayerView) -> pb.Action:
    """The action of a strike-earning kind for this view."""
    held = {(c.suit, c.rank) for c in view.hand}
    legal_cards = {(a.play.card.suit, a.play.card.rank) for a in view.legal_actions
                   if a.WhichOneof("kind") == "play"}  # fmt: skip
    if kind == "malformed":
        return pb.Action()
    if kind == "illegal-card" and view.phase == pb.PHASE_PLAYING:
        for s, r in sorted(held - legal_cards):
            return pb.Action(play=pb.PlayCard(card=_card(s, r)))
    if kind in ("not-held", "illegal-card"):
        for s in range(1, 5):
            for r in range(1, 7):
                if (s, r) not in held:
                    if view.phase == pb.PHASE_PASSING:
                        return pb.Action(
                            give=pb.Give(card=_card(s, r), to_seat=(view.seat + 1) % 3)
                        )
                    return pb.Action(play=pb.PlayCard(card=_card(s, r)))
    # off-step: a bid / contract that is not a multiple of the step
    bids = [a.bid.amount for a in view.legal_actions if a.WhichOneof("kind") == "bid"]
    if view.phase == pb.PHASE_CONTRACT:
        return pb.Action(contract=pb.NameContract(amount=(view.bid or 100) + 3))
    return pb.Action(bid=pb.Bid(amount=(min(bids) if bids else 100) + 3))


def _big_hello() -> bytes:
    """A Hello of 2 MiB: twice the referee's message limit."""
    return pb.BotMessage(hello=pb.Hello(bot_name="x" * (2 << 20))).SerializeToString()


def _decision_first() -> bytes:
    return pb.BotMessage(decision=pb.Decision(request_id="1")).SerializeToString()


class Bot:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.mode = a.mode
        self.matches = 0
        self.last_rid: dict[str, str] = {}
        self.sent: dict[str, list[pb.Decision]] = {}
        self.dropped = False
        self.attacked = False
        self.attacks: asyncio.Task[None] | None = None
        #: (match id, request id) -> set when the referee says that request timed out
        self.timed_out: dict[tuple[str, str], asyncio.Event] = {}
        self.deadline = time.monotonic() + a.max_seconds

    def md(self, token: str | None) -> list[tuple[str, str]]:
        return [] if token is None else [("authorization", f"Bearer {token}")]

    def kind_for(self, match_id: str) -> str:
        if self.mode in KINDS:
            return self.mode
        if self.mode != "decisions":
            return "honest"
        h = int(hashlib.sha256(match_id.encode()).hexdigest(), 16)
        return KINDS[h % len(KINDS)]

    # ------------------------------------------------------------------ the session
    async def run(self) -> None:
        async with grpc.aio.insecure_channel(self.a.target) as channel:
            await channel.channel_ready()
            if self.mode == "streams":
                await self.pre_session_attacks(channel)
            for attempt in range(100):
                if time.monotonic() > self.deadline:
                    emit("gave-up", reason="max seconds")
                    return
                again = await self.session(channel)
                if not again:
                    return
                emit("reconnect", attempt=attempt + 1)
                await asyncio.sleep(0.2)

    async def session(self, channel: grpc.aio.Channel) -> bool:
        stub = pb_grpc.ArenaStub(channel)
        call = stub.Play(metadata=self.md(self.a.token))
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name=self.a.name, protocol_version=1,
                                                      client="hostile_bot/1")))  # fmt: skip
        out: asyncio.Queue[pb.BotMessage] = asyncio.Queue()

        async def writer() -> None:
            while True:
                await call.write(await out.get())

        wtask = asyncio.create_task(writer())
        tasks: set[asyncio.Task[None]] = set()

        def spawn(coro: Any) -> None:
            t = asyncio.create_task(coro)
            tasks.add(t)
            t.add_done_callback(tasks.discard)

        try:
            while True:
                try:
                    msg = await call.read()
                except grpc.aio.AioRpcError as e:
                    emit("stream-error", code=e.code().name, details=e.details())
                    return e.code() != grpc.StatusCode.UNAUTHENTICATED
                if msg is grpc.aio.EOF:
                    return False
                for ev in msg.events:
                    if ev.WhichOneof("kind") == "action" and self.kind_for(ev.match_id) == "replay":
                        for d in self.sent.get(ev.match_id, [])[-1:]:
                            out.put_nowait(pb.BotMessage(decision=d))  # out of turn
                kind = msg.WhichOneof("kind")
                if kind == "welcome":
                    emit("welcome", name=msg.welcome.bot_name)
                elif kind == "match_started":
                    emit("match-started", match_id=msg.match_started.match_id,
                         resumed=msg.match_started.resumed)  # fmt: skip
                    if self.mode == "streams" and self.attacks is None:
                        # not cancelled with the session: it outlives the drop below
                        self.attacks = asyncio.create_task(self.in_session_attacks(channel, out))
                elif kind == "decision_rejected":
                    r = msg.decision_rejected
                    if r.incident == pb.INCIDENT_TIMEOUT:
                        self.timed_out.setdefault((r.match_id, r.request_id), asyncio.Event()).set()
                    emit("rejected", match_id=r.match_id, incident=pb.Incident.Name(r.incident),
                         message=r.message, strikes=r.strikes,
                         allowed=r.strikes_allowed)  # fmt: skip
                elif kind == "match_ended":
                    self.matches += 1
                    emit("match-ended", match_id=msg.match_ended.match_id,
                         forfeits=list(msg.match_ended.result.forfeits))  # fmt: skip
                elif kind == "decision_request":
                    req = msg.decision_request
                    if self.should_drop(req):
                        emit("dropping", match_id=req.match_id)
                        call.cancel()
                        return True
                    spawn(self.answer(req, out))
        finally:
            wtask.cancel()
            for t in list(tasks):
                t.cancel()

    def should_drop(self, req: pb.DecisionRequest) -> bool:
        if self.mode != "streams" or self.dropped or not self.attacked:
            return False  # drop once, after the attacks
        if req.view.phase == pb.PHASE_PLAYING and len(req.view.trick) > 0:
            self.dropped = True
            return True
        return False

    async def answer(self, req: pb.DecisionRequest, out: asyncio.Queue[pb.BotMessage]) -> None:
        kind = self.kind_for(req.match_id)
        rid, mid = req.request_id, req.match_id
        good = pb.Decision(request_id=rid, match_id=mid, action=honest_choice(req.view))
        prev = self.last_rid.get(mid)
        self.last_rid[mid] = rid
        if kind == "silent":
            return
        if self.attacks is not None and not self.attacks.done():
            # Hold the seat's answer until the in-session attacks are over, within the
            # request's budget: otherwise a short tournament can end (and stop this bot)
            # before its 300-stream burst does.
            budget = (req.time_limit_ms + req.time_bank_ms) / 1000 - 0.5
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.attacks), max(budget, 0.0))
        if kind == "late":
            # Just after the deadline as the referee reckons it: once it said the request
            # timed out. (A sleep of limit + bank + 40 ms was answered in time now and then
            # under load, the referee's own stalls meanwhile being given back to the bot:
            # the 3 timeouts of a `late` match were 0 in a loaded clean-clone run.)
            told = self.timed_out.setdefault((mid, rid), asyncio.Event())
            budget = (req.time_limit_ms + req.time_bank_ms) / 1000
            with contextlib.suppress(TimeoutError):  # (a guard: the referee's timeout comes)
                await asyncio.wait_for(told.wait(), budget + 60)
        if kind in ("illegal-card", "not-held", "off-step", "malformed"):
            good = pb.Decision(request_id=rid, match_id=mid, action=bad_action(kind, req.view))
        elif kind == "stale" and prev is not None:
            out.put_nowait(pb.BotMessage(decision=pb.Decision(
                request_id=prev, match_id=mid, action=good.action)))  # fmt: skip
        elif kind == "other-seat" and rid.isdigit():
            for other in (int(rid) + 1, int(rid) + 2, int(rid) - 1):
                out.put_nowait(pb.BotMessage(decision=pb.Decision(
                    request_id=str(other), match_id=mid, action=good.action)))  # fmt: skip
        elif kind == "replay":
            for d in self.sent.get(mid, [])[-2:]:
                out.put_nowait(pb.BotMessage(decision=d))
        out.put_nowait(pb.BotMessage(decision=good))
        self.sent.setdefault(mid, []).append(good)
        if kind == "replay":
            out.put_nowait(pb.BotMessage(decision=good))  # the same answer twice

    # ------------------------------------------------------------------ stream attacks
    async def expect_status(self, what: str, coro: Any) -> None:
        """Emit the status an attack ends with. ``coro`` may be a factory of coroutines:
        then an INTERNAL (the client's write racing the referee's refusal in gRPC core, see
        docs/protocol.md) is retried, as a real client would."""
        for attempt in range(_INTERNAL_TRIES):
            try:
                await asyncio.wait_for(coro() if callable(coro) else coro, 10)
                emit("attack", what=what, code="OK")
            except grpc.aio.AioRpcError as e:
                last = attempt == _INTERNAL_TRIES - 1
                if e.code() is grpc.StatusCode.INTERNAL and callable(coro) and not last:
                    await _after_internal(attempt)
                    continue
                emit("attack", what=what, code=e.code().name, details=e.details())
            except TimeoutError:
                emit("attack", what=what, code="NO-ANSWER")
            return

    async def raw_stream(self, channel: grpc.aio.Channel, token: str | None,
                         payloads: list[bytes]) -> None:  # fmt: skip
        call = channel.stream_stream(PLAY_METHOD)(metadata=self.md(token))
        for p in payloads:
            await call.write(p)
        await call.read()  # the status comes with the first read
        await call.read()

    async def pre_session_attacks(self, channel: grpc.aio.Channel) -> None:
        tok = self.a.token
        await self.expect_status(
            "garbage", self.raw_stream(channel, tok, [b"\xff\xfe garbage \x00" * 4])
        )
        await self.expect_status("oversized", self.raw_stream(
            channel, tok, [_big_hello()]))  # fmt: skip
        hello = pb.BotMessage(hello=pb.Hello(bot_name="h", protocol_version=1)).SerializeToString()
        await self.expect_status("missing-token", lambda: self.raw_stream(channel, None, [hello]))
        await self.expect_status(
            "wrong-token", lambda: self.raw_stream(channel, "not-a-token", [hello])
        )
        await self.expect_status(
            "no-hello", lambda: self.raw_stream(channel, tok, [_decision_first()])
        )

    async def in_session_attacks(self, channel: grpc.aio.Channel,
                                 out: asyncio.Queue[pb.BotMessage]) -> None:  # fmt: skip
        tok = self.a.token
        hello = pb.BotMessage(hello=pb.Hello(bot_name="h", protocol_version=1)).SerializeToString()
        # The token twice while a stream of it is saying Hello: refused. (A stream of it
        # that says Hello is welcomed and replaces this bot's own: the newest wins.)
        opening = channel.stream_stream(PLAY_METHOD)(metadata=self.md(tok))
        await asyncio.sleep(0.2)  # it authenticates and waits for its Hello
        await self.expect_status("token-twice", lambda: self.raw_stream(channel, tok, [hello]))
        # hundreds of streams at once: half with the valid token (no Hello: one waits for
        # it, the others are refused at once), half with wrong ones
        n = self.a.streams
        t0 = time.monotonic()
        results = await asyncio.gather(
            *(self._one(channel, tok, None) if i % 2 else self._one(channel, f"bad-{i}", hello)
              for i in range(n))
        )  # fmt: skip
        opening.cancel()
        codes: dict[str, int] = {}
        for c in results:
            codes[c] = codes.get(c, 0) + 1
        summary = ",".join(f"{k}:{v}" for k, v in sorted(codes.items()))
        emit("attack", what="many-streams", code=summary,
             seconds=round(time.monotonic() - t0, 3), streams=n)  # fmt: skip
        # a flood of decisions on the bot's own stream (bounded)
        for i in range(self.a.flood):
            out.put_nowait(
                pb.BotMessage(decision=pb.Decision(request_id=f"flood-{i}", match_id="x"))
            )
            if i % 200 == 0:
                await asyncio.sleep(0)
        emit("attack", what="flood", code="SENT", count=self.a.flood)
        await self.expect_status("after-attacks-getinfo", pb_grpc.ArenaStub(channel).GetInfo(
            pb.GetInfoRequest(), timeout=5))  # fmt: skip
        self.attacked = True

    async def _one(self, channel: grpc.aio.Channel, token: str, hello: bytes | None) -> str:
        for attempt in range(_INTERNAL_TRIES):
            try:
                payloads = [] if hello is None else [hello]
                await asyncio.wait_for(self.raw_stream(channel, token, payloads), 15)
                return "OK"
            except grpc.aio.AioRpcError as e:
                # INTERNAL: the client's own write raced the referee's refusal (gRPC core,
                # see docs/protocol.md); a real client retries, and so does this one.
                if e.code() is grpc.StatusCode.INTERNAL and attempt < _INTERNAL_TRIES - 1:
                    await _after_internal(attempt)
                    continue
                # (INVALID_ARGUMENT: a stream of the valid token that never says Hello,
                # refused a second after another stream of the token came.)
                if e.code() not in (grpc.StatusCode.ALREADY_EXISTS,
                                    grpc.StatusCode.UNAUTHENTICATED,
                                    grpc.StatusCode.INVALID_ARGUMENT):  # fmt: skip
                    emit("odd-status", what="many-streams", code=e.code().name,
                         details=e.details())  # fmt: skip
                return e.code().name
            except TimeoutError:
                return "NO-ANSWER"
        return "NO-ANSWER"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--name", default="hostile")
    p.add_argument("--mode", default="honest", choices=("honest", "decisions", "streams", *KINDS))
    p.add_argument("--streams", type=int, default=300)
    p.add_argument("--flood", type=int, default=5000)
    p.add_argument("--max-seconds", type=float, default=300.0)
    a = p.parse_args()
    emit("start", mode=a.mode)
    watch_stalls(STALL_S)
    asyncio.run(Bot(a).run())
    emit("exit")


if __name__ == "__main__":
    main()
