"""Review round 54d: the rest of round 54's hand mutants (tests/review/
test_mutation_review_round54.py: 158 written, 64 run there) of engine/game.py,
engine/record.py, sdk/sampling.py and sdk/local.py, run here against the engine's, the
records' and the SDK's tests and round 54's own. Each test names the mutant it kills (its
id and the edit) in its docstring.

Run (a clone per run, ``pytest -x``, not slow): the G and R mutants against round 54's
test groups (tests/engine: play, refusals, set-up, views; records: tests/engine and
tests/arena's replay audits), S and L against tests/sdk's sampling and local-play tests,
each with tests/review/test_mutation_review_round54.py first; a mutant left alive there
against the other tests that name its code (grep). 93 mutants: G5, G8, G11, G14, G19,
G24, G30-G63, G65 but G45 and G47 (round 54's tests kill them), R3-R20, S3-S20, L3-L20.

- Killed by existing tests (66): G5, G11, G19, G30, G31, G33-G43, G48-G51, G55, G56, G58,
  G60, G62, G65; by round 54's tests G8, G14, G24, G59, G61; outside the groups G44
  (tests/engine/test_rules_audit.py), G53 (test_rule_cases_external.py), G63
  (test_rules_audit_round3.py), R16 (tests/arena/test_referee_units.py), L17
  (tests/sdk/test_limits_round42.py); R4-R6, R8, R9, R13, R14; S3-S11, S13-S16, S18,
  S19; L3, L4, L9, L11, L12, L14, L15, L18.
- Killed by the tests here (17): G52, G54, R7, R10, R11, R12, R15, R17, R18, R19, R20,
  L6, L7, L8, L16, L19, L20.
- Equivalent (9): G32 (a bid or contract at its cap, a multiple of the step and at least
  the floor, is legal: opening_bid is a multiple of bid_step, caps of 20, contracts run
  from the bid to the cap by 5; it never reaches the refusal), G46 (3 or 4 hands of the
  right sizes and a talon of 3, every card 0..23 and none twice, are 24 cards of 24: the
  whole deck), G57 (a clone's ``_won_nonace`` is read only for a seat holding the four
  aces, which never won a trick with one: its bit is ``_won``'s, as G13), R3 (a seat on
  the barrel scores barrel_at > 0: ``any(barrel)`` implies ``any(scores)``), S12 (a card
  pinned to a seat with no cards left is an unseen one, so the unknown cards fall short
  of the free slots and ``_problem`` drops it further on: on 9 rulesets by 6 games the
  mutant's ``_problem`` was ``None`` wherever the original's was), S17 (its fact is
  ``[{seat: 0}]``, the dominance filter dropping every other set: met by every deal), S20
  (``counts[TALON]`` exists only while the talon is face down: 3), L5 (a bid or pass that
  ends a deal starts the next in the auction, or ends the match), L10
  (``order.index(0)`` is ``r``).
- Left (1): L13 (a late answer exactly at its limit plus the bank: two monotonic clock
  readings equal to the float, as round 54's L2).

No live mutant showed a defect. Round 54's one failure of
``tests/sdk/test_sampling_round18.py::test_every_view_of_real_games[1001-4p+talon_visible
=False]`` (under S1, a no-op there: must_beat is off) was its runner's ``--timeout 120``
on a loaded machine (138 s alone): the test's draws and games are the same under every
hash seed and test order; its brute-force bid reference now walks the declarer's ten
cards' triples, not every 3 of 24 (6.5 CPU s to 1.1).
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any

import pytest

from bots.random_bot import RandomBot
from engine import PRESETS, Bid, Game, Pass, observe, parse_action
from engine.actions import fallback_action
from engine.record import (
    ReplayError,
    forfeit_result,
    record,
    replay,
    seed_mismatches,
    start_game,
)
from sdk import local
from sdk.local import SeriesResult, mean_ci95, play_series, record_decisions

NAMES3 = ["a", "b", "c"]


# ------------------------------------------------------------------ engine/game.py


@pytest.mark.parametrize("what", ["scores", "barrel"])
def test_game_new_refuses_a_bool_among_the_start_values(what: str) -> None:
    """G52 (``_start_values`` without ``not isinstance(v, bool)``): ``scores=(True, 0, 0)``
    is a caller's mistake (a flag where a score goes), not a start at 1 point; ``barrel``
    likewise. Said naming the argument, as a dict or a text already is."""
    with pytest.raises(ValueError, match=rf"{what} must be 3 integers, one per seat, got"):
        Game.new("classic", 1, NAMES3, **{what: (True, 0, 0)})  # type: ignore[arg-type]
    assert Game.new("classic", 1, NAMES3, scores=(1, 0, 0)).scores == (1, 0, 0)


def test_the_auction_is_one_tuple_until_the_next_bid_or_pass() -> None:
    """G54 (``auction`` no longer keeps what it made): its docstring promises "the same
    tuple until the next bid or pass", which every view of a decision shares (``bids``);
    rebuilt at each call, each view walked the deal's actions again."""
    g = Game.new("classic", 1, NAMES3)
    first = g.auction()
    assert g.auction() is first
    seat = g.to_act
    g.apply(Bid(100) if Bid(100) in g.legal_actions() else Pass(), seat=seat)
    after = g.auction()
    assert after is not first and after[: len(first)] == first and len(after) == len(first) + 1
    assert g.auction() is after
    assert observe(g, 0).bids is observe(g, 1).bids is after


# ------------------------------------------------------------------ engine/record.py


@pytest.mark.parametrize("deal", [0, 1])
def test_replay_refuses_a_deal_whose_dealer_was_edited(deal: int) -> None:
    """R7 (``replay`` without its check of a deal's ``dealer``): a record whose deal names
    a dealer the rules did not seat replayed as genuine, the rest of it checking out (the
    game deals from its own dealer); it must be refused naming the deal and both seats."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed=3, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    rec = record(g)
    assert replay(rec).result == g.result  # (the genuine record replays)
    true_dealer = rec["deals"][deal]["dealer"]
    rec["deals"][deal]["dealer"] = (true_dealer + 1) % 3
    with pytest.raises(
        ReplayError,
        match=rf"deal {deal}: dealer is {true_dealer}, the record says {(true_dealer + 1) % 3}",
    ):
        replay(rec)


@pytest.mark.parametrize("by", ["forced", "fallback"])
def test_a_marked_move_by_the_wrong_seat_is_refused_as_out_of_turn(by: str) -> None:
    """R10 (``_check_by`` without ``entry["seat"] != game.to_act``): a move marked as the
    referee's (``forced``, ``fallback``) under a seat whose turn it is not is first of all
    out of turn; the mutant judged the mark against the other seat's legal actions and
    reported "marked forced (the only legal action), but 2 were legal" or "marked as the
    referee's fallback", not the rule the move breaks."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=1), seed=3, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    rec = record(g)
    entry = rec["deals"][0]["actions"][0]
    assert entry["action"].startswith("bid")  # (of 2 or more legal; not the fallback, a pass)
    actor = entry["seat"]
    entry["seat"], entry["by"] = (actor + 1) % 3, by
    with pytest.raises(ReplayError, match=r"deal 0, action 0 \(seat \d: bid \d+\) refused: ") as e:
        replay(rec)
    assert "marked" not in str(e.value) and "turn" in str(e.value)


def test_an_incident_numbered_after_the_last_deal_is_accepted_and_one_past_it_refused() -> None:
    """R11 (``not 0 <= deal < deals``): an answer that comes once the last deal is over is
    numbered as the state after it, deal ``len(deals)`` (a timeout at the match's end);
    the mutant refused such a genuine record as "past the record's 2 deal(s)"."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed=3, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    rec = record(g)
    rec["incidents"] = [{"kind": "timeout", "seat": 1, "deal": 2, "detail": "late"}]
    assert replay(rec).result == g.result
    rec["incidents"][0]["deal"] = 3
    with pytest.raises(ReplayError, match=r"incident 0 \(timeout\): deal 3 is past the record's 2"):
        replay(rec)


def _fallback_match_record() -> dict[str, Any]:
    """A two-deal classic match played by the referee's fallbacks, whose deal 0's last
    move is marked ``"by": "fallback"`` (the seat's), with no incident yet."""
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed=3, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(fallback_action(g.legal_actions()))
    rec = record(g)
    rec["deals"][0]["actions"][-1]["by"] = "fallback"
    rec["incidents"] = []
    return rec


def test_an_older_referees_strike_after_a_deals_last_fallback_pairs_with_it() -> None:
    """R12 (``_ends_in_unpaired_fallback(..., deal)`` for ``deal - 1``): an older referee
    noted the strike behind a deal's last move (a fallback) after the deal, under the next
    deal's number; that strike pairs with the fallback of the deal before. The mutant
    looked for it in the strike's own deal and refused the genuine record."""
    rec = _fallback_match_record()
    seat = rec["deals"][0]["actions"][-1]["seat"]
    rec["incidents"] = [{"kind": "timeout", "seat": seat, "deal": 1, "detail": "late"}]
    assert replay(rec).is_over
    # Deal 0 ending in no fallback, the strike of deal 1 answers nothing: refused.
    del rec["deals"][0]["actions"][-1]["by"]
    rec["deals"][0]["actions"][0]["by"] = "fallback"  # (a record that says who chose)
    with pytest.raises(ReplayError, match=rf"seat {seat} has 1 strike\(s\) in deal 1, but"):
        replay(rec)


def test_a_deals_last_fallback_answered_in_its_deal_pairs_with_no_later_strike() -> None:
    """R19 (``fallbacks > strikes`` as ``>=``): deal 0's last fallback already answers a
    strike of deal 0; a strike of deal 1 with no fallback there pairs with nothing and is
    refused. The mutant paired it with that answered fallback a second time."""
    rec = _fallback_match_record()
    seat = rec["deals"][0]["actions"][-1]["seat"]
    rec["incidents"] = [{"kind": "timeout", "seat": seat, "deal": 0, "detail": "late"}]
    assert replay(rec).is_over
    rec["incidents"].append({"kind": "timeout", "seat": seat, "deal": 1, "detail": "late"})
    with pytest.raises(ReplayError, match=rf"seat {seat} has 1 strike\(s\) in deal 1, but"):
        replay(rec)


def test_a_move_marked_forced_among_two_legal_actions_is_refused() -> None:
    """R20 (``len(legal) > 2`` for ``!= 1``): ``forced`` says the move was the only legal
    one, not asked; with two legal (a contract or a concession, two cards to follow) the
    mark is false and refused. The mutant let two legal actions pass as forced."""
    rec = _fallback_match_record()
    g = start_game(rec)
    for deal in rec["deals"]:
        for entry in deal["actions"]:
            if len(g.legal_actions()) == 2 and "by" not in entry:
                entry["by"] = "forced"
                break
            g.apply(parse_action(entry["action"]), seat=entry["seat"])
        else:
            continue
        break
    else:
        raise AssertionError("no decision between exactly two legal actions")
    with pytest.raises(ReplayError, match=r"marked forced \(the only legal action\), but 2 "):
        replay(rec)


def _two_deal_record() -> tuple[Game, dict[str, Any]]:
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), seed=3, players=NAMES3)
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[0])
    return g, record(g)


def test_forfeit_result_places_every_seat_last_when_all_forfeited() -> None:
    """R15 (``len(stay) + 1`` without ``if stay else n``): when every seat forfeited (the
    last may on the match's last action, which ends it), each is placed n-th, as in an
    abandoned match; the mutant placed all of them 1st, each credited a first place, and
    a shared one (winner None)."""
    g, _ = _two_deal_record()
    assert g.result is not None
    out = forfeit_result(g.result.to_dict(), [2, 0, 1], 1000)
    assert out["places"] == [3, 3, 3] and out["winner"] is None
    assert out["forfeits"] == [0, 1, 2]
    assert out["shortfalls"] == [1000 - s for s in g.result.scores]
    assert forfeit_result(g.result.to_dict(), [1], 1000)["places"][1] == 3


def test_seed_mismatches_leaves_deals_swapped_in_number_to_the_replay() -> None:
    """R17 (every deal taken as at its place): two deals whose numbers were swapped hold,
    at their places, the very cards the seed deals; ``seed_mismatches`` names none (the
    replay names the numbering), where the mutant named both as dealt other cards."""
    _, rec = _two_deal_record()
    rec["deals"][0]["number"], rec["deals"][1]["number"] = 1, 0
    assert seed_mismatches(rec) == []
    with pytest.raises(ReplayError, match="deal 0: numbered 1, expected 0"):
        replay(rec)
    rec["deals"][0]["number"] = 0
    rec["deals"][1]["hands"][0][0], rec["deals"][1]["talon"][0] = (
        rec["deals"][1]["talon"][0],
        rec["deals"][1]["hands"][0][0],
    )
    rec["deals"][1]["number"] = 1
    assert seed_mismatches(rec) == [1]  # (cards of its own at its place: named)


def test_a_record_without_a_result_key_replays_its_finished_match() -> None:
    """R18 (``_check_result`` refusing a missing key as a null one): a record needs only
    ruleset, seed, players and deals (docs/record-format.md); one without ``result``
    whose actions finish the match replays. A ``null`` one is refused, naming it."""
    g, rec = _two_deal_record()
    del rec["result"]
    assert replay(rec).result == g.result
    rec["result"] = None
    with pytest.raises(ReplayError, match="result: null, but the match is over"):
        replay(rec)


# ------------------------------------------------------------------ sdk/local.py


def _tied_series(
    monkeypatch: pytest.MonkeyPatch, n: int, reasons: tuple[str, ...] = ("max_deals",)
) -> SeriesResult:
    """A series of ``n`` 3-player matches each ending with seats 0 and 1 sharing the first
    place (1000 each, over 1 deal), seat 2 third; match i ends by ``reasons[i % len]``."""
    ended = iter(reasons * n)

    def tied(*args: object, **kwargs: object) -> SimpleNamespace:
        result = SimpleNamespace(
            places=(1, 1, 3), scores=(1000, 1000, 0), deals=1, reason=next(ended)
        )
        return SimpleNamespace(
            result=result, incidents=(), slowest=(0.0, 0.0, 0.0), slowest_at=("", "", "")
        )

    monkeypatch.setattr(local, "play_local", tied)
    return play_series(RandomBot, [("random", RandomBot)], n, name="me")


def test_a_shared_first_place_is_no_ones_win_in_a_series(monkeypatch: pytest.MonkeyPatch) -> None:
    """L6 (``_add`` counting ``places[seat] == 1`` alone): a first place shared is no win
    (``GameResult.winner`` is None); counted for each seat sharing it, the series' wins
    added up to more than its matches (here 6 of 3)."""
    r = _tied_series(monkeypatch, 3)
    assert [e.matches for e in r.entries] == [3, 3, 3]
    assert [e.wins for e in r.entries] == [0, 0, 0]
    assert [e.places for e in r.entries] == [5, 5, 5]  # (1 + 1 + 3 from each seat)


def test_a_rotation_cut_short_gives_no_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """L8 (``_whole`` without ``len(m) == players``): 4 matches of 3 players are one whole
    rotation (the bot in each seat of seed 0) and one match of the next; the margins are
    the whole rotation's only, as SeriesResult says (a seed played from one seat compares
    the bot with itself in no other seat)."""
    r = _tied_series(monkeypatch, 4)
    assert r.matches == 4 and r.capped == 4
    # (seat 0 and seat 1 tie at 1000, seat 2 has 0: the bot's margin is +500, +500, -1000)
    assert r.margins == [0.0]


def test_mean_ci95_takes_t_from_its_table_up_to_30_degrees_of_freedom() -> None:
    """L7 (``df < len(_T975)``): at 30 degrees of freedom (31 values) the table's 2.042
    applies, not the large-sample formula 1.96 + 2.37/30 = 2.039."""
    xs = [0.0, 2.0] * 15 + [1.0]
    mean, low, high = mean_ci95(xs)
    half = 2.042 * math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / 30 / 31)
    assert mean == pytest.approx(1.0)
    assert low == pytest.approx(mean - half, abs=1e-12)
    assert high == pytest.approx(mean + half, abs=1e-12)


def test_record_decisions_says_who_chose_each_action() -> None:
    """L16 (``RecordedDecision.by`` always ``""``): a referee's record says who chose an
    action (``bot``, ``forced``, ``fallback``); the decision read from it says the same,
    and ``""`` where the record does not say."""
    rec = _fallback_match_record()
    rec["deals"][1]["actions"][0]["by"] = "bot"
    got = {(d.deal, d.index): d.by for d in record_decisions(rec)}
    last = len(rec["deals"][0]["actions"]) - 1
    assert got[0, last] == "fallback" and got[1, 0] == "bot"
    assert {by for key, by in got.items() if key not in ((0, last), (1, 0))} == {""}


def test_a_series_counts_as_capped_only_the_matches_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """L19 (``capped += 1``): ``capped`` counts the matches ended by ``max_deals`` before
    anyone won, not those that reached the target (here 2 of 4)."""
    r = _tied_series(monkeypatch, 4, ("target", "max_deals"))
    assert r.matches == 4 and r.capped == 2


def test_mean_ci95_of_one_value_is_that_value_with_no_bound() -> None:
    """L20 (``len(xs) < 1``): one value has no spread to measure (0 degrees of freedom):
    its interval is infinite both ways, as the docstring says; the mutant divided by 0."""
    assert mean_ci95([3.5]) == (3.5, -math.inf, math.inf)
    mean, low, high = mean_ci95([3.0, 4.0])
    assert mean == 3.5 and low < 3.0 and high > 4.0  # (two: t = 12.706)
