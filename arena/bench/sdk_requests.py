"""The SDK's own work per decision request, counted in instructions: the real
``BotRunner`` handling, from the bytes read off the stream (``BotRunner._on_read``) to the
answer's bytes (``BotMessage.SerializeToString``, gRPC's serializer), fed the messages a
random bot was sent in real matches (docs/performance.md, "SDK changes of 2026-12-14")::

    .venv/bin/python -m arena.bench.sdk_requests               # hot µs per request
    .venv/bin/python -m arena.bench.sdk_requests --callgrind   # + instructions per request
    .venv/bin/python -m arena.bench.sdk_requests --profile     # cProfile's top functions
    .venv/bin/python -m arena.bench.sdk_requests --opcodes 40  # bytecodes per request

The matches are recorded first, in this process, without gRPC: the real ``Referee``,
``MatchRunner`` and ``Stream`` (its writer batches messages as on the wire), each seat an
SDK ``BotRunner`` with the random bot whose answers go back to the referee; the arena's
Welcome lists every feature, "ahead" and "batch" included. Two recordings of the same
presets (classic, 1001, 1001 with 4 players), the second with other seeds, are replayed
into fresh runners, each bot's messages in the order it got them.

Wall clock cannot resolve a few per cent on a shared machine; instructions can.
``--callgrind`` runs the replay under ``valgrind --tool=callgrind`` twice, the first
recording alone and then both: their difference is the second recording's requests, with
the start-up (imports, the first matches' items learnt) cancelled out, divided by its
request count. ``PYTHONHASHSEED`` is fixed, so two runs of the same code agree closely.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import io
import logging
import os
import pstats
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.bench.instructions import count_opcodes, opcodes_by_function
from arena.protocol import PROTOCOL_VERSION, message_bytes
from arena.referee import Referee, RefereeConfig
from arena.referee.core import FEATURES, SERVER_VERSION
from arena.referee.sessions import BotSession, Stream
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import PRESETS
from sdk import client
from sdk.client import BotRunner, _Outbox

__all__ = ["Recording", "record", "replay"]

#: The presets recorded, each at its own table size.
PRESETS_RECORDED = ("classic", "1001", "1001-4p")

#: One bot's messages as read off its stream (the wire bytes of each ``ServerMessage``).
Messages = list[bytes]


@dataclasses.dataclass
class Recording:
    """Every bot's messages of one recording, bot by bot (``preset/bot``)."""

    bots: dict[str, Messages]

    def requests(self) -> int:
        """The decision requests in it (a batch's counted one by one)."""
        n = 0
        for messages in self.bots.values():
            for data in messages:
                msg = pb.ServerMessage.FromString(data)
                inner = msg.batch.messages if msg.HasField("batch") else [msg]
                n += sum(m.HasField("decision_request") for m in inner)
        return n


class _Wire:
    """The bot's side of a call: what ``_Outbox.flush`` writes is serialized as gRPC's
    request serializer does, and handed to ``deliver`` (or dropped)."""

    __slots__ = ("deliver", "written")

    def __init__(self, deliver: Any = None) -> None:
        self.deliver = deliver
        self.written = 0

    async def write(self, msg: pb.BotMessage) -> None:
        data = msg.SerializeToString()
        self.written += 1
        if self.deliver is not None:
            self.deliver(data)

    async def done_writing(self) -> None:
        return None


def _runner() -> BotRunner:
    runner = BotRunner(RandomBot, "in-process", "token", name="random")
    runner.summary.connections = 1
    return runner


class _Bot:
    """One ``BotRunner`` as ``_session`` drives it: each read handled by ``_on_read``, the
    answers flushed after it, and a writer for the answers made later (after the bot is
    made, in its worker thread)."""

    def __init__(self, deliver: Any = None) -> None:
        self.runner = _runner()
        self.out = _Outbox()
        self.runner._out = self.out
        self.wire = _Wire(deliver)
        self.writer = asyncio.get_running_loop().create_task(self._write_loop())

    async def _write_loop(self) -> None:
        out = self.out
        while not out.closed:
            await out.wait()
            await out.flush(self.wire)

    async def read(self, data: bytes) -> None:
        out = self.out
        self.runner._on_read(data, out)
        if out and not out.busy:
            await out.flush(self.wire)

    async def settle(self) -> None:
        """Until the match steps in flight (a bot being made, a request behind it) end."""
        tasks = self.runner._tasks
        while tasks:
            await asyncio.wait(set(tasks))

    async def close(self) -> None:
        await self.settle()
        self.out.put_nowait(None)
        await self.writer


async def _record_preset(preset: str, tables: int, matches: int, max_deals: int, seed: int
                         ) -> dict[str, Messages]:  # fmt: skip
    rules = dataclasses.replace(PRESETS[preset], max_deals=max_deals)
    referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=600_000))
    loop = asyncio.get_running_loop()
    names = [f"b{i}" for i in range(rules.players)]
    got: dict[str, Messages] = {}
    bots: list[_Bot] = []
    writers = []
    for name in names:
        referee.add_bot(name, f"token-{name}")
        session = referee.session(name)
        stream = Stream("in-process", batch=True)
        stream.results_once = stream.deal_once = stream.ahead = True

        def deliver(data: bytes, session: BotSession = session) -> None:
            # (parsed anew, as the referee's read does; on the next turn of the loop)
            loop.call_soon(referee.on_message, session, pb.BotMessage.FromString(data))

        bot = _Bot(deliver)
        bots.append(bot)
        messages = got[f"{preset}/{name}"] = []

        async def write(msg: pb.ServerMessage | bytes, bot: _Bot = bot,
                        messages: Messages = messages) -> None:  # fmt: skip
            data = message_bytes(msg)
            messages.append(data)
            await bot.read(data)

        writers.append(loop.create_task(stream.write_loop(write)))
        stream.put(pb.ServerMessage(welcome=pb.Welcome(
            bot_name=name, server_version=SERVER_VERSION, protocol_version=PROTOCOL_VERSION,
            features=FEATURES)))  # fmt: skip
        session.attach(stream)

    async def table(t: int) -> None:
        for i in range(matches):
            seats = names[t % len(names) :] + names[: t % len(names)]
            await referee.run_match(f"{preset}-t{t}-{i}", rules, seed + 100 * t + i, seats)

    await asyncio.gather(*(table(t) for t in range(tables)))
    for name in names:
        attached = referee.session(name).stream
        assert attached is not None
        attached.close()
    await asyncio.gather(*writers)
    for bot in bots:
        await bot.close()
    return got


def record(seed: int, tables: int = 4, matches: int = 2, max_deals: int = 8) -> Recording:
    """Play ``tables`` tables of ``matches`` matches of each preset, every seat the random
    bot, and keep what each bot was sent."""

    async def run() -> dict[str, Messages]:
        got: dict[str, Messages] = {}
        for preset in PRESETS_RECORDED:
            got.update(await _record_preset(preset, tables, matches, max_deals, seed))
        return got

    # The referee's per-match lines quiet while recording, and as they were after: a
    # caller in a longer process (the tests) kept a quiet "arena" logger for good, and a
    # later test saw none of the runner's INFO lines.
    arena_log = logging.getLogger("arena")
    level = arena_log.level
    arena_log.setLevel(logging.WARNING)
    try:
        return Recording(asyncio.run(run()))
    finally:
        arena_log.setLevel(level)


def _save(recordings: Sequence[Recording], path: Path) -> None:
    """``path``: for each recording, its bots, each its messages (lengths and bytes)."""
    parts = [struct.pack("<I", len(recordings))]
    for rec in recordings:
        parts.append(struct.pack("<I", len(rec.bots)))
        for name, messages in rec.bots.items():
            key = name.encode()
            parts.append(struct.pack("<II", len(key), len(messages)) + key)
            for data in messages:
                parts.append(struct.pack("<I", len(data)) + data)
    path.write_bytes(b"".join(parts))


def _load(path: Path) -> list[Recording]:
    raw = path.read_bytes()
    pos = 0

    def take(fmt: str) -> tuple[int, ...]:
        nonlocal pos
        out = struct.unpack_from(fmt, raw, pos)
        pos += struct.calcsize(fmt)
        return out

    def data(n: int) -> bytes:
        nonlocal pos
        pos += n
        return raw[pos - n : pos]

    recordings = []
    for _ in range(take("<I")[0]):
        bots: dict[str, Messages] = {}
        for _ in range(take("<I")[0]):
            key_len, count = take("<II")
            name = data(key_len).decode()
            bots[name] = [data(take("<I")[0]) for _ in range(count)]
        recordings.append(Recording(bots))
    return recordings


def replay(recordings: Sequence[Recording]) -> tuple[int, int]:
    """Each recording's bots, one after the other, each into a fresh runner; the
    decisions answered (ahead ones too) and the answers written."""

    async def run() -> tuple[int, int]:
        decisions = written = 0
        for rec in recordings:
            for messages in rec.bots.values():
                bot = _Bot()
                for data in messages:
                    await bot.read(data)
                    if bot.runner._tasks:
                        await bot.settle()
                await bot.close()
                if not bot.runner._inline:  # (the bench would measure another path)
                    raise RuntimeError("the bot was taken for slow: measured off the loop")
                decisions += bot.runner.summary.decisions
                written += bot.wire.written
        return decisions, written

    # Under callgrind (or a tracer) everything runs some 50 times slower: a quick bot's
    # decision of a few µs must not pass the 5 ms that sends it to the worker thread.
    slow, client._SLOW_S = client._SLOW_S, float("inf")
    try:
        return asyncio.run(run())
    finally:
        client._SLOW_S = slow


def _quiet() -> None:
    logging.getLogger("sdk").setLevel(logging.WARNING)


def _hot_us(recordings: Sequence[Recording], passes: int) -> list[float]:
    """µs per request of the last recording, thread CPU time, a pass each (after one pass
    over all of them)."""
    replay(recordings)
    last = recordings[-1:]
    n = last[0].requests()
    out = []
    for _ in range(passes):
        t0 = time.thread_time()
        replay(last)
        out.append((time.thread_time() - t0) / n * 1e6)
    return out


def _opcodes(recordings: Sequence[Recording], top: int) -> str:
    """The Python bytecodes run per request of the last recording, by function (after a
    pass over all of them): ``instructions.count_opcodes``."""
    replay(recordings)
    counts = count_opcodes(lambda: replay(recordings[-1:]))
    return opcodes_by_function(counts, recordings[-1].requests(), "request", top)


def _instructions(path: Path, count: int, keep: Path | None) -> int:
    """The instructions callgrind counts in a replay of the first ``count`` recordings."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
               sys.executable, "-m", "arena.bench.sdk_requests", "--replay", str(path),
               "--count", str(count)]  # fmt: skip
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)  # fmt: skip
        text = out.read_text()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(out, keep / f"callgrind.out.{count}")
    for line in text.splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in callgrind's output of {' '.join(cmd)}")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m arena.bench.sdk_requests",
        description="The SDK's handling of a decision request (the bytes read to the "
        "answer's bytes), replayed from recorded matches of the random bot: hot µs per "
        "request, and with --callgrind instructions per request.",
    )
    p.add_argument("--tables", type=int, default=4, help="tables per preset recorded")
    p.add_argument("--matches", type=int, default=2, help="matches per table")
    p.add_argument("--max-deals", type=int, default=8)
    p.add_argument("--passes", type=int, default=7, help="timed passes (the min is shown)")
    p.add_argument("--callgrind", action="store_true",
                   help="count instructions per request under valgrind (two runs)")  # fmt: skip
    p.add_argument("--keep", type=Path, help="keep callgrind's output files in this directory")
    p.add_argument("--recording", type=Path,
                   help="replay this recording (written here if it does not exist)")  # fmt: skip
    p.add_argument("--profile", action="store_true", help="cProfile's top functions of a pass")
    p.add_argument("--opcodes", type=int, metavar="TOP", default=0,
                   help="Python bytecodes run per request, the TOP functions")  # fmt: skip
    p.add_argument("--replay", type=Path, help=argparse.SUPPRESS)  # (what callgrind runs)
    p.add_argument("--count", type=int, default=2, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    _quiet()
    if a.replay is not None:
        replay(_load(a.replay)[: a.count])
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = a.recording or Path(tmp) / "recording.bin"
        if not path.exists():
            _save([record(seed, a.tables, a.matches, a.max_deals) for seed in (1, 10_001)],
                  path)  # fmt: skip
        recordings = _load(path)
        n = recordings[-1].requests()
        decisions, _ = replay(recordings[-1:])
        print(
            f"recorded: {n} requests ({decisions} decisions with those answered ahead) "
            f"in the measured recording, {recordings[0].requests()} in the first"
        )
        if a.profile:
            prof = cProfile.Profile()
            prof.runcall(replay, recordings[-1:])
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(40)
            print(s.getvalue())
        if a.opcodes:
            print(_opcodes(recordings, a.opcodes))
        hot = _hot_us(recordings, a.passes)
        print(
            f"hot: {min(hot):.1f} µs per request (min of {a.passes} passes; "
            f"{' '.join(f'{h:.1f}' for h in hot)})"
        )
        if a.callgrind:
            one = _instructions(path, 1, a.keep)
            both = _instructions(path, 2, a.keep)
            print(
                f"callgrind: {(both - one) / n:,.0f} instructions per request "
                f"({both - one:,} for {n} requests; {one:,} for the start-up and the "
                f"first recording), {(both - one) / decisions:,.0f} per decision"
            )


if __name__ == "__main__":
    main()
