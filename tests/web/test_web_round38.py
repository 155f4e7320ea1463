"""Round 38 of the web audit: the replay viewer's steps against `arena replay`'s text, the
plots' data against the stored results, hostile requests, escaping, and the self-contained
HTML leaderboard against the API.

Checked by hand first on real tournaments run in a temp dir (classic, 1001, 1001-4p with the
bundled bots; a bot that crashes every 25 decisions and forfeits; a bot that times out; an
`arena serve --db` tournament with no set number of matches and one of a single match; the
demo database): every deal of every match of those through :func:`compare_match` below,
the rating history and head to head recomputed from the stored results, every route with
hostile parameters and methods; the replay page itself in Chromium (hands, sitter, bids,
passes, marriages, tricks with the referee's marks, deltas, outcome, barrel events, scores)
against the same text, and every seat's view of the 4-player matches. All agreed. The one
defect found: the bot page's histogram line wrote a mean between -0.05 and 0 as "-0.0"
(the row beside it: "+0.0"). The tests below pin what was checked, on records made here.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import shutil
import socket
import subprocess
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from arena.cli import main as cli
from arena.ratings import rate_results
from arena.storage import Storage
from arena.web import STATIC_DIR
from arena.web.demo import DEMO_BOTS, demo_record
from engine import DECK, PRESETS, Game, Pass, ThrowIn, fallback_action, parse_action, parse_cards
from engine.record import forfeit_result
from tests.support.harness import get_json, web_server

# --- `arena replay`'s text, parsed ------------------------------------------------------

_DEAL = re.compile(r"^Deal (\d+) — dealer (.+) \((\d+)\)$")
_SEAT_LINE = re.compile(r"^(.+?) \((\d+)\)\s{2,}(.*)$")
# (the talon a ruleset hides is said so after its cards: round 47)
_TALON = re.compile(r"^talon\s{2,}(.*?)(?:  \(shown to the declarer only: talon_visible off\))?$")
_TAKES = re.compile(r"^(.+) \((\d+)\) takes the talon at (\d+)(?: \((.*)\))?$")
_MOVE = re.compile(r"^(.+?) \((\d+)\): (.*)$")
_ROW = re.compile(r"^│\s*(\d+) │ (.*?)\s*│ (\S+)\s*│ (.*?)\s*│$")
_RESULT = re.compile(
    r"^(made|failed|conceded|thrown in|\S+)(?: \(contract (\d+), declarer took (\d+)\))?"
    r"  deltas (.*)  scores (.*)$"
)
_MARKS = re.compile(r"\s{2}\((.*)\)$")
# (each seat's take over a played deal's result line: round 49)
_SEAT_TAKES = re.compile(r"^takes (.*)$")


def _cards(text: str) -> list[str]:
    return text.split()


def parse_replay_text(text: str, players: list[str]) -> list[dict[str, Any]]:
    """The deals of `arena replay MATCH`'s plain text (no colour, unwrapped): per deal its
    dealer, hands (or the sitter's words), talon, bidding entries, who took the talon at
    what, the other moves (gives, contract, concede, throw-in), the tricks (cards with a
    referee mark, trump, winner, marriages) and the result line with its barrel events."""
    deals: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    after_result = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.strip() in ("Final standings", "Standings when the match stopped"):
            break
        m = _DEAL.match(line)
        if m:
            cur = {
                "number": int(m[1]) - 1,
                "dealer": int(m[3]),
                "dealer_name": m[2],
                "hands": {},
                "sits_out": {},
                "talon": None,
                "bids": [],
                "taken": None,
                "moves": [],
                "tricks": [],
                "result": None,
                "events": [],
                "legend": None,
            }
            deals.append(cur)
            after_result = False
            continue
        if cur is None or not line:
            if not line:
                after_result = False
            continue
        if after_result:
            cur["events"].append(line)
            continue
        if line.startswith("Bidding: "):
            said = line[len("Bidding: ") :]
            cur["bids"] = [] if said == "-" else said.split(", ")
            continue
        m = _TALON.match(line)
        if m and cur["talon"] is None:
            cur["talon"] = _cards(m[1])
            continue
        m = _TAKES.match(line)
        if m:
            cur["taken"] = (int(m[2]), int(m[3]), m[4])
            continue
        m = _ROW.match(line)
        if m:
            cells, marks = m[2], []
            mm = _MARKS.search(cells)
            if mm:
                marks, cells = mm[1].split("; "), cells[: mm.start()]
            cards = []
            for cell in cells.split("  "):
                name, card = cell.strip().rsplit(" ", 1)
                cards.append((name, card.rstrip("*"), card.endswith("*")))
            cur["tricks"].append(
                {"n": int(m[1]), "cards": cards, "trump": m[3], "winner": m[4], "marriages": marks}
            )
            continue
        if line.startswith(("┏", "┃", "┡", "└")):
            continue
        if line.startswith("* played by the referee"):
            cur["legend"] = line
            continue
        m = _SEAT_TAKES.match(line)
        if m and cur["tricks"] and cur["result"] is None:
            cur["takes"] = m[1].split(", ")
            continue
        m = _RESULT.match(line)
        if m and " deltas " in line:
            deltas = [int(d.rsplit(" ", 1)[1]) for d in m[4].split(", ")]
            cur["result"] = {
                "outcome": m[1],
                "contract": m[2] and int(m[2]),
                "declarer_took": m[3] and int(m[3]),
                "deltas": deltas,
                "scores": [int(x) for x in m[5].split(", ")],
            }
            after_result = True
            continue
        m = _SEAT_LINE.match(line)
        if m and m[1] == players[int(m[2])] and not cur["moves"] and not cur["bids"]:
            seat = int(m[2])
            if m[3].startswith("sits out ("):
                cur["sits_out"][seat] = m[3][len("sits out (") : -1]
            else:
                cur["hands"][seat] = _cards(m[3])
            continue
        m = _MOVE.match(line)
        if m and m[1] == players[int(m[2])]:
            cur["moves"].append((int(m[2]), m[3]))
            continue
        raise AssertionError(f"unparsed line of `arena replay`: {line!r}")
    return deals


def replay_text(db: Path, match_id: str) -> str:
    r = CliRunner().invoke(cli, ["replay", "--db", str(db), match_id])
    assert r.exit_code == 0, r.output
    return r.stdout


# --- the web's steps against it ---------------------------------------------------------


def _sitter_words(view: dict[str, Any], start: dict[str, Any], s: int) -> str:
    """``sitterTalon`` of static/replay.js, in Python (the page's words for the sitter)."""
    worth = ""
    if view["talon"] and view["talon_score"] is not None:
        worth = str(view["talon_score"])
        if all(c and c.startswith("9") for c in view["talon"]):
            worth += ", three nines"
    if not (start["barrel"] and start["barrel"][s] > 0):
        return f"scores the talon: {worth}" if worth else "scores the talon"
    return (
        f"on the barrel: the talon ({worth}) is not scored"
        if worth
        else ("on the barrel: scores nothing of the talon")
    )


def _move_words(players: list[str], text: str) -> str:
    """A record's action as `arena replay` writes a move that is not a bid or a card."""
    m = re.match(r"^give (\S+) to (\d+)$", text)
    if m:
        return f"gives {m[1]} to {players[int(m[2])]} ({m[2]})"
    return text


def _note(action: dict[str, Any]) -> str:
    if action["fallback"] is None:
        return ""
    why = action["fallback_why"]
    return f" (fallback: {why})" if why else " (fallback)"


def compare_match(base: str, db: Path, match_id: str) -> int:
    """Every deal of ``match_id`` as the replay page's API serves it face up against
    `arena replay`'s text of the same match; the number of deals compared."""
    summary = get_json(base, f"/api/matches/{match_id}")
    players = summary["players"]
    n = len(players)
    text = replay_text(db, match_id)
    assert f"players {', '.join(players)}" in text.splitlines()[0]
    told = parse_replay_text(text, players)
    assert len(told) == len(summary["deals"]), (len(told), len(summary["deals"]))
    # how the match ended, in the words of both (a time limit's are worded apart)
    if summary["ended"] is not None and summary["time_limit_s"] is None:
        said = [ln for ln in text.splitlines() if ln.startswith("ended")]
        assert said == [f"ended: {summary['ended']}"] or (
            summary["result"]["reason"] == "forfeits" and not said
        ), (said, summary["ended"])
    prev_scores = [0] * n  # or the start `arena replay` says: "Started from ann (0) 870, ..."
    start = next((ln for ln in text.splitlines() if ln.startswith("Started from ")), None)
    if start is not None:
        said = start[len("Started from ") :].split("; on the barrel: ")[0].split(", ")
        prev_scores = [int(x.rsplit(" ", 1)[1]) for x in said]
        assert [x.rsplit(" ", 1)[0] for x in said] == [f"{p} ({s})" for s, p in enumerate(players)]
    for k, (t, ds) in enumerate(zip(told, summary["deals"], strict=True)):
        where = f"{match_id} deal {k + 1}"
        deal = get_json(base, f"/api/matches/{match_id}/deals/{k}")
        assert deal["summary"] == ds, where
        steps = deal["steps"]
        first, last = steps[0]["view"], steps[-1]["view"]
        # the dealer, the hands as dealt, the 4-player dealer who sits out, the talon
        assert t["dealer"] == ds["dealer"] == first["dealer"], where
        assert t["dealer_name"] == players[first["dealer"]], where
        active = first["active_seats"]
        for s in range(n):
            if s in active:
                assert t["hands"][s] == first["hands"][s], (where, s)
            else:
                assert n == 4 and s == first["dealer"], where
                assert t["sits_out"][s] == _sitter_words(first, first, s), (where, s)
        assert sorted(t["hands"]) == sorted(active), where
        assert t["talon"] == first["talon"], where
        assert first["scores"] == prev_scores, where  # the scores the deal starts from
        # the auction: the obligatory bid, then each spoken bid and pass (with a fallback)
        spoken = [
            st["action"]
            for st in steps[1:]
            if st["action"]["text"] == "pass" or st["action"]["text"].startswith("bid ")
        ]
        bids = [f"{players[b['seat']]}: {b['action']}" for b in last["bids"]]
        assert [b["action"] for b in last["bids"]] == [a["text"] for a in spoken], where
        bids = [b + _note(a) for b, a in zip(bids, spoken, strict=True)]
        if summary["obligatory_bid"] is not None:
            bids.insert(0, f"{players[active[0]]}: {summary['obligatory_bid']} (obligatory)")
        assert t["bids"] == bids, where
        if t["taken"] is None:
            assert ds["declarer"] is None, where
        else:
            assert (t["taken"][0], t["taken"][1]) == (ds["declarer"], ds["bid"]), where
            assert (last["declarer"], last["bid"]) == (ds["declarer"], ds["bid"]), where
        # passes, contract, concession and throw-in, as the steps' actions say them
        moves = [
            (st["action"]["seat"], _move_words(players, st["action"]["text"]) + _note(st["action"]))
            for st in steps[1:]
            if not re.match(r"^(bid \d+|pass|play .*)$", st["action"]["text"])
        ]
        assert t["moves"] == moves, where
        gives = [(g["from"], g["to"], g["card"]) for g in last["gives"]]
        said_gives = [
            (s, int(m[3]), m[1])
            for s, w in t["moves"]
            if (m := re.match(r"^gives (\S+) to (.+) \((\d+)\)", w))
        ]
        assert gives == said_gives, where
        # the tricks: cards in play order, the referee's marks, trump, winner, marriages
        plays = [st for st in steps[1:] if st["action"]["text"].startswith("play ")]
        assert len(t["tricks"]) == len(last["tricks"]) + bool(last["trick"]), where
        marriages = list(last["marriages"])
        for j, row in enumerate(t["tricks"]):
            assert row["n"] == j + 1, where
            group = plays[3 * j : 3 * j + 3]
            if j < len(last["tricks"]):
                tr = last["tricks"][j]
                assert row["winner"] == players[tr["winner"]], (where, j)
                cards = tr["cards"]
                # the trump while the trick was played: the view when it was completed
                # (a deal's last step keeps its trump: the page draws it from the step
                # before plus the last card)
                done = next(st for st in steps if st["tricks_done"] == j + 1)
                trump = done["view"]["trump"]
            else:  # a trick under way when the record stops
                assert row["winner"] == "(unfinished)", where
                cards = last["trick"]
                trump = last["trump"]
            assert row["trump"] == (trump or "-"), (where, j, row["trump"], trump)
            said = [
                (players[c["seat"]], c["card"], a["action"]["fallback"] is not None)
                for c, a in zip(cards, group, strict=True)
            ]
            assert row["cards"] == said, (where, j)
            lead = group[0]["action"]
            if lead["text"].endswith(" declare"):
                mar = marriages.pop(0)
                assert mar["seat"] == lead["seat"], where
                what = f"{mar['suit']} marriage" if mar["suit"] else "ace marriage"
                assert row["marriages"] == [
                    f"{players[mar['seat']]} declares the {what}: +{mar['value']}"
                ], where
            else:
                assert row["marriages"] == [], where
        assert marriages == [], where  # every marriage of the view was declared on a lead
        assert (t["legend"] is not None) == any(r for tr in t["tricks"] for _, _, r in tr["cards"])
        # the result, the scores after the deal and the barrel's events
        if ds["outcome"] == "unfinished":
            assert t["result"] is None and "result" not in last, where
            continue
        res = last["result"]
        assert (
            t["result"]["outcome"]
            == ds["outcome"].replace("_", " ")
            == res["outcome"].replace("_", " ")
        ), where
        assert t["result"]["contract"] == ds["contract"], where
        if ds["contract"] is not None:
            assert t["result"]["declarer_took"] == ds["takes"][ds["declarer"]], where
        assert t["result"]["deltas"] == ds["deltas"] == res["deltas"], where
        assert t["result"]["scores"] == ds["scores"] == res["scores"] == last["scores"], where
        assert last["takes"] == ds["takes"], where
        named = [re.sub(r"\bseat (\d+)", lambda m: players[int(m[1])], e) for e in res["events"]]
        assert [e for e in t["events"] if not e.startswith("on the barrel after")] == named, where
        prev_scores = res["scores"]
    return len(told)


# --- records of every kind the comparison must cover ------------------------------------


def _played(
    preset: str,
    seed: int,
    players: list[str],
    max_deals: int,
    *,
    pass_bias: float = 0.0,
    ruleset: dict[str, Any] | None = None,
    stop_after: int | None = None,
    mid_trick: bool = False,
    **start: Any,
) -> dict[str, Any]:
    """A match of seeded random moves (a pass or a throw-in taken with ``pass_bias``), as
    the referee records it (``ms``, ``by``); ``stop_after``: the record of a match abandoned
    after that many actions (every seat forfeited: the deal it stopped in unfinished)."""
    rules = dataclasses.replace(PRESETS[preset], max_deals=max_deals, **(ruleset or {}))
    game = Game.new(rules, seed, players, **start)
    rng = random.Random(seed)
    k = 0
    while not game.is_over and not (
        stop_after is not None and k >= stop_after and (len(game.trick) == 1 or not mid_trick)
    ):
        legal = game.legal_actions()
        quiet = [a for a in legal if isinstance(a, Pass | ThrowIn)]
        action = quiet[0] if quiet and rng.random() < pass_bias else rng.choice(legal)
        game.apply(action, seat=game.to_act)
        k += 1
    rec = game.record()
    for deal in rec["deals"]:
        for a in deal["actions"]:
            a.update(ms=1.5, by="bot")
    rec.update(incidents=[], forfeits=[])
    if stop_after is not None:
        n = len(players)
        rec.update(
            abandoned=True,
            rules_result=None,
            forfeits=list(range(n)),
            result={
                "scores": list(game.scores),
                "places": [n] * n,
                "winner": None,
                "deals": len(game.deal_results),
                "reason": "forfeits",
                "shortfalls": [rules.target - x for x in game.scores],
                "forfeits": list(range(n)),
            },
            incidents=[
                {"kind": "forfeit", "seat": s, "deal": game.deal_number, "detail": "gone"}
                for s in range(n)
            ],
        )
    return rec


def _nines_deal() -> dict[int, Any]:
    """Deal 0 of four players, dealer 0: the talon three nines (100 to the sitter)."""
    talon = parse_cards("9♠ 9♣ 9♦")
    rest = [c for c in DECK if c not in talon]
    return {0: ([[], rest[0:7], rest[7:14], rest[14:21]], talon)}


def _to_the_end(rec: dict[str, Any], v: int) -> dict[str, Any]:
    """``rec`` (seat ``v`` forfeited in it) played on to a deal cap of 3, the referee
    playing for ``v``, with the result the referee stores (``v`` placed last)."""
    rules = dataclasses.replace(PRESETS["classic"], max_deals=3)
    game = Game.new(rules, rec["seed"], rec["players"])
    entries = [a for d in rec["deals"] for a in d["actions"]]
    for a in entries:
        game.apply(parse_action(a["action"]), seat=a["seat"])
    rng = random.Random(0)
    while not game.is_over:
        legal = game.legal_actions()
        game.apply(fallback_action(legal) if game.to_act == v else rng.choice(legal))
    out = game.record()
    for k, a in enumerate(b for d in out["deals"] for b in d["actions"]):
        a.update(
            entries[k]
            if k < len(entries)
            else {"by": "fallback" if a["seat"] == v else "bot", "ms": 0}
        )
    out.update(
        incidents=rec["incidents"],
        forfeits=[v],
        rules_result=out["result"],
        result=forfeit_result(out["result"], [v], rules.target),
    )
    return out


THREE = ["ann", "bob", "cid"]
FOUR = ["ann", "bob", "cid", "dan"]


def _records() -> list[tuple[str, dict[str, Any]]]:
    from tests.arena.test_render import _fallback_record

    out: list[tuple[str, dict[str, Any]]] = []
    for seed in range(3):  # near the barrel: getting on, falling off, a barrel win
        out.append(("classic", _played("classic", seed, THREE, 10, scores=[870, 860, 700])))
        out.append(("1001", _played("1001", seed, THREE, 8, pass_bias=0.85)))  # throw-ins
        out.append(("1001-4p", _played("1001-4p", seed, FOUR, 8, pass_bias=0.5)))
    out.append(("1001-4p", _played("1001-4p", 7, FOUR, 3, dealer=0, deals=_nines_deal())))
    # the sitter on the barrel scores nothing of the talon
    out.append(
        (
            "1001-4p",
            _played(
                "1001-4p",
                8,
                FOUR,
                6,
                ruleset={"barrel": True},
                scores=[880, 300, 200, 100],
                barrel=[3, 0, 0, 0],
            ),
        )
    )
    out.append(("classic", demo_record(1, DEMO_BOTS, max_deals=4)))  # a timeout's fallback
    # illegal, timeout, malformed, forfeited (tests/arena/test_render.py), played to the end
    out.append(("classic", _to_the_end(*_fallback_record()[:2])))
    out.append(
        ("classic", _played("classic", 4, THREE, 5, stop_after=40, mid_trick=True))
    )  # mid-trick
    out.append(("1001-4p", _played("1001-4p", 5, FOUR, 5, stop_after=3)))  # mid-auction
    return out


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[str]]]:
    """A database of those records (one tournament each of three and four players) and
    `arena web` on it: (its URL, the database, the match ids)."""
    path = tmp_path_factory.mktemp("r38") / "t.sqlite"
    ids = []
    with Storage(path) as st:
        # (r38a: classic and 1001 for three; r38b: 1001-4p)
        for tid, players, rules in (("r38a", THREE, "classic"), ("r38b", FOUR, "1001-4p")):
            st.ensure_tournament(
                tid,
                name=tid,
                fingerprint=tid,
                total_matches=0,
                config={"name": tid, "ruleset": rules, "deals": "independent"},
                bots=[(b, "demo") for b in (*players, *DEMO_BOTS)],
            )
        for i, (_, rec) in enumerate(_records()):
            tid = "r38b" if len(rec["players"]) == 4 else "r38a"
            match_id = f"{tid}-m{i:05d}"
            st.save_match(
                tid,
                match_id=match_id,
                index=i,
                table=0,
                set_no=i,
                seed=rec["seed"],
                seats=tuple(rec["players"]),
                record=rec,
                started_at=1.7e9 + i,
                finished_at=1.7e9 + i + 0.5,
            )
            ids.append(match_id)
        st.finish_tournament("r38a")
        st.finish_tournament("r38b")
    with web_server(path) as server:
        yield server.url, path, ids


def test_the_replay_pages_deals_say_what_arena_replay_says(
    replays: tuple[str, Path, list[str]],
) -> None:
    """Every deal of every match, face up, against `arena replay`'s text: the dealer and who
    sits out with what the talon scores him, the hands and talon as dealt, the auction
    (classic's obligatory bid first; a fallback's reason), who took the talon at what, the
    passes, contract, concession and throw-in, each trick's cards, the referee's marks,
    trump, winner and marriages, the result, the scores after each deal (and the next deal
    starting from them) and the barrel's events. No defect found: pinned."""
    base, db, ids = replays
    deals = sum(compare_match(base, db, m) for m in ids)
    assert deals >= 60
    texts = "\n".join(replay_text(db, m) for m in ids)
    # what the records were made to hold is in the text compared
    for said in (
        "throw-in",
        ": concede",
        "declares the",
        "three nines",
        "gets on the barrel",
        "on the barrel: the talon (",
        "(fallback: illegal answer)",
        "(fallback: timeout)",
        "(unfinished)",
        "takes the talon at 100 (his obligatory bid",
    ):
        assert said in texts, said


# --- stored strings on the pages: text, never markup ------------------------------------

#: Markup in every stored string a page shows: each would add an element with an id
#: starting "pwn" if a page took it for HTML.
HOSTILE_BOTS = ('<img id="pwn-b1" src=x>', '"><b id=pwn-b2>b</b>', "&lt;x&gt;")
HOSTILE_NAME = '<b id="pwn-t">cup</b>'
HOSTILE_RULESET = "<i id=pwn-r>house</i>"
HOSTILE_DETAIL = "<img id=pwn-d src=x> no answer"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    path = tmp_path_factory.mktemp("r38h") / "h.sqlite"
    seats = HOSTILE_BOTS
    with Storage(path) as st:
        st.ensure_tournament(
            "h",
            name=HOSTILE_NAME,
            fingerprint="h",
            total_matches=2,
            config={
                "name": HOSTILE_NAME,
                "deals": "independent",
                "ruleset": {**dataclasses.asdict(PRESETS["classic"]), "name": HOSTILE_RULESET},
            },
            bots=[(b, "demo") for b in seats],
        )
        for i in range(2):
            rec = demo_record(1, seats, max_deals=3)  # seat 0's first move: a timeout
            rec["ruleset"]["name"] = HOSTILE_RULESET
            rec["incidents"][0]["detail"] = HOSTILE_DETAIL
            st.save_match(
                "h",
                match_id=f"h-m{i:05d}",
                index=i,
                table=0,
                set_no=i,
                seed=1,
                seats=seats,
                record=rec,
                started_at=1.7e9 + i,
                finished_at=1.7e9 + i + 1,
            )
        st.finish_tournament("h")
    with web_server(path) as server:
        yield server.url, path


def test_the_self_contained_page_writes_stored_strings_as_text(
    hostile: tuple[str, Path],
) -> None:
    """`arena leaderboard --format html`: the tournament's name and ruleset, the bots'
    names (table, head to head, plot titles and legend) escaped; no element of theirs."""
    _, db = hostile
    r = CliRunner().invoke(cli, ["leaderboard", "--db", str(db), "--format", "html"])
    assert r.exit_code == 0, r.output

    class Ids(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.ids: list[str] = []
            self.text = ""

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.ids += [v or "" for k, v in attrs if k == "id"]

        def handle_data(self, data: str) -> None:
            self.text += data

    page = Ids()
    page.feed(r.stdout)
    assert not [i for i in page.ids if i.startswith("pwn")]
    for said in (*HOSTILE_BOTS, HOSTILE_NAME, HOSTILE_RULESET):
        assert said in page.text, said


@pytest.mark.browser
def test_the_pages_show_stored_strings_as_text(driver: Any, hostile: tuple[str, Path]) -> None:
    """The leaderboard, a bot's page (its incidents' details) and the replay (the header's
    ruleset, the seats, the action log's referee marks, the result) in Chromium: every
    stored string shown as text, none of them made an element. (static/*.js builds the
    pages with textContent and attributes; no innerHTML.) No defect found: pinned."""
    from tests.web.test_web_browser import load

    base, _ = hostile
    seen = ""
    pages = [
        base,
        f"{base}bot/{quote(HOSTILE_BOTS[0], safe='')}",
        f"{base}replay/h-m00000#deal=0&step=0",
        f"{base}replay/h-m00000#deal=2&step=999",
        f"{base}replay/h-m00001#deal=0&step=5&seat=1",
    ]
    for url in pages:
        load(driver, url)
        pwned = driver.execute_script("return document.querySelectorAll('[id^=pwn]').length")
        assert pwned == 0, url
        seen += driver.find_element("css selector", "body").text + "\n"
        seen += " ".join(
            driver.execute_script(
                "return [...document.querySelectorAll('[title]')].map(e => e.title)"
            )
        )
    for said in (*HOSTILE_BOTS, HOSTILE_NAME, HOSTILE_RULESET, HOSTILE_DETAIL):
        assert said in seen, said


# --- the self-contained HTML file against the API ---------------------------------------


class _Tables(HTMLParser):
    """The text of every table cell of a page (an SVG inside a cell left out), the
    ``<title>`` of each SVG circle, and every tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.titles: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self._cell: str | None = None
        self._svg = 0
        self._title: str | None = None
        self._row: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
            self.tables[-1].append(self._row)
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "svg":
            self._svg += 1
        elif tag == "title" and self._svg:
            self._title = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "svg":
            self._svg -= 1
        elif tag == "title" and self._title is not None:
            self.titles.append(self._title)
            self._title = None

    def handle_data(self, data: str) -> None:
        if self._title is not None:
            self._title += data
        elif self._cell is not None and not self._svg:
            self._cell += data


def _js_texts(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The web pages' words for each row's mean per deal and contracts made: common.js's
    ``meanPerDealText`` and ``madeText``, run in node."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node runs the pages' common.js here (tests/web/test_web_audit_round33.py too)")
    js = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    script = js + (
        f"\nconst rows = {json.dumps(rows)};\nprocess.stdout.write(JSON.stringify("
        "rows.map((r) => [meanPerDealText(r), madeText(r)])));"
    )
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_html_file_holds_the_apis_numbers(replays: tuple[str, Path, list[str]]) -> None:
    """`arena leaderboard --format html` of each tournament (three players; four, with
    ties: the abandoned matches place every seat last) against ``/api/leaderboard``: every
    cell of the table (the mean per deal and contracts made as the web pages write them),
    the head to head with its ties, the rating plot's last point of each bot; and the file
    loads nothing (no script, link, image, frame or CSS url). No defect found: pinned. (The
    median decision time is the one figure written otherwise: "13.0" in the file, "13 ms"
    on the pages, the same number.)"""
    base, db, _ = replays
    ties = 0
    for tid in ("r38a", "r38b"):
        board = get_json(base, f"/api/leaderboard?tournament={tid}")
        r = CliRunner().invoke(
            cli, ["leaderboard", "--db", str(db), "--tournament", tid, "--format", "html"]
        )
        assert r.exit_code == 0, r.output
        page = _Tables()
        page.feed(r.stdout)
        # nothing to fetch: the SVG namespace is the only URL
        assert {t for t, _ in page.tags} <= {
            "html",
            "head",
            "meta",
            "title",
            "style",
            "body",
            "h1",
            "h2",
            "p",
            "code",
            "div",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "svg",
            "rect",
            "line",
            "text",
            "polygon",
            "polyline",
            "circle",
            "span",
            "i",
        }
        urls = re.findall(r"(?:https?:)?//[^\s\"'<>)]+", r.stdout)
        assert set(urls) == {"http://www.w3.org/2000/svg"}, set(urls)
        assert "url(" not in r.stdout and "@import" not in r.stdout
        head, *rows = page.tables[0]
        assert len(rows) == len(board["rows"])
        words = _js_texts(board["rows"])
        for row, api, (mean, made) in zip(rows, board["rows"], words, strict=True):
            cell = dict(zip(head, row, strict=False))
            g = api["strike_groups"]
            want = {
                "rank": str(api["rank"]),
                "bot": api["bot"],
                "μ−3σ": f"{api['conservative']:.2f}",
                "μ": f"{api['mu']:.2f}",
                "σ": f"{api['sigma']:.2f}",
                "matches": str(api["matches"]),
                "score/deal (95% CI)": mean,
                "bids won": str(api["bidding_wins"]),
                "contracts made": made,
                "forfeits": str(g["forfeits"]),
                "strikes T/I/D": f"{g['timeouts']}/{g['illegal']}/{g['disconnects']}",
                **{
                    k: str(n)
                    for k, n in zip(("1st", "2nd", "3rd", "4th"), api["places"], strict=False)
                },
            }
            assert {k: cell.get(k) for k in want} == want
            if api["median_ms"] is not None:
                assert float(cell["median ms"]) == round(api["median_ms"], 1)
            if not api["matches"]:  # (a bot registered that played none: no line)
                assert board["history"].get(api["bot"], []) == []
                continue
            last = board["history"][api["bot"]][-1]
            assert f"{api['bot']}: μ={last['mu']:.2f} σ={last['sigma']:.2f}" in page.titles
            assert (last["mu"], last["sigma"]) == (api["mu"], api["sigma"])
        h2h = page.tables[1]
        bots = h2h[0][1:]
        assert bots == board["head_to_head"]["bots"]
        for row in h2h[1:]:
            a = row[0]
            for b, text in zip(bots, row[1:], strict=True):
                c = board["head_to_head"]["cells"].get(a, {}).get(b)
                if a == b or c is None:  # (the file's "·": two bots that never met)
                    assert text == ("—" if a == b else "·")
                    continue
                behind = c["played"] - c["ahead"] - c["tied"]
                assert text == f"{c['ahead']}–{behind}" + (f" ({c['tied']}=)" if c["tied"] else "")
                ties += c["tied"]
    assert ties


# --- defects ----------------------------------------------------------------------------

#: A DOM just big enough for the pages' ``el``/``svg`` to build their elements in node:
#: each node's text is what ``textContent`` would read.
FAKE_DOM = """
class Node {
  constructor(tag) {
    this.tag = tag; this.children = []; this.attrs = {}; this.dataset = {}; this.own = "";
  }
  append(...cs) {
    for (const c of cs) this.children.push(c instanceof Node ? c : new Text(String(c)));
  }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  addEventListener() {}
  set textContent(v) { this.children = []; this.own = String(v); }
  get textContent() { return this.own + this.children.map((c) => c.textContent).join(""); }
}
class Text extends Node { constructor(t) { super("#text"); this.own = t; } }
globalThis.Node = Node;
globalThis.addEventListener = () => {};  // (the window's: replay.js listens for pagehide)
globalThis.location = { pathname: "/bot/x", search: "", hash: "" };
globalThis.document = {
  createElement: (t) => new Node(t), createElementNS: (ns, t) => new Node(t),
  createTextNode: (t) => new Text(t), getElementById: () => null, body: new Node("body"),
};
"""


def _run_page_js(page: str, code: str) -> Any:
    """``code`` run in node after common.js and the page's script (its ``main()`` call
    left out) over :data:`FAKE_DOM`; what ``code`` writes, as JSON."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node runs the pages' scripts here (tests/web/test_web_audit_round33.py too)")
    common = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    script = (STATIC_DIR / page).read_text(encoding="utf-8").rsplit("main();", 1)[0]
    run = subprocess.run([node, "-e", FAKE_DOM + common + script + code],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_bot_pages_histogram_line_writes_a_mean_of_zero_without_a_sign() -> None:
    """Defect: the line under a bot's histogram wrote its mean with ``toFixed``: a mean
    between -0.05 and 0 (101 deals summing to -5, say: a 4-player sitter's talon scores
    make any sum) read "mean -0.0", where the bot's row on the same page, and the
    leaderboard, say "+0.0" (``fmt`` drops the sign of a figure that shows zero)."""
    pairs = [[-60, 1], [0, 99], [55, 1]]  # 101 deals, sum -5: mean -0.0495
    got = _run_page_js(
        "bot.js",
        f"""
const h = histogram({json.dumps(pairs)});
const line = h.children.filter((c) => c.tag === "p").map((c) => c.textContent);
process.stdout.write(JSON.stringify([line, meanPerDealText({{ mean_per_deal: -5 / 101 }})]));
""",
    )
    assert got == [["101 deals · mean 0.0 · median 0 · min -60 · max 55"], "+0.0"]
    # an even number of deals: the median is the mean of the two middle ones
    got = _run_page_js(
        "bot.js",
        """
const h = histogram([[-25, 1], [10, 2], [40, 1]]);
const line = h.children.filter((c) => c.tag === "p").map((c) => c.textContent);
process.stdout.write(JSON.stringify(line));
""",
    )
    assert got == ["4 deals · mean 8.8 · median 10 · min -25 · max 40"]


# --- hostile requests --------------------------------------------------------------------


def _raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as it is; (status, headers, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


def test_every_route_answers_hostile_requests_with_a_clean_error(
    replays: tuple[str, Path, list[str]],
) -> None:
    """Ids of another tournament, huge and negative numbers, ``..``, percent-encoding
    (LIKE's wildcards, NUL, bytes that are no UTF-8), a repeated parameter, raw non-UTF-8
    bytes, every other method and a very long URL: each a 4xx with a JSON error, never a
    500 or a traceback. No defect found: pinned."""
    base, _, ids = replays
    port = int(base.rstrip("/").rsplit(":", 1)[1])
    three = next(m for m in ids if m.startswith("r38a"))
    probes = {  # path -> status
        "/api/bots/ann?tournament=r38b": 200,  # (ann sits in both)
        "/api/bots/dan?tournament=r38a": 404,  # a bot of the other tournament only
        "/api/matches?tournament=r38b&bot=nobody": 404,
        "/api/leaderboard?tournament=r38": 404,
        "/api/leaderboard?tournament=%25": 404,
        "/api/leaderboard?tournament=_38a": 404,
        "/api/leaderboard?tournament=%00": 404,
        "/api/matches/%25": 404,
        "/api/matches/_": 404,
        "/api/matches/m0000_": 404,
        "/api/matches/%00": 400,
        "/api/matches/%ED%A0%80": 404,
        "/api/bots/%2e%2e%2fx": 404,
        "/api/bots/..": 404,
        "/api/bots/%FF%FE": 404,
        "/static/..%2fserver.py": 404,
        "/static/common.js/..": 404,
        f"/api/matches/{three}/deals/-1": 400,
        f"/api/matches/{three}/deals/99999999999999999999": 400,
        f"/api/matches/{three}/deals/1e3": 400,
        f"/api/matches/{three}/deals/0%00": 400,
        f"/api/matches/{three}/deals/0?seat=-1": 400,
        f"/api/matches/{three}/deals/0?seat=3": 400,
        f"/api/matches/{three}/deals/0?seat=0&seat=x": 400,  # the last one counts
        f"/api/matches/{three}/deals/0?seat=x&seat=0": 200,
        f"/api/matches/{three}/deals/0/x": 404,
        "/api/matches?limit=-1": 400,
        "/api/matches?before=9223372036854775808": 400,
        "/api/bots/ann?limit=0": 400,
        "/api/bots/ann?before=%00": 400,
        "/replay/x/y": 404,
        "/bot/": 404,
        "/%": 404,
    }
    for path, want in probes.items():
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        status, headers, body = _raw(port, request)
        assert status == want, (path, status, body[:200])
        assert headers["Content-Type"].startswith("application/json"), path
        doc = json.loads(body)
        if want != 200:
            assert doc["status"] == want and doc["error"], (path, doc)
            assert "Traceback" not in doc["error"], path
    raw = [b"/api/bots/\xff\xfe", b"/api/matches/\x80", b"/api/matches/" + b"a" * 70_000]
    for path in raw:
        status, _, body = _raw(port, b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert status in (404, 414) and json.loads(body)["error"], path[:40]
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "FOO"):
        request = f"{method} /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        status, headers, body = _raw(port, request)
        assert (status, headers.get("Allow")) == (405, "GET, HEAD"), method
        assert json.loads(body)["status"] == 405
    status, headers, body = _raw(port, b"HEAD /api/matches/%25 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert (status, body) == (404, b"") and headers["Content-Type"].startswith("application/json")


# --- the plots' data ---------------------------------------------------------------------


def test_the_plots_data_is_the_stored_results(replays: tuple[str, Path, list[str]]) -> None:
    """What each plot is drawn from, against the stored matches: the rating history of
    every bot (the leaderboard's and its page's) is TrueSkill rated again from the stored
    results in schedule order, point for point, ending at the row's μ and σ; a bot page's
    histogram counts every deal score of its records; the places, matches and head to
    head (ties too) are the stored places'. No defect found: pinned."""
    base, db, _ = replays
    with Storage.open_readonly(db) as st:
        for tid in ("r38a", "r38b"):
            board = get_json(base, f"/api/leaderboard?tournament={tid}")
            results = st.match_results(tid)
            bots = [r["bot"] for r in board["rows"]]
            _, history = rate_results(results, bots)
            for row in board["rows"]:
                bot = row["bot"]
                mine = [(p.index, p.mu, p.sigma) for p in history if p.bot == bot]
                served = [(h["index"], h["mu"], h["sigma"]) for h in board["history"].get(bot, [])]
                # (round 53: sent to 4 decimals, but the last point, the row's, whole)
                sent = [(i, round(mu, 4), round(sigma, 4)) for i, mu, sigma in mine[:-1]]
                assert served == sent + mine[-1:], bot
                if mine:
                    assert (row["mu"], row["sigma"]) == mine[-1][1:]
                played = [m for m in results if bot in m.seats]
                places = [0] * board["seats"]
                for m in played:
                    places[m.places[m.seats.index(bot)] - 1] += 1
                assert (row["matches"], row["places"]) == (len(played), places), bot
                page = get_json(base, f"/api/bots/{quote(bot)}?tournament={tid}")
                assert page["history"] == board["history"].get(bot, [])
                want: Counter[int] = Counter()
                for m in played:
                    seat = m.seats.index(bot)
                    for deal in st.load_record(m.match_id)["deals"]:
                        if "deltas" in deal:
                            want[deal["deltas"][seat]] += 1
                assert page["deal_score_counts"] == sorted(map(list, want.items()))
                assert page["deal_scores_held_back"] == 0 and row["deals"] == want.total()
            for a, cells in board["head_to_head"]["cells"].items():
                for b, c in cells.items():
                    both = [m for m in results if a in m.seats and b in m.seats]
                    pa = [m.places[m.seats.index(a)] for m in both]
                    pb = [m.places[m.seats.index(b)] for m in both]
                    ahead = sum(x < y for x, y in zip(pa, pb, strict=True))
                    tied = sum(x == y for x, y in zip(pa, pb, strict=True))
                    assert c == {"played": len(both), "ahead": ahead, "tied": tied}, (a, b)


# --- the replay page itself against `arena replay` ---------------------------------------


def _faces(text: str) -> list[str]:
    """The cards of an element's text, where each card is its rank and suit on two lines
    ("9\\n♣\\nA\\n♣" is 9♣ A♣); other lines as they are."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i + 1] in ("♠", "♣", "♦", "♥"):
            out.append(lines[i] + lines[i + 1])
            i += 2
        else:
            out.append(lines[i])
            i += 1
    return out


@pytest.mark.browser
def test_the_replay_page_shows_what_arena_replay_says(
    driver: Any, replays: tuple[str, Path, list[str]]
) -> None:
    """The page in Chromium, face up, at each deal's first and last step, against `arena
    replay`'s text: the hands dealt and the sitter's words, the bids, the passed cards,
    the marriages, each trick's cards, referee marks and winner, the deltas, outcome and
    barrel events, and the scores. Three matches: the 4-player sitter of a three-nines
    talon, the sitter on the barrel, and the referee's moves of every reason. No defect
    found: pinned."""
    from tests.web.test_web_browser import load

    base, db, ids = replays
    seen: set[str] = set()
    for mid in (ids[9], ids[10], ids[12]):
        players = get_json(base, f"/api/matches/{mid}")["players"]
        for k, t in enumerate(parse_replay_text(replay_text(db, mid), players)):
            where = (mid, k + 1)
            load(driver, f"{base}replay/{mid}#deal={k}&step=0")
            for seat, hand in t["hands"].items():
                assert _faces(driver.find_element("id", f"hand-{seat}").text) == hand, where
            for seat, said in t["sits_out"].items():
                box = driver.find_element("id", f"hand-{seat}").text
                assert box == f"sits out this deal ({said})", where
                seen.update(w for w in ("three nines", "on the barrel") if w in said)
            load(driver, f"{base}replay/{mid}#deal={k}&step=99999")
            bids = [re.sub(r" \(fallback[^)]*\)$", "", b).replace(": ", " ", 1) for b in t["bids"]]
            assert driver.find_element("id", "bids").text == ", ".join(bids), where
            gives = []
            for seat, move in t["moves"]:
                m = re.match(r"^gives (\S+) to (.+) \((\d+)\)", move)
                if m:
                    gives += [f"{players[seat]} → {m[2]}:", m[1]]
            shown = _faces(driver.find_element("id", "gives").text)
            assert shown == (gives or ["none"]), where
            marriages = [re.sub(r"^(.+) declares the (.+): \+(\d+)$", r"\1: \2 +\3", m)
                         for row in t["tricks"] for m in row["marriages"]]  # fmt: skip
            assert driver.find_element("id", "marriages").text == (
                "\n".join(marriages) or "none"
            ), where
            lis = driver.find_elements("css selector", "#tricks li")
            assert len(lis) == len(t["tricks"]), where
            for li, row in zip(lis, t["tricks"], strict=True):
                cards = _faces(li.text)
                assert cards[:-1] == [c for _, c, _ in row["cards"]], where
                assert cards[-1] == f"→ {row['winner']}", where
                marked = len(li.find_elements("css selector", ".card.referee"))
                assert marked == sum(r for *_, r in row["cards"]), where
                seen.update(["referee"] * bool(marked))
            result = driver.find_element("id", "deal-result").text.split("\n")
            deltas = " ".join(
                f"{p} {x:+d}" for p, x in zip(players, t["result"]["deltas"], strict=True)
            )
            assert " ".join(result[0].split()) == f"deal result: {deltas}", where
            assert result[1] == t["result"]["outcome"], where
            events = [e for e in t["events"] if not e.startswith("on the barrel after")]
            assert result[2:] == events, where
            for seat, score in enumerate(t["result"]["scores"]):
                assert driver.find_element("id", f"score-{seat}").text == f"score {score}"
    assert seen == {"three nines", "on the barrel", "referee"}
