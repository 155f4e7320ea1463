"""Where a decision's time goes in the real processes, against the bare ping-pong's round trip.

Runs one ``referee`` measurement and one ``grpc_baseline`` measurement (the same processes
as ``arena bench``) with probes in every process, and prints per decision (the referee and
its bots) and per round trip (the ping-pong's server and clients): event-loop iterations
(``_run_once``, ``select`` calls and those that found nothing ready), callbacks run,
``call_soon`` / ``call_at`` / tasks / futures made, gRPC messages read and written, garbage
collections, logging calls, clock reads; and the main thread's CPU (``time.thread_time``)
per kind of loop callback (each task by its coroutine, gRPC's own callbacks), in
``select``, in the garbage collector and in the referee's and the SDK's main functions.

The probes cost CPU themselves (a clock read around each callback and function timed):
compare the columns of one run, not its figures with ``arena bench``'s. The counts are
taken over each process's whole life (start-up included, a few hundred of each) and
divided by the decisions (round trips) of that life::

    .venv/bin/python -m arena.bench.breakdown --tables 10 --seconds 3
"""

from __future__ import annotations

import argparse
import atexit
import collections
import contextlib
import gc
import json
import os
import runpy
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from arena import strict_json

__all__ = ["breakdown", "run_as_python"]

_DIR_ENV = "ARENA_BREAKDOWN_DIR"

# ----------------------------------------------------------------------------- probes

_COUNT: collections.Counter[str] = collections.Counter()
_CPU: dict[str, float] = collections.defaultdict(float)
_clock = time.thread_time


def _callback_name(cb: Any) -> str:
    task = getattr(cb, "__self__", None)
    if task is not None and hasattr(task, "get_coro"):  # a task's step or wake-up
        coro = task.get_coro()
        return f"task {getattr(coro, '__qualname__', None) or type(coro).__name__}"
    return f"callback {getattr(cb, '__qualname__', None) or type(cb).__name__}"


def _counted(owner: Any, name: str, key: str) -> None:
    inner = getattr(owner, name)

    def probe(*args: Any, **kwargs: Any) -> Any:
        _COUNT[key] += 1
        return inner(*args, **kwargs)

    setattr(owner, name, probe)


def _timed(owner: Any, name: str, key: str, main: int) -> None:
    """Count calls of ``owner.name`` on the main thread, and time them (the outermost of
    nested ones)."""
    inner = getattr(owner, name)
    depth = [0]  # (a batch's messages are handled by a nested call: timed once, outside)

    def probe(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != main or depth[0]:
            return inner(*args, **kwargs)
        _COUNT[key] += 1
        depth[0] += 1
        t0 = _clock()
        try:
            return inner(*args, **kwargs)
        finally:
            _CPU[key] += _clock() - t0
            depth[0] -= 1

    setattr(owner, name, probe)


def _install(role: str) -> None:
    import asyncio
    import logging
    import selectors
    from asyncio import base_events, events

    main = threading.get_ident()
    loop_cls = base_events.BaseEventLoop
    for name in ("call_soon", "call_at", "create_task", "create_future"):
        _counted(loop_cls, name, f"loop.{name}")
    _timed(loop_cls, "_run_once", "loop iterations (_run_once)", main)
    _timed(selectors.DefaultSelector, "select", "select", main)
    run = events.Handle._run

    def run_probe(self: events.Handle) -> None:
        key = _callback_name(self._callback)  # type: ignore[attr-defined]  # (before: a finished task has no coroutine)
        _COUNT[key] += 1
        _COUNT["callbacks run"] += 1
        t0 = _clock()
        try:
            run(self)
        finally:
            _CPU[key] += _clock() - t0

    events.Handle._run = run_probe  # type: ignore[method-assign]
    select = selectors.DefaultSelector.select

    def select_probe(self: Any, timeout: float | None = None) -> Any:
        ready = select(self, timeout)
        _COUNT["select: nothing ready"] += not ready
        return ready

    selectors.DefaultSelector.select = select_probe  # type: ignore[method-assign]
    _counted(asyncio, "wait_for", "asyncio.wait_for")
    for name in ("debug", "info"):
        _counted(logging.Logger, name, f"logging.{name}")
    _counted(time, "monotonic", "time.monotonic (loop.time too)")
    gc_start = [0.0]

    def gc_probe(phase: str, info: dict[str, int]) -> None:
        if threading.get_ident() != main:
            return
        if phase == "start":
            gc_start[0] = _clock()
            return
        key = f"gc generation {info['generation']}"
        _COUNT[key] += 1
        _CPU[key] += _clock() - gc_start[0]

    gc.callbacks.append(gc_probe)
    import grpc.aio._call as call

    _counted(call._StreamRequestMixin, "_write", "grpc writes")  # clients (the SDK too)
    if role == "referee":
        import arena.referee.core as core
        import arena.referee.match as match
        import arena.referee.sessions as sessions

        _counted(core, "_read", "grpc reads")
        write_loop = sessions.Stream.write_loop

        async def write_loop_probe(self: sessions.Stream, write: Any) -> None:
            async def counted(msg: Any) -> Any:
                _COUNT["grpc writes"] += 1
                return await write(msg)

            await write_loop(self, counted)

        sessions.Stream.write_loop = write_loop_probe  # type: ignore[method-assign]
        for fn in ("observe", "view_to_pb", "game_view_bytes"):
            _timed(match, fn, f"f {fn}", main)
        for fn in ("_after", "_send_request", "on_decision"):
            _timed(match.MatchRunner, fn, f"f MatchRunner.{fn}", main)
        _timed(core.Referee, "on_message", "f Referee.on_message", main)
    elif role == "bot":
        import sdk.client as client

        _counted(client, "_parse", "grpc reads")
        _counted(client.BotRunner, "_send_answer", "decisions")
        for fn in ("view_from_pb", "decide_failed"):  # (the decision its runner makes)
            _timed(client, fn, f"f {fn}", main)
        for fn in ("_on_message", "_send_answer"):
            _timed(client.BotRunner, fn, f"f BotRunner.{fn}", main)


def _exec(argv: list[str]) -> None:
    """``exec -m MODULE ARGS...`` or ``exec -c CODE ARGS...``: run it as ``python`` would,
    with the probes; the figures are written at exit."""
    how, what, *rest = argv
    if how == "-c":
        role = "bot"  # (the referee bench starts its bots so)
    elif what == "arena.bench.referee":
        role = "referee"
    else:
        role = "server" if rest[:1] == ["server"] else "client"
    out = Path(os.environ[_DIR_ENV])

    def dump() -> None:
        data = {"count": dict(_COUNT), "cpu": dict(_CPU)}
        (out / f"{role}-{os.getpid()}.json").write_text(json.dumps(data))

    atexit.register(dump)
    _install(role)
    run_as_python(argv)


def run_as_python(argv: Sequence[str]) -> None:
    """Run ``-m MODULE ARGS...`` or ``-c CODE ARGS...`` in this process as ``python`` would
    (the measured processes' command line, after a wrapper's own set-up)."""
    how, what, *rest = argv
    sys.argv = [what, *rest]
    if how == "-c":
        exec(compile(what, "<string>", "exec"), {"__name__": "__main__"})
    else:
        runpy.run_module(what, run_name="__main__", alter_sys=True)


# ----------------------------------------------------------------------------- driver


def _gather(folder: Path, roles: Sequence[str]) -> dict[str, dict[str, collections.Counter[Any]]]:
    out = {
        r: {"count": collections.Counter[str](), "cpu": collections.Counter[str]()} for r in roles
    }
    for f in folder.glob("*.json"):
        role = f.name.split("-")[0]
        data = json.loads(f.read_text())
        for k in ("count", "cpu"):
            out[role][k].update(data[k])
    return out


def breakdown(tables: int = 10, seconds: float = 3.0) -> dict[str, Any]:
    """Per decision (``referee``, ``bots``) and per round trip (``server``, ``clients``):
    ``counts`` and main-thread CPU µs (``cpu_us``) of each probe, with the measurements'
    own figures (``referee_run``, ``baseline_run``)."""
    from arena.bench import grpc_baseline
    from arena.bench.referee import measure_referee

    result: dict[str, Any] = {"tables": tables}
    saved = grpc_baseline.PYTHON
    grpc_baseline.PYTHON = [sys.executable, "-m", "arena.bench.breakdown", "exec"]
    try:
        for name, roles in (("referee_run", ("referee", "bot")),
                            ("baseline_run", ("server", "client"))):  # fmt: skip
            with tempfile.TemporaryDirectory(prefix="arena-breakdown-") as tmp:
                with _env(_DIR_ENV, tmp):
                    result[name] = (
                        measure_referee(tables, None, seconds)
                        if name == "referee_run"
                        else grpc_baseline.measure(tables, None, seconds)
                    )
                got = _gather(Path(tmp), roles)
            if roles[0] == "referee":
                n = got["bot"]["count"]["decisions"]
                sides = {"referee": got["referee"], "bots": got["bot"]}
            else:
                n = got["client"]["count"]["grpc writes"] - 3  # (each client's Hello)
                sides = {"server": got["server"], "clients": got["client"]}
            for side, figures in sides.items():
                result[side] = {
                    "per": n,
                    "counts": {k: round(v / n, 2) for k, v in sorted(figures["count"].items())},
                    "cpu_us": {k: round(v / n * 1e6, 1) for k, v in sorted(figures["cpu"].items())},
                }
    finally:
        grpc_baseline.PYTHON = saved
    return result


@contextlib.contextmanager
def _env(key: str, value: str) -> Iterator[None]:
    old = os.environ.get(key)
    os.environ[key] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[key]
        else:
            os.environ[key] = old


def _table(r: dict[str, Any]) -> str:
    sides = ("referee", "bots", "server", "clients")
    lines = [f"{r['tables']} table(s): per decision (referee, bots) and per round trip "
             f"(ping-pong server, clients)", ""]  # fmt: skip
    for what, fmt in (("counts", "{:>10.2f}"), ("cpu_us", "{:>10.1f}")):
        keys = sorted(set().union(*(r[s][what] for s in sides)))
        title = "count" if what == "counts" else "main-thread CPU µs"
        lines.append(f"{title:<52}" + "".join(f"{s:>10}" for s in sides))
        for k in keys:
            if all(r[s][what].get(k, 0) < (0.05 if what == "counts" else 0.5) for s in sides):
                continue  # (start-up and shutdown: not per decision)
            row = "".join(fmt.format(r[s][what][k]) if k in r[s][what] else f"{'-':>10}"
                          for s in sides)  # fmt: skip
            lines.append(f"{k[:52]:<52}{row}")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bench.breakdown [--tables N] [--seconds S] [--json]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["exec"]:
        _exec(args[1:])
        return
    p = argparse.ArgumentParser(
        prog="python -m arena.bench.breakdown",
        description=__doc__.split("\n")[0] if __doc__ else None,
    )
    p.add_argument("--tables", type=int, default=10,
                   help="matches played at once (default: %(default)s)")  # fmt: skip
    p.add_argument("--seconds", type=float, default=3.0,
                   help="each measuring window (default: %(default)s)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="the figures as JSON")
    a = p.parse_args(args)
    r = breakdown(a.tables, a.seconds)
    print(strict_json.dumps(r, indent=2) if a.json else _table(r))


if __name__ == "__main__":
    main()
