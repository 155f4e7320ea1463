"""Round 47: RULES.md's options in combination, and each number option at its edges.

Single options are pinned elsewhere (round 40's ``test_rules_options_round40.py``, whose
crafted base deal and helpers this file reuses, and the drawn-ruleset oracle of round 37).
Here: the full products of the options a rule-checker would cross (a concession under
``concede`` × ``concede_pays`` × ``rounding`` × 3 or 4 players; a sitter's concession
under ``concede`` × ``concede_pays`` × ``barrel_mode`` when a half seats a newcomer; the
barrel numbers all off their defaults together), play rules across a marriage that moves
the trump under ``must_beat``, the 4-player dealer reaching the target with the declarer,
every number option at the edge of its range and just outside it in a TOML file, and the
invariants of RULES.md over random rulesets (hypothesis).

The expected numbers are worked out by hand from RULES.md in each case's docstring or
comment. Seating as round 40's: 3 players with dealer 2 (F = 0, S = 1, L = 2); 4 players
with dealer 3 (who sits out).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, Play, Ruleset, RulesetError, load_ruleset, observe, parse_action, replay
from tests.engine.test_properties import PROFILE, play_random_deals
from tests.engine.test_rules_options_round40 import (
    F,
    L,
    S,
    act,
    f_declares,
    new_game,
    rules,
    s_declares_105,
    sweep,
)


# ----------------------------------------------------------------- a concession, every way
@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("rounding", [1, 5])
@pytest.mark.parametrize("pays", ["half", "none"])
@pytest.mark.parametrize("concede", ["free", "penalty"])
def test_a_concession_at_an_odd_bid_under_every_combination(
    concede: str, pays: str, rounding: int, players: int
) -> None:
    """S wins the bidding at 105 and concedes (RULES.md §6): he scores 0 (``free``) or
    −105 (``penalty``); each opponent dealt in half of 105 = 52.5 rounded half up to the
    unit, 53 (unit 1) or 55 (unit 5), or nothing (``concede_pays = none``). With 4 players
    the dealer, who sits out, gets no half but scores the talon 10♥ 9♣ 9♦ = 10 points."""
    r = rules(concede=concede, concede_pays=pays, rounding=rounding, players=players)
    game = new_game(r)
    s_declares_105(game)
    act(game, (S, "concede"))
    half = {1: 53, 5: 55}[rounding] if pays == "half" else 0
    expected = [half, -105 if concede == "penalty" else 0, half] + ([10] if players == 4 else [])
    assert game.scores == tuple(expected)
    res = game.deal_results[-1]
    assert (res.outcome, res.bid, res.contract) == ("conceded", 105, None)
    assert res.takes == (0,) * players  # nothing played: no take


@pytest.mark.parametrize("mode", ["many", "one"])
@pytest.mark.parametrize(
    ("concede", "pays", "scores", "barrel", "events"),
    [
        # F's half 53 takes him from 830 to 883, set to 880: he gets on. S, the sitter,
        # stays on after a free concession (one of his deals used up) ...
        ("free", "half", {"many": (880, 880, 53), "one": (880, 760, 53)},
         {"many": (3, 1, 0), "one": (3, 0, 0)},
         {"many": ("seat 0 gets on the barrel",),
          # ... but under barrel_mode = "one" the newcomer knocks him off: 880 − 120.
          "one": ("seat 1 is knocked off the barrel: -120", "seat 0 gets on the barrel")}),
        # A penalty concession drops the sitter (−105) under either mode, and the newcomer
        # of the same deal does not knock him off again: one fall, one charge.
        ("penalty", "half", {"many": (880, 775, 53), "one": (880, 775, 53)},
         {"many": (3, 0, 0), "one": (3, 0, 0)},
         {m: ("seat 1 concedes and falls off the barrel", "seat 0 gets on the barrel")
          for m in ("many", "one")}),
        # No halves: nobody reaches the barrel; the sitter sits on (free) or falls (penalty).
        ("free", "none", {m: (830, 880, 0) for m in ("many", "one")},
         {m: (0, 1, 0) for m in ("many", "one")}, {m: () for m in ("many", "one")}),
        ("penalty", "none", {m: (830, 775, 0) for m in ("many", "one")},
         {m: (0, 0, 0) for m in ("many", "one")},
         {m: ("seat 1 concedes and falls off the barrel",) for m in ("many", "one")}),
    ],
)  # fmt: skip
def test_a_sitters_concession_when_a_half_seats_a_newcomer(
    mode: str,
    concede: str,
    pays: str,
    scores: dict[str, tuple[int, ...]],
    barrel: dict[str, tuple[int, ...]],
    events: dict[str, tuple[str, ...]],
) -> None:
    """S sits on the barrel (2 deals left), wins the bidding at 105 and concedes; F stands
    at 830, L at 0."""
    r = rules(concede=concede, concede_pays=pays, barrel_mode=mode)
    game = new_game(r, scores=(830, 880, 0), barrel=(0, 2, 0))
    s_declares_105(game)
    act(game, (S, "concede"))
    assert game.scores == scores[mode]
    assert game.barrel == barrel[mode]
    assert game.deal_results[-1].events == events[mode]


# ----------------------------------------------------------------- the barrel's numbers changed
#: Every barrel number off its default at once (and the target with it).
SMALL_BARREL = {"target": 600, "barrel_at": 500, "barrel_deals": 2, "barrel_penalty": 50}


@pytest.mark.parametrize(
    ("mode", "scores", "barrel", "events"),
    [
        ("many", (500, 0, 500), (2, 0, 1), ("seat 0 gets on the barrel",)),
        ("one", (500, 0, 450), (2, 0, 0),
         ("seat 2 is knocked off the barrel: -50", "seat 0 gets on the barrel")),
    ],
)  # fmt: skip
def test_a_newcomer_at_a_changed_barrel_at(
    mode: str, scores: tuple[int, ...], barrel: tuple[int, ...], events: tuple[str, ...]
) -> None:
    """F (400) makes his committed 100 by taking every trick: 500 = barrel_at, on for
    barrel_deals = 2 deals; L sits there (2 left), his defender take (0) unscored: under
    ``many`` he stays (1 left), under ``one`` he is knocked off for barrel_penalty = 50."""
    game = new_game(rules(**SMALL_BARREL, barrel_mode=mode), scores=(400, 0, 500), barrel=(0, 0, 2))
    f_declares(game, "contract 100")
    sweep(game)
    assert game.scores == scores
    assert game.barrel == barrel
    assert game.deal_results[-1].events == events


def test_a_win_from_a_changed_barrel_sets_the_changed_target() -> None:
    """F sits at barrel_at 500 and makes a contract of 120: he wins with the target 600
    (RULES.md: "wins the game (score 1000)", the classic target); the others keep their
    scores (their takes are 0) and owe their shortfalls to 600."""
    game = new_game(rules(**SMALL_BARREL), scores=(500, 300, 450), barrel=(2, 0, 0))
    f_declares(game, "contract 120")
    sweep(game)
    assert game.result is not None
    assert game.result.scores == (600, 300, 450)
    assert game.result.places == (1, 3, 2)
    assert game.result.shortfalls == (0, 300, 150)
    assert (game.result.winner, game.result.reason) == (0, "target")


def test_a_made_contract_below_120_on_the_last_changed_barrel_deal() -> None:
    """F sits at 500 with 1 deal left (of barrel_deals = 2) and makes only 100: it scores
    nothing, and his second deal on the barrel ends: −50 and off."""
    game = new_game(rules(**SMALL_BARREL), scores=(500, 0, 0), barrel=(1, 0, 0))
    f_declares(game, "contract 100")
    sweep(game)
    assert game.scores == (450, 0, 0)
    assert game.barrel == (0, 0, 0)
    assert game.deal_results[-1].events == ("seat 0 sat 2 deals on the barrel: -50",)


def test_two_newcomers_and_the_sitter_fall_then_the_deal_cap_ties_all_three() -> None:
    """``barrel_mode = "one"`` with the small barrel and ``max_deals = 1``: F sits (2 left)
    and concedes freely at 100; S (460) and L (470) reach 500 with their halves of 50 in
    the same deal: both fall (−50 each from 500) and so does F (knocked off: 500 − 50).
    All three at 450 when the cap ends the match: one shared first place, no winner, each
    150 short of the target 600."""
    r = rules(**SMALL_BARREL, barrel_mode="one", max_deals=1)
    game = new_game(r, scores=(500, 460, 470), barrel=(2, 0, 0))
    f_declares(game, "concede")
    res = game.deal_results[-1]
    assert res.scores == (450, 450, 450)
    assert res.events == (
        "seat 0 is knocked off the barrel: -50",
        "seat 1 reaches the barrel with another and falls off: -50",
        "seat 2 reaches the barrel with another and falls off: -50",
    )
    assert game.result is not None
    assert game.result.places == (1, 1, 1)
    assert game.result.winner is None
    assert game.result.shortfalls == (150, 150, 150)
    assert game.result.reason == "max_deals"


# ----------------------------------------------------------------- must_beat across marriages
#: F: ♥ and ♣ marriages and three spades; S and L as below; talon Q♦ J♦ 9♦. F (first hand,
#: committed to 100) keeps Q♦ and gives 9♦ to S, J♦ to L.
TRUMP_HANDS = (
    "K♥ Q♥ K♣ Q♣ A♠ 10♠ 9♠",
    "A♥ 10♥ J♥ 9♣ J♣ A♦ 10♦",
    "9♥ A♣ 10♣ K♠ Q♠ J♠ K♦",
)


def _plays(game: Game) -> set[str]:
    return {str(a) for a in game.legal_actions()}


def test_must_beat_follows_each_new_trump_and_the_old_one_obliges_nobody() -> None:
    """``must_beat`` on and ``marriage_needs_trick`` off (RULES.md §7, §8):

    1. F declares ♣ on his first lead (K♣): trump ♣. S follows ♣ and cannot beat K♣ (J♣,
       9♣ are lower): either. L must beat: A♣ or 10♣. L takes it with 10♣.
    2. L declares ♠ (K♠): trump ♠. F must beat K♠: A♠ or 10♠, not 9♠. S, void in ♠ and
       in the new trump, may play any card: his 9♣, the old trump, obliges nothing.
       F takes it with 10♠ (S discards).
    3. F declares ♥ (Q♥): trump ♥. S must beat Q♥: A♥ or 10♥, not J♥. L follows with his
       only ♥, 9♥, which cannot beat.
    """
    r = rules(must_beat=True, marriage_needs_trick=False)
    game = new_game(r, hands=TRUMP_HANDS, talon="Q♦ J♦ 9♦")
    act(game, (S, "pass"), (L, "pass"), (F, "give 9♦ to 1"), (F, "give J♦ to 2"))
    act(game, (F, "contract 100"), (F, "play K♣ declare"))
    assert game.trump is not None and str(game.trump) == "♣"
    assert _plays(game) == {"play 9♣", "play J♣"}
    act(game, (S, "play J♣"))
    assert _plays(game) == {"play A♣", "play 10♣"}
    act(game, (L, "play 10♣"))
    assert game.tricks[-1].winner == L
    act(game, (L, "play K♠ declare"))
    assert str(game.trump) == "♠"
    assert _plays(game) == {"play A♠", "play 10♠"}
    act(game, (F, "play 10♠"))
    assert _plays(game) == {f"play {c}" for c in ("A♥", "10♥", "J♥", "9♣", "A♦", "10♦", "9♦")}
    act(game, (S, "play 9♣"))
    assert game.tricks[-1].winner == F
    act(game, (F, "play Q♥ declare"))
    assert str(game.trump) == "♥"
    assert _plays(game) == {"play A♥", "play 10♥"}
    act(game, (S, "play 10♥"))
    assert _plays(game) == {"play 9♥"}
    act(game, (L, "play 9♥"))
    assert game.tricks[-1].winner == S
    # Each marriage scored at once: F ♣ 60 + ♥ 100, L ♠ 40.
    assert [game.marriage_points(s) for s in (F, S, L)] == [160, 0, 40]


# ----------------------------------------------------------------- 1001 with four: the target
#: The last hand L holds all six ♦ and A♥; the talon 10♥ K♥ 9♣ (14 points, the dealer's).
#: L gives 9♣ to F and K♥ to S and keeps ♦ × 6, A♥, 10♥: leading A♦, then K♦ declaring
#: the ♦ marriage (trump ♦, nobody else holds one), the other ♦, A♥ and 10♥, he takes all
#: eight tricks: 120 card points + 80 = 200.
LAST_HAND_SWEEP = ("A♠ 10♠ K♠ Q♠ J♠ 9♠ Q♥", "A♣ 10♣ K♣ Q♣ J♣ J♥ 9♥", "A♦ 10♦ K♦ Q♦ J♦ 9♦ A♥")
LAST_HAND_LEADS = ("A♦", "K♦ declare", "Q♦", "10♦", "J♦", "9♦", "A♥", "10♥")


@pytest.mark.parametrize(
    ("start", "after", "places", "winner", "shortfalls"),
    [
        # L reaches 1050, the dealer 1004: both reach 1001, the higher wins.
        ((0, 0, 850, 990), (0, 0, 1050, 1004), (3, 3, 1, 2), 2, (1001, 1001, 0, 0)),
        # The dealer, who sat the deal out, ends higher (1009 against 1005): he wins.
        ((0, 0, 805, 995), (0, 0, 1005, 1009), (3, 3, 2, 1), 3, (1001, 1001, 0, 0)),
        # Equal at 1010: a shared first place, no winner; the others share place 3.
        ((0, 0, 810, 996), (0, 0, 1010, 1010), (3, 3, 1, 1), None, (1001, 1001, 0, 0)),
        # Below the target: the dealer's 14 is not rounded to 15 (it is no take).
        ((0, 0, 0, 0), None, None, None, None),
    ],
)
def test_1001_four_players_all_pass_raise_and_the_dealer_reaching_the_target(
    start: tuple[int, ...],
    after: tuple[int, ...] | None,
    places: tuple[int, ...] | None,
    winner: int | None,
    shortfalls: tuple[int, ...] | None,
) -> None:
    """1001 with 4 players: F and S pass, so the last hand L takes the talon at the opening
    bid 40 (RULES.md "Preset 1001") and raises the contract to his cap 120 + ♦ 80 = 200; he
    makes it (+200) while the dealer scores the talon's 14 points, whatever happens at the
    table. Several reaching the target in one deal: the highest wins, equal scores share
    a place (1, 1, 3)."""
    r = load_ruleset("1001-4p")
    game = new_game(r, scores=start, hands=LAST_HAND_SWEEP, talon="10♥ K♥ 9♣")
    act(game, (F, "pass"), (S, "pass"))
    assert game.last_hand_take and game.declarer == L and game.bid == 40
    act(game, (L, "give 9♣ to 0"), (L, "give K♥ to 1"))
    assert max(a.amount for a in game.legal_actions() if str(a).startswith("contract")) == 200  # type: ignore[attr-defined]
    act(game, (L, "contract 200"))
    sweep(game, LAST_HAND_LEADS)
    res = game.deal_results[-1]
    assert res.takes == (0, 0, 200, 0)
    assert res.deltas == (0, 0, 200, 14)
    if after is None:
        assert not game.is_over and game.scores == (0, 0, 200, 14)
        return
    assert game.result is not None
    assert game.result.scores == after
    assert game.result.places == places
    assert game.result.winner == winner
    assert game.result.shortfalls == shortfalls


# ----------------------------------------------------------------- the options' ranges, in TOML
def _load(tmp_path: Path, **options: object) -> Ruleset:
    lines = ['preset = "classic"', 'name = "edge"']
    for key, value in options.items():
        shown = str(value).lower() if isinstance(value, bool) else repr(value).replace("'", '"')
        lines.append(f"{key} = {shown}")
    path = tmp_path / "edge.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_ruleset(path)


#: (options, the value read back): each at the edge of its valid range.
VALID_EDGES: list[dict[str, Any]] = [
    {"players": 3}, {"players": 4},
    {"target": 881}, {"target": 1_000_000},
    {"opening_bid": 5}, {"opening_bid": 120},
    {"bid_step": 120, "opening_bid": 120}, {"bid_step": 5},
    {"rounding": 1}, {"rounding": 1_000_000},
    {"barrel_at": 1}, {"barrel_at": 999},
    # (barrel_at without the barrel is refused as unused: test_house_rules_round47.py)
    {"target": 1_000_000, "barrel_at": 999_999},
    {"barrel_deals": 1}, {"barrel_deals": 1_000_000},
    {"barrel_penalty": 0}, {"barrel_penalty": 1_000_000},
    # (throw_in_bonus on classic, which has no throw-in, is refused as unused since round 53:
    # test_rulebook_round53.py)
    {"first_hand_commits": False, "all_pass": "last_hand", "throw_in_bonus": 0},
    {"first_hand_commits": False, "all_pass": "last_hand", "throw_in_bonus": 1_000_000},
    # (a 4-player table: one of 3 has no dealer sitting out, and refuses it as unused)
    {"players": 4, "nines_talon_value": 0}, {"players": 4, "nines_talon_value": 1_000_000},
    {"max_deals": 0}, {"max_deals": 1_000_000},
]  # fmt: skip


@pytest.mark.parametrize(
    "options", VALID_EDGES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
)
def test_each_number_option_at_the_edge_of_its_range_is_accepted(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    r = _load(tmp_path, **options)
    assert {k: getattr(r, k) for k in options} == options


#: (options, the option named, words of its range): each just outside its valid range.
INVALID_EDGES: list[tuple[dict[str, Any], str, str]] = [
    ({"players": 2}, "players", "must be 3 or 4"),
    ({"players": 5}, "players", "must be 3 or 4"),
    ({"target": 0}, "target", "must be positive"),
    ({"target": 1_000_001}, "target", "at most 1000000"),
    ({"target": 880}, "barrel_at", "below target 880"),
    ({"opening_bid": 0}, "opening_bid", "must be positive"),
    ({"opening_bid": 125}, "opening_bid", "at most 120"),
    ({"opening_bid": 105, "bid_step": 10}, "opening_bid", "multiple of bid_step 10"),
    ({"bid_step": 0}, "bid_step", "must be positive"),
    ({"bid_step": 7}, "bid_step", "a multiple of 5 from 5 to 120"),
    # A step above 120 leaves no valid opening bid: the step is the mistake.
    ({"bid_step": 125, "opening_bid": 120}, "bid_step", "a multiple of 5 from 5 to 120"),
    ({"bid_step": 200}, "bid_step", "a multiple of 5 from 5 to 120"),
    ({"rounding": 0}, "rounding", "must be positive"),
    ({"rounding": 1_000_001}, "rounding", "at most 1000000"),
    ({"barrel_at": 0}, "barrel_at", "must be positive"),
    ({"barrel_at": 1000}, "barrel_at", "below target 1000"),
    ({"barrel_deals": 0}, "barrel_deals", "must be positive"),
    ({"barrel_deals": 1_000_001}, "barrel_deals", "at most 1000000"),
    ({"barrel_penalty": -1}, "barrel_penalty", "must not be negative"),
    ({"barrel_penalty": 1_000_001}, "barrel_penalty", "at most 1000000"),
    ({"throw_in_bonus": -1}, "throw_in_bonus", "must not be negative"),
    ({"throw_in_bonus": 1_000_001}, "throw_in_bonus", "at most 1000000"),
    ({"nines_talon_value": -1}, "nines_talon_value", "must not be negative"),
    ({"nines_talon_value": 1_000_001}, "nines_talon_value", "at most 1000000"),
    ({"max_deals": -1}, "max_deals", "must not be negative"),
    ({"max_deals": 1_000_001}, "max_deals", "at most 1000000"),
    ({"concede": "maybe"}, "concede", "one of 'free', 'penalty', 'off'"),
    ({"concede_pays": "all"}, "concede_pays", "one of 'half', 'none'"),
    ({"barrel_mode": "two"}, "barrel_mode", "one of 'many', 'one'"),
    ({"all_pass": "dealer"}, "all_pass", "one of 'first_hand', 'last_hand'"),
]


@pytest.mark.parametrize(
    ("options", "key", "words"),
    INVALID_EDGES,
    ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(INVALID_EDGES)],
)
def test_each_option_just_outside_its_range_is_refused_naming_it(
    tmp_path: Path, options: dict[str, Any], key: str, words: str
) -> None:
    with pytest.raises(RulesetError) as e:
        _load(tmp_path, **options)
    assert e.value.key == key
    assert words in e.value.message
    assert f"edge.toml: {key}: " in str(e.value)  # (the file, then the option)


# ----------------------------------------------------------------- invariants, random rulesets
@st.composite
def rulesets(draw: st.DrawFn) -> Ruleset:
    """Any valid ruleset: every option drawn within the range docs/rules-engine.md gives
    (the ends of each range among the draws)."""
    step = draw(st.sampled_from([5, 10, 15, 20, 25, 30, 40, 60, 120]))
    barrel = draw(st.booleans())
    target = draw(st.one_of(st.integers(2, 1500), st.just(1_000_000)))
    big = st.just(1_000_000)
    return Ruleset(
        name="drawn",
        players=draw(st.sampled_from([3, 4])),
        target=target,
        opening_bid=step * draw(st.integers(1, 120 // step)),
        bid_step=step,
        first_hand_commits=draw(st.booleans()),
        ace_marriage_counts_for_bid=draw(st.booleans()),
        talon_visible=draw(st.booleans()),
        concede=draw(st.sampled_from(["free", "penalty", "off"])),
        concede_pays=draw(st.sampled_from(["half", "none"])),
        must_beat=draw(st.booleans()),
        marriage_needs_trick=draw(st.booleans()),
        ace_marriage=draw(st.booleans()),
        rounding=draw(st.one_of(st.integers(1, 30), big)),
        barrel=barrel,
        barrel_at=draw(
            st.integers(1, target - 1) if barrel else st.one_of(st.integers(1, 2000), big)
        ),
        barrel_deals=draw(st.one_of(st.integers(1, 4), big)),
        barrel_penalty=draw(st.one_of(st.integers(0, 300), big)),
        barrel_mode=draw(st.sampled_from(["many", "one"])),
        all_pass=draw(st.sampled_from(["first_hand", "last_hand"])),
        throw_in_bonus=draw(st.one_of(st.integers(0, 100), big)),
        nines_talon_value=draw(st.one_of(st.integers(0, 150), big)),
        max_deals=draw(st.integers(0, 4)),
        ask_forced=draw(st.booleans()),
    )


@settings(max_examples=60, **PROFILE)
@given(rule=rulesets(), seed=st.integers(0, 2**31 - 1), rng=st.randoms(use_true_random=False))
def test_the_invariants_hold_under_random_rulesets(
    rule: Ruleset, seed: int, rng: random.Random
) -> None:
    """RULES.md "Invariants" under any valid ruleset, not only the presets: the deal
    checks of ``play_random_deals`` (the 24 cards partitioned, 8 cards each after the
    pass, legal plays as the independent oracle says, ``must_beat`` included, 8 tricks
    and 120 card points, scores moved by the deltas), a player's view holding no card he
    may not see, and the record replaying to the same states."""
    views = 0

    def on_step(game: Game, _action: object) -> None:
        # What each seat may see of the cards: his own dealt and held cards (a card passed
        # to him among them), the cards played, and the talon once shown to him.
        nonlocal views
        played = {a.card for _, a in game.actions if isinstance(a, Play)}
        for s in game.active_seats:
            view = observe(game, s)
            allowed = set(game.dealt_hands[s]) | set(game.hand(s)) | played
            if view.talon is not None:
                allowed |= set(game.talon)
            shown = set(view.hand) | set(view.talon or ()) | {c for _, c in view.trick}
            shown |= {c for _, c in view.gives if c is not None}
            shown |= {c for t in view.tricks for _, c in t.cards}
            assert shown <= allowed, (s, shown - allowed)
            views += 1

    game = play_random_deals(rule, seed, rng, deals=2, on_step=on_step)
    again = replay(game.record())
    assert again.scores == game.scores
    assert again.result == game.result
    assert [observe(again, s) for s in range(rule.players)] == [
        observe(game, s) for s in range(rule.players)
    ]
    assert views  # (the views were looked at)


def test_a_crafted_action_script_replays_under_a_combined_ruleset() -> None:
    """A record of the concession case above, under a ruleset crossing four options,
    replays to the same scores (the record keeps the crafted deal and start position)."""
    r = rules(concede="penalty", concede_pays="half", rounding=5, barrel_mode="one")
    game = new_game(r, scores=(830, 880, 0), barrel=(0, 2, 0))
    s_declares_105(game)
    game.apply(parse_action("concede"), seat=S)
    again = replay(game.record())
    assert again.scores == game.scores == (880, 775, 55)
    assert again.barrel == game.barrel == (3, 0, 0)
    assert again.record() == game.record()
