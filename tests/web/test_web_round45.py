"""Round 45 of the web audit: one match read everywhere, and one leaderboard read in every
format.

Checked by hand first, on tournaments run here with `arena tournament` (a bot that sleeps
past its deadline now and then, so that it times out, answers late and forfeits): classic,
1001, 1001-4p, the house-rule file ``rulesets/house-penalty.toml`` and
``rulesets/tournament-1001.toml`` (the talon hidden), a tournament stopped by SIGINT after 2
of 60 matches (a bot with no match yet) then resumed, two tournaments of one name in one
database. Every match of those through `arena replay`'s text, `--check` and the replay API
(``tests/web/test_web_round38.py``'s ``compare_match``), the replay page in Chromium face up
and in every seat view, `arena replay --list` against ``/api/matches``, the leaderboard's
table, CSV, JSON, Markdown and HTML files against ``/api/leaderboard``, ``/api/bots/<name>``
and the ``ratings`` table, ``arena leaderboard --format all`` against the run's own files,
and the commands of docs/web.md, docs/tournament.md, docs/record-format.md and the README
that read results. All agreed but for one thing: the replay page said a match's incidents as
a count, ``4 incident(s)``, the length of the record's ``incidents``, which lists only the
first 20 disconnects (answers to no pending request, failed decisions) of a seat: a seat
that disconnected 25 times read as 20 incidents there and as ``25 disconnects`` in `arena
replay`, and the page said neither whose they were nor of what kind (and, in a seat view,
said at the first step how many were to come). The summary now serves `arena replay`'s
lines (``incident_lines``) and the page shows them, in a seat view at the match's end.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as cli
from arena.storage import Storage
from arena.web.demo import demo_record
from engine import PRESETS, Game, Pass, ThrowIn
from engine.record import forfeit_result
from engine.rules import Ruleset, load_ruleset
from tests.support.harness import get_json, web_server
from tests.web.test_web_browser import load, waiting
from tests.web.test_web_round38 import _Tables, compare_match

ROOT = Path(__file__).resolve().parents[2]
THREE = ["ann", "bob", "cid"]
FOUR = ["ann", "bob", "cid", "dan"]


def _play(rules: Ruleset, seed: int, players: list[str], pass_bias: float, **start: Any) -> Any:
    """A match of seeded random moves (a pass or a throw-in with ``pass_bias``), with the
    referee's ``ms``/``by`` per action and no incident."""
    game = Game.new(rules, seed, players, **start)
    rng = random.Random(seed)
    while not game.is_over:
        legal = game.legal_actions()
        quiet = [a for a in legal if isinstance(a, Pass | ThrowIn)]
        game.apply(quiet[0] if quiet and rng.random() < pass_bias else rng.choice(legal))
    rec = game.record()
    for deal in rec["deals"]:
        for a in deal["actions"]:
            a.update(ms=1.0, by="bot")
    rec.update(incidents=[], forfeits=[])
    return rec


def _incidents_record() -> dict[str, Any]:
    """A classic match in which bob disconnected 25 times (the record lists the first 20
    and counts them all), cid answered 2 requests no longer pending and forfeited."""
    rec = demo_record(2, ("ann", "bob", "cid"), max_deals=3)
    rec["incidents"] = [
        *({"kind": "disconnect", "seat": 1, "deal": 0, "detail": "closed"} for _ in range(20)),
        *({"kind": "wrong_request", "seat": 2, "deal": 1, "detail": "late"} for _ in range(2)),
        {"kind": "forfeit", "seat": 2, "deal": 2, "detail": "gone for good"},
    ]
    rec["disconnects"], rec["wrong_requests"] = [0, 25, 0], [0, 0, 2]
    rec["forfeits"] = [2]
    rec["rules_result"] = rec["result"]
    rec["result"] = forfeit_result(rec["result"], [2], 1000)
    return rec


def _records() -> list[tuple[str, dict[str, Any]]]:
    """(tournament, record): a match of every preset and of a rulesets/ file, the talon
    hidden in 1001 for three and four, the barrel near, and the match of incidents."""
    house = load_ruleset(ROOT / "rulesets" / "house-penalty.toml")
    hidden = load_ruleset(ROOT / "rulesets" / "tournament-1001.toml")
    r = dataclasses.replace
    return [
        ("t3", _play(r(PRESETS["classic"], max_deals=6), 1, THREE, 0.2)),
        ("t3", _play(r(PRESETS["1001"], max_deals=6), 2, THREE, 0.8)),  # throw-ins
        ("t3", _play(r(house, max_deals=6), 0, THREE, 0.3, scores=[870, 860, 850])),
        ("t3", _play(r(hidden, max_deals=6), 3, THREE, 0.6)),
        ("t4", _play(r(PRESETS["1001-4p"], max_deals=5), 4, FOUR, 0.5)),
        ("t4", _play(r(PRESETS["1001-4p"], max_deals=5, talon_visible=False), 5, FOUR, 0.5)),
        ("t3", _incidents_record()),
    ]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    path = tmp_path_factory.mktemp("r45") / "r45.sqlite"
    ids = []
    with Storage(path) as st:
        for tid, players, rules in (("t3", THREE, "classic"), ("t4", FOUR, "1001-4p")):
            st.ensure_tournament(tid, name=tid, fingerprint=tid, total_matches=0,
                                 config={"name": tid, "ruleset": rules, "deals": "independent"},
                                 bots=[(b, "demo") for b in players])  # fmt: skip
        for i, (tid, rec) in enumerate(_records()):
            match_id = f"{tid}-m{i:05d}"
            st.save_match(tid, match_id=match_id, index=i, table=0, set_no=i, seed=rec["seed"],
                          seats=tuple(rec["players"]), record=rec, started_at=1.7e9 + i,
                          finished_at=1.7e9 + i + 0.5)  # fmt: skip
            ids.append(match_id)
        st.finish_tournament("t3")
        st.finish_tournament("t4")
    yield path, ids


@pytest.fixture(scope="module")
def db(stored: tuple[Path, list[str]]) -> Path:
    return stored[0]


def _replay(db: Path, *args: str) -> str:
    r = CliRunner().invoke(cli, ["replay", "--db", str(db), *args])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_every_preset_and_a_house_file_read_alike_in_the_cli_and_the_api(
    stored: tuple[Path, list[str]], base: str
) -> None:
    path, ids = stored
    for match_id in ids:
        assert compare_match(base, path, match_id) > 0
        assert "OK: every action is legal and every stored score matches" in _replay(
            path, "--check", match_id
        )


def test_the_hidden_talon_is_shown_to_the_declarer_alone_to_the_deals_end(
    stored: tuple[Path, list[str]], base: str
) -> None:
    """RULES.md, Talon: the declarer takes the talon and all players see it (option
    `talon_visible`, default on): nobody sees it during the auction; hidden, only the
    declarer, also once the deal is over (a throw-in, a concession, the last trick), the
    dealer of four who sits out included. `arena replay` (face up) shows it in every deal."""
    path, ids = stored
    seen = {True: 0, False: 0}
    for match_id in ids:
        summary = get_json(base, f"/api/matches/{match_id}")
        visible = summary["ruleset"]["talon_visible"]
        text = _replay(path, match_id)
        talons = [ln for ln in text.splitlines() if re.match(r"^talon\s{2,}\S", ln)]
        assert len(talons) == len(summary["deals"]), match_id
        for k in range(len(summary["deals"])):
            face_up = get_json(base, f"/api/matches/{match_id}/deals/{k}")["steps"]
            dealt = face_up[0]["view"]["talon"]
            assert talons[k].split("  (")[0].split()[1:] == dealt and all(
                st["view"]["talon"] == dealt for st in face_up
            ), (match_id, k)
            for seat in range(summary["seats"]):
                steps = get_json(base, f"/api/matches/{match_id}/deals/{k}?seat={seat}")["steps"]
                for st in steps:
                    v = st["view"]
                    shown = v["phase"] != "BIDDING" and (visible or seat == v["declarer"])
                    assert v["talon"] == (dealt if shown else None), (match_id, k, seat, st["i"])
                    seen[visible] += shown and v["phase"] == "DEAL_OVER"
    assert seen[True] and seen[False]  # both kinds were seen at a deal's end


def test_the_replay_summary_says_each_seats_incidents_as_arena_replay_does(
    stored: tuple[Path, list[str]], base: str
) -> None:
    path, ids = stored
    match_id = ids[-1]
    text = _replay(path, match_id).splitlines()
    at = next(i for i, ln in enumerate(text) if ln.startswith("Incidents ("))
    said = [ln.strip() for ln in text[at + 1 :] if ln.startswith("  ")]
    assert said == [
        "bob (1): not strikes: 25 disconnects",
        "cid (2): forfeited in deal 3 (gone for good); not strikes: 2 wrong_requests",
    ]
    summary = get_json(base, f"/api/matches/{match_id}")
    assert summary["incident_lines"] == said
    assert len(summary["incidents"]) == 23  # the record's list: 20 of bob's 25
    # a match without incidents: none; a record no referee watched has no lines at all
    assert get_json(base, f"/api/matches/{ids[0]}")["incident_lines"] == []


def test_the_replay_page_names_the_incidents_at_the_end_of_a_seat_view(
    driver: Any, stored: tuple[Path, list[str]], base: str
) -> None:
    _, ids = stored
    match_id = ids[-1]
    summary = get_json(base, f"/api/matches/{match_id}")
    last = len(summary["deals"]) - 1
    steps = summary["deals"][last]["steps"] - 1

    def incidents() -> list[str]:
        found = driver.find_elements("id", "match-incidents")
        return found[0].text.splitlines() if found else []

    expected = ["Incidents:", *summary["incident_lines"]]
    load(driver, f"{base}replay/{match_id}")  # face up: at once
    assert incidents() == expected
    assert "incident(s)" not in driver.find_element("id", "match-meta").text
    load(driver, f"{base}replay/{match_id}#deal=0&step=0&seat=0")  # what is still to come
    assert incidents() == []
    load(driver, f"{base}replay/{match_id}#deal={last}&step={steps}&seat=0")
    waiting(driver).until(lambda d: incidents() == expected)


# --- one leaderboard in every format ------------------------------------------------------


def _stopped_db(path: Path) -> None:
    """Tournament ``st`` of 4 bots at tables of 3, stopped after 2 of 12 matches (never
    finished, no runner: "stopped"): dan has played no match; in the second, bob and cid
    forfeited and share the 2nd place (a tie in the places and the head to head)."""
    seats = ("ann", "bob", "cid")
    with Storage(path) as st:
        st.ensure_tournament("st", name="st", fingerprint="st", total_matches=12,
                             config={"name": "st", "ruleset": "classic"},
                             bots=[(b, "demo") for b in (*seats, "dan")])  # fmt: skip
        first = demo_record(0, seats, max_deals=2)
        tied = demo_record(3, seats, max_deals=2)
        tied["rules_result"] = tied["result"]
        tied["result"] = forfeit_result(tied["result"], [1, 2], 1000)
        tied["forfeits"] = [1, 2]
        tied["incidents"] += [
            {"kind": "forfeit", "seat": s, "deal": 1, "detail": "gone"} for s in (1, 2)
        ]
        for i, rec in enumerate((first, tied)):
            st.save_match("st", match_id=f"st-m{i:05d}", index=i, table=0, set_no=0, seed=i,
                          seats=seats, record=rec, started_at=1.7e9 + i,
                          finished_at=1.7e9 + i + 1)  # fmt: skip


def _leaderboard(db: Path, fmt: str) -> str:
    r = CliRunner().invoke(cli, ["leaderboard", "--db", str(db), "--format", fmt])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_a_stopped_tournament_reads_alike_in_every_format(tmp_path: Path) -> None:
    db = tmp_path / "st.sqlite"
    _stopped_db(db)
    rows = json.loads(_leaderboard(db, "json"))["rows"]
    listed = _replay(db, "--list")
    assert re.search(r"ann \S+ \(1st\) +bob \S+ \(2nd\) +cid \S+ \(2nd\)", listed), listed
    dan = next(r for r in rows if r["bot"] == "dan")
    assert (dan["matches"], dan["places"], dan["mean_per_deal"]) == (0, [0, 0, 0], None)
    want = [
        [r["bot"], r["matches"], *r["places"], r["strikes"]["forfeits"], f"{r['mu']:.2f}"]
        for r in rows
    ]
    # the CSV
    got = [
        [c["bot"], int(c["matches"]), int(c["place_1"]), int(c["place_2"]), int(c["place_3"]),
         int(c["forfeits"]), f"{float(c['mu']):.2f}"]
        for c in csv.DictReader(io.StringIO(_leaderboard(db, "csv")))
    ]  # fmt: skip
    assert got == want
    # the Markdown and the HTML file: the standings' cells under the same headings
    md = _leaderboard(db, "md")
    assert md.startswith("# st — classic, 3 players, 2 matches (2/12 matches played)\n")
    md_rows = [
        [c.strip() for c in ln.strip("|").split("|")]
        for ln in md.splitlines()
        if re.match(r"^\| \d+ \|", ln)
    ]
    page = _Tables()
    page.feed(_leaderboard(db, "html"))
    html_rows = page.tables[0][1:]
    for cells in (md_rows, html_rows):
        got = [[c[1], int(c[5]), int(c[6]), int(c[7]), int(c[8]), int(c[13]), c[3]] for c in cells]
        assert got == want
    # the web: the same rows in the same order, the tournament stopped, the head to head
    with web_server(db) as server:
        web = get_json(server.url, "/api/leaderboard")
        assert web["tournament"]["state"] == "stopped"
        assert [
            [r["bot"], r["matches"], *r["places"], r["strike_groups"]["forfeits"], f"{r['mu']:.2f}"]
            for r in web["rows"]
        ] == want
        cells = web["head_to_head"]["cells"]
    h2h = json.loads(_leaderboard(db, "json"))["head_to_head"]
    assert h2h["bob"]["cid"]["ties"] == h2h["cid"]["bob"]["ties"] == 1  # the shared 2nd place
    assert all(c["matches"] == 0 for c in h2h["dan"].values())
    for a, row in h2h.items():
        for b, c in row.items():
            told = cells.get(a, {}).get(b)
            if not c["matches"]:
                assert told is None, (a, b)
                continue
            assert (told["played"], told["ahead"], told["tied"]) == (
                c["matches"],
                c["ahead"],
                c["ties"],
            ), (a, b)
            assert c["ahead"] + c["behind"] + c["ties"] == c["matches"] == h2h[b][a]["matches"]
            assert (c["ahead"], c["ties"]) == (h2h[b][a]["behind"], h2h[b][a]["ties"])
    listed = CliRunner().invoke(cli, ["leaderboard", "--db", str(db), "--list"]).stdout
    assert re.search(r"│ st +│ 2/12 +│ .* │ stopped +│", listed), listed
