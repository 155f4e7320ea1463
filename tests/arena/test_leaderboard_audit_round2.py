"""Leaderboard audit, round 2: every figure recomputed from the stored records by code of
its own (this file's ``_recompute``, the ``trueskill`` package directly) and compared with
what ``arena leaderboard`` and ``arena web`` show. Real tournaments of every kind agreed
(classic, 1001, 1001-4p, timeouts, illegal and malformed answers, forfeits, abandoned
matches, ties, match time limits, disconnects, SIGINT then resume, an interrupted one,
`arena serve --db`); the defects were in how figures are written out."""

from __future__ import annotations

import dataclasses
import math
import shutil
import statistics
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import trueskill
from click.testing import CliRunner

from arena.cli import main as cli_main
from arena.leaderboard import build_leaderboard
from arena.leaderboard.render import to_markdown, to_rich_table
from arena.storage import Storage
from arena.web import DataSource
from tests.arena.fake_referee import FakeReferee, make_config, run_fake

# --- the independent check ----------------------------------------------------------------

_GROUP = {"timeout": "timeouts", "illegal": "illegal", "malformed": "illegal",
          "disconnect": "disconnects", "forfeit": "forfeits"}  # fmt: skip


def _recompute(st: Storage, tid: str, draw: float) -> dict[str, dict[str, Any]]:
    """Per bot, from the records alone: what docs/tournament.md says each column is."""
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300,
                              draw_probability=draw)  # fmt: skip
    ratings: dict[str, trueskill.Rating] = {}
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {
        "matches": 0, "places": Counter(), "scores": [], "deltas": [], "bids": 0,
        "contracts": 0, "made": 0, "concessions": 0, "strikes": Counter(), "ms": [],
        "ahead": Counter(), "together": Counter()})  # fmt: skip
    for _idx, seats, rec in st.iter_records(tid):  # in schedule order
        places = rec["result"]["places"]
        for s, bot in enumerate(seats):
            b = out[bot]
            b["matches"] += 1
            b["places"][places[s]] += 1
            b["scores"].append(rec["result"]["scores"][s])
            for o, other in enumerate(seats):
                if o != s:
                    b["together"][other] += 1
                    b["ahead"][other] += places[s] < places[o]
        for deal in rec["deals"]:
            if "deltas" not in deal:
                continue
            for s, d in enumerate(deal["deltas"]):
                out[seats[s]]["deltas"].append(d)
            words = [(a["seat"], a["action"].split()[0]) for a in deal["actions"]]
            declarer = next((s for s, w in words if w in ("give", "contract", "concede",
                                                          "throw-in")), None)  # fmt: skip
            if declarer is not None:
                b = out[seats[declarer]]
                b["bids"] += 1
                if deal["outcome"] in ("made", "failed"):
                    b["contracts"] += 1
                    b["made"] += deal["outcome"] == "made"
                else:
                    b["concessions"] += 1
            for a in deal["actions"]:
                if a.get("by") == "bot":
                    out[seats[a["seat"]]]["ms"].append(a["ms"])
        for inc in rec.get("incidents", []):
            out[seats[inc["seat"]]]["strikes"][_GROUP.get(inc["kind"], "other")] += 1
        new = env.rate([(ratings.setdefault(b, env.create_rating()),) for b in seats],
                       ranks=places)  # fmt: skip
        for bot, (r,) in zip(seats, new, strict=True):
            ratings[bot] = r
    for bot, b in out.items():
        b["mu"], b["sigma"] = ratings[bot].mu, ratings[bot].sigma
        dl = b["deltas"]
        b["mean"] = statistics.fmean(dl)
        b["ci95"] = 1.96 * statistics.stdev(dl) / math.sqrt(len(dl))
        b["median_ms"] = statistics.median(b["ms"]) if b["ms"] else None
    return out


def test_every_figure_of_a_tournament_with_timeouts_and_forfeits_is_recomputed(
    tmp_path: Path,
) -> None:
    """Cross-check (no defect): four bots on classic, one with a timeout a match, one that
    forfeits every match (placed last); every column, head to head and the ratings of
    ``build_leaderboard`` equal this file's recomputation from the records."""
    cfg = make_config(tmp_path, bots=4, max_deals=3)
    assert run_fake(cfg, FakeReferee(faulty={"cid"}, forfeit={"dan"})).finished
    with Storage(cfg.db) as st:
        want = _recompute(st, cfg.tournament_id, cfg.draw_probability)
        lb = build_leaderboard(st, cfg.tournament_id)
    assert lb.completed == lb.total_matches == 24
    rows = {r.bot: r for r in lb.rows}
    for bot, w in want.items():
        r = rows[bot]
        assert (r.mu, r.sigma) == pytest.approx((w["mu"], w["sigma"]), abs=1e-9), bot
        assert r.matches == w["matches"] == 18
        assert r.places == [w["places"][k] for k in (1, 2, 3)]
        assert r.deals == len(w["deltas"])
        assert r.mean_per_deal == pytest.approx(w["mean"])
        assert r.ci95 == pytest.approx(w["ci95"])
        assert r.mean_score == pytest.approx(statistics.fmean(w["scores"]))
        assert (r.bids_won, r.contracts, r.contracts_made, r.concessions) == (
            w["bids"], w["contracts"], w["made"], w["concessions"])  # fmt: skip
        assert r.strikes == {g: w["strikes"][g] for g in (*_GROUP.values(), "other")}
        assert (r.decisions, r.median_ms) == (len(w["ms"]), w["median_ms"])
        for other in want:
            if other != bot:
                assert lb.h2h.together[bot][other] == w["together"][other]
                assert lb.h2h.ahead[bot][other] == w["ahead"][other]
    # what the fake referee's bots did, seen in the figures
    assert rows["dan"].places == [0, 0, 18] and rows["dan"].strikes["forfeits"] == 18
    assert rows["cid"].strikes["timeouts"] == 18 and rows["cid"].median_ms == 900.0
    assert [r.bot for r in lb.rows][-1] == "dan"
    assert lb.h2h.ahead["dan"] == {"ann": 0, "bob": 0, "cid": 0, "dan": 0}


# --- defects --------------------------------------------------------------------------------


def _record(players: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "players": players,
        "deals": [{"number": 0, "dealer": 0, "outcome": "made", "deltas": [120, 10, 0],
                   "scores": [120, 10, 0],
                   "actions": [{"seat": 0, "action": "bid 100", "ms": 12, "by": "bot"},
                               {"seat": 1, "action": "pass", "ms": 13, "by": "bot"},
                               {"seat": 2, "action": "pass", "ms": 3, "by": "bot"},
                               {"seat": 0, "action": "give 9♠ to 1", "ms": 2, "by": "bot"},
                               {"seat": 0, "action": "give 9♣ to 2", "ms": 2, "by": "bot"},
                               {"seat": 0, "action": "contract 120", "ms": 2, "by": "bot"}]}],
        "result": {"scores": [120, 10, 0], "places": [1, 2, 3], "deals": 1},
        "incidents": [], "forfeits": [], **extra,
    }  # fmt: skip


def _one_match_db(path: Path, total: int, **extra: Any) -> Path:
    with Storage(path) as st:
        st.ensure_tournament("t1", name="serve", fingerprint="f", total_matches=total,
                             config={"ruleset": {"name": "classic", "players": 3}},
                             bots=[("p", "serve"), ("q", "serve"), ("r", "serve")])  # fmt: skip
        st.save_match("t1", match_id="t1-m00000", index=0, table=0, set_no=0, seed=1,
                      seats=["p", "q", "r"], record=_record(["p", "q", "r"], **extra),
                      started_at=0.0, finished_at=1.0)  # fmt: skip
    return path


def test_an_open_arena_is_not_said_to_have_played_n_of_0_matches(tmp_path: Path) -> None:
    """Defect: `arena serve --db` without --matches stores its tournament with 0 matches in
    all until it ends (then the number played); while it ran, or after it was killed, the
    leaderboard's title said "1 matches (1/0 matches played)", `arena leaderboard --list`
    "1/0" and the web page "1 of 0 matches"."""
    db = _one_match_db(tmp_path / "open.sqlite", total=0)
    with Storage.open_readonly(db) as st:
        lb = build_leaderboard(st, "t1")
    title = to_markdown(lb).splitlines()[0]
    assert "/0" not in title and "not finished, no set number of matches" in title
    assert ", 1 match (" in title  # (it said "1 matches")
    listing = CliRunner().invoke(cli_main, ["leaderboard", "--db", str(db), "--list"])
    assert listing.exit_code == 0, listing.output
    assert "1/0" not in listing.output and "1/–" in listing.output
    with Storage(db) as st:  # the arena ended: finish_tournament(total=completed)
        st.finish_tournament("t1", total=1)
        assert "(finished)" in to_markdown(build_leaderboard(st, "t1")).splitlines()[0]


def test_figures_halfway_between_two_are_rounded_as_the_web_pages_round_them(
    tmp_path: Path,
) -> None:
    """Defect: the files and the screen rounded a figure exactly halfway to even (Python's
    format), the pages of `arena web` away from zero (JavaScript's toFixed, Math.round):
    1 contract made of 8 was "12%" in `arena leaderboard` and "13%" on the web, a median
    of 12.5 ms "12" on the screen and "13 ms" on the web, a mean of +2.25 points "+2.2"
    and "2.3"."""
    db = _one_match_db(tmp_path / "t.sqlite", total=1)
    with Storage.open_readonly(db) as st:
        lb = build_leaderboard(st, "t1")
    lb.rows[0] = dataclasses.replace(lb.rows[0], contracts=8, contracts_made=1,
                                     median_ms=12.5, mean_per_deal=2.25, ci95=0.25)  # fmt: skip
    md_row = next(line for line in to_markdown(lb).splitlines() if line.startswith("| 1 |"))
    assert "| 1/8 (13%) |" in md_row and "| +2.3 ± 0.3 |" in md_row
    assert md_row.endswith("| 12.5 |")
    table = to_rich_table(lb)
    cells = {c.header: list(c.cells) for c in table.columns}
    assert cells["ms"][0] == "13" and cells["made"][0] == "1/8 (13%)"


def test_the_bot_page_says_how_many_incidents_it_does_not_list(tmp_path: Path) -> None:
    """Defect: a match's record lists a seat's first 20 disconnects and answers to no
    pending request and counts them all; the leaderboard row counts them all, the bot page
    (`/api/bots/<name>`) listed the 20 and said nothing of the rest (in a real tournament,
    a bot's row counted 404 other incidents, its page listed 136)."""
    listed = [{"kind": k, "seat": 0, "deal": 0, "detail": "x"}
              for k in ("disconnect", "wrong_request") for _ in range(20)]  # fmt: skip
    db = _one_match_db(tmp_path / "t.sqlite", total=1, incidents=listed,
                       disconnects=[23, 0, 0], wrong_requests=[25, 0, 0])  # fmt: skip
    doc = DataSource(db).bot("p", None)
    assert doc["row"]["strike_groups"]["disconnects"] == 23
    assert doc["row"]["other_incidents"] == 25
    assert (len(doc["strikes"]), len(doc["other_incidents"])) == (20, 20)
    assert doc["strikes_not_listed"] == 3
    assert doc["other_incidents_not_listed"] == 5
    assert DataSource(db).bot("q", None)["strikes_not_listed"] == 0


def test_the_pages_show_what_the_api_says(tmp_path: Path) -> None:
    """The two web defects above in a browser (headless Chromium; skipped without it): the
    leaderboard page of an open arena says "1 match", not "1 of 0" (nor "1 matches"), and the
    bot page names the incidents it does not list."""
    from tests.support.harness import web_server
    from tests.web.test_web_browser import browser_paths, load, start_driver

    listed = [{"kind": "disconnect", "seat": 0, "deal": 0, "detail": "x"} for _ in range(20)]
    db = _one_match_db(tmp_path / "open.sqlite", total=0, incidents=listed,
                       disconnects=[23, 0, 0])  # fmt: skip
    paths = browser_paths()
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    driver = start_driver(*paths, profile)
    try:
        with web_server(db) as server:
            load(driver, server.url)
            progress = driver.find_element("css selector", "#progress").text
            assert progress.startswith("1 match ·") and " of 0" not in progress, progress
            load(driver, server.url + "bot/p")
            note = driver.find_element("css selector", "#strikes-not-listed").text
            assert note.startswith("and 3 more disconnects"), note
            # (review of 749f682) ended: the status line said "finished · 1 matches"
            with Storage(db) as st:
                st.finish_tournament("t1", total=1)
            load(driver, server.url)
            status = driver.find_element("css selector", "#status").text
            assert status.endswith("finished · 1 match"), status
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
