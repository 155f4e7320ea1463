"""Match records: format, JSON round trip, replay checks and the errors it names."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re

import pytest

from engine import PRESETS, RECORD_FORMAT, Game, ReplayError, Ruleset, replay
from engine.record import forfeit_result

NAMES = ["ann", "bob", "cid"]


def finished(preset: str = "1001", seed: int = 2, names: list[str] = NAMES) -> Game:
    g = Game.new(preset, seed, names)
    rng = random.Random(seed)
    while not g.is_over:
        legal = g.legal_actions()
        # Mostly pass/low contracts so that matches end in a reasonable number of deals.
        g.apply(legal[-1] if type(legal[-1]).__name__ == "Pass" else rng.choice(legal))
    return g


def test_record_shape_and_json_round_trip() -> None:
    g = finished()
    rec = g.record()
    assert rec["format"] == RECORD_FORMAT and rec["seed"] == 2 and rec["players"] == NAMES
    assert rec["ruleset"]["name"] == "1001"
    d0 = rec["deals"][0]
    assert set(d0) == {"number", "dealer", "hands", "talon", "actions", "outcome", "deltas",
                       "scores"}  # fmt: skip
    assert sum(len(h) for h in d0["hands"]) == 21 and len(d0["talon"]) == 3
    assert {"seat", "action"} == set(d0["actions"][0])
    assert rec["result"]["places"] and rec["result"]["deals"] == len(rec["deals"])
    text = json.dumps(rec, ensure_ascii=False)
    again = replay(json.loads(text))
    assert again.record() == rec


def test_replay_without_hands_uses_the_seed() -> None:
    g = Game.new("classic", 5, NAMES)
    rng = random.Random(1)
    while g.deal_number < 4:
        g.apply(rng.choice(g.legal_actions()))
    rec = g.record()
    for d in rec["deals"]:
        del d["hands"], d["talon"]
    assert replay(rec).record() == g.record()


def test_in_progress_record_and_unknown_keys_ignored() -> None:
    g = Game.new("1001-4p", 3, [*NAMES, "dan"])
    for _ in range(20):
        g.apply(g.legal_actions()[0])
    rec = g.record()
    assert rec["result"] is None and "deltas" not in rec["deals"][-1]
    rec["incidents"] = []
    rec["deals"][0]["actions"][0]["ms"] = 12
    assert replay(rec).record() == g.record()


def test_score_mismatch_is_named() -> None:
    rec = finished().record()
    bad = copy.deepcopy(rec)
    bad["deals"][1]["scores"][0] += 5
    with pytest.raises(ReplayError, match="deal 1: scores are") as info:
        replay(bad)
    assert info.value.deal == 1
    bad2 = copy.deepcopy(rec)
    bad2["result"]["winner"] = (rec["result"]["winner"] or 0) + 1
    with pytest.raises(ReplayError, match="result: winner"):
        replay(bad2)


def test_illegal_action_is_wrapped_with_deal_and_index() -> None:
    rec = finished().record()
    bad = copy.deepcopy(rec)
    bad["deals"][2]["actions"][0]["action"] = "play A♠"
    with pytest.raises(ReplayError) as info:
        replay(bad)
    e = info.value
    assert e.deal == 2 and e.index == 0 and e.cause is not None
    assert "deal 2, action 0" in str(e) and "bidding phase" in str(e)
    bad3 = copy.deepcopy(rec)
    bad3["deals"][0]["actions"][0]["action"] = "dance"
    with pytest.raises(ReplayError, match="not an action"):
        replay(bad3)


def test_explicit_hands_must_partition_the_deck() -> None:
    rec = finished().record()
    bad = copy.deepcopy(rec)
    bad["deals"][0]["talon"][0] = (
        bad["deals"][0]["hands"][0][0]
        if bad["deals"][0]["hands"][0]
        else bad["deals"][0]["hands"][1][0]
    )
    with pytest.raises(ReplayError, match="twice"):
        replay(bad)


def test_game_new_rejects_bad_explicit_deals() -> None:
    with pytest.raises(ValueError, match="3 hands"):
        Game.new("classic", 1, NAMES, deals={0: ([[]], [])})


def test_a_match_started_from_given_scores_records_and_replays_them() -> None:
    g = Game.new("classic", 11, ["a", "b", "c"], scores=[870, -40, 500], barrel=[0, 0, 0])
    rng = random.Random(3)
    while g.deal_number < 3 and not g.is_over:
        g.apply_trusted(rng.choice(g.legal_actions()))
    rec = g.record()
    assert rec["start"] == {"scores": [870, -40, 500], "barrel": [0, 0, 0]}
    assert replay(rec).scores == g.scores


def test_replay_checks_the_rules_result_when_the_referee_reordered_places() -> None:
    g = Game.new(
        PRESETS["classic"].__class__.from_dict({**PRESETS["classic"].to_dict(), "max_deals": 2}),
        5,
        ["a", "b", "c"],
    )
    rng = random.Random(0)
    while not g.is_over:
        g.apply_trusted(rng.choice(g.legal_actions()))
    rec = g.record()
    rules_result = dict(rec["result"])
    rec["rules_result"] = rules_result
    rec["forfeits"] = [0]
    rec["result"] = forfeit_result(rules_result, [0], 1000)
    assert replay(rec).result is not None
    assert rec["result"]["places"][0] == 3
    # The referee's result is checked too (it was not: any result passed): places...
    forged = {**rec, "result": {**rec["result"], "places": [1, 2, 3]}}
    with pytest.raises(ReplayError, match="result: places"):
        replay(forged)
    # ... and the forfeits it needs
    with pytest.raises(ReplayError, match="forfeits"):
        replay({**rec, "forfeits": []})
    # A record whose result was replaced by its rules_result still replays.
    assert replay({**rec, "result": rules_result}).result is not None
    rec["rules_result"] = {**rules_result, "scores": [0, 0, 0]}
    with pytest.raises(ReplayError, match="scores"):
        replay(rec)


def test_replay_refuses_a_forged_or_missing_result() -> None:
    """Found by an audit: a reason that differs, a null result of a finished match and a
    null rules_result outside an abandoned match were accepted."""
    g = Game.new(dataclasses.replace(PRESETS["1001"], max_deals=3), 4, ["a", "b", "c"])
    rng = random.Random(1)
    while not g.is_over:
        g.apply_trusted(rng.choice(g.legal_actions()))
    rec = g.record()
    assert replay(rec).result is not None
    with pytest.raises(ReplayError, match="reason"):
        replay({**rec, "result": {**rec["result"], "reason": "forged"}})
    with pytest.raises(ReplayError, match="null, but the match is over"):
        replay({**rec, "result": None})
    with pytest.raises(ReplayError, match="only for an abandoned match"):
        replay({**rec, "rules_result": None, "result": {**rec["result"], "scores": [1000, 0, 0]}})


def test_start_scores_must_fit_the_table() -> None:
    with pytest.raises(ValueError, match="scores must be 3 integers"):
        Game.new("classic", 1, ["a", "b", "c"], scores=[1, 2])
    with pytest.raises(ValueError, match="barrel"):
        Game.new("1001", 1, ["a", "b", "c"], barrel=[1, 0, 0])


@pytest.mark.parametrize("stored", ["1001", {"preset": "1001"}, {"preset": "1001", "rounding": 5}])
def test_a_record_of_1001_with_four_players_replays(stored: object) -> None:
    """Defect: a record naming the preset "1001" (RULES.md: for 3 or 4 players) with four
    players was refused: "ruleset '1001' is for 3 players, got 4"."""
    g = Game.new("1001", 3, [*NAMES, "dan"])
    for _ in range(30):
        g.apply(g.legal_actions()[0])
    rec = g.record()
    rec["ruleset"] = stored
    assert replay(rec).ruleset.players == 4
    assert replay(rec).record()["deals"] == g.record()["deals"]


@pytest.mark.parametrize(
    ("preset", "scores", "barrel", "words"),
    [
        ("classic", [880, 900, 0], [3, 0, 0], "seat 1 starts at 900, over barrel_at 880"),
        ("classic", [0, 0, 0], [3, 0, 0], "seat 0 is on the barrel (3 deals left) at 0"),
        ("classic", [1000, 0, 0], None, "at or over the target 1000: that match is over"),
        ("classic", [5000, 0, 0], None, "at or over the target"),
        ("1001", [0, 1001, 0], None, "seat 1 starts at 1001"),
        # (audit round 3) off the barrel at 880: every way off it costs points
        ("classic", [880, 0, 0], None, "seat 0 starts at 880 but not on the barrel"),
        # (audit round 3) a newcomer knocks the sitter off: never two sitters
        (
            {"preset": "classic", "barrel_mode": "one"},
            [880, 880, 0],
            [2, 3, 0],
            'several seats start on the barrel, but with barrel_mode = "one"',
        ),
    ],
)
def test_start_positions_no_match_can_reach_are_refused(
    preset: str | dict[str, object], scores: list[int], barrel: list[int] | None, words: str
) -> None:
    """Defect: a sitter on the barrel at 0 won the game with a contract of 120, a match
    started at 1000 went on, and a failed contract from 1000 put the declarer on the
    barrel. Start positions are those a match can reach (RULES.md, the barrel and the end)."""
    rules = preset if isinstance(preset, str) else Ruleset.from_dict(preset)
    with pytest.raises(ValueError, match=re.escape(words)):
        Game.new(rules, 1, NAMES, scores=scores, barrel=barrel)
    # what a match does reach is accepted: a sitter at 880, others anywhere below
    g = Game.new("classic", 1, NAMES, scores=[880, 879, -300], barrel=[2, 0, 0])
    assert g.start == ((880, 879, -300), (2, 0, 0))
    assert Game.new("1001", 1, NAMES, scores=[1000, 995, 0]).start[0] == (1000, 995, 0)
    # falling off costs nothing with barrel_penalty = 0: 880 off the barrel is reachable
    free = Ruleset.from_dict({"preset": "classic", "barrel_penalty": 0})
    assert Game.new(free, 1, NAMES, scores=[880, 0, 0]).start == ((880, 0, 0), (0, 0, 0))
    # several sitters are reachable where they may share the barrel
    assert Game.new("classic", 1, NAMES, scores=[880, 880, 0], barrel=[2, 3, 0]).start[1] == (
        2, 3, 0,
    )  # fmt: skip
