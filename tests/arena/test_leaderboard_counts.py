"""The median decision time from counts of the times (web audit at scale): the leaderboard
kept a list of every decision time of every bot to take its median, most of the ~430 MB a
leaderboard of 10,000 matches took. It counts them now; the figures are the same."""

from __future__ import annotations

import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.leaderboard import build_leaderboard
from arena.leaderboard.stats import median_of_counts
from arena.storage import Storage
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db


def _median(values: Sequence[float]) -> float | None:
    return median_of_counts(Counter(float(v) for v in values))


@pytest.mark.parametrize(
    "values",
    [
        [7],
        [3, 1],  # even: the mean of the two middle values
        [1, 2, 4, 9],
        [5, 5, 5, 6],  # even, both middle values in one count
        [5, 5, 6, 6],  # even, the middle values in two counts
        [5, 6, 6, 6, 9],  # odd, inside a count
        [10, 20, 40, 30, 50, 60],
        [0, 0, 1],
        [2.5, 0.25, 1.75],  # the demo's times have two decimals
        [0.2, 0.1],  # (0.1 + 0.2) / 2 in float, as statistics.median computes it
        [-3, 4, 4, -3, 0, 12, 12, 12],
    ],
)
def test_median_of_counts_is_the_median_of_the_values(values: list[float]) -> None:
    assert _median(values) == statistics.median([float(v) for v in values])


def test_median_of_counts_of_random_times_odd_and_even() -> None:
    rng = random.Random(1000)
    for n in [*range(1, 40), 999, 1000, 4001, 4002]:
        for spread in (3, 50, 5000):  # many ties ... few
            ms = [rng.randrange(spread) for _ in range(n)]
            assert _median(ms) == statistics.median([float(m) for m in ms]), (n, spread)


def test_median_of_no_times_is_none() -> None:
    assert median_of_counts(Counter()) is None
    assert median_of_counts(Counter({4.0: 0})) is None


def _every_time(st: Storage, tid: str) -> dict[str, list[float]]:
    """Every decision time of each bot, as build_leaderboard listed them before."""
    times: dict[str, list[float]] = defaultdict(list)
    for _idx, seats, rec in st.iter_records(tid):
        for deal in rec.get("deals") or ():
            for a in deal.get("actions") or ():
                seat, ms = a.get("seat"), a.get("ms")
                if (
                    isinstance(seat, int)
                    and 0 <= seat < len(seats)
                    and isinstance(ms, int | float)
                    and a.get("by", "bot") == "bot"
                ):
                    times[seats[seat]].append(float(ms))
    return times


def _check_same_figures(path: Path, tid: str) -> dict[str, Any]:
    with Storage(path) as st:
        lb = build_leaderboard(st, tid)
        every = _every_time(st, tid)
    rows = {r.bot: r for r in lb.rows}
    assert set(rows) == set(every)
    for bot, times in every.items():
        assert rows[bot].decisions == len(times)
        assert rows[bot].median_ms == statistics.median(times), bot
    return {r.bot: len(every[r.bot]) for r in lb.rows}


def test_a_recorded_tournament_has_the_same_median_times(tmp_path: Path) -> None:
    """The demo tournament (times with two decimals, as demo_record writes them)."""
    path = tmp_path / "demo.sqlite"
    make_demo_db(path, matches=7, max_deals=4)
    _check_same_figures(path, "demo")


def test_referee_times_in_whole_ms_have_the_same_median(tmp_path: Path) -> None:
    """Whole milliseconds as the referee writes them, moves the referee played (not the
    bot's: not counted), and both an odd and an even number of decisions."""
    path = tmp_path / "ms.sqlite"
    rng = random.Random(7)
    with Storage(path) as st:
        st.ensure_tournament("ms", name="ms", fingerprint="ms", total_matches=5,
                             config={"name": "ms", "ruleset": "classic"},
                             bots=[(b, "demo") for b in DEMO_BOTS])  # fmt: skip
        for i in range(5):
            seats = tuple(DEMO_BOTS[(i + j) % 3] for j in range(3))
            rec = demo_record(100 + i, seats, max_deals=3)
            for deal in rec["deals"]:
                for a in deal["actions"]:
                    a["ms"] = rng.choice((0, 1, 2, 2, 3, 17, 250, rng.randrange(2000)))
                    if rng.random() < 0.1:
                        a["by"] = rng.choice(("fallback", "forced"))
            if i == 4:  # one more decision for the first seat: the parities differ
                rec["deals"][0]["actions"][0]["by"] = "fallback"
            st.save_match("ms", match_id=f"ms-m{i}", index=i, table=0, set_no=i, seed=i,
                          seats=seats, record=rec, started_at=0.0, finished_at=1.0)  # fmt: skip
        st.finish_tournament("ms")
    counts = _check_same_figures(path, "ms")
    assert {n % 2 for n in counts.values()} == {0, 1}, counts
