"""Rule cases end to end (round 43): matches played through a real referee on port 0 by
scripted bots (raw gRPC clients, and SDK bots), on seeds chosen so that a rule matters,
each seat's messages, the record and ``arena replay``'s scores checked against scores
computed by hand from RULES.md.

Round 35 (``test_rules_over_wire_round35.py``) checks every request's legal actions and
every deal *without* the barrel against a model of the rule book; the barrel it checks by
its events only. Here :func:`hand_scores` scores every deal of a record from RULES.md
alone, the barrel included (on it, its count of deals, falling off by a failed contract, a
penalty concession or the count, ``barrel_mode = "one"``, the win from it), and
:func:`check_scores` holds the referee's every view of the scores to it: each seat's
``deal_ended`` and ``match_ended``, the record returned and written, and the table of
``arena replay``. Each case asserts that its rule did arise on its seed (a changed
shuffle fails loudly rather than passing).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena_cli
from arena.protocol import action_to_pb
from arena.v1 import arena_pb2 as pb
from engine import (
    Bid,
    Card,
    Concede,
    Contract,
    Game,
    Pass,
    Phase,
    Rank,
    Ruleset,
    Suit,
    ThrowIn,
    parse_action,
    parse_card,
)
from engine.actions import Action
from tests.e2e.test_rules_over_wire_round35 import (
    NAMES3,
    Played,
    Policy,
    _cards,
    _classic,
    _deal_results,
    _half_up,
    _marriages_in,
    _places,
    _preset,
    _talon_points,
    check_match,
    play,
    rules_deal,
    scripted,
)

# ----------------------------------------------------------------------------- RULES.md


@dataclasses.dataclass
class Scored:
    """One deal as RULES.md scores it: what each seat gains, the scores and the deals left
    on the barrel after it, and the barrel's happenings as (seat, what) pairs."""

    deltas: list[int]
    scores: list[int]
    barrel: list[int]
    happened: list[tuple[int, str]]


def declarer_of(deal: dict[str, Any]) -> int:
    """The declarer of a recorded deal: who acts first after the auction (gives, throws in)."""
    return next(a["seat"] for a in deal["actions"] if not a["action"].startswith(("bid", "pass")))


def said(deal: dict[str, Any], kind: str) -> list[tuple[int, int]]:
    """(seat, amount) of each ``bid``/``contract`` said in a recorded deal."""
    return [
        (a["seat"], int(a["action"].split()[1]))
        for a in deal["actions"]
        if a["action"].startswith(kind + " ")
    ]


def raw_deltas(deal: dict[str, Any], rules: Ruleset) -> tuple[str, int, int | None, list[int]]:
    """(outcome, bid, contract, score changes before the barrel) of a recorded deal, from
    RULES.md §6, §10 and the 1001 throw-in alone."""
    n = rules.players
    acts = [(a["seat"], parse_action(a["action"])) for a in deal["actions"]]
    # The winning bid: the last one said, or the opening bid nobody raised (§2).
    bid = max((a.amount for _, a in acts if isinstance(a, Bid)), default=rules.opening_bid)
    declarer = declarer_of(deal)
    opps = [s for s in range(n) if s != declarer and deal["hands"][s]]
    raw = [0] * n
    if any(isinstance(a, ThrowIn) for _, a in acts):
        outcome, contract = "thrown_in", None
        for s in opps:
            raw[s] = rules.throw_in_bonus
    elif any(isinstance(a, Concede) for _, a in acts):
        outcome, contract = "conceded", None
        raw[declarer] = -bid if rules.concede == "penalty" else 0
        for s in opps:
            raw[s] = _half_up(bid, rules.rounding) if rules.concede_pays == "half" else 0
    else:
        played = rules_deal(deal, rules)
        assert played["declarer"] == declarer
        contract = played["contract"]
        outcome = "made" if played["made"] else "failed"
        raw = list(played["deltas"])
    if n == 4:
        raw[deal["dealer"]] = _talon_points(deal["talon"], rules)
    return outcome, bid, contract, raw


def hand_scores(record: dict[str, Any], rules: Ruleset) -> list[Scored]:
    """Every deal of ``record`` scored from RULES.md ("The barrel and the end"), not from
    the engine's code."""
    n = rules.players
    scores, left = [0] * n, [0] * n
    out = []
    for deal in record["deals"]:
        outcome, bid, contract, raw = raw_deltas(deal, rules)
        d = declarer_of(deal)
        old = scores[:]
        happened: list[tuple[int, str]] = []
        if not rules.barrel or (
            not any(left) and max(o + r for o, r in zip(old, raw, strict=True)) < rules.barrel_at
        ):
            new = [o + r for o, r in zip(old, raw, strict=True)]
        else:
            sitting = [x > 0 for x in left]
            new = old[:]
            for s in range(n):
                if not sitting[s]:
                    new[s] += raw[s]
                    continue
                # On the barrel: his defender takes, halves, bonuses are not scored.
                if s == d and outcome == "made" and contract is not None and contract >= 120:
                    new[s], left[s] = rules.target, 0
                    happened.append((s, "wins"))
                    continue
                if s == d and outcome == "failed":
                    new[s], left[s] = old[s] - contract, 0  # type: ignore[operator]
                    happened.append((s, "fails"))
                    continue
                if s == d and outcome == "conceded" and rules.concede == "penalty":
                    new[s], left[s] = old[s] - bid, 0
                    happened.append((s, "concedes"))
                    continue
                left[s] -= 1  # a made contract below 120, a free concession: nothing
                if not left[s]:
                    new[s] -= rules.barrel_penalty
                    happened.append((s, "sat"))
            come = [s for s in range(n) if not sitting[s] and new[s] >= rules.barrel_at]
            for s in come:
                new[s] = rules.barrel_at
            if rules.barrel_mode == "many" or not come:
                for s in come:
                    left[s] = rules.barrel_deals
                    happened.append((s, "gets on"))
            else:
                for s in range(n):
                    if left[s]:  # a sitter still there: knocked off
                        new[s] -= rules.barrel_penalty
                        left[s] = 0
                        happened.append((s, "knocked off"))
                if len(come) == 1:
                    left[come[0]] = rules.barrel_deals
                    happened.append((come[0], "gets on"))
                else:
                    for s in come:
                        new[s] -= rules.barrel_penalty
                        happened.append((s, "falls off with another"))
        scores = new
        out.append(
            Scored([a - b for a, b in zip(new, old, strict=True)], new[:], left[:], happened)
        )
        if max(new) >= rules.target:
            break
    return out


#: The words of a barrel event (the engine's ``DealResult.events``) for each happening.
EVENT_WORDS = {
    "wins": "wins from the barrel",
    "fails": "fails the contract and falls off the barrel",
    "concedes": "concedes and falls off the barrel",
    "sat": " sat ",
    "gets on": "gets on the barrel",
    "knocked off": "is knocked off the barrel",
    "falls off with another": "reaches the barrel with another and falls off",
}


def replay_table(path: Path) -> list[tuple[list[int], list[int]]]:
    """(deltas, scores) of each deal as ``arena replay`` prints them."""
    res = CliRunner().invoke(arena_cli, ["replay", str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    out = []
    for line in res.output.splitlines():
        m = re.search(r"deltas (.*?)\s+scores (.*)$", line)
        if m:
            deltas = [int(x) for x in re.findall(r"[+-]\d+", m.group(1))]
            scores = [int(x) for x in m.group(2).split(",")]
            out.append((deltas, scores))
    return out


def check_scores(p: Played, tmp: Path) -> list[Scored]:
    """Every view of the scores the product gives, against :func:`hand_scores`: each
    seat's ``deal_ended`` (deltas, scores, barrel, the events' words) and ``match_ended``
    (scores, places by score with ties sharing, shortfalls), the record returned and the
    record file, and ``arena replay``'s lines and its ``--check``. Also round 35's
    :func:`check_match` (every request, view and event)."""
    check_match(p)
    rules = p.ruleset
    want = hand_scores(p.record, rules)
    n = rules.players
    assert len(p.record["deals"]) == len(want)
    for seat in range(n):
        got = _deal_results(p, seat)
        assert len(got) == len(want)
        for i, (r, w) in enumerate(zip(got, want, strict=True)):
            where = f"seat {seat}, deal {i}"
            assert list(r.deltas) == w.deltas, where
            assert list(r.scores) == w.scores, where
            if rules.barrel:
                # (the wire says -1 for "not on it": docs/protocol.md)
                assert [b if b > 0 else -1 for b in w.barrel] == list(r.barrel), where
            said = sorted((int(re.match(r"seat (\d)", e).group(1)), e) for e in r.events)  # type: ignore[union-attr]
            assert len(said) == len(w.happened), (where, list(r.events), w.happened)
            for (s, text), (hs, what) in zip(said, sorted(w.happened), strict=True):
                assert s == hs and EVENT_WORDS[what] in text, (where, text, what)
        final = want[-1].scores
        end = p.ended(seat).result
        assert list(end.scores) == final
        assert list(end.places) == _places(final)
        firsts = [s for s in range(n) if final[s] == max(final)]
        assert list(end.shortfalls) == [
            0 if firsts == [s] else max(0, rules.target - x) for s, x in enumerate(final)
        ]
    for rec in (p.record, p.lines[-1]["record"]):
        assert [(d["deltas"], d["scores"]) for d in rec["deals"]] == [
            (w.deltas, w.scores) for w in want
        ]
        assert rec["result"]["scores"] == want[-1].scores
    path = tmp / f"{p.match_id}.jsonl"
    assert replay_table(path) == [(w.deltas, w.scores) for w in want]
    res = CliRunner().invoke(arena_cli, ["replay", "--check", str(path)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return want


def happened(want: list[Scored]) -> list[tuple[int, int, str]]:
    """(deal, seat, what) of every barrel happening of a match."""
    return [(i, s, what) for i, w in enumerate(want) for s, what in w.happened]


# ----------------------------------------------------------------------------- policies


def barrel_policy(*, sitter: str = "120", others: str = "contract", pass_p: float = 0.6) -> Policy:
    """Scripted moves where a seat on the barrel acts as told. As declarer it names
    ``sitter``: ``"120"`` (120 if allowed, else the lowest contract; in the auction it
    then bids as high as 120 when it may: it wins only with 120), ``"contract"`` (the
    lowest) or ``"concede"``. Every other declarer names ``others`` the same way."""
    base = scripted(pass_p=pass_p, contract="contract")

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        v = req.view
        on = bool(v.barrel) and v.barrel[seat] > 0
        legal = list(v.legal_actions)
        if on and sitter == "120" and v.phase == pb.PHASE_BIDDING:
            bids = [a for a in legal if a.WhichOneof("kind") == "bid" and a.bid.amount <= 120]
            return bids[-1] if bids else action_to_pb(Pass())
        if v.phase == pb.PHASE_CONTRACT:
            how = sitter if on else others
            kinds = [a.WhichOneof("kind") for a in legal]
            if how == "concede" and "concede" in kinds:
                return action_to_pb(Concede())
            if how == "120" and any(a.contract.amount == 120 for a in legal):
                return action_to_pb(Contract(120))
            return next(a for a in legal if a.WhichOneof("kind") == "contract")
        return base(seat, req)

    return policy


BARREL = {"target": 500, "barrel_at": 300, "barrel_deals": 3}


# ----------------------------------------------------------------------------- the barrel


def _sitter_deals(p: Played, want: list[Scored]) -> list[tuple[int, dict[str, Any], Scored]]:
    """(deal, record deal, scored) of the deals whose declarer sat on the barrel at their start."""
    out = []
    for i, (d, w) in enumerate(zip(p.record["deals"], want, strict=True)):
        before = want[i - 1].barrel if i else [0] * p.ruleset.players
        if before[declarer_of(d)]:
            out.append((i, d, w))
    return out


CASES = {
    # every declarer concedes (free): a sitter conceding stays on, his count running down;
    # the halves paid to a sitter are not scored; after 3 deals he falls off, -120.
    "free-concession": (
        _classic(**BARREL, max_deals=12, concede="free"),
        5,
        scripted(pass_p=0.85, contract="concede"),
        {"gets on", "sat"},
    ),
    # a sitter who concedes under `concede = penalty` pays the bid and falls off.
    "penalty-concession": (
        _classic(**BARREL, max_deals=14, concede="penalty"),
        2,
        barrel_policy(sitter="concede", pass_p=0.5),
        {"gets on", "concedes"},
    ),
    # `barrel_mode = "one"`: two reach it in one deal and both fall off from 300, the sitter
    # already there too.
    "one-two-at-once": (
        _classic(**BARREL, max_deals=14, barrel_mode="one"),
        2,
        barrel_policy(sitter="concede", others="concede", pass_p=0.7),
        {"gets on", "knocked off", "falls off with another"},
    ),
    # a sitter's made contract below 120 scores nothing; a failed one costs it and drops him.
    "below-120-and-fails": (
        _classic(**BARREL, max_deals=14),
        3,
        barrel_policy(sitter="contract", pass_p=0.5),
        {"gets on", "sat", "fails"},
    ),
    # a sitter who bids and makes 120 wins: his score is the target, the match ends.
    "wins": (
        _classic(**BARREL, max_deals=14),
        9,
        barrel_policy(sitter="120", pass_p=0.5),
        {"gets on", "wins"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_barrel_scored_by_hand(tmp_path: Path, case: str) -> None:
    """RULES.md, the barrel (at 300 of 500, 3 deals): every deal's score changes, scores and
    deals left, as each seat was told them, the record and ``arena replay`` show them,
    equal the rule book's; and the case's happenings did arise."""
    rules, seed, policy, kinds = CASES[case]
    p = play(tmp_path, rules, seed, policy)
    want = check_scores(p, tmp_path)
    seen = {what for _, _, what in happened(want)}
    assert kinds <= seen, (case, happened(want))
    # (deal, declarer, record deal, scored) of the deals a sitter declared
    sitters = [(i, declarer_of(d), d, w) for i, d, w in _sitter_deals(p, want)]
    if case == "free-concession":
        # a sitter conceding for free keeps his 300, one deal less to sit; a sitter is
        # paid no half
        free = [(i, s, w) for i, s, d, w in sitters if d["outcome"] == "conceded"]
        assert free, "no sitter conceded"
        assert any(
            w.deltas[s] == 0 and w.barrel[s] == want[i - 1].barrel[s] - 1 for i, s, w in free
        )
        for i, w in enumerate(want[1:], 1):
            for s in range(3):
                if want[i - 1].barrel[s] and w.barrel[s]:
                    assert (w.deltas[s], w.scores[s]) == (0, 300)
    if case == "penalty-concession":
        i, s, d, w = next(x for x in sitters if x[2]["outcome"] == "conceded")
        bid = max((x for _, x in said(d, "bid")), default=rules.opening_bid)
        assert (w.deltas[s], w.scores[s], w.barrel[s]) == (-bid, 300 - bid, 0)
    if case == "one-two-at-once":
        for w in want:
            fell = [s for s, what in w.happened if what == "falls off with another"]
            if fell:
                assert len(fell) == 2 and all(w.scores[s] == 180 for s in fell)
                assert w.barrel == [0, 0, 0]
    if case == "below-120-and-fails":
        made = [(s, d, w) for _, s, d, w in sitters if d["outcome"] == "made"]
        assert made, "no sitter made a contract"
        for s, d, w in made:
            ((_, c),) = said(d, "contract")
            assert c < 120 and (w.deltas[s], w.scores[s]) == (0, 300)
        _, s, d, w = next(x for x in sitters if x[2]["outcome"] == "failed")
        ((_, c),) = said(d, "contract")
        assert (w.deltas[s], w.scores[s], w.barrel[s]) == (-c, 300 - c, 0)
    if case == "wins":
        final = want[-1].scores
        assert max(final) == 500 and p.record["result"]["reason"] == "target"
        assert list(p.ended(0).result.places)[final.index(500)] == 1


# ----------------------------------------------------------------------------- 1001


def _raise_to(amount: int, base: Policy) -> Policy:
    """``base``, but a declarer names ``amount`` (or the highest contract below it)."""

    def policy(seat: int, req: pb.DecisionRequest) -> pb.Action:
        v = req.view
        if v.phase == pb.PHASE_CONTRACT:
            ok = [a for a in v.legal_actions if a.WhichOneof("kind") == "contract"]
            return max(
                (a for a in ok if a.contract.amount <= amount), key=lambda a: a.contract.amount
            )
        return base(seat, req)

    return policy


@pytest.mark.parametrize("players", [3, 4])
def test_1001_the_last_hand_after_an_all_pass_raises_the_contract(
    tmp_path: Path, players: int
) -> None:
    """RULES.md, preset 1001: both seats before the last hand pass; he takes the talon at 40
    and raises the contract (to 80 here): made, he scores 80, failed -80; the opponents'
    takes rounded to fives (2.5 up), the 4-player dealer the talon's points unrounded; every
    seat told so, the record and ``arena replay`` too."""
    rules = _preset("1001", max_deals=2, players=players)
    names = NAMES3 if players == 3 else ["ann", "bob", "cid", "dan"]
    first, second, last = Game.new(rules, 11, names).active_seats
    moves = {0: [(first, "pass"), (second, "pass")]}
    p = play(tmp_path, rules, 11, _raise_to(80, scripted(moves, keep=True)))
    want = check_scores(p, tmp_path)
    d0 = p.record["deals"][0]
    assert [a["action"] for a in d0["actions"][:2]] == ["pass", "pass"]
    assert any(a["seat"] == last and a["action"] == "contract 80" for a in d0["actions"])
    res = _deal_results(p)[0]
    assert (res.declarer, res.bid, res.contract) == (last, 40, 80)
    assert res.deltas[last] == (80 if res.takes[last] >= 80 else -80)
    for s in (first, second):
        take = res.takes[s]
        assert res.deltas[s] == (take + 2) // 5 * 5 and res.deltas[s] % 5 == 0
    assert any(res.takes[s] % 5 for s in (first, second)), "no take needed rounding"
    if players == 4:
        dealer = d0["dealer"]
        assert want[0].deltas[dealer] == _talon_points(d0["talon"], rules) == res.deltas[dealer]
        assert res.deltas[dealer] % 5, "the talon's points needed no rounding: no case"


# ----------------------------------------------------------------------------- SDK bots


def test_sdk_bots_whose_choices_are_given_are_told_the_barrel_as_the_rules_score_it(
    tmp_path: Path,
) -> None:
    """The "free-concession" barrel case played by bots of the SDK (``BotRunner``) whose
    every choice is given (a pass or the opening raise by a drawn number, a concession
    whenever offered): the deal results and the match result each bot is told equal the
    rule book's, barrel counts and events included."""
    import random

    from sdk import Bot
    from tests.support.harness import arena

    told: dict[int, list[Any]] = {}

    class Conceder(Bot):
        def act(self, view: Any) -> Action:
            legal = list(view.legal_actions)
            if Concede() in legal:
                return Concede()
            rng = random.Random(f"{view.seat}:{view.deal_number}:{len(legal)}")
            if view.phase is Phase.BIDDING:
                return Pass() if rng.random() < 0.8 else legal[0]
            return rng.choice(legal)

        def on_deal_end(self, view: Any, result: Any) -> None:
            told.setdefault(view.seat, []).append(result)

        def on_match_end(self, view: Any, result: Any) -> None:
            told.setdefault(view.seat, []).append(result)

    rules = _classic(**BARREL, max_deals=12, concede="free")

    async def main() -> dict[str, Any]:
        async with arena(tmp_path, decision_ms=20_000, time_bank_ms=0) as a:
            tasks = await a.runners(NAMES3, [Conceder] * 3, matches=1)
            record = await a.referee.run_match("m1", rules, 5, NAMES3)
            await asyncio.wait_for(asyncio.gather(*tasks), 30)
            await a.referee.end_streams()
            return record

    record = asyncio.run(main())
    want = hand_scores(record, rules)
    assert {what for _, _, what in happened(want)} >= {"gets on", "sat"}, happened(want)
    assert all(d["outcome"] == "conceded" for d in record["deals"])
    for seat in range(3):
        *deals, end = told[seat]
        assert [(list(r.deltas), list(r.scores), list(r.barrel)) for r in deals] == [
            (w.deltas, w.scores, w.barrel) for w in want
        ]
        assert [len(r.events) for r in deals] == [len(w.happened) for w in want]
        assert list(end.scores) == want[-1].scores and list(end.places) == _places(want[-1].scores)


# ----------------------------------------------------------------------------- contract


def test_a_raised_contract_and_a_second_marriage_changing_trumps(tmp_path: Path) -> None:
    """RULES.md §5, §8, §10 (classic): the declarer may name any contract from his bid up to
    120 + the marriages in his 8 cards, and names the top; ♦ then ♥ marriages are declared,
    each scoring at once and the second turning trumps from ♦ to ♥ in every view; the
    failed contract costs all of it, each opponent scores his take."""
    rules = _classic(max_deals=1)
    p = play(tmp_path, rules, 1, _raise_to(1000, scripted(salt="m", pass_p=0.5)))
    want = check_scores(p, tmp_path)
    d0 = p.record["deals"][0]
    declarer = next(a["seat"] for a in d0["actions"] if a["action"].startswith("give"))
    (req,) = [r.view for r in p.requests(declarer) if r.view.phase == pb.PHASE_CONTRACT]
    eight = set(_cards(req.hand))
    assert len(eight) == 8
    top = max(a.contract.amount for a in req.legal_actions if a.WhichOneof("kind") == "contract")
    assert top == max(req.bid, 120 + _marriages_in(eight, rules)) == 180
    assert any(a["seat"] == declarer and a["action"] == "contract 180" for a in d0["actions"])
    declared = [(a["seat"], a["action"]) for a in d0["actions"] if "declare" in a["action"]]
    assert [t for _, t in declared] == ["play Q♦ declare", "play Q♥ declare"]
    res = _deal_results(p)[0]
    assert d0["outcome"] == "failed" and want[0].deltas[declarer] == -180 == res.deltas[declarer]
    for s, text in declared:
        assert res.marriage_points[s] >= (80 if "♦" in text else 100)
    # the trump each seat was shown: none, then ♦, then ♥ (never back)
    for s in range(3):
        trumps = [
            r.view.trump
            for r in p.requests(s)
            if r.view.phase == pb.PHASE_PLAYING and r.view.trump != pb.SUIT_UNSPECIFIED
        ]
        seen = [t for i, t in enumerate(trumps) if i == 0 or trumps[i - 1] != t]
        assert seen in ([pb.SUIT_DIAMONDS, pb.SUIT_HEARTS], [pb.SUIT_HEARTS]), (s, seen)
    both = [r.view for s in range(3) for r in p.requests(s) if len(r.view.marriages) == 2]
    assert both, "no seat was asked after the second marriage"
    for v in both:
        assert [(m.suit, m.value) for m in v.marriages] == [
            (pb.SUIT_DIAMONDS, 80),
            (pb.SUIT_HEARTS, 100),
        ]
        assert v.trump == pb.SUIT_HEARTS


# ----------------------------------------------------------------------------- house barrels


HOUSE = {
    # barrel_penalty = 0, barrel_deals = 1: off after one deal at no cost, and a deal that
    # leaves him at 300 or more seats him again (docs/rules-engine.md)
    "no-penalty-one-deal": (
        _classic(**{**BARREL, "barrel_deals": 1}, max_deals=14, barrel_penalty=0),
        4,
        barrel_policy(sitter="contract", pass_p=0.5),
    ),
    # 1001 for 4 with the barrel: the dealer on the barrel scores nothing of the talon
    # (a defender's take), a sitter who bids and makes 120 wins
    "4p-wins": (
        _preset("1001-4p", **BARREL, barrel=True, max_deals=12),
        12,
        barrel_policy(pass_p=0.5),
    ),
    # ... and a sitter's penalty concession (1001: -bid, the others nothing) drops him
    "4p-concedes": (
        _preset("1001-4p", **BARREL, barrel=True, max_deals=12),
        12,
        barrel_policy(sitter="concede", pass_p=0.5),
    ),
}


@pytest.mark.parametrize("case", list(HOUSE))
def test_the_barrel_under_house_rules_scored_by_hand(tmp_path: Path, case: str) -> None:
    """House rulesets with the barrel (RULES.md's options, docs/rules-engine.md's
    decisions): every score each seat was told, the record and ``arena replay``, equal the
    rule book's, and the case did arise."""
    rules, seed, policy = HOUSE[case]
    p = play(tmp_path, rules, seed, policy)
    want = check_scores(p, tmp_path)
    events = [e for r in _deal_results(p) for e in r.events]
    if case == "no-penalty-one-deal":
        sat = [(i, s) for i, s, what in happened(want) if what == "sat"]
        assert sat and all(
            e.endswith("sat 1 deal on the barrel (no penalty)") for e in events if " sat " in e
        )
        # he keeps 300 and climbs on again in the next deal he does not lose points in
        again = [(i, s) for i, s in sat if (i + 1, s, "gets on") in happened(want)]
        assert again, happened(want)
        for i, s in again:
            assert want[i].scores[s] == 300 and want[i].deltas[s] == 0
            assert want[i + 1].scores[s] == 300 and want[i + 1].barrel[s] == 1
        return
    # the dealer of four, on the barrel, scores nothing of the talon
    deals = p.record["deals"]
    sitting_dealers = [
        (i, d["dealer"]) for i, d in enumerate(deals) if i and want[i - 1].barrel[d["dealer"]]
    ]
    assert sitting_dealers
    assert any(_talon_points(deals[i]["talon"], rules) for i, _ in sitting_dealers)
    for i, dealer in sitting_dealers:
        assert want[i].deltas[dealer] == 0 == _deal_results(p)[i].deltas[dealer]
    res = CliRunner().invoke(arena_cli, ["replay", str(tmp_path / "m1.jsonl")])
    shown = re.findall(r"sits out \(on the barrel: the talon \((\d+)\) is not scored\)", res.output)
    assert shown == [str(_talon_points(deals[i]["talon"], rules)) for i, _ in sitting_dealers]
    if case == "4p-wins":
        assert any("wins from the barrel" in e for e in events)
        assert max(want[-1].scores) == 500
    else:
        (i, s) = next((i, s) for i, s, what in happened(want) if what == "concedes")
        bid = max((x for _, x in said(deals[i], "bid")), default=rules.opening_bid)
        assert (want[i].deltas[s], want[i].scores[s]) == (-bid, 300 - bid)
        others = [x for x in range(4) if x not in (s, deals[i]["dealer"])]
        assert all(want[i].deltas[x] == 0 for x in others if not want[i - 1].barrel[x])


# ----------------------------------------------------------------------------- the end


def replay_standings(path: Path) -> list[tuple[int, str, int, int]]:
    """(place, player, score, shortfall) rows of ``arena replay``'s final standings."""
    res = CliRunner().invoke(arena_cli, ["replay", str(path)], catch_exceptions=False)
    rows = re.findall(r"│\s*(\d+) │ (\w+) \(\d\)\s*│\s*(-?\d+) │\s*(\d+) │", res.output)
    return [(int(a), b, int(c), int(d)) for a, b, c, d in rows]


@pytest.mark.parametrize("case", ["two-reach-the-target", "tie-at-the-cap"])
def test_the_end_places_and_shortfalls(tmp_path: Path, case: str) -> None:
    """RULES.md, the end: two players reaching the target in one deal (1001, target 250):
    the higher wins, the other is second with no shortfall; at the deal cap the standings
    decide and equal scores share the place (1, 1, 3), with nobody the winner. As each seat
    was told, the record has it, and ``arena replay`` prints it."""
    if case == "two-reach-the-target":
        rules = _preset("1001", target=250, max_deals=10)
        p = play(tmp_path, rules, 2, scripted(salt="t", pass_p=0.5, contract="contract"))
        want_scores, places, shortfalls, winner = [265, 255, 40], [1, 2, 3], [0, 0, 210], 0
        reason = "target"
    else:
        rules = _classic(**BARREL, max_deals=12, concede="penalty")
        p = play(tmp_path, rules, 5, scripted(pass_p=0.85, contract="concede"))
        want_scores, places, shortfalls, winner = [31, 31, -59], [1, 1, 3], [469, 469, 559], None
        reason = "max_deals"
        assert all(d["outcome"] == "conceded" for d in p.record["deals"])
    want = check_scores(p, tmp_path)
    assert want[-1].scores == want_scores
    result = p.record["result"]
    assert (result["places"], result["shortfalls"], result["winner"], result["reason"]) == (
        places,
        shortfalls,
        winner,
        reason,
    )
    for seat in range(3):
        end = p.ended(seat).result
        assert (list(end.places), list(end.shortfalls)) == (places, shortfalls)
    rows = replay_standings(tmp_path / "m1.jsonl")
    assert sorted(rows) == sorted(
        (places[s], NAMES3[s], want_scores[s], shortfalls[s]) for s in range(3)
    )


# ----------------------------------------------------------------------------- more options


def test_4p_concession_halves_go_to_the_two_opponents_dealt_in(tmp_path: Path) -> None:
    """1001 for 4 with ``concede = "free"``, ``concede_pays = "half"``: every declarer
    concedes; he scores 0, his two opponents dealt in half the bid rounded to fives (2.5
    up), the dealer who sits out the talon's points and no half (docs/rules-engine.md)."""
    rules = _preset("1001-4p", max_deals=4, concede="free", concede_pays="half")
    p = play(tmp_path, rules, 3, scripted(salt="c4", pass_p=0.4, contract="concede"))
    want = check_scores(p, tmp_path)
    halves = set()
    for d, w in zip(p.record["deals"], want, strict=True):
        if d["outcome"] != "conceded":  # (an all-pass: the last hand throws in or plays)
            continue
        s, dealer = declarer_of(d), d["dealer"]
        bid = max((x for _, x in said(d, "bid")), default=40)
        half = (bid * 10 // 2 + 25) // 50 * 5  # bid/2 to fives, 2.5 up
        halves.add((bid, half))
        assert w.deltas[s] == 0 and w.deltas[dealer] == _talon_points(d["talon"], rules)
        assert [w.deltas[x] for x in range(4) if x not in (s, dealer)] == [half, half]
    assert len(halves) >= 2 and any(bid % 10 for bid, _ in halves), halves


@pytest.mark.parametrize("counts", [True, False])
def test_the_ace_marriage_counts_for_the_bid_only_under_its_option(
    tmp_path: Path, counts: bool
) -> None:
    """RULES.md §2, §9: the holder of the four aces may bid up to 120 + 200 (+ his
    marriages) with ``ace_marriage_counts_for_bid`` on, up to 120 (+ his marriages) with it
    off; either way he may still declare the ace marriage in the play."""
    rules = _classic(max_deals=1, ace_marriage_counts_for_bid=counts)
    p = play(tmp_path, rules, 3183, scripted(pass_p=0.4))
    check_scores(p, tmp_path)
    aces = {Card.of(Rank.ACE, s) for s in Suit}
    (holder,) = [
        s for s in range(3) if aces <= {parse_card(c) for c in p.record["deals"][0]["hands"][s]}
    ]
    bids = [r.view for r in p.requests(holder) if r.view.phase == pb.PHASE_BIDDING]
    assert bids, "the holder was not asked in the auction"
    for v in bids:
        hand = set(_cards(v.hand))
        top = max(a.bid.amount for a in v.legal_actions if a.WhichOneof("kind") == "bid")
        other = _marriages_in(hand, dataclasses.replace(rules, ace_marriage_counts_for_bid=False))
        assert top == 120 + other + (200 if counts else 0)
    played = [r.view for r in p.requests(holder) if r.view.phase == pb.PHASE_PLAYING]
    assert any(
        a.play.declare and a.play.card.rank == pb.RANK_ACE for v in played for a in v.legal_actions
    )
