"""Figures that round to zero print without a sign (review of 2026-12-03).

Defect: ``arena-bot try`` showed a mean score of ``-0`` (a series whose mean was -0.3), and
the leaderboard's tables and the web pages ``-0.0`` for a points-per-deal of -0.04: Python's
format and JavaScript's ``toFixed`` keep the sign of a negative number that rounds to zero.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess

import pytest
from rich.console import Console

from arena.leaderboard.render import _fixed
from arena.web import STATIC_DIR
from sdk.cli import _print_results
from sdk.local import SeriesEntry, SeriesResult


def test_try_table_prints_no_minus_zero() -> None:
    entry = SeriesEntry("lowest", matches=10, score=-3, deals=100)
    other = SeriesEntry("random", matches=10, score=-1, deals=100)
    assert entry.mean_score == pytest.approx(-0.3) and entry.points_per_deal < 0
    out = io.StringIO()
    _print_results(Console(file=out, width=120), SeriesResult("classic", 10, [entry, other]), "t")
    text = out.getvalue()
    assert "-0" not in text, text
    assert " 0 " in text and "0.0" in text  # (the figures are there, unsigned)


@pytest.mark.parametrize("sign", ["", "+"])
def test_leaderboard_figures_print_no_minus_zero(sign: str) -> None:
    assert _fixed(-0.04, 1, sign) == f"{sign}0.0"
    assert _fixed(-0.4, 0, sign) == f"{sign}0"
    assert _fixed(-0.05, 1, sign) == "-0.1"  # (half away from zero: a real -0.1)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run common.js")
def test_web_pages_format_like_the_leaderboard_files() -> None:
    """The web pages' ``fmt`` (common.js, run in node) writes what ``_fixed`` writes."""
    cases = [(-0.04, 1), (-0.4, 0), (-0.05, 1), (0.0, 1), (-2.25, 1), (12.5, 0), (3.0, 0)]
    js = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    script = (
        js
        + f"\nprocess.stdout.write(JSON.stringify({json.dumps(cases)}.map(([x, d]) => fmt(x, d))));"
    )
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got[:2] == ["0.0", "0"] and got[2] == "-0.1"
    assert got == [_fixed(x, d) if not float(x).is_integer() or d else str(int(x))
                   for x, d in cases]  # fmt: skip
