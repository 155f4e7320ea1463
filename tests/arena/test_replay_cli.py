"""``arena replay`` of what the referee adds to a record (forfeits, incidents, an interrupted
or abandoned match) and of a match id looked up in the newest database (arena/cli/replay.py,
arena/render.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.web.demo import make_demo_db
from engine import PRESETS, Game
from engine.record import forfeit_result

NAMES = ["ann", "bob", "cid"]


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["replay", *args])


def _finished(max_deals: int = 3) -> Game:
    """A finished match with a single winner (who, forfeiting, would fall to last place)."""
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=max_deals)
    for seed in range(200):
        g = Game.new(ruleset, seed, NAMES)
        rng = random.Random(seed)
        while not g.is_over:
            g.apply_trusted(rng.choice(g.legal_actions()))
        assert g.result is not None
        if g.result.winner is not None:
            return g
    raise AssertionError("no seed gives a single winner")


def _unfinished(deals: int = 2) -> Game:
    """A match stopped in its ``deals``-th deal (numbered from 1), a few actions in."""
    g = Game.new("classic", 11, NAMES)
    rng = random.Random(11)
    while g.deal_number < deals - 1 or len(g.actions) < 4:
        g.apply_trusted(rng.choice(g.legal_actions()))
    return g


def _forfeit_record() -> tuple[dict[str, Any], int]:
    """The referee's record of a match whose rules winner forfeited (3 timeouts in the
    record's deal 1), with an answer to no pending request and disconnects besides."""
    g = _finished()
    rec = g.record()
    winner = g.result.winner if g.result is not None else None
    assert winner is not None
    other = (winner + 1) % 3
    rules = rec["result"]
    rec.update(
        match_id="t-m00001",
        rules_result=dict(rules),
        result=forfeit_result(rules, [winner], g.ruleset.target),
        forfeits=[winner],
        incidents=[
            *[{"kind": "timeout", "seat": winner, "deal": 1, "detail": "no decision"}] * 3,
            {"kind": "wrong_request", "seat": winner, "deal": 1, "detail": "late"},
            {"kind": "forfeit", "seat": winner, "deal": 1, "detail": "3 strikes"},
            {"kind": "disconnect", "seat": other, "deal": 0, "detail": "stream closed"},
        ],
        # only the first 20 of each are in "incidents": the totals count them all
        wrong_requests=[25 if s == winner else 0 for s in range(3)],
        disconnects=[2 if s == other else 0 for s in range(3)],
    )
    return rec, winner


def test_a_forfeit_is_explained_under_the_standings(tmp_path: Path) -> None:
    """Defect: the standings of a match with a forfeit (the forfeiter placed last) came
    with no word of the forfeit, while ``--check`` printed the rules' result (the
    forfeiter first): a reader could not tell why they differ."""
    rec, winner = _forfeit_record()
    name, other = NAMES[winner], NAMES[(winner + 1) % 3]
    path = tmp_path / "forfeit.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    shown = _run(str(path))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())  # rich wraps long lines
    standings = text[text.index("Final standings") :]
    assert f"3 │ {name} ({winner})" in standings  # the referee's: the forfeiter last
    assert (
        f"forfeits applied: {name} ({winner}) forfeited and placed last; the rules alone "
        f"would give 1. {name} ({winner}) {rec['rules_result']['scores'][winner]}," in standings
    ), standings
    assert "Incidents (strikes: timeouts, illegal and malformed answers; not strikes: " in (
        standings
    )
    assert (
        f"{name} ({winner}): forfeited in deal 2 (3 strikes); strikes: 3 timeouts; "
        "not strikes: 25 wrong_requests" in standings
    ), standings
    assert f"{other} ({(winner + 1) % 3}): not strikes: 2 disconnects" in standings
    checked = _run("--check", str(path))
    assert checked.exit_code == 0, checked.output
    assert f"  1. {name}:" in checked.stdout  # the rules' result...
    assert f"forfeited: {name} (the record's result, checked too, places them last)" in (
        checked.stdout
    )


def test_a_referees_record_without_incidents_says_none(tmp_path: Path) -> None:
    rec = _finished().record()
    rec.update(incidents=[], forfeits=[], wrong_requests=[0] * 3, disconnects=[0] * 3)
    path = tmp_path / "clean.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    shown = _run(str(path))
    assert shown.exit_code == 0 and "Incidents: none" in shown.stdout, shown.output
    assert "forfeits applied" not in shown.stdout
    # an engine's own record (no referee watched it): nothing is said of incidents
    path.write_text(json.dumps(_finished().record()), encoding="utf-8")
    assert "Incidents" not in _run(str(path)).stdout


def test_an_interrupted_match_says_so(tmp_path: Path) -> None:
    """A referee's ``.jsonl`` that ends with its ``interrupted`` line (a shutdown) rather
    than ``end``: the match is shown as far as it went, and a line says it was cut."""
    rec = _unfinished(deals=2).record()
    rec.update(match_id="m", incidents=[], forfeits=[], interrupted=True)
    lines = [{"type": "start", "match_id": "m"}, {"type": "interrupted", "record": rec}]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    shown = _run(str(path))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "interrupted in deal 2: the referee was stopped (a shutdown) before the match" in text
    assert "Final standings" not in text


def test_an_abandoned_match_says_so(tmp_path: Path) -> None:
    g = _unfinished(deals=2)
    rec = g.record()
    scores = list(g.scores)
    rec.update(
        match_id="m",
        abandoned=True,
        rules_result=None,
        forfeits=[0, 1, 2],
        result={"scores": scores, "places": [3, 3, 3],
                "shortfalls": [1000 - s for s in scores], "winner": None,
                "deals": g.deal_number, "reason": "forfeits", "forfeits": [0, 1, 2]},
        incidents=[{"kind": "forfeit", "seat": s, "deal": 1, "detail": "disconnected for "
                    "more than 5 s"} for s in range(3)],
    )  # fmt: skip
    path = tmp_path / "abandoned.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    shown = _run(str(path))
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "Standings when the match stopped" in text
    assert "abandoned in deal 2: every seat forfeited" in text
    assert "ann (0): forfeited in deal 2 (disconnected for more than 5 s)" in text


def test_a_match_id_names_the_database_it_is_read_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: ``arena replay MATCH_ID`` without ``--db`` silently read the newest
    ``runs/*.sqlite``; like ``arena leaderboard``, it now says which (on stderr)."""
    monkeypatch.chdir(tmp_path)
    old, new = Path("runs/old.sqlite"), Path("runs/new.sqlite")
    make_demo_db(old, matches=2, max_deals=2)
    make_demo_db(new, matches=2, max_deals=2)
    os.utime(old, (1_000_000_000, 1_000_000_000))
    shown = _run("m0001")
    assert shown.exit_code == 0, shown.output
    told = f"reading {new} (the newest runs/*.sqlite; --db to choose)"
    assert told in shown.stderr and "reading" not in shown.stdout
    assert "Deal 1 — dealer" in shown.stdout and "Deal 0" not in shown.stdout
    checked = _run("--check", "m0001")
    assert checked.exit_code == 0 and told in checked.stderr, checked.output
    # named: nothing to say
    assert "reading" not in _run("m0001", "--db", str(old)).stderr
    # a record file needs no database
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(_finished().record()), encoding="utf-8")
    assert "reading" not in _run(str(path)).stderr
