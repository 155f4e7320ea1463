"""Round 51: what a spectator reads of a match, checked against the oracle of the rules.

``tests/engine/oracle_round51.py`` is a reading of RULES.md that shares no code with the
engine. Here seeded matches (random and heuristic bots through ``sdk.local`` under
classic, 1001, 1001-4p and house rules; and matches played at random under rulesets drawn
over every option, from start positions near the barrel and the target) are followed by
the oracle, and what people read of the same record is compared with it:

* ``arena replay`` (:func:`arena.render.render_record`): each trick's winner and trump,
  the marriages declared, the takes line, each deal's outcome, deltas and scores, the
  barrel's events and who sits there, the final standings and why the match ended;
* the web's replay data (:class:`arena.web.replay.MatchReplay`, what
  ``/api/matches/<id>`` and ``/api/matches/<id>/deals/<k>`` serve): every step's finished
  tricks and their winners, takes, marriages and scores, face up and as each seat saw it,
  each deal's result and the match's summary.

The default run compares a few dozen matches (a few seconds); ``-m slow`` many more.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from arena.render import render_record
from arena.web.replay import MatchReplay
from bots.heuristic import HeuristicBot
from bots.random_bot import RandomBot
from engine import Game, Ruleset, load_ruleset, parse_action
from engine.actions import fallback_action
from engine.record import start_game
from sdk.local import play_local
from tests.engine.oracle_round51 import DealOracle, Expected, match_end, points
from tests.engine.test_oracle_round51 import choose, craft, draw_rules, draw_start

ROOT = Path(__file__).resolve().parents[2]


# -- the oracle's view of a record ------------------------------------------------------
@dataclass
class DealSeen:
    """One deal as the oracle follows it: its tricks (play order, winner), the marriages
    declared (seat, value, in order) and its result (None: the record stops in it)."""

    tricks: list[tuple[list[tuple[int, str]], int, str | None]] = field(default_factory=list)
    marriages: list[tuple[int, int]] = field(default_factory=list)
    result: Expected | None = None
    pending: list[tuple[int, str]] = field(default_factory=list)  # a trick under way
    first: int = -1  # first hand
    taken: tuple[int, int] | None = None  # (declarer, bid) once the talon is taken


@dataclass
class MatchSeen:
    deals: list[DealSeen]
    end: tuple[str, list[int], list[int], int | None] | None
    scores: list[int]


def follow(record: dict[str, Any]) -> MatchSeen:
    """Follow ``record`` with the oracle alone (no engine)."""
    rules = Ruleset.from_dict(record["ruleset"]).to_dict()
    n = rules["players"]
    start = record.get("start") or {}
    scores = list(start.get("scores") or [0] * n)
    barrel = list(start.get("barrel") or [0] * n)
    seen: list[DealSeen] = []
    end = None
    for k, deal in enumerate(record["deals"]):
        o = DealOracle(rules, deal["dealer"], deal["hands"], deal["talon"], scores, barrel)
        d = DealSeen(first=o.first)
        for step in deal["actions"]:
            assert step["seat"] == o.to_act
            words = step["action"].split()
            if o.phase == "playing" and words[-1] == "declare":
                before = o.marriages[o.to_act]
                o.apply(step["action"])
                d.marriages.append((step["seat"], o.marriages[step["seat"]] - before))
                continue
            played = list(o.trick)
            tricks_before = o.tricks
            o.apply(step["action"])
            if o.tricks > tricks_before:
                cards = [*played, (step["seat"], words[1])]
                # "the winner of a trick leads the next" (the oracle's to_act after it)
                d.tricks.append((cards, o.to_act, o.trump))
        d.result, d.pending = o.result, list(o.trick)
        if o.declarer is not None:
            assert o.bid is not None
            d.taken = (o.declarer, o.bid)
        seen.append(d)
        if o.result is None:
            break
        scores, barrel = o.result.scores, o.result.barrel or [0] * n
        end = match_end(rules, scores, k + 1)
    return MatchSeen(seen, end, scores)


def through_json(record: Any) -> dict[str, Any]:
    """``record`` as stored (JSON), a copy."""
    out: dict[str, Any] = json.loads(json.dumps(record))
    return out


# -- the records ------------------------------------------------------------------------
def bot_record(ruleset: str, bots: list[Any], seed: int, max_deals: int | None) -> dict[str, Any]:
    """A match the bots play as the referee runs it (``sdk.local``), through JSON."""
    rules = load_ruleset(str(ROOT / ruleset) if "/" in ruleset else ruleset)
    names = [f"{b.__name__[:3].lower()}{i}" for i, b in enumerate(bots)]
    match = play_local(bots, rules, seed=seed, max_deals=max_deals, names=names, strict=True)
    return through_json(match.record)


def drawn_record(seed: int, max_deals: int = 10) -> dict[str, Any]:
    """A match played at random under a drawn ruleset (every option off its default by
    turns), from a drawn start position, some deals crafted (four aces, three nines in the
    talon, marriages): the policy of ``test_oracle_round51``."""
    rng = random.Random(seed)
    d = draw_rules(rng)
    if not d["max_deals"] or d["max_deals"] > max_deals:
        d["max_deals"] = max_deals
    n = d["players"]
    scores, barrel = draw_start(rng, d)
    dealer = rng.randrange(n)
    deals = {k: craft(rng, n, (dealer + k) % n) for k in range(max_deals) if rng.random() < 0.3}
    game = Game.new(Ruleset.from_dict(d), seed, [f"p{i}" for i in range(n)], deals=deals or None,
                    scores=scores, barrel=barrel, dealer=dealer)  # fmt: skip
    greedy = rng.random() < 0.5
    while not game.is_over:
        legal = sorted(str(a) for a in game.legal_actions())
        game.apply(parse_action(choose(rng, legal, greedy)), seat=game.to_act)
    return through_json(game.record())


# -- arena replay -----------------------------------------------------------------------
def rendered(record: dict[str, Any]) -> str:
    console = Console(width=400, color_system=None, file=io.StringIO())
    console.print(render_record(record))
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def _marriage_said(players: list[str], seat: int, value: int) -> str:
    suit = {100: "♥", 80: "♦", 60: "♣", 40: "♠"}.get(value)
    what = f"{suit} marriage" if suit else "ace marriage"
    return f"{players[seat]} declares the {what}: +{value}"


def check_rendered(record: dict[str, Any], seen: MatchSeen, text: str | None = None) -> None:
    """``arena replay``'s text of ``record`` (``text``: as printed, else rendered here) says
    what the oracle finds, deal by deal, and the standings."""
    players = list(record["players"])
    n = len(players)
    rules = Ruleset.from_dict(record["ruleset"]).to_dict()
    text = rendered(record) if text is None else text
    assert "refused" not in text and "cannot render" not in text, text[-2000:]
    blocks = re.split(r"^Deal (\d+) — dealer .*$", text, flags=re.M)
    assert len(blocks) == 2 * len(seen.deals) + 1, (len(blocks), len(seen.deals))
    start = record.get("start") or {}
    barrel = list(start.get("barrel") or [0] * n)
    for k, d in enumerate(seen.deals):
        assert blocks[1 + 2 * k] == str(k + 1)
        block = re.split(r"^\s*(?:Final standings|Standings when)", blocks[2 + 2 * k], flags=re.M)[
            0
        ]
        lines = block.split("\n")
        where = f"deal {k + 1}"
        rows = [[c.strip() for c in ln.strip().strip("│").split("│")] for ln in lines
                if ln.startswith("│")]  # fmt: skip
        assert len(rows) == len(d.tricks) + bool(d.pending), (where, rows)
        marks = list(d.marriages)
        # a card the referee played for its seat is marked (arena.render.FALLBACK_MARK)
        referee = {(a["seat"], a["action"].split()[1]) for a in record["deals"][k]["actions"]
                   if a.get("by") == "fallback" and a["action"].startswith("play")}  # fmt: skip

        def cells(cards: list[tuple[int, str]], referee: set[tuple[int, str]] = referee) -> str:
            return "  ".join(
                f"{players[s]} {c}{'*' if (s, c) in referee else ''}" for s, c in cards
            )

        for i, (cards, winner, trump) in enumerate(d.tricks):
            said = cells(cards)
            lead = cards[0]
            if marks and marks[0][0] == lead[0] and (i, lead) == (i, lead):
                # a declaration is always a lead: the mark goes with its trick's row
                declared = _declared(record["deals"][k]["actions"], lead)
                if declared:
                    seat, value = marks.pop(0)
                    said += f"  ({_marriage_said(players, seat, value)})"
            assert rows[i] == [str(i + 1), said, trump or "-", players[winner]], (where, rows[i])
        if d.pending:  # the trick under way where the record stops: its row, unfinished
            said = cells(d.pending)
            if marks:
                seat, value = marks.pop(0)
                said += f"  ({_marriage_said(players, seat, value)})"
            trump = d.tricks[-1][2] if d.tricks else None
            trump = _trump_after(record["deals"][k]["actions"], trump)
            assert rows[-1] == [str(len(d.tricks) + 1), said, trump or "-", "(unfinished)"], where
        assert not marks, (where, marks)
        dealer = record["deals"][k]["dealer"]
        bidding = next(ln for ln in lines if ln.startswith("Bidding: "))
        if rules["first_hand_commits"]:  # "First hand is committed to 100 without speaking"
            said = f"Bidding: {players[d.first]}: {rules['opening_bid']} (obligatory)"
            assert bidding.startswith(said), (where, bidding)
        taken = [ln for ln in lines if " takes the talon at " in ln]
        if d.taken is None:
            assert taken == [], where
        else:
            seat, bid = d.taken
            assert len(taken) == 1, where
            assert re.fullmatch(rf"{players[seat]} \({seat}\) takes the talon at {bid}( \(.*\))?",
                                taken[0]), (where, taken)  # fmt: skip
        if n == 4:
            on_barrel = barrel[dealer] > 0
            nines = all(c.startswith("9") for c in record["deals"][k]["talon"])
            worth = rules["nines_talon_value"] if nines else points(record["deals"][k]["talon"])
            said = f"{worth}, three nines" if nines else str(worth)
            said = (
                f"on the barrel: the talon ({said}) is not scored"
                if on_barrel
                else (f"scores the talon: {said}")
            )
            assert f"{players[dealer]} ({dealer})  sits out ({said})" in block, (where, said, block)
        exp = d.result
        if exp is None:
            continue
        if exp.outcome in ("made", "failed"):
            takes = []
            for s in range(n):
                if n == 4 and s == dealer:
                    continue
                take = f"{players[s]} {exp.takes[s]}"
                if exp.marriage_points[s]:
                    take += f" (cards {exp.card_points[s]}, marriages {exp.marriage_points[s]})"
                takes.append(take)
            assert "takes " + ", ".join(takes) in lines, (where, takes)
        summary = exp.outcome.replace("_", " ")
        if exp.contract is not None:
            summary += f" (contract {exp.contract}, declarer took {exp.takes[exp.declarer]})"
        summary += "  deltas " + ", ".join(f"{players[s]} {exp.deltas[s]:+d}" for s in range(n))
        summary += "  scores " + ", ".join(str(x) for x in exp.scores)
        at = lines.index(summary) if summary in lines else -1
        assert at >= 0, (where, summary, lines)
        after = [ln for ln in lines[at + 1 :] if ln.strip()]
        events = [re.sub(r"\bseat (\d+)", lambda m: players[int(m[1])], e) for e in exp.events]
        assert sorted(after[: len(events)]) == sorted(events), (where, after, events)
        rest = after[len(events) :]
        barrel = exp.barrel or [0] * n
        sitters = "; ".join(
            f"{players[s]} ({s}), {b} deal{'' if b == 1 else 's'} left"
            for s, b in enumerate(barrel)
            if b
        )
        if sitters:
            assert rest[:1] == [f"on the barrel after this deal: {sitters}"], (where, rest)
        elif k + 1 < len(seen.deals):
            assert rest == [], (where, rest)
    if seen.end is not None and not record.get("forfeits"):
        reason, places, shortfalls, _ = seen.end
        table = text[text.index("Final standings") :]
        rows = [[c.strip() for c in ln.strip().strip("│").split("│")]
                for ln in table.split("\n") if ln.startswith("│")]  # fmt: skip
        want = sorted(
            [str(places[s]), f"{players[s]} ({s})", str(seen.scores[s]), str(shortfalls[s])]
            for s in range(n)
        )
        assert sorted(rows) == want, (rows, want)
        target = [players[s] for s in range(n) if seen.scores[s] >= rules["target"]]
        ended = (
            f"ended: {' and '.join(target)} reached the target ({rules['target']}) in deal "
            f"{len(seen.deals)}"
            if reason == "target"
            else f"ended: the deal cap (max_deals {rules['max_deals']}) after deal "
            f"{len(seen.deals)}: placed by score"
        )
        assert ended in text.split("\n"), (ended, text[-600:])


def _trump_after(actions: list[dict[str, Any]], trump: str | None) -> str | None:
    """The trump once the record's last declaration of a marriage (not the aces) is made."""
    for a in actions:
        words = a["action"].split()
        if words[-1] == "declare" and not words[1].startswith("A"):
            trump = words[1][-1]
    return trump


def _declared(actions: list[dict[str, Any]], lead: tuple[int, str]) -> bool:
    """Whether the record's play of ``lead`` (seat, card) declared."""
    return any(a["seat"] == lead[0] and a["action"] == f"play {lead[1]} declare" for a in actions)


#: What the replay API serves: the match's summary, and the steps of deal k as a seat (or
#: None: face up) saw them.
Served = tuple[dict[str, Any], Callable[[int, int | None], list[dict[str, Any]]]]


# -- the web's replay data --------------------------------------------------------------
def check_web(record: dict[str, Any], seen: MatchSeen, served: Served | None = None) -> None:
    """What the replay page is served of ``record`` (face up and per seat) says what the
    oracle finds: every step's tricks and winners, takes, marriages, scores and barrel,
    each deal's result, the match's summary. ``served``: (the summary, the deal's steps
    by (deal, seat)), as the API serves them; else :class:`MatchReplay`'s own."""
    n = len(record["players"])
    rules = Ruleset.from_dict(record["ruleset"]).to_dict()
    if served is None:
        replay = MatchReplay("m", record)
        served = (replay.summary, lambda k, seat: replay.deal(k, seat)["steps"])
    summary, deal_steps = served
    barrel = list(start_barrel := (record.get("start") or {}).get("barrel") or [0] * n)
    del start_barrel
    start = record.get("start") or {}
    scores = list(start.get("scores") or [0] * n)
    for k, d in enumerate(seen.deals):
        where = f"deal {k + 1}"
        exp = d.result
        said = summary["deals"][k]
        if exp is not None:
            assert (said["declarer"], said["bid"], said["contract"], said["outcome"]) == (
                exp.declarer, exp.bid, exp.contract, exp.outcome), (where, said, exp)  # fmt: skip
            assert said["made"] == (exp.outcome == "made" if exp.contract is not None else None)
            assert (said["takes"], said["deltas"], said["scores"]) == (
                exp.takes, exp.deltas, exp.scores), (where, said, exp)  # fmt: skip
            assert sorted(said["events"]) == sorted(exp.events), where
        for seat in (None, *range(n)):
            steps = deal_steps(k, seat)
            tricks = 0
            marriages = 0
            for st in steps:
                v = st["view"]
                got = [
                    ([(c["seat"], c["card"]) for c in t["cards"]], t["winner"]) for t in v["tricks"]
                ]
                tricks = len(got)
                want = [(cards, w) for cards, w, _ in d.tricks[:tricks]]
                assert got == want, (where, seat, st["i"])
                assert st["tricks_done"] == tricks
                if tricks and not v["trick"]:  # between tricks: the trump the last was played to
                    assert v["trump"] == d.tricks[tricks - 1][2], (where, seat, st["i"])
                marriages = len(v["marriages"])
                assert [(m["seat"], m["value"]) for m in v["marriages"]] == d.marriages[:marriages]
                takes = [0] * n
                for cards, w in want:
                    takes[w] += points([c for _, c in cards])
                for s, value in d.marriages[:marriages]:
                    takes[s] += value
                assert v["takes"] == takes, (where, seat, st["i"], v["takes"], takes)
                if v["phase"] != "DEAL_OVER":
                    assert v["scores"] == scores, (where, seat, st["i"])
                    # (the page reads the sitter's barrel at step 0: his talon is not scored)
                    assert v["barrel"] == (barrel if rules["barrel"] else None), (where, seat)
            if seat is None and n == 4:
                talon = record["deals"][k]["talon"]
                nines = all(c.startswith("9") for c in talon)
                worth = rules["nines_talon_value"] if nines else points(talon)
                assert steps[0]["view"]["talon_score"] == worth, where
            last = steps[-1]["view"]
            if d.taken is not None:  # who holds the talon, at what (the page's header line)
                assert (last["declarer"], last["bid"]) == d.taken, (where, seat)
                assert (said["declarer"], said["bid"]) == d.taken, where
            if exp is None:
                continue
            assert tricks == len(d.tricks) and marriages == len(d.marriages), (where, seat)
            assert last["phase"] == "DEAL_OVER" and last["scores"] == exp.scores, (where, seat)
            if exp.outcome in ("made", "failed"):
                assert last["takes"] == exp.takes, (where, seat, last["takes"], exp.takes)
            result = last["result"]
            assert (result["outcome"], result["deltas"], result["scores"]) == (
                exp.outcome, exp.deltas, exp.scores), (where, seat, result)  # fmt: skip
            assert sorted(result["events"]) == sorted(exp.events), (where, seat)
            assert result.get("barrel") == exp.barrel and last["barrel"] == exp.barrel, where
        if exp is not None:
            scores, barrel = exp.scores, exp.barrel or [0] * n
    result = summary["result"]
    # (the summary serves the record's result: a referee's always has one at the end)
    if seen.end is not None and not record.get("forfeits") and record.get("result"):
        reason, places, shortfalls, winner = seen.end
        assert (result["reason"], result["places"], result["shortfalls"], result["winner"]) == (
            reason, places, shortfalls, winner), (result, seen.end)  # fmt: skip
        assert result["scores"] == seen.scores and summary["deals_played"] == len(seen.deals)


def interrupted(record: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """``record`` cut where a referee stopped (docs/record-format.md: ``"interrupted":
    true``, no result, the last deal unfinished, without its figures), with some of its
    moves marked as the referee's (``"by": "fallback"``)."""
    rec = through_json(record)
    k = rng.randrange(len(rec["deals"]))
    rec["deals"] = rec["deals"][: k + 1]
    last = rec["deals"][k]
    last["actions"] = last["actions"][: rng.randrange(len(last["actions"]))]
    for key in ("outcome", "deltas", "scores"):
        last.pop(key, None)
    game = start_game(rec)  # (a move marked so must be the one the referee would play)
    for deal in rec["deals"]:
        for a in deal["actions"]:
            action = parse_action(a["action"])
            fallback = action == fallback_action(game.legal_actions())
            a["by"] = "fallback" if fallback and rng.random() < 0.5 else "bot"
            game.apply(action, seat=a["seat"])
    rec.update(result=None, interrupted=True, incidents=[])
    return rec


def check(record: dict[str, Any]) -> MatchSeen:
    seen = follow(record)
    check_rendered(record, seen)
    check_web(record, seen)
    return seen


# -- the tests --------------------------------------------------------------------------
#: Drawn matches that, among them, hold every outcome and barrel event, both sizes of
#: table, marriages and the ace marriage, three nines in a talon of four, a dealer of four
#: sitting on the barrel, and both ends of a match (chosen by the coverage of 200 seeds).
COVERING = (144, 108, 163, 15)


#: Drawn matches of rare ends: two share the top past the target (places 1, 1; no
#: winner), the target reached in the capped deal (the target's end, not the cap's), two
#: share the top at the cap.
ENDS = (268, 184, 216)


@pytest.mark.parametrize("seed", COVERING + ENDS)
def test_drawn_matches_read_as_the_oracle_reads_them(seed: int) -> None:
    assert len(check(drawn_record(seed)).deals) >= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_interrupted_matches_read_as_the_oracle_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    check(interrupted(drawn_record(COVERING[seed]), rng))


@pytest.mark.parametrize(
    ("ruleset", "bots"),
    [("classic", [HeuristicBot, RandomBot, HeuristicBot]),
     ("1001-4p", [RandomBot, HeuristicBot, RandomBot, HeuristicBot])],
)  # fmt: skip
def test_bot_matches_read_as_the_oracle_reads_them(ruleset: str, bots: list[Any]) -> None:
    check(bot_record(ruleset, bots, seed=5, max_deals=8))


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("block", range(10))
def test_many_drawn_matches_read_as_the_oracle_reads_them(block: int) -> None:
    for seed in range(1000 + 40 * block, 1040 + 40 * block):
        rec = drawn_record(seed)
        check(rec)
        check(interrupted(rec, random.Random(seed)))


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    "ruleset", ["classic", "1001", "1001-4p", "rulesets/house-penalty.toml",
                "rulesets/tournament-1001.toml"],
)  # fmt: skip
def test_whole_bot_matches_read_as_the_oracle_reads_them(ruleset: str) -> None:
    n = load_ruleset(str(ROOT / ruleset) if "/" in ruleset else ruleset).players
    for seed in range(3):
        check(bot_record(ruleset, [HeuristicBot] * n, seed, None))
        check(bot_record(ruleset, [RandomBot] * n, seed, 30))
        check(bot_record(ruleset, ([HeuristicBot, RandomBot] * 2)[:n], seed, 30))


def test_a_record_without_its_figures_is_served_the_rules_figures() -> None:
    """A deal's ``outcome``, ``deltas`` and ``scores`` are optional in a record
    (docs/record-format.md: checked when present). ``arena replay`` and the deal's last
    step showed the rules' figures; the replay API's summary served ``"deltas": null,
    "scores": null`` for every deal, beside the engine's outcome and takes."""
    record = drawn_record(COVERING[1])
    for deal in record["deals"]:
        for key in ("outcome", "deltas", "scores"):
            del deal[key]
    seen = check(record)
    summary = MatchReplay("m", record).summary
    assert [(d["deltas"], d["scores"]) for d in summary["deals"]] == [
        (d.result.deltas, d.result.scores) for d in seen.deals if d.result is not None
    ]


def test_arena_replay_prints_what_the_oracle_finds(tmp_path: Path) -> None:
    """``arena replay FILE`` as a user runs it (a wide terminal: its tables whole)."""
    record = drawn_record(COVERING[0])
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run([str(ROOT / ".venv/bin/arena"), "replay", str(path)], env=env,
                         capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    check_rendered(record, follow(record), out.stdout)
