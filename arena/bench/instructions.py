"""Instructions per decision, counted by callgrind: a measure the machine's noise cannot move.

Runs the bench's own measurements (:func:`arena.bench.grpc_baseline.measure`, the bare
ping-pong, and :func:`arena.bench.referee.measure_referee`, the referee and three SDK
random bots) with every process under ``valgrind --tool=callgrind --cache-sim=no``.
Callgrind's counters are zeroed in every process when the measuring window starts and
dumped when it ends (``callgrind_control -z`` / ``-d``, at the server's ``START`` and
``END`` lines), so start-up, the warm-up and shutdown are not counted; the warm-up and the
window are counts of decisions (round trips), not seconds: the same work at any speed. The window's
instructions are divided by its decisions (round trips) and split by the object that ran
them: the interpreter (``libpython`` and Python's own C modules), gRPC's ``cygrpc``,
protobuf's ``upb``, ``libc``, and the rest. Per decision: the referee, and the three bots
together (each decision is one bot's); per round trip: the bare server, and the clients
together.

``--hot``: the referee's logic in a hot in-process loop (:mod:`arena.bench.referee_logic`,
no gRPC) under callgrind at two lengths; the difference divided by the difference of
decisions cancels start-up.

Valgrind runs each process 50-100 times slower: the referee's deadlines are generous, the
servers wait for their clients (and the bots for the referee) as long as it takes, and a
quick bot is kept on its event loop (``sdk.client._SLOW_S``), as it is without valgrind.
Counts of two runs of the same code agree within about 1 % (docs/performance.md,
"Instruction counts of 2026-12-14")::

    .venv/bin/python -m arena.bench.instructions --tables 1 --decisions 300 --warmup 100
    .venv/bin/python -m arena.bench.instructions --hot
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import importlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "GROUPS",
    "CallgrindCosts",
    "ValgrindMissing",
    "count_opcodes",
    "group_of",
    "measure_hot",
    "measure_instructions",
    "opcodes_by_function",
    "parse_callgrind",
    "per_unit",
]

#: The groups instructions are split into, in the order printed.
GROUPS = ("python", "grpc", "protobuf", "libc", "other")

#: Callgrind's options for every measured process (instructions only: no cache model).
_VALGRIND = ["valgrind", "--tool=callgrind", "--cache-sim=no", "-q"]

#: Seconds a measured server waits for its clients under valgrind (each imports gRPC and
#: protobuf 50-100 times slower than without).
_READY_S = 900.0


class ValgrindMissing(RuntimeError):
    """valgrind or callgrind_control is not installed (the tool cannot count)."""


# ----------------------------------------------------------------------------- parsing


def group_of(obj: str) -> str:
    """The group (one of :data:`GROUPS`) of a callgrind object, a shared object's path."""
    name = obj.rsplit("/", 1)[-1]
    if "cygrpc" in name:
        return "grpc"
    if "_upb" in obj or name.startswith("_message."):
        return "protobuf"
    if "libpython" in name or re.fullmatch(r"python3?(\.\d+)?", name) or "lib-dynload" in obj:
        return "python"
    if re.match(r"lib(c|m|pthread)[.-]", name):
        return "libc"
    return "other"


@dataclass
class CallgrindCosts:
    """Self instructions (Ir) of one callgrind dump: ``total`` (its ``totals:`` or
    ``summary:`` line), ``by_object`` and ``by_function`` (``(object, function)``)."""

    total: int = 0
    by_object: collections.Counter[str] = field(default_factory=collections.Counter)
    by_function: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)

    def groups(self) -> dict[str, int]:
        """Instructions per group of :data:`GROUPS`."""
        out = dict.fromkeys(GROUPS, 0)
        for obj, n in self.by_object.items():
            out[group_of(obj)] += n
        return out

    def add(self, other: CallgrindCosts) -> None:
        self.total += other.total
        self.by_object.update(other.by_object)
        self.by_function.update(other.by_function)


_COST_START = re.compile(r"[0-9+*-]")


def parse_callgrind(text: str) -> CallgrindCosts:
    """The self costs of a callgrind output file (format version 1, the ``Ir`` event).

    Names may be compressed (``ob=(3) /lib/x.so`` once, ``ob=(3)`` after); a cost line
    after a ``calls=`` line is the call's inclusive cost, not the caller's own, and is
    left out. Raises ``ValueError`` naming the line when the file is not callgrind's or
    its own costs do not add up to its total."""
    names: dict[tuple[str, str], str] = {}
    out = CallgrindCosts()
    npos = 1
    ir_col: int | None = None
    obj = fn = "???"
    after_call = False
    total: int | None = None

    def name(kind: str, value: str) -> str:
        m = re.fullmatch(r"\((\d+)\)(?: (.*))?", value)
        if m is None:
            return value
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
            return m.group(2)
        try:
            return names[(kind, m.group(1))]
        except KeyError:
            raise ValueError(f"callgrind output: {kind} ({m.group(1)}) used before named") from None

    for i, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        if _COST_START.match(line):
            if ir_col is None:
                raise ValueError(f"callgrind output line {i}: costs before an 'events:' line")
            if after_call:
                after_call = False
                continue
            parts = line.split()
            col = npos + ir_col
            n = int(parts[col]) if len(parts) > col else 0
            out.by_object[obj] += n
            out.by_function[(obj, fn)] += n
            continue
        key, _, value = line.partition("=")
        if key == "ob":
            obj = name("ob", value)
        elif key == "fn":
            # (callgrind names a function's recursion levels fn'2, fn'3: one function here)
            fn = re.sub(r"'\d+$", "", name("fn", value))
        elif key in ("cob", "cfn", "cfi", "cfl"):
            name(key.replace("cfl", "fl").replace("cfi", "fl").lstrip("c"), value)
        elif key in ("fl", "fi", "fe"):
            name("fl", value)
        elif key == "calls":
            after_call = True
        elif line.startswith("positions:"):
            npos = len(line.split()[1:])
        elif line.startswith("events:"):
            events = line.split()[1:]
            if "Ir" not in events:
                raise ValueError(f"callgrind output line {i}: no Ir event in {line!r}")
            ir_col = events.index("Ir")
        elif line.startswith(("totals:", "summary:")):
            total = int(line.split()[1 + (ir_col or 0)])
    if ir_col is None:
        raise ValueError("callgrind output: no 'events:' line (not a callgrind file?)")
    own = sum(out.by_object.values())
    out.total = own if total is None else total
    if own != out.total:
        raise ValueError(f"callgrind output: own costs add up to {own}, its total says {total}")
    return out


def per_unit(costs: CallgrindCosts, units: int, top: int = 0) -> dict[str, Any]:
    """Instructions per unit (decision, round trip): ``total``, ``groups`` (see
    :data:`GROUPS`) and, with ``top``, the ``top`` functions by their own instructions."""
    if units <= 0:
        raise ValueError(f"no decisions (round trips) to divide by: {units}")
    out: dict[str, Any] = {
        "total": round(costs.total / units),
        "groups": {g: round(n / units) for g, n in costs.groups().items()},
    }
    if top:
        out["top"] = [
            {"function": fn, "group": group_of(obj), "per": round(n / units)}
            for (obj, fn), n in costs.by_function.most_common(top)
        ]
    return out


# ----------------------------------------------------------------------------- bytecodes


def count_opcodes(run: Callable[[], object]) -> collections.Counter[str]:
    """The Python bytecodes ``run()`` executes, by function (``file.py:name``), in every
    thread: a count no load moves, which shows where the interpreter's share of the
    instructions goes (``sys.settrace`` with opcode events: Python 3.11 has no
    ``sys.monitoring``). Tracing slows ``run`` down by two orders of magnitude."""
    counts: collections.Counter[str] = collections.Counter()

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code = frame.f_code
        key = f"{Path(code.co_filename).name}:{code.co_name}"

        def local(frame: FrameType, event: str, arg: object) -> Any:
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    sys.settrace(tracer)
    threading.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]
    return counts


def opcodes_by_function(counts: Mapping[str, int], units: int, unit: str, top: int) -> str:
    """``counts`` (of :func:`count_opcodes`) per ``unit`` (``units`` of them): the total
    line, then the ``top`` functions, most first."""
    if units <= 0:
        raise ValueError(f"no {unit}s to divide by: {units}")
    lines = [f"bytecodes: {sum(counts.values()) / units:,.0f} per {unit}; by function:"]
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:top]
    lines += [f"{v / units:8.1f}  {k}" for k, v in ranked]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- running


def _tools() -> None:
    missing = [t for t in ("valgrind", "callgrind_control") if shutil.which(t) is None]
    if missing:
        raise ValueError(
            f"{' and '.join(missing)} not found on PATH: instruction counts need valgrind "
            "(Debian/Ubuntu: apt-get install valgrind)"
        )


def _control(flag: str, pids: Sequence[int]) -> None:
    """``callgrind_control FLAG PID`` for every process at once (the windows' edges as close
    together as they can be)."""
    procs = [
        subprocess.Popen(
            ["callgrind_control", flag, str(p)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in pids
    ]
    failed = [(p, pr.communicate()[1]) for p, pr in zip(pids, procs, strict=True)]
    bad = [(p, err) for (p, err), pr in zip(failed, procs, strict=True) if pr.returncode]
    if bad:
        raise RuntimeError(f"callgrind_control {flag} failed: {bad}")


@contextlib.contextmanager
def _under_callgrind(folder: Path) -> Iterator[list[int]]:
    """Every process the bench starts runs under callgrind, writing into ``folder``; its
    counters are zeroed at the window's start and dumped at its end. Yields the pids
    marked (the server's first)."""
    from arena.bench import grpc_baseline, referee

    marked: list[int] = []

    def mark(line: str, pids: Sequence[int]) -> None:
        marked[:] = pids
        _control("-z" if line == "START" else "-d", pids)

    saved = (grpc_baseline.PYTHON, grpc_baseline.ON_MARK,
             grpc_baseline._READY_TIMEOUT_S, referee._READY_TIMEOUT_S)  # fmt: skip
    grpc_baseline.PYTHON = [
        *_VALGRIND, f"--callgrind-out-file={folder}/callgrind.out.%p",
        sys.executable, "-m", "arena.bench.instructions", "exec",
    ]  # fmt: skip
    grpc_baseline.ON_MARK = mark
    # (the driver's watchdogs: start-up under valgrind takes minutes, not seconds)
    grpc_baseline._READY_TIMEOUT_S = referee._READY_TIMEOUT_S = _READY_S
    try:
        yield marked
    finally:
        (grpc_baseline.PYTHON, grpc_baseline.ON_MARK,
         grpc_baseline._READY_TIMEOUT_S, referee._READY_TIMEOUT_S) = saved  # fmt: skip


def _exec(argv: list[str]) -> None:
    """``exec -m MODULE ARGS...`` / ``exec -c CODE ARGS...`` (a measured process, under
    valgrind): the bench's servers (and bots) wait for their clients (the referee) as long as
    valgrind needs, and a quick bot is kept on its event loop: valgrind's slow wall clock would
    otherwise send it to a worker thread (``sdk.client._SLOW_S``), which it is not without
    valgrind."""
    from arena.bench.breakdown import run_as_python

    if argv[0] == "-m":
        module = importlib.import_module(argv[1])
        vars(module)["_READY_TIMEOUT_S"] = _READY_S  # (read by its server role)
        module.main(argv[2:])
        return
    import sdk.client

    sdk.client._SLOW_S = float("inf")
    # The bench's bots wait --retry-for 5 s for the referee's Welcome: under valgrind it
    # comes later than that.
    before = ["", *argv[:-1]]
    argv = [str(_READY_S) if b == "--retry-for" else a for b, a in zip(before, argv, strict=True)]
    run_as_python(argv)


def _dumped(folder: Path, pid: int) -> CallgrindCosts:
    files = sorted(folder.glob(f"callgrind.out.{pid}.*"))
    if not files:
        raise RuntimeError(f"process {pid}: no callgrind dump in {folder}")
    costs = CallgrindCosts()
    for f in files:  # (one per dump: the window's end)
        costs.add(parse_callgrind(f.read_text(errors="replace")))
    return costs


def measure_instructions(
    what: str, tables: int, count: int, warmup: int, top: int = 0, keep: Path | None = None
) -> dict[str, Any]:
    """One measurement under callgrind: ``what`` is "referee" (the referee and its bots, per
    decision) or "baseline" (the bare server and its clients, per round trip); a window of
    ``count`` decisions (round trips) after ``warmup`` of them."""
    from arena.bench import grpc_baseline
    from arena.bench.referee import measure_referee

    _tools()
    with tempfile.TemporaryDirectory(prefix="arena-callgrind-") as tmp:
        folder = Path(tmp)
        with _under_callgrind(folder) as marked:
            # (the seconds only set the driver's watchdog: the window is counted)
            if what == "referee":
                run = measure_referee(tables, None, _READY_S, counts=(warmup, count))
                units, sides = run["decisions"], ("referee", "bots")
            else:
                run = grpc_baseline.measure(tables, None, _READY_S, counts=(warmup, count))
                units, sides = run["round_trips"], ("server", "clients")
        server, *clients = marked
        if keep is not None:
            shutil.copytree(folder, keep / f"{what}-{tables}", dirs_exist_ok=True)
        near, far = _dumped(folder, server), CallgrindCosts()
        for pid in clients:
            far.add(_dumped(folder, pid))
    return {
        "tables": tables,
        "units": units,
        sides[0]: per_unit(near, units, top),
        sides[1]: per_unit(far, units, top),
        "run": {k: v for k, v in run.items() if not isinstance(v, dict)},
    }


def _total_ir(cmd: Sequence[str], folder: Path, tag: str) -> tuple[CallgrindCosts, str]:
    out_file = folder / f"hot-{tag}.out"
    proc = subprocess.run(
        [*_VALGRIND, f"--callgrind-out-file={out_file}", *cmd],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr[-2000:]}")
    return parse_callgrind(out_file.read_text(errors="replace")), proc.stdout


def measure_hot(
    tables: int = 10,
    matches: Sequence[int] = (2, 6),
    top: int = 0,
    lag_period: float | None = None,
) -> dict[str, Any]:
    """The referee's logic in a hot loop (``arena.bench.referee_logic --as-sdk``: no gRPC,
    streams answering at once, views as the SDK's bots ask for them), under callgrind at two
    lengths: instructions per decision of the difference (start-up cancelled).
    ``lag_period``: its ``--lag-period`` (the stall meter's ticks, whose number under
    callgrind depends on the machine's load, kept out of the count)."""
    _tools()
    got = []
    with tempfile.TemporaryDirectory(prefix="arena-callgrind-") as tmp:
        for m in matches:
            cmd = [sys.executable, "-m", "arena.bench.referee_logic", "--as-sdk",
                   "--tables", str(tables), "--matches", str(m)]  # fmt: skip
            if lag_period is not None:
                cmd += ["--lag-period", str(lag_period)]
            costs, stdout = _total_ir(cmd, Path(tmp), str(m))
            decisions = ast.literal_eval(stdout.strip().splitlines()[-1])["decisions"]
            got.append((costs, int(decisions)))
    (short, n1), (long, n2) = got
    diff = CallgrindCosts(total=long.total - short.total)
    diff.by_object.update(long.by_object)
    diff.by_object.subtract(short.by_object)
    diff.by_function.update(long.by_function)
    diff.by_function.subtract(short.by_function)
    return {"tables": tables, "decisions": [n1, n2], "referee": per_unit(diff, n2 - n1, top)}


# ----------------------------------------------------------------------------- output


def _table(results: Mapping[str, Any]) -> str:
    rows = []
    for name, r in results.items():
        for side in ("server", "clients", "referee", "bots"):
            if side in r:
                g = r[side]["groups"]
                rows.append(
                    f"{name:<14} {side:<8} {r[side]['total']:>10,} "
                    + " ".join(f"{g[k]:>10,}" for k in GROUPS)
                )
    head = f"{'run':<14} {'side':<8} {'total':>10} " + " ".join(f"{k:>10}" for k in GROUPS)
    return "\n".join([head, *rows])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m arena.bench.instructions``; exit 2 when valgrind is missing."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["exec"]:
        _exec(args[1:])
        return 0
    p = argparse.ArgumentParser(
        prog="python -m arena.bench.instructions",
        description="Instructions per decision (referee, bots) and per round trip (bare "
        "server, clients), counted by callgrind in the bench's processes, by object.",
    )
    p.add_argument("--tables", type=int, nargs="+", default=[1],
                   help="table counts measured (default: %(default)s)")  # fmt: skip
    p.add_argument("--decisions", type=int, default=300,
                   help="the window: decisions (round trips) counted (default: "
                        "%(default)s)")  # fmt: skip
    p.add_argument("--warmup", type=int, default=100,
                   help="decisions (round trips) played before the window (default: "
                        "%(default)s)")  # fmt: skip
    p.add_argument("--only", choices=["referee", "baseline"],
                   help="measure one side only (default: both)")  # fmt: skip
    p.add_argument("--hot", action="store_true",
                   help="the referee's logic in a hot in-process loop instead (see the "
                        "module docs)")  # fmt: skip
    p.add_argument("--lag-period", type=float, metavar="S",
                   help="with --hot: the referee's loop-stall meter ticking every S seconds "
                        "(see referee_logic --lag-period)")  # fmt: skip
    p.add_argument(
        "--top",
        type=int,
        default=0,
        help="also list the N functions with the most own instructions",
    )
    p.add_argument("--keep", type=Path, help="copy the callgrind files into this directory")
    p.add_argument("--json", action="store_true", help="print JSON only")
    a = p.parse_args(args)
    try:
        _tools()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    results: dict[str, Any] = {}
    if a.hot:
        for t in a.tables:
            results[f"hot_{t}"] = measure_hot(t, top=a.top, lag_period=a.lag_period)
    else:
        for t in a.tables:
            for what in ("baseline", "referee"):
                if a.only in (None, what):
                    results[f"{what}_{t}"] = measure_instructions(
                        what, t, a.decisions, a.warmup, a.top, a.keep
                    )
    if a.json:
        print(json.dumps(results, indent=2))
    else:
        print(_table(results))
        if a.top:
            for name, r in results.items():
                for side in ("server", "clients", "referee", "bots"):
                    for f in r.get(side, {}).get("top", ()):
                        print(f"{name} {side}: {f['per']:>9,} {f['group']:<8} {f['function']}")
        print(json.dumps({k: {"units": v.get("units", v.get("decisions"))}
                          for k, v in results.items()}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
