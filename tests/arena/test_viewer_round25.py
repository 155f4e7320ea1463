"""Round 25 of the replay audit: `arena replay` of matches other than the classic 3-player
game without house rules (1001, four players, the barrel's options, abandoned and
time-limited matches), compared with the rules engine's own replay of each record.

Each test names what `arena replay` showed and what the record held.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli import main
from arena.web.replay import match_summary
from engine import PRESETS, Game, Pass, Phase, Play, Ruleset, Suit, parse_action, parse_cards
from engine.cards import ACE_MARRIAGE_VALUE

NAMES = ["ann", "bob", "cid"]
FOUR = ["ann", "bob", "cid", "dan"]


def _shown(tmp_path: Path, record: dict[str, Any]) -> str:
    """What `arena replay RECORD.json` prints (wide enough that no line is wrapped)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    r = CliRunner().invoke(main, ["replay", str(path)], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    return r.output


def _played(ruleset: Ruleset, players: list[str], seed: int, **start: Any) -> Game:
    """A match played out by random legal actions, declaring every marriage it may."""
    game = Game.new(ruleset, seed, players, **start)
    rng = random.Random(seed)
    while not game.is_over:
        legal = game.legal_actions()
        declare = [a for a in legal if isinstance(a, Play) and a.declare]
        game.apply_trusted(declare[0] if declare else rng.choice(legal))
    return game


def test_arena_replay_says_why_a_match_ended(tmp_path: Path) -> None:
    """Defect: `arena replay` ended a match with its standings and nothing of why it was
    over: a player who reached the target and a deal cap read alike (the web's replay page
    said the result's key, "ended: max_deals", "ended: forfeits"). Both now say it in
    words, from one function: who reached the target in which deal, or the deal cap."""
    from arena.render import end_reason  # (new in this round)

    # 1001 for four from 960 each: someone reaches 1001 within a few deals
    won = _played(PRESETS["1001-4p"], FOUR, 3, scores=(960, 960, 960, 960))
    assert won.result is not None and won.result.reason == "target"
    record = won.record()
    reached = [FOUR[s] for s in range(4) if won.result.scores[s] >= 1001]
    said = f"{' and '.join(reached)} reached the target (1001) in deal {won.result.deals}"
    assert end_reason(record) == said
    assert f"ended: {said}" in _shown(tmp_path, record).splitlines()
    assert match_summary("m", record)["ended"] == said

    capped = _played(dataclasses.replace(PRESETS["1001"], max_deals=2), NAMES, 4)
    assert capped.result is not None and capped.result.reason == "max_deals"
    record = capped.record()
    said = "the deal cap (max_deals 2) after deal 2: placed by score"
    assert f"ended: {said}" in _shown(tmp_path, record).splitlines()
    assert match_summary("m", record)["ended"] == said
    # a time limit says the clock (its own line in `arena replay`, as before)
    timed = {**record, "time_limit_s": 30.0}
    assert match_summary("m", timed)["ended"] == (
        "time limit (match_timeout_s 30 s) after deal 2: placed by score"
    )
    # abandoned: every seat forfeited (the web's header said "ended: forfeits")
    abandoned = {**record, "result": {**record["result"], "reason": "forfeits"}}
    assert end_reason(abandoned) == "every seat forfeited: abandoned in deal 2, all placed last"


def _declared(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(who, what) of every marriage a record declares, as `arena replay` now says it."""
    out = []
    for deal in record["deals"]:
        for a in deal["actions"]:
            if a["action"].endswith(" declare"):
                card = a["action"].split()[1]
                if card.startswith("A"):
                    what = f"ace marriage: +{ACE_MARRIAGE_VALUE}"
                else:
                    suit = next(s for s in Suit if str(s) == card[-1])
                    what = f"{suit} marriage: +{suit.marriage_value}"
                out.append((record["players"][a["seat"]], what))
    return out


def test_a_declared_marriage_is_shown_with_its_points(tmp_path: Path) -> None:
    """Defect: a trick whose lead declared a marriage said "(bob declares the ♦ marriage)"
    and not what it scored; the declarer's take below added it in unseen (the web's
    marriages say "+80"). Each declaration now says its points, the ace marriage's too."""
    seen: set[str] = set()
    for seed in range(60):
        record = _played(dataclasses.replace(PRESETS["1001"], max_deals=3), NAMES, seed).record()
        text = _shown(tmp_path, record)
        for who, what in _declared(record):
            assert f"{who} declares the {what}" in text, (what, text)
            seen.add(what)
        if len(seen) == 4:
            break
    assert len(seen) == 4, seen
    # The ace marriage: ann holds the four aces, wins the first trick with 10♠ (nobody
    # else holds a spade above it, and no trump is set), then declares with an ace lead.
    hands = [
        parse_cards("A♠ A♣ A♦ A♥ 10♠ K♠ 9♣"),
        parse_cards("Q♠ J♠ 9♠ K♣ Q♣ J♣ 10♣"),
        parse_cards("K♦ Q♦ J♦ 10♦ 9♦ K♥ Q♥"),
    ]
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=1)
    game = Game.new(ruleset, 1, NAMES, deals={0: (hands, parse_cards("J♥ 10♥ 9♥"))}, dealer=2)
    for seat, text in [(1, "pass"), (2, "pass"), (0, "give 9♣ to 1"), (0, "give 9♥ to 2"),
                       (0, "contract 100"), (0, "play 10♠")]:  # fmt: skip
        game.apply(parse_action(text), seat=seat)
    while game.to_act != 0:
        game.apply_trusted(game.legal_actions()[0])
    game.apply(parse_action("play A♥ declare"), seat=0)
    rng = random.Random(1)
    while not game.is_over:
        game.apply_trusted(rng.choice(game.legal_actions()))
    record = game.record()
    assert _declared(record) == [("ann", "ace marriage: +200")]
    assert "ann declares the ace marriage: +200" in _shown(tmp_path, record)


def test_who_sits_on_the_barrel_is_said_after_each_deal(tmp_path: Path) -> None:
    """Defect: `arena replay` said when a player got on the barrel and when he came off,
    and nothing in between: a sitter whose defender take then scored +0 (RULES.md, the
    barrel) had nothing beside it to say why, nor how many deals he had left (the web's
    seat boxes say "barrel 2"). Each deal that leaves someone on the barrel now says who,
    with the deals left."""
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=1)
    # ann sits on the barrel with 3 deals left; she deals, so she is not first hand (who
    # would be committed to 100), and passes: a defender on the barrel for one deal
    game = Game.new(ruleset, 5, NAMES, scores=(880, 0, 0), barrel=(3, 0, 0), dealer=0)
    rng = random.Random(5)
    while not game.is_over:
        legal = game.legal_actions()
        mine = game.to_act == 0 and game.phase is Phase.BIDDING
        game.apply_trusted(Pass() if mine else rng.choice(legal))
    record = game.record()
    result = game.deal_results[0]
    assert result.declarer != 0 and result.deltas[0] == 0 and result.barrel == (2, 0, 0)
    lines = _shown(tmp_path, record).splitlines()
    assert "on the barrel after this deal: ann (0), 2 deals left" in lines
