"""Round 55: the referee's Python bytecodes per decision, by function
(``python -m arena.bench.referee_logic --opcodes``), counted by the tracer that
``arena.bench.sdk_requests --opcodes`` uses too (``instructions.count_opcodes``)."""

from __future__ import annotations

import sys
import threading

import pytest

from arena.bench.instructions import count_opcodes, opcodes_by_function
from arena.bench.referee_logic import referee_opcodes


def _work(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def test_bytecodes_are_counted_per_function_and_thread() -> None:
    key = f"{__name__.rsplit('.', 1)[-1]}.py:_work"
    none, small, big = (count_opcodes(lambda n=n: _work(n))[key] for n in (0, 10, 1000))
    # Each turn of the loop runs the same bytecodes: the count grows by the same for each.
    assert 0 < none < small < big
    assert (big - none) == 100 * (small - none)

    def in_a_thread() -> None:
        t = threading.Thread(target=_work, args=(100,))
        t.start()
        t.join()

    threaded = count_opcodes(in_a_thread)
    assert threaded[key] == count_opcodes(lambda: _work(100))[key]


def test_tracing_stops_after_the_run_and_after_an_error() -> None:
    def fails() -> None:
        _work(5)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        count_opcodes(fails)
    assert sys.gettrace() is None
    assert threading.gettrace() is None


def test_the_table_divides_and_ranks() -> None:
    text = opcodes_by_function({"a.py:f": 30, "b.py:g": 90, "c.py:h": 6}, 3, "decision", 2)
    assert text.splitlines() == [
        "bytecodes: 42 per decision; by function:",
        "    30.0  b.py:g",
        "    10.0  a.py:f",
    ]
    with pytest.raises(ValueError, match="no decisions to divide by: 0"):
        opcodes_by_function({"a.py:f": 1}, 0, "decision", 1)


def test_the_referees_bytecodes_per_decision_name_its_match_loop() -> None:
    text = referee_opcodes(tables=1, matches=1, max_deals=2, as_sdk=True, top=200)
    head, *rows = text.splitlines()
    per_decision = float(head.split()[1].replace(",", ""))
    assert 1_000 < per_decision < 100_000
    named = {row.split()[1]: float(row.split()[0]) for row in rows}
    for fn in ("match.py:_decide", "match.py:_after", "protocol.py:_view_data"):
        assert named[fn] > 0, fn


def test_the_lag_period_is_set_for_the_run_and_refused_when_not_positive(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from arena.bench import referee_logic
    from arena.referee.lag import LoopLag

    monkeypatch.setattr(LoopLag, "PERIOD", LoopLag.PERIOD)  # (restored after the test)
    with pytest.raises(SystemExit) as e:
        referee_logic.main(["--lag-period", "0"])
    assert e.value.code == 2
    assert "--lag-period must be a number of seconds over 0, not 0" in capsys.readouterr().err
    assert LoopLag.PERIOD == 0.01
    referee_logic.main(["--tables", "1", "--matches", "1", "--max-deals", "1",
                        "--lag-period", "3600"])  # fmt: skip
    assert LoopLag.PERIOD == 3600
    assert "'decisions'" in capsys.readouterr().out
