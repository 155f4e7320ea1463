"""The referee's own work per decision, without gRPC: the real ``Referee``, ``MatchRunner``
and ``BotSession`` against in-process streams whose bot answers every request at once with
its first legal action. What is left of the referee's CPU per decision once gRPC's is
taken away (docs/performance.md, "Where the time goes")::

    .venv/bin/python -m arena.bench.referee_logic --tables 10 --matches 20
    .venv/bin/python -m arena.bench.referee_logic --profile    # cProfile's top functions
    .venv/bin/python -m arena.bench.referee_logic --as-sdk --tables 1 --matches 4 --opcodes 40
                                                    # Python bytecodes per decision, by function
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import pstats
import time
from collections.abc import Sequence

from arena.bench.instructions import count_opcodes, opcodes_by_function
from arena.protocol import action_to_pb, message_bytes
from arena.referee import Referee, RefereeConfig
from arena.referee.lag import LoopLag
from arena.referee.sessions import BotSession, Stream
from arena.v1 import arena_pb2 as pb
from engine import PRESETS

__all__ = ["referee_logic", "referee_opcodes", "request_ids"]

#: The first byte of a ``ServerMessage`` holding a ``decision_request`` (field 4, its first
#: field written).
_REQUEST_FIRST = bytes([4 << 3 | 2])


def _varint_at(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i:]``, and the index past it."""
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 127) << shift
        if b < 128:
            return n, i
        shift += 7


def request_ids(data: bytes) -> tuple[str, str] | None:
    """(match id, request id) of a ``ServerMessage``'s wire bytes that hold a
    ``decision_request`` (as protobuf writes it: its fields in number order, the ids
    first), read without parsing the view; ``None`` for any other message."""
    if not data.startswith(_REQUEST_FIRST):
        return None
    ids = ["", "", ""]  # by field number: request_id 1, match_id 2
    _, i = _varint_at(data, 1)
    for _ in range(2):
        key = data[i] if i < len(data) else 0
        if key not in (1 << 3 | 2, 2 << 3 | 2):
            break
        n, j = _varint_at(data, i + 1)
        ids[key >> 3] = data[j : j + n].decode()
        i = j + n
    return ids[2], ids[1]


class _AnswerAtOnce(Stream):
    """A stream whose bot answers each request, as soon as it is queued, with its first
    legal action (on the next turn of the event loop, as a read would). Each message is
    made into its wire bytes, as the real stream's write has gRPC do (``message_bytes``):
    the referee's work; what the bot reads of it is taken from those bytes' ids and the
    game, not parsed (the bot's work, not the referee's)."""

    __slots__ = ("answered", "referee", "session")

    def __init__(self, referee: Referee, session: BotSession, as_sdk: bool = False) -> None:
        super().__init__("in-process")
        # As the SDK's bots ask (their Hello's features): each deal result, and each bid
        # and completed trick of a deal, sent once.
        self.results_once = self.deal_once = as_sdk
        self.referee = referee
        self.session = session
        self.answered = 0

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        ids = request_ids(message_bytes(msg))
        if ids is not None:
            match_id, request_id = ids
            # (the view's first legal action: the game's, the request's seat to act)
            first = self.session.seats[match_id].match.game.legal_actions()[0]
            answer = pb.Decision(
                request_id=request_id, match_id=match_id, action=action_to_pb(first)
            )
            self.answered += 1
            asyncio.get_running_loop().call_soon(self.referee.on_decision, self.session, answer)


async def _run(tables: int, matches: int, max_deals: int, as_sdk: bool) -> tuple[int, float]:
    referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
    streams = []
    for name in ("a", "b", "c"):
        referee.add_bot(name, f"token-{name}")
        session = referee.session(name)
        stream = _AnswerAtOnce(referee, session, as_sdk)
        session.attach(stream)
        streams.append(stream)
    rules = dataclasses.replace(PRESETS["classic"], max_deals=max_deals)

    async def table(t: int) -> None:
        for i in range(matches):
            await referee.run_match(f"t{t}-{i}", rules, 1000 * t + i, ["a", "b", "c"])

    start = time.process_time()
    await asyncio.gather(*(table(t) for t in range(tables)))
    return sum(s.answered for s in streams), time.process_time() - start


def referee_logic(
    tables: int = 10, matches: int = 20, max_deals: int = 12, as_sdk: bool = False
) -> dict[str, float]:
    """Decisions answered and the referee's CPU µs per decision (process time); ``as_sdk``:
    the views as the SDK's bots ask for them ("results_once", "deal_once")."""
    decisions, cpu = asyncio.run(_run(tables, matches, max_deals, as_sdk))
    return {"decisions": decisions, "cpu_us_per_decision": round(cpu / decisions * 1e6, 1)}


def referee_opcodes(
    tables: int = 1, matches: int = 4, max_deals: int = 12, as_sdk: bool = True, top: int = 40
) -> str:
    """The Python bytecodes the referee's logic runs per decision, by function (the ``top``
    ones): ``referee_logic``'s matches counted by ``instructions.count_opcodes``, after one
    match per table played untraced (the first calls, imports and caches out of the count)."""
    referee_logic(tables, 1, max_deals, as_sdk)
    got: dict[str, float] = {}

    def run() -> None:
        got.update(referee_logic(tables, matches, max_deals, as_sdk))

    counts = count_opcodes(run)
    return opcodes_by_function(counts, int(got["decisions"]), "decision", top)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m arena.bench.referee_logic",
        description="The referee's own work per decision, without gRPC: the real Referee, "
        "MatchRunner and BotSession against in-process streams whose bot answers every "
        "request at once with its first legal action (docs/performance.md).",
    )
    p.add_argument("--tables", type=int, default=10,
                   help="matches played at once (default: %(default)s)")  # fmt: skip
    p.add_argument("--matches", type=int, default=20,
                   help="matches per table (default: %(default)s)")  # fmt: skip
    p.add_argument("--max-deals", type=int, default=12,
                   help="deal cap per match (default: %(default)s)")  # fmt: skip
    p.add_argument("--as-sdk", action="store_true",
                   help="views as the SDK's bots ask for them: each deal result, bid and "
                        "completed trick sent once (default: every view whole)")  # fmt: skip
    p.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    p.add_argument("--lag-period", type=float, metavar="S",
                   help="the loop-stall meter's tick (default: the referee's, "
                        f"{LoopLag.PERIOD:g} s): under callgrind, 50-100 times slower, it "
                        "ticks about once a decision, where it ticks once in dozens without "
                        "it, and how often depends on the machine's load; a long one keeps "
                        "those ticks out of the count")  # fmt: skip
    p.add_argument("--opcodes", type=int, metavar="TOP", default=0,
                   help="print the Python bytecodes run per decision, the TOP functions "
                        "(traced: a hundred times slower)")  # fmt: skip
    a = p.parse_args(argv)
    if a.lag_period is not None:
        if not a.lag_period > 0:
            p.error(f"--lag-period must be a number of seconds over 0, not {a.lag_period:g}")
        LoopLag.PERIOD = a.lag_period
    if a.opcodes:
        print(referee_opcodes(a.tables, a.matches, a.max_deals, a.as_sdk, a.opcodes))
        return
    profiler = cProfile.Profile() if a.profile else None
    if profiler is not None:
        profiler.enable()
    out = referee_logic(a.tables, a.matches, a.max_deals, a.as_sdk)
    if profiler is not None:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    print(out)


if __name__ == "__main__":
    main()
