"""The soak test: many matches at once against one referee, on loopback, bounded in time.

``python -m arena.soak`` (``make soak``) starts a referee and its gRPC server on 127.0.0.1
(free port) in this process, and ``--procs`` client processes that together open ``--bots``
bot streams written straight against the protocol stubs. The bots are seated three by
three into ``--bots // 3`` tables, each of which plays matches one after another, so that
``--bots // 3`` matches run at once, until ``--matches`` matches have been started or
``--seconds`` have passed; the running ones are then played to the end (a hard stop at
twice ``--seconds`` interrupts what is left, and counts it as lost). Every finished match
is stored in an SQLite database (``arena.storage``), and read back.

A fraction ``--hostile`` of the bots misbehave (illegal, malformed, silent) so that strikes
and forfeits happen under load. Printed at the end:

- matches started, completed (stored and read back) and lost (started, not stored: must
  be 0);
- strikes by kind (the incidents of the stored records);
- p50/p99 of the decision latency added by the referee: for consecutive decisions of a
  match, the time from the bot sending its answer to the next bot receiving its request
  (the referee's work plus two loopback hops; bots answer at once; one system-wide
  monotonic clock across processes);
- the referee's peak memory (this process's maximum resident set size), and its memory
  once a tenth of ``--matches`` were stored and at the end (resident set size, Linux): a
  referee that keeps something per match grows between the two;
- what the referee still holds after the run: running matches, seats of bots, asyncio
  tasks (must all be 0).

The exit status is non-zero if any result was lost, nothing completed, or the referee
still held a match, a seat or a task after the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from arena.bench.grpc_baseline import percentile

__all__ = ["SoakReport", "main", "run_soak"]

HOSTILE_MODES = ("illegal", "malformed", "silent")


@dataclasses.dataclass
class SoakReport:
    """What a soak run measured."""

    bots: int
    concurrent: int
    started: int
    completed: int
    lost: int
    interrupted: int
    strikes: dict[str, int]
    latency_p50_ms: float
    latency_p99_ms: float
    latency_samples: int
    peak_rss_mb: float
    seconds: float
    peak_running: int
    #: (matches stored, resident MB then) once a tenth of them were stored, and at the end.
    rss_early: tuple[int, float] | None = None
    rss_end: tuple[int, float] | None = None
    #: What the referee still held after the run: running matches, bots' seats, tasks.
    left: tuple[int, int, int] = (0, 0, 0)

    def lines(self) -> list[str]:
        strikes = ", ".join(f"{k} {v}" for k, v in sorted(self.strikes.items())) or "none"
        return [
            f"bots (streams)          {self.bots}",
            f"matches at once (peak)  {self.peak_running} (tables {self.concurrent})",
            f"matches started         {self.started}",
            f"matches completed       {self.completed}",
            f"results lost            {self.lost}",
            f"interrupted at the stop {self.interrupted}",
            f"strikes by kind         {strikes}",
            f"referee latency p50     {self.latency_p50_ms:.2f} ms",
            f"referee latency p99     {self.latency_p99_ms:.2f} ms "
            f"({self.latency_samples} decisions)",
            f"referee peak memory     {self.peak_rss_mb:.1f} MB (max RSS)",
            *(
                [
                    f"referee memory growth   {self.rss_early[1]:.1f} MB after "
                    f"{self.rss_early[0]} matches, {self.rss_end[1]:.1f} MB after "
                    f"{self.rss_end[0]} (RSS)"
                ]
                if self.rss_early is not None and self.rss_end is not None
                else []
            ),
            "left after the run      {} matches, {} seats, {} tasks".format(*self.left),
            f"wall time               {self.seconds:.1f} s",
        ]


# ----------------------------------------------------------------------------- clients


def _client_action(mode: str, view: Any, n: int) -> Any:
    from arena.v1 import arena_pb2 as pb

    legal = list(view.legal_actions)
    if mode == "illegal" and n % 2 == 0:
        return pb.Action(bid=pb.Bid(amount=3))
    if mode == "malformed" and n % 2 == 0:
        return pb.Action()
    kinds = [a.WhichOneof("kind") for a in legal]
    if "pass" in kinds:
        return legal[kinds.index("pass")]
    return legal[n % len(legal)]


async def _client_bot(channel: Any, token: str, mode: str, log: list[tuple[str, float, float]],
                      stop_at: float) -> None:  # fmt: skip
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc

    call = pb_grpc.ArenaStub(channel).Play(metadata=[("authorization", f"Bearer {token}")])
    await call.write(pb.BotMessage(hello=pb.Hello(bot_name=token, protocol_version=1,
                                                  client="arena.soak")))  # fmt: skip
    n = 0
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
        while time.monotonic() < stop_at:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                return
            if msg.WhichOneof("kind") != "decision_request":
                continue
            req = msg.decision_request
            t_recv = time.monotonic()
            n += 1
            if mode == "silent":
                continue
            action = _client_action(mode, req.view, n)
            await call.write(pb.BotMessage(decision=pb.Decision(
                request_id=req.request_id, match_id=req.match_id, action=action)))  # fmt: skip
            log.append((req.match_id, t_recv, time.monotonic()))


async def _client_main(target: str, tokens: list[str], modes: list[str], out: Path,
                       seconds: float) -> None:  # fmt: skip
    import grpc

    stop_at = time.monotonic() + seconds
    log: list[tuple[str, float, float]] = []
    channels = [grpc.aio.insecure_channel(target) for _ in range(max(1, len(tokens) // 50))]
    try:
        tasks = [
            asyncio.create_task(_client_bot(channels[i % len(channels)], t, m, log, stop_at))
            for i, (t, m) in enumerate(zip(tokens, modes, strict=True))
        ]
        await asyncio.wait(tasks, timeout=seconds)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for ch in channels:
            await ch.close()
        out.write_text("\n".join(json.dumps(x) for x in log))


# ----------------------------------------------------------------------------- referee side


async def run_soak(
    *,
    bots: int = 300,
    matches: int = 200,
    seconds: float = 120.0,
    procs: int = 3,
    deals: int = 2,
    hostile: float = 0.05,
    decision_ms: int = 2000,
    workdir: Path | None = None,
    quiet: bool = False,
) -> SoakReport:
    """Run the soak (see the module docstring) and return what it measured."""
    import logging

    from arena.referee import Referee, RefereeConfig, start_server
    from arena.storage import Storage
    from engine import PRESETS

    logging.getLogger("arena.referee").setLevel(logging.WARNING)
    if bots < 3:
        raise ValueError("the soak needs at least 3 bots")
    t0 = time.monotonic()
    tmp = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="arena-soak-"))
    tmp.mkdir(parents=True, exist_ok=True)
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=deals)
    referee = Referee(RefereeConfig(decision_ms=decision_ms, time_bank_ms=decision_ms,
                                    join_timeout_s=60, reconnect_grace_s=5))  # fmt: skip
    names = [f"b{i:03d}" for i in range(bots)]
    n_hostile = round(bots * hostile)
    modes = ["honest"] * bots
    for i in range(n_hostile):  # spread over the tables: one per table at most
        modes[(i * 3 * max(1, bots // 3 // max(1, n_hostile))) % bots] = HOSTILE_MODES[i % 3]
    for n in names:
        referee.add_bot(n, f"tok-{n}")
    server, port = await start_server(referee, host="127.0.0.1", port=0)
    db = tmp / "soak.sqlite"
    storage = Storage(db)
    tid = f"soak-{os.getpid()}-{int(time.time())}"
    storage.ensure_tournament(tid, name="soak", fingerprint=tid, config={"bots": bots},
                              total_matches=matches, bots=[(n, m) for n, m in zip(names, modes,
                              strict=True)])  # fmt: skip
    children: list[asyncio.subprocess.Process] = []
    outs: list[Path] = []
    started = 0
    stored = 0
    interrupted = 0
    running = 0
    peak_running = 0
    completed = 0
    strikes: Counter[str] = Counter()
    rss_early: tuple[int, float] | None = None
    rss_end: tuple[int, float] | None = None
    try:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        per = -(-bots // procs)
        for k in range(procs):
            chunk = list(range(k * per, min(bots, (k + 1) * per)))
            if not chunk:
                continue
            out = tmp / f"client-{k}.jsonl"
            outs.append(out)
            spec = json.dumps({"tokens": [f"tok-{names[i]}" for i in chunk],
                               "modes": [modes[i] for i in chunk]})  # fmt: skip
            spec_file = tmp / f"client-{k}.json"
            spec_file.write_text(spec)
            children.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "arena.soak", "--client", str(spec_file),
                "--target", f"127.0.0.1:{port}", "--out", str(out),
                "--seconds", str(seconds * 2 + 30), env=env, cwd=root,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            ))  # fmt: skip
        missing = await referee.wait_for_bots(names, 60)
        if missing:
            raise RuntimeError(f"{len(missing)} bots did not connect, e.g. {missing[:3]}")
        if not quiet:
            print(f"soak: {bots} bots connected in {time.monotonic() - t0:.1f} s; "
                  f"{bots // 3} matches at once", flush=True)  # fmt: skip
        stop_starting = time.monotonic() + seconds
        counter = iter(range(matches))

        async def table(k: int) -> None:
            nonlocal started, stored, running, peak_running, interrupted, rss_early
            seats = names[3 * k : 3 * k + 3]
            while time.monotonic() < stop_starting:
                i = next(counter, None)
                if i is None:
                    return
                mid = f"{tid}-m{i:05d}"
                started += 1
                running += 1
                peak_running = max(peak_running, running)
                t_start = time.time()
                try:
                    rec = await referee.run_match(mid, ruleset, 1000 + i, seats)
                except asyncio.CancelledError:
                    interrupted += 1
                    raise
                finally:
                    running -= 1
                storage.save_match(tid, match_id=mid, index=i, table=k, set_no=0,
                                   seed=1000 + i, seats=seats, record=rec,
                                   started_at=t_start, finished_at=time.time())  # fmt: skip
                stored += 1
                if rss_early is None and stored >= max(1, matches // 10):
                    rss_early = _rss_mb(stored)

        tables = [asyncio.create_task(table(k)) for k in range(bots // 3)]
        done, pending = await asyncio.wait(tables, timeout=seconds * 2)
        for t in pending:
            t.cancel()
        await asyncio.gather(*tables, return_exceptions=True)
        for t in done:
            failed = t.exception()
            if failed is not None:
                raise failed
        rss_end = _rss_mb(stored)
        # Read back one at a time: holding every record at once (a list of them) was most
        # of the "referee peak memory" printed (1000 matches: 123 MB, 84 MB without).
        for _, _, rec in storage.iter_records(tid):
            completed += 1
            for inc in rec.get("incidents", ()):
                strikes[str(inc["kind"])] += 1
    finally:
        await server.stop(1.0)
        for c in children:
            try:
                await asyncio.wait_for(c.wait(), 15)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    c.kill()
                await c.wait()
        storage.close()
    # Tasks still unwinding from the server's stop (a stream's handler cancelled at the end
    # of its grace, a writer ending after it) get a few seconds more: on a loaded machine
    # the count taken at once found 8 of them on their way out. One that outlives that is
    # a leak.
    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    if others:
        await asyncio.wait(others, timeout=5.0)
    left = (
        len(referee.running_matches()),
        sum(len(referee.session(n).seats) for n in names),
        sum(1 for t in asyncio.all_tasks() if t is not me and not t.done()),
    )
    gaps = _latencies(outs)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return SoakReport(
        bots=bots, concurrent=bots // 3, started=started, completed=completed,
        lost=started - interrupted - completed, interrupted=interrupted,
        strikes=dict(strikes), latency_p50_ms=percentile(gaps, 0.5),
        latency_p99_ms=percentile(gaps, 0.99), latency_samples=len(gaps),
        peak_rss_mb=peak_kb / 1024, seconds=time.monotonic() - t0, peak_running=peak_running,
        rss_early=rss_early, rss_end=rss_end, left=left,
    )  # fmt: skip


def _rss_mb(stored: int) -> tuple[int, float] | None:
    """(``stored``, this process's resident set size in MB now), where Linux tells it."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return stored, pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


def _latencies(outs: list[Path]) -> list[float]:
    """Per match: answer sent → next request received, in ms (see the module docstring)."""
    by_match: dict[str, list[tuple[float, float]]] = {}
    for out in outs:
        if not out.exists():
            continue
        for line in out.read_text().splitlines():
            if line:
                mid, t_recv, t_sent = json.loads(line)
                by_match.setdefault(mid, []).append((t_recv, t_sent))
    gaps: list[float] = []
    for events in by_match.values():
        events.sort()
        for (_, sent), (recv, _) in itertools.pairwise(events):
            if recv >= sent:
                gaps.append((recv - sent) * 1000)
    return gaps


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m arena.soak", description=__doc__.split("\n")[0])
    p.add_argument("--bots", type=int, default=300,
                   help="bot streams, 3 per table (default: %(default)s)")  # fmt: skip
    p.add_argument("--matches", type=int, default=1000,
                   help="matches to start in all (default: %(default)s)")  # fmt: skip
    p.add_argument("--seconds", type=float, default=120.0,
                   help="stop starting matches after (default: %(default)s)")  # fmt: skip
    p.add_argument("--procs", type=int, default=3,
                   help="client processes (default: %(default)s)")  # fmt: skip
    p.add_argument("--deals", type=int, default=3,
                   help="deals per match, max_deals (default: %(default)s)")  # fmt: skip
    p.add_argument("--hostile", type=float, default=0.05,
                   help="fraction of hostile bots (default: %(default)s)")  # fmt: skip
    p.add_argument("--decision-ms", type=int, default=2000,
                   help="time per decision (default: %(default)s)")  # fmt: skip
    p.add_argument("--client", help=argparse.SUPPRESS)
    p.add_argument("--target", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.client:
        spec = json.loads(Path(a.client).read_text())
        asyncio.run(_client_main(a.target, spec["tokens"], spec["modes"], Path(a.out), a.seconds))
        return 0
    with tempfile.TemporaryDirectory(prefix="arena-soak-") as tmp:
        report = asyncio.run(run_soak(bots=a.bots, matches=a.matches, seconds=a.seconds,
                                      procs=a.procs, deals=a.deals, hostile=a.hostile,
                                      decision_ms=a.decision_ms, workdir=Path(tmp)))  # fmt: skip
    print("\n".join(report.lines()))
    return 0 if report.lost == 0 and report.completed > 0 and not any(report.left) else 1


if __name__ == "__main__":
    sys.exit(main())
