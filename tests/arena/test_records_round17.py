"""Round 17: match records read by an outsider with docs/record-format.md in hand.

`support.record_reader.read` rebuilds a record from the docs alone (the seed's dealer and
shuffle, every deal's cards, tricks, marriages and figures, the referee's additions); the
tests here check that it agrees with what the arena writes, and that `arena replay
--check` refuses, naming where, a record whose documented fields have the wrong type.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))

from support.record_reader import read

from arena.cli import main
from bots import load
from engine import Game, fallback_action, load_ruleset
from sdk import play_local


def _local(ruleset: str = "classic", players: int = 3, seed: int = 3) -> dict[str, Any]:
    bots = [load("random")] * (players - 1) + [load("heuristic")]
    return play_local(bots, ruleset=ruleset, seed=seed, max_deals=3).record


def _refereed(seed: int = 3) -> dict[str, Any]:
    """A record shaped as the referee writes it: the seed deals every card, each action
    says who chose it, and the match id, incidents and per-seat counts are there."""
    rec = _local(seed=seed)
    for d in rec["deals"]:
        for a in d["actions"]:
            a.update(ms=1, by="bot")
    rec.update(
        match_id="t-m00000",
        incidents=[],
        forfeits=[],
        wrong_requests=[0, 0, 0],
        disconnects=[0, 0, 0],
    )
    return rec


@pytest.mark.parametrize(
    ("ruleset", "players"),
    [("classic", 3), ("1001", 3), ("1001", 4), ("rulesets/house-penalty.toml", 3)],
)
def test_the_outside_reader_agrees_with_the_engine(ruleset: str, players: int) -> None:
    rec = _local(ruleset, players)
    findings, deals = read(json.loads(json.dumps(rec)))
    assert findings == []
    assert len(deals) == rec["result"]["deals"]
    assert all(len(d.tricks) in (0, 8) for d in deals)


def test_the_outside_reader_reads_a_start_position_and_a_given_dealer() -> None:
    rules = dataclasses.replace(load_ruleset("classic"), max_deals=2)
    game = Game.new(
        rules, 5, ["ann", "bob", "cid"], scores=(870, 880, 0), barrel=(0, 2, 0), dealer=2
    )
    while not game.is_over:
        game.apply(fallback_action(game.legal_actions()), seat=game.to_act)
    findings, _ = read(game.record())
    assert findings == []


def test_the_outside_reader_agrees_with_a_refereed_record() -> None:
    assert read(_refereed())[0] == []


def _check(rec: dict[str, Any], tmp_path: Path) -> tuple[int, str]:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(main, ["replay", "--check", str(path)])
    return result.exit_code, result.output


def _edit(rec: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    rec = copy.deepcopy(rec)
    *path, last = where.split(".")
    node: Any = rec
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    return rec


# Each documented field of a wrong type: `--check` says "not a match record", naming it
# (exit 2), as for the types it already checked (a deal's number, an action's seat ...).
# Before round 17 these passed the check (exit 0) or were refused as a rules problem
# (exit 1), and `arena replay` drew the record with the bad values left out.
@pytest.mark.parametrize(
    ("where", "value", "named"),
    [
        ("seed", 1.5, "'seed'"),
        ("seed", None, "'seed'"),
        ("deals.0.actions.0.by", 5, "Deal 1 (record deal 0), action 0: 'by'"),
        ("deals.0.actions.0.by", "robot", "Deal 1 (record deal 0), action 0: 'by'"),
        ("deals.0.actions.1.ms", "x", "Deal 1 (record deal 0), action 1: 'ms'"),
        ("deals.0.actions.1.ms", -3, "Deal 1 (record deal 0), action 1: 'ms'"),
        ("incidents", [{"kind": 5, "seat": 0, "deal": 0, "detail": ""}], "incident 0: 'kind'"),
        (
            "incidents",
            [{"kind": "timeout", "seat": "x", "deal": 0, "detail": ""}],
            "incident 0: 'seat'",
        ),
        (
            "incidents",
            [{"kind": "timeout", "seat": 0, "deal": "0", "detail": ""}],
            "incident 0: 'deal'",
        ),
        (
            "incidents",
            [{"kind": "timeout", "seat": 0, "deal": 0, "detail": 7}],
            "incident 0: 'detail'",
        ),
        ("wrong_requests", "x", "'wrong_requests'"),
        ("disconnects", [0, 0], "'disconnects'"),
        ("forfeits", "1", "'forfeits'"),
        ("match_id", 5, "'match_id'"),
        ("interrupted", "yes", "'interrupted'"),
        ("abandoned", 1, "'abandoned'"),
    ],
)
def test_check_refuses_a_referee_field_of_the_wrong_type(
    tmp_path: Path, where: str, value: Any, named: str
) -> None:
    code, out = _check(_edit(_refereed(), where, value), tmp_path)
    assert code == 2, out
    assert "not a match record" in out and named in out, out


def test_the_edits_that_check_catches_name_where(tmp_path: Path) -> None:
    rec = _refereed()
    assert _check(rec, tmp_path)[0] == 0
    d1 = rec["deals"][1]
    a, b = [s for s, h in enumerate(d1["hands"]) if h][:2]
    swapped = copy.deepcopy(rec)
    h = swapped["deals"][1]["hands"]
    h[a][0], h[b][0] = h[b][0], h[a][0]
    for edited, named in [
        (swapped, "deal(s) 2 "),
        (_edit(rec, "deals.1.scores.0", d1["scores"][0] + 5), "Deal 2 (record deal 1): scores"),
        (
            _edit(rec, "deals.0.deltas.2", rec["deals"][0]["deltas"][2] + 5),
            "Deal 1 (record deal 0): deltas",
        ),
        (_edit(rec, "result.deals", 99), "result: deals"),
    ]:
        code, out = _check(edited, tmp_path)
        assert code == 1 and named in out, out
    dropped = copy.deepcopy(rec)
    del dropped["deals"][1]
    code, out = _check(dropped, tmp_path)
    assert code == 1 and "Deal 2 (record deal 1)" in out, out


def _forfeited() -> dict[str, Any]:
    """A referee's record of a match where seat 1 timed out on its first three decisions
    (the referee playing the fallback each time) and forfeited: every later move of its is
    the referee's too."""
    import random

    from engine.record import forfeit_result

    rules = dataclasses.replace(load_ruleset("classic"), max_deals=2)
    game = Game.new(rules, 11, ["ann", "bob", "cid"])
    rng = random.Random(11)
    bys: list[str] = []
    incidents: list[dict[str, Any]] = []
    while not game.is_over:
        seat, legal = game.to_act, game.legal_actions()
        assert seat is not None
        if len(legal) == 1:
            action, by = legal[0], "forced"
        elif seat == 1:
            action, by = fallback_action(legal), "fallback"
            if len(incidents) < 3:
                strike = f"no decision; fallback {action}; strike {len(incidents) + 1} of 3"
                incidents.append({"kind": "timeout", "seat": 1, "deal": game.deal_number,
                                  "detail": strike})  # fmt: skip
                if len(incidents) == 3:
                    incidents.append({"kind": "forfeit", "seat": 1, "deal": game.deal_number,
                                      "detail": "3 strikes"})  # fmt: skip
        else:  # (never conceding: the deals are played out)
            action, by = rng.choice([a for a in legal if str(a) != "concede"]), "bot"
        game.apply(action, seat=seat)
        bys.append(by)
    rec = game.record()
    moves = iter(bys)
    for d in rec["deals"]:
        for a in d["actions"]:
            a.update(ms=0 if (by := next(moves)) != "bot" else 2, by=by)
    rules_result = rec["result"]
    rec.update(match_id="t-m00001", incidents=incidents, forfeits=[1], wrong_requests=[0] * 3,
               disconnects=[0] * 3, rules_result=rules_result,
               result=forfeit_result(rules_result, [1], rules.target))  # fmt: skip
    return rec


def _first(rec: dict[str, Any], by: str, seat: int | None = None) -> tuple[int, int]:
    return next(
        (i, j)
        for i, d in enumerate(rec["deals"])
        for j, a in enumerate(d["actions"])
        if a["by"] == by and seat in (None, a["seat"])
    )


# What the referee adds must agree with the match: `arena replay` and the web mark the
# referee's moves and explain them by the incidents (a seat's strikes in a deal, its
# fallbacks there, in order). Before round 17 `--check` passed (exit 0) every edit below.
def test_check_refuses_referee_additions_that_disagree_with_the_match(tmp_path: Path) -> None:
    rec = _forfeited()
    assert [x["kind"] for x in rec["incidents"]] == ["timeout"] * 3 + ["forfeit"]
    code, out = _check(rec, tmp_path)
    assert code == 0, out
    bot = _first(rec, "bot")
    seat0 = _first(rec, "bot", 0)
    last = len(rec["deals"]) - 1
    late = {"kind": "wrong_request", "seat": 0, "deal": 0, "detail": "late"}
    for edited, named in [
        (_edit(rec, f"deals.{bot[0]}.actions.{bot[1]}.by", "fallback"),
         f"Deal {bot[0] + 1} (record deal {bot[0]}), action {bot[1]}"),
        (_edit(rec, f"deals.{seat0[0]}.actions.{seat0[1]}.by", "forced"), "marked forced"),
        (_edit(rec, "forfeits", []), "forfeits: [], but the forfeit incidents name [1]"),
        (_edit(rec, "incidents", rec["incidents"][:3]), "forfeits: [1], but"),
        (_edit(rec, "incidents", [*rec["incidents"], late]), "wrong_requests: seat 0 counts 0"),
        (_edit(rec, "incidents.0.kind", "bogus"), "incident 0: kind 'bogus'"),
        (_edit(rec, "incidents.0.seat", 7), "incident 0 (timeout): seat 7"),
        (_edit(rec, "incidents.0.deal", last + 5), f"incident 0 (timeout): deal {last + 5}"),
        (_edit(rec, "incidents.0.seat", 0), "seat 0 has 1 strike(s) in Deal"),
        (_edit(rec, "interrupted", True), "interrupted"),
        (_edit(rec, "abandoned", True), "abandoned"),
    ]:  # fmt: skip
        code, out = _check(edited, tmp_path)
        assert code == 1 and named in out, (named, out)


def test_rules_engine_md_says_how_a_deal_is_cut_from_the_seed() -> None:
    """A replayer had only "7 cards to each active seat, first hand first" and
    `shuffled_deck`'s name: not that it returns ints, nor whether the hands are cut 7 at a
    time or dealt round by round. The docs' example now says it, and runs."""
    text = (Path(__file__).parents[2] / "docs" / "rules-engine.md").read_text(encoding="utf-8")
    block = text.split("A replayer who deals", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "docs/rules-engine.md", "exec"), {})


def test_web_md_names_every_key_of_a_deals_json() -> None:
    """docs/web.md said a step's `view` "is engine.observe's" (whose phase is a `Phase`
    and whose fields have other names and shapes) and named none of the keys a reader of
    `/api/matches/<id>/deals/<k>` gets (`phase` "DEAL_OVER", `gives` `{from, to, card}`,
    `marriages` `{seat, suit, value}`, `hand_sizes`, `result`, ...)."""
    from arena.web.replay import MatchReplay

    text = (Path(__file__).parents[2] / "docs" / "web.md").read_text(encoding="utf-8")
    doc = text.split("The JSON of `/api/matches/<id>/deals/<k>`", 1)[1].split("\n\n", 2)[1]
    rec = _refereed()
    replay = MatchReplay("t-m00000", rec)
    keys: set[str] = set()
    phases: set[str] = set()
    for seat in (None, 0):
        deal = replay.deal(0, seat)
        keys |= set(deal) | set(deal["summary"] or {})
        for step in deal["steps"]:
            keys |= set(step) | set(step["view"]) | set(step["view"].get("result") or {})
            keys |= {k for g in step["view"]["gives"] for k in g}
            keys |= {k for m in step["view"]["marriages"] for k in m}
            phases.add(step["view"]["phase"])
    missing = sorted(k for k in keys | phases if f"`{k}`" not in doc)
    assert missing == [], missing


def test_tournament_md_names_every_column_of_the_database(tmp_path: Path) -> None:
    """A reader of the database had the table names and some of their columns in words
    (`deals` (dealer, declarer, bid, contract, made, deltas)): not `record_json`, where the
    record is, nor `seats_json`, `conceded` or `scores_json`."""
    import sqlite3

    from arena.storage import Storage

    text = (Path(__file__).parents[2] / "docs" / "tournament.md").read_text(encoding="utf-8")
    doc = text.split("## Storage", 1)[1].split("\n## ", 1)[0]
    db = tmp_path / "x.sqlite"
    Storage(db).close()
    con = sqlite3.connect(db)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table.startswith("sqlite_"):
            continue
        columns = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
        assert f"{table}({', '.join(columns)})" in " ".join(doc.split()), table


def test_check_names_changed_cards_before_what_follows_from_them(tmp_path: Path) -> None:
    """A card swapped between two hands of a referee's record changes what is legal, so
    the replay refused a later action ("marked as the referee's fallback, which is play
    9♠", "9♠ is not in your hand") and `--check` said that, not the change itself: the
    cards are not the ones the seed deals. Both `--check` and the web now say it first."""
    from arena.web.replay import MatchReplay, ReplayFailed

    rec = _forfeited()
    swapped = copy.deepcopy(rec)
    hands = swapped["deals"][0]["hands"]
    hands[1][0], hands[2][0] = hands[2][0], hands[1][0]
    code, out = _check(swapped, tmp_path)
    assert code == 1 and "deal(s) 1 are not the ones seed" in out, out
    with pytest.raises(ReplayFailed, match=r"deal\(s\) 1 are not the ones seed"):
        MatchReplay("t-m00001", swapped).deal(0)


def test_the_unfinished_deal_of_an_abandoned_match_has_a_row_as_documented(
    tmp_path: Path,
) -> None:
    """tournament.md now says what an outside query of `deals` finds for the deal an
    abandoned match stopped in (a row with `[]` deltas, not counted in `matches.deals`);
    the outside reader first took every row for a scored deal."""
    import sqlite3

    from arena.storage import Storage

    game = Game.new(load_ruleset("classic"), 4, ["ann", "bob", "cid"])
    for _ in range(3):
        game.apply(fallback_action(game.legal_actions()), seat=game.to_act)
    rec = game.record()
    for a in rec["deals"][0]["actions"]:
        a.update(ms=0, by="fallback")
    everyone = [0, 1, 2]
    rec.update(
        match_id="t-m00000",
        abandoned=True,
        rules_result=None,
        forfeits=everyone,
        wrong_requests=[0] * 3,
        disconnects=[0] * 3,
        incidents=[{"kind": "forfeit", "seat": s, "deal": 0, "detail": "gone"} for s in everyone],
        result={"scores": [0, 0, 0], "places": [3, 3, 3], "shortfalls": [1000] * 3,
                "winner": None, "deals": 0, "reason": "forfeits", "forfeits": everyone},
    )  # fmt: skip
    assert read(rec)[0] == []
    db = tmp_path / "x.sqlite"
    with Storage(db) as st:
        bots = [(name, "random") for name in rec["players"]]
        st.ensure_tournament("t", name="t", fingerprint="fp", config={}, total_matches=1,
                             bots=bots)  # fmt: skip
        st.save_match("t", match_id="t-m00000", index=0, table=0, set_no=0, seed=4,
                      seats=tuple(rec["players"]), record=rec, started_at=1.0,
                      finished_at=2.0)  # fmt: skip
    text = (Path(__file__).parents[2] / "docs" / "tournament.md").read_text(encoding="utf-8")
    assert "the deal an abandoned match stopped in has a row too" in " ".join(text.split())
    con = sqlite3.connect(db)
    assert con.execute("SELECT deals FROM matches").fetchall() == [(0,)]
    # storing a match writes no rating (docs: `arena serve --db` leaves `ratings` empty)
    assert "storing a match writes none" in " ".join(text.split())
    assert con.execute("SELECT COUNT(*) FROM ratings").fetchone() == (0,)
    assert con.execute("SELECT number, deltas_json, scores_json FROM deals").fetchall() == [
        (0, "[]", "[]")
    ]
