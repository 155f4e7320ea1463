"""Replay audit, round 35: real tournaments' records against the engine, `arena replay`
(with and without ``--check``) and the web replay; matches that ended abnormally; edited
records (arena/render.py, arena/cli/replay.py, engine/record.py).

The defect tests say what was shown before the fix. The cross-check plays small real
tournaments (bot processes, the referee, SQLite) and, for every stored match, rebuilds each
deal with the engine step by step (tricks judged here, by the rule book, not by the
engine's ``trick_winner``) and finds the same bidding, talon, passes, contract, tricks in
order with their winners, marriages with their value and deal scores in the text of
`arena replay` and in the web replay's JSON, with the database's other rows deleted.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.storage import Storage
from arena.web import MatchReplay
from arena.web.replay import ReplayFailed
from engine import (
    PRESETS,
    Game,
    Phase,
    Play,
    ReplayError,
    fallback_action,
    parse_action,
    replay,
)
from engine.cards import ACE_MARRIAGE_VALUE, Rank
from engine.record import start_game

NAMES = ["ann", "bob", "cid"]


def _run(*args: str) -> Result:
    r = CliRunner().invoke(main, ["replay", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    return r


def _write(tmp_path: Path, rec: dict[str, Any], name: str = "rec.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _random_match(seed: int, deals: int = 3, preset: str = "classic") -> Game:
    g = Game.new(PRESETS[preset], seed, NAMES if preset != "1001-4p" else [*NAMES, "dan"])
    rng = random.Random(seed)
    while not g.is_over and g.deal_number < deals:
        g.apply_trusted(rng.choice(g.legal_actions()))
    return g


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------ records cut across deals


def test_an_action_moved_into_the_deal_before_is_refused_there_not_drawn_in_it(
    tmp_path: Path,
) -> None:
    """Defect: a record whose next deal's first action (a bid) was moved to the end of the
    deal before was shown by `arena replay` with that bid in the finished deal's auction
    (``Bidding: ..., bob: pass, cid: bid 120``) and the next deal drawn without it
    (``cid (2) takes the talon at 120 (his obligatory bid: the others passed)``: a bid
    nobody made there), then an error on stderr. `--check` refuses the action ("the deal
    was already over"); the display now stops there and says so."""
    rec = _random_match(5).record()
    moved = copy.deepcopy(rec)
    first = moved["deals"][1]["actions"].pop(0)
    moved["deals"][0]["actions"].append(first)
    j = len(moved["deals"][0]["actions"]) - 1
    path = _write(tmp_path, moved)
    check = _run("--check", path)
    assert check.exit_code == 1 and f"Deal 1 (record deal 0), action {j}" in check.output, (
        check.output
    )
    shown = _run(path)
    assert shown.exit_code == 1, shown.output
    text = _flat(shown.stdout)
    said = f"refused: Deal 1 (record deal 0), action {j} (seat {first['seat']}: {first['action']})"
    assert f"{said}: the deal was already over" in text, text
    bidding = next(ln for ln in shown.stdout.splitlines() if ln.startswith("Bidding:"))
    spoken = [a for a in rec["deals"][0]["actions"] if a["action"].split()[0] in ("bid", "pass")]
    assert bidding.count(", ") == len(spoken), bidding  # its own bids after the obligatory one
    assert "Deal 2 —" not in text  # nothing drawn past the refused action


def test_a_scored_deal_whose_last_action_was_moved_on_is_refused_at_its_end(
    tmp_path: Path,
) -> None:
    """Defect: a record whose deal's last card was moved into the next deal (or dropped)
    was shown by `arena replay` with "Deal 2 — dealer ..." drawn from the game still in
    deal 1: deal 1's hands and dealer again, its obligatory bid, and deal 1's last trick
    completed in deal 2's table; then "refused" at the next deal's first bid ("it is seat
    0's turn"), far from the change. `--check` says "deal 0: the record scores the deal
    but its actions do not finish it"; the display now says that under deal 1."""
    rec = next(r for r in (_random_match(seed).record() for seed in range(7, 60))
               if r["deals"][0]["actions"][-1]["action"].startswith("play"))  # fmt: skip
    for how in ("moved", "dropped"):
        edited = copy.deepcopy(rec)
        last = edited["deals"][0]["actions"].pop()
        if how == "moved":
            edited["deals"][1]["actions"].insert(0, last)
        path = _write(tmp_path, edited, f"{how}.json")
        check = _run("--check", path)
        assert check.exit_code == 1, check.output
        assert (
            "Deal 1 (record deal 0): the record scores the deal but its actions do not finish it"
            in (check.output)
        )
        shown = _run(path)
        assert shown.exit_code == 1, shown.output
        text = _flat(shown.stdout)
        assert (
            "refused: Deal 1 (record deal 0): the record scores the deal but its actions "
            "do not finish it"
        ) in text, text
        assert "Deal 2 —" not in text, text
        assert "(unfinished)" in text  # the trick the record leaves open is shown as such


def test_a_deal_after_one_left_unfinished_is_not_drawn_from_the_deal_before(
    tmp_path: Path,
) -> None:
    """Defect: a record whose deal 1 stops short of its end without being scored (no
    deltas: as the last deal of an interrupted match) and is followed by deal 2 was shown
    with "Deal 2 — dealer <deal 1's dealer>" and deal 1's cards. It is refused there now."""
    rec = _random_match(11).record()
    edited = copy.deepcopy(rec)
    d0 = edited["deals"][0]
    del d0["actions"][-1], d0["deltas"], d0["scores"], d0["outcome"]
    path = _write(tmp_path, edited)
    assert _run("--check", path).exit_code == 1
    shown = _run(path)
    assert shown.exit_code == 1, shown.output
    text = _flat(shown.stdout)
    assert "refused: Deal 2 (record deal 1): the deal before it is not over" in text, text
    assert text.count("— dealer") == 1, text


def test_two_deals_swapped_or_renumbered_are_refused_by_their_numbers(tmp_path: Path) -> None:
    """Defects: a referee's record with two deals swapped was refused by `--check` as
    "deal 0: numbered 1, expected 0", but `arena replay` drew deal 0's cards and refused
    the other deal's first bid on them ("it is seat 2's turn"); and a deal renumbered 5
    was refused by `--check` (and the web) as holding "the hands and talon of deal(s) 5
    ... not the ones seed ... deals", a deal the match never reached. Both now name the
    number, in both modes."""
    rec = _random_match(5).record()
    rec.update(match_id="t-m00003", incidents=[], forfeits=[])
    swapped = copy.deepcopy(rec)
    swapped["deals"][0], swapped["deals"][1] = swapped["deals"][1], swapped["deals"][0]
    renumbered = copy.deepcopy(rec)
    renumbered["deals"][1]["number"] = 5
    for edited, k, number in ((swapped, 0, 1), (renumbered, 1, 5)):
        path = _write(tmp_path, edited)
        check = _run("--check", path)
        assert check.exit_code == 1, check.output
        assert (
            f"REFUSED: Deal {k + 1} (record deal {k}): numbered {number}, expected {k}"
            in check.output
        )
        assert "not the ones seed" not in check.output, check.output
        shown = _run(path)
        assert shown.exit_code == 1, shown.output
        said = f"refused: Deal {k + 1} (record deal {k}): numbered {number}, expected {k}"
        assert said in _flat(shown.stdout), shown.output
        assert "not the ones seed" not in shown.output, shown.output
        assert f"Deal {k + 1} —" not in shown.stdout
        with pytest.raises(
            ReplayFailed,
            match=rf"Deal {k + 1} \(record deal {k}\): numbered {number}, expected {k}",
        ):
            MatchReplay("t-m00003", edited)


# ------------------------------------------------------------------ --check of unended matches


def _abandoned(tmp_path: Path) -> str:
    g = _random_match(3, deals=1)
    for _ in range(4):
        g.apply_trusted(fallback_action(g.legal_actions()))
    rec = g.record()
    scores = list(g.scores)
    rec.update(
        match_id="t-m00001", abandoned=True, rules_result=None, forfeits=[1, 0, 2],
        result={"scores": scores, "places": [3, 3, 3], "shortfalls": [1000 - s for s in scores],
                "winner": None, "deals": 1, "reason": "forfeits", "forfeits": [1, 0, 2]},
        incidents=[{"kind": "forfeit", "seat": s, "deal": 1, "detail": "3 strikes"}
                   for s in (1, 0, 2)],
    )  # fmt: skip
    return _write(tmp_path, rec, "abandoned.json")


def test_check_says_an_abandoned_match_was_abandoned_and_by_whom(tmp_path: Path) -> None:
    """Defect: `arena replay --check` of a match every seat forfeited said only "match not
    finished; scores [...]", as of a record merely cut short, and named no forfeit (it
    names them for a finished match: "forfeited: ann (...)"); `arena replay` says
    "abandoned in deal 2: every seat forfeited". It says both now, its deal counted from 1
    as its deal lines are (from 0 until round 44)."""
    path = _abandoned(tmp_path)
    r = _run("--check", path)
    assert r.exit_code == 0, r.output
    assert "match not finished; scores" in r.output
    assert (
        "abandoned in deal 2: every seat forfeited (bob, ann, cid); the record's result, "
        "checked too, places them all last"
    ) in r.output, r.output
    assert "OK: every action is legal" in r.output


def test_check_says_an_interrupted_match_was_interrupted(tmp_path: Path) -> None:
    """The same for a referee's `interrupted` line (a shutdown): "match not finished" alone
    did not say that the referee stopped it."""
    g = _random_match(4, deals=2)
    g.apply_trusted(g.legal_actions()[0])
    rec = g.record()
    rec.update(match_id="t-m00002", incidents=[], forfeits=[], interrupted=True)
    lines = [{"type": "start", "match_id": "t-m00002"}, {"type": "interrupted", "record": rec}]
    path = tmp_path / "t-m00002.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = _run("--check", str(path))
    assert r.exit_code == 0, r.output
    assert "interrupted in deal 3: the referee was stopped before the match ended" in r.output


# ------------------------------------------------------------------ an edited ruleset


def test_check_names_the_rule_an_edited_ruleset_breaks_not_the_fallback(tmp_path: Path) -> None:
    """Defect: a referee's record whose ruleset was edited (classic with ``must_beat``
    turned on) was refused by `--check` at a fallback move as "marked as the referee's
    fallback, which is play A♥", while the move is not legal at all under the edited
    rules, and `arena replay` said so ("must_beat: you must beat the trick"). The rules'
    refusal comes first now, with the rule broken."""
    for seed in range(60):
        g = Game.new(PRESETS["classic"], seed, NAMES)
        strict = Game.new(dataclasses.replace(PRESETS["classic"], must_beat=True), seed, NAMES)
        found = None
        while not g.is_over and found is None:
            action = fallback_action(g.legal_actions())
            if action not in strict.legal_actions():
                found = (g.deal_number, len(g.actions))
            else:
                strict.apply_trusted(action)
            g.apply_trusted(action)
        if found is None:
            continue
        rec = g.record()
        deal, j = found
        rec["deals"][deal]["actions"][j]["by"] = "fallback"  # (the referee's move, truly)
        replay(rec)  # genuine as written
        rec["ruleset"]["must_beat"] = True
        path = _write(tmp_path, rec)
        r = _run("--check", path)
        assert r.exit_code == 1, r.output
        assert (
            f"Deal {deal + 1} (record deal {deal}), action {j}" in r.output
            and "refused: illegal action" in r.output
        )
        assert "rule broken: must_beat" in r.output, r.output
        assert "marked as the referee's fallback" not in r.output
        return
    raise AssertionError("no seed whose fallback play breaks must_beat")


def test_check_still_names_a_legal_move_that_is_not_the_fallback() -> None:
    """Pinned with the fix above: a legal move marked as the referee's that is not its
    fallback is still refused as such."""
    g = Game.new(PRESETS["classic"], 2, NAMES)
    while True:
        legal = g.legal_actions()
        if len(legal) > 1 and g.phase is Phase.PLAYING:
            other = next(a for a in legal if a != fallback_action(legal))
            g.apply_trusted(other)
            break
        g.apply_trusted(legal[0])
    rec = g.record()
    rec["deals"][0]["actions"][-1]["by"] = "fallback"
    try:
        replay(rec)
    except ReplayError as e:
        assert "marked as the referee's fallback, which is" in str(e), e
    else:
        raise AssertionError("accepted")


# ------------------------------------------------------------------ real tournaments


_ORDER = {Rank.NINE: 0, Rank.JACK: 1, Rank.QUEEN: 2, Rank.KING: 3, Rank.TEN: 4, Rank.ACE: 5}

_BOTS = '''
import os
import random
import time

from engine import Concede, Pass, Play, ThrowIn
from sdk import Bot

if os.environ.get("QUIT_NOW") and os.path.exists(os.environ["QUIT_NOW"]):
    time.sleep(600)  # (the quitter restarted: it never connects again)


class Giver(Bot):
    """Throws in, concedes or passes whenever it may; else plays at random."""

    def __init__(self):
        super().__init__()
        self.rng = random.Random(3)

    def act(self, view):
        for kind in (ThrowIn, Concede, Pass):
            for a in view.legal_actions:
                if isinstance(a, kind):
                    return a
        return self.rng.choice(view.legal_actions)


class Sleeper(Bot):
    """Plays at random, and from its 8th card on past every deadline (of ``nap`` s less)."""

    nap = 0.4

    def __init__(self):
        super().__init__()
        self.rng = random.Random(1)
        self.plays = 0

    def act(self, view):
        if any(isinstance(a, Play) for a in view.legal_actions):
            self.plays += 1
            if self.plays >= 8:
                time.sleep(self.nap)
        return self.rng.choice(view.legal_actions)


class LongSleeper(Sleeper):
    """A Sleeper past a deadline of a second: beside it, bots that answer at once never
    time out three times in a match, even on a loaded machine."""

    nap = 1.5


class Quitter(Bot):
    """Plays at random; its process exits at its 12th decision (with QUIT_NOW set, a file
    to mark it): the tournament restarts it, and the restarted process, finding the mark,
    never connects, so the quitter stays gone past any grace (one back within the grace,
    its stalls excused on a loaded machine, forfeited nothing)."""

    def __init__(self):
        super().__init__()
        self.rng = random.Random(2)
        self.n = 0

    def act(self, view):
        self.n += 1
        if self.n >= 12 and os.environ.get("QUIT_NOW"):
            open(os.environ["QUIT_NOW"], "w").close()
            os._exit(0)
        return self.rng.choice(view.legal_actions)
'''


def _winner(cards: list[Any], trump: Any) -> int:
    """The rule book's trick winner: the highest trump, else the highest of the led suit."""
    best = 0
    for i, c in enumerate(cards[1:], 1):
        b = cards[best]
        if (c.suit == b.suit and _ORDER[c.rank] > _ORDER[b.rank]) or (
            c.suit != b.suit and c.suit == trump
        ):
            best = i
    return best


def _truth(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """Per deal, stepping the engine: talon, bids, gives, contract, tricks, marriages."""
    g = start_game(rec)
    out = []
    for d in rec["deals"]:
        t: dict[str, Any] = {"talon": [str(c) for c in g.talon], "bids": [], "gives": [],
                             "contract": None, "tricks": [], "marriages": [],
                             "result": None}  # fmt: skip
        trick: list[tuple[int, Any]] = []
        trump = None
        number = g.deal_number
        for a in d["actions"]:
            act, seat = parse_action(a["action"]), a["seat"]
            if g.phase is Phase.BIDDING:
                t["bids"].append((seat, a["action"]))
            elif a["action"].startswith("give"):
                t["gives"].append((seat, a["action"]))
            elif a["action"].startswith("contract"):
                t["contract"] = int(a["action"].split()[1])
            if isinstance(act, Play):
                if act.declare:
                    ace = act.card.rank is Rank.ACE
                    value = ACE_MARRIAGE_VALUE if ace else act.card.suit.marriage_value
                    t["marriages"].append((seat, None if ace else act.card.suit, value))
                    trump = trump if ace else act.card.suit
                trick.append((seat, act.card))
                if len(trick) == 3:
                    w = trick[_winner([c for _, c in trick], trump)][0]
                    t["tricks"].append((list(trick), w, trump))
                    trick = []
            g.apply(act, seat=seat)
            if g.is_over or g.deal_number != number:
                t["result"] = g.deal_results[-1]
        out.append(t)
    return out


def _cross_check(mid: str, rec: dict[str, Any], db: Path) -> tuple[int, str, str]:
    """What `arena replay`, `--check` and the web replay say of one stored match, against
    the engine; the number of tricks compared, and what `arena replay` and `--check` said."""
    game = replay(rec)
    if game.result is not None:
        assert list(game.result.scores) == rec["result"]["scores"], mid
    check = _run("--check", "--db", str(db), mid)
    assert check.exit_code == 0 and "OK: every action is legal" in check.output, check.output
    shown = _run("--db", str(db), mid)
    assert shown.exit_code == 0, shown.output
    names = rec["players"]
    blocks = re.split(r"(?m)^Deal \d+ — ", shown.stdout)[1:]
    assert len(blocks) == len(rec["deals"]), mid
    web = MatchReplay(mid, rec)
    tricks = 0
    for k, (d, t) in enumerate(zip(rec["deals"], _truth(rec), strict=True)):
        blk = blocks[k]
        assert blk.startswith(f"dealer {names[d['dealer']]} ({d['dealer']})"), blk[:60]
        talon = re.search(r"(?m)^talon\s+(.*?)(?:  \(shown to the declarer only: .*\))?$", blk)
        assert talon and talon.group(1).split() == t["talon"], (mid, k)
        bidding = re.search(r"(?m)^Bidding: (.*)$", blk)
        spoken = [e.split(" (fallback")[0] for e in (bidding.group(1) if bidding else "")
                  .split(", ") if e and "(obligatory)" not in e]  # fmt: skip
        assert spoken == [f"{names[s]}: {a}" for s, a in t["bids"]], (mid, k, spoken)
        for s, a in t["gives"]:
            _, card, _, to = a.split()
            assert f"{names[s]} ({s}): gives {card} to {names[int(to)]} ({to})" in blk
        if t["contract"] is not None:
            assert f"contract {t['contract']}" in blk
        rows = re.findall(r"(?m)^│ *(\d+) │ (.*?) *│ (\S+) *│ (\S*) *│$", blk)
        assert len(rows) == len(t["tricks"]) or rec.get("abandoned"), (mid, k)
        for (cards, w, trump), (_, cells, shown_trump, shown_winner) in zip(
            t["tricks"], rows, strict=False
        ):
            played = re.findall(r"(\S+) (\S+?)\*?(?=  |$| \()", cells)[: len(cards)]
            assert played == [(names[s], str(c)) for s, c in cards], (mid, k, cells)
            assert shown_winner == names[w], (mid, k, cells)
            assert shown_trump == ("-" if trump is None else trump.symbol), (mid, k, cells)
        tricks += len(t["tricks"])
        for s, suit, value in t["marriages"]:
            what = "ace marriage" if suit is None else f"{suit.symbol} marriage"
            assert f"{names[s]} declares the {what}: +{value}" in blk, (mid, k)
        res = t["result"]
        if res is not None:
            assert d["deltas"] == list(res.deltas) and d["scores"] == list(res.scores)
            deltas = ", ".join(f"{names[s]} {x:+d}" for s, x in enumerate(res.deltas))
            assert f"deltas {deltas}  scores {', '.join(map(str, res.scores))}" in blk
            if res.barrel is not None and any(res.barrel):
                line = re.search(r"on the barrel after this deal: (.*)", blk)
                assert line, (mid, k)
                for s, left in enumerate(res.barrel):
                    assert (f"{names[s]} ({s}), {left} deal" in line.group(1)) == (left > 0)
        # the web replay of the same deal
        page = web.deal(k)
        first, last = page["steps"][0]["view"], page["steps"][-1]["view"]
        assert first["talon"] == t["talon"]
        assert [([(c["seat"], c["card"]) for c in tr["cards"]], tr["winner"])
                for tr in last["tricks"]] == [([(s, str(c)) for s, c in cards], w)
                                              for cards, w, _ in t["tricks"]]  # fmt: skip
        assert [(m["seat"], m["suit"], m["value"]) for m in last["marriages"]] == [
            (s, None if su is None else su.symbol, v) for s, su, v in t["marriages"]
        ]
        assert [(b["seat"], b["action"]) for b in last["bids"]] == t["bids"]
        assert [(gv["from"], f"give {gv['card']} to {gv['to']}") for gv in last["gives"]] == (
            t["gives"]
        )
        assert len(page["steps"]) == len(d["actions"]) + 1
        if res is not None:
            summary = page["summary"]
            assert (summary["deltas"], summary["scores"], summary["outcome"]) == (
                list(res.deltas),
                list(res.scores),
                res.outcome,
            )
            assert last["result"]["deltas"] == list(res.deltas)
            barrel = None if res.barrel is None else list(res.barrel)
            assert last["result"].get("barrel") == barrel
    assert web.summary["result"] == rec["result"]
    return tricks, _flat(shown.stdout), check.output


def _tournament(
    tmp_path: Path, name: str, ruleset: str, bots: dict[str, Any], **keys: Any
) -> list[tuple[str, dict[str, Any], Path]]:
    """Play a real tournament (bot processes, the referee, SQLite); then delete every row
    of its database but the matches' (the record is enough) and give each stored match's
    id and record, and the database."""
    lines = [f'name = "{name}"', f'ruleset = "{ruleset}"', "seed = 35",
             f'db = "{tmp_path / name}.sqlite"', f'out = "{tmp_path / "out" / name}"',
             "concurrency = 3", "bot_wait_s = 60"]  # fmt: skip
    tables = {k: v for k, v in keys.items() if isinstance(v, dict)}
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items() if k not in tables]
    for table, values in {**tables, "bots": bots}.items():
        lines.append(f"[{table}]")
        for k, v in values.items():
            lines.append(f"{k} = {_toml(v)}")
    config = tmp_path / f"{name}.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["tournament", "--config", str(config), "--no-progress"])
    assert r.exit_code == 0, r.output
    db = tmp_path / f"{name}.sqlite"
    con = sqlite3.connect(db)
    ids = [str(row[0]) for row in con.execute("SELECT id FROM matches ORDER BY idx")]
    with con:
        for table in ("match_players", "deals", "incidents", "ratings"):
            con.execute(f"DELETE FROM {table}")  # (fixed names)
    con.close()
    with Storage.open_readonly(db) as st:
        return [(m, st.load_record(m), db) for m in ids]


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def test_real_tournaments_replay_the_same_in_the_engine_the_cli_and_the_web(
    tmp_path: Path,
) -> None:
    """Pinned (no defect found): every stored match of small real tournaments — classic
    with a bot that concedes, 1001 with bots that throw in, 1001 for four — replays
    through the engine to its scores, passes `--check`, and `arena replay` and the web
    replay show its bidding, talon, passes, contract, tricks in order with their winners,
    marriages with their value and deal scores as the engine plays them; with every row
    of the database but the matches' deleted (the record is enough)."""
    giver = tmp_path / "bots.py"
    giver.write_text(_BOTS, encoding="utf-8")
    three = {"random": "random", "heuristic": "heuristic", "giver": f"{giver}:Giver"}
    matches = [
        *_tournament(tmp_path, "c", "classic", three, max_deals=4),
        *_tournament(tmp_path, "t", "1001", {**three, "random": f"{giver}:Giver"}, max_deals=4),
        *_tournament(tmp_path, "q", "1001-4p", {**three, "r2": "random"}, max_deals=2)[::4],
    ]
    tricks = 0
    outcomes: set[str] = set()
    for mid, rec, db in matches:
        tricks += _cross_check(mid, rec, db)[0]
        outcomes |= {d.get("outcome") for d in rec["deals"]}
    assert tricks > 100
    assert {"made", "failed", "conceded", "thrown_in"} <= outcomes, outcomes


def test_real_matches_that_ended_abnormally_replay_and_read_truthfully(tmp_path: Path) -> None:
    """Pinned (no defect found but the `--check` lines above): real matches a bot forfeited
    by timeouts, that every seat forfeited (abandoned), that a bot left for good
    (disconnected past the grace), and that their time limit ended, cross-checked as
    above; `arena replay` and `--check` say how each ended."""
    bots = tmp_path / "bots.py"
    bots.write_text(_BOTS, encoding="utf-8")
    fast = {"decision_ms": 100, "time_bank_ms": 0}
    sleeper = f"{bots}:Sleeper"
    quit_mark = str(tmp_path / "quitter-quit")
    runs = {
        # (a second per decision: at 100 ms a loaded machine's pauses of the other bots'
        # processes were three timeouts of theirs too, and they forfeited beside the
        # sleeper: "forfeits [0, 2]")
        "timeouts": _tournament(
            tmp_path,
            "s",
            "classic",
            {"random": "random", "heuristic": "heuristic", "sleeper": f"{bots}:LongSleeper"},
            max_deals=4,
            deadlines={"decision_ms": 1000, "time_bank_ms": 0},
        ),
        "abandoned": _tournament(
            tmp_path,
            "a",
            "classic",
            {"s1": sleeper, "s2": sleeper, "s3": sleeper},
            max_deals=4,
            deadlines=fast,
        )[:2],
        "gone": _tournament(
            tmp_path,
            "d",
            "classic",
            {
                "random": "random",
                "heuristic": "heuristic",
                "quitter": {"bot": f"{bots}:Quitter", "env": {"QUIT_NOW": quit_mark}},
            },
            max_deals=3,
            referee={"reconnect_grace_s": 1},
        )[:2],
        "clock": _tournament(
            tmp_path,
            "k",
            "classic",
            {"r1": "random", "r2": "random", "r3": "random"},
            max_deals=0,
            match_timeout_s=0.2,
        )[:2],
    }
    seen: set[str] = set()
    for kind, matches in runs.items():
        for mid, rec, db in matches:
            _, text, check = _cross_check(mid, rec, db)
            names = rec["players"]
            if kind == "timeouts" and rec["forfeits"]:  # (unless the deals gave it few cards)
                seen.add(kind)
                who = names.index("sleeper")
                assert rec["forfeits"] == [who], rec["forfeits"]
                assert f"forfeits applied: sleeper ({who}) forfeited" in text, text
                assert "(timeout)" in text and "forfeited: sleeper" in check
            elif kind == "abandoned" and rec.get("abandoned"):
                seen.add(kind)
                assert rec["rules_result"] is None and rec["result"]["places"] == [3, 3, 3]
                assert "abandoned in deal" in text and "abandoned in deal" in check
            elif kind == "gone" and rec["forfeits"]:
                seen.add(kind)
                who = names.index("quitter")
                assert rec["forfeits"] == [who], rec["forfeits"]
                assert "disconnected for more than 1 s" in text, text
            elif kind == "clock":
                seen.add(kind)
                assert rec["time_limit_s"] == 0.2 and rec["result"]["reason"] == "max_deals"
                assert "ended by its time limit (match_timeout_s 0.2 s)" in text, text
                assert "ended by its time limit" in check
    assert seen == set(runs), seen
