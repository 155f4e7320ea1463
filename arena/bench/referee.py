"""The real thing: the referee and three real SDK bot processes playing random legal moves.

One referee process (``arena.referee``: ``Referee`` + ``start_server``, nothing else) and
three ``arena-bot run random`` processes, over loopback. One table: matches played one
after the other; ten tables: ten matches at once, always (a table starts its next match
when one ends). The ruleset is the default tournament's: classic, capped at 12 deals.

Measured in a window after a warm-up (matches cross its edges; only decisions inside count):

- ``decisions_per_s``: decisions asked of bots and answered (forced moves are played by the
  referee without a round trip and are not counted), those a bot answered ahead
  (``decisions_ahead``: the "ahead" feature, docs/protocol.md, no round trip) included;
- ``deals_per_s``: deals scored inside the window per second;
- ``p50_ms`` / ``p99_ms``: decision latency as the referee sees it, from queueing the
  ``DecisionRequest`` for the bot (``BotSession.send``) to handling its ``Decision``
  (``Referee.on_decision``, alone or in a ``DecisionBatch``);
- ``ratio_to_baseline``: ``decisions_per_s`` / the bare gRPC ping-pong's round trips/s at the
  same table count and ``GRPC_EXPERIMENTS`` setting (:mod:`arena.bench.grpc_baseline`,
  measured once per run and shared with its section); target ≥ 1.0;
- ``deals_ratio``: ``deals_per_s`` / (baseline round trips/s ÷ actions per deal): how many
  times faster deals go than if every action of a deal cost one bare round trip; target
  ≥ 1.2 (forced moves cost no round trip);
- ``referee_cpu`` / ``bots_cpu``: CPU seconds per second of the referee process and of the
  three bots together (Linux ``/proc``), and per decision in µs;
- ``messages_per_write``: messages queued for the bots per gRPC message written, and
  ``decisions_per_bot_message``: decisions per message from the bots; above 1 when the
  "batch" feature (docs/protocol.md) joins several in one;
- ``peak_rss_mb``: the referee process's peak resident set (``VmHWM``).

::

    .venv/bin/python -m arena.bench.referee --seconds 3
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import resource
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from arena import strict_json
from arena.bench import grpc_baseline
from arena.bench.grpc_baseline import (
    SETTINGS,
    Window,
    baseline,
    count_args,
    experiment_env,
    follow_server,
    parse_counts,
    percentile,
    read_port,
    warmup_for,
    with_cpu,
)

__all__ = ["BENCH_MAX_DEALS", "bench_referee", "measure_referee", "window_figures"]

#: The deal cap of the benchmark's matches (the default tournament's).
BENCH_MAX_DEALS = 12
BENCH_PRESET = "classic"

_BOTS = 3
_READY_TIMEOUT_S = 60.0
_MIN_MATCHES_TIMEOUT_S = 120.0


# ----------------------------------------------------------------------------- referee side


async def _referee(
    tables: int, span: Window, preset: str, max_deals: int, min_matches: int
) -> None:
    from arena.referee import Referee, RefereeConfig, start_server
    from arena.referee import match as match_module
    from arena.referee.sessions import BotSession, Stream
    from arena.v1 import arena_pb2 as pb
    from engine import PRESETS

    ruleset = dataclasses.replace(PRESETS[preset], max_deals=max_deals)
    # Generous deadlines: a loaded machine must not turn the benchmark into timeouts.
    ref = Referee(RefereeConfig(decision_ms=10_000, time_bank_ms=60_000))
    # How well messages share gRPC messages (the "batch" feature): messages queued for bots
    # against gRPC writes, and decisions against bot messages carrying them.
    wire = {"sent": 0, "writes": 0, "bot_messages": 0}
    write_loop = Stream.write_loop

    async def counted_write_loop(self: Stream, write: Any) -> None:
        async def counted(msg: pb.ServerMessage | bytes) -> Any:
            if counting:
                wire["writes"] += 1
            return await write(msg)

        await write_loop(self, counted)

    def counted_on_message(self: Referee, session: BotSession, msg: pb.BotMessage) -> int:
        if counting:
            wire["bot_messages"] += 1
        return on_message(self, session, msg)

    # Before the bots connect: their streams' writers start when they do.
    Stream.write_loop = counted_write_loop  # type: ignore[method-assign]
    counting = False
    names = [f"bench-{i}" for i in range(_BOTS)]
    for n in names:
        ref.add_bot(n, f"token-{n}")
    server, port = await start_server(ref)
    print(f"PORT {port}", flush=True)
    missing = await ref.wait_for_bots(names, _READY_TIMEOUT_S)
    if missing:
        raise RuntimeError(f"bots did not connect: {missing}")
    rss_idle = _rss_now_mb()

    clock = time.perf_counter
    sent: dict[tuple[str, str, str], float] = {}
    latencies: list[float] = []

    # Measurement hooks on the two public doors every decision passes through.
    send = BotSession.send
    on_decision = Referee.on_decision
    add_event = BotSession.add_event
    window = {"deals": 0, "actions": 0}
    watcher = names[0]  # every bot sits in every match: one bot's events count each once

    # A request as it is first sent goes as its wire bytes, made just before by
    # ``decision_request_bytes``: its ids are noted there (reading them back from the bytes
    # in Python cost the measured referee more than the message's C getters did).
    request_bytes = match_module.decision_request_bytes  # type: ignore[attr-defined]
    made = ["", ""]  # the match id and request id of the last request made

    def noted_request_bytes(request_id: str, match_id: str, *rest: Any) -> bytes:
        made[0], made[1] = match_id, request_id
        return request_bytes(request_id, match_id, *rest)

    match_module.decision_request_bytes = noted_request_bytes  # type: ignore[attr-defined,assignment]

    def timed_send(self: BotSession, msg: pb.ServerMessage | bytes) -> bool:
        if counting:
            wire["sent"] += 1
        if isinstance(msg, bytes):  # (only a request is sent as bytes: made just before)
            sent[(self.name, made[0], made[1])] = clock()
        elif msg.WhichOneof("kind") == "decision_request":
            r = msg.decision_request
            sent[(self.name, r.match_id, r.request_id)] = clock()
        return send(self, msg)

    def timed_on_decision(self: Referee, session: BotSession, d: pb.Decision) -> bool:
        t = sent.pop((session.name, d.match_id, d.request_id), None)
        if t is not None:
            span.tick()
            if counting:
                latencies.append(clock() - t)
        return on_decision(self, session, d)

    def counted_add_event(self: BotSession, event: pb.Event) -> None:
        # (actions: counted_after)
        if counting and self.name == watcher and event.WhichOneof("kind") == "deal_ended":
            window["deals"] += 1
        add_event(self, event)

    # Decisions played from an answer given ahead ("ahead": no request, no round trip) are
    # decisions of the bots all the same.
    from arena.referee.match import MatchRunner

    ahead = {"played": 0}
    play_ahead = MatchRunner._ahead

    def counted_ahead(self: MatchRunner, *args: Any) -> Any:
        played = play_ahead(self, *args)
        if played is not None:
            span.tick()
            if counting:
                ahead["played"] += 1
        return played

    MatchRunner._ahead = counted_ahead  # type: ignore[method-assign,assignment]
    record_action = MatchRunner._after

    def counted_after(self: MatchRunner, *args: Any) -> Any:
        # (every applied action passes here once, whoever sees its event: the referee
        # writes the events into the sessions' queues itself, not through a door to hook)
        if counting:
            window["actions"] += 1
        return record_action(self, *args)

    MatchRunner._after = counted_after  # type: ignore[method-assign,assignment]
    on_message = Referee.on_message
    Referee.on_message = counted_on_message  # type: ignore[method-assign]
    BotSession.send = timed_send  # type: ignore[method-assign]
    BotSession.add_event = counted_add_event  # type: ignore[method-assign]
    Referee.on_decision = timed_on_decision  # type: ignore[method-assign]

    totals = {"matches": 0, "deals": 0, "actions": 0, "decisions": 0, "incidents": 0}
    stop = asyncio.Event()

    async def table(t: int) -> None:
        k = 0
        while not stop.is_set():
            seats = names[k % _BOTS :] + names[: k % _BOTS]
            rec = await ref.run_match(f"t{t:03d}-{k:04d}", ruleset, t * 100_000 + k, seats)
            k += 1
            totals["matches"] += 1
            totals["deals"] += len(rec["deals"])
            totals["incidents"] += len(rec.get("incidents", ()))
            for d in rec["deals"]:
                totals["actions"] += len(d["actions"])
                totals["decisions"] += sum(1 for a in d["actions"] if a.get("by") == "bot")

    tasks = [asyncio.create_task(table(t)) for t in range(tables)]
    await span.warm_up()
    counting = True
    print("START", flush=True)
    t0, c0 = clock(), time.process_time()
    await span.window()
    counting = False
    elapsed, cpu = clock() - t0, time.process_time() - c0
    print("END", flush=True)
    decided = len(latencies) + ahead["played"]
    # Memory: play on (uncounted) until enough matches ended, so that every stage of a match
    # has been held at once; bounded by _MIN_MATCHES_TIMEOUT_S.
    give_up = clock() + _MIN_MATCHES_TIMEOUT_S
    while totals["matches"] < min_matches and clock() < give_up:
        await asyncio.sleep(0.1)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    figures = window_figures(
        decided=decided, seconds=elapsed, cpu=cpu, latencies=latencies, wire=wire,
        window=window, totals=totals, rss_idle_mb=rss_idle, peak_rss_mb=_peak_rss_mb(),
        ahead=ahead["played"],
    )  # fmt: skip
    print(json.dumps(figures), flush=True)
    await server.stop(None)


def window_figures(
    *,
    decided: int,
    seconds: float,
    cpu: float,
    latencies: Sequence[float],
    wire: dict[str, int],
    window: dict[str, int],
    totals: dict[str, int],
    rss_idle_mb: float,
    peak_rss_mb: float,
    ahead: int = 0,
) -> dict[str, Any]:
    """The referee process's figures of one measuring window (see the module docs).

    ``decided``: decisions answered in the window (``latencies``: theirs, in seconds), of
    them ``ahead`` played from an answer given ahead ("ahead": no request, no latency);
    ``seconds`` and ``cpu``: the window's wall and CPU time; ``wire``: messages queued for
    bots (``sent``), gRPC writes (``writes``) and messages from bots (``bot_messages``);
    ``window``: deals ended and actions played in it, seen by one bot; ``totals``: the
    matches completed (``matches``, ``deals``, ``actions``, bot ``decisions``,
    ``incidents``), whose deals stand in for the window's when it held no whole deal.
    """
    deals, actions = window["deals"], window["actions"]
    if not deals:  # a window shorter than a deal: fall back on the completed matches
        deals, actions = totals["deals"], totals["actions"]
        n_for_deals = totals["decisions"]
    else:
        n_for_deals = decided
    per_s = decided / seconds
    return {
        "decisions": decided,
        "decisions_ahead": ahead,
        "seconds": seconds,
        "decisions_per_s": round(per_s, 1),
        "deals_per_s": round(per_s * deals / n_for_deals, 2) if n_for_deals else 0.0,
        "p50_ms": round(percentile(latencies, 0.5) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
        "referee_cpu": round(cpu / seconds, 2),
        "referee_cpu_us_per_decision": round(cpu / decided * 1e6, 1) if decided else 0.0,
        "messages_per_write": round(wire["sent"] / wire["writes"], 2) if wire["writes"] else 0.0,
        "decisions_per_bot_message": (
            round(decided / wire["bot_messages"], 2) if wire["bot_messages"] else 0.0
        ),
        "matches_completed": totals["matches"],
        "incidents": totals["incidents"],
        "deals": window["deals"],
        "actions_per_deal": round(actions / deals, 2) if deals else 0.0,
        "decisions_per_deal": round(n_for_deals / deals, 2) if deals else 0.0,
        "rss_idle_mb": round(rss_idle_mb, 1),
        "peak_rss_mb": round(peak_rss_mb, 1),
    }


def _peak_rss_mb() -> float:
    """This process's peak resident set (MB): ``VmHWM``. Not ``ru_maxrss``, which Linux
    carries over ``exec`` from the parent's size at ``fork``: a referee started by a big
    ``arena bench`` process would report the parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _rss_now_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return 0.0


# ----------------------------------------------------------------------------- driver


def _bot_cmd(port: int, i: int) -> list[str]:
    return [
        *grpc_baseline.PYTHON, "-c", "from sdk.cli import main; main()",
        "run", "random", "--arena", f"127.0.0.1:{port}", "--token", f"token-bench-{i}",
        "--name", f"bench-{i}", "--log-level", "warning", "--retry-for", "5",
    ]  # fmt: skip


def measure_referee(
    tables: int,
    experiments: str | None = None,
    seconds: float = 3.0,
    warmup: float | None = None,
    *,
    preset: str = BENCH_PRESET,
    max_deals: int = BENCH_MAX_DEALS,
    min_matches: int = 0,
    counts: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """One measurement in fresh processes (see the module docs for the figures).

    ``min_matches``: after the window, play on (not measured) until that many matches have
    ended (for the peak memory of whole matches); ``counts``: a warm-up and a window of
    that many decisions instead of seconds (:class:`arena.bench.grpc_baseline.Window`)."""
    env = experiment_env(experiments)
    warmup = warmup_for(seconds) if warmup is None else warmup
    bots: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryFile("w+") as err:
        server = subprocess.Popen(
            [*grpc_baseline.PYTHON, "-m", "arena.bench.referee", "server", "--tables", str(tables),
             "--warmup", str(warmup), "--seconds", str(seconds), "--preset", preset,
             "--max-deals", str(max_deals), "--min-matches", str(min_matches),
             *count_args(counts)],
            env=env, stdout=subprocess.PIPE, stderr=err, text=True,
        )  # fmt: skip
        try:
            port = read_port(server, "referee", err)
            bots = [
                subprocess.Popen(
                    _bot_cmd(port, i),
                    env=env,
                    stdout=subprocess.DEVNULL,
                    # (beside the referee's: a bot that fails says why in the error, not
                    # only "bots did not connect" a minute later)
                    stderr=err,
                )
                for i in range(_BOTS)
            ]
            limit = _READY_TIMEOUT_S + warmup + seconds + 60 + _MIN_MATCHES_TIMEOUT_S
            result, cpu, wall = follow_server(server, [b.pid for b in bots], limit, "referee", err)
            with_cpu(result, "bots", cpu, wall, result["decisions"])
            return result
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            if server.stdout is not None:
                server.stdout.close()
            for b in bots:
                if b.poll() is None:
                    b.send_signal(signal.SIGTERM)
            for b in bots:
                try:
                    b.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    b.kill()
                    b.wait()


def _with_ratios(r: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    rt = base["round_trips_per_s"]
    out = {
        "decisions_per_s": r["decisions_per_s"],
        "deals_per_s": r["deals_per_s"],
        "p50_ms": r["p50_ms"],
        "p99_ms": r["p99_ms"],
        "ratio_to_baseline": round(r["decisions_per_s"] / rt, 3) if rt else 0.0,
        "deals_ratio": (
            round(r["deals_per_s"] / (rt / r["actions_per_deal"]), 3)
            if rt and r["actions_per_deal"]
            else 0.0
        ),
        "baseline_round_trips_per_s": rt,
        "baseline_p50_ms": base["p50_ms"],
    }
    for k in ("server_cpu_us_per_rt", "clients_cpu_us_per_rt"):
        if k in base:
            out[f"baseline_{k}"] = base[k]
    for k in ("referee_cpu", "bots_cpu", "referee_cpu_us_per_decision",
              "bots_cpu_us_per_decision", "actions_per_deal", "decisions_per_deal",
              "messages_per_write", "decisions_per_bot_message", "decisions_ahead",
              "matches_completed", "incidents", "peak_rss_mb"):  # fmt: skip
        if k in r:
            out[k] = r[k]
    return out


def bench_referee(
    seconds: float = 3.0,
    tables: Sequence[int] = (1, 10),
    settings: Sequence[str] = tuple(SETTINGS),
    max_deals: int = BENCH_MAX_DEALS,
) -> dict[str, Any]:
    """Referee + SDK bots over gRPC, per table count and ``GRPC_EXPERIMENTS`` setting, with
    the ratios to the bare baseline of the same run (``tables_<n>``: the inherited setting)
    and the targets (``targets``: ratio, target, met)."""
    first = settings[0]
    out: dict[str, Any] = {}
    for name in settings:
        exp = SETTINGS[name]
        per: dict[str, Any] = {}
        for t in tables:
            base = baseline(t, exp, seconds)
            r = measure_referee(t, exp, seconds, max_deals=max_deals)
            per[f"tables_{t}"] = _with_ratios(r, base)
        if name == first:
            out.update(per)
        else:
            out[name] = per
    targets: dict[str, Any] = {}
    for t in tables:
        r = out[f"tables_{t}"]
        targets[f"decisions_tables_{t}"] = _target(r["ratio_to_baseline"], 1.0)
        targets[f"deals_tables_{t}"] = _target(r["deals_ratio"], 1.2)
    out["targets"] = targets
    out["setup"] = (
        f"referee + 3 SDK random bots, {BENCH_PRESET} max_deals {max_deals}, loopback; "
        f"tables_<n>: GRPC_EXPERIMENTS setting {first!r}"
    )
    order = [*(f"tables_{t}" for t in tables), "targets", *settings[1:], "setup"]
    return {k: out[k] for k in order}


def _target(ratio: float, target: float) -> dict[str, Any]:
    return {"ratio": ratio, "target": target, "met": ratio >= target}


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bench.referee [--seconds S] [--tables N]`` (and the server role)."""
    p = argparse.ArgumentParser(
        prog="python -m arena.bench.referee",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    p.add_argument("role", nargs="?", default="bench", choices=["bench", "server", "one"],
                   help="bench: the `arena bench referee` section (only --seconds applies); "
                        "one: one measurement with the options below; server: the referee "
                        "process of a measurement (internal) (default: %(default)s)")  # fmt: skip
    p.add_argument("--seconds", type=float, default=3.0,
                   help="the measuring window (default: %(default)s)")  # fmt: skip
    p.add_argument("--warmup", type=float,
                   help="seconds played before the window (default: a third of --seconds, "
                        "0.2 to 1)")  # fmt: skip
    p.add_argument("--tables", type=int, default=1,
                   help="matches played at once (default: %(default)s)")  # fmt: skip
    p.add_argument("--preset", default=BENCH_PRESET,
                   help="the ruleset preset (default: %(default)s)")  # fmt: skip
    p.add_argument("--max-deals", type=int, default=BENCH_MAX_DEALS,
                   help="deal cap per match (default: %(default)s)")  # fmt: skip
    p.add_argument(
        "--min-matches",
        type=int,
        default=0,
        help="after the window, play on (unmeasured) until this many matches ended "
        "(default: %(default)s)",
    )
    p.add_argument("--counts", help="for role 'server': WARMUP,WINDOW decisions instead of "
                   "seconds (arena.bench.instructions)")  # fmt: skip
    p.add_argument("--experiments", default=None,
                   help="GRPC_EXPERIMENTS for role 'one' (default: as inherited)")  # fmt: skip
    a = p.parse_args(argv)
    if a.role == "server":
        warmup = warmup_for(a.seconds) if a.warmup is None else a.warmup
        span = Window(warmup, a.seconds, parse_counts(a.counts))
        asyncio.run(_referee(a.tables, span, a.preset, a.max_deals, a.min_matches))
    elif a.role == "one":
        # Every option reaches the measurement (--preset and --min-matches too).
        r = measure_referee(a.tables, a.experiments, a.seconds, a.warmup, preset=a.preset,
                            max_deals=a.max_deals, min_matches=a.min_matches)  # fmt: skip
        print(strict_json.dumps(r, indent=2))
    else:
        print(strict_json.dumps(bench_referee(a.seconds), indent=2))


if __name__ == "__main__":
    main()
