"""arena.bench.instructions: callgrind's output read and divided (fast, on a small stored
dump), the window's marks, valgrind missing; and one slow run end to end under valgrind."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.bench import grpc_baseline, instructions
from arena.bench.instructions import GROUPS, group_of, parse_callgrind, per_unit

_DUMP = Path(__file__).parents[1] / "data" / "callgrind_round55.out"


def test_a_dump_is_split_by_object_and_function() -> None:
    costs = parse_callgrind(_DUMP.read_text())
    # the totals line, not the summary (callgrind's summary is taken before the dump ends)
    assert costs.total == 1000
    # the calls' inclusive costs (5000, 400) are the callees', not the callers' own
    assert costs.groups() == {"python": 500, "grpc": 200, "protobuf": 150, "libc": 80,
                              "other": 70}  # fmt: skip
    fns = {fn: n for (_, fn), n in costs.by_function.items()}
    # a recursion level (fn'2) is the same function; a name used by its number alone
    # (ob=(2), fn=(2)) is the one named first
    assert fns["_PyEval_EvalFrameDefault"] == 450
    assert fns["encode_message"] == 150
    assert fns["0x0000000000795c70"] == 200


def test_per_unit_divides_and_lists_the_top_functions() -> None:
    got = per_unit(parse_callgrind(_DUMP.read_text()), 10, top=2)
    assert got["total"] == 100
    assert got["groups"] == {"python": 50, "grpc": 20, "protobuf": 15, "libc": 8, "other": 7}
    assert got["top"] == [
        {"function": "_PyEval_EvalFrameDefault", "group": "python", "per": 45},
        {"function": "0x0000000000795c70", "group": "grpc", "per": 20},
    ]
    with pytest.raises(ValueError, match="no decisions"):
        per_unit(parse_callgrind(_DUMP.read_text()), 0)


def test_a_dump_whose_costs_do_not_add_up_is_refused() -> None:
    text = _DUMP.read_text().replace("totals: 1000", "totals: 1001")
    with pytest.raises(ValueError, match="add up to 1000, its total says 1001"):
        parse_callgrind(text)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("hello\nworld\n", "no 'events:' line"),
        ("events: Dr\n", "no Ir event"),
        ("positions: line\n0 5\n", "costs before an 'events:' line"),
        ("events: Ir\nob=(7)\n0 5\n", r"ob \(7\) used before named"),
    ],
)
def test_what_is_not_a_callgrind_dump_is_named(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_callgrind(text)


def test_events_and_positions_columns_are_followed() -> None:
    text = "positions: instr line\nevents: Dr Ir\nob=/lib/libc.so.6\nfn=f\n0x10 3 7 11\n0x11 4 2\n"
    costs = parse_callgrind(text)
    assert costs.total == 11  # (Ir is the 2nd event; a missing trailing cost is 0)
    assert costs.groups()["libc"] == 11


@pytest.mark.parametrize(
    ("obj", "group"),
    [
        ("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", "python"),
        ("/usr/bin/python3.12", "python"),
        ("/x/lib/python3.11/lib-dynload/_asyncio.cpython-311-x86_64-linux-gnu.so", "python"),
        ("/v/site-packages/grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so", "grpc"),
        ("/v/site-packages/google/_upb/_message.abi3.so", "protobuf"),
        ("/lib/x86_64-linux-gnu/libc.so.6", "libc"),
        ("/lib/x86_64-linux-gnu/libm.so.6", "libc"),
        ("/lib64/ld-linux-x86-64.so.2", "other"),
        ("???", "other"),
    ],
)
def test_objects_are_grouped(obj: str, group: str) -> None:
    assert group_of(obj) == group
    assert group in GROUPS


def test_the_window_marks_reach_the_hook_with_every_pid() -> None:
    """follow_server calls ON_MARK at the server's START and END lines, before it goes on."""
    code = "print('START', flush=True); print('END', flush=True); print('{\"x\": 1}')"
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    seen: list[tuple[str, list[int]]] = []
    saved = grpc_baseline.ON_MARK
    grpc_baseline.ON_MARK = lambda line, pids: seen.append((line, list(pids)))
    try:
        with open(__file__) as err:  # (only read if the server fails)
            result, _, _ = grpc_baseline.follow_server(server, [11, 12], 30, "test", err)
    finally:
        grpc_baseline.ON_MARK = saved
        assert server.stdout is not None
        server.stdout.close()
    assert result == {"x": 1}
    assert seen == [("START", [server.pid, 11, 12]), ("END", [server.pid, 11, 12])]


def test_without_valgrind_the_tool_says_so_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda t: None if t == "valgrind" else real(t))
    assert instructions.main(["--only", "baseline"]) == 2
    assert "valgrind not found on PATH" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_the_bare_ping_pong_is_counted_end_to_end() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena.bench.instructions", "--only", "baseline",
         "--decisions", "20", "--warmup", "10", "--json"],
        capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got: dict[str, Any] = json.loads(proc.stdout)["baseline_1"]
    assert got["units"] > 0
    for side in ("server", "clients"):
        groups = got[side]["groups"]
        # every group but "other" runs in a round trip, and they make up the total
        assert all(groups[g] > 0 for g in ("python", "grpc", "protobuf", "libc")), groups
        assert abs(sum(groups.values()) - got[side]["total"]) <= len(GROUPS)


@pytest.mark.parametrize(
    ("value", "said"),
    [("5", "two whole numbers"), ("a,b", "two whole numbers"), ("1,2,3", "two whole numbers"),
     ("-1,5", "WARMUP >= 0"), ("5,0", "WINDOW >= 1")],
)  # fmt: skip
def test_bad_counts_are_named(value: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        grpc_baseline.parse_counts(value)


def test_a_counted_window_ends_after_its_count_whatever_the_clock() -> None:
    """Window with counts: the warm-up ends after that many ticks, the window after that
    many more; the seconds given play no part."""

    async def run() -> list[tuple[str, int]]:
        span = grpc_baseline.Window(3600.0, 3600.0, grpc_baseline.parse_counts("2,3"))
        seen: list[tuple[str, int]] = []

        async def work() -> None:
            for _ in range(10):
                await asyncio.sleep(0)
                span.tick()

        task = asyncio.create_task(work())
        await span.warm_up()
        seen.append(("warm", span.done))
        await span.window()
        seen.append(("window", span.done))
        await task
        return seen

    assert asyncio.run(asyncio.wait_for(run(), 30)) == [("warm", 2), ("window", 5)]
    assert grpc_baseline.count_args((2, 3)) == ["--counts", "2,3"]
    assert grpc_baseline.count_args(None) == []
