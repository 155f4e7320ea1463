"""Round 38: the leaderboard's numbers checked independently.

Small real tournaments (``arena tournament`` as a process: classic, 1001, 1001-4p,
duplicate and independent deals, ties forced by bots that concede, a bot that crashes, bots
that time out until they forfeit, matches abandoned by every seat) and, from the SQLite
database's records alone (``sqlite3``, no ``arena.storage`` or ``arena.leaderboard``), every
figure recomputed by this file's own code from docs/tournament.md and docs/web.md, rating
with the ``trueskill`` package directly (μ 25, σ 25/3, β σ/2, τ σ/100, the config's draw
probability, ranks = places, ties sharing one, in schedule order), and compared with
``leaderboard.json`` (every digit, the rating history to the bit), the CSV, the Markdown,
the HTML page, ``arena leaderboard``'s screen table (also on narrow terminals, columns
left out), the stored ``ratings`` table,
``arena web``'s ``/api/leaderboard`` and ``/api/bots/<name>``, and the page's own texts
(``static/common.js`` run by node, when there is one). A tournament stopped by SIGINT and
resumed ends with the ratings of one uninterrupted run, at any concurrency; ``arena
web`` polled during a run that stores matches out of order rates them in schedule order.

What the round found: every number of every output agreed but one: a running tournament's
``/api/leaderboard``, kept a moment when slow to compute, said the count of matches stored
now over rows made for fewer (fixed in ``arena/web/data.py``;
``test_a_throttled_live_leaderboard_says_what_its_rows_count``). The docs did not say which
deals the mean score per deal counts with four players (the code counts the deals a bot
dealt and sat out, so that mean × deals is its total score) nor that an abandoned match's
last deal is no bid won even when its auction was over, nor how rows equal in μ−3σ are
ordered (to 9 decimals; then the greater μ, then the name; ranks never shared);
docs/tournament.md says all three now, and ``test_four_players_count_the_deals_sat_out``,
``test_abandoned_matches_with_independent_deals`` and
``test_a_stopped_tournament_is_rated_from_what_is_stored`` pin them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import trueskill

from arena.web.board import HISTORY_DECIMALS

GROUP = {"timeout": "timeouts", "illegal": "illegal", "malformed": "illegal",
         "disconnect": "disconnects", "forfeit": "forfeits"}  # fmt: skip
STRIKES = ("timeouts", "illegal", "disconnects", "forfeits")
NONE = "–"  # what a figure of no data shows


def half_away(x: float, digits: int) -> str:
    """``x`` to ``digits`` decimals, exactly halfway away from zero (docs/tournament.md)."""
    q = Decimal(1).scaleb(-digits)
    s = str(Decimal(x).quantize(q, rounding=ROUND_HALF_UP))
    return "0" + s[2:] if s.startswith("-0") and set(s[1:]) <= {"0", "."} else s


def signed(x: float, digits: int) -> str:
    s = half_away(x, digits)
    return s if s.startswith("-") else "+" + s


def recompute(db: Path, tid: str) -> dict[str, Any]:
    """Every figure of the leaderboard of ``tid`` from the stored records alone."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (config_json,) = con.execute(
            "SELECT config_json FROM tournaments WHERE id = ?", (tid,)
        ).fetchone()
        bots = [b for (b,) in con.execute(
            "SELECT bot FROM tournament_bots WHERE tournament_id = ? ORDER BY position",
            (tid,))]  # fmt: skip
        rows = con.execute(
            "SELECT idx, seats_json, record_json FROM matches WHERE tournament_id = ?"
            " ORDER BY idx", (tid,)).fetchall()  # fmt: skip
    finally:
        con.close()
    config = json.loads(config_json)
    draw = config.get("draw_probability", 0.02)
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300,
                              draw_probability=draw)  # fmt: skip
    rating = {b: env.create_rating() for b in bots}
    history: dict[str, list[tuple[int, float, float]]] = {
        b: [(-1, rating[b].mu, rating[b].sigma)] for b in bots}  # fmt: skip
    seats_n = 0
    per: dict[str, dict[str, Any]] = defaultdict(lambda: {
        "matches": 0, "places": Counter(), "scores": [], "deltas": [], "bids": 0,
        "contracts": 0, "made": 0, "concessions": 0, "strikes": Counter(), "ms": [],
        "ahead": Counter(), "behind": Counter(), "ties": Counter(),
        "together": Counter()})  # fmt: skip
    for idx, seats_json, record_json in rows:
        seats = json.loads(seats_json)
        rec = json.loads(record_json)
        assert rec["players"] == seats
        seats_n = len(seats)
        places = rec["result"]["places"]
        want_places = expected_places(rec)
        assert places == want_places, (idx, places, want_places)
        for s, bot in enumerate(seats):
            b = per[bot]
            b["matches"] += 1
            b["places"][places[s]] += 1
            b["scores"].append(rec["result"]["scores"][s])
            for o, other in enumerate(seats):
                if o != s:
                    b["together"][other] += 1
                    if places[s] < places[o]:
                        b["ahead"][other] += 1
                    elif places[s] > places[o]:
                        b["behind"][other] += 1
                    else:
                        b["ties"][other] += 1
        for deal in rec["deals"]:
            if "deltas" in deal:
                for s, d in enumerate(deal["deltas"]):
                    # every deal of its matches, the four-player dealer's sat out too
                    per[seats[s]]["deltas"].append(d)
                words = [(a["seat"], a["action"].split()[0]) for a in deal["actions"]]
                declaring = ("give", "contract", "concede", "throw-in")
                declarer = next((s for s, w in words if w in declaring), None)
                if declarer is not None:
                    b = per[seats[declarer]]
                    b["bids"] += 1
                    if deal["outcome"] in ("made", "failed"):
                        b["contracts"] += 1
                        b["made"] += deal["outcome"] == "made"
                    else:
                        b["concessions"] += 1
            for a in deal["actions"]:
                if a.get("by") == "bot":
                    per[seats[a["seat"]]]["ms"].append(a["ms"])
        for inc in rec.get("incidents", []):
            kind = GROUP.get(inc["kind"], "other")
            if kind not in ("disconnects", "other"):
                per[seats[inc["seat"]]]["strikes"][kind] += 1
        for s, bot in enumerate(seats):
            per[bot]["strikes"]["disconnects"] += rec.get("disconnects", [0] * 4)[s]
            per[bot]["strikes"]["other"] += rec.get("wrong_requests", [0] * 4)[s]
        new = env.rate([(rating[b],) for b in seats], ranks=places)
        for bot, (r,) in zip(seats, new, strict=True):
            rating[bot] = r
            history[bot].append((idx, r.mu, r.sigma))
    out: dict[str, Any] = {"bots": {}, "seats": seats_n, "matches": len(rows),
                           "history": history, "config": config}  # fmt: skip
    for bot in bots:
        b = per[bot]
        dl = b["deltas"]
        fig = {
            "mu": rating[bot].mu, "sigma": rating[bot].sigma,
            "conservative": rating[bot].mu - 3 * rating[bot].sigma,
            "matches": b["matches"],
            "places": [b["places"][k] for k in range(1, max(seats_n, 3) + 1)],
            "deals": len(dl),
            "mean_per_deal": statistics.fmean(dl) if dl else None,
            "ci95": 1.96 * statistics.stdev(dl) / math.sqrt(len(dl)) if len(dl) > 1 else None,
            "bids_won": b["bids"], "contracts": b["contracts"], "contracts_made": b["made"],
            "concessions": b["concessions"],
            "strikes": {k: b["strikes"][k] for k in (*STRIKES, "other")},
            "decisions": len(b["ms"]),
            "median_ms": statistics.median(b["ms"]) if b["ms"] else None,
            "mean_score": statistics.fmean(b["scores"]) if b["scores"] else None,
            "made_pct": 100 * b["made"] / b["contracts"] if b["contracts"] else None,
            "h2h": {o: {"matches": b["together"][o], "ahead": b["ahead"][o],
                        "behind": b["behind"][o], "ties": b["ties"][o]}
                    for o in bots if o != bot and b["together"][o]},
        }  # fmt: skip
        out["bots"][bot] = fig
    # by μ−3σ; of two equal to 9 decimals, the greater μ, then the name (docs/tournament.md)
    order = sorted(bots, key=lambda x: (-round(out["bots"][x]["conservative"], 9),
                                        -out["bots"][x]["mu"], x))  # fmt: skip
    out["order"] = order
    return out


def expected_places(rec: dict[str, Any]) -> list[int]:
    """The places docs/tournament.md gives: by final score, equal scores sharing a place;
    forfeiters after the others, sharing theirs; every seat last in an abandoned match."""
    n = len(rec["players"])
    if rec.get("abandoned"):
        return [n] * n
    scores = rec["result"]["scores"]
    gone = set(rec["result"].get("forfeits") or [])
    live = [s for s in range(n) if s not in gone]
    return [1 + sum(scores[o] > scores[s] for o in live) if s not in gone
            else len(live) + 1 for s in range(n)]  # fmt: skip


def stored_ratings(db: Path, tid: str) -> dict[str, list[tuple[int, float, float]]]:
    """The ``ratings`` table's history per bot, in schedule order."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT idx, bot, mu, sigma FROM ratings WHERE tournament_id = ?"
                           " ORDER BY idx, bot", (tid,)).fetchall()  # fmt: skip
    finally:
        con.close()
    out: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for idx, bot, mu, sigma in rows:
        out[bot].append((idx, mu, sigma))
    return dict(out)


def check_json(want: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    """Differences between the recomputation and ``leaderboard.json`` (or the API's rows)."""
    bad: list[str] = []
    rows = doc["rows"]
    if [r["bot"] for r in rows] != want["order"]:
        bad.append(f"order {[r['bot'] for r in rows]}, not {want['order']}")
    if [r["rank"] for r in rows] != list(range(1, len(rows) + 1)):
        bad.append(f"ranks {[r['rank'] for r in rows]}")
    if sorted(r["bot"] for r in rows) != sorted(want["bots"]):
        bad.append("bots differ")
    for r in rows:
        w = want["bots"][r["bot"]]
        for k in ("mu", "sigma", "conservative", "matches", "places", "deals",
                  "bids_won", "contracts", "contracts_made", "concessions", "strikes",
                  "decisions", "median_ms"):  # fmt: skip
            if r[k] != w[k]:
                bad.append(f"{r['bot']}.{k}: shown {r[k]!r}, recomputed {w[k]!r}")
        for k in ("mean_per_deal", "ci95", "mean_score", "made_pct"):
            if k not in r:
                continue
            a, b = r[k], w[k]
            if (a is None) != (b is None) or (
                a is not None and not math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
            ):
                bad.append(f"{r['bot']}.{k}: shown {a!r}, recomputed {b!r}")
    return bad


def check_web(want: dict[str, Any], web: dict[str, Any]) -> list[str]:
    """The web API's leaderboard: its own names for the same figures (docs/web.md)."""
    bad = []
    rows = web["rows"]
    if [r["bot"] for r in rows] != want["order_shown"]:
        bad.append(f"order {[r['bot'] for r in rows]} != {want['order_shown']}")
    for r in rows:
        w = want["bots"][r["bot"]]
        st = w["strikes"]
        exp = {"rank": want["order_shown"].index(r["bot"]) + 1, "mu": w["mu"],
               "sigma": w["sigma"], "conservative": w["conservative"],
               "matches": w["matches"], "places": w["places"], "deals": w["deals"],
               "mean_per_deal": w["mean_per_deal"], "ci95": w["ci95"],
               "bidding_wins": w["bids_won"], "contracts": w["contracts"],
               "contracts_made": w["contracts_made"], "strikes": sum(st[k] for k in STRIKES),
               "strike_groups": {k: st[k] for k in STRIKES}, "other_incidents": st["other"],
               "median_ms": w["median_ms"]}  # fmt: skip
        for k, v in exp.items():
            if r.get(k) != v:
                bad.append(f"{r['bot']}.{k}: shown {r.get(k)!r}, recomputed {v!r}")
    cells = web["head_to_head"]["cells"]
    for a, w in want["bots"].items():
        got = {o: v for o, v in cells.get(a, {}).items() if v["played"]}
        exp2 = {o: {"played": h["matches"], "ahead": h["ahead"], "tied": h["ties"]}
                for o, h in w["h2h"].items()}  # fmt: skip
        if got != exp2:
            bad.append(f"h2h {a}: {got} != {exp2}")
    for bot, hist in want["history"].items():
        got = [(p["index"], p["mu"], p["sigma"]) for p in web["history"][bot]]
        # (sent to HISTORY_DECIMALS but the last point, the table's: round 53)
        played = hist[1:]
        sent = [(i, round(m, HISTORY_DECIMALS), round(sd, HISTORY_DECIMALS))
                for i, m, sd in played[:-1]]  # fmt: skip
        if len(hist) <= 801 and got != [*sent, *played[-1:]]:
            bad.append(f"history {bot} differs")
    return bad


def check_h2h(want: dict[str, Any], h2h: dict[str, Any]) -> list[str]:
    bad = []
    for bot, w in want["bots"].items():
        got = {o: v for o, v in h2h.get(bot, {}).items() if v["matches"]}
        if got != w["h2h"]:
            bad.append(f"h2h {bot}: shown {got}, recomputed {w['h2h']}")
    return bad


def check_history(want: dict[str, Any], hist: dict[str, Any]) -> list[str]:
    bad = []
    for bot, w in want["history"].items():
        got = [(p["index"], p["mu"], p["sigma"]) for p in hist[bot]]
        if got != w:
            bad.append(f"history {bot}: {got} shown, {w} recomputed")
    return bad


def check_csv(want: dict[str, Any], text: str) -> list[str]:
    bad = []
    rows = list(csv.DictReader(io.StringIO(text)))
    if [r["bot"] for r in rows] != want["order_shown"]:
        bad.append(f"csv order {[r['bot'] for r in rows]}")
    for r in rows:
        w = want["bots"][r["bot"]]
        for k in ("conservative", "mu", "sigma", "mean_per_deal", "ci95", "median_ms"):
            val, shown = w[k], r[k]
            if val is None:
                if shown != "":
                    bad.append(f"csv {r['bot']}.{k}: {shown!r} for None")
                continue
            d = len(shown.split(".")[1]) if "." in shown else 0
            if shown != f"{val:.{d}f}" and shown != half_away(val, d):
                bad.append(f"csv {r['bot']}.{k}: {shown!r}, recomputed {val!r}")
        ms = w["mean_score"]
        d = len(r["mean_final_score"].partition(".")[2])
        shown = r["mean_final_score"]
        if shown != "" if ms is None else shown not in (f"{ms:.{d}f}", half_away(ms, d)):
            bad.append(f"csv {r['bot']}.mean_final_score: {r['mean_final_score']}, {ms!r}")
        ints = {"matches": w["matches"], "deals": w["deals"], "bids_won": w["bids_won"],
                "contracts": w["contracts"], "contracts_made": w["contracts_made"],
                "concessions": w["concessions"], "decisions": w["decisions"],
                **{k: w["strikes"][k] for k in STRIKES},
                **{f"place_{i + 1}": n for i, n in enumerate(w["places"])}}  # fmt: skip
        for k, v in ints.items():
            if r.get(k) != str(v):
                bad.append(f"csv {r['bot']}.{k}: {r.get(k)!r}, recomputed {v}")
        if r["rank"] != str(want["order_shown"].index(r["bot"]) + 1):
            bad.append(f"csv rank of {r['bot']}: {r['rank']}")
    return bad


def _pm(w: dict[str, Any]) -> str:
    if w["mean_per_deal"] is None:
        return NONE
    if w["ci95"] is None:  # one deal: no interval
        return signed(w["mean_per_deal"], 1)
    return f"{signed(w['mean_per_deal'], 1)} ± {half_away(w['ci95'], 1)}"


def _made(w: dict[str, Any]) -> str:
    if not w["contracts"]:
        return f"{w['contracts_made']}/0"
    pct = half_away(w["made_pct"], 0)
    return f"{w['contracts_made']}/{w['contracts']} ({pct}%)"


def expected_cells(want: dict[str, Any], bot: str, rank: int, *, md: bool) -> list[str]:
    """A row of the screen's table (``md=False``) or of leaderboard.md, as docs say it."""
    w = want["bots"][bot]
    st = w["strikes"]
    ms = w["median_ms"]
    head = [str(rank), bot, half_away(w["conservative"], 2), half_away(w["mu"], 2),
            half_away(w["sigma"], 2), str(w["matches"])]  # fmt: skip
    if md:
        return [*head, *map(str, w["places"]), _pm(w), str(w["bids_won"]), _made(w),
                f"{st['timeouts']}/{st['illegal']}/{st['disconnects']}", str(st["forfeits"]),
                NONE if ms is None else half_away(ms, 1)]  # fmt: skip
    return [*head, "/".join(map(str, w["places"])), _pm(w), str(w["bids_won"]), _made(w),
            "/".join(str(st[k]) for k in STRIKES),
            NONE if ms is None else half_away(ms, 0)]  # fmt: skip


def table_rows(text: str) -> list[list[str]]:
    """The body rows of a rich table printed as text."""
    return [[c.strip() for c in line.strip().strip("│").split("│")]
            for line in text.splitlines() if line.startswith("│")]  # fmt: skip


def md_rows(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """The rows of leaderboard.md's two tables (leaderboard, head to head)."""
    tables: list[list[list[str]]] = [[]]
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set(":-"):
                tables[-1].append(cells)
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    return tables[0][1:], tables[1][1:]


def h2h_cell(h: dict[str, int] | None) -> str:
    if h is None:  # never at one table
        return "·"
    s = f"{h['ahead']}–{h['behind']}"
    return s + (f" ({h['ties']}=)" if h["ties"] else "")


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "svg":
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "svg":
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._skip:
            self._cell.append(data)


def html_tables(text: str) -> list[list[list[str]]]:
    p = _Cells()
    p.feed(text)
    return p.tables


# --- running the CLI ------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[2]
_MAIN = (
    f"import sys; sys.path.insert(0, {str(ROOT)!r}); from arena.cli import main; sys.exit(main())"
)


def arena(*args: str, timeout: float = 300, **kw: Any) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` of this checkout, as a process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", _MAIN, *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT, **kw)  # fmt: skip


def arena_popen(*args: str, **kw: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _MAIN, *args], text=True, env=env,
                            cwd=ROOT, **kw)  # fmt: skip


def write_config(d: Path, name: str, bots: dict[str, str], **top: Any) -> Path:
    lines = [
        f'name = "{name}"',
        f'db = "{d / (name + ".sqlite")}"',
        f'out = "{d / ("out-" + name)}"',
    ]
    extra_tables = {k: top.pop(k) for k in list(top) if isinstance(top[k], dict)}
    for k, v in top.items():
        lines.append(f"{k} = {json.dumps(v)}")
    for t, kv in extra_tables.items():
        lines.append(f"[{t}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in kv.items()]
    lines.append("[bots]")
    lines += [f"{k} = {v}" for k, v in bots.items()]
    p = d / f"{name}.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def tournament_id(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        ((tid,),) = con.execute("SELECT id FROM tournaments").fetchall()
    finally:
        con.close()
    return str(tid)


def check_all(
    db: Path, out: Path, *, web: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Recompute ``db``'s one tournament and compare every output in ``out`` with it
    (and, given, the web API's leaderboard document)."""
    tid = tournament_id(db)
    want = recompute(db, tid)
    doc = json.loads((out / "leaderboard.json").read_text())
    bad = check_json(want, doc) + check_h2h(want, doc["head_to_head"])
    bad += check_history(want, doc["rating_history"])
    stored = stored_ratings(db, tid)
    if stored != {b: h[1:] for b, h in want["history"].items() if len(h) > 1}:
        bad.append("the ratings table differs from the recomputed history")
    want["order_shown"] = [r["bot"] for r in doc["rows"]]
    bad += check_csv(want, (out / "leaderboard.csv").read_text())
    expect_md = [expected_cells(want, b, i + 1, md=True) for i, b in enumerate(want["order_shown"])]
    expect_tb = [
        expected_cells(want, b, i + 1, md=False) for i, b in enumerate(want["order_shown"])
    ]
    md_main, md_h2h = md_rows((out / "leaderboard.md").read_text())
    if md_main != expect_md:
        bad.append(f"md rows {md_main} != {expect_md}")
    order = want["order_shown"]
    exp_h2h = [[f"**{a}**", *("—" if a == b else h2h_cell(want["bots"][a]["h2h"].get(b))
                              for b in order)] for a in order]  # fmt: skip
    if md_h2h != exp_h2h:
        bad.append(f"md h2h {md_h2h} != {exp_h2h}")
    shown = arena("leaderboard", "--db", str(db), "--tournament", tid)
    if table_rows(shown.stdout) != expect_tb:
        bad.append(f"screen rows {table_rows(shown.stdout)} != {expect_tb}")
    tables = html_tables((out / "leaderboard.html").read_text())
    want["html"] = tables
    if [r[:-1] for r in tables[0][1:]] != expect_md or any(r[-1] for r in tables[0][1:]):
        bad.append(f"html rows {tables[0][1:]} != {expect_md}")
    if [[f"**{r[0]}**", *r[1:]] for r in tables[1][1:]] != exp_h2h:
        bad.append(f"html h2h {tables[1][1:]} != {exp_h2h}")
    if web is not None:
        bad += ["web " + b for b in check_web(want, web)]
        bad += check_bot_pages(want, web)
        node = shutil.which("node")
        if node:
            bad += check_web_texts(want, web, node)
    return want, bad


def web_documents(db: Path, tid: str) -> dict[str, Any]:
    """``/api/leaderboard`` of an ``arena web`` started on ``db``, and under ``bots`` every
    bot's ``/api/bots/<name>`` (its whole list of matches)."""
    import urllib.parse
    import urllib.request

    p = arena_popen("web", "--db", str(db), "--port", "0", stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT)  # fmt: skip

    def get(base: str, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(base + path, timeout=60) as resp:
            return dict(json.loads(resp.read()))

    try:
        assert p.stdout is not None
        for line in p.stdout:
            m = re.search(r"http://[\w.:\[\]]+/", line)
            if m:
                break
        else:
            raise AssertionError("arena web printed no URL")
        base, q = m.group(0), urllib.parse.quote(tid)
        doc = get(base, f"api/leaderboard?tournament={q}")
        doc["bots"] = {r["bot"]: get(base, f"api/bots/{urllib.parse.quote(r['bot'])}"
                                           f"?tournament={q}&limit=1000")
                       for r in doc["rows"]}  # fmt: skip
        return doc
    finally:
        p.terminate()
        p.wait(timeout=30)


def check_bot_pages(want: dict[str, Any], web: dict[str, Any]) -> list[str]:
    """Each bot page's row is the leaderboard's, and its histogram counts the bot's deals
    (docs/web.md: 'counted once from every deal of the bot')."""
    bad = []
    rows = {r["bot"]: r for r in web["rows"]}
    for bot, page in web["bots"].items():
        w = want["bots"][bot]
        if page["row"] != rows[bot]:
            bad.append(f"bot page {bot}: row {page['row']} != {rows[bot]}")
        if page["matches_total"] != w["matches"] or len(page["matches"]) != w["matches"]:
            bad.append(f"bot page {bot}: {page['matches_total']} matches, {w['matches']} played")
        counts = page["deal_score_counts"]
        n = sum(k for _, k in counts)
        if n + page["deal_scores_held_back"] != w["deals"]:
            bad.append(f"bot page {bot}: histogram of {n} deals, the row's {w['deals']}")
        elif n and not page["deal_scores_held_back"]:
            mean = sum(v * k for v, k in counts) / n
            if not math.isclose(mean, w["mean_per_deal"], rel_tol=1e-12, abs_tol=1e-9):
                bad.append(f"bot page {bot}: histogram mean {mean}, {w['mean_per_deal']}")
    return bad


_NODE = r"""
const fs = require("fs"), vm = require("vm");
const ctx = {};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), ctx);
const data = JSON.parse(fs.readFileSync(0, "utf8"));
const out = data.rows.map((r) => [r.bot, ctx.fmt(r.conservative, 2), ctx.fmt(r.mu, 2),
  ctx.fmt(r.sigma, 2), ctx.meanPerDealText(r), ctx.madeText(r), ctx.medianMsText(r)]);
const h = data.head_to_head.cells, pct = {};
for (const a in h) for (const b in h[a]) { const c = h[a][b];
  if (c.played) pct[a + "|" + b] = Math.round((100 * (c.ahead + c.tied / 2)) / c.played); }
process.stdout.write(JSON.stringify({ rows: out, pct }));
"""


def check_web_texts(want: dict[str, Any], web: dict[str, Any], node: str) -> list[str]:
    """The figures as the leaderboard page writes them (``static/common.js`` run by node)
    against docs/web.md: as ``arena leaderboard`` writes them, rounded half away."""
    js = ROOT / "arena" / "web" / "static" / "common.js"
    r = subprocess.run([node, "-e", _NODE, str(js)], input=json.dumps(web),
                       capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    got = json.loads(r.stdout)
    bad = []
    for bot, *cells in got["rows"]:
        w = want["bots"][bot]
        ms = w["median_ms"]
        exp = [half_away(w["conservative"], 2), half_away(w["mu"], 2),
               half_away(w["sigma"], 2), _pm(w), _made(w),
               NONE if ms is None else f"{half_away(ms, 1 if ms < 10 else 0)} ms"]  # fmt: skip
        if cells != exp:
            bad.append(f"page row {bot}: {cells} != {exp}")
    for key, pct in got["pct"].items():
        a, b = key.split("|")
        h = want["bots"][a]["h2h"][b]
        exp_pct = int(half_away(100 * (h["ahead"] + h["ties"] / 2) / h["matches"], 0))
        if pct != exp_pct:
            bad.append(f"page h2h {a}/{b}: {pct}% != {exp_pct}%")
    return bad


# --- the tournaments --------------------------------------------------------------------------

_BOTS = '''"""Bots of round 38's leaderboard check."""
import os
import time

from sdk.bot import Bot


class Conceder(Bot):
    """Passes whenever it may, concedes (or throws in) as declarer: equal scores, ties."""

    quick = True

    def act(self, view):
        for word in ("pass", "concede", "throw-in"):
            for a in view.legal_actions:
                if str(a) == word:
                    return a
        return view.legal_actions[0]


#: Far past the 20 + 30 ms of _FAST: the referee excuses its own stalls, and on a loaded
#: machine they were once most of 80 ms (three late sleepers not all forfeited in deal 1).
NAP_S = 0.5


class Sleeper(Bot):
    """Too slow in every deal after the first: timeouts, then a forfeit."""

    def act(self, view):
        if view.deal_number >= 1:
            time.sleep(NAP_S)
        return view.legal_actions[-1]


class LateSleeper(Bot):
    """In time for its first two decisions of deal 1, then too slow: three of them at a
    table all forfeit, and the match is abandoned in deal 1 (after its auction)."""

    def on_match_start(self, view):
        self.n = 0

    def act(self, view):
        if view.deal_number >= 1:
            self.n += 1
            if self.n > 2:
                time.sleep(NAP_S)
        return view.legal_actions[0]


class Crasher(Bot):
    """Exits (a crash: the process is gone) at its first decision of deal 1 of each match
    of an even index, once per match; restarted three times, then it stays dead."""

    def act(self, view):
        idx = int(self.match_id.rsplit("m", 1)[-1]) if "-m" in self.match_id else 1
        if view.deal_number == 1 and idx % 2 == 0:
            marker = os.path.join(os.environ["CRASH_DIR"], "crashed-" + self.match_id)
            if not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(3)
        return view.legal_actions[0]
'''

_FAST = {"deadlines": {"decision_ms": 20, "time_bank_ms": 30}}


def _bot(tmp: Path, cls: str) -> str:
    path = tmp / "odd.py"
    if not path.exists():
        path.write_text(_BOTS)
    return json.dumps(f"{path}:{cls}")


def _play(tmp: Path, name: str, bots: dict[str, str], **top: Any) -> tuple[Path, Path]:
    cfg = write_config(tmp, name, bots, **top)
    r = arena("tournament", "--config", str(cfg), "--no-progress")
    assert r.returncode == 0, r.stderr[-3000:]
    return tmp / f"{name}.sqlite", tmp / f"out-{name}"


def _checked(db: Path, out: Path) -> dict[str, Any]:
    """Every output of ``db``'s tournament against the recomputation: no difference."""
    web = web_documents(db, tournament_id(db))
    want, bad = check_all(db, out, web=web)
    assert bad == []
    return want


def _records(db: Path) -> list[dict[str, Any]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [
            json.loads(r) for (r,) in con.execute("SELECT record_json FROM matches ORDER BY idx")
        ]
    finally:
        con.close()


def test_classic_duplicate_deals_with_twin_bots(tmp_path: Path) -> None:
    """Cross-check (no defect): classic, duplicate deals, two heuristic and two random
    bots; every figure of every output equals the recomputation."""
    bots = {"r1": '"random"', "h1": '"heuristic"', "h2": '"heuristic"', "r2": '"random"'}
    want = _checked(*_play(tmp_path, "twins", bots, seed=7, max_deals=2, concurrency=2))
    assert want["matches"] == 24 and {w["matches"] for w in want["bots"].values()} == {18}


def test_ties_share_a_place_and_a_rank(tmp_path: Path) -> None:
    """Cross-check (no defect): bots that always pass and concede tie on score; the tied
    places are shared (1, 2, 2), rated as shared ranks with the config's draw probability
    (0.3), and counted as ties head to head, everywhere alike."""
    c = {k: _bot(tmp_path, "Conceder") for k in ("x", "y", "z")}
    db, out = _play(tmp_path, "ties", {**c, "r": '"random"'}, seed=3, max_deals=2,
                    ratings={"draw_probability": 0.3})  # fmt: skip
    want = _checked(db, out)
    assert want["config"]["draw_probability"] == 0.3
    assert any(len(set(r["result"]["places"])) < 3 for r in _records(db))
    assert sum(h["ties"] for h in want["bots"]["x"]["h2h"].values()) > 0


def test_a_crash_timeouts_and_forfeits(tmp_path: Path) -> None:
    """Cross-check (no defect): a bot that crashes (restarted, then dead: disconnects,
    timeouts, forfeits) and one that times out until it forfeits; the forfeiters share
    the place after the others; strikes, places and ratings agree everywhere."""
    where = json.dumps(str(tmp_path))
    bots = {
        "s": _bot(tmp_path, "Sleeper"),
        "r": '"random"',
        "h": '"heuristic"',
        "k": f"{{ bot = {_bot(tmp_path, 'Crasher')}, env = {{ CRASH_DIR = {where} }} }}",
    }
    want = _checked(*_play(tmp_path, "crash", bots, seed=9, max_deals=3, **_FAST,
                           referee={"reconnect_grace_s": 1.0}))  # fmt: skip
    k, s = want["bots"]["k"]["strikes"], want["bots"]["s"]["strikes"]
    assert k["disconnects"] > 0 and k["forfeits"] > 0 and s["forfeits"] == 18
    assert s["timeouts"] >= 3 * s["forfeits"]


def test_abandoned_matches_with_independent_deals(tmp_path: Path) -> None:
    """Cross-check (no defect): 1001 with independent deals; three bots that all forfeit
    in deal 1 abandon their matches (every seat placed 3rd, rated as a draw); their last
    deal, auction over, is no bid won and no deal of the mean, but its decisions count."""
    bots = {k: _bot(tmp_path, "LateSleeper") for k in ("p", "q", "u")}
    # (Deadlines of 100 + 100 ms, still far below the nap: with _FAST's 20 + 30 a loaded
    # machine (load 10) made the sleepers late in deal 1's auction, which then never ended.)
    db, out = _play(tmp_path, "gone", {**bots, "w": '"random"'}, ruleset="1001", seed=9,
                    max_deals=3, deals="independent",
                    deadlines={"decision_ms": 100, "time_bank_ms": 100})  # fmt: skip
    _checked(db, out)
    abandoned = [r for r in _records(db) if r.get("abandoned")]
    assert abandoned and all(r["result"]["places"] == [3, 3, 3] for r in abandoned)
    last = abandoned[0]["deals"][-1]
    assert "deltas" not in last and any(a["action"].startswith("contract") for a in last["actions"])


def test_four_players_count_the_deals_sat_out(tmp_path: Path) -> None:
    """Docs (no code defect): with four players the mean score per deal counts the deals a
    bot dealt and sat out (docs/tournament.md said "the deals the bot played"), so that mean
    × deals is its total score; docs/tournament.md says so now. Plus the 1001-4p figures,
    two forfeiters sharing 3rd place, checked everywhere."""
    bots = {"s": _bot(tmp_path, "Sleeper"), "l": _bot(tmp_path, "LateSleeper"),
            "r": '"random"', "h": '"heuristic"'}  # fmt: skip
    db, out = _play(tmp_path, "four", bots, ruleset="1001-4p", seed=4, max_deals=3,
                    concurrency=3, **_FAST)  # fmt: skip
    want = _checked(db, out)
    finished = Counter()
    total = Counter()
    for rec in _records(db):
        for s, bot in enumerate(rec["players"]):
            finished[bot] += sum("deltas" in d for d in rec["deals"])
            total[bot] += rec["result"]["scores"][s]
    doc = json.loads((out / "leaderboard.json").read_text())
    for row in doc["rows"]:
        assert row["deals"] == finished[row["bot"]] == want["bots"][row["bot"]]["deals"]
        assert round(row["mean_per_deal"] * row["deals"]) == total[row["bot"]]
    assert any(r["result"]["places"].count(3) == 2 for r in _records(db))
    want["order_shown"] = [r["bot"] for r in doc["rows"]]
    for width in (90, 70, 45):  # columns left out, the numbers shown whole
        text = _screen_at(db, width)
        assert len(table_rows(text)) == 4 and check_narrow_screen(want, text) == []


def _interrupted(cfg: Path, db: Path, out: Path, after: int, *extra: str) -> int:
    """``arena tournament`` stopped by SIGINT once ``after`` matches are stored."""
    p = arena_popen("tournament", "--config", str(cfg), "--no-progress", "--db", str(db),
                    "--out", str(out), *extra, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        n = 0
        while n < after and p.poll() is None:
            time.sleep(0.02)
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                n = con.execute("SELECT count(*) FROM matches").fetchone()[0]
                con.close()
            except sqlite3.Error:
                n = 0
        p.send_signal(signal.SIGINT)
        return p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_a_stopped_tournament_is_rated_from_what_is_stored(tmp_path: Path) -> None:
    """Cross-check (no defect): classic with five bots stopped by SIGINT after its first
    match: the leaderboard it wrote agrees, its bots with no match at the prior, ranked
    apart (no shared rank) by name, not by their places in the config (docs say so now)."""
    cfg = write_config(tmp_path, "stop", {k: '"random"' for k in "edcba"}, seed=2,
                       max_deals=2, concurrency=1)  # fmt: skip
    db, out = tmp_path / "stop.sqlite", tmp_path / "out-stop"
    assert _interrupted(cfg, db, out, 1) == 130
    want = _checked(db, out)
    assert 0 < want["matches"] < 60
    idle = [b for b in want["order"] if not want["bots"][b]["matches"]]
    assert all((want["bots"][b]["mu"], want["bots"][b]["sigma"]) == (25, 25 / 3) for b in idle)
    if want["matches"] == 1:
        assert len(idle) == 2 and idle == sorted(idle)
        rows = json.loads((out / "leaderboard.json").read_text())["rows"]
        first, second = [r["rank"] for r in rows if r["bot"] in idle]
        assert second == first + 1


def _same_results(doc: dict[str, Any]) -> Any:
    """What a leaderboard shows but the decision times (wall-clock: they differ by run)."""
    rows = [{k: v for k, v in r.items() if k != "median_ms"} for r in doc["rows"]]
    return rows, doc["rating_history"], doc["head_to_head"], doc["tournament"]["id"]


@pytest.mark.slow
def test_resumed_and_any_concurrency_give_the_same_leaderboard(tmp_path: Path) -> None:
    """Cross-check (no defect): with duplicate deals, one run at concurrency 1, one at 3,
    and one at 2 stopped by SIGINT after 20 matches and resumed end with the same
    ratings (to the bit), rows and head to head; each agrees with the recomputation."""
    bots = {"r1": '"random"', "h1": '"heuristic"', "r2": '"random"', "h2": '"heuristic"'}
    cfg = write_config(tmp_path, "x", bots, seed=21, max_deals=4, matches_per_table=3)
    docs = {}
    for name, conc in (("one", "1"), ("three", "3")):
        r = arena("tournament", "--config", str(cfg), "--no-progress", "--concurrency", conc,
                  "--db", str(tmp_path / f"{name}.sqlite"),
                  "--out", str(tmp_path / name))  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
    db, out = tmp_path / "int.sqlite", tmp_path / "int"
    assert _interrupted(cfg, db, out, 20, "--concurrency", "2") == 130
    assert 20 <= recompute(db, tournament_id(db))["matches"] < 72
    r = arena("tournament", "--config", str(cfg), "--no-progress", "--concurrency", "2",
              "--db", str(db), "--out", str(out))  # fmt: skip
    assert r.returncode == 0 and "(resumed)" in r.stderr, r.stderr[-3000:]
    for name in ("one", "three", "int"):
        want = _checked(tmp_path / f"{name}.sqlite", tmp_path / name)
        assert want["matches"] == 72
        docs[name] = _same_results(json.loads((tmp_path / name / "leaderboard.json").read_text()))
    assert docs["one"] == docs["three"] == docs["int"]


@pytest.mark.slow
def test_the_live_web_leaderboard_rates_in_schedule_order(tmp_path: Path) -> None:
    """Cross-check (no defect): ``arena web`` polled while a tournament at concurrency 4
    stores its matches out of schedule order (its ratings are updated incrementally, again
    from the first place a late match takes): every answer's μ and σ equal, to the bit, a
    rating from scratch, in schedule order, of the matches that answer counts; the last
    one is every figure of the recomputation."""
    import urllib.request

    bots = {"r1": '"random"', "h1": '"heuristic"', "r2": '"random"', "h2": '"heuristic"'}
    cfg = write_config(tmp_path, "live", bots, seed=5, max_deals=3, matches_per_table=4,
                       concurrency=4)  # fmt: skip
    db = tmp_path / "live.sqlite"
    run = arena_popen("tournament", "--config", str(cfg), "--no-progress",
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    web = None
    snaps = []
    try:
        while run.poll() is None and not _stored(db):
            time.sleep(0.05)
        web = arena_popen("web", "--db", str(db), "--port", "0", stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)  # fmt: skip
        assert web.stdout is not None
        base = next(m.group(0) for line in web.stdout
                    if (m := re.search(r"http://[\w.:\[\]]+/", line)))  # fmt: skip
        while True:
            with urllib.request.urlopen(base + "api/leaderboard", timeout=60) as resp:
                snaps.append(json.loads(resp.read()))
            if snaps[-1]["tournament"]["finished_at"]:
                break
            time.sleep(0.1)
        assert run.wait(timeout=300) == 0
    finally:
        for p in (run, web):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        stored = con.execute("SELECT idx, seats_json, record_json FROM matches ORDER BY rowid")
        matches = {i: (json.loads(s), json.loads(r)) for i, s, r in stored}
        order = list(matches)
    finally:
        con.close()
    assert order != sorted(order)  # stored out of schedule order: what is checked here
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300,
                              draw_probability=0.02)  # fmt: skip
    for snap in snaps:
        counted = sorted({p["index"] for h in snap["history"].values() for p in h})
        assert len(counted) == snap["tournament"]["completed"]
        rating: dict[str, Any] = {}
        for i in counted:
            seats, rec = matches[i]
            new = env.rate([(rating.setdefault(b, env.create_rating()),) for b in seats],
                           ranks=rec["result"]["places"])  # fmt: skip
            rating.update({b: r for b, (r,) in zip(seats, new, strict=True)})
        for row in snap["rows"]:
            r = rating.get(row["bot"], env.create_rating())
            assert (row["mu"], row["sigma"]) == (r.mu, r.sigma), (counted, row)
    want = recompute(db, tournament_id(db))
    want["order_shown"] = [r["bot"] for r in snaps[-1]["rows"]]
    assert check_web(want, snaps[-1]) == []


def _stored(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT count(*) FROM matches").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _screen_at(db: Path, width: int) -> str:
    """``arena leaderboard`` on a terminal ``width`` columns wide (a pseudo-terminal)."""
    import fcntl
    import pty
    import struct
    import termios

    main, sub = pty.openpty()
    fcntl.ioctl(sub, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.Popen([sys.executable, "-c", _MAIN, "leaderboard", "--db", str(db)],
                         stdin=sub, stdout=sub, stderr=sub, env={**env, "PYTHONPATH": str(ROOT)},
                         cwd=ROOT)  # fmt: skip
    os.close(sub)
    out = b""
    try:
        while chunk := os.read(main, 65536):
            out += chunk
    except OSError:  # the other end closed
        pass
    finally:
        os.close(main)
        p.wait(timeout=60)
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", out.decode()).replace("\r", "")


_HEADS = {"#": 0, "bot": 1, "μ−3σ": 2, "μ": 3, "σ": 4, "matches": 5, "places": 6,
          "pts/deal": 7, "pts/deal ±95%": 7, "bids won": 8, "bids": 8, "made": 9,
          "strikes": 10, "ms": 11}  # fmt: skip


def check_narrow_screen(want: dict[str, Any], text: str) -> list[str]:
    """A table fitted to a narrow terminal: each column it keeps shows the whole figure
    (docs/tournament.md: columns are left out, no number is cut)."""
    heads = [h.strip() for h in next(ln for ln in text.splitlines() if ln.startswith("┃"))
             .strip("┃").split("┃")]  # fmt: skip
    bad = []
    for cells in table_rows(text):
        rank = int(cells[0])
        full = expected_cells(want, want["order_shown"][rank - 1], rank, md=False)
        for h, cell in zip(heads, cells, strict=True):
            k = 6 if "1st" in h else _HEADS[h]
            exp = full[k].replace(" ± ", "±") if h == "pts/deal" else full[k]
            if cell != exp:
                bad.append(f"{h} of rank {rank}: {cell!r}, not {exp!r}")
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("draw", [0.99, 0.001])
def test_ties_at_either_end_of_the_draw_probability(tmp_path: Path, draw: float) -> None:
    """Cross-check (no defect): 1001-4p with three conceding bots (ties of two at 1st, 2nd
    and 3rd) rated with a draw probability of 0.99 or 0.001: the arena's ratings
    (``arena/ffa_trueskill.py``, or the package where it hands over) equal the
    ``trueskill`` package's to the bit, and every other figure agrees."""
    c = {k: _bot(tmp_path, "Conceder") for k in ("x", "y", "z")}
    db, out = _play(tmp_path, "edge", {**c, "r": '"random"', "h": '"heuristic"'},
                    ruleset="1001-4p", seed=3, max_deals=2, concurrency=3,
                    ratings={"draw_probability": draw})  # fmt: skip
    want = _checked(db, out)
    assert want["config"]["draw_probability"] == draw
    assert any(len(set(r["result"]["places"])) < 4 for r in _records(db))


def test_a_throttled_live_leaderboard_says_what_its_rows_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: ``/api/leaderboard`` of a running tournament whose leaderboard is slow to
    compute serves the rows, rating history and head to head made a little earlier
    (docs/web.md: computed again at most every four times its cost), but its
    ``tournament.completed`` was read at each request: one answer said 8 matches stored
    over rows and a history that counted 7 (the page's "8 of 20 matches" over a table of
    7; found by polling a loaded machine). Its ``completed`` now is the count its rows were
    made for, as docs/web.md's "a match stored while it is read is in all of it or in
    none" has it."""
    from arena.storage import Storage
    from arena.web import DataSource, data
    from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=7, max_deals=2, total=20, finished=False)
    monkeypatch.setattr(data, "SLOW_S", 0.0)  # every computation counts as slow ...
    monkeypatch.setattr(data, "THROTTLE", 1e9)  # ... and stays fresh while running
    source = DataSource(db)
    first = source.leaderboard(None)
    with Storage(db) as st:
        st.save_match("demo", match_id="demo-m0007", index=7, table=0, set_no=7, seed=7,
                      seats=list(DEMO_BOTS), record=demo_record(7, DEMO_BOTS, max_deals=2),
                      started_at=0.0, finished_at=1.0)  # fmt: skip
    second = source.leaderboard(None)
    for doc, stored in ((first, 7), (second, 7)):  # the second: the rows made for 7
        counted = {p["index"] for h in doc["history"].values() for p in h}
        assert sum(r["matches"] for r in doc["rows"]) == 3 * len(counted) == 3 * stored
        assert doc["tournament"]["completed"] == len(counted)
    monkeypatch.setattr(data, "THROTTLE", 0.0)  # not kept any more: made again, for 8
    third = source.leaderboard(None)
    assert third["tournament"]["completed"] == 8 == len(third["history"]["bold"])
