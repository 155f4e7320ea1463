"""The ceiling: a bare ``grpc.aio`` ping-pong with the referee's topology and messages.

What the referee is measured against (``arena bench``'s ``referee`` section divides by it).
It does everything a remote decision needs from gRPC and nothing else:

- one server process and three client processes (the three bots), each client one
  bidirectional ``arena.v1.Arena/Play`` stream, as the SDK opens;
- the messages are the real ones, of the real size: the server sends a ``ServerMessage``
  with a ``DecisionRequest`` whose ``PlayerView`` comes from ``arena.protocol.view_to_pb``
  (with the events a seat gets piggy-backed), the one of median size over a random-play
  match as the referee would send it (see :func:`sample_messages`); the client answers each
  with a ``BotMessage`` ``Decision`` echoing the request and match ids;
- one table: the server asks seat 0, waits for the answer, asks seat 1, ... (one request in
  flight, as in a game); ten tables: ten such sequences at once, multiplexed over the same
  three streams (the referee also keeps one stream per bot).

Measured: round trips per second over a fixed window after a warm-up, and the round-trip
latency (p50/p99, from before the write to the answer read). Each measurement runs in fresh
processes, so the gRPC core's ``GRPC_EXPERIMENTS`` setting (read when gRPC loads) is
measured both as inherited and with the event engine switched off
(:data:`EXPERIMENTS_OFF`)::

    .venv/bin/python -m arena.bench.grpc_baseline --seconds 3
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from arena import strict_json

Popen = subprocess.Popen[str]

__all__ = [
    "EXPERIMENTS_OFF",
    "ON_MARK",
    "PYTHON",
    "SETTINGS",
    "Window",
    "bench_grpc_baseline",
    "count_args",
    "cpu_seconds",
    "experiment_env",
    "follow_server",
    "measure",
    "parse_counts",
    "percentile",
    "read_port",
    "sample_messages",
    "warmup_for",
    "with_cpu",
]

#: ``GRPC_EXPERIMENTS`` value that switches gRPC's EventEngine off for clients and servers.
EXPERIMENTS_OFF = "-event_engine_client,-event_engine_listener"

#: The settings measured: name -> ``GRPC_EXPERIMENTS`` value (``None``: as inherited).
SETTINGS: dict[str, str | None] = {"inherited": None, "event_engine_off": EXPERIMENTS_OFF}

#: Ruleset and deal cap of the sampled match (the default tournament's: classic, 12 deals).
SAMPLE_PRESET = "classic"
SAMPLE_MAX_DEALS = 12

_READY_TIMEOUT_S = 60.0

#: The command that starts a measured Python process (``arena.bench.breakdown`` puts its
#: probes in front).
PYTHON: list[str] = [sys.executable]

#: Called by :func:`follow_server` with ``"START"`` or ``"END"`` and the pids of the
#: measured processes (the server's first) as the server prints that line, before the CPU
#: is read (``arena.bench.instructions`` zeroes and dumps callgrind's counters there).
ON_MARK: Callable[[str, Sequence[int]], None] | None = None


# ----------------------------------------------------------------------------- messages


def sample_messages(seeds: Sequence[int] = (1, 2, 3)) -> dict[str, Any]:
    """Play random matches as the referee would message them (to a bot asking for
    "results_once" and "deal_once", as the SDK's do: docs/protocol.md); return the median-size
    ``ServerMessage`` (decision request + piggy-backed events) and a ``BotMessage``
    decision, serialized, with the size statistics of the match.

    Keys: ``request`` / ``decision`` (bytes), ``request_bytes`` (median), ``request_mean``,
    ``request_max``, ``decision_bytes``, ``actions_per_deal`` (every action),
    ``decisions_per_deal`` (actions with a choice: the round trips of a deal when forced
    moves are played by the referee).
    """
    requests: list[Any] = []
    decisions: list[Any] = []
    actions = deals = 0
    for seed in seeds:
        a, d = _sample_match(SAMPLE_PRESET, SAMPLE_MAX_DEALS, seed, requests, decisions)
        actions += a
        deals += d
    order = sorted(range(len(requests)), key=lambda i: requests[i].ByteSize())
    mid = order[len(order) // 2]
    sizes = [m.ByteSize() for m in requests]
    return {
        "request": requests[mid].SerializeToString(),
        "decision": decisions[mid].SerializeToString(),
        "request_bytes": sizes[mid],
        "request_mean": round(statistics.fmean(sizes), 1),
        "request_max": max(sizes),
        "decision_bytes": decisions[mid].ByteSize(),
        "actions_per_deal": round(actions / deals, 2),
        "decisions_per_deal": round(len(requests) / deals, 2),
    }


def _sample_match(
    preset: str, max_deals: int, seed: int, requests: list[Any], decisions: list[Any]
) -> tuple[int, int]:
    """One random match; appends its requests and decisions; returns (actions, deals)."""
    from arena.protocol import action_to_pb, seat_action_to_pb, view_to_pb
    from arena.v1 import arena_pb2 as pb
    from engine import PRESETS, Game, observe, public_action

    ruleset = dataclasses.replace(PRESETS[preset], max_deals=max_deals)
    names = [f"bot-{i}" for i in range(ruleset.players)]
    game = Game.new(ruleset, seed, names)
    rng = random.Random(seed)
    match_id = "bench-000"
    events: list[list[Any]] = [[] for _ in names]
    # The deal results each seat was sent: a request's view leaves them out, as the referee
    # does for a bot that asks for "results_once" (the SDK's bots, those of the referee's
    # section), so the ping-pong's messages are the size of the real ones.
    sent = [0] * len(names)
    # Likewise the deal's bids and completed tricks of the seat's last view of the deal
    # ("deal_once"): (deal number, bids, tricks) it was sent.
    dealt: list[tuple[int, int, int]] = [(-1, 0, 0)] * len(names)
    actions = seq = 0
    while not game.is_over:
        seat = game.to_act
        assert seat is not None
        legal = game.legal_actions()
        action = legal[0] if len(legal) == 1 else rng.choice(legal)
        if len(legal) > 1:
            msg = pb.ServerMessage()
            req = msg.decision_request
            req.request_id = str(len(requests) + 1)  # the referee counts per match
            req.match_id = match_id
            req.deal_number = game.deal_number
            seen = observe(game, seat)
            deal, bids, tricks = dealt[seat]
            if deal != game.deal_number:
                bids = tricks = 0
            view_to_pb(seen, req.view, sent[seat], bids, tricks)
            sent[seat] = len(game.deal_results)
            dealt[seat] = (game.deal_number, len(seen.bids), len(seen.tricks))
            req.time_limit_ms = 1000
            req.time_bank_ms = 10000
            msg.events.extend(events[seat])
            events[seat].clear()
            requests.append(msg)
            decisions.append(
                pb.BotMessage(
                    decision=pb.Decision(
                        request_id=req.request_id, match_id=match_id, action=action_to_pb(action)
                    )
                )
            )
        game.apply_trusted(action)
        actions += 1
        seq += 1
        for s in range(len(names)):
            ev = pb.Event(match_id=match_id, seq=seq, source=pb.ACTION_SOURCE_BOT)
            ev.action.CopyFrom(seat_action_to_pb(seat, public_action(action, seat, s)))
            events[s].append(ev)
    return actions, max(1, len(game.deal_results))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def warmup_for(seconds: float) -> float:
    """The warm-up before a measuring window of ``seconds``: a third of it, 0.2 to 1 s."""
    return min(1.0, max(0.2, seconds / 3))


class Window:
    """A measured server's warm-up and window: ``warmup`` and ``seconds`` of wall time or,
    with ``counts`` = (warm-up, window), that many decisions (round trips) each: the same
    work whatever the machine's speed (``arena.bench.instructions``, under valgrind)."""

    def __init__(self, warmup: float, seconds: float, counts: tuple[int, int] | None) -> None:
        self.warmup, self.seconds, self.counts = warmup, seconds, counts
        self.done = 0  # decisions (round trips) so far, the warm-up's included
        self._goal = 0
        self._reached = asyncio.Event()

    def tick(self, n: int = 1) -> None:
        """``n`` more decisions (round trips) done."""
        self.done += n
        if self._goal and self.done >= self._goal:
            self._reached.set()

    async def _wait(self, seconds: float, count: int) -> None:
        if self.counts is None:
            await asyncio.sleep(seconds)
            return
        self._goal = self.done + count
        self._reached.clear()
        if self.done < self._goal:
            await self._reached.wait()

    async def warm_up(self) -> None:
        await self._wait(self.warmup, self.counts[0] if self.counts else 0)

    async def window(self) -> None:
        await self._wait(self.seconds, self.counts[1] if self.counts else 0)


def count_args(counts: tuple[int, int] | None) -> list[str]:
    """A measured server's command-line options for :class:`Window`'s ``counts``."""
    return [] if counts is None else ["--counts", f"{counts[0]},{counts[1]}"]


def parse_counts(value: str | None) -> tuple[int, int] | None:
    """``--counts WARMUP,WINDOW`` (see :class:`Window`)."""
    if value is None:
        return None
    try:
        warm, window = (int(v) for v in value.split(","))
    except ValueError:
        raise ValueError(f"--counts: two whole numbers WARMUP,WINDOW, got {value!r}") from None
    if warm < 0 or window < 1:
        raise ValueError(f"--counts: WARMUP >= 0 and WINDOW >= 1, got {value!r}")
    return warm, window


def experiment_env(experiments: str | None) -> dict[str, str]:
    """The environment for a measured process: ours, with ``GRPC_EXPERIMENTS`` set (or as
    inherited when ``None``)."""
    env = dict(os.environ)
    if experiments is not None:
        env["GRPC_EXPERIMENTS"] = experiments
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


# ----------------------------------------------------------------------------- server


async def _serve(request: bytes, tables: int, seats: int, span: Window) -> None:
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    loop = asyncio.get_running_loop()
    template = pb.ServerMessage.FromString(request)
    streams: dict[int, Any] = {}
    locks: dict[int, asyncio.Lock] = {}
    # (seat, match_id) -> the future of the one pending request of that table and seat
    pending: dict[tuple[int, str], asyncio.Future[None]] = {}
    all_in = asyncio.Event()
    done = asyncio.Event()

    class Servicer(pb_grpc.ArenaServicer):
        async def Play(self, request_iterator: Any, context: Any) -> None:  # type: ignore[override]
            hello = await context.read()
            seat = int(hello.hello.bot_name.rpartition("-")[2])
            streams[seat] = context
            locks[seat] = asyncio.Lock()
            if len(streams) == seats:
                all_in.set()
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    return
                fut = pending.pop((seat, msg.decision.match_id), None)
                if fut is not None and not fut.done():
                    fut.set_result(None)

        async def GetInfo(self, request: Any, context: Any) -> Any:
            return pb.ServerInfo()

    counting = False
    count = 0
    latencies: list[float] = []

    async def table(t: int) -> None:
        nonlocal count
        msg = pb.ServerMessage()
        msg.CopyFrom(template)
        req = msg.decision_request
        req.match_id = mid = f"bench-{t:03d}"
        n = 0
        clock = time.perf_counter
        while not done.is_set():
            for seat in range(seats):
                n += 1
                req.request_id = str(n)
                fut: asyncio.Future[None] = loop.create_future()
                pending[(seat, mid)] = fut
                start = clock()
                async with locks[seat]:
                    await streams[seat].write(msg)
                await fut
                span.tick()
                if counting:
                    latencies.append(clock() - start)
                    count += 1

    server = grpc.aio.server()
    pb_grpc.add_ArenaServicer_to_server(Servicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"PORT {port}", flush=True)
    await asyncio.wait_for(all_in.wait(), _READY_TIMEOUT_S)
    tasks = [asyncio.create_task(table(t)) for t in range(tables)]
    await span.warm_up()
    counting = True
    print("START", flush=True)
    t0 = time.perf_counter()
    c0 = time.process_time()
    await span.window()
    counting = False
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print("END", flush=True)
    n = count
    done.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    print(
        json.dumps(
            {
                "round_trips": n,
                "seconds": elapsed,
                "round_trips_per_s": round(n / elapsed, 1),
                "p50_ms": round(percentile(latencies, 0.5) * 1000, 3),
                "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
                "server_cpu": round(cpu / elapsed, 2),
                "server_cpu_us_per_rt": round(cpu / n * 1e6, 1) if n else 0.0,
            }
        ),
        flush=True,
    )
    await server.stop(None)


# ----------------------------------------------------------------------------- client


async def _client(port: int, seat: int, decision: bytes) -> None:
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    action = pb.BotMessage.FromString(decision).decision.action
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = pb_grpc.ArenaStub(channel).Play(metadata=(("authorization", "Bearer bench"),))
        await call.write(pb.BotMessage(hello=pb.Hello(bot_name=f"seat-{seat}")))
        try:
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    return
                req = msg.decision_request
                await call.write(
                    pb.BotMessage(
                        decision=pb.Decision(
                            request_id=req.request_id, match_id=req.match_id, action=action
                        )
                    )
                )
        except grpc.aio.AioRpcError:
            return  # the server stopped: the measurement is over


# ----------------------------------------------------------------------------- driver


def _spawn(args: list[str], env: dict[str, str], stderr: IO[str] | None = None) -> Popen:
    return subprocess.Popen(
        [*PYTHON, "-m", "arena.bench.grpc_baseline", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr if stderr is not None else subprocess.DEVNULL,
        text=True,
    )


def read_port(proc: Popen, what: str, stderr: IO[str]) -> int:
    """The port a measured server prints first (``PORT <n>``)."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"{what} did not start: {line!r} {_tail(stderr)}")
    return int(line.split()[1])


def _tail(f: IO[str]) -> str:
    f.flush()
    f.seek(0)
    return f.read()[-3000:]


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, all threads) of a process so far; 0.0 without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def follow_server(
    server: Popen, pids: Sequence[int], timeout: float, what: str, stderr: IO[str]
) -> tuple[dict[str, Any], float, float]:
    """Follow a measured server's stdout to its end: between its ``START`` and ``END``
    lines, the CPU seconds used by the processes ``pids``; then its JSON result line.
    Returns (result, cpu seconds of ``pids``, wall seconds of the window). The server is
    killed after ``timeout`` seconds."""
    assert server.stdout is not None
    watchdog = threading.Timer(timeout, server.kill)
    watchdog.start()
    cpu0 = t0 = cpu = wall = 0.0
    result: dict[str, Any] | None = None
    try:
        for line in server.stdout:
            if ON_MARK is not None and line.startswith(("START", "END")):
                ON_MARK(line.strip(), [server.pid, *pids])
            if line.startswith("START"):
                t0, cpu0 = time.perf_counter(), sum(cpu_seconds(p) for p in pids)
            elif line.startswith("END"):
                wall = time.perf_counter() - t0
                cpu = sum(cpu_seconds(p) for p in pids) - cpu0
            elif line.startswith("{"):
                result = json.loads(line)
        server.wait()
    finally:
        watchdog.cancel()
    if server.returncode != 0 or result is None:
        raise RuntimeError(f"{what} failed (exit {server.returncode}): {_tail(stderr)}")
    return result, cpu, wall


def with_cpu(result: dict[str, Any], key: str, cpu: float, wall: float, count: int) -> None:
    """Add ``<key>_cpu`` (CPU s/s) and ``<key>_cpu_us_per_<unit>`` figures to ``result``."""
    if wall > 0:
        result[f"{key}_cpu"] = round(cpu / wall, 2)
    if count:
        result[f"{key}_cpu_us_per_{'rt' if key == 'clients' else 'decision'}"] = round(
            cpu / count * 1e6, 1
        )


def _stop(procs: Sequence[Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def measure(
    tables: int,
    experiments: str | None = None,
    seconds: float = 3.0,
    counts: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One ping-pong measurement in fresh processes: ``round_trips_per_s``, ``p50_ms``,
    ``p99_ms``, ``server_cpu`` (CPU seconds of the server per second); ``counts``: a
    warm-up and a window of that many round trips instead of seconds (see :class:`Window`)."""
    msgs = _messages()
    warmup = warmup_for(seconds)
    env = experiment_env(experiments)
    with tempfile.TemporaryDirectory(prefix="arena-baseline-") as tmp:
        req_path = Path(tmp) / "request.bin"
        dec_path = Path(tmp) / "decision.bin"
        req_path.write_bytes(msgs["request"])
        dec_path.write_bytes(msgs["decision"])
        clients: list[Popen] = []
        with (Path(tmp) / "stderr.txt").open("w+") as err:
            server = _spawn(
                ["server", "--request", str(req_path), "--tables", str(tables),
                 "--warmup", str(warmup), "--seconds", str(seconds), *count_args(counts)],
                env,
                err,
            )  # fmt: skip
            try:
                port = read_port(server, "baseline server", err)
                args = ["client", "--port", str(port), "--decision", str(dec_path)]
                clients = [_spawn([*args, "--seat", str(s)], env) for s in range(3)]
                limit = _READY_TIMEOUT_S + warmup + seconds + 30
                result, cpu, wall = follow_server(
                    server, [c.pid for c in clients], limit, "baseline server", err
                )
                with_cpu(result, "clients", cpu, wall, result["round_trips"])
                return result
            finally:
                if server.poll() is None:
                    server.kill()
                    server.wait()
                _stop(clients)
                for p in (server, *clients):
                    if p.stdout is not None:
                        p.stdout.close()


_MESSAGES: dict[str, Any] | None = None
_CACHE: dict[tuple[int, str | None, float], dict[str, Any]] = {}


def _messages() -> dict[str, Any]:
    global _MESSAGES
    if _MESSAGES is None:
        _MESSAGES = sample_messages()
    return _MESSAGES


def baseline(tables: int, experiments: str | None, seconds: float) -> dict[str, Any]:
    """:func:`measure`, remembered for this process: the ``referee`` section divides by the
    figure the ``grpc_baseline`` section printed in the same run (measured once)."""
    key = (tables, experiments, seconds)
    if key not in _CACHE:
        _CACHE[key] = measure(tables, experiments, seconds)
    return _CACHE[key]


def bench_grpc_baseline(
    seconds: float = 3.0,
    tables: Sequence[int] = (1, 10),
    settings: Sequence[str] = tuple(SETTINGS),
) -> dict[str, Any]:
    """Round trips/s of the bare ping-pong, per table count and ``GRPC_EXPERIMENTS`` setting.

    ``tables_<n>``: the first setting (the inherited environment, which the referee
    section's headline figures use too); ``<setting>.tables_<n>``: each other setting;
    ``message``: the sizes used; ``grpc_experiments``: the value of each setting.
    """
    msgs = _messages()
    first, *others = settings
    out: dict[str, Any] = {f"tables_{t}": baseline(t, SETTINGS[first], seconds) for t in tables}
    for name in others:
        out[name] = {f"tables_{t}": baseline(t, SETTINGS[name], seconds) for t in tables}
    out["message"] = {k: v for k, v in msgs.items() if not isinstance(v, bytes)}
    out["grpc_experiments"] = {
        n: SETTINGS[n] or os.environ.get("GRPC_EXPERIMENTS", "(unset)") for n in settings
    }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bench.grpc_baseline [--seconds S]`` (and the worker roles)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("role", nargs="?", default="bench", choices=["bench", "server", "client"])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float)
    p.add_argument("--tables", type=int, default=1)
    p.add_argument("--request", type=Path)
    p.add_argument("--decision", type=Path)
    p.add_argument("--port", type=int)
    p.add_argument("--seat", type=int, default=0)
    p.add_argument("--counts", help="WARMUP,WINDOW round trips instead of seconds")
    a = p.parse_args(argv)
    if a.role == "server":
        warmup = warmup_for(a.seconds) if a.warmup is None else a.warmup
        span = Window(warmup, a.seconds, parse_counts(a.counts))
        asyncio.run(_serve(a.request.read_bytes(), a.tables, 3, span))
    elif a.role == "client":
        asyncio.run(_client(a.port, a.seat, a.decision.read_bytes()))
    else:
        print(strict_json.dumps(bench_grpc_baseline(a.seconds), indent=2))


if __name__ == "__main__":
    main()
