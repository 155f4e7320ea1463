"""Review round 55b: the ratings and the leaderboard checked against an independent oracle.

The oracle (:func:`oracle`) is written from docs/tournament.md ("Ratings", "Outputs", "A
season") and the ``trueskill`` package's documented API alone, never the arena's helpers:
``trueskill.TrueSkill(mu=25, sigma=25/3, beta=sigma/2, tau=sigma/100, draw_probability=the
config's)``, every match one free-for-all of one-player teams ``env.rate([(a,), (b,), (c,)],
ranks=places)``, in schedule order (never the order stored), the places as the record
says them (forfeiters last, numbered as ties; an abandoned match all last); a season the
matches of its tournaments in the order they were stored, each one's in schedule order;
the rows sorted by μ−3σ (equal to 9 decimals: the greater μ, then the name). It reads the
database with ``sqlite3`` (the records' ``result``), not through :mod:`arena.storage`.

Compared with ``arena leaderboard --format json`` (and the CSV, the screen's table and its
rounding), the ``ratings`` table a run stores, and ``arena web``'s API (``/api/leaderboard``,
``/api/season``, ``/api/bots/<name>?vs=``) on port 0, for tournaments made through the
storage API (ties for first and in the middle, one and two forfeiters, an abandoned match,
three and four seats, results stored out of schedule order with a gap, bots that never
played, a draw probability of 0.3 and the default) and small real runs of the bundled bots
(3 seats at draw probability 0.3, 4 seats at the default; one resumed after matches were
lost).

Hand mutants (63, each run against this file alone, ``-x``): arena/ratings.py R1-R16 (β, τ,
μ₀, the config's draw probability, μ−kσ, the sort's direction and tie-breaks and its
rounding, ranks reversed or ties broken by seat, match counts, schedule order in
``rate_results`` and the ledger's re-rating), arena/ffa_trueskill.py F1-F14 (rank sort,
draw detection, draw margin, τ, β², iterations, a σ floor of 2.5, v/w of draws, message
signs, the truncation's denominator, the output's order), arena/leaderboard/stats.py
S1-S14 and P5, P6 (ahead/behind/ties, place columns, abandoned matches left out of the
counts or the ratings, the season's offset, means, σ rounded, the history's prior, the
draw probability read, the table size, matches counted), season.py E1-E5 (the weeks'
order, their spans, the offset summed), render.py P1-P3, P7 and arena/render.py P4
(decimals and halfway rounding of the CSV, screen and Markdown), arena/web/board.py B1-B6
(history decimals, the last point whole, ties, σ rounded, the prior sent, cells of pairs
that never met) and W1 (``vs`` ignored). Killed: 61, 53 by the first tests here and R7,
R9, R12-R15, P7, W1 by the tests added for them. Equivalent: 2, R16 (the bots' order
among ``rating_history``'s keys, which no output promises) and F9 (``env.rate`` always:
the fast path's floats are its own to the bit, tests/arena/test_ratings_fast.py).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
import sqlite3
import statistics
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
import trueskill
from click.testing import CliRunner

import arena.web.data as web_data
from arena.cli import main
from arena.ratings import RatingBook, rate_results
from arena.storage import MatchResult, Storage
from arena.tournament.schedule import SCHEDULE_VERSION
from tests.support.harness import get_json, web_server
from tests.web.test_web_poll_cost import get

# --- the oracle: docs/tournament.md's environment and trueskill's documented API ---------

MU0 = 25.0
SIGMA0 = MU0 / 3
DOC_DRAW = 0.02  # `[ratings] draw_probability`'s default (docs/tournament.md's table)


def oracle_env(draw: float) -> trueskill.TrueSkill:
    """μ₀ = 25, σ₀ = 25/3, β = σ₀/2, τ = σ₀/100 (docs/tournament.md, Ratings)."""
    return trueskill.TrueSkill(
        mu=MU0, sigma=SIGMA0, beta=SIGMA0 / 2, tau=SIGMA0 / 100, draw_probability=draw
    )


@dataclass
class Played:
    index: int
    seats: list[str]
    places: list[int]
    scores: list[int]
    deltas: list[list[int]]  # per finished deal, per seat


@dataclass
class Week:
    id: str
    total: int
    bots: list[str]
    draw: float
    matches: list[Played]


@dataclass
class Expect:
    rows: list[dict[str, Any]]
    together: dict[str, Counter[str]]
    ahead: dict[str, Counter[str]]
    history: dict[str, list[tuple[int, float, float]]]

    def row(self, bot: str) -> dict[str, Any]:
        return next(r for r in self.rows if r["bot"] == bot)


def read_weeks(db: Path) -> list[Week]:
    """Every tournament of ``db`` in the order stored, its matches as the records say."""
    out = []
    with contextlib.closing(sqlite3.connect(db)) as c:
        for tid, cfg, total in c.execute(
            "SELECT id, config_json, total_matches FROM tournaments ORDER BY rowid"
        ).fetchall():
            bots = [
                b
                for (b,) in c.execute(
                    "SELECT bot FROM tournament_bots WHERE tournament_id = ? ORDER BY position",
                    (tid,),
                )
            ]
            matches = []
            for idx, seats, rec in c.execute(
                "SELECT idx, seats_json, record_json FROM matches WHERE tournament_id = ?"
                " ORDER BY rowid",  # (the order stored: the oracle sorts them itself)
                (tid,),
            ):
                r = json.loads(rec)
                matches.append(
                    Played(
                        idx,
                        json.loads(seats),
                        r["result"]["places"],
                        r["result"]["scores"],
                        [d["deltas"] for d in r.get("deals", []) if "deltas" in d],
                    )
                )
            draw = json.loads(cfg).get("draw_probability", DOC_DRAW)
            out.append(Week(tid, total, bots, draw, matches))
    return out


def oracle(weeks: list[Week]) -> Expect:
    """The leaderboard the docs promise of ``weeks`` rated together (one week: its own)."""
    env = oracle_env(weeks[0].draw)
    rating: dict[str, trueskill.Rating] = {}
    bots: list[str] = []
    for w in weeks:
        bots += [b for b in w.bots if b not in bots]
    places: dict[str, Counter[int]] = {b: Counter() for b in bots}
    finals: dict[str, list[int]] = {b: [] for b in bots}
    deltas: dict[str, list[int]] = {b: [] for b in bots}
    together: dict[str, Counter[str]] = {b: Counter() for b in bots}
    ahead: dict[str, Counter[str]] = {b: Counter() for b in bots}
    history: dict[str, list[tuple[int, float, float]]] = {b: [(-1, MU0, SIGMA0)] for b in bots}
    offset = 0
    for w in weeks:
        for m in sorted(w.matches, key=lambda m: m.index):
            for b in m.seats:
                if b not in rating:
                    rating[b] = env.create_rating()
            new = env.rate([(rating[b],) for b in m.seats], ranks=m.places)
            for s, b in enumerate(m.seats):
                rating[b] = new[s][0]
                history[b].append((m.index + offset, rating[b].mu, rating[b].sigma))
                places[b][m.places[s]] += 1
                finals[b].append(m.scores[s])
                deltas[b] += [d[s] for d in m.deltas]
                for t, o in enumerate(m.seats):
                    if o != b:
                        together[b][o] += 1
                        ahead[b][o] += m.places[s] < m.places[t]
        offset += max([w.total, *(m.index + 1 for m in w.matches)])
    seats = max(len(m.seats) for w in weeks for m in w.matches)
    rows = []
    for b in bots:
        r = rating.get(b, env.create_rating())
        d = deltas[b]
        rows.append(
            {
                "bot": b,
                "mu": r.mu,
                "sigma": r.sigma,
                "conservative": r.mu - 3 * r.sigma,
                "matches": sum(places[b].values()),
                "places": [places[b][k] for k in range(1, seats + 1)],
                "mean_score": statistics.fmean(finals[b]) if finals[b] else None,
                "deals": len(d),
                "mean_per_deal": statistics.fmean(d) if d else None,
                "ci95": 1.96 * statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else None,
            }
        )
    rows.sort(key=lambda r: (-round(r["conservative"], 9), -r["mu"], r["bot"]))
    for k, r in enumerate(rows, 1):
        r["rank"] = k
    return Expect(rows, together, ahead, history)


# --- the arena's answers ----------------------------------------------------------------


def board_json(db: Path, *args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--format", "json", *args])
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def check_json(doc: dict[str, Any], want: Expect) -> None:
    """``leaderboard.json`` against the oracle: rows (bit for bit), head to head, history."""
    keys = (
        "rank",
        "bot",
        "mu",
        "sigma",
        "conservative",
        "matches",
        "places",
        "mean_score",
        "deals",
        "mean_per_deal",
    )
    assert [{k: r[k] for k in keys} for r in doc["rows"]] == [
        {k: r[k] for k in keys} for r in want.rows
    ]
    for got, r in zip(doc["rows"], want.rows, strict=True):
        # (the arena's from exact sums, correctly rounded: statistics.stdev's to an ulp)
        assert (got["ci95"] is None) == (r["ci95"] is None)
        if r["ci95"] is not None:
            assert got["ci95"] == pytest.approx(r["ci95"], rel=1e-15, abs=0)
    for a, row in doc["head_to_head"].items():
        for b, cell in row.items():
            n, up, down = want.together[a][b], want.ahead[a][b], want.ahead[b][a]
            assert cell == {"matches": n, "ahead": up, "behind": down, "ties": n - up - down}, (
                a,
                b,
            )
    assert sorted(doc["head_to_head"]) == sorted(want.together)
    got_h = {
        b: [(p["index"], p["mu"], p["sigma"]) for p in pts]
        for b, pts in doc["rating_history"].items()
    }
    assert got_h == want.history


def check_web(url: str, query: str, want: Expect, season: bool = False) -> dict[str, Any]:
    """``/api/leaderboard`` (or ``/api/season``) against the oracle."""
    doc: dict[str, Any] = get_json(url, ("/api/season?" if season else "/api/leaderboard?") + query)
    assert [
        (r["rank"], r["bot"], r["mu"], r["sigma"], r["conservative"], r["matches"], r["places"])
        for r in doc["rows"]
    ] == [
        (r["rank"], r["bot"], r["mu"], r["sigma"], r["conservative"], r["matches"], r["places"])
        for r in want.rows
    ]
    cells = doc["head_to_head"]["cells"]
    for a in want.together:
        for b, n in want.together[a].items():
            up, down = want.ahead[a][b], want.ahead[b][a]
            assert cells[a][b] == {"played": n, "ahead": up, "tied": n - up - down}
        assert set(cells.get(a, {})) == {b for b, n in want.together[a].items() if n}
    for bot, pts in want.history.items():
        sent = doc["history"].get(bot, [])
        assert [p["index"] for p in sent] == [i for i, _, _ in pts[1:]]  # (no prior)
        if len(pts) > 1:  # the last point whole (the row's), the others to 4 decimals
            assert (sent[-1]["mu"], sent[-1]["sigma"]) == pts[-1][1:]
            assert [(p["mu"], p["sigma"]) for p in sent[:-1]] == [
                (round(m, 4), round(s, 4)) for _, m, s in pts[1:-1]
            ]
    return doc


def check_vs(url: str, tournament: str, want: Expect) -> None:
    """A bot's page ``vs=`` another: the matches the two played together (their h2h cell)."""
    bots = [r["bot"] for r in want.rows]
    for a in bots:
        for b in bots:
            if a == b:
                continue
            page = get_json(url, f"/api/bots/{a}?tournament={tournament}&vs={b}&limit=1000")
            assert page["matches_total"] == want.together[a][b], (a, b)
            assert len(page["matches"]) == want.together[a][b]
            row = want.row(a)
            assert (page["row"]["mu"], page["row"]["sigma"], page["row"]["rank"]) == (
                row["mu"],
                row["sigma"],
                row["rank"],
            )


def half_up(x: float, digits: int) -> str:
    """``x`` to ``digits`` decimals, exactly halfway away from zero (docs/tournament.md)."""
    q = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{q:z.{digits}f}"


# --- tournaments made through the storage API --------------------------------------------


def record(
    seats: list[str],
    places: list[int],
    scores: list[int],
    *,
    forfeits: tuple[int, ...] = (),
    deals: list[list[int]] | None = None,
    abandoned: bool = False,
) -> dict[str, Any]:
    """A record of the shape the referee writes (docs/record-format.md), as small as the
    leaderboard reads it: the result, forfeits and their incidents, each deal's deltas."""
    done = [
        {"number": k, "dealer": 0, "actions": [], "deltas": d}
        for k, d in enumerate(deals or [scores])
    ]
    if abandoned:  # the deal it stopped in: no deltas
        done.append({"number": len(done), "dealer": 0, "actions": []})
    return {
        "players": list(seats),
        "result": {"places": list(places), "scores": list(scores)},
        "forfeits": list(forfeits),
        "incidents": [
            {"kind": "forfeit", "seat": s, "deal": 0, "detail": "gone"} for s in forfeits
        ],
        "deals": done,
    }


def store(
    db: Path,
    tid: str,
    *,
    bots: list[str],
    total: int,
    config: dict[str, Any],
    matches: list[tuple[int, list[str], dict[str, Any]]],
    finished: bool = True,
) -> None:
    with Storage(db) as st:
        st.ensure_tournament(
            tid,
            name=tid,
            fingerprint="f",
            config={"name": tid, **config},
            total_matches=total,
            bots=[(b, "hand") for b in bots],
        )
        for idx, seats, rec in matches:
            st.save_match(
                tid,
                match_id=f"{tid}-m{idx:03d}",
                index=idx,
                table=0,
                set_no=idx // 6,
                seed=idx,
                seats=seats,
                record=rec,
                started_at=1_700_000_000.0 + idx,
                finished_at=1_700_000_010.0 + idx,
            )
        if finished:
            st.finish_tournament(tid)


THREE = ["ann", "bob", "cid"]
RULES3 = {"ruleset": {"name": "classic", "players": 3}}


def edge3() -> list[tuple[int, list[str], dict[str, Any]]]:
    """Three seats: every kind of result, stored out of schedule order, index 4 missing."""
    a, b, c = THREE
    return [
        (
            5,
            [c, a, b],
            record(
                [c, a, b], [1, 2, 3], [1000, 400, -120], deals=[[120, 40, -60], [880, 360, -60]]
            ),
        ),
        (0, [a, b, c], record([a, b, c], [1, 2, 3], [130, 20, 0])),
        (2, [b, c, a], record([b, c, a], [1, 2, 2], [200, 60, 60])),  # a tie, 2nd
        (1, [c, b, a], record([c, b, a], [1, 1, 3], [210, 210, 15])),  # a tie for first
        # a forfeiter placed last though it scored most (the referee's forfeit_result)
        (3, [a, c, b], record([a, c, b], [2, 1, 3], [100, 90, 300], forfeits=(2,))),
        # two forfeiters of three: both 2nd (1, 2, 2)
        (6, [b, a, c], record([b, a, c], [2, 1, 2], [50, 70, 80], forfeits=(0, 2))),
        # abandoned: every seat forfeited, all placed last
        (
            7,
            [a, b, c],
            record([a, b, c], [3, 3, 3], [10, 20, 30], forfeits=(0, 1, 2), abandoned=True),
        ),
        (8, [c, a, b], record([c, a, b], [3, 2, 1], [5, 60, 125])),
    ]


@pytest.fixture(scope="module")
def hand_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One database: a 3-seat tournament of every edge (draw probability 0.3, two bots
    of the config never seated), a 4-seat one at the default, and three weeks of a season
    stored in another order than their names'."""
    db = tmp_path_factory.mktemp("oracle") / "hand.sqlite"
    store(
        db,
        "edge3",
        bots=[*THREE, "zed", "amy"],
        total=10,
        config={**RULES3, "draw_probability": 0.3},
        matches=edge3(),
    )
    four = ["ann", "bob", "cid", "dan"]
    a, b, c, d = four
    store(
        db,
        "edge4",
        bots=four,
        total=6,
        config={"ruleset": {"name": "classic", "players": 4}},
        matches=[
            (0, [a, b, c, d], record([a, b, c, d], [1, 2, 3, 4], [300, 200, 100, 0])),
            (1, [d, c, b, a], record([d, c, b, a], [1, 2, 2, 4], [300, 150, 150, 0])),
            (2, [b, d, a, c], record([b, d, a, c], [2, 1, 4, 4], [80, 90, 5, 7], forfeits=(2, 3))),
            (3, [c, a, d, b], record([c, a, d, b], [1, 1, 3, 3], [400, 400, 7, 7])),
            (
                4,
                [a, c, d, b],
                record(
                    [a, c, d, b], [4, 4, 4, 4], [1, 2, 3, 4], forfeits=(0, 1, 2, 3), abandoned=True
                ),
            ),
            (5, [d, a, b, c], record([d, a, b, c], [3, 1, 2, 4], [50, 250, 100, 0], forfeits=(3,))),
        ],
    )
    # The season's weeks, stored wb, wa, wc: the season rates them in that order.
    wk = [*THREE, "dee"]
    # club-wb unfinished, its schedule one longer than what it stored; club-wa's schedule
    # 0, as an `arena serve` session's: each week's indices take its schedule, at least
    store(
        db,
        "club-wb",
        bots=wk,
        total=4,
        config=RULES3,
        finished=False,
        matches=[
            (1, [b, c, "dee"], record([b, c, "dee"], [2, 1, 3], [50, 60, 0])),
            (0, [a, b, c], record([a, b, c], [1, 2, 3], [100, 50, 0])),
            (2, ["dee", a, c], record(["dee", a, c], [1, 1, 3], [70, 70, 5])),
        ],
    )
    store(
        db,
        "club-wa",
        bots=[*THREE],
        total=0,
        config=RULES3,
        matches=[
            (0, [c, b, a], record([c, b, a], [1, 2, 3], [300, 10, 0])),
            (1, [a, c, b], record([a, c, b], [1, 3, 3], [300, 0, 0], forfeits=(1, 2))),
        ],
    )
    # unfinished, its schedule longer than what is stored (a gap at its index 1)
    store(
        db,
        "club-wc",
        bots=wk,
        total=5,
        config=RULES3,
        finished=False,
        matches=[
            (2, [b, "dee", a], record([b, "dee", a], [1, 2, 3], [200, 100, 0])),
            (0, ["dee", c, b], record(["dee", c, b], [3, 2, 1], [0, 10, 500])),
        ],
    )
    return db


def _week(db: Path, tid: str) -> list[Week]:
    return [w for w in read_weeks(db) if w.id == tid]


def test_oracle_is_what_the_docs_say_of_a_plain_match() -> None:
    """The oracle's own footing: one match from the prior, trueskill's documented
    ``rate`` with ranks, gives the winner the greater μ and every σ smaller; a tie for
    first at draw probability 0.3 moves the two tied bots almost alike (docs: below 0.15)."""
    w = Week("t", 1, THREE, DOC_DRAW, [Played(0, THREE, [1, 2, 3], [3, 2, 1], [])])
    e = oracle([w])
    assert [r["bot"] for r in e.rows] == THREE
    assert all(r["sigma"] < SIGMA0 for r in e.rows)
    assert e.rows[0]["mu"] > MU0 > e.rows[2]["mu"]
    tie = oracle([Week("t", 1, THREE, 0.3, [Played(0, THREE, [1, 1, 3], [3, 3, 1], [])])])
    assert abs(tie.row("ann")["mu"] - tie.row("bob")["mu"]) < 0.15


def test_three_seats_every_edge_cli_json_and_stored_order(hand_db: Path) -> None:
    """Ties for first and second, one and two forfeiters, an abandoned match, results
    stored out of schedule order with one missing (a resumed run), bots of the config that
    never played (at the prior: ``amy`` before ``zed`` by name), draw probability 0.3:
    ``arena leaderboard --format json`` is the oracle's to the bit."""
    want = oracle(_week(hand_db, "edge3"))
    doc = board_json(hand_db, "--tournament", "edge3")
    check_json(doc, want)
    assert [r["bot"] for r in doc["rows"]][-2:] == ["amy", "zed"]
    assert doc["rows"][-1]["mu"] == MU0 and doc["rows"][-1]["sigma"] == SIGMA0
    # the abandoned match is a draw among all three, counted as 3rd for each
    assert all(want.row(b)["places"][2] >= 1 for b in THREE)


def test_the_draw_probability_of_the_config_is_the_one_rated_with(hand_db: Path) -> None:
    """The oracle at the default draw probability disagrees with the 0.3 tournament's
    ratings (so the config's value is read, not the default)."""
    weeks = _week(hand_db, "edge3")
    doc = board_json(hand_db, "--tournament", "edge3")
    weeks[0].draw = DOC_DRAW
    other = oracle(weeks)
    assert [r["mu"] for r in doc["rows"]] != [r["mu"] for r in other.rows]


def test_four_seats_ties_forfeits_abandoned_cli_and_web(hand_db: Path) -> None:
    """Four seats (ties for first, in the middle, two forfeiters sharing 4th, an abandoned
    match): the CLI's JSON, ``/api/leaderboard`` and every bot's ``vs=`` page."""
    want = oracle(_week(hand_db, "edge4"))
    check_json(board_json(hand_db, "--tournament", "edge4"), want)
    with web_server(hand_db) as server:
        check_web(server.url, "tournament=edge4", want)
        check_web(server.url, "tournament=edge3", oracle(_week(hand_db, "edge3")))
        check_vs(server.url, "edge4", want)
        # (edge3: not every bot in every match, amy and zed in none)
        check_vs(server.url, "edge3", oracle(_week(hand_db, "edge3")))


def test_a_season_is_its_weeks_rated_in_the_order_stored(hand_db: Path) -> None:
    """``--season club-w`` rates club-wb, club-wa, club-wc (stored in that order), each in
    schedule order, their histories' indices after every index of the weeks before
    (club-wb's schedule of 4 counts, club-wa's 2 stored of a schedule of 0); the web's
    ``/api/season`` the same. A season of one week is that week's leaderboard."""
    weeks = [w for w in read_weeks(hand_db) if w.id.startswith("club-w")]
    assert [w.id for w in weeks] == ["club-wb", "club-wa", "club-wc"]
    want = oracle(weeks)
    doc = board_json(hand_db, "--season", "club-w")
    check_json(doc, want)
    assert [t["id"] for t in doc["season"]["tournaments"]] == ["club-wb", "club-wa", "club-wc"]
    # named in another order and twice: the same
    check_json(board_json(hand_db, "--season", "club-wc,club-wa,club-wb,club-wa"), want)
    # the order matters: the weeks rated by name would give other ratings
    by_name = oracle(sorted(weeks, key=lambda w: w.id))
    assert [r["mu"] for r in by_name.rows] != [r["mu"] for r in want.rows]
    check_json(board_json(hand_db, "--season", "club-wa"), oracle(_week(hand_db, "club-wa")))
    with web_server(hand_db) as server:
        check_web(server.url, "season=club-w", want, season=True)


def test_screen_and_csv_round_as_the_docs_say(hand_db: Path) -> None:
    """The screen's μ−3σ, μ, σ to 2 decimals, halfway away from zero; the CSV's columns
    the oracle's figures (4 decimals; ``mean_final_score`` 2)."""
    want = oracle(_week(hand_db, "edge3"))
    r = CliRunner().invoke(
        main, ["leaderboard", "--db", str(hand_db), "--tournament", "edge3", "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["bot"] for row in rows] == [w["bot"] for w in want.rows]
    for row, w in zip(rows, want.rows, strict=True):
        assert row["rank"] == str(w["rank"]) and row["matches"] == str(w["matches"])
        assert [row[f"place_{k}"] for k in (1, 2, 3)] == [str(n) for n in w["places"]]
        for col, key in (("conservative", "conservative"), ("mu", "mu"), ("sigma", "sigma")):
            assert row[col] == half_up(w[key], 4), col
        if w["mean_score"] is not None:
            assert row["mean_final_score"] == half_up(w["mean_score"], 2)
    md = CliRunner().invoke(
        main, ["leaderboard", "--db", str(hand_db), "--tournament", "edge3", "--format", "md"]
    )
    assert md.exit_code == 0, md.output
    for w in want.rows:  # (the Markdown's row: | rank | bot | μ−3σ | μ | σ | matches | ...)
        line = next(ln for ln in md.stdout.splitlines() if f"| {w['bot']} |" in ln)
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:6] == [
            str(w["rank"]),
            w["bot"],
            half_up(w["conservative"], 2),
            half_up(w["mu"], 2),
            half_up(w["sigma"], 2),
            str(w["matches"]),
        ]
    table = CliRunner().invoke(
        main, ["leaderboard", "--db", str(hand_db), "--tournament", "edge3"], env={"COLUMNS": "200"}
    )
    assert table.exit_code == 0, table.output
    for w in want.rows:
        line = next(ln for ln in table.stdout.splitlines() if f" {w['bot']} " in ln)
        cells = [c.strip() for c in line.replace("│", "|").split("|") if c.strip()]
        assert cells[:5] == [
            str(w["rank"]),
            w["bot"],
            half_up(w["conservative"], 2),
            half_up(w["mu"], 2),
            half_up(w["sigma"], 2),
        ], line


# --- small real runs of the bundled bots ---------------------------------------------------

RUN3 = """\
name = "o3"
seed = 5
max_deals = 1
concurrency = 3
matches_per_table = 2
db = "o.sqlite"
out = "out3"
bots = ["random", "heuristic", "counting"]
[ratings]
draw_probability = 0.3
"""

RUN4 = """\
name = "o4"
ruleset = "1001-4p"
seed = 9
max_deals = 1
concurrency = 4
matches_per_table = 1
db = "o.sqlite"
out = "out4"
[bots]
r1 = "random"
r2 = "random"
heuristic = "heuristic"
counting = "counting"
"""


def _stored_history(db: Path, tid: str) -> dict[str, list[tuple[int, float, float]]]:
    out: dict[str, list[tuple[int, float, float]]] = {}
    with contextlib.closing(sqlite3.connect(db)) as c:
        for idx, bot, mu, sigma in c.execute(
            "SELECT idx, bot, mu, sigma FROM ratings WHERE tournament_id = ? ORDER BY idx, rowid",
            (tid,),
        ):
            out.setdefault(bot, [(-1, MU0, SIGMA0)]).append((idx, mu, sigma))
    return out


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two configs played to the end in one database (about 3 s)."""
    folder = tmp_path_factory.mktemp("runs")
    (folder / "o3.toml").write_text(RUN3)
    (folder / "o4.toml").write_text(RUN4)
    with contextlib.chdir(folder):
        for cfg in ("o3.toml", "o4.toml"):
            r = CliRunner().invoke(main, ["tournament", "--config", cfg, "--no-progress"])
            assert r.exit_code == 0, r.output
    return folder


def test_real_runs_three_and_four_seats_every_output(real_runs: Path) -> None:
    """Real matches of the bundled bots: the CLI's JSON, the files the run wrote, the
    ``ratings`` table it stored and ``arena web``'s API are the oracle's."""
    db = real_runs / "o.sqlite"
    weeks = read_weeks(db)
    assert len(weeks) == 2 and all(w.matches for w in weeks)
    with web_server(db) as server:
        for w, out in zip(weeks, ("out3", "out4"), strict=True):
            want = oracle([w])
            check_json(board_json(db, "--tournament", w.id), want)
            check_json(json.loads((real_runs / out / "leaderboard.json").read_text()), want)
            stored = _stored_history(db, w.id)
            assert stored == {b: h for b, h in want.history.items() if len(h) > 1}
            check_web(server.url, f"tournament={w.id}", want)
        check_vs(server.url, weeks[1].id, oracle([weeks[1]]))


@pytest.mark.slow  # (a third real run; schedule order itself is pinned by edge3's)
def test_a_resumed_real_run_ends_as_the_oracle_says(real_runs: Path, tmp_path: Path) -> None:
    """The 3-seat run with its matches 3, 7 and 11 lost (deleted, as a run stopped before
    storing them), resumed by the same command: its leaderboard and stored ratings are the
    oracle's of every match, rated in schedule order though stored last."""
    db = tmp_path / "o.sqlite"
    db.write_bytes((real_runs / "o.sqlite").read_bytes())
    tid = read_weeks(db)[0].id
    with contextlib.closing(sqlite3.connect(db)) as c, c:
        lost = [
            i
            for (i,) in c.execute(
                "SELECT id FROM matches WHERE tournament_id = ? AND idx IN (3, 7, 11)", (tid,)
            )
        ]
        assert len(lost) == 3
        for table, col in (
            ("match_players", "match_id"),
            ("deals", "match_id"),
            ("incidents", "match_id"),
            ("matches", "id"),
        ):
            c.executemany(f"DELETE FROM {table} WHERE {col} = ?", [(m,) for m in lost])
        c.execute("UPDATE tournaments SET finished_at = NULL WHERE id = ?", (tid,))
    with contextlib.chdir(real_runs):
        r = CliRunner().invoke(
            main,
            [
                "tournament",
                "--config",
                "o3.toml",
                "--no-progress",
                "--db",
                str(db),
                "--out",
                str(tmp_path / "out"),
            ],
        )
    assert r.exit_code == 0, r.output
    (week,) = _week(db, tid)
    assert len(week.matches) == 12
    assert sorted(m.index for m in week.matches[-3:]) == [3, 7, 11]  # (stored last)
    want = oracle([week])
    check_json(board_json(db, "--tournament", tid), want)
    assert _stored_history(db, tid) == {b: h for b, h in want.history.items() if len(h) > 1}


def test_matches_held_back_count_in_the_standings(tmp_path: Path) -> None:
    """docs/web.md: while a tournament of duplicate deals runs, a match whose seatings are
    still to be played is held back (its record 403) but "results, standings and the match
    list are served as they come": the standings are the oracle's of every stored match."""
    db = tmp_path / "held.sqlite"
    a, b, c = THREE
    cfg = {**RULES3, "schedule": SCHEDULE_VERSION, "matches_per_table": 1}
    store(db, "held", bots=THREE, total=6, config=cfg, finished=False, matches=[
        (0, [a, b, c], record([a, b, c], [1, 2, 3], [300, 100, 0])),
        (1, [b, c, a], record([b, c, a], [1, 1, 3], [200, 200, 5])),
    ])  # fmt: skip
    want = oracle(read_weeks(db))
    with web_server(db) as server:
        status, _, _ = get(server.url, "/api/matches/held-m000/record")
        assert status == 403  # (held back: four seatings of its cards to be played)
        check_web(server.url, "tournament=held", want)
        assert [r["matches"] for r in want.rows] == [2, 2, 2]


@pytest.mark.parametrize("seats", [3, 4])
def test_tied_bots_are_rated_as_trueskill_rates_them_within_the_docs_bounds(seats: int) -> None:
    """docs/tournament.md, Ratings: two bots tied from the prior differ by below 0.001 of
    μ at draw probability 0.02, 0.05 to 0.15 at 0.3, up to 0.5 at 0.5, several points at
    0.99 (tied 1st of four: 6.2 apart); the arena's ratings of every such match are the
    oracle's, to the bit."""
    bots = ["p", "q", "r", "s"][:seats]
    bounds = {0.02: (0.0, 0.001), 0.3: (0.05, 0.15), 0.5: (0.0, 0.5), 0.99: (2.0, 8.0)}
    for draw, (low, high) in bounds.items():
        cases = {tuple(p) for p in itertools.permutations([1, 1, *range(3, seats + 1)])}
        cases |= {tuple(p) for p in itertools.permutations([1, 2, 2, *range(4, seats + 1)])}
        for places in sorted(cases):
            book = RatingBook(bots, draw_probability=draw)
            got = {r.bot: (r.mu, r.sigma) for r in book.rate(bots, places)}
            env = oracle_env(draw)
            new = env.rate([(env.create_rating(),) for _ in bots], ranks=list(places))
            assert got == {b: (new[i][0].mu, new[i][0].sigma) for i, b in enumerate(bots)}
            tied = [got[b][0] for i, b in enumerate(bots) if places.count(places[i]) > 1]
            assert low <= max(tied) - min(tied) <= high, (draw, places)
    env = oracle_env(0.99)
    first = env.rate([(env.create_rating(),) for _ in range(4)], ranks=[1, 1, 3, 4])
    assert round(first[0][0].mu - first[1][0].mu, 1) in (6.2, -6.2)


def test_equal_conservative_ratings_rank_the_greater_mu_first() -> None:
    """docs/tournament.md, Outputs: ranked without shared ranks; of two equal to 9
    decimals the greater μ first, then by name. Stored results hardly ever give two bots
    one μ−3σ but for the prior, so the ratings are set: (28, 1) and (31, 2) are both 25."""
    book = RatingBook(["b", "a", "c", "d", "e"])
    ratings = (("a", 28.0, 1.0), ("b", 31.0, 2.0), ("c", 31.0, 2.0 + 1e-11), ("e", 30.0, 1.6))
    for bot, mu, sigma in ratings:
        book._ratings[bot] = trueskill.Rating(mu, sigma)
    # c is below b by 3e-11: equal to 9 decimals, so by μ (equal), then by name; e's 25.2
    # is above them all, though its μ is below b's and c's
    order = [(r.bot, r.mu) for r in book.leaderboard()]
    assert order == [("e", 30.0), ("b", 31.0), ("c", 31.0), ("a", 28.0), ("d", MU0)]


def test_rate_results_rates_stored_results_in_schedule_order(hand_db: Path) -> None:
    """:func:`arena.ratings.rate_results` (what a run stores in ``ratings`` and what the
    live display's book starts from) given edge3's results in the order stored: the
    oracle's ratings, match counts and history, rated by schedule index."""
    (week,) = _week(hand_db, "edge3")
    results = [
        MatchResult(f"m{m.index}", m.index, tuple(m.seats), tuple(m.scores), tuple(m.places),
                    (), 1, 0.0)
        for m in week.matches
    ]  # fmt: skip
    assert [m.index for m in results] != sorted(m.index for m in results)
    want = oracle([week])
    book, history = rate_results(results, week.bots, draw_probability=week.draw)
    for row in want.rows:
        got = book.get(row["bot"])
        assert (got.mu, got.sigma, got.matches) == (row["mu"], row["sigma"], row["matches"])
    points: dict[str, list[tuple[int, float, float]]] = {}
    for p in history:
        points.setdefault(p.bot, [(-1, MU0, SIGMA0)]).append((p.index, p.mu, p.sigma))
    assert points == {b: h for b, h in want.history.items() if len(h) > 1}


def test_a_running_tournament_on_the_web_is_rated_in_schedule_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena web`` following a running tournament (its builder reads only the matches
    stored since, which end out of schedule order: concurrent tables) answers, at each
    step, the oracle's leaderboard of what is stored, as a run resumed would."""
    monkeypatch.setattr(web_data, "THROTTLE", 0.0)
    db = tmp_path / "live.sqlite"
    matches = {idx: (idx, seats, rec) for idx, seats, rec in edge3()}
    config = {**RULES3, "draw_probability": 0.3, "deals": "independent"}
    store(db, "live", bots=THREE, total=9, config=config, finished=False, matches=[])
    with web_server(db) as server:
        for batch in ([5, 8], [0, 3], [2], [6, 1, 7]):
            with Storage(db) as st:
                for idx in batch:
                    _, seats, rec = matches[idx]
                    st.save_match("live", match_id=f"live-m{idx:03d}", index=idx, table=0,
                                  set_no=idx, seed=idx, seats=seats, record=rec,
                                  started_at=1.0, finished_at=2.0)  # fmt: skip
            check_web(server.url, "tournament=live", oracle(read_weeks(db)))


def test_vs_a_bot_of_the_tournament_not_seated_yet_is_no_match_not_an_error(
    hand_db: Path,
) -> None:
    """Docs defect (docs/web.md, docs/record-format.md said "a B the tournament never
    seated is a 404"): a bot of the tournament's config with no match stored (amy: its
    matches still to come, and a row of the leaderboard at the prior) has pages and lists
    of no match, 200 and exit 0, on the web and in ``arena replay --list --vs``; a name
    that is none of its bots is the 404 (exit 2)."""
    with web_server(hand_db) as server:
        for path in ("/api/bots/ann?tournament=edge3&vs=amy", "/api/bots/amy?tournament=edge3",
                     "/api/matches?tournament=edge3&bot=ann&vs=amy"):  # fmt: skip
            page = get_json(server.url, path)
            assert page["matches_total"] == 0 and page["matches"] == [], path
        for path in ("/api/bots/ann?tournament=edge3&vs=nobody",
                     "/api/matches?tournament=edge3&bot=ann&vs=nobody"):  # fmt: skip
            assert get(server.url, path)[0] == 404, path
    listed = CliRunner().invoke(
        main, ["replay", "--list", "--db", str(hand_db), "--tournament", "edge3", "--bot", "ann",
               "--vs", "amy"])  # fmt: skip
    assert listed.exit_code == 0 and "no stored match played by ann against amy" in listed.output
    wrong = CliRunner().invoke(
        main, ["replay", "--list", "--db", str(hand_db), "--tournament", "edge3", "--bot", "ann",
               "--vs", "nobody"])  # fmt: skip
    assert wrong.exit_code == 2 and "no bot 'nobody' in tournament edge3" in wrong.output
