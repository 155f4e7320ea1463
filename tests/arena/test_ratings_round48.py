"""Round 48: the leaderboard's TrueSkill ratings, checked as a statistician and an organiser
would.

The multi-player update is compared, bit for bit, with a ``trueskill.TrueSkill`` built here
(μ 25, σ 25/3, β σ/2, τ σ/100, the draw probability as a config's ``[ratings]`` gives it) on
every pattern of places of 2, 3 and 4 seats, ties and the referee's forfeit places among
them. Small tournaments on the in-process fake referee (the real engine) are then checked
with round 38's recomputation from the SQLite file alone (``check_all``: every figure of
the JSON, CSV, Markdown, HTML and the screen, and the stored ``ratings`` table): matches
that end in another order than the schedule's, a run stopped and resumed at another
concurrency, a copy of the database, a bot that played no match, tied scores at the deal
cap, matches every seat forfeited, a renamed bot, 12 bots at tables of four.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trueskill
from click.testing import CliRunner

from arena.cli import main
from arena.leaderboard import build_leaderboard, write_outputs
from arena.ratings import RatingBook, rate_results
from arena.storage import MatchResult, Storage
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.schedule import build_schedule
from engine import Ruleset
from engine.record import forfeit_result
from tests.arena.fake_referee import FakeReferee, make_config, run_fake
from tests.arena.test_leaderboard_round38 import check_all, recompute

DRAWS = [5e-324, 0.02, 0.5, 0.99]  # the config's extremes and two between


def _draw_from_config(tmp: Path, draw: float) -> float:
    """The draw probability as ``[ratings] draw_probability`` reaches the ratings."""
    cfg = make_config(tmp, ratings={"draw_probability": draw})
    assert cfg.draw_probability == draw
    return float(cfg.draw_probability)


def _package_env(draw: float) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300,
                               draw_probability=draw)  # fmt: skip


def _bits(r: Any) -> bytes:
    return struct.pack("<dd", r.mu, r.sigma)


def _place_patterns(n: int) -> list[tuple[int, ...]]:
    """Every outcome of ``n`` seats as the referee numbers places: by score, equal scores
    sharing a place (1, 1, 3), and with forfeiters after the others (1, 2, 2)."""
    out = set()
    for scores in itertools.product(range(n), repeat=n):
        out.add(tuple(1 + sum(o > s for o in scores) for s in scores))
        for k in range(1, n + 1):
            for gone in itertools.combinations(range(n), k):
                result = {"scores": list(scores), "places": [], "winner": None}
                out.add(tuple(forfeit_result(result, list(gone), 1000)["places"]))
    return sorted(out)


@pytest.mark.parametrize("draw", DRAWS)
def test_every_place_pattern_is_rated_as_trueskills_rate(tmp_path: Path, draw: float) -> None:
    """3 and 4 seats (and 2), every pattern of places, ties and forfeits among them, from
    unequal ratings: the arena's update is ``env.rate(..., ranks=places)``'s, to the bit."""
    draw = _draw_from_config(tmp_path, draw)
    env = _package_env(draw)
    for n in (2, 3, 4):
        patterns = _place_patterns(n)
        assert (n,) * n in patterns and (1,) * n in patterns  # all forfeited / all tied
        for places in patterns:
            bots = [f"b{i}" for i in range(n)]
            book = RatingBook(bots, draw_probability=draw)
            # unequal ratings first: one match in which the seats finish in seat order
            book.rate(bots, list(range(1, n + 1)))
            before = [book._ratings[b] for b in bots]
            got = book.rate(bots, list(places))
            want = env.rate([(r,) for r in before], ranks=list(places))
            assert [_bits(r) for r in got] == [_bits(r) for (r,) in want], (n, places, draw)
            assert [r.matches for r in got] == [2] * n


def test_forfeiters_lose_to_every_seat_that_stayed_and_all_forfeiting_is_a_draw() -> None:
    """docs/tournament.md: a forfeiter is placed last; every seat forfeited is rated as a
    draw among them (the same update as three equal places)."""
    for n in (3, 4):
        bots = [f"b{i}" for i in range(n)]
        result = {"scores": [500, 100, 900, 50][:n], "places": [], "winner": None}
        # seat 2 had the best score when it forfeited: it is still placed last
        places = forfeit_result(result, [2], 1000)["places"]
        assert places[2] == n and sorted(places) == list(range(1, n + 1))
        book = RatingBook(bots)
        rated = {r.bot: r for r in book.rate(bots, places)}
        assert all(rated["b2"].mu < rated[b].mu for b in bots if b != "b2")
        everyone = forfeit_result(result, list(range(n)), 1000)["places"]
        assert everyone == [n] * n
        a, b = RatingBook(bots), RatingBook(bots)
        assert [_bits(r) for r in a.rate(bots, everyone)] == [
            _bits(r) for r in b.rate(bots, [1] * n)
        ]


def test_the_order_is_mu_minus_3_sigma_then_mu_then_the_name() -> None:
    """Rows equal in μ−3σ to 9 decimals are ordered by the greater μ, then by name; bots
    still at the prior (all equal) by name; never by the order they were listed in."""
    book = RatingBook(["zed", "amy", "bo", "cy", "dee", "eve"])
    R = trueskill.Rating
    book._ratings.update({
        "cy": R(40.0, 6.0),  # μ−3σ 22: a high μ, but unsure
        "dee": R(30.0, 1.0),  # 27
        "eve": R(31.0, 4.0 / 3),  # 27 as well (to 9 decimals), the greater μ
        "bo": R(30.0 + 3e-12, 1.0),  # 27 + 3e-12: equal to 9 decimals, μ decides
    })  # fmt: skip
    order = [r.bot for r in book.leaderboard()]
    assert order == ["eve", "bo", "dee", "cy", "amy", "zed"]
    prior = book.get("amy")
    assert (prior.mu, prior.sigma, prior.matches) == (25.0, 25 / 3, 0)


@pytest.mark.parametrize(
    ("draw", "low", "high"), [(0.02, 0.0, 0.001), (0.3, 0.05, 0.15), (0.5, 0.18, 0.5)]
)
def test_bots_that_tie_are_rated_by_their_seats_as_the_doc_says(
    draw: float, low: float, high: float
) -> None:
    """docs/tournament.md (Ratings): TrueSkill chains neighbouring places, the tied seats
    in seat order, so two bots that share a place from equal ratings gain unlike amounts;
    the sizes the doc gives, and 6.2 points of μ for two tied 1st of four at 0.99."""
    gaps = []
    for places in ([1, 1, 3], [1, 2, 2], [1, 1, 3, 4], [1, 2, 2, 4], [1, 2, 3, 3], [1, 2, 2, 2]):
        bots = [f"b{i}" for i in range(len(places))]
        rated = RatingBook(bots, draw_probability=draw).rate(bots, places)
        tied = [r.mu for r, p in zip(rated, places, strict=True) if places.count(p) > 1]
        gaps.append(max(tied) - min(tied))
    assert low <= min(gaps) and max(gaps) < high, gaps
    bots = ["a", "b", "c", "d"]
    a, b, _, _ = RatingBook(bots, draw_probability=0.99).rate(bots, [1, 1, 3, 4])
    assert round(b.mu - a.mu, 1) == 6.2
    # the same pair in the other seats: the gain follows the seat, not the bot
    b2, a2, _, _ = RatingBook(bots, draw_probability=0.99).rate(["b", "a", "c", "d"], [1, 1, 3, 4])
    assert (a2.mu, b2.mu) == (b.mu, a.mu)


class Referee48(FakeReferee):
    """The fake referee with the real referee's places (``forfeit_result``: forfeiters
    share the place after the others; a match every seat forfeited is abandoned, each
    placed last), and ``lag(index)`` seconds before a match ends, so that matches played
    at once end in another order than the schedule's (``ended``)."""

    def __init__(self, lag: Callable[[int], float] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.lag = lag
        self.ended: list[int] = []

    async def run_match(self, match_id: str, ruleset: Ruleset, seed: int, seats: list[str],
                        time_limit_s: float | None = None) -> dict[str, Any]:  # fmt: skip
        index = int(match_id.rsplit("-m", 1)[1])
        if self.lag is not None:
            await asyncio.sleep(self.lag(index))
        rec = await super().run_match(match_id, ruleset, seed, seats, time_limit_s)
        self.ended.append(index)
        return rec

    def play(self, ruleset: Ruleset, seed: int, seats: list[str]) -> dict[str, Any]:
        gone, self.forfeit = self.forfeit, set()
        try:
            rec = super().play(ruleset, seed, seats)
        finally:
            self.forfeit = gone
        forfeits = [s for s, name in enumerate(seats) if name in gone]
        if forfeits:
            rec["rules_result"] = rec["result"]
            rec["result"] = forfeit_result(rec["result"], forfeits, ruleset.target)
            rec["forfeits"] = forfeits
            rec["abandoned"] = len(forfeits) == len(seats)
            rec["incidents"] += [{"kind": "forfeit", "seat": s, "deal": 0,
                                  "detail": "3 strikes"} for s in forfeits]  # fmt: skip
        return rec


def _json_rows(path: Path) -> Any:
    doc = json.loads(path.read_text())
    return doc["rows"], doc["rating_history"], doc["head_to_head"]


def _checked(cfg: Any) -> dict[str, Any]:
    """Every output of ``cfg``'s tournament (the files written as `arena tournament`
    writes them at its end) against round 38's recomputation."""
    with Storage(cfg.db) as st:
        write_outputs(build_leaderboard(st, cfg.tournament_id), cfg.out)
    want, bad = check_all(Path(cfg.db), Path(cfg.out))
    assert bad == []
    return want


def test_matches_ending_out_of_order_are_rated_in_schedule_order(tmp_path: Path) -> None:
    """The quick form of the next test: three at once, the later of three ending first;
    the leaderboard's ratings and history are those recomputed from the SQLite file alone
    in schedule order, to the bit."""
    cfg = make_config(tmp_path, bots=3, max_deals=1, concurrency=3,
                      ratings={"draw_probability": 0.2})  # fmt: skip
    referee = Referee48(lag=lambda i: 0.003 * (3 - i % 3), forfeit={"cid"})
    assert run_fake(cfg, referee).completed == 6
    assert referee.ended != sorted(referee.ended)
    want = recompute(Path(cfg.db), cfg.tournament_id)
    with Storage(cfg.db) as st:
        lb = build_leaderboard(st, cfg.tournament_id)
    assert {r.bot: (r.mu, r.sigma) for r in lb.rows} == {
        b: (w["mu"], w["sigma"]) for b, w in want["bots"].items()
    }
    assert lb.history == want["history"]


@pytest.mark.slow
def test_matches_ending_out_of_order_a_resume_and_a_copy_give_one_leaderboard(
    tmp_path: Path,
) -> None:
    """Four at once, each later match of four ending first: every output and the stored
    ratings are those of the schedule's order (not the order of completion, which rates
    these results otherwise); a run stopped after 7 matches and resumed at another
    concurrency ends with the same leaderboard.json, and so does `arena leaderboard` on a
    copy of the database."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    kw: dict[str, Any] = {"bots": 4, "max_deals": 2, "concurrency": 4,
                          "ratings": {"draw_probability": 0.3}}  # fmt: skip
    cfg = make_config(tmp_path / "a", **kw)
    referee = Referee48(lag=lambda i: 0.002 * (4 - i % 4), faulty={"bob"}, forfeit={"dan"})
    assert run_fake(cfg, referee).completed == 24
    assert referee.ended != sorted(referee.ended)
    want = _checked(cfg)
    # the order is decisive for these results: rated as they ended, the numbers differ
    with Storage(cfg.db) as st:
        results = {m.index: m for m in st.match_results(cfg.tournament_id)}
    done, _ = rate_results([], cfg.bot_names, draw_probability=0.3)
    for i in referee.ended:
        done.rate(results[i].seats, results[i].places)
    assert {r.bot: r.mu for r in done.leaderboard()} != {
        b: w["mu"] for b, w in want["bots"].items()
    }
    assert want["bots"]["dan"]["places"] == [0, 0, 18]
    # stopped after 7 (one at a time), resumed three at a time
    again = make_config(tmp_path / "b", **{**kw, "concurrency": 1})
    assert run_fake(again, Referee48(faulty={"bob"}, forfeit={"dan"}),
                    max_new_matches=7).completed == 7  # fmt: skip
    again = make_config(tmp_path / "b", **{**kw, "concurrency": 3})
    assert run_fake(again, Referee48(lag=lambda i: 0.001 * (i % 3 == 0), faulty={"bob"},
                                     forfeit={"dan"})).completed == 24  # fmt: skip
    assert again.tournament_id == cfg.tournament_id
    one = _json_rows(Path(cfg.out) / "leaderboard.json")
    with Storage(again.db) as st:
        write_outputs(build_leaderboard(st, again.tournament_id), again.out)
    assert _json_rows(Path(again.out) / "leaderboard.json") == one
    # `arena leaderboard` on a copy of the database, elsewhere
    copy = tmp_path / "copy" / "c.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(cfg.db, copy)
    res = CliRunner().invoke(main, ["leaderboard", "--db", str(copy), "--format", "json",
                                    "--out", str(tmp_path / "copy" / "lb.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert _json_rows(tmp_path / "copy" / "lb.json") == one


@pytest.mark.slow
def test_a_tournament_stopped_early_lists_the_bot_that_played_no_match(tmp_path: Path) -> None:
    """One match of four bots at tables of three: the fourth is listed at the prior
    (μ 25, σ 25/3, no match, no figure), ranked by its μ−3σ (0: above the bot that lost)."""
    cfg = make_config(tmp_path, bots=4, max_deals=1)
    assert run_fake(cfg, Referee48(), max_new_matches=1).completed == 1
    want = _checked(cfg)
    with Storage(cfg.db) as st:
        lb = build_leaderboard(st, cfg.tournament_id)
        (m,) = st.match_results(cfg.tournament_id)
    (idle,) = set(cfg.bot_names) - set(m.seats)
    row = next(r for r in lb.rows if r.bot == idle)
    assert (row.mu, row.sigma, row.matches, row.places, row.deals) == (25.0, 25 / 3, 0, [0] * 3, 0)
    assert row.mean_per_deal is row.mean_score is row.median_ms is None
    assert lb.history[idle] == [(-1, 25.0, 25 / 3)]
    assert want["history"][idle] == [(-1, 25.0, 25 / 3)]
    last = m.seats[m.places.index(max(m.places))]
    assert [r.bot for r in lb.rows].index(idle) == 2 and lb.rows[3].bot == last


@pytest.mark.slow
def test_tied_scores_at_the_deal_cap_share_a_place_and_are_rated_as_a_draw(
    tmp_path: Path,
) -> None:
    """Seed 1, one deal: match 0 ends at the cap on 60, 0, 60: places 1, 3, 1, one tie
    head to head, and the update of ranks with a shared first place."""
    cfg = make_config(tmp_path, bots=3, max_deals=1, matches_per_table=2, seed=1,
                      ratings={"draw_probability": 0.1})  # fmt: skip
    assert run_fake(cfg, Referee48()).completed == 12
    want = _checked(cfg)
    with Storage(cfg.db) as st:
        rec = st.load_record(f"{cfg.tournament_id}-m00000")
    assert rec["result"]["scores"] == [60, 0, 60] and rec["result"]["places"] == [1, 3, 1]
    assert rec["result"]["reason"] == "max_deals"
    a, b, c = rec["players"]
    assert want["bots"][a]["h2h"][c]["ties"] >= 1
    env = _package_env(0.1)
    (ra,), (rb,), (rc,) = env.rate([(env.create_rating(),)] * 3, ranks=[1, 3, 1])
    first = want["history"]
    assert first[a][1] == (0, ra.mu, ra.sigma) and first[c][1] == (0, rc.mu, rc.sigma)
    assert first[b][1] == (0, rb.mu, rb.sigma)


@pytest.mark.slow
def test_matches_every_seat_forfeited_are_draws_among_the_last(tmp_path: Path) -> None:
    """Every bot forfeits every match: each is placed 3rd in all of them, rated as draws
    (μ stays 25 by symmetry, σ shrinks), counted as ties head to head."""
    cfg = make_config(tmp_path, bots=3, max_deals=1)
    assert run_fake(cfg, Referee48(forfeit={"ann", "bob", "cid"})).completed == 6
    want = _checked(cfg)
    for b in ("ann", "bob", "cid"):
        w = want["bots"][b]
        assert w["places"] == [0, 0, 6] and w["strikes"]["forfeits"] == 6
        assert w["sigma"] < 25 / 3
        assert all(h["ties"] == 6 for h in w["h2h"].values())


def test_a_renamed_bot_starts_a_new_tournament_and_leaves_the_old_ratings(
    tmp_path: Path,
) -> None:
    """A bot renamed between runs is a new tournament (its id changes): the old one's
    ratings stay as they were, the new one rates only its own matches."""
    cfg = make_config(tmp_path, bots=4, max_deals=1)
    run_fake(cfg, Referee48(), max_new_matches=5)
    with Storage(cfg.db) as st:
        old = build_leaderboard(st, cfg.tournament_id).to_dict()
    bots = {"ann": "random", "bob": "random", "cid": "random", "dave": "random"}
    renamed = parse_config({"name": "t", "ruleset": "classic", "max_deals": 1, "seed": 7,
                            "matches_per_table": 1, "concurrency": 3, "db": str(cfg.db),
                            "out": str(cfg.out), "bots": bots},
                           source="test.toml", base_dir=tmp_path)  # fmt: skip
    assert renamed.tournament_id != cfg.tournament_id
    run_fake(renamed, Referee48(), max_new_matches=3)
    with Storage(cfg.db) as st:
        again = build_leaderboard(st, cfg.tournament_id).to_dict()
        new = build_leaderboard(st, renamed.tournament_id)
    del old["generated_at"], again["generated_at"]
    assert again == old
    assert {r.bot for r in new.rows} == set(bots)
    assert sum(r.matches for r in new.rows) == 9


@pytest.mark.parametrize(
    ("ratings", "says"),
    [
        ({"draw_probability": 0}, "must be above 0 and at most 0.99, got 0"),
        ({"draw_probability": 0.991}, "must be above 0 and at most 0.99, got 0.991"),
        ({"draw_probability": True}, "expected an integer or a float, got a boolean true"),
        ({"draw_probability": "0.1"}, "expected an integer or a float, got a string"),
        ({"draw_probability": float("nan")}, "expected a finite number, got nan"),
        ({"draw_probability": 10**400}, "past the range of a float"),
        ({"draw": 0.1}, "unknown key (did you mean 'draw_probability'?)"),
        (0.1, "expected a table"),
    ],
)
def test_bad_ratings_values_are_refused_naming_the_key(
    tmp_path: Path, ratings: Any, says: str
) -> None:
    with pytest.raises(ConfigError) as info:
        make_config(tmp_path, ratings=ratings)
    key = "ratings.draw" if isinstance(ratings, dict) and "draw" in ratings else "ratings"
    assert f"test.toml: {key}" in str(info.value) and says in str(info.value), info.value


def test_two_bots_are_refused_and_twelve_at_tables_of_four_are_rated_evenly(
    tmp_path: Path,
) -> None:
    """Two bots cannot fill a table of three (a clear error naming ``bots``); twelve at
    tables of four: 495 tables in 24 seatings, every bot in as many matches and seats;
    their ratings are ``env.rate``'s along the schedule (the first 400 matches, with
    places that tie and forfeit)."""
    with pytest.raises(ConfigError, match=r"bots: .* at least 3 bots are needed, got 2"):
        make_config(tmp_path, bots=2)
    bots = [f"bot{i:02d}" for i in range(12)]
    schedule = build_schedule(bots, 4, 1, seed=5)
    assert len(schedule) == 495 * 24 and len({m.seed for m in schedule}) == 1
    seats = Counter((b, s) for m in schedule for s, b in enumerate(m.seats))
    assert set(seats.values()) == {990} and len(seats) == 48
    patterns = _place_patterns(4)
    results = [
        MatchResult(
            match_id=f"x-m{m.index:05d}",
            index=m.index,
            seats=m.seats,
            scores=(0,) * 4,
            places=patterns[m.index % len(patterns)],
            forfeits=(),
            deals=1,
            duration_s=0.0,
        )
        for m in schedule[:400]
    ]
    book, history = rate_results(reversed(results), bots, draw_probability=0.02)
    env = _package_env(0.02)
    mine = {b: env.create_rating() for b in bots}
    for m in results:
        for b, (r,) in zip(m.seats, env.rate([(mine[b],) for b in m.seats], ranks=m.places),
                           strict=True):  # fmt: skip
            mine[b] = r
    assert {b: _bits(book.get(b)) for b in bots} == {b: _bits(mine[b]) for b in bots}
    assert len(history) == 1600
