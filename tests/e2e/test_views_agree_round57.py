"""Every view of a tournament tells the same story (round 57).

Small real tournaments, played at once by ``arena tournament`` as a user runs it
(``--config``, ``--set``, port 0): classic with a bot whose code raises now and then
(``bot_error`` incidents) and one that sleeps past its deadline once a match (a timeout
that forfeits it, ``max_strikes = 1``); a second week of it in the same database without
the sleeper (a bot taken out of the config; the two weeks make a season); 1001 at three
and at four players; a house ruleset whose barrel comes within a few deals; bots that
concede, so that places tie (rated at a draw probability of 0.3); three sleepers, whose
matches are abandoned. Then:

- ratings: a recomputation with the ``trueskill`` package itself, from the stored records
  in schedule order with the documented environment, equals the leaderboard of every view
  (the screen's table, the files, ``arena leaderboard`` as JSON and as a table, ``arena web``'s
  ``/api/leaderboard`` and ``/api/season``), ranks and order included;
- matches: each record, re-run by the engine from its seed and actions, gives the figures
  the record, ``arena replay`` (text, ``--list``, ``--export`` and ``--check``), and
  ``/api/matches`` and ``/api/matches/<id>`` and its deals show; the leaderboard's counts,
  head to head and the web's bot pages are the records';
- files: written again from the same database, the leaderboard files are the same bytes but
  for the time they were generated, and each is replaced by a rename, never rewritten where
  a reader has it open.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import trueskill
from click.testing import CliRunner

from arena.cli import main
from engine import Game, Play, parse_action, trick_winner
from engine.rules import Ruleset
from tests.support.harness import deal_scores, get_json, web_server

ARENA = [sys.executable, "-m", "arena.cli"]

OOPS = '''
from sdk import Bot


class Oops(Bot):
    """Raises on every 7th card it plays: its client sends a fallback (bot_error)."""

    name = "oops"
    n = 0

    def play(self, view):
        self.n += 1
        if self.n % 7 == 0:
            raise RuntimeError("oops")
        return view.legal_actions[0]
'''

SLEEPY = '''
import time

from sdk import Bot


class Sleepy(Bot):
    """Sleeps past the deadline at its first card asked in the second deal: a timeout, and with
    max_strikes = 1 the seat forfeits (placed last, its moves played by the referee)."""

    name = "sleepy"
    slept = set()

    def play(self, view):
        if view.deal_number == 1 and self.match_id not in self.slept:
            self.slept.add(self.match_id)
            time.sleep(0.6)
        return view.legal_actions[-1]
'''

CONC = '''
from sdk import Bot


class Conc(Bot):
    """Never bids; holding the talon, concedes: the two others score alike (a tie)."""

    name = "conc"

    def bid(self, view):
        return min(view.legal_actions, key=lambda a: str(a) != "pass")

    def contract(self, view):
        for a in view.legal_actions:
            if str(a) == "concede":
                return a
        return view.legal_actions[0]
'''

CONFIG = """
name = "{name}"
ruleset = "classic"
seed = {seed}
max_deals = 3
concurrency = 4
bot_wait_s = 60
[deadlines]
decision_ms = 250
time_bank_ms = 0
[referee]
max_strikes = 1
[bots]
{bots}
"""


@dataclass
class Run:
    """One ``arena tournament`` run: its database and id, its screen, its ``out``."""

    db: Path
    tid: str
    screen: str
    out: Path


@dataclass
class World:
    db: Path  # the club's: its two weeks, a season
    tmp: Path
    runs: dict[str, Run]


class _Started:
    """``arena tournament`` started in ``tmp`` into database ``db``; :meth:`run` waits."""

    def __init__(self, tmp: Path, key: str, db: Path, *args: str) -> None:
        self.db, self.out = db, tmp / f"out-{key}"
        argv = ["tournament", "--no-progress", "--db", str(db), "--out", str(self.out), *args]
        self.p = subprocess.Popen(
            [*ARENA, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp
        )

    def run(self) -> Run:
        try:
            out, err = self.p.communicate(timeout=300)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.communicate()
        assert self.p.returncode == 0, out + err
        tid = re.findall(r"\(tournament (\S+)\)", err)[-1]
        return Run(self.db, tid, out, self.out)


def _config(tmp: Path, name: str, seed: int, bots: dict[str, str]) -> Path:
    path = tmp / f"{name}.toml"
    lines = "".join(f"{b} = {json.dumps(spec)}\n" for b, spec in bots.items())
    path.write_text(CONFIG.format(name=name, seed=seed, bots=lines), encoding="utf-8")
    return path


#: A deadline no bot but the sleeper misses, for the tournaments without it.
_EASY = ("--set", "deadlines.decision_ms=3000", "--set", "deadlines.time_bank_ms=30000")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The tournaments, played at once (each its own database but the club's two weeks,
    one after the other: one runner writes a database at a time)."""
    tmp = tmp_path_factory.mktemp("views")
    for name, text in (("oops.py", OOPS), ("sleepy.py", SLEEPY), ("conc.py", CONC)):
        (tmp / name).write_text(text, encoding="utf-8")
    three = {"r1": "random", "h": "heuristic", "oops": "oops.py:Oops"}
    wk1 = _config(tmp, "wk1", 5, {**three, "sleepy": "sleepy.py:Sleepy"})
    wk2 = _config(tmp, "wk2", 6, three)  # the sleeper taken out (the same rules: a season)
    rnd4 = _config(tmp, "four", 7, {b: "random" for b in "abcd"})
    # two bots that concede whenever they hold the talon, in one-deal matches: ties (rated
    # with a draw probability of the config's, not the default)
    ties = _config(tmp, "ties", 8, {"c1": "conc.py:Conc", "c2": "conc.py:Conc", "r1": "random"})
    # three sleepers: every seat forfeits, the matches are abandoned where they stand
    slept = _config(tmp, "abandoned", 9, {f"s{i}": "sleepy.py:Sleepy" for i in (1, 2, 3)})
    club = tmp / "club.sqlite"
    started = {
        "wk1": _Started(tmp, "wk1", club, "--config", str(wk1)),
        "four": _Started(
            tmp, "four", tmp / "four.sqlite", "--config", str(rnd4),
            "--set", "ruleset=1001-4p", "--set", "max_deals=1", *_EASY,
        ),
        "t1001": _Started(
            tmp, "t1001", tmp / "t1001.sqlite", "--config", str(wk2), "--set", "name=t1001",
            "--set", "ruleset=1001", *_EASY,
        ),
        "barrel": _Started(
            tmp, "barrel", tmp / "barrel.sqlite", "--config", str(wk2), "--set", "name=barrel",
            "--set", 'ruleset={preset = "classic", barrel_mode = "one", barrel_at = 120,'
            ' concede = "penalty"}',
            "--set", "max_deals=6", *_EASY,
        ),
        "ties": _Started(
            tmp, "ties", tmp / "ties.sqlite", "--config", str(ties), "--set", "max_deals=1",
            "--set", "ratings.draw_probability=0.3", *_EASY,
        ),
        "abandoned": _Started(
            tmp, "abandoned", tmp / "abandoned.sqlite", "--config", str(slept),
            "--concurrency", "6",
        ),
    }  # fmt: skip
    runs = {}
    try:
        runs["wk1"] = started.pop("wk1").run()
        started["wk2"] = _Started(tmp, "wk2", club, "--config", str(wk2))
    finally:
        for key in list(started):
            runs[key] = started.pop(key).run()
    return World(club, tmp, runs)


# -- the records, read straight from SQLite, and what the trueskill package makes of them


def _records(db: Path, tid: str) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT record_json FROM matches WHERE tournament_id = ? ORDER BY idx", (tid,)
        ).fetchall()
    return [json.loads(r) for (r,) in rows]


def _config_bots(db: Path, tid: str) -> list[str]:
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT bot FROM tournament_bots WHERE tournament_id = ? ORDER BY position", (tid,)
        ).fetchall()
    return [b for (b,) in rows]


def _draw_probability(db: Path, tid: str) -> float:
    with sqlite3.connect(db) as c:
        (cfg,) = c.execute("SELECT config_json FROM tournaments WHERE id = ?", (tid,)).fetchone()
    # (the config as stored: [ratings] draw_probability at its top level)
    return float(json.loads(cfg)["draw_probability"])


def _rated(records: list[dict[str, Any]], bots: list[str], dp: float) -> list[dict[str, Any]]:
    """docs/tournament.md#ratings: μ₀ 25, σ₀ 25/3, β σ₀/2, τ σ₀/100; each match a
    free-for-all by the record's places; rows best first by μ−3σ (9 decimals), μ, name."""
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=dp)
    r = {b: env.create_rating() for b in bots}
    n = dict.fromkeys(bots, 0)
    for rec in records:
        seats = rec["players"]
        for b in seats:
            r.setdefault(b, env.create_rating())
            n.setdefault(b, 0)
        new = env.rate([(r[b],) for b in seats], ranks=rec["result"]["places"])
        for b, (x,) in zip(seats, new, strict=True):
            r[b] = x
            n[b] += 1
    rows = [{"bot": b, "mu": x.mu, "sigma": x.sigma, "matches": n[b]} for b, x in r.items()]
    rows.sort(key=lambda w: (-round(w["mu"] - 3 * w["sigma"], 9), -w["mu"], w["bot"]))
    for i, w in enumerate(rows, 1):
        w["rank"] = i
        w["conservative"] = w["mu"] - 3 * w["sigma"]
    return rows


def _same_rows(got: list[dict[str, Any]], want: list[dict[str, Any]], where: str) -> None:
    assert [g["bot"] for g in got] == [w["bot"] for w in want], where
    for g, w in zip(got, want, strict=True):
        assert g["rank"] == w["rank"] and g["matches"] == w["matches"], (where, g, w)
        for k in ("mu", "sigma", "conservative"):
            assert g[k] == pytest.approx(w[k], abs=1e-9), (where, k, g, w)


def _leaderboard_json(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(main, ["leaderboard", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _screen_rows(screen: str) -> list[tuple[int, str, str, str, str, int]]:
    """(rank, bot, μ−3σ, μ, σ, matches) of each row of a printed leaderboard table."""
    rows = []
    for line in screen.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) > 6 and cells[0].isdigit():
            rows.append((int(cells[0]), cells[1], cells[2], cells[3], cells[4], int(cells[5])))
    return rows


def _two(x: float) -> str:
    return _round(x, 2)


def _round(x: float, places: int) -> str:
    """``x`` to ``places`` decimals, exactly halfway away from zero, as the views round."""
    return str(Decimal(repr(x)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def _cells(row: dict[str, Any]) -> dict[str, Any]:
    """What the tables show of a ``leaderboard.json`` row (docs/tournament.md#outputs)."""
    mean, ci = row["mean_per_deal"], row["ci95"]
    per_deal = "–"
    if mean is not None:
        per_deal = ("" if mean < 0 else "+") + _round(mean, 1)
        per_deal += "" if ci is None else f" ± {_round(ci, 1)}"
    made = f"{row['contracts_made']}/{row['contracts']}"
    if row["contracts"]:
        made += f" ({_round(100 * row['contracts_made'] / row['contracts'], 0)}%)"
    st = row["strikes"]
    ms = row["median_ms"]
    return {
        "head": [str(row["rank"]), row["bot"], _round(row["conservative"], 2),
                 _round(row["mu"], 2), _round(row["sigma"], 2), str(row["matches"])],
        "places": [str(x) for x in row["places"]],
        "per_deal": per_deal, "bids": str(row["bids_won"]), "made": made,
        "tid": f"{st['timeouts']}/{st['illegal']}/{st['disconnects']}",
        "forfeits": str(st["forfeits"]),
        "ms1": "–" if ms is None else _round(ms, 1), "ms0": "–" if ms is None else _round(ms, 0),
    }  # fmt: skip


def _file_cells(row: dict[str, Any]) -> list[str]:
    """A row of ``leaderboard.md``'s and ``leaderboard.html``'s table."""
    c = _cells(row)
    return [*c["head"], *c["places"], c["per_deal"], c["bids"], c["made"], c["tid"],
            c["forfeits"], c["ms1"]]  # fmt: skip


def _screen_cells(row: dict[str, Any]) -> list[str]:
    """A row of the screen's table (every column shown: names this short leave them all)."""
    c = _cells(row)
    return [*c["head"], "/".join(c["places"]), c["per_deal"], c["bids"], c["made"],
            f"{c['tid']}/{c['forfeits']}", c["ms0"]]  # fmt: skip


def _table_rows(screen: str) -> list[list[str]]:
    rows = []
    for line in screen.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) > 6 and cells[0].isdigit():
            rows.append(cells)
    return rows


def _same_screen(screen: str, want: list[dict[str, Any]], where: str) -> None:
    got = _screen_rows(screen)
    assert [(r, b, m) for r, b, *_, m in got] == [
        (w["rank"], w["bot"], w["matches"]) for w in want
    ], where
    for (_, _, cons, mu, sigma, _), w in zip(got, want, strict=True):
        for shown, x in ((cons, w["conservative"]), (mu, w["mu"]), (sigma, w["sigma"])):
            assert abs(float(shown) - x) <= 0.005 + 1e-9, (where, shown, x)


@pytest.mark.parametrize("key", ["wk1", "wk2", "four", "t1001", "barrel", "ties", "abandoned"])
def test_ratings_agree_in_every_view(world: World, key: str) -> None:
    run = world.runs[key]
    bots = _config_bots(run.db, run.tid)
    want = _rated(_records(run.db, run.tid), bots, _draw_probability(run.db, run.tid))
    assert {w["bot"] for w in want} == set(bots)
    # the screen at the end of the run, and its files
    _same_screen(run.screen, want, f"{key}: screen")
    lb = json.loads((run.out / "leaderboard.json").read_text(encoding="utf-8"))
    _same_rows(lb["rows"], want, f"{key}: leaderboard.json")
    with open(run.out / "leaderboard.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(int(r["rank"]), r["bot"], int(r["matches"])) for r in rows] == [
        (w["rank"], w["bot"], w["matches"]) for w in want
    ]
    for r, w in zip(rows, want, strict=True):
        for k in ("mu", "sigma", "conservative"):
            assert float(r[k]) == pytest.approx(w[k], abs=0.00005 + 1e-9), (key, k)
    # every cell of the screen's, the Markdown's and the HTML page's tables, from the JSON
    md = (run.out / "leaderboard.md").read_text(encoding="utf-8")
    html = (run.out / "leaderboard.html").read_text(encoding="utf-8")
    md_rows = [
        [c.strip() for c in ln.strip().strip("|").split("|")]
        for ln in md.splitlines()
        if re.match(r"\| \d+ \|", ln)
    ]
    html_rows = [
        [unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        for tr in re.findall(r"<tr><td>\d+</td>.*?</tr>", html)
    ]
    assert md_rows == [_file_cells(r) for r in lb["rows"]], key
    assert [h[: len(_file_cells(r))] for h, r in zip(html_rows, lb["rows"], strict=True)] == [
        _file_cells(r) for r in lb["rows"]
    ], key
    assert _table_rows(run.screen) == [_screen_cells(r) for r in lb["rows"]], key
    # where each bot's rating history ends: the file's, the HTML plot's label, the database's
    with sqlite3.connect(run.db) as c:
        stored = {
            bot: (mu, sigma)
            for bot, mu, sigma in c.execute(
                "SELECT bot, mu, sigma FROM ratings WHERE tournament_id = ? ORDER BY idx",
                (run.tid,),
            )
        }
    for w in want:
        end = lb["rating_history"][w["bot"]][-1]
        assert (end["mu"], end["sigma"]) == pytest.approx((w["mu"], w["sigma"]), abs=1e-9), key
        label = f"<title>{w['bot']}: μ={_two(w['mu'])} σ={_two(w['sigma'])}</title>"
        assert label in html or not w["matches"], (key, label)
        if w["matches"]:
            assert stored[w["bot"]] == pytest.approx((w["mu"], w["sigma"]), abs=1e-9), key
    # arena leaderboard, as JSON and as the table, by the tournament's id
    _same_rows(_leaderboard_json("--db", str(run.db), "--tournament", run.tid)["rows"], want, key)
    res = CliRunner().invoke(main, ["leaderboard", "--db", str(run.db), "--tournament", run.tid])
    assert res.exit_code == 0, res.output
    _same_screen(res.stdout, want, f"{key}: arena leaderboard")
    # arena web
    with web_server(run.db) as s:
        api = get_json(s.url, f"/api/leaderboard?tournament={run.tid}")
    _same_rows(api["rows"], want, f"{key}: /api/leaderboard")
    for w in want:
        last = api["history"][w["bot"]][-1] if w["matches"] else None
        if last is not None:
            assert (last["mu"], last["sigma"]) == pytest.approx((w["mu"], w["sigma"]), abs=1e-9)


def test_a_season_is_rated_alike_everywhere(world: World) -> None:
    """wk1 then wk2 (the sleeper taken out in wk2): one rating over both weeks' matches."""
    weeks = [world.runs["wk1"].tid, world.runs["wk2"].tid]
    records = [r for t in weeks for r in _records(world.db, t)]
    bots = _config_bots(world.db, weeks[0])
    want = _rated(records, bots, _draw_probability(world.db, weeks[0]))
    got = _leaderboard_json("--db", str(world.db), "--season", "wk")
    _same_rows(got["rows"], want, "arena leaderboard --season")
    with web_server(world.db) as s:
        api = get_json(s.url, "/api/season?season=wk")
    _same_rows(api["rows"], want, "/api/season")
    assert [w["id"] for w in api["weeks"]] == weeks
    res = CliRunner().invoke(main, ["leaderboard", "--db", str(world.db), "--season", "wk"])
    assert res.exit_code == 0, res.output
    _same_screen(res.stdout, want, "arena leaderboard --season (table)")


# -- the matches: the engine's re-run against the record, arena replay and the web


def _rerun(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], Game]:
    """Each deal as the engine plays the record's actions from its seed: who dealt and held
    what, the auction, the talon and the passed cards, trump and marriages, every trick with
    its winner, the outcome and the scores."""
    rs = Ruleset.from_dict(rec["ruleset"])
    g = Game.new(rs, seed=int(rec["seed"]), players=rec["players"])
    deals = []
    for d in rec["deals"]:
        assert g.deal_number == d["number"]
        one: dict[str, Any] = {
            "dealer": g.dealer,
            "hands": [[str(c) for c in h] for h in g.dealt_hands],
            "talon": [str(c) for c in g.talon],
            "talon_score": g.talon_score,
        }
        acts = d["actions"]
        trumps: list[Any] = []  # the trump of each trick as it was taken
        for i, a in enumerate(acts):
            action = parse_action(a["action"])
            if i == len(acts) - 1:
                one.update(
                    declarer=g.declarer, bid=g.bid, contract=g.contract,
                    trump=None if g.trump is None else g.trump,
                    marriages=list(g.marriages), gives=[(to, str(c)) for to, c in g.gives],
                    tricks=[
                        (t.leader, [(s, str(c)) for s, c in t.cards], t.winner) for t in g.tricks
                    ],
                    trumps=trumps,
                )  # fmt: skip
                if isinstance(action, Play):
                    cards = [*g.trick, (a["seat"], action.card)]
                    won = trick_winner([c for _, c in cards], g.trump)
                    one["tricks"].append(
                        (cards[0][0], [(s, str(c)) for s, c in cards], cards[won][0])
                    )
                    trumps.append(g.trump)
            done = len(g.tricks)
            g.apply(action, seat=a["seat"])
            if g.deal_number == d["number"] and len(g.tricks) > done:
                trumps.append(g.trump)  # (a marriage declared at a lead names it for its trick)
        if "outcome" in d:
            res = g.deal_results[d["number"]]
            one.update(
                outcome=res.outcome, deltas=list(res.deltas), scores=list(res.scores),
                takes=list(res.takes), barrel=res.barrel, events=list(res.events),
                cards=list(res.card_points), marriage_points=list(res.marriage_points),
            )  # fmt: skip
        deals.append(one)
    return deals, g


def test_every_match_replays_alike_in_every_view(world: World) -> None:
    seen_barrel = seen_forfeit = seen_marriage = 0
    for run in world.runs.values():
        with web_server(run.db) as s:
            seen = _matches_agree(run, s.url)
        seen_forfeit += seen[0]
        seen_marriage += seen[1]
        seen_barrel += seen[2]
    assert seen_forfeit and seen_marriage and seen_barrel, (
        seen_forfeit, seen_marriage, seen_barrel,
    )  # fmt: skip


def _matches_agree(run: Run, url: str) -> tuple[int, int, int]:
    """Every match of ``run``: the record, the engine's re-run, ``arena replay``'s text and
    ``arena web`` (at ``url``) agree (``--check`` checks them all at once, exported: below).
    Returns how many forfeits, marriages and barrel states it saw."""
    seen_barrel = seen_forfeit = seen_marriage = 0
    for rec in _records(run.db, run.tid):
        mid = rec["match_id"]
        deals, g = _rerun(rec)
        n = len(rec["players"])
        # the record's own figures
        for d, mine in zip(rec["deals"], deals, strict=True):
            assert d["dealer"] == mine["dealer"], mid
            assert [list(h) for h in d["hands"]] == mine["hands"], mid
            assert d["talon"] == mine["talon"], mid
            if "outcome" in d:
                assert (d["outcome"], d["deltas"], d["scores"]) == (
                    mine["outcome"], mine["deltas"], mine["scores"],
                ), (mid, d["number"])  # fmt: skip
        rules = rec.get("rules_result", rec["result"])
        if rec.get("abandoned"):  # (every seat forfeited: stopped where it was)
            assert rules is None and g.result is None, mid
        else:
            assert g.result is not None and g.result.to_dict() == rules, mid
        seen_forfeit += bool(rec.get("forfeits"))
        # arena web: the summary and every deal's last step
        api = get_json(url, f"/api/matches/{mid}")
        assert api["result"]["places"] == rec["result"]["places"], mid
        assert api["forfeits"] == rec.get("forfeits", []), mid
        assert api["incidents"] == rec.get("incidents", []), mid
        assert api["seed"] == str(rec["seed"]) and api["players"] == rec["players"], mid
        finished = [d for d in deals if "outcome" in d]
        assert api["deals_played"] == len(finished) == rec["result"]["deals"], mid
        for k, mine in enumerate(deals):
            summ = api["deals"][k]
            assert (summ["dealer"], summ["declarer"], summ["bid"], summ["contract"]) == (
                mine["dealer"], mine["declarer"], mine["bid"], mine["contract"],
            ), (mid, k)  # fmt: skip
            if "outcome" not in mine:  # (the deal an abandoned match stopped in)
                assert summ["outcome"] == "unfinished" and rec.get("abandoned"), (mid, k)
                continue
            assert (summ["outcome"], summ["deltas"], summ["scores"], summ["takes"]) == (
                mine["outcome"], mine["deltas"], mine["scores"], mine["takes"],
            ), (mid, k)  # fmt: skip
            assert summ["events"] == mine["events"], (mid, k)
            page = get_json(url, f"/api/matches/{mid}/deals/{k}")
            acts = [st["action"] for st in page["steps"][1:]]
            assert [(x["seat"], x["text"], x["by"], x["ms"]) for x in acts] == [
                (a["seat"], a["action"], a.get("by"), a.get("ms"))
                for a in rec["deals"][k]["actions"]
            ], (mid, k)
            first, last = page["steps"][0]["view"], page["steps"][-1]["view"]
            assert first["hands"] == mine["hands"] and first["talon"] == mine["talon"]
            assert last["phase"] == "DEAL_OVER", (mid, k)
            assert last["trump"] == (None if mine["trump"] is None else str(mine["trump"]))
            assert [(m["seat"], m["suit"]) for m in last["marriages"]] == [
                (seat, None if suit is None else str(suit)) for seat, suit in mine["marriages"]
            ], (mid, k)
            assert [(x["to"], x["card"]) for x in last["gives"]] == mine["gives"], (mid, k)
            assert [
                (t["leader"], [(c["seat"], c["card"]) for c in t["cards"]], t["winner"])
                for t in last["tricks"]
            ] == mine["tricks"], (mid, k)
            assert last["barrel"] == (None if mine["barrel"] is None else list(mine["barrel"]))
            assert last["result"]["deltas"] == mine["deltas"]
            seen_marriage += bool(mine["marriages"])
            seen_barrel += any(mine["barrel"] or ()) or bool(mine["events"])
            assert len(mine["hands"]) == n
        # arena replay, its text: every deal's closing line, the talon's taker, the passes
        res = CliRunner().invoke(main, ["replay", mid, "--db", str(run.db)])
        assert res.exit_code == 0, res.output
        _replay_text_agrees(res.stdout, rec, deals)
        assert res.stdout.startswith(
            f"Match: {api['ruleset_description']}, seed {rec['seed']}, players "
            + ", ".join(rec["players"])
        ), res.stdout[:200]
        if rec.get("abandoned"):  # (said under the standings, in words of its own)
            where = f"abandoned in deal {len(rec['deals'])}"
            assert where in api["ended"] and f"\n{where}: every seat forfeited" in res.stdout
        else:
            assert f"ended: {api['ended']}" in res.stdout, mid
        for line in api["incident_lines"]:
            assert f"\n  {line}\n" in res.stdout, (mid, line)
    return seen_forfeit, seen_marriage, seen_barrel


def _replay_text_agrees(text: str, rec: dict[str, Any], deals: list[dict[str, Any]]) -> None:
    players = rec["players"]
    blocks = re.split(r"^Deal \d+ — ", text, flags=re.M)[1:]
    assert len(blocks) == len(deals), rec["match_id"]
    for block, mine in zip(blocks, deals, strict=True):
        assert block.startswith(f"dealer {players[mine['dealer']]} ({mine['dealer']})"), block
        talon = " ".join(mine["talon"])
        assert re.search(rf"^talon +{re.escape(talon)}$", block, re.M), block[:400]
        for seat, h in enumerate(mine["hands"]):
            who = re.escape(f"{players[seat]} ({seat})")
            if h:
                assert re.search(rf"^{who} +{re.escape(' '.join(h))}$", block, re.M), block[:400]
            else:  # (the dealer of four)
                sits = rf"^{who} +sits out \(scores the talon: {mine['talon_score']}\)$"
                assert re.search(sits, block, re.M), block[:400]
        if mine.get("outcome") is None:
            continue
        if mine["bid"] is not None and mine["declarer"] is not None:
            assert f"{players[mine['declarer']]} ({mine['declarer']}) takes the talon at " in block
        for to, card in mine["gives"]:
            assert f"gives {card} to {players[to]} ({to})" in block, (block, to, card)
        if mine["tricks"]:  # what each seat took: card points, and marriages apart
            takes = ", ".join(
                f"{players[i]} {mine['takes'][i]}" + (f" (cards {c}, marriages {m})" if m else "")
                for i, (c, m) in enumerate(zip(mine["cards"], mine["marriage_points"], strict=True))
                if mine["hands"][i]
            )
            assert f"\ntakes {takes}\n" in block, (rec["match_id"], takes)
        deltas = ", ".join(f"{players[i]} {x:+d}" for i, x in enumerate(mine["deltas"]))
        scores = ", ".join(str(x) for x in mine["scores"])
        assert f"deltas {deltas}  scores {scores}" in block, (rec["match_id"], block[-600:])
        # each trick: its row holds its cards in play order and its winner
        for no, (_, cards, winner) in enumerate(mine["tricks"], 1):
            # (a card the referee played is marked after it: `Q♠*`, a fallback)
            row = r"\S*\s+".join(re.escape(f"{players[s]} {c}") for s, c in cards)
            hit = [ln for ln in block.splitlines() if re.match(rf"│ {no} +│ {row}\S* ", ln)]
            assert hit, (rec["match_id"], no, row)
            cells = [c.strip() for c in hit[0].strip("│").split("│")]
            trump = mine["trumps"][no - 1]
            assert cells[-2:] == ["-" if trump is None else str(trump), players[winner]], hit[0]
        for seat, suit in mine["marriages"]:
            what = "ace marriage" if suit is None else f"{suit} marriage"
            assert f"{players[seat]} declares the {what}: +" in block, (rec["match_id"], what)
        # who sits on the barrel after the deal, and for how many deals more
        sitting = [
            f"{players[i]} ({i}), {x} deal{'s' if x != 1 else ''} left"
            for i, x in enumerate(mine["barrel"] or ())
            if x
        ]
        line = [ln for ln in block.splitlines() if ln.startswith("on the barrel after this deal")]
        assert line == ([f"on the barrel after this deal: {', '.join(sitting)}"] if sitting else [])
    # the final standings: the record's places, scores and shortfalls
    # (an abandoned match's: "Standings when the match stopped")
    final = re.split(r"Final standings|Standings when the match stopped", text)[1]
    table = re.match(r"\n(?:[┏┃┡│└][^\n]*\n)+", final)
    assert table, final[:300]
    rows = [
        [c.strip() for c in ln.strip().strip("│").split("│")]
        for ln in table.group().splitlines()
        if ln.startswith("│")
    ]
    res = rec["result"]
    assert sorted(rows) == sorted(
        [str(res["places"][i]), f"{p} ({i})", str(res["scores"][i]), str(res["shortfalls"][i])]
        for i, p in enumerate(players)
    ), (rec["match_id"], rows)


def test_replay_list_and_leaderboard_counts_are_the_records(world: World) -> None:
    for key, run in world.runs.items():
        records = _records(run.db, run.tid)
        export = world.tmp / f"exported-{key}"
        res = CliRunner().invoke(
            main,
            ["replay", "--list", "--db", str(run.db), "--tournament", run.tid,
             "--export", str(export)],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        # the exported records are the stored ones, and check as such
        files = sorted(export.glob("*.json"))
        assert [f.stem for f in files] == [r["match_id"] for r in records], key
        for f, rec in zip(files, records, strict=True):
            assert json.loads(f.read_text(encoding="utf-8")) == rec, f
        chk = CliRunner().invoke(main, ["replay", "--check", *map(str, files)])
        assert chk.exit_code == 0, chk.output
        lines = {ln.split()[0]: ln for ln in res.stdout.splitlines() if ln.startswith(run.tid)}
        assert sorted(lines) == [r["match_id"] for r in records], key
        for rec in records:
            line = lines[rec["match_id"]]
            n = rec["result"]["deals"]
            assert f" {n} deal{'s' if n != 1 else ''} " in line, line
            for p, sc, pl in zip(
                rec["players"], rec["result"]["scores"], rec["result"]["places"], strict=True
            ):
                assert re.search(rf"\b{re.escape(p)} {sc} \({pl}(st|nd|rd|th)\)", line), line
        lb = json.loads((run.out / "leaderboard.json").read_text(encoding="utf-8"))
        with web_server(run.db) as s:
            api = get_json(s.url, f"/api/leaderboard?tournament={run.tid}")
            tournaments = get_json(s.url, "/api/tournaments")
            listed = get_json(s.url, f"/api/matches?tournament={run.tid}")["matches"]
            pages = {
                r["bot"]: get_json(s.url, f"/api/bots/{r['bot']}?tournament={run.tid}&limit=1000")
                for r in lb["rows"]
            }
        # the web's list of matches: each the record's seats, scores, places, forfeits, deals
        assert sorted(
            (m["match_id"], m["players"], m["scores"], m["places"], m["forfeits"], m["deals"])
            for m in listed
        ) == [
            (r["match_id"], r["players"], r["result"]["scores"], r["result"]["places"],
             r.get("forfeits", []), r["result"]["deals"])
            for r in records
        ], key  # fmt: skip
        # head to head: the records' places, pair by pair, in the file and on the web
        h2h: dict[str, dict[str, Counter[str]]] = {}
        for rec in records:
            pl = rec["result"]["places"]
            for i, a in enumerate(rec["players"]):
                for j, b in enumerate(rec["players"]):
                    if i != j:
                        e = h2h.setdefault(a, {}).setdefault(b, Counter())
                        e["matches"] += 1
                        e["ahead" if pl[i] < pl[j] else "behind" if pl[i] > pl[j] else "ties"] += 1
        assert lb["head_to_head"] == {
            a: {
                b: {k: e[k] for k in ("matches", "ahead", "behind", "ties")} for b, e in row.items()
            }
            for a, row in h2h.items()
        }, key
        cells = api["head_to_head"]["cells"]
        for a, row in h2h.items():
            for b, e in row.items():
                assert (cells[a][b]["played"], cells[a][b]["ahead"], cells[a][b]["tied"]) == (
                    e["matches"], e["ahead"], e["ties"],
                ), (key, a, b)  # fmt: skip
        stored = [t for t in tournaments if t["id"] == run.tid]
        assert len(stored) == 1 and stored[0]["state"] == "finished", key
        assert stored[0]["completed"] == stored[0]["total_matches"] == len(records), key
        assert (lb["tournament"]["completed"], lb["tournament"]["total_matches"]) == (
            len(records), len(records),
        ), key  # fmt: skip
        # the web's rows count what the file's count (under names of their own)
        for row, web in zip(lb["rows"], api["rows"], strict=True):
            assert (web["bot"], web["places"], web["deals"], web["bidding_wins"]) == (
                row["bot"], row["places"], row["deals"], row["bids_won"],
            ), key  # fmt: skip
            assert (web["contracts"], web["contracts_made"], web["bot_errors"]) == (
                row["contracts"], row["contracts_made"], row["bot_errors"],
            ), key  # fmt: skip
            assert web["strike_groups"] == {
                k: row["strikes"][k] for k in ("timeouts", "illegal", "disconnects", "forfeits")
            }, key
            assert web["mean_per_deal"] == pytest.approx(row["mean_per_deal"]), key
        for row in lb["rows"]:
            bot = row["bot"]
            mine = [(r, r["players"].index(bot)) for r in records if bot in r["players"]]
            assert row["matches"] == len(mine), (key, bot)
            places = Counter(r["result"]["places"][s] for r, s in mine)
            assert row["places"] == [places[i] for i in range(1, len(row["places"]) + 1)]
            finished = [d for r, _ in mine for d in r["deals"] if "outcome" in d]
            assert row["deals"] == len(finished), (key, bot)
            declared = [
                d for r, s in mine for d in r["deals"]
                if "outcome" in d and _declarer(d, r) == s
            ]  # fmt: skip
            assert row["bids_won"] == len(declared), (key, bot)
            total = sum(d["deltas"][s] for r, s in mine for d in r["deals"] if "outcome" in d)
            assert row["mean_per_deal"] * row["deals"] == pytest.approx(total), (key, bot)
            kinds = Counter(
                i["kind"] for r, s in mine for i in r.get("incidents", []) if i["seat"] == s
            )
            assert row["strikes"]["timeouts"] == kinds["timeout"], (key, bot, kinds)
            assert row["strikes"]["forfeits"] == kinds["forfeit"], (key, bot, kinds)
            errors = sum(r.get("bot_errors", [0] * 4)[s] for r, s in mine)
            assert row["bot_errors"] == errors, (key, bot)
            page = pages[bot]
            assert page["matches_total"] == len(mine), (key, bot)
            assert sorted(x["match_id"] for x in page["matches"]) == [
                r["match_id"] for r, _ in mine
            ]
            assert deal_scores(page) == sorted(
                d["deltas"][s] for r, s in mine for d in r["deals"] if "outcome" in d
            ), (key, bot)
            assert page["strikes_total"] + page["other_incidents_total"] == sum(kinds.values())
            assert page["other_incidents_total"] >= kinds["bot_error"], (key, bot, kinds)
            assert page["strikes_total"] >= kinds["timeout"] + kinds["forfeit"], (key, bot)
    # the bots that misbehave did, so the counts above are of something
    wk1 = {
        r["bot"]: r
        for r in json.loads((world.runs["wk1"].out / "leaderboard.json").read_text())["rows"]
    }
    assert wk1["oops"]["bot_errors"] > 0 and wk1["sleepy"]["strikes"]["forfeits"] > 0
    ties = _records(world.runs["ties"].db, world.runs["ties"].tid)
    assert any(len(set(r["result"]["places"])) < len(r["players"]) for r in ties)
    assert all(
        r.get("abandoned")
        for r in _records(world.runs["abandoned"].db, world.runs["abandoned"].tid)
    )


def _declarer(deal: dict[str, Any], rec: dict[str, Any]) -> int | None:
    """The declarer the engine finds for ``deal`` (the seat who took the talon)."""
    g = Game.new(Ruleset.from_dict(rec["ruleset"]), seed=int(rec["seed"]), players=rec["players"])
    for d in rec["deals"]:
        for i, a in enumerate(d["actions"]):
            if d is deal and i == len(d["actions"]) - 1:
                return g.declarer
            g.apply(parse_action(a["action"]), seat=a["seat"])
    return None


# -- the files


def test_leaderboard_files_written_again_are_the_same(world: World) -> None:
    """Written again from the same database, every file is the same bytes as the run's but
    for the time it was generated (``generated_at``, and its line in the Markdown and HTML);
    each is replaced by a rename: a reader that opened the old one reads it whole."""
    run = world.runs["wk1"]
    names = ["leaderboard.json", "leaderboard.csv", "leaderboard.md", "leaderboard.html"]
    held = {n: open(run.out / n, "rb") for n in names}  # noqa: SIM115 (closed below)
    before = {n: (run.out / n).read_bytes() for n in names}
    inodes = {n: (run.out / n).stat().st_ino for n in names}
    try:
        res = CliRunner().invoke(
            main,
            ["leaderboard", "--db", str(run.db), "--tournament", run.tid,
             "--format", "all", "--out", str(run.out)],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        for n in names:
            assert held[n].read() == before[n], n  # the old file, whole
            assert (run.out / n).stat().st_ino != inodes[n], n  # a new file put in its place
    finally:
        for f in held.values():
            f.close()
    stamp = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}")
    for n in names:
        after = (run.out / n).read_bytes()
        assert stamp.sub(b"T", after) == stamp.sub(b"T", before[n]), n
    assert (run.out / "leaderboard.csv").read_bytes() == before["leaderboard.csv"]
