"""The JSON the benchmark parts and `arena rules --json` print is strict: never NaN/Infinity.

Defect (limits round 56): ``python -m arena.bench.breakdown --json``, ``arena.bench.referee``
(``bench`` and ``one``), ``arena.bench.memory`` and ``arena.bench.grpc_baseline`` printed
their figures with plain ``json.dumps``, and so did ``arena rules --json``: a figure that
came out infinite or NaN (a window with no decision, a division by a zero time) was
written ``NaN``/``Infinity``, which ``jq``, a browser or Go cannot read (``arena bench
--json`` itself already used :mod:`arena.strict_json`). They use it now: such a number is
``null``. The figures are replaced here by ones holding such numbers (what each part
measures takes seconds, and what it prints is the question).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from arena.bench import breakdown, grpc_baseline, memory, referee
from arena.cli import main
from engine import Ruleset

BAD: dict[str, Any] = {"nan": float("nan"), "inf": [float("inf"), 1.5], "t": {"x": -float("inf")}}
WANT = {"nan": None, "inf": [None, 1.5], "t": {"x": None}}


def _strict(text: str) -> Any:
    """``text`` read as a strict parser reads it: ``NaN``/``Infinity`` refused."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"not strict JSON: {name} in {text!r}")

    return json.loads(text, parse_constant=refuse)


def _figures(*_: Any, **__: Any) -> dict[str, Any]:
    return BAD


@pytest.mark.parametrize(
    ("module", "function", "argv"),
    [
        (breakdown, "breakdown", ["--json"]),
        (referee, "bench_referee", []),
        (referee, "measure_referee", ["one"]),
        (memory, "bench_memory", []),
        (grpc_baseline, "bench_grpc_baseline", []),
    ],
)
def test_each_benchmark_part_prints_strict_json(
    module: Any,
    function: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(module, function, _figures)
    main_: Callable[[list[str]], None] = module.main
    main_(argv)
    assert _strict(capsys.readouterr().out) == WANT


def test_arena_rules_json_is_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Ruleset, "to_dict", lambda self: {"name": self.name, **BAD})
    r = CliRunner().invoke(main, ["rules", "classic", "--json"])
    assert r.exit_code == 0, r.output
    assert _strict(r.output) == {"name": "classic", **WANT}
    # the real ruleset still prints as before, every option
    monkeypatch.undo()
    r = CliRunner().invoke(main, ["rules", "classic", "--json"])
    assert r.exit_code == 0 and _strict(r.output)["target"] == 1000, r.output
