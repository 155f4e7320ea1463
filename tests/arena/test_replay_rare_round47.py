"""Replay audit, round 47: the rare events of every ruleset, read every way.

Seeded matches of the engine (moves chosen at random, biased to the rare ones) under
classic, 1001 for three and four, each file of rulesets/ and a house ruleset with
``talon_visible`` off, ``concede = "penalty"``, ``barrel_mode = "one"``, ``must_beat`` on
and ``marriage_needs_trick`` off, stored as the arena stores records, cross-checked by
round 35's and 37's checks (the engine against `arena replay`, ``--check`` and the web
replay's JSON, deal by deal and trick by trick): the 1001 last hand's take after an
all-pass (played, raised, thrown in), the dealer of four scoring the talon (three nines:
100), each kind of concession, the barrel reached, sat, won, fallen from and a sitter
knocked off, two marriages changing trump, the ace marriage, a deal cap and a tie for a
place. They agreed; what they did not say, or said wrong:

- A record that names its ruleset as a preset with overrides (``{"preset": "1001",
  "talon_visible": false}``, docs/record-format.md) was headed ``Match: ? (classic +
  talon_visible off)`` by `arena replay` and the replay page: the dict as stored has no
  name, and the nearest preset to its two keys is classic. ``"1001"`` for four players was
  ``1001-4p`` in the text and ``1001`` on the page.
- The last hand who takes the talon after an all-pass was said to "play the opening bid"
  in the line right above his throw-in (and first hand, under ``all_pass = "first_hand"``,
  right above his concession); the page did not say why he held it at all.
- With ``talon_visible`` off the text drew the talon in every deal as if the table had
  seen it (only the header's ``talon_visible off`` said otherwise); so did the page face up.

The browser: tests/web/test_replay_rare_web_round47.py.
"""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

import pytest

from arena.storage import Storage
from arena.web import MatchReplay
from engine import Game, Pass, Play, Ruleset, ThrowIn, replay
from engine.actions import Bid, Concede, Contract
from engine.rules import PRESETS, load_ruleset
from tests.arena.test_replay_audit_round35 import _cross_check, _run, _write
from tests.arena.test_replay_audit_round37 import _deal_blocks, _more_checks

ROOT = Path(__file__).parents[2]
THREE = ["ann", "bob", "cid"]
FOUR = [*THREE, "dan"]
#: The house ruleset of the brief: every rarely used option at its other value.
HOUSE = {"preset": "classic", "name": "house47", "talon_visible": False,
         "concede": "penalty", "barrel_mode": "one", "must_beat": True,
         "marriage_needs_trick": False}  # fmt: skip
LAST_HAND = (
    "everybody before him passed: the last hand takes it at the opening bid, to play it, "
    "raise the contract or throw in"
)
HIDDEN = "(shown to the declarer only: talon_visible off)"


def _rulesets() -> dict[str, Ruleset]:
    out = {"classic": PRESETS["classic"], "1001": PRESETS["1001"], "1001-4p": PRESETS["1001-4p"]}
    for path in sorted((ROOT / "rulesets").glob("*.toml")):
        out[path.stem] = load_ruleset(path)
    out["house47"] = Ruleset.from_dict(HOUSE)
    return out


def _play(rules: Ruleset, seed: int, deals: int) -> dict[str, Any]:
    """A seeded match of random moves that seek the rare ones: a marriage declared when it
    may be, bids and passes half and half, a contract named as bid or a concession or
    throw-in now and then; capped at ``deals`` deals (a deal cap of its own)."""
    import dataclasses

    rules = dataclasses.replace(rules, max_deals=min(rules.max_deals or deals, deals))
    game = Game.new(rules, seed, FOUR if rules.players == 4 else THREE)
    rng = random.Random(seed)
    while not game.is_over:
        legal = game.legal_actions()
        declare = [a for a in legal if isinstance(a, Play) and a.declare]
        bids = [a for a in legal if isinstance(a, Bid)]
        quit_ = [a for a in legal if isinstance(a, Concede | ThrowIn)]
        contracts = [a for a in legal if isinstance(a, Contract)]
        if declare and rng.random() < 0.9:
            action = rng.choice(declare)
        elif bids or Pass() in legal:
            action = rng.choice(bids[:3]) if bids and rng.random() < 0.6 else Pass()
        elif quit_ and rng.random() < 0.25:
            action = rng.choice(quit_)
        elif contracts and rng.random() < 0.8:
            action = contracts[0]
        else:
            action = rng.choice(legal)
        game.apply(action)
    return game.record()


def _events(rec: dict[str, Any]) -> set[str]:
    """The rare events a record holds, named as the brief names them."""
    game = replay(rec)
    seen: set[str] = set()
    for res, deal in zip(game.deal_results, rec["deals"], strict=True):
        acts = [a["action"] for a in deal["actions"]]
        if res.outcome == "thrown_in":
            seen.add("thrown_in")
        elif res.outcome == "conceded":
            seen.add(f"conceded {rec['ruleset']['concede']}")
        if sum(a.endswith("declare") for a in acts) >= 2:
            seen.add("two marriages")
        if any(a.startswith("play A") and a.endswith("declare") for a in acts):
            seen.add("ace marriage")
        if len(rec["players"]) == 4 and all(c.startswith("9") for c in deal["talon"]):
            seen.add("three nines")
        if acts[:2] == ["pass", "pass"] and rec["ruleset"]["all_pass"] == "last_hand":
            raised = res.contract is not None and res.contract > res.bid
            did = "throws in" if acts[-1] == "throw-in" else "raises" if raised else "plays"
            seen.add(f"last hand {did}")
        for ev in res.events:
            seen.add(re.sub(r"^seat \d+ ", "", ev).split(":")[0])
    assert game.result is not None
    if game.result.reason == "max_deals":
        seen.add("max_deals")
    if len(set(game.result.places)) < len(game.result.places):
        seen.add("tie")
    return seen


#: (ruleset, seed, deals): seeds that hold the rare events (found by _events).
MATCHES = [
    ("1001", 0, 32), ("1001", 15, 38), ("1001-4p", 5, 60), ("classic-capped", 1, 4),
    ("classic-capped", 2, 40), ("classic", 12, 32), ("house-penalty", 0, 20), ("house47", 4, 120),
    ("tournament-1001", 0, 12),
]  # fmt: skip


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    rules = _rulesets()
    return {f"{name}-{seed}": _play(rules[name], seed, deals) for name, seed, deals in MATCHES}


#: Short matches for the defects' tests (fast): (ruleset, seed, deals).
SHORT = [("1001", 0, 6), ("1001-4p", 5, 4), ("tournament-1001", 0, 3), ("house47", 4, 3),
         ("classic", 2, 4)]  # fmt: skip


@pytest.fixture(scope="module")
def short() -> dict[str, dict[str, Any]]:
    rules = _rulesets()
    return {name: _play(rules[name], seed, deals) for name, seed, deals in SHORT}


def test_the_seeded_matches_hold_the_rare_events(records: dict[str, dict[str, Any]]) -> None:
    seen = set().union(*map(_events, records.values()))
    want = {"thrown_in", "conceded free", "conceded penalty", "two marriages", "ace marriage",
            "three nines", "last hand throws in", "last hand raises", "last hand plays",
            "gets on the barrel", "wins from the barrel", "is knocked off the barrel",
            "fails the contract and falls off the barrel", "sat 3 deals on the barrel",
            "concedes and falls off the barrel", "max_deals", "tie"}  # fmt: skip
    assert want <= seen, want - seen


@pytest.mark.slow
def test_every_rare_record_reads_the_same_in_the_engine_the_cli_and_the_web(
    tmp_path: Path, records: dict[str, dict[str, Any]]
) -> None:
    db = tmp_path / "r47.sqlite"
    with Storage(db) as st:
        for tid, players in (("t3", THREE), ("t4", FOUR)):
            st.ensure_tournament(tid, name=tid, fingerprint=tid, total_matches=0,
                                 config={"name": tid, "ruleset": "classic"},
                                 bots=[(b, "demo") for b in players])  # fmt: skip
        ids = []
        for i, rec in enumerate(records.values()):
            tid = "t4" if len(rec["players"]) == 4 else "t3"
            mid = f"{tid}-m{i:05d}"
            st.save_match(tid, match_id=mid, index=i, table=0, set_no=i, seed=rec["seed"],
                          seats=tuple(rec["players"]), record=rec, started_at=1.7e9 + i,
                          finished_at=1.7e9 + i + 0.5)  # fmt: skip
            ids.append((mid, rec))
    seen: set[str] = set()
    for mid, rec in ids:
        _cross_check(mid, rec, db)
        seen |= _more_checks(mid, rec, db)
    assert {"barrel event", "sitter", "talon hidden"} <= seen


# ------------------------------------------------------------------------ the defects


def test_a_ruleset_named_as_a_preset_with_overrides_is_described_as_it_loads(
    tmp_path: Path, short: dict[str, dict[str, Any]]
) -> None:
    """`{"preset": "1001", "talon_visible": false}` was `? (classic + talon_visible off)`
    in `arena replay`'s first line and the replay page's header."""
    four = short["1001-4p"]
    cases = [
        ({"preset": "1001", "talon_visible": False, "max_deals": 4},
         "1001-4p (talon_visible off), 4 deals max"),
        ({"preset": "1001", "name": "home", "max_deals": 4}, "home (1001-4p), 4 deals max"),
        # (the text said 1001-4p, the page 1001)
        ("1001", "1001-4p, no deal cap"),
    ]  # fmt: skip
    for stored, said in cases:
        rec = copy.deepcopy(four)
        rec["ruleset"] = stored
        if stored == "1001":  # (no cap in a name: the match as far as it goes uncapped)
            del rec["result"]
        path = _write(tmp_path, rec)
        shown = _run(path)
        first = shown.stdout.splitlines()[0]
        assert first.startswith(f"Match: {said}, seed 5, players ann, bob, cid, dan"), first
        assert MatchReplay("m", rec).summary["ruleset_description"] == said
    # a full ruleset dict (what the arena writes) is described as stored
    assert _run(_write(tmp_path, four)).stdout.startswith("Match: 1001-4p, 4 deals max, seed 5")
    rec = copy.deepcopy(short["house47"])
    assert MatchReplay("m", rec).summary["ruleset_description"] == (
        "house47 (classic + talon_visible off, concede penalty, must_beat on, "
        "marriage_needs_trick off, barrel_mode one), 3 deals max"
    )


def _takes(text: str) -> list[str]:
    """Per deal, `arena replay`'s line of who takes the talon ("" when nobody did)."""
    out = []
    for block in _deal_blocks(text):
        line = re.search(r"(?m)^.+ \(\d+\) takes the talon at \d+.*$", block)
        out.append(line[0] if line else "")
    return out


def test_the_last_hand_after_an_all_pass_is_said_to_take_the_talon_not_to_play_it(
    tmp_path: Path, short: dict[str, dict[str, Any]]
) -> None:
    """`cid (2) takes the talon at 40 (everybody before him passed: the last hand plays the
    opening bid)` was followed by `cid (2): throw-in`; the page said only `bid 40 ·
    declarer cid`. Both now say why he holds it, in the same words, played, raised or
    thrown in; and nothing of a talon won by a bid."""
    told: dict[str, set[str]] = {}
    for key in ("1001", "1001-4p", "classic"):
        rec = short[key]
        text = _run(_write(tmp_path, rec)).stdout
        assert "plays the opening bid" not in text
        web = MatchReplay("m", rec)
        said = set()
        for k, (deal, line) in enumerate(zip(rec["deals"], _takes(text), strict=True)):
            steps = web.deal(k)["steps"]
            why = {st["view"]["taken"] for st in steps[1:] if st["view"]["declarer"] is not None}
            assert steps[0]["view"]["taken"] == ""
            acts = [a["action"] for a in deal["actions"]]
            spoken = [a for a in acts if a == "pass" or a.startswith("bid ")]
            if rec["ruleset"]["all_pass"] == "last_hand" and "bid" not in " ".join(spoken):
                assert line.endswith(f"takes the talon at 40 ({LAST_HAND})"), (key, k, line)
                assert why == {LAST_HAND}, (key, k)
                said.add(acts[-1] if acts[-1] == "throw-in" else "played")
            elif rec["ruleset"]["first_hand_commits"] and "bid" not in " ".join(spoken):
                assert line.endswith("(his obligatory bid: the others passed)"), (key, k, line)
                assert why == {"his obligatory bid: the others passed"}
                said.add("obligatory")
            else:
                assert line and "(" not in line.split("takes the talon")[1], (key, k, line)
                assert why == {""}, (key, k)
            # every seat view says the same (the auction is public)
            for seat in range(len(rec["players"])):
                seat_steps = web.deal(k, seat)["steps"]
                assert [st["view"]["taken"] for st in seat_steps] == [
                    st["view"]["taken"] for st in steps
                ]
        told[key] = said
    assert "played" in told["1001"] and "throw-in" in told["1001-4p"]
    assert "obligatory" in told["classic"]


def test_a_hidden_talon_is_said_to_be_hidden_where_it_is_drawn(
    tmp_path: Path, short: dict[str, dict[str, Any]]
) -> None:
    """With `talon_visible` off the talon row read `talon  J♦ 10♦ 9♥` as in any other
    match (only the header said `talon_visible off`)."""
    for key, hidden in (("tournament-1001", True), ("house47", True), ("1001", False)):
        rec = short[key]
        text = _run(_write(tmp_path, rec)).stdout
        rows = re.findall(r"(?m)^talon\s{2,}(.*)$", text)
        assert len(rows) == len(rec["deals"])
        for row, deal in zip(rows, rec["deals"], strict=True):
            assert sorted(row.split(HIDDEN)[0].split()) == sorted(deal["talon"]), row
            assert row.endswith(HIDDEN) == hidden, (key, row)
        assert MatchReplay("m", rec).summary["talon_visible"] is (not hidden)


@pytest.mark.slow
def test_edited_rare_records_are_refused_with_the_rule_named(
    tmp_path: Path, records: dict[str, dict[str, Any]]
) -> None:
    """One rule broken at a time, each in a record of the rare rules; `--check` and the
    text name the rule (the text stops there, exit 1)."""
    edits: list[tuple[str, str, Any, str]] = [
        ("classic-12", "must_beat", True, "must_beat: you must beat the trick"),
        ("house47-4", "marriage_needs_trick", True, "may be declared only after winning a trick"),
        ("classic-12", "concede", "off", "conceding is off in this ruleset"),
        ("1001-15", "ace_marriage", False, "the ace marriage is off"),
        ("house47-4", "barrel_mode", "many", "deltas are"),
        ("1001-4p-5", "nines_talon_value", 90, "deltas are"),
        ("tournament-1001-0", "rounding", 1, "deltas are"),
    ]  # fmt: skip
    for key, option, value, rule in edits:
        rec = copy.deepcopy(records[key])
        rec["ruleset"][option] = value
        path = _write(tmp_path, rec)
        check = _run("--check", path)
        assert check.exit_code == 1 and "REFUSED: Deal " in check.output, (option, check.output)
        assert rule in check.output, (option, check.output)
        shown = _run(path)
        assert shown.exit_code == 1 and rule in shown.output, (option, shown.output[-300:])
    # the tie for a place, and the deal cap, are the rules' too
    tied = records["classic-capped-1"]
    places = tied["result"]["places"]
    assert sorted(places) == [1, 1, 3]
    rec = copy.deepcopy(tied)
    rec["result"]["places"] = [2 if p == 1 and s == places.index(1) else p
                               for s, p in enumerate(places)]  # fmt: skip
    check = _run("--check", _write(tmp_path, rec))
    assert f"REFUSED: result: places is {places}, the record says" in check.output
    rec = copy.deepcopy(tied)
    rec["ruleset"]["max_deals"] = 3
    check = _run("--check", _write(tmp_path, rec))
    assert "REFUSED: Deal 4 (record deal 3): the match was already over" in check.output


def test_first_hand_who_takes_the_talon_after_an_all_pass_is_not_said_to_play_it(
    tmp_path: Path,
) -> None:
    """`all_pass = "first_hand"` (a 1001 house rule): everybody passes, first hand takes
    the talon at 40 and, a declarer who may concede, concedes; the line above it said he
    "plays the opening bid"."""
    rules = Ruleset.from_dict({"preset": "1001", "all_pass": "first_hand", "max_deals": 1})
    game = Game.new(rules, 0, THREE)
    for _ in range(3):
        game.apply(Pass())
    while not isinstance(game.legal_actions()[-1], Concede):  # (the two cards passed)
        game.apply(game.legal_actions()[0])
    first = game.declarer
    assert first is not None
    game.apply(Concede())
    rec = game.record()
    text = _run(_write(tmp_path, rec)).stdout
    said = f"{THREE[first]} ({first}) takes the talon at 40 (everybody passed: first hand "
    assert f"{said}takes it at the opening bid)\n" in text, text
    assert f"{THREE[first]} ({first}): concede" in text and "plays the opening bid" not in text
    steps = MatchReplay("m", rec).deal(0)["steps"]
    assert steps[-1]["view"]["taken"] == "everybody passed: first hand takes it at the opening bid"
