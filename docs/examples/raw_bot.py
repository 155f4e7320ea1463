"""A bot without the SDK: grpcio and `arena.v1` generated from the proto (docs/protocol.md).

    ARENA_TOKEN=TOKEN .venv/bin/python docs/examples/raw_bot.py --arena HOST:PORT [--batch]

(or `--token TOKEN`, which any user of the machine can read in the process list; `--matches
N`: leave after N matches).

It follows each match's events (`seq` without gaps, the scores) and checks them against
the views, plays a greedy strategy, reconnects with back-off (resuming its seats) and stops
on an OK status. Exit 0: every match ended, no refusal, no disagreement.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import sys
import time
from collections.abc import Iterator

import grpc

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

POINTS = {1: 0, 2: 2, 3: 3, 4: 4, 5: 10, 6: 11}  # Rank -> card points (9 J Q K 10 A)
# Retried: the arena stopping or unreachable, a rival stream saying Hello, CANCELLED (this
# bot never cancels a call: the arena's gRPC cut it), our own gRPC's INTERNAL (a reset
# connection), RESOURCE_EXHAUSTED only with `retry-after-ms` (see run).
RETRY = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.INTERNAL,
}
Sink = queue.Queue[pb.BotMessage | None]


def say(*words: object) -> None:
    print("raw_bot:", *words, file=sys.stderr, flush=True)


def choose(v: pb.PlayerView) -> pb.Action:
    """Greedy: bid on card points, give and follow cheaply, win a trick when it can."""
    legal = list(v.legal_actions)
    kind = {a.WhichOneof("kind") for a in legal}
    by_kind = {k: [a for a in legal if a.WhichOneof("kind") == k] for k in kind}
    strength = sum(POINTS[c.rank] for c in v.hand)
    if "bid" in by_kind:
        bid = min(by_kind["bid"], key=lambda a: a.bid.amount)
        if bid.bid.amount <= 40 + strength or "pass" not in by_kind:
            return bid
    if "pass" in by_kind:
        return by_kind["pass"][0]
    if "give" in by_kind:
        return min(by_kind["give"], key=lambda a: (POINTS[a.give.card.rank], a.give.to_seat))
    if "contract" in by_kind:
        return min(by_kind["contract"], key=lambda a: a.contract.amount)
    if "play" not in by_kind:
        return legal[0]
    plays = by_kind["play"]
    declared = [a for a in plays if a.play.declare]
    if declared:
        return declared[0]
    if not v.trick:  # lead an ace, else the cheapest card
        return max(plays, key=lambda a: (a.play.card.rank == 6, -POINTS[a.play.card.rank]))
    led = v.trick[0].card.suit

    def strength_of(c: pb.Card) -> tuple[bool, bool, int]:
        return c.suit == v.trump != 0, c.suit == led, c.rank

    best = max(strength_of(s.card) for s in v.trick)
    winning = [a for a in plays if strength_of(a.play.card) > best]
    return min(winning or plays, key=lambda a: POINTS[a.play.card.rank])


class RawBot:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.seq: dict[str, int] = {}  # match id -> last event seen
        self.scores: dict[str, list[int]] = {}  # match id -> scores after the last deal
        self.ended: set[str] = set()
        self.left: int | None = args.matches
        self.faults = 0
        self.decisions = 0

    def fault(self, *words: object) -> None:
        self.faults += 1
        say("FAULT:", *words)

    def handle(self, msg: pb.ServerMessage, out: Sink) -> None:
        if msg.HasField("batch"):  # as if each had come alone; answers go back as one
            answers: Sink = queue.Queue()
            for inner in msg.batch.messages:
                self.handle(inner, answers)
            got = [m.decision for m in answers.queue if m is not None]
            if got:
                out.put(pb.BotMessage(decisions=pb.DecisionBatch(decisions=got)))
            if None in answers.queue:
                out.put(None)
            return
        for e in msg.events:  # applied before the message's own content
            if e.match_id in self.seq:
                if e.seq != self.seq[e.match_id] + 1:
                    self.fault(f"{e.match_id}: event {e.seq} after {self.seq[e.match_id]}")
                self.seq[e.match_id] = e.seq
                if e.HasField("deal_ended"):
                    self.scores[e.match_id] = list(e.deal_ended.scores)
        kind = msg.WhichOneof("kind")
        if kind == "match_started":
            ms = msg.match_started
            self.seq[ms.match_id] = ms.seq  # resumed: events up to it are not sent again
            self.scores[ms.match_id] = list(ms.view.scores)
            say("resumed" if ms.resumed else "seated in", ms.match_id, "seat", ms.seat)
        elif kind == "decision_request":
            r = msg.decision_request
            if list(r.view.scores) != self.scores.get(r.match_id):
                self.fault(f"{r.match_id}: events say {self.scores.get(r.match_id)}")
            if self.args.drop_after and self.decisions == self.args.drop_after:
                self.args.drop_after = 0  # once: leave the request unanswered, come back
                raise ConnectionResetError("dropping the connection on purpose")
            self.decisions += 1
            d = pb.Decision(request_id=r.request_id, match_id=r.match_id, action=choose(r.view))
            out.put(pb.BotMessage(decision=d))
        elif kind == "decision_rejected":
            if msg.decision_rejected.match_id in self.ended:
                return  # an answer that crossed its match's end: nothing went wrong
            self.fault("refused:", msg.decision_rejected.message)
        elif kind == "match_ended":
            me = msg.match_ended
            if me.match_id in self.ended:
                return  # sent again after a reconnect: already finished
            self.ended.add(me.match_id)
            self.seq.pop(me.match_id, None)
            fresh = any(e.match_id == me.match_id for e in msg.events)  # (not sent again)
            if fresh and self.scores.pop(me.match_id, None) != list(me.result.scores):
                self.fault(f"{me.match_id}: the events' scores differ from the result")
            say(me.match_id, "ended:", me.result.reason, list(me.result.places))
            if self.left is not None and me.result.reason != "interrupted":
                self.left -= 1
                if self.left == 0 and not self.seq:
                    out.put(None)  # half-close: seated nowhere, so no disconnect counts

    def session(self) -> tuple[grpc.StatusCode | None, bool, float]:
        """One stream: its status (None: dropped on purpose), whether it worked (it was
        welcomed and carried an event: a Welcome alone proves little, an arena may welcome
        and reset every stream), and the wait the arena asked for (`retry-after-ms`, in
        seconds; 0: none)."""
        out: Sink = queue.Queue()
        hello = pb.Hello(bot_name="raw", protocol_version=1, client="raw_bot.py")
        if self.args.batch:
            hello.features.append("batch")
        if self.left is not None:
            hello.matches = self.left
            hello.running.extend(self.seq)
        out.put(pb.BotMessage(hello=hello))

        def requests() -> Iterator[pb.BotMessage]:
            while (m := out.get()) is not None:
                yield m

        channel = grpc.insecure_channel(self.args.arena)
        auth = [("authorization", f"Bearer {self.args.token}")]
        call = pb_grpc.ArenaStub(channel).Play(requests(), metadata=auth)
        welcomed = worked = False
        try:
            for msg in call:
                if not welcomed:  # always first, alone
                    welcomed = msg.HasField("welcome")
                    continue
                worked = worked or bool(msg.events)
                self.handle(msg, out)
            return call.code(), worked, 0.0
        except ConnectionResetError as e:
            say(e)
            return None, worked, 0.0
        except grpc.RpcError as e:
            say("stream ended:", e.code(), e.details())
            wait = dict(e.trailing_metadata() or ()).get("retry-after-ms")
            return e.code(), worked, int(wait) / 1000 if wait else 0.0
        finally:
            out.put(None)
            channel.close()

    def run(self) -> int:
        backoff = 0.5  # doubling to 30 s, from 0.5 s again after a stream that worked
        while True:
            code, worked, asked = self.session()
            if code == grpc.StatusCode.OK or (self.left == 0 and not self.seq):
                break  # done for good
            if code is not None and code not in RETRY and not asked:
                say("giving up:", code)  # ABORTED: another process uses the token
                return 2
            backoff = 0.5 if worked else backoff
            if code is not None:
                time.sleep(max(asked, backoff * random.uniform(0.5, 1.0)))
                backoff = min(backoff * 2, 30.0)
        if self.seq:
            self.fault("done for good, but not every match ended:", list(self.seq))
        say(f"done: {len(self.ended)} matches, {self.decisions} decisions, {self.faults} faults")
        return 1 if self.faults else 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--arena", default="localhost:50051", help="HOST:PORT (default: %(default)s)")
    p.add_argument("--token", default=os.environ.get("ARENA_TOKEN"), help="default: $ARENA_TOKEN")
    p.add_argument("--batch", action="store_true", help="ask for Batch messages")
    p.add_argument("--matches", type=int, help="leave after this many matches")
    p.add_argument("--drop-after", type=int, default=0, help="drop the stream once, here")
    args = p.parse_args()
    if not args.token:  # ("Bearer None" would be refused, after retries, as UNAUTHENTICATED)
        p.error("no token: set ARENA_TOKEN or give --token")
    sys.exit(RawBot(args).run())
