"""Replay audit, round 2: what ``arena replay`` and the web replay show of a match against
the rules engine's own replay of its record (arena/render.py, arena/web/replay.py).

Each defect test says what was shown and what happened; the cross-check at the end asserts
real facts (trick cards in order, trick winners, deal deltas and scores) of a handful of
random matches per preset in the terminal output and the web API's JSON.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from arena.cli import main
from arena.render import render_record
from arena.storage import Storage
from arena.web import MatchReplay
from engine import (
    PRESETS,
    Concede,
    Contract,
    DealResult,
    Game,
    Pass,
    Phase,
    Play,
    ReplayError,
    ThrowIn,
    replay,
)
from engine.record import load_ruleset_value
from tests.support.harness import web_server

NAMES = ["ann", "bob", "cid"]


def _text(rec: dict[str, Any]) -> str:
    console = Console(record=True, width=250)
    console.print(render_record(rec))
    return console.export_text()


def _declared_lead_then_stopped(preset: str, seed: int) -> Game:
    """A match stopped just after a lead that declared a marriage (an interrupted match)."""
    g = Game.new(preset, seed, ["ann", "bob", "cid"])
    rng = random.Random(seed)
    while not g.is_over:
        legal = g.legal_actions()
        declare = [a for a in legal if isinstance(a, Play) and a.declare and a.card.rank != 5]
        if declare and g.phase is Phase.PLAYING:
            g.apply_trusted(declare[0])
            return g
        g.apply_trusted(rng.choice(legal))
    raise AssertionError("no marriage declared")


def test_a_marriage_declared_in_the_unfinished_trick_is_shown() -> None:
    """Defect: the record of an interrupted match that stopped after a lead declaring a
    marriage (``play Q♠ declare``) showed the unfinished trick as ``bob Q♠`` with trump ♠,
    and nowhere that bob had declared the ♠ marriage (+40): the declaration was only
    written on the row of a finished trick. The engine's replay has the marriage (and the
    web replay shows it)."""
    for seed in range(40):
        g = _declared_lead_then_stopped("classic", seed)
        (seat, suit) = g.marriages[-1]
        assert g.trick and g.trick[0][0] == seat  # the declaring lead, and nothing more
        rec = g.record()
        rec["interrupted"] = True
        text = _text(rec)
        row = next(ln for ln in text.splitlines() if "(unfinished)" in ln)
        name = rec["players"][seat]
        assert f"{name} declares the {suit} marriage" in row, row
        assert re.search(rf"│ {suit}\s+│ \(unfinished\)", row), row
        assert text.count("declares the") == len([m for d in _marriages_of(rec) for m in d]), text
        return
    raise AssertionError("no seed stops on a declaring lead")


def _marriages_of(rec: dict[str, Any]) -> list[list[str]]:
    """The declaring plays of each deal of a record."""
    return [[a["action"] for a in d["actions"] if a["action"].endswith("declare")]
            for d in rec["deals"]]  # fmt: skip


def _conceded_deal_with_changed_cards() -> tuple[dict[str, Any], dict[str, Any]]:
    """A referee's record (it has a ``match_id``) of a deal conceded before any card was
    played, and the same record with a card swapped between the two defenders' dealt
    hands: the actions still replay (nobody played a card), the cards are not the seed's."""
    for seed in range(100):
        g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=1), seed, NAMES)
        while not g.is_over:
            legal = g.legal_actions()
            g.apply_trusted(next((a for a in legal if isinstance(a, Concede | Pass)), legal[0]))
        rec = g.record()
        rec.update(match_id="t-m00001", incidents=[], forfeits=[])
        declarer = next(a["seat"] for a in rec["deals"][0]["actions"] if a["action"] == "concede")
        one, two = (s for s in range(3) if s != declarer)
        changed = copy.deepcopy(rec)
        hands = changed["deals"][0]["hands"]
        hands[one][0], hands[two][0] = hands[two][0], hands[one][0]
        try:
            replay(changed)
        except ReplayError:
            continue  # (a bid over the marriages the changed hand holds)
        return rec, changed
    raise AssertionError("no seed")


def test_the_web_replay_refuses_a_record_whose_cards_were_changed(tmp_path: Path) -> None:
    """Defect: a stored referee's record whose dealt cards are not the ones its seed deals
    (the referee deals every match it records from its seed: the record was changed) was
    refused by ``arena replay`` (exit 1: "the record was changed") and drawn by the web
    viewer, whose API served the changed hands as the match's (200). It is now a 500
    naming the deal, as a stored record that does not replay is."""
    honest, changed = _conceded_deal_with_changed_cards()
    path = tmp_path / "r.json"
    path.write_text(json.dumps(changed, ensure_ascii=False), encoding="utf-8")
    shown = CliRunner().invoke(main, ["replay", str(path)])
    assert shown.exit_code == 1 and "the record was changed" in shown.output
    db = tmp_path / "t.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("t", name="t", fingerprint="t", config={}, total_matches=2,
                             bots=[(n, "") for n in NAMES])  # fmt: skip
        for k, rec in enumerate((honest, changed)):
            mid = f"t-m0000{k + 1}"
            st.save_match("t", match_id=mid, index=k, table=0, set_no=0, seed=rec["seed"],
                          seats=NAMES, record={**rec, "match_id": mid},
                          started_at=1.0, finished_at=2.0)  # fmt: skip
    with web_server(db) as server:
        assert (
            _get(server.url, "/api/matches/t-m00001/deals/0")["steps"][0]["view"]["hands"]
            == (honest["deals"][0]["hands"])
        )
        for path in ("/api/matches/t-m00002", "/api/matches/t-m00002/deals/0"):
            try:
                urllib.request.urlopen(server.url + path.lstrip("/"), timeout=10)
            except urllib.error.HTTPError as e:
                body = json.loads(e.read().decode())
                assert e.code == 500, body
                assert "deal(s) 1 are not the ones seed" in body["error"], body
                assert "the record was changed" in body["error"], body
            else:
                raise AssertionError(f"{path}: the changed record was served")


def test_the_position_a_match_started_from_is_shown() -> None:
    """Defect: a record's ``start`` (a match begun from scores and barrel counters other
    than zero, ``Game.new(..., scores=, barrel=)``) was shown by the web replay (the scores
    and "barrel 2" at deal 1, step 0) and nowhere by ``arena replay``: its first deal's
    "scores 880, ..." after deltas of +20 read as a sum that did not add up, and a seat
    on the barrel from the start was not said to be on it."""
    rules = dataclasses.replace(PRESETS["classic"], barrel_mode="one", max_deals=1)
    g = Game.new(rules, 4, NAMES, scores=[860, 880, 780], barrel=[0, 2, 0])
    rng = random.Random(4)
    while not g.is_over:
        g.apply_trusted(rng.choice(g.legal_actions()))
    rec = g.record()
    assert rec["start"] == {"scores": [860, 880, 780], "barrel": [0, 2, 0]}
    text = _text(rec)
    line = (
        "Started from ann (0) 860, bob (1) 880, cid (2) 780; on the barrel: bob (1), 2 deals left"
    )
    assert line in text, text
    assert text.index(line) < text.index("Deal 1 —")
    view = MatchReplay("t-m1", rec).deal(0)["steps"][0]["view"]
    assert (view["scores"], view["barrel"]) == ([860, 880, 780], [0, 2, 0])
    # a match from zero has no such line
    assert "Started from" not in _text(Game.new("classic", 4, NAMES).record())


def test_the_web_summary_of_the_deal_a_record_stops_in_names_who_took_the_talon() -> None:
    """Defect: the API's summary of the deal an interrupted (or abandoned) record stops in
    gave ``declarer`` and ``bid`` null when the record stopped after the auction and before
    the declarer's first give, while its own last step (the engine's view) had the talon
    taken: ``declarer`` 1, ``bid`` 40; docs/web.md: ``bid`` is "what the talon was taken
    at, null before". The summary read the declarer from the record's gives alone."""
    for preset in ("classic", "1001", "1001-4p"):
        names = ["ann", "bob", "cid", "dan"][: 4 if preset == "1001-4p" else 3]
        g = Game.new(preset, 3, names)
        while g.phase is Phase.BIDDING:
            legal = g.legal_actions()
            g.apply_trusted(next((a for a in legal if isinstance(a, Pass)), legal[0]))
        assert g.declarer is not None and g.bid is not None
        rec = g.record()
        rec["interrupted"] = True
        replay_ = MatchReplay("t-m1", rec)
        summary = replay_.summary["deals"][0]
        last = replay_.deal(0)["steps"][-1]["view"]
        assert (last["declarer"], last["bid"]) == (g.declarer, g.bid)
        assert summary["outcome"] == "unfinished"
        assert (summary["declarer"], summary["bid"], summary["contract"]) == (
            g.declarer, g.bid, None), (preset, summary)  # fmt: skip
        # in the auction still: nobody has taken the talon
        rec["deals"][0]["actions"] = rec["deals"][0]["actions"][:1]
        summary = MatchReplay("t-m1", rec).summary["deals"][0]
        assert (summary["declarer"], summary["bid"]) == (None, None), (preset, summary)


# --- the cross-check: the terminal and the web API against the engine ------------------

#: (preset or ruleset, seeds): every preset, and the barrel (from a start near it).
_CASES: list[tuple[str, Any, dict[str, Any]]] = [
    ("classic", "classic", {}),
    ("1001", "1001", {}),
    ("1001-4p", "1001-4p", {}),
    ("barrel-one", {"preset": "classic", "barrel_mode": "one"}, {"scores": [860, 840, 700]}),
]


def _random_match(rules: Any, seed: int, start: dict[str, Any]) -> dict[str, Any]:
    """A referee-like record of a short random match that declares its marriages and
    concedes or throws in now and then."""
    ruleset = load_ruleset_value(rules, 4 if rules == "1001-4p" else 3)
    ruleset = dataclasses.replace(ruleset, max_deals=4)
    names = ["ann", "bob", "cid", "dan"][: ruleset.players]
    g = Game.new(ruleset, seed, names, **start)
    rng = random.Random(seed)
    while not g.is_over:
        legal = g.legal_actions()
        pick = [a for a in legal if isinstance(a, Play) and a.declare]
        pick = pick or [a for a in legal if isinstance(a, Concede | ThrowIn) and rng.random() < 0.2]
        pick = pick or sorted((a for a in legal if isinstance(a, Contract)), key=lambda a: a.amount)
        pick = pick or [a for a in legal if isinstance(a, Pass) and rng.random() < 0.7]
        g.apply_trusted(pick[0] if pick else rng.choice(legal))
    rec = g.record()
    for d in rec["deals"]:
        for a in d["actions"]:
            a.update(by="bot", ms=1)
    rec.update(match_id=f"audit-m{seed:05d}", incidents=[], forfeits=[])
    return rec


def _engine_truth(
    rec: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> list[tuple[list[Any], DealResult]]:
    """Per deal, its tricks ``(leader, ((seat, card), ...), winner)`` and its result, as the
    engine has them when it scores the deal (its own replay of the record's actions)."""
    seen: list[Any] = []
    score = Game._score

    def spy(self: Game, outcome: str) -> None:
        seen.append(self.tricks)
        score(self, outcome)

    monkeypatch.setattr(Game, "_score", spy)
    game = replay(rec)
    monkeypatch.undo()
    return list(zip(seen, game.deal_results, strict=True))


def test_the_terminal_and_the_web_api_show_the_engines_tricks_and_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every trick's cards in play order and its winner, and every deal's deltas and
    scores, in ``arena replay``'s output and in the web API's JSON, are the engine's own
    (and ``arena replay --check`` accepts the record)."""
    db = tmp_path / "t.sqlite"
    records = []
    with Storage(db) as st:
        st.ensure_tournament("audit", name="audit", fingerprint="a", config={},
                             total_matches=99, bots=[])  # fmt: skip
        k = 0
        for _, rules, start in _CASES:
            for seed in range(3):
                rec = _random_match(rules, seed, start)
                rec["match_id"] = f"audit-m{k:05d}"
                st.save_match("audit", match_id=rec["match_id"], index=k, table=0, set_no=0,
                              seed=seed, seats=rec["players"], record=rec,
                              started_at=1.0, finished_at=2.0)  # fmt: skip
                records.append(rec)
                k += 1
    seen: set[str] = set()
    with web_server(db) as server:
        for rec in records:
            truth = _engine_truth(rec, monkeypatch)
            players = rec["players"]
            path = tmp_path / "r.json"
            path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
            checked = CliRunner().invoke(main, ["replay", "--check", str(path)])
            assert checked.exit_code == 0, checked.output
            shown = CliRunner().invoke(main, ["replay", str(path)], env={"COLUMNS": "250"})
            assert shown.exit_code == 0, shown.output
            blocks = re.split(r"^(?=Deal \d+ — )", shown.stdout, flags=re.M)[1:]
            summary = _get(server.url, f"/api/matches/{rec['match_id']}")
            assert len(blocks) == len(truth) == len(summary["deals"])
            for i, (tricks, res) in enumerate(truth):
                # the terminal: a row per trick, then the deal's result line
                rows = re.findall(r"^│\s*(\d+) │ (.*?) │ \S+\s*│ (\S+)\s*│$", blocks[i], re.M)
                assert len(rows) == len(tricks), blocks[i]
                for (num, cells, winner), t in zip(rows, tricks, strict=True):
                    cards = " ".join(f"{players[s]} {c}" for s, c in t.cards)
                    assert " ".join(cells.split("  (")[0].split()) == cards, (num, cells)
                    assert winner == players[t.winner], (num, cells)
                deltas = ", ".join(f"{players[s]} {res.deltas[s]:+d}" for s in range(len(players)))
                scores = ", ".join(map(str, res.scores))
                scores = re.escape(scores)
                said = res.outcome.replace("_", " ")  # (a person reads "thrown in")
                line = rf"^{said}\b.*  deltas {re.escape(deltas)}  scores {scores}\s*$"
                assert re.search(line, blocks[i], re.M), blocks[i]
                # the web API: the deal's summary and its last step
                ds = summary["deals"][i]
                assert (ds["outcome"], ds["deltas"], ds["scores"]) == (
                    res.outcome, list(res.deltas), list(res.scores))  # fmt: skip
                deal = _get(server.url, f"/api/matches/{rec['match_id']}/deals/{i}")
                last = deal["steps"][-1]["view"]
                assert [(t["leader"], [(c["seat"], c["card"]) for c in t["cards"]], t["winner"])
                        for t in last["tricks"]] == [
                    (t.leader, [(s, str(c)) for s, c in t.cards], t.winner) for t in tricks
                ]  # fmt: skip
                assert last["result"]["deltas"] == list(res.deltas)
                assert last["result"]["scores"] == last["scores"] == list(res.scores)
                assert last["result"]["outcome"] == res.outcome
                assert last["result"]["events"] == list(res.events)
                seen.update([res.outcome, *(["barrel event"] if res.events else [])])
                seen.update(["marriage"] if any("declares the" in r[1] for r in rows) else [])
    # what the records held (a cross-check of nothing would pass too)
    assert {"made", "failed", "conceded", "barrel event", "marriage"} <= seen, seen


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path.lstrip("/"), timeout=10) as r:
        return json.loads(r.read().decode())
