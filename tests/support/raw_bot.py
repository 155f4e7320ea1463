"""A bot that speaks the raw protocol (no SDK, no engine): the referee tests' opponent.

Run as a separate process::

    python tests/support/raw_bot.py --target 127.0.0.1:PORT --token T --mode random \
        [--matches N] [--capture FILE] [--seed S]

Modes (also the seed of the hostile-bot suite):

- ``random``      a legal action from ``view.legal_actions`` (passes often, declares
                  marriages, plays high cards: matches reach the target in reasonable time)
- ``first``       always the first legal action
- ``silent``      never answers a decision
- ``late``        answers after ``--delay-ms``
- ``illegal``     answers an action that is not legal (every ``--bad-every``-th decision)
- ``malformed``   answers an action with no kind / a play without a card
- ``wrong-request`` first answers with a wrong request id, then correctly
- ``disconnect``  drops the stream at the ``--after``-th decision that comes mid-trick,
                  reconnects after ``--reconnect-delay`` seconds and plays on
- ``other-match`` plays, and also answers for match ``--other-match`` (not its own)
- ``wrong-token`` connects (with ``--token``) and reports the status it gets
- ``no-hello``    sends a Decision as its first message
- ``dup``         opens a second stream with the same token while the first is open; it
                  reports the first's status (the second replaces it)

``--batch`` says Hello with the "batch" feature: the bot unpacks each ``Batch`` (capturing
its messages one by one, so the capture reads as if each had come alone) and sends the
answers that queue up together as one ``DecisionBatch``.

The last stdout line is a JSON summary: ``status`` (``OK`` or a gRPC status name),
``matches`` ended, ``rejected`` incident names, ``welcome`` name, ``reconnects``.
``--capture FILE`` writes every received ``ServerMessage`` (base64, one per line; ``b:``
first when it came inside a ``Batch``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import random
import sys
from typing import Any

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

_MARRIAGE = {1: 40, 2: 60, 3: 80, 4: 100}


def _marriages(hand: Any) -> int:
    v = 0
    for suit, value in _MARRIAGE.items():
        ranks = {c.rank for c in hand if c.suit == suit}
        if pb.RANK_KING in ranks and pb.RANK_QUEEN in ranks:
            v += value
    return v


def choose(view: pb.PlayerView, rng: random.Random) -> pb.Action:
    """A legal action, chosen so that matches end: pass mostly, declare, play high."""
    legal = list(view.legal_actions)
    kinds = {a.WhichOneof("kind") for a in legal}
    if "pass" in kinds:
        bids = [a for a in legal if a.WhichOneof("kind") == "bid"]
        passes = [a for a in legal if a.WhichOneof("kind") == "pass"]
        m = _marriages(view.hand)
        if bids and m and bids[0].bid.amount <= 100 + m:
            return bids[0]
        if bids and rng.random() >= 0.9:
            return bids[0]
        return passes[0]
    declares = [a for a in legal if a.WhichOneof("kind") == "play" and a.play.declare]
    if declares:
        return declares[0]
    if "contract" in kinds:
        return legal[0]
    if kinds == {"play"}:
        return max(legal, key=lambda a: (a.play.card.rank, rng.random()))
    return rng.choice(legal)


def illegal_for(view: pb.PlayerView) -> pb.Action:
    """An action that is certainly not legal now."""
    if view.phase == pb.PHASE_PLAYING:
        held = {(c.suit, c.rank) for c in view.hand}
        for s in range(1, 5):
            for r in range(1, 7):
                if (s, r) not in held:
                    return pb.Action(play=pb.PlayCard(card=pb.Card(suit=s, rank=r)))  # type: ignore[arg-type]
    return pb.Action(bid=pb.Bid(amount=3))  # off the step in any phase


class RawBot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.rng = random.Random(args.seed)
        self.matches = 0
        self.rejected: list[str] = []
        self.welcome = ""
        self.reconnects = 0
        self.decisions = 0
        self.capture = open(args.capture, "a") if args.capture else None  # noqa: SIM115
        self.rngs: dict[tuple[str, int], random.Random] = {}
        self.dropped = False
        self.seats: dict[str, int] = {}
        self.status = "OK"
        self.details = ""  # of the status, in mode "dup"
        self.batches = 0  # Batch messages received (--batch)
        self.batches_sent = 0  # DecisionBatch messages sent (--batch)

    def rng_for(self, match_id: str, seat: int) -> random.Random:
        key = (match_id, seat)
        r = self.rngs.get(key)
        if r is None:
            r = self.rngs[key] = random.Random(f"{self.a.seed}:{match_id}:{seat}")
        return r

    def metadata(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.a.token}")] if self.a.token else []

    def hello(self) -> pb.BotMessage:
        features = ["batch"] if self.a.batch else []
        return pb.BotMessage(
            hello=pb.Hello(
                bot_name=self.a.name, protocol_version=1, client="raw_bot/1", features=features
            )
        )

    async def run(self) -> str:
        internal_retries = 7  # (8 tries, as tests/support/core_internal.py's TRIES)
        while True:
            try:
                again = await self.session()
            except grpc.aio.AioRpcError as e:
                # A refused bidi stream can reach a client as INTERNAL when the server's
                # RST_STREAM overtakes its trailers (a gRPC race under load, not the
                # referee's answer), or when its write races the refusal (grpc/grpc#36066,
                # "Internal error from Core"); a real client retries, and so does this one.
                if e.code() is grpc.StatusCode.INTERNAL and internal_retries > 0:
                    internal_retries -= 1
                    await asyncio.sleep(0.2)
                    continue
                return e.code().name
            if not again:
                return self.status
            self.reconnects += 1
            await asyncio.sleep(self.a.reconnect_delay)

    async def session(self) -> bool:
        """One stream; True to reconnect afterwards."""
        a = self.a
        async with grpc.aio.insecure_channel(a.target) as channel:
            stub = pb_grpc.ArenaStub(channel)
            call = stub.Play(metadata=self.metadata())
            if a.mode == "no-hello":
                await call.write(pb.BotMessage(decision=pb.Decision(request_id="1", match_id="x")))
            else:
                await call.write(self.hello())
            if a.mode == "dup":
                self.record(await call.read())
                # A second stream with the same token is welcomed (the newest wins) ...
                second = stub.Play(metadata=self.metadata())
                await second.write(self.hello())
                self.welcome = (await second.read()).welcome.bot_name
                # ... and the first ends, with the status this mode reports.
                with contextlib.suppress(grpc.aio.AioRpcError):
                    while await call.read() is not grpc.aio.EOF:
                        pass
                self.status = (await call.code()).name
                self.details = await call.details()
                second.cancel()
                return False
            wq: asyncio.Queue[pb.BotMessage] = asyncio.Queue()

            async def writer() -> None:
                while True:
                    m = await wq.get()
                    if a.batch and m.WhichOneof("kind") == "decision" and not wq.empty():
                        # answers queued together go out as one DecisionBatch
                        out = pb.BotMessage()
                        out.decisions.decisions.append(m.decision)
                        while not wq.empty():
                            out.decisions.decisions.append(wq.get_nowait().decision)
                        m = out
                        self.batches_sent += 1
                    await call.write(m)

            wtask = asyncio.create_task(writer())
            tasks: set[asyncio.Task[None]] = set()
            try:
                while True:
                    msg = await call.read()
                    if msg is grpc.aio.EOF:
                        return False
                    if msg.WhichOneof("kind") == "batch":
                        self.batches += 1
                        inner = list(msg.batch.messages)
                    else:
                        inner = [msg]
                    for m in inner:
                        self.record(m, batched=len(inner) > 1 or m is not msg)
                        again = await self.handle(m, call, wq, tasks)
                        if again is not None:
                            return again
            finally:
                wtask.cancel()
                for t in tasks:
                    t.cancel()

    async def handle(
        self,
        msg: pb.ServerMessage,
        call: Any,
        wq: asyncio.Queue[pb.BotMessage],
        tasks: set[asyncio.Task[None]],
    ) -> bool | None:
        """One message (of a batch, or alone); a bool ends the session (True: reconnect)."""
        a = self.a
        kind = msg.WhichOneof("kind")
        if kind == "welcome":
            self.welcome = msg.welcome.bot_name
        elif kind == "match_started":
            self.seats[msg.match_started.match_id] = msg.match_started.seat
        elif kind == "decision_rejected":
            self.rejected.append(pb.Incident.Name(msg.decision_rejected.incident))
        elif kind == "match_ended":
            self.matches += 1
            if a.matches and self.matches >= a.matches:
                await asyncio.sleep(0.05)  # let queued answers go out
                await call.done_writing()
                return False
        elif kind == "decision_request":
            if self.should_drop(msg.decision_request):
                self.dropped = True
                call.cancel()
                return True
            if a.mode == "random" and a.batch:  # answer at once: replies queue together
                await self.answer(msg.decision_request, wq)
            else:
                t = asyncio.create_task(self.answer(msg.decision_request, wq))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
        return None

    def should_drop(self, req: pb.DecisionRequest) -> bool:
        if self.a.mode != "disconnect" or self.dropped:
            return False
        self.decisions += 1
        v = req.view
        return self.decisions >= self.a.after and v.phase == pb.PHASE_PLAYING and len(v.trick) > 0

    def record(self, msg: Any, batched: bool = False) -> None:
        """Capture ``msg``: one base64 line, prefixed ``b:`` when it came in a ``Batch``."""
        if self.capture is not None and isinstance(msg, pb.ServerMessage):
            line = base64.b64encode(msg.SerializeToString()).decode()
            self.capture.write(("b:" if batched else "") + line + "\n")
            self.capture.flush()

    async def answer(self, req: pb.DecisionRequest, wq: asyncio.Queue[pb.BotMessage]) -> None:
        a = self.a
        mode = a.mode
        n = self.decisions = self.decisions + (0 if mode == "disconnect" else 1)
        rng = self.rng_for(req.match_id, req.view.seat)
        action = choose(req.view, rng)
        rid = req.request_id
        if mode == "silent":
            return
        if mode == "late":
            await asyncio.sleep(a.delay_ms / 1000)
        bad = n % a.bad_every == 0
        if mode == "illegal" and bad:
            action = illegal_for(req.view)
        elif mode == "malformed" and bad:
            action = pb.Action() if n % 2 else pb.Action(play=pb.PlayCard(declare=True))
        elif mode == "wrong-request":
            wq.put_nowait(
                pb.BotMessage(
                    decision=pb.Decision(request_id=rid + "x", match_id=req.match_id, action=action)
                )
            )
        elif mode == "other-match":
            wq.put_nowait(
                pb.BotMessage(
                    decision=pb.Decision(request_id=rid, match_id=a.other_match, action=action)
                )
            )
        wq.put_nowait(
            pb.BotMessage(
                decision=pb.Decision(request_id=rid, match_id=req.match_id, action=action)
            )
        )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=True)
    p.add_argument("--token", default="")
    p.add_argument("--name", default="raw")
    p.add_argument("--mode", default="random")
    p.add_argument("--matches", type=int, default=0, help="exit after this many matches")
    p.add_argument("--capture", default="")
    p.add_argument("--seed", default="0")
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--bad-every", type=int, default=1)
    p.add_argument("--after", type=int, default=5)
    p.add_argument("--reconnect-delay", type=float, default=0.3)
    p.add_argument("--other-match", default="")
    p.add_argument("--batch", action="store_true", help='say Hello with the "batch" feature')
    args = p.parse_args()
    bot = RawBot(args)
    status = asyncio.run(bot.run())
    summary = {
        "status": status,
        "details": bot.details,
        "matches": bot.matches,
        "rejected": bot.rejected,
        "welcome": bot.welcome,
        "reconnects": bot.reconnects,
        "batches": bot.batches,
        "batches_sent": bot.batches_sent,
    }
    sys.stdout.write(json.dumps(summary) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
