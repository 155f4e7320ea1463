"""Round 50: RULES.md's invariants over *whole games*, the barrel included (hypothesis).

The earlier property tests stop after a few deals (``test_properties.py``: 1-3 deals of the
presets; round 47: 2 deals of a drawn ruleset; round 10's oracle: at most 6 deals). Here
each example is a match played to its end (the target, or a cap of 16 deals), from a drawn
position near the barrel and the target that docs/rules-engine.md lets ``Game.new`` start
from, under a ruleset crossing every option RULES.md names (each preset, 3 and 4 players,
the barrel switched on or off and its numbers changed), with random legal play that
concedes and throws in. Checked, from RULES.md's text:

- "Hands and the talon partition the 24 cards; after the pass every player holds 8": at
  every step, the hands, the cards played this deal and the talon (until taken) are the
  24 cards once each; in the play every active seat holds 8 minus the tricks done;
- "The card points taken in a deal sum to 120; a deal has exactly 8 tricks" (a deal
  played out; a conceded or thrown-in deal takes no card points);
- every deal moves the scores by its deltas; a sitter's score is ``barrel_at`` with 1 to
  ``barrel_deals`` deals left, under ``barrel_mode = "one"`` one sitter at most; with the
  barrel, nobody else reaches ``barrel_at``, and the target is reached only "by winning
  the bidding and making a contract of at least 120" from the barrel;
- the result: "places by score ... equal scores share a place, numbered 1, 1, 3",
  "each loser's shortfall to the target", the winner, the reason and the deal count;
- "Replaying a recorded deal's actions from its seed reproduces every state and score":
  a fresh ``Game.new`` with the record's start, fed the recorded actions one by one, has
  the same full state (every field docs/rules-engine.md lists, every seat's view) at every
  step, and ``replay(record)`` the same deal results and result;
- a clone played on its own way leaves its game's state as it was.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    DECK,
    Card,
    Concede,
    Contract,
    Game,
    Pass,
    Phase,
    Play,
    Ruleset,
    ThrowIn,
    load_ruleset,
    parse_action,
    replay,
)

from .test_bad_input_round50 import full_state
from .test_properties import PROFILE

NAMES = ["ann", "bob", "cid", "dan"]


@st.composite
def rulesets(draw: st.DrawFn) -> Ruleset:
    base = load_ruleset(draw(st.sampled_from(["classic", "1001", "1001-4p"])))
    barrel = draw(st.booleans())
    return dataclasses.replace(
        base,
        name="drawn",
        first_hand_commits=draw(st.booleans()),
        ace_marriage_counts_for_bid=draw(st.booleans()),
        talon_visible=draw(st.booleans()),
        concede=draw(st.sampled_from(["free", "penalty", "off"])),
        concede_pays=draw(st.sampled_from(["half", "none"])),
        must_beat=draw(st.booleans()),
        marriage_needs_trick=draw(st.booleans()),
        ace_marriage=draw(st.booleans()),
        rounding=draw(st.sampled_from([1, 5, 10])),
        barrel=barrel,
        barrel_at=draw(st.sampled_from([880, 600])) if barrel else base.barrel_at,
        barrel_deals=draw(st.sampled_from([1, 3])) if barrel else base.barrel_deals,
        barrel_penalty=draw(st.sampled_from([0, 120])) if barrel else base.barrel_penalty,
        barrel_mode=draw(st.sampled_from(["many", "one"])) if barrel else base.barrel_mode,
        all_pass=draw(st.sampled_from(["first_hand", "last_hand"])),
        max_deals=16,
    )


def start_position(r: Ruleset, rng: random.Random) -> tuple[list[int], list[int]]:
    """A position docs/rules-engine.md accepts: near the barrel and the target."""
    n = r.players
    top = r.barrel_at if r.barrel else r.target
    scores = [rng.choice([0, -130, top - 300, top - 150, top - 45, top - 5]) for _ in range(n)]
    barrel = [0] * n
    if r.barrel:
        for s in rng.sample(range(n), 1 if r.barrel_mode == "one" else rng.randrange(n + 1)):
            if rng.random() < 0.5:
                scores[s], barrel[s] = r.barrel_at, rng.randint(1, r.barrel_deals)
    return scores, barrel


def pick(game: Game, rng: random.Random) -> object:
    legal = game.legal_actions()
    quits = [a for a in legal if isinstance(a, Concede | ThrowIn)]
    if quits and rng.random() < 0.2:
        return rng.choice(quits)
    rest = [a for a in legal if not isinstance(a, Concede | ThrowIn)]
    barrel = game.barrel
    if game.phase is Phase.CONTRACT and barrel and barrel[game.to_act] and rng.random() < 0.7:
        # a sitter goes for the win (a contract of at least 120) when the cap lets him
        wins = [a for a in rest if isinstance(a, Contract) and a.amount >= 120]
        if wins:
            return wins[0]
    if game.phase is Phase.BIDDING and Pass() in rest and rng.random() < 0.5:
        return Pass()
    if game.phase is Phase.PLAYING:
        declares = [a for a in rest if isinstance(a, Play) and a.declare]
        if declares and rng.random() < 0.7:
            return rng.choice(declares)
    return rng.choice(rest)


def check_cards(game: Game) -> None:
    n = len(game.players)
    played = [c for t in game.tricks for _, c in t.cards] + [c for _, c in game.trick]
    hands = [c for s in range(n) for c in game.hand(s)]
    talon_out = game.phase is Phase.BIDDING  # the talon is in a hand once taken
    every = hands + played + (list(game.talon) if talon_out else [])
    assert sorted(every) == sorted(DECK), "hands, talon and played cards partition the deck"
    if game.phase is Phase.PLAYING:
        done = len(game.tricks)
        for s in game.active_seats:
            in_trick = sum(1 for seat, _ in game.trick if seat == s)
            assert len(game.hand(s)) == 8 - done - in_trick
        assert len(game.hand(game.dealer)) == (0 if n == 4 else 8 - done - sum(
            1 for seat, _ in game.trick if seat == game.dealer))  # fmt: skip


def check_deal(game: Game, before: tuple[int, ...], barrel_before: tuple[int, ...] | None,
               plays: int) -> None:  # fmt: skip
    r = game.ruleset
    res = game.deal_results[-1]
    n = len(game.players)
    if res.outcome in ("made", "failed"):
        assert plays == 8 * 3, "a deal has exactly 8 tricks"
        assert sum(res.card_points) == 120
    else:
        assert plays == 0 and sum(res.card_points) == 0
    assert res.takes == tuple(
        c + m for c, m in zip(res.card_points, res.marriage_points, strict=True)
    )
    assert res.scores == game.scores
    assert tuple(b + d for b, d in zip(before, res.deltas, strict=True)) == res.scores
    if not r.barrel:
        assert res.barrel is None and not res.events
        return
    assert res.barrel is not None and barrel_before is not None
    sitters = [s for s in range(n) if res.barrel[s]]
    for s in sitters:
        assert res.scores[s] == r.barrel_at and 1 <= res.barrel[s] <= r.barrel_deals
    if r.barrel_mode == "one":
        assert len(sitters) <= 1
    for s in range(n):
        if res.scores[s] >= r.target:
            # "He wins the game by winning the bidding and making a contract of at least 120"
            assert barrel_before[s] and res.declarer == s and res.outcome == "made"
            assert res.contract is not None and res.contract >= 120
            assert res.scores[s] == r.target
        elif not res.barrel[s] and r.barrel_penalty:
            assert res.scores[s] < r.barrel_at, (s, res)


def check_result(game: Game) -> None:
    r = game.ruleset
    res = game.result
    assert res is not None and game.is_over and game.to_act is None
    scores = res.scores
    assert scores == game.scores == game.deal_results[-1].scores
    assert res.places == tuple(1 + sum(o > s for o in scores) for s in scores)
    top = max(scores)
    leaders = [s for s, v in enumerate(scores) if v == top]
    assert res.winner == (leaders[0] if len(leaders) == 1 else None)
    assert res.shortfalls == tuple(
        0 if s == res.winner else max(0, r.target - v) for s, v in enumerate(scores)
    )
    assert res.deals == len(game.deal_results)
    reached = top >= r.target
    assert res.reason == ("target" if reached else "max_deals")
    if not reached:
        assert res.deals == r.max_deals


MATCHES = given(rule=rulesets(), seed=st.integers(0, 2**31 - 1), play=st.integers(0, 2**31 - 1))


@settings(max_examples=25, **PROFILE)
@MATCHES
def test_whole_games_keep_the_invariants(rule: Ruleset, seed: int, play: int) -> None:
    play_and_check(rule, seed, play)


@pytest.mark.slow
@settings(max_examples=400, **PROFILE)
@MATCHES
def test_whole_games_keep_the_invariants_large_sweep(rule: Ruleset, seed: int, play: int) -> None:
    play_and_check(rule, seed, play)


def play_and_check(rule: Ruleset, seed: int, play: int) -> None:
    # (the play's choices come from a seeded Random: a whole match drawn through hypothesis
    # would be far past its size limits)
    rng = random.Random(play)
    scores, barrel = start_position(rule, rng)
    names = NAMES[: rule.players]
    dealer = rng.randrange(rule.players)
    game = Game.new(rule, seed, names, scores=scores, barrel=barrel, dealer=dealer)
    before, barrel_before, plays = game.scores, game.barrel, 0
    states = [full_state(game, record=False)]
    while not game.is_over:
        check_cards(game)
        if rng.random() < 0.05:  # a clone that goes its own way changes nothing here
            state, other = full_state(game, record=False), game.clone()
            while not other.is_over and other.deal_number == game.deal_number:
                other.apply_trusted(rng.choice(other.legal_actions()))
            assert full_state(game, record=False) == state
        action = pick(game, rng)
        number = game.deal_number
        plays += isinstance(action, Play)
        game.apply(action, seat=game.to_act)
        states.append(full_state(game, record=False))
        if game.deal_number != number or game.is_over:
            check_deal(game, before, barrel_before, plays)
            before, barrel_before, plays = game.scores, game.barrel, 0
    check_result(game)
    # Replay, step by step, from the record's start and actions.
    rec = game.record()
    start = rec.get("start", {})
    again = Game.new(rule, seed, names, scores=start.get("scores"), barrel=start.get("barrel"),
                     dealer=start.get("dealer", dealer))  # fmt: skip
    assert full_state(again, record=False) == states[0]
    step = 1
    for deal in rec["deals"]:
        for entry in deal["actions"]:
            seat = entry["seat"]
            again.apply(parse_action(entry["action"]), seat=seat)
            assert full_state(again, record=False) == states[step], (deal["number"], entry)
            step += 1
    assert step == len(states)
    assert again.record() == rec
    back = replay(rec)
    assert back.deal_results == game.deal_results and back.result == game.result


def test_the_card_list_is_the_deck() -> None:
    """(The partition checks above compare with ``DECK``: the 24 cards, each once.)"""
    assert sorted(DECK) == [Card(i) for i in range(24)]
