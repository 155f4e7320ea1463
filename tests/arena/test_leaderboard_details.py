"""Details of the ratings and the leaderboard a mutation audit found unguarded: the
configured TrueSkill draw probability, and the value under each CSV column."""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trueskill

from arena.leaderboard import build_leaderboard, render
from arena.leaderboard.render import to_csv
from arena.ratings import DEFAULT_DRAW_PROBABILITY, RatingBook, rate_results
from arena.storage import Storage
from arena.tournament import RunOptions, run
from tests.arena.fake_referee import FakeReferee, make_config

DRAW = 0.3  # far from the default 0.02


def _deal(actions: list[tuple[int, str, float]], deltas: list[int]) -> dict[str, Any]:
    return {
        "actions": [{"seat": s, "action": a, "ms": ms, "by": "bot"} for s, a, ms in actions],
        "deltas": deltas,
        "scores": deltas,
    }


# Two hand-made matches of p, q, r. Bot p's figures are all distinct where the audit
# swapped columns: timeouts 4, illegal 2, disconnects 3, forfeits 1; median 35 ms, mean
# final score 45.
M0: dict[str, Any] = {  # seats p, q, r: p declares 120 and makes it; r declares 100 and fails
    "players": ["p", "q", "r"],
    "deals": [
        _deal([(1, "bid 100", 11), (2, "pass", 12), (0, "bid 110", 10), (1, "pass", 13),
               (0, "give 9♠ to 1", 20), (0, "give 9♣ to 2", 40), (0, "contract 120", 30)],
              [120, 10, 0]),
        _deal([(1, "pass", 5), (2, "bid 100", 6), (0, "pass", 50), (2, "give J♠ to 0", 7),
               (2, "give J♣ to 1", 7), (2, "contract 100", 8)], [10, 0, -100]),
    ],
    "result": {"scores": [130, 10, -100], "places": [1, 2, 3], "deals": 2},
    "incidents": [
        *({"kind": "timeout", "seat": 0, "deal": 0, "detail": "late"} for _ in range(4)),
        {"kind": "illegal", "seat": 0, "deal": 0, "detail": "no"},
        {"kind": "malformed", "seat": 0, "deal": 1, "detail": "junk"},
        {"kind": "disconnect", "seat": 0, "deal": 1, "detail": "gone"},
    ],
    "disconnects": [3, 0, 0],  # the referee's totals: 3 for p, 1 of them listed
    "forfeits": [],
}  # fmt: skip
M1: dict[str, Any] = {  # seats q, p, r: q declares 100 and makes it; p forfeits (placed last)
    "players": ["q", "p", "r"],
    "deals": [
        _deal([(0, "bid 100", 9), (1, "pass", 60), (2, "pass", 9), (0, "give K♠ to 1", 9),
               (0, "give K♣ to 2", 9), (0, "contract 100", 9)], [100, -40, 20]),
    ],
    "result": {"scores": [100, -40, 20], "places": [1, 3, 2], "deals": 1},
    "incidents": [{"kind": "forfeit", "seat": 1, "deal": 0, "detail": "3 strikes"}],
    "forfeits": [1],
}  # fmt: skip


def _make_db(path: Path, draw: float | None) -> Path:
    config: dict[str, Any] = {"ruleset": {"name": "classic", "players": 3}}
    if draw is not None:
        config["draw_probability"] = draw
    with Storage(path) as st:
        st.ensure_tournament("ld", name="ld", fingerprint="f", total_matches=2, config=config,
                             bots=[("p", "r"), ("q", "r"), ("r", "r")])  # fmt: skip
        for i, rec in enumerate((M0, M1)):
            st.save_match("ld", match_id=f"ld-m{i:05d}", index=i, table=0, set_no=0, seed=1,
                          seats=rec["players"], record=rec, started_at=0.0,
                          finished_at=1.0)  # fmt: skip
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return _make_db(tmp_path / "ld.sqlite", DRAW)


def _expected(
    matches: Sequence[tuple[Sequence[str], Sequence[int]]], draw: float
) -> dict[str, tuple[float, float]]:
    """The ratings as the trueskill library computes them, in the environment the docs
    state (docs/tournament.md, Ratings): mu0 25, sigma0 25/3, beta sigma0/2, tau
    sigma0/100, the given draw probability; each bot a one-player team ranked by place."""
    mu0 = 25.0
    sigma0 = mu0 / 3
    env = trueskill.TrueSkill(mu=mu0, sigma=sigma0, beta=sigma0 / 2, tau=sigma0 / 100,
                              draw_probability=draw)  # fmt: skip
    ratings: dict[str, trueskill.Rating] = {}
    for seats, places in matches:
        teams = [(ratings.setdefault(b, env.create_rating()),) for b in seats]
        for b, (r,) in zip(seats, env.rate(teams, ranks=list(places)), strict=True):
            ratings[b] = r
    return {b: (float(r.mu), float(r.sigma)) for b, r in ratings.items()}


HAND: list[tuple[list[str], list[int]]] = [
    (M0["players"], M0["result"]["places"]),
    (M1["players"], M1["result"]["places"]),
]


def test_the_expected_ratings_depend_on_the_draw_probability() -> None:
    """(The check below would be blind if the draw probability changed nothing.)"""
    a, b = _expected(HAND, DRAW), _expected(HAND, DEFAULT_DRAW_PROBABILITY)
    assert all(abs(a[bot][0] - b[bot][0]) > 0.05 or abs(a[bot][1] - b[bot][1]) > 0.05
               for bot in a), (a, b)  # fmt: skip


def test_rating_book_uses_the_given_draw_probability() -> None:
    """Mutation audit: ``RatingBook`` built its environment with ``make_env()``, dropping
    its ``draw_probability``: the ratings were those of the default 0.02. They are the
    trueskill library's with the given draw probability."""
    want = _expected(HAND, DRAW)
    book = RatingBook(["p", "q", "r"], draw_probability=DRAW)
    assert book.env.draw_probability == pytest.approx(DRAW)
    for seats, places in HAND:
        book.rate(seats, places)
    for bot, (mu, sigma) in want.items():
        got = book.get(bot)
        assert (got.mu, got.sigma) == pytest.approx((mu, sigma), abs=1e-9), bot


def test_rate_results_uses_the_given_draw_probability(db: Path) -> None:
    """Mutation audit (as above, through ``rate_results``, which the runner and the
    leaderboard call): the final book and the history follow the given draw probability."""
    with Storage(db) as st:
        results = st.match_results("ld")
    want = _expected(HAND, DRAW)
    book, history = rate_results(results, ["p", "q", "r"], draw_probability=DRAW)
    for bot, (mu, sigma) in want.items():
        assert (book.get(bot).mu, book.get(bot).sigma) == pytest.approx((mu, sigma), abs=1e-9)
        last = [h for h in history if h.bot == bot][-1]
        assert (last.mu, last.sigma) == pytest.approx((mu, sigma), abs=1e-9)


def test_leaderboard_rates_with_the_configs_draw_probability(db: Path) -> None:
    """Mutation audit: ``build_leaderboard`` called ``rate_results`` without
    ``draw_probability=``: a tournament configured with ``[ratings] draw_probability``
    got the ratings of the default. Each row's mu and sigma are the trueskill library's
    with the stored config's draw probability."""
    with Storage(db) as st:
        lb = build_leaderboard(st, "ld")
    want = _expected(HAND, DRAW)
    rows = {r.bot: r for r in lb.rows}
    assert set(rows) == set(want)
    for bot, (mu, sigma) in want.items():
        assert (rows[bot].mu, rows[bot].sigma) == pytest.approx((mu, sigma), abs=1e-9), bot
        assert rows[bot].conservative == pytest.approx(mu - 3 * sigma, abs=1e-9)
        assert lb.history[bot][-1][1:] == pytest.approx((mu, sigma), abs=1e-9)


def test_a_configured_draw_probability_reaches_a_tournaments_ratings(tmp_path: Path) -> None:
    """Mutation audit (end to end): a tournament run with ``[ratings] draw_probability =
    0.3`` (fake referee) stores, and its leaderboard shows, the trueskill ratings with 0.3."""
    cfg = make_config(tmp_path, bots=3, ratings={"draw_probability": DRAW})
    assert cfg.draw_probability == DRAW
    out = run(cfg, RunOptions(progress=False), referee_factory=lambda _c: FakeReferee(),
              serve=False, launch_bots=False)  # fmt: skip
    assert out.finished
    with Storage(cfg.db) as st:
        results = st.match_results(cfg.tournament_id)
        want = _expected([(m.seats, m.places) for m in results], DRAW)
        lb = build_leaderboard(st, cfg.tournament_id)
        stored = st.rating_history(cfg.tournament_id)
    default = _expected([(m.seats, m.places) for m in results], DEFAULT_DRAW_PROBABILITY)
    assert want != default
    for r in lb.rows:
        assert (r.mu, r.sigma) == pytest.approx(want[r.bot], abs=1e-9), r.bot
    assert len(stored) == len(results) * 3


# --- CSV columns --------------------------------------------------------------------------


def test_every_csv_column_holds_its_own_value(db: Path) -> None:
    """Mutation audit: ``to_csv`` wrote the ``illegal`` and ``disconnects`` values under
    each other's headings, and ``median_ms`` and ``mean_final_score`` too. Every column
    of bot p (whose figures are distinct) holds p's value, read by its heading."""
    with Storage(db) as st:
        lb = build_leaderboard(st, "ld")
    text = to_csv(lb)
    assert text == render(lb, "csv")
    rows = {r["bot"]: r for r in csv.DictReader(io.StringIO(text))}
    assert set(rows) == {"p", "q", "r"}
    p = rows["p"]
    stats = next(r for r in lb.rows if r.bot == "p")
    mu, sigma = _expected(HAND, DRAW)["p"]
    deltas = [120, 10, -40]
    want = {
        "rank": str(stats.rank),
        "bot": "p",
        "conservative": f"{mu - 3 * sigma:.4f}",
        "mu": f"{mu:.4f}",
        "sigma": f"{sigma:.4f}",
        "matches": "2",
        "place_1": "1",
        "place_2": "0",
        "place_3": "1",
        "deals": "3",
        "mean_per_deal": "30.0000",
        "ci95": f"{1.96 * statistics.stdev(deltas) / math.sqrt(3):.4f}",
        "bids_won": "1",
        "contracts": "1",
        "contracts_made": "1",
        "concessions": "0",
        "timeouts": "4",
        "illegal": "2",  # one illegal + one malformed decision
        "disconnects": "3",  # the referee's total, not the 1 listed
        "forfeits": "1",
        "decisions": "6",
        "median_ms": "35.00",  # median of 10, 20, 40, 30, 50, 60
        "mean_final_score": "45.00",  # (130 - 40) / 2
        "ruleset": lb.ruleset_description,
        "bot_errors": "0",  # (after the ruleset: the older columns stay where they were)
    }
    assert p == want
    # the other bots' strike columns too: q and r have none
    for bot in ("q", "r"):
        assert [rows[bot][k] for k in ("timeouts", "illegal", "disconnects", "forfeits")] == [
            "0", "0", "0", "0"
        ]  # fmt: skip
    assert rows["q"]["median_ms"] == f"{statistics.median([11, 13, 5, 9, 9, 9, 9]):.2f}"
    assert rows["q"]["mean_final_score"] == f"{statistics.fmean([10, 100]):.2f}"
