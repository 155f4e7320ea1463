"""Rules audit, round 8: whole deals and matches, played as an examiner's rule cases are.

Earlier rounds checked RULES.md one statement at a time. Here every case is a concrete
situation: given hands, talon, starting scores and barrel counters, a script of actions (with
the seats that take them), then the legal actions and refusals met on the way, the deal's
takes and deltas, the scores, the barrel and the end of the match. Each case quotes the
sentence(s) of docs/RULES.md it comes from, and its numbers were worked out by hand from that
text (card points: A 11, 10 10, K 4, Q 3, J 2, 9 0).

Every case then checks its record (``game.record()``): it must replay (``engine.replay``) to
the same deltas, scores, barrel and result, and ``arena replay --check`` must pass it (OK,
exit 0) and print the same final scores.

Seats: 3 players with dealer 2 (first hand 0, second hand 1, last hand 2), the dealer then
moving clockwise (deal 1: dealer 0, first hand 1; deal 2: dealer 1, first hand 2); 4 players
with dealer 3 (who sits the deal out; first hand 0, then 1, 2).

A trick is written ``"0: A♣ J♣ 9♣"``: the leader's seat, then the cards in play order from
him clockwise; ``K♥*`` declares a marriage with that lead. The next trick's leader is the
previous trick's winner, so a wrong trick winner makes the script's next seat refused.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as arena_main
from engine import (
    Game,
    IllegalActionError,
    Phase,
    Ruleset,
    Suit,
    load_ruleset,
    observe,
    parse_action,
    parse_cards,
    replay,
)
from engine.errors import (
    BidError,
    ConcedeError,
    MarriageError,
    PlayError,
    ThrowInError,
    WrongPhaseError,
)

NAMES3 = ["ann", "bob", "cid"]
NAMES4 = ["ann", "bob", "cid", "dan"]
RULESETS = Path(__file__).resolve().parents[2] / "rulesets"


def rs(preset: str = "classic", **options: Any) -> Ruleset:
    """A preset (or a shipped ruleset file: ``house-penalty``) with some options replaced."""
    path = RULESETS / f"{preset}.toml"
    base = load_ruleset(str(path)) if path.is_file() else load_ruleset(preset)
    return dataclasses.replace(base, **options)


def deal(*hands: str, talon: str) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    return [parse_cards(h) for h in hands], parse_cards(talon)


def new(
    rules: Ruleset,
    *deals: tuple[list[tuple[Any, ...]], tuple[Any, ...]],
    scores: Sequence[int] | None = None,
    barrel: Sequence[int] | None = None,
) -> Game:
    n = rules.players
    return Game.new(
        rules,
        8,
        NAMES3 if n == 3 else NAMES4,
        deals=dict(enumerate(deals)) if deals else None,
        scores=scores,
        barrel=barrel,
        dealer=n - 1,
    )


def trick_actions(game: Game, text: str) -> list[tuple[int, str]]:
    """``"0: A♣ J♣ 9♣"`` as (seat, action text) pairs, clockwise over the active seats."""
    lead, cards = text.split(":")
    seat = int(lead)
    active = list(game.active_seats)
    out = []
    for card in cards.split():
        declare = card.endswith("*")
        out.append((seat, f"play {card.rstrip('*')}" + (" declare" if declare else "")))
        seat = active[(active.index(seat) + 1) % len(active)]
    return out


def act(game: Game, *script: str) -> Game:
    """Apply ``"seat: action"`` texts and tricks (``"0: A♣ J♣ 9♣"``), each by its seat."""
    for line in script:
        head, rest = line.split(":", 1)
        words = rest.split()
        if words and words[0] in {"bid", "pass", "give", "contract", "concede", "throw-in", "play"}:
            steps = [(int(head), rest.strip())]
        else:
            steps = trick_actions(game, line)
        for seat, text in steps:
            assert game.to_act == seat, f"{text!r}: seat {game.to_act} is to act, not {seat}"
            game.apply(parse_action(text), seat=seat)
    return game


def legal(game: Game) -> list[str]:
    return [str(a) for a in game.legal_actions()]


def refused(game: Game, seat: int, text: str, error: type[IllegalActionError]) -> None:
    """Refused with ``error``, naming the action; the record is unchanged."""
    before = json.dumps(game.record(), sort_keys=True)
    with pytest.raises(error) as info:
        game.apply(parse_action(text), seat=seat)
    assert text in str(info.value)
    assert json.dumps(game.record(), sort_keys=True) == before


def concede_quickly(game: Game) -> None:
    """A deal under ``all_pass = first_hand`` / committed first hand: everyone else passes,
    the declarer gives his first two legal cards and concedes."""
    number = game.deal_number
    while game.phase == Phase.BIDDING:
        game.apply(parse_action("pass"), seat=game.to_act)
    while game.phase == Phase.PASSING:
        game.apply(game.legal_actions()[0], seat=game.to_act)
    game.apply(parse_action("concede"), seat=game.to_act)
    assert game.deal_number == number + 1 or game.is_over


def last(game: Game) -> Any:
    return game.deal_results[-1]


def check_record(game: Game, tmp_path: Path) -> dict[str, Any]:
    """The record replays to the same figures, and ``arena replay --check`` says OK."""
    rec = game.record()
    rec = dict(json.loads(json.dumps(rec, ensure_ascii=False)))  # as a file holds it
    again = replay(rec)
    assert again.scores == game.scores
    assert again.barrel == game.barrel
    assert again.deal_results == game.deal_results
    assert again.result == game.result
    assert again.is_over == game.is_over
    path = tmp_path / "case.json"
    path.write_text(json.dumps(rec, ensure_ascii=False), encoding="utf-8")
    out = CliRunner().invoke(arena_main, ["replay", "--check", str(path)])
    assert out.exit_code == 0, out.output
    assert "OK: every action is legal and every stored score matches" in out.output
    for res in game.deal_results:
        assert f"deal {res.number + 1}: " in out.output
        assert f"deltas {list(res.deltas)}; scores {list(res.scores)}" in out.output
    if game.result is None:
        assert f"match not finished; scores {list(game.scores)}" in out.output
    else:
        r = game.result
        assert f"final ({r.reason}, " in out.output
        for seat, name in enumerate(game.players):
            assert f"{r.places[seat]}. {name}: {r.scores[seat]} " in out.output
    return rec


# --- marriages and the trump -------------------------------------------------------------------

# Deal "TWO MARRIAGES": seat 0 (first hand, committed to 100) holds K♥ Q♥; seat 1 holds K♠ Q♠;
# seat 2 holds K♦ Q♦. Both others pass; seat 0 takes the talon Q♣ J♥ 9♥ and passes 9♥ to 1,
# J♥ to 2.
TWO_MARRIAGES = deal(
    "A♣ 10♣ K♥ Q♥ A♥ 10♥ 9♦",
    "K♠ Q♠ A♦ 10♦ J♠ 9♠ J♣",
    "A♠ 10♠ K♦ Q♦ J♦ 9♣ K♣",
    talon="Q♣ J♥ 9♥",
)
TWO_MARRIAGES_AUCTION = ("1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
TWO_MARRIAGES_PLAY = (
    "0: A♣ J♣ 9♣",  # 13 to seat 0
    "0: K♥* 9♥ J♥",  # ♥ marriage (100), trump ♥; 6 to seat 0
    "0: 9♦ A♦ Q♦",  # 14 to seat 1
    "1: K♠* A♠ Q♣",  # ♠ marriage (40), trump ♠ from this trick; 18 to seat 2
    "2: K♣ 10♣ 9♠",  # seat 1, void in ♣, must trump: 9♠ takes the 10♣; 14 to seat 1
    "1: Q♠ 10♠ Q♥",  # 16 to seat 2
    "2: K♦ 10♥ 10♦",  # 24 to seat 1
    "1: J♠ J♦ A♥",  # trump J♠ takes the A♥; 15 to seat 1
)


def test_a_second_marriage_replaces_the_trump_and_a_take_short_by_one_fails(
    tmp_path: Path,
) -> None:
    """RULES.md §8: "He scores its value at once; its suit is trump from that trick on, until
    another marriage is declared. A marriage may be declared only by a player who has already
    won a trick in this deal", "a marriage needs both cards in hand at the lead" and "Asking
    to declare with any other play (following, or without the partner) is refused"; §7
    "without it he must play a trump if a trump is set and he has one"; §10 "take ≥ contract
    → +contract (never more); else −contract".

    Seat 0 declares ♥ on the second lead, seat 1 (a defender, after winning trick 3) declares ♠:
    from then on a 9♠ takes the 10♣ and a J♠ the A♥. Seat 0 takes 19 card points + 100 = 119
    against a contract of 120 and fails: −120; seat 1 67 + 40 = 107; seat 2 34."""
    g = act(new(rs(), TWO_MARRIAGES), *TWO_MARRIAGES_AUCTION, "0: contract 120")
    assert g.trump is None
    refused(g, 0, "play K♥ declare", MarriageError)  # no trick won yet
    act(g, *TWO_MARRIAGES_PLAY[:2])
    assert g.trump == Suit.HEARTS and g.marriage_points(0) == 100
    act(g, "0: play 9♦", "1: play A♦")
    refused(g, 2, "play Q♦ declare", MarriageError)  # K♦ Q♦ held, but he follows, not leads
    act(g, "2: play Q♦", TWO_MARRIAGES_PLAY[3])
    assert g.trump == Suit.SPADES
    assert g.marriages == ((0, Suit.HEARTS), (1, Suit.SPADES))
    act(g, TWO_MARRIAGES_PLAY[4])
    refused(g, 1, "play Q♠ declare", MarriageError)  # K♠ already led: no partner in hand
    act(g, *TWO_MARRIAGES_PLAY[5:])
    res = last(g)
    assert (res.outcome, res.contract) == ("failed", 120)
    assert res.card_points == (19, 67, 34)
    assert res.marriage_points == (100, 40, 0)
    assert res.deltas == (-120, 107, 34)
    assert g.scores == (-120, 107, 34)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("contract", "outcome", "delta0"),
    [(100, "made", 100), (115, "made", 115), (120, "failed", -120)],
)
def test_the_declarers_marriage_counts_toward_his_contract_never_above_it(
    tmp_path: Path, contract: int, outcome: str, delta0: int
) -> None:
    """RULES.md §10: "Each player's take = card points of the tricks he won + his declared
    marriages. Declarer: take ≥ contract → +contract (never more); else −contract." The same
    play as above: seat 0's take is 19 + 100 = 119."""
    g = act(new(rs(), TWO_MARRIAGES), *TWO_MARRIAGES_AUCTION, f"0: contract {contract}")
    act(g, *TWO_MARRIAGES_PLAY)
    assert last(g).takes == (119, 107, 34)
    assert (last(g).outcome, last(g).deltas) == (outcome, (delta0, 107, 34))
    check_record(g, tmp_path)


def test_1001_the_same_two_marriages_with_open_bidding_and_takes_rounded_to_five(
    tmp_path: Path,
) -> None:
    """RULES.md, preset 1001: "opening bid 40, step 5; the player left of the dealer bids or
    passes like everyone else (nobody is committed)" and "Opponents' takes are rounded to a
    multiple of 5 (option rounding = 5: 2.5 and above up)".

    The same cards and play as the classic case: seat 0 must bid himself (40), and his
    contract cap after the talon is 120 + 100 (♥ still in hand). He fails 120 with 119 (the
    declarer's take is not rounded up to 120): −120; seat 1's 107 scores 105, seat 2's 34
    scores 35."""
    g = new(rs("1001"), TWO_MARRIAGES)
    assert legal(g)[0] == "bid 40" and legal(g)[-1] == "pass"
    act(g, "0: bid 40", "1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
    assert legal(g) == [f"contract {c}" for c in range(40, 221, 5)] + ["concede"]
    act(g, "0: contract 120", *TWO_MARRIAGES_PLAY)
    res = last(g)
    assert res.takes == (119, 107, 34)
    assert res.deltas == (-120, 105, 35)
    assert res.barrel is None and res.events == ()
    check_record(g, tmp_path)


# Deal "ACES": seat 0 holds the four aces and K♠ Q♠ and takes every trick.
ACES = deal(
    "A♠ A♣ A♦ A♥ K♠ Q♠ 10♠",
    "J♠ 9♠ K♥ Q♥ J♥ 9♥ 9♣",
    "10♦ K♦ Q♦ J♦ 9♦ J♣ Q♣",
    talon="10♥ 10♣ K♣",
)
ACES_START = ("1: pass", "2: pass", "0: give K♣ to 1", "0: give 10♥ to 2")
ACES_PLAY = (
    "0: 10♠ J♠ 9♦",  # 12: a trick won with a card other than an ace
    "0: K♠* 9♠ J♦",  # ♠ marriage, 40; trump ♠; 6
    "0: A♠* 9♣ Q♦",  # the ace marriage, 200: trump stays ♠; 14
    "0: Q♠ 9♥ J♣",  # 5
    "0: A♥ K♥ 10♥",  # 25
    "0: A♦ Q♥ 10♦",  # 24
    "0: A♣ K♣ Q♣",  # 18
    "0: 10♣ J♥ K♦",  # 16
)


def test_the_ace_marriage_after_a_suit_marriage_keeps_its_trump_and_raises_the_cap(
    tmp_path: Path,
) -> None:
    """RULES.md §9: "A player holding all four aces may declare it by leading an ace, once he
    has won a trick with a card other than an ace. It scores 200 and changes no trump." §5:
    the contract is at most "120 + the marriages in his 8 cards now (the ace marriage
    counting as for bids)": 120 + 40 + 200 = 360. Seat 0 takes 120 + 240 = 360 and makes
    360; the defenders, without a trick, score 0 (RULES.md names no penalty for that)."""
    g = act(new(rs(), ACES), *ACES_START)
    assert legal(g)[-2:] == ["contract 360", "concede"]
    act(g, "0: contract 360")
    refused(g, 0, "play A♠ declare", MarriageError)  # no trick won yet
    act(g, *ACES_PLAY[:2])
    assert g.trump == Suit.SPADES
    act(g, ACES_PLAY[2])
    assert g.trump == Suit.SPADES and g.marriages == ((0, Suit.SPADES), (0, None))
    act(g, *ACES_PLAY[3:])
    res = last(g)
    assert res.card_points == (120, 0, 0) and res.marriage_points == (240, 0, 0)
    assert (res.outcome, res.deltas) == ("made", (360, 0, 0))
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("options", "cap", "declare_ace"),
    [
        ({}, 360, True),
        ({"ace_marriage_counts_for_bid": False}, 160, True),
        ({"ace_marriage": False}, 160, False),
    ],
)
def test_the_ace_marriage_options_on_the_same_deal(
    tmp_path: Path, options: dict[str, Any], cap: int, declare_ace: bool
) -> None:
    """RULES.md §2 "an ace marriage counts as 200; option ace_marriage_counts_for_bid, default
    on" and §9 "Ace marriage (option ace_marriage, default on)". The same deal: without the
    ace marriage counting for the cap seat 0 may name 160 at most, still declares the aces
    (360 taken) and scores 160; without the ace marriage at all the lead A♠ cannot declare
    and he takes 120 + 40 = 160."""
    g = act(new(rs(**options), ACES), *ACES_START)
    assert legal(g)[-2:] == [f"contract {cap}", "concede"]
    if cap < 360:
        with pytest.raises(IllegalActionError):
            g.apply(parse_action("contract 360"), seat=0)
    act(g, f"0: contract {cap}", *ACES_PLAY[:2])
    assert ("play A♠ declare" in legal(g)) is declare_ace
    if declare_ace:
        act(g, ACES_PLAY[2])
    else:
        refused(g, 0, "play A♠ declare", MarriageError)
        act(g, "0: A♠ 9♣ Q♦")
    act(g, *ACES_PLAY[3:])
    res = last(g)
    assert res.takes[0] == (360 if declare_ace else 160)
    assert res.deltas == (cap, 0, 0)
    check_record(g, tmp_path)


def test_without_marriage_needs_trick_the_first_lead_may_declare_and_lose_the_trick(
    tmp_path: Path,
) -> None:
    """RULES.md §8: "A marriage may be declared only by a player who has already won a trick in
    this deal (option marriage_needs_trick, default on: so never on the first trick)".

    The TWO_MARRIAGES deal, seat 0 leading K♥ on the first trick: refused in classic; with the
    option off he declares it before winning anything (100, trump ♥ from that trick on) and
    plays the A♣ second. The 100 counts as on trick 2: 19 + 100 = 119 ≥ 100, made.
    """
    g = act(new(rs(), TWO_MARRIAGES), *TWO_MARRIAGES_AUCTION, "0: contract 100")
    refused(g, 0, "play K♥ declare", MarriageError)
    g = act(new(rs(marriage_needs_trick=False), TWO_MARRIAGES), *TWO_MARRIAGES_AUCTION)
    act(g, "0: contract 100", "0: K♥* 9♥ J♥")
    assert g.trump == Suit.HEARTS and g.marriage_points(0) == 100
    act(g, "0: A♣ J♣ 9♣", *TWO_MARRIAGES_PLAY[2:])
    assert last(g).takes == (119, 107, 34) and last(g).deltas == (100, 107, 34)
    check_record(g, tmp_path)


# --- conceding after the talon -----------------------------------------------------------------

# In TWO_MARRIAGES seat 1 (K♠ Q♠: bid cap 160) raises to 105 and wins the bidding; he takes the
# talon Q♣ J♥ 9♥ and passes J♥ to 0, Q♣ to 2.
CONCEDE_105 = ("1: bid 105", "2: pass", "0: pass", "1: give J♥ to 0", "1: give Q♣ to 2")


@pytest.mark.parametrize(
    ("preset", "options", "deltas"),
    [
        ("classic", {}, (53, 0, 53)),
        ("house-penalty", {}, (53, -105, 53)),
        ("classic", {"concede_pays": "none"}, (0, 0, 0)),
        ("classic", {"concede": "penalty", "concede_pays": "none"}, (0, -105, 0)),
        ("classic", {"rounding": 5}, (55, 0, 55)),
    ],
)
def test_the_declarer_concedes_after_the_talon_under_each_concede_option(
    tmp_path: Path, preset: str, options: dict[str, Any], deltas: tuple[int, ...]
) -> None:
    """RULES.md §6: "Instead of naming a contract, the declarer may concede at the winning bid
    (option concede: free — default — he scores 0; penalty — he scores −bid; off). Each
    opponent then scores half the bid, rounded half up to the ruleset's rounding unit (option
    concede_pays: half, default; none)." Half of 105 is 52.5: 53 (unit 1), 55 (unit 5).
    The concession is offered with the contracts (105 up to 120 + 40), and is no longer
    possible once a contract is named."""
    g = act(new(rs(preset, **options), TWO_MARRIAGES), *CONCEDE_105)
    assert legal(g) == [f"contract {c}" for c in range(105, 161, 5)] + ["concede"]
    probe = g.clone()
    act(probe, "1: contract 105")
    refused(probe, 1, "concede", WrongPhaseError)  # the play has begun
    act(g, "1: concede")
    res = last(g)
    assert (res.declarer, res.bid, res.contract, res.outcome) == (1, 105, None, "conceded")
    assert res.deltas == deltas and g.scores == deltas
    assert g.deal_number == 1 and g.phase == Phase.BIDDING
    check_record(g, tmp_path)


def test_concede_off_leaves_only_the_contracts(tmp_path: Path) -> None:
    """RULES.md §6: "(option concede: ... off)": the declarer must name a contract and play."""
    g = act(new(rs(concede="off"), TWO_MARRIAGES), *CONCEDE_105)
    assert legal(g) == [f"contract {c}" for c in range(105, 161, 5)]
    refused(g, 1, "concede", ConcedeError)
    check_record(g, tmp_path)


@pytest.mark.parametrize("players", [3, 4])
def test_1001_the_declarer_concedes_minus_the_bid_and_the_others_score_nothing(
    tmp_path: Path, players: int
) -> None:
    """RULES.md, preset 1001: "A declarer who won the bidding may concede in place of naming the
    contract (after passing the two cards): he scores −bid and the others score nothing for
    the deal" and, with 4 players, the dealer "Every deal, whatever happens at the table, he
    scores the talon: ... its card points (not rounded)": Q♣ J♥ 9♥ = 5."""
    hands, talon = TWO_MARRIAGES
    cards = ([*hands, ()], talon) if players == 4 else TWO_MARRIAGES
    g = new(rs("1001" if players == 3 else "1001-4p"), cards)
    act(g, "0: pass", "1: bid 45", "2: pass", "1: give J♥ to 0", "1: give Q♣ to 2", "1: concede")
    res = last(g)
    assert (res.declarer, res.bid, res.outcome) == (1, 45, "conceded")
    assert res.deltas == ((0, -45, 0) if players == 3 else (0, -45, 0, 5))
    check_record(g, tmp_path)


# --- all pass: the throw-in (1001) and first hand's 100 (classic) ------------------------------


def test_classic_all_pass_first_hand_plays_100_and_nobody_throws_in(tmp_path: Path) -> None:
    """RULES.md §2: "if both others pass at once, first hand plays 100" (classic has no
    re-deal and no throw-in: "The last hand's throw-in after an all-pass" is 1001's)."""
    g = act(new(rs(), TWO_MARRIAGES), "1: pass", "2: pass")
    assert (g.phase, g.declarer, g.bid, g.to_act) == (Phase.PASSING, 0, 100, 0)
    assert "throw-in" not in legal(g)
    refused(g, 0, "throw-in", ThrowInError)
    act(g, "0: give 9♥ to 1", "0: give J♥ to 2", "0: contract 100", *TWO_MARRIAGES_PLAY)
    assert last(g).deltas == (100, 107, 34)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("preset", "options", "deltas"),
    [
        ("1001", {}, (50, 50, 0)),
        ("1001", {"throw_in_bonus": 30}, (30, 30, 0)),
        ("classic", {"first_hand_commits": False, "all_pass": "last_hand"}, (50, 50, 0)),
    ],
)
def test_all_pass_the_last_hand_takes_the_talon_and_throws_in(
    tmp_path: Path, preset: str, options: dict[str, Any], deltas: tuple[int, ...]
) -> None:
    """RULES.md, preset 1001: "If every player before the last hand passes, the last hand takes
    the talon at the opening bid and may play, raise the contract, or throw in: then each other
    player dealt into the deal scores +50 and he scores 0." He cannot concede ("The last hand's
    throw-in after an all-pass is a different action"). The bonus is throw_in_bonus; classic
    with first_hand_commits off and all_pass = last_hand throws in the same way."""
    rules = rs(preset, **options)
    g = act(new(rules, TWO_MARRIAGES), "0: pass", "1: pass")
    assert (g.phase, g.declarer, g.bid, g.to_act) == (Phase.PASSING, 2, rules.opening_bid, 2)
    assert "throw-in" in legal(g)
    act(g, "2: give 9♣ to 0", "2: give 9♥ to 1")  # he may still throw in, not concede
    assert legal(g)[-1] == "throw-in" and "concede" not in legal(g)
    assert legal(g)[0] == f"contract {rules.opening_bid}"
    refused(g, 2, "concede", ConcedeError)
    act(g, "2: throw-in")
    res = last(g)
    assert (res.declarer, res.outcome, res.contract) == (2, "thrown_in", None)
    assert res.deltas == deltas
    check_record(g, tmp_path)


def test_classic_without_the_commitment_all_three_pass_and_first_hand_plays(
    tmp_path: Path,
) -> None:
    """RULES.md §2 and the options table: first_hand_commits off, all_pass = first_hand: "if
    all pass, first hand plays the opening bid". Nobody throws in: the deal is played."""
    g = act(new(rs(first_hand_commits=False), TWO_MARRIAGES), "0: pass", "1: pass", "2: pass")
    assert (g.phase, g.declarer, g.bid) == (Phase.PASSING, 0, 100)
    assert "throw-in" not in legal(g)
    act(g, "0: give 9♥ to 1", "0: give J♥ to 2", "0: contract 100", *TWO_MARRIAGES_PLAY)
    assert last(g).deltas == (100, 107, 34)
    check_record(g, tmp_path)


# 4 players: dealer 3 sits out; the talon is three nines.
NINES = deal(
    "A♠ 10♠ K♠ Q♠ J♠ A♣ 10♣",
    "K♣ Q♣ J♣ A♦ 10♦ K♦ Q♦",
    "J♦ 9♦ A♥ 10♥ K♥ Q♥ J♥",
    "",
    talon="9♠ 9♣ 9♥",
)


@pytest.mark.parametrize(
    ("ruleset", "deltas"),
    [
        ("1001-4p", (50, 50, 0, 100)),
        ({"nines_talon_value": 0}, (50, 50, 0, 0)),
        ({"throw_in_bonus": 25}, (25, 25, 0, 100)),
        ("tournament-1001", (50, 50, 0, 100)),
    ],
)
def test_1001_4p_throw_in_pays_the_two_others_and_the_dealer_scores_three_nines(
    tmp_path: Path, ruleset: Any, deltas: tuple[int, ...]
) -> None:
    """RULES.md, preset 1001, 4 players: "the dealer is dealt no cards and sits out the deal.
    Every deal, whatever happens at the table, he scores the talon: 100 if it is three nines"
    (option nines_talon_value) and the throw-in pays "each other player dealt into the deal"
    +50 (throw_in_bonus): seats 0 and 1, not the dealer. tournament-1001 hides the talon from
    the defenders (talon_visible off) and scores the same."""
    if ruleset == "tournament-1001":
        rules = load_ruleset(str(RULESETS / "tournament-1001.toml"), players=4)
    elif isinstance(ruleset, str):
        rules = rs(ruleset)
    else:
        rules = rs("1001-4p", **ruleset)
    g = act(new(rules, NINES), "0: pass", "1: pass")
    assert g.declarer == 2 and "throw-in" in legal(g)
    seen = parse_cards("9♠ 9♣ 9♥")
    assert set(observe(g, 2).talon or ()) == set(seen)
    assert (observe(g, 0).talon is None) is (not rules.talon_visible)
    assert observe(g, 3).hand == ()
    act(g, "2: throw-in")
    assert last(g).deltas == deltas
    check_record(g, tmp_path)


# --- the barrel ---------------------------------------------------------------------------------
TWO_MARRIAGES_FAIL = (*TWO_MARRIAGES_AUCTION, "0: contract 120", *TWO_MARRIAGES_PLAY)  # -120 107 34


@pytest.mark.parametrize(
    ("options", "scores", "barrel", "events"),
    [
        (
            {},
            (-120, 880, 880),
            (0, 3, 3),
            ("seat 1 gets on the barrel", "seat 2 gets on the barrel"),
        ),
        (
            {"barrel_mode": "one"},
            (-120, 760, 760),
            (0, 0, 0),
            (
                "seat 1 reaches the barrel with another and falls off: -120",
                "seat 2 reaches the barrel with another and falls off: -120",
            ),
        ),
        ({"barrel_at": 900}, (-120, 900, 884), (0, 3, 0), ("seat 1 gets on the barrel",)),
        ({"barrel_at": 950}, (-120, 907, 884), (0, 0, 0), ()),
    ],
)
def test_two_defenders_reach_the_barrel_in_one_deal(
    tmp_path: Path,
    options: dict[str, Any],
    scores: tuple[int, ...],
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    """RULES.md, the barrel: "A player whose score would reach 880 or more (option barrel_at)
    is set to exactly 880 and is "on the barrel" for the next 3 deals"; "barrel_mode: many
    (default: several players may sit on it) or one (...two or more reaching it in the same
    deal all fall off at once, −120 each from 880...)".

    Seats 1 (800) and 2 (850) defend TWO_MARRIAGES: 800 + 107 = 907, 850 + 34 = 884. With
    barrel_at 900 only seat 1 reaches it (and is set to 900), seat 2 keeps 884."""
    g = act(new(rs(**options), TWO_MARRIAGES, scores=(0, 800, 850)), *TWO_MARRIAGES_FAIL)
    res = last(g)
    assert res.takes == (119, 107, 34)
    assert res.scores == scores and g.scores == scores
    assert res.barrel == barrel and g.barrel == barrel
    assert res.events == events
    assert res.deltas == tuple(s - b for s, b in zip(scores, (0, 800, 850), strict=True))
    check_record(g, tmp_path)


def test_a_declarer_crossing_1000_from_below_only_gets_on_the_barrel(tmp_path: Path) -> None:
    """RULES.md: "A player whose score would reach 880 or more ... is set to exactly 880" and
    "He wins the game (score 1000) by winning the bidding and making a contract of at least
    120" — from the barrel. Seat 0 at 700 makes 360 with ACES: 1060 is set to 880."""
    g = act(new(rs(), ACES, scores=(700, 0, 0)), *ACES_START, "0: contract 360", *ACES_PLAY)
    assert (last(g).deltas, g.scores, g.barrel) == ((180, 0, 0), (880, 0, 0), (3, 0, 0))
    assert not g.is_over and last(g).events == ("seat 0 gets on the barrel",)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("contract", "over", "delta", "left"),
    [(120, True, 120, 3), (360, True, 120, 3), (115, False, 0, 2)],
)
def test_the_sitter_wins_with_a_contract_of_120_and_a_lower_one_scores_nothing(
    tmp_path: Path, contract: int, over: bool, delta: int, left: int
) -> None:
    """RULES.md: "He wins the game (score 1000) by winning the bidding and making a contract of
    at least 120; a made contract below 120 scores nothing." and "Final places are by score
    ...; the result also states each loser's shortfall to the target". Seat 0 sits at 880 with
    3 deals left; 300 and 500 for the others. A win ends the match: places 1, 3, 2, shortfalls
    0, 700, 500; contract 115 is made, scores nothing, and uses one of his deals."""
    g = new(rs(), ACES, scores=(880, 300, 500), barrel=(3, 0, 0))
    act(g, *ACES_START, f"0: contract {contract}", *ACES_PLAY)
    res = g.deal_results[0]
    assert (res.outcome, res.deltas) == ("made", (delta, 0, 0))
    assert g.is_over is over
    if over:
        assert res.events == ("seat 0 wins from the barrel",)
        r = g.result
        assert r is not None
        assert (r.scores, r.places, r.shortfalls) == ((1000, 300, 500), (1, 3, 2), (0, 700, 500))
        assert (r.winner, r.reason, r.deals) == (0, "target", 1)
    else:
        assert (g.scores, g.barrel) == ((880, 300, 500), (left, 0, 0))
    check_record(g, tmp_path)


@pytest.mark.parametrize("left", [3, 1])
def test_the_sitter_who_fails_falls_off_paying_the_contract_once(tmp_path: Path, left: int) -> None:
    """RULES.md: "A failed contract costs the contract and drops him off the barrel"
    (docs/rules-engine.md: "A failed contract on the barrel costs the contract only"), also on
    his last barrel deal (one fall, one charge: not −120 on top). The defenders score as
    usual: 107 and 34."""
    g = act(new(rs(), TWO_MARRIAGES, scores=(880, 0, 0), barrel=(left, 0, 0)), *TWO_MARRIAGES_FAIL)
    res = last(g)
    assert res.deltas == (-120, 107, 34) and g.scores == (760, 107, 34)
    assert g.barrel == (0, 0, 0)
    assert res.events == ("seat 0 fails the contract and falls off the barrel",)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("preset", "options", "start", "scores", "over"),
    [
        ("classic", {}, (0, 880, 0), (-120, 880, 34), False),  # a sitter's take is not scored
        ("classic", {"barrel": False}, (0, 893, 0), (-120, 1000, 34), True),
        ("classic", {"barrel": False}, (0, 892, 0), (-120, 999, 34), False),
        ("1001", {}, (0, 896, 0), (-120, 1001, 35), True),
        ("1001", {}, (0, 895, 0), (-120, 1000, 35), False),
    ],
)
def test_a_defender_reaching_exactly_the_target(
    tmp_path: Path,
    preset: str,
    options: dict[str, Any],
    start: tuple[int, ...],
    scores: tuple[int, ...],
    over: bool,
) -> None:
    """RULES.md: "On the barrel his defender takes are not scored" (classic: a defender never
    reaches 1000, he stops at 880 and may only win as declarer) and "The game ends when a
    player reaches 1000 (option target)" — without the barrel a defender's 107 takes 893 to
    exactly 1000. In 1001 ("Target 1001; no barrel"; takes rounded to 5) 107 scores 105:
    896 reaches exactly 1001 and wins, 895 stops at 1000."""
    barrel = (0, 3, 0) if start[1] == 880 else None
    g = new(rs(preset, **options), TWO_MARRIAGES, scores=start, barrel=barrel)
    if preset == "1001":
        act(g, "0: bid 40", "1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
        act(g, "0: contract 120", *TWO_MARRIAGES_PLAY)
    else:
        act(g, *TWO_MARRIAGES_FAIL)
    assert g.deal_results[0].scores == scores and g.is_over is over
    if over:
        r = g.result
        assert r is not None and (r.winner, r.reason, r.places) == (1, "target", (3, 1, 2))
    elif barrel:
        assert g.barrel == (0, 2, 0)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("options", "scores", "events"),
    [
        ({}, ((100, 250, 880), (150, 250, 880), (200, 300, 760)), "3 deals on the barrel: -120"),
        (
            {"barrel_deals": 2},
            ((100, 250, 880), (150, 250, 760), (200, 300, 760)),
            "2 deals on the barrel: -120",
        ),
        (
            {"barrel_penalty": 50},
            ((100, 250, 880), (150, 250, 880), (200, 300, 830)),
            "3 deals on the barrel: -50",
        ),
    ],
)
def test_three_deals_on_the_barrel_without_the_win_cost_the_penalty(
    tmp_path: Path, options: dict[str, Any], scores: tuple[tuple[int, ...], ...], events: str
) -> None:
    """RULES.md: "Three deals on the barrel without a win: −120 (option barrel_penalty) and
    off", "on the barrel for the next 3 deals (option barrel_deals)", and "a free concession
    leaves him sitting, and the halves paid to a sitter are not scored".

    Seat 2 sits at 880 (barrel_deals left). Three deals, each conceded free at 100 by first
    hand (seats 0, 1, 2 in turn): the non-sitting opponents get 50; seat 2 gets nothing, and
    his own concession in deal 3 keeps him sitting until his deals run out."""
    rules = rs(**options)
    g = new(rules, scores=(100, 200, 880), barrel=(0, 0, rules.barrel_deals))
    for k in range(3):
        concede_quickly(g)
        assert g.deal_results[k].declarer == k
        assert g.deal_results[k].scores == scores[k]
    assert [e for r in g.deal_results for e in r.events] == [f"seat 2 sat {events}"]
    assert g.barrel == (0, 0, 0)
    check_record(g, tmp_path)


def test_two_sitters_count_their_own_deals(tmp_path: Path) -> None:
    """RULES.md: "barrel_mode: many (default: several players may sit on it)"; each sitter has
    his own "next 3 deals". Seats 1 (3 left) and 2 (1 left) sit at 880: in deal 1 seat 2 falls
    (−120); seat 1's free concession in deal 2 keeps him on; deal 3 is his third: −120."""
    g = new(rs(), scores=(0, 880, 880), barrel=(0, 3, 1))
    for _ in range(3):
        concede_quickly(g)
    rs_ = g.deal_results
    assert [r.scores for r in rs_] == [(0, 880, 760), (50, 880, 810), (100, 760, 810)]
    assert [r.barrel for r in rs_] == [(0, 2, 0), (0, 1, 0), (0, 0, 0)]
    assert [r.events for r in rs_] == [
        ("seat 2 sat 3 deals on the barrel: -120",),
        (),
        ("seat 1 sat 3 deals on the barrel: -120",),
    ]
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("preset", "scores", "barrel", "events"),
    [
        ("classic", (300, 880, 880), (0, 3, 1), ("seat 1 gets on the barrel",)),
        (
            "house-penalty",
            (200, 880, 760),
            (0, 3, 0),
            ("seat 1 gets on the barrel", "seat 2 is knocked off the barrel: -120"),
        ),
    ],
)
def test_halves_of_a_concession_seat_a_newcomer_who_knocks_the_sitter_off(
    tmp_path: Path,
    preset: str,
    scores: tuple[int, ...],
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    """RULES.md §6 "Each opponent then scores half the bid" and the barrel: "barrel_mode ...
    one (a newcomer knocks the sitter off, −120 ...)". Seat 0 concedes 100: seat 1 (830) gets
    50 and reaches 880; seat 2 sits (880, 2 left). house-penalty (concede = penalty,
    barrel_mode = one): seat 0 pays 100, seat 2 is knocked off to 760. classic: both sit."""
    g = new(rs(preset), scores=(300, 830, 880), barrel=(0, 0, 2))
    concede_quickly(g)
    res = last(g)
    assert (res.scores, res.barrel) == (scores, barrel)
    assert sorted(res.events) == sorted(events)  # (RULES.md gives the events no order)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("preset", "scores", "barrel", "events"),
    [
        ("classic", (53, 880, 880), (0, 1, 2), ()),
        ("house-penalty", (53, 775, 53), (0, 0, 0), ("seat 1 concedes and falls off the barrel",)),
    ],
)
def test_a_sitter_concedes(
    tmp_path: Path,
    preset: str,
    scores: tuple[int, ...],
    barrel: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    """RULES.md: a failed contract "drops him off the barrel; so does conceding under concede =
    penalty (a free concession leaves him sitting, and the halves paid to a sitter are not
    scored)". Seat 1 sits at 880 and concedes 105 (CONCEDE_105). classic: seat 2, also
    sitting, gets no half; seat 0 gets 53. house-penalty (one sitter): 880 − 105 = 775."""
    start, barrel0 = ((0, 880, 880), (0, 2, 3)) if preset == "classic" else ((0, 880, 0), (0, 2, 0))
    g = act(
        new(rs(preset), TWO_MARRIAGES, scores=start, barrel=barrel0), *CONCEDE_105, "1: concede"
    )
    res = last(g)
    assert (res.scores, res.barrel, res.events) == (scores, barrel, events)
    check_record(g, tmp_path)


def test_1001_has_no_barrel_880_and_more_is_kept(tmp_path: Path) -> None:
    """RULES.md, preset 1001: "Target 1001; no barrel". Seat 1 at 860 scores 105: 965."""
    g = new(rs("1001"), TWO_MARRIAGES, scores=(0, 860, 870))
    act(g, "0: bid 40", "1: pass", "2: pass", "0: give 9♥ to 1", "0: give J♥ to 2")
    act(g, "0: contract 120", *TWO_MARRIAGES_PLAY)
    assert (g.scores, g.barrel, last(g).events) == ((-120, 965, 905), None, ())
    check_record(g, tmp_path)


def test_4_players_with_the_barrel_the_dealer_sitting_out_uses_a_deal(tmp_path: Path) -> None:
    """docs/rules-engine.md (RULES.md leaves the combination open): "A sitter's deal on the
    barrel counts ... a deal sat out as the 4-player dealer" and "The 4-player dealer's talon
    score is treated like a defender's take (not scored while he sits on a barrel)".

    1001-4p with barrel on: dealer 3 sits at 880 with 1 deal left; the last hand throws in
    (NINES). Seats 0 (830) and 1 get 50: seat 0 reaches 880 and gets on; the dealer's 100 for
    three nines is not scored and his last deal costs 120."""
    g = new(rs("1001-4p", barrel=True), NINES, scores=(830, 0, 0, 880), barrel=(0, 0, 0, 1))
    act(g, "0: pass", "1: pass", "2: throw-in")
    res = last(g)
    assert res.scores == (880, 50, 0, 760)
    assert res.barrel == (3, 0, 0, 0)
    assert sorted(res.events) == [
        "seat 0 gets on the barrel",
        "seat 3 sat 3 deals on the barrel: -120",
    ]
    check_record(g, tmp_path)


# --- negative scores, no bolts, the deal cap ------------------------------------------------------


def rotated(hands_talon: tuple[list[tuple[Any, ...]], tuple[Any, ...]], k: int) -> Any:
    """The same deal dealt k deals later: seat s holds what seat s - k held (3 players)."""
    hands, talon = hands_talon
    return [hands[(s - k) % 3] for s in range(3)], talon


def shifted(script: Iterable[str], k: int) -> list[str]:
    """A script for seats 0, 1, 2 moved k seats clockwise (seat numbers and give targets)."""
    out = []
    for line in script:
        head, rest = line.split(":", 1)
        if " to " in rest:
            card, to = rest.rsplit(" to ", 1)
            rest = f"{card} to {(int(to) + k) % 3}"
        out.append(f"{(int(head) + k) % 3}:{rest}")
    return out


def test_three_deals_to_the_cap_each_declarer_makes_360_and_they_share_first_place(
    tmp_path: Path,
) -> None:
    """RULES.md: "A match may be capped at a number of deals (option max_deals ...): at the cap,
    the standings decide the places" and "equal scores share a place, numbered 1, 1, 3"; §10
    a defender scores "his take": with no trick he scores 0, nothing is taken off (RULES.md has
    no "bolt" penalty, however often it happens).

    ACES three times, first hand (seat 0, then 1, then 2) each time: each player makes 360
    once and defends twice without a trick. 360 each after 3 deals: all share first place,
    no winner, shortfalls 640."""
    g = new(rs("classic-capped", max_deals=3), *(rotated(ACES, k) for k in range(3)))
    for k in range(3):
        assert g.dealer == (2 + k) % 3 and not g.is_over
        act(g, *shifted((*ACES_START, "0: contract 360", *ACES_PLAY), k))
        assert g.deal_results[k].deltas == tuple(360 if s == k else 0 for s in range(3))
    r = g.result
    assert g.is_over and r is not None
    assert (r.scores, r.places, r.winner) == ((360, 360, 360), (1, 1, 1), None)
    assert (r.shortfalls, r.deals, r.reason) == ((640, 640, 640), 3, "max_deals")
    with pytest.raises(IllegalActionError):
        g.apply(parse_action("pass"))
    check_record(g, tmp_path)


def test_a_capped_match_ends_with_negative_scores_and_shortfalls_past_the_target(
    tmp_path: Path,
) -> None:
    """RULES.md §10 "Scores may go negative"; the end: places "by score", "each loser's
    shortfall to the target". One deal cap: seat 0 from −200 fails 120 (−320, third, short
    1320), seat 1 first with 107, seat 2 second with 34."""
    g = act(new(rs(max_deals=1), TWO_MARRIAGES, scores=(-200, 0, 0)), *TWO_MARRIAGES_FAIL)
    r = g.result
    assert r is not None
    assert (r.scores, r.places, r.winner) == ((-320, 107, 34), (3, 1, 2), 1)
    assert (r.shortfalls, r.reason, r.deals) == ((1320, 0, 966), "max_deals", 1)
    check_record(g, tmp_path)


def test_the_target_ends_the_match_before_the_cap(tmp_path: Path) -> None:
    """RULES.md: "The game ends when a player reaches 1000 (option target)" — the cap is only a
    limit. max_deals = 3, sitter seat 0 wins the first deal."""
    g = new(rs(max_deals=3), ACES, scores=(880, 0, 0), barrel=(1, 0, 0))
    act(g, *ACES_START, "0: contract 120", *ACES_PLAY)
    assert g.result is not None and (g.result.reason, g.result.deals) == ("target", 1)
    check_record(g, tmp_path)


def test_555_is_a_plain_score(tmp_path: Path) -> None:
    """RULES.md has no 555 reset (nor any score other than the barrel's that changes by
    itself): seat 1 at 505 gets half of a conceded 100 and keeps 555."""
    g = new(rs(), scores=(0, 505, 0))
    concede_quickly(g)
    assert g.scores == (0, 555, 50)
    check_record(g, tmp_path)


# --- house options on one otherwise identical deal -------------------------------------------

# Deal "MUST BEAT": seat 0 (hearts and J♠) leads J♠; seat 1 holds A♠ 9♠, seat 2 10♠ K♠ Q♠.
MUST_BEAT = deal(
    "A♥ 10♥ K♥ Q♥ J♥ 9♥ J♠",
    "A♠ 9♠ A♣ 10♣ K♣ Q♣ J♣",
    "10♠ K♠ Q♠ 9♣ A♦ 10♦ K♦",
    talon="Q♦ J♦ 9♦",
)
MUST_BEAT_START = ("1: pass", "2: pass", "0: give 9♦ to 1", "0: give J♦ to 2", "0: contract 100")


#: The same deal played under must_beat, by house-penalty and by classic with the option.
_MUST_BEAT_PLAY = (
    "0: J♠ A♠ Q♠",  # seat 1 must beat: 16
    "1: A♣ 9♣ 9♥",  # 11
    "1: 10♣ K♦ J♥",  # 16
    "1: 9♠ 10♠ Q♦",  # seat 2 must beat the 9♠: 13
    "2: A♦ 10♥ 9♦",  # 21
    "2: 10♦ Q♥ J♣",  # 15
    "2: J♦ K♥ Q♣",  # 9
    "2: K♠ A♥ K♣",  # 19
)


@pytest.mark.parametrize(
    ("preset", "options", "play", "deltas"),
    [
        (
            "classic",
            {},
            (
                "0: J♠ 9♠ Q♠",  # seat 1 ducks, seat 2 takes it: 5
                "2: A♦ Q♦ 9♦",  # 14
                "2: 10♦ 9♥ J♣",  # 12
                "2: K♦ J♥ Q♣",  # 9
                "2: J♦ 10♥ K♣",  # 16
                "2: 9♣ Q♥ A♣",  # 14 to seat 1
                "1: A♠ 10♠ K♥",  # 25
                "1: 10♣ K♠ A♥",  # 25
            ),
            (-100, 64, 56),
        ),
        (
            "house-penalty",
            {},
            _MUST_BEAT_PLAY,
            (-100, 43, 77),
        ),
        (
            "classic",
            {"must_beat": True},
            _MUST_BEAT_PLAY,
            (-100, 43, 77),
        ),
    ],
)
def test_must_beat_changes_who_takes_the_first_trick_and_the_whole_deal(
    tmp_path: Path, preset: str, options: dict[str, Any], play: tuple[str, ...], deltas: Any
) -> None:
    """RULES.md §7: "There is no duty to beat or overtrump (option must_beat, default off; when
    on, among the cards he is obliged to play he must choose one that beats the trick if he
    can — it never obliges him to trump)". house-penalty sets must_beat. Seat 0 leads J♠:
    without the duty seat 1 may play 9♠ and seat 2 takes the trick with Q♠; with it seat 1
    must play A♠, and seat 2 (10♠ K♠ Q♠) may then play any spade; later seat 2 must beat the
    9♠ (10♠). Seat 0 never wins a trick
    (and so never declares his ♥ marriage): −100 either way, the defenders 64/56 or 43/77."""
    g = act(new(rs(preset, **options), MUST_BEAT), *MUST_BEAT_START, "0: play J♠")
    beat = g.ruleset.must_beat
    assert legal(g) == (["play A♠"] if beat else ["play 9♠", "play A♠"])
    probe = g.clone()
    if beat:
        refused(probe, 1, "play 9♠", PlayError)
    act(probe, "1: play A♠")
    assert legal(probe) == ["play Q♠", "play K♠", "play 10♠"]  # none beats A♠
    g = act(new(rs(preset, **options), MUST_BEAT), *MUST_BEAT_START, *play)
    res = last(g)
    assert res.card_points[0] == 0 and sum(res.card_points) == 120
    assert (res.outcome, res.deltas) == ("failed", deltas)
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("options", "bids"),
    [
        ({}, list(range(105, 161, 5))),
        ({"bid_step": 10}, list(range(110, 161, 10))),
        ({"opening_bid": 120}, list(range(125, 161, 5))),
        ({"opening_bid": 120, "bid_step": 20}, [140, 160]),
    ],
)
def test_opening_bid_and_step_on_the_same_hand(
    tmp_path: Path, options: dict[str, Any], bids: list[int]
) -> None:
    """RULES.md §2: "each player either raises (a multiple of 5, at least 5 above the standing
    bid) or passes", "Nobody may bid above 120 + the marriages in his own hand", "Opening bid
    (option opening_bid: classic 100) and step (option bid_step: 5)". Seat 1 of TWO_MARRIAGES
    (K♠ Q♠: cap 160) answers first hand's committed opening bid; then the bid plays out."""
    rules = rs(**options)
    g = new(rules, TWO_MARRIAGES)
    assert legal(g) == [f"bid {b}" for b in bids] + ["pass"]
    refused(g, 1, f"bid {bids[-1] + rules.bid_step}", BidError)
    act(g, "1: pass", "2: pass")
    assert g.bid == rules.opening_bid
    contract = max(rules.opening_bid, 115)
    act(g, "0: give 9♥ to 1", "0: give J♥ to 2", f"0: contract {contract}")
    act(g, *TWO_MARRIAGES_PLAY)
    # seat 0 takes 119: 115 is made, the committed 120 fails
    assert last(g).deltas == (contract if contract <= 119 else -contract, 107, 34)
    check_record(g, tmp_path)


@pytest.mark.parametrize("visible", [True, False])
def test_talon_visible_changes_what_the_defenders_see_not_the_score(
    tmp_path: Path, visible: bool
) -> None:
    """RULES.md §3: "The declarer takes the talon; all players see its three cards (option
    talon_visible, default on)", §4 "Only the giver and the receiver learn that card"."""
    g = act(new(rs(talon_visible=visible), TWO_MARRIAGES), "1: pass", "2: pass")
    talon = set(parse_cards("Q♣ J♥ 9♥"))
    assert set(observe(g, 0).talon or ()) == talon
    for seat in (1, 2):
        assert (set(observe(g, seat).talon or ()) == talon) is visible
        assert (observe(g, seat).talon is None) is (not visible)
    act(g, "0: give 9♥ to 1", "0: give J♥ to 2", "0: contract 120", *TWO_MARRIAGES_PLAY)
    assert last(g).deltas == (-120, 107, 34)
    check_record(g, tmp_path)


def test_ask_forced_is_for_the_referee_and_changes_nothing_in_a_deal(tmp_path: Path) -> None:
    """docs/rules-engine.md, the options table: "ask_forced ... for the referee: ask bots for
    forced moves too": the same deal plays and scores the same."""
    a = act(new(rs(ask_forced=True), TWO_MARRIAGES), *TWO_MARRIAGES_FAIL)
    b = act(new(rs(), TWO_MARRIAGES), *TWO_MARRIAGES_FAIL)
    assert a.deal_results == b.deal_results
    check_record(a, tmp_path)


def test_every_option_is_exercised_by_a_case_here() -> None:
    """Each field of the ruleset that RULES.md or the options table names is changed by at
    least one case of this file (the source is read: an option added later without a case
    fails here)."""
    text = Path(__file__).read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(Ruleset) if f.name not in {"name", "players"}]
    missing = [f for f in fields if f'"{f}"' not in text and f"{f}=" not in text]
    assert not missing, missing


def test_a_king_passed_away_takes_its_marriage_out_of_the_cap_and_the_play(tmp_path: Path) -> None:
    """RULES.md §5: the contract is at most "120 + the marriages in his 8 cards now" and §8 "A
    card that a player has led or passed away is gone: a marriage needs both cards in hand at
    the lead". ACES with seat 0 passing K♠ (to seat 1) and 10♥ (to seat 2): his cap is
    120 + 200 = 320, and Q♠ cannot declare. He still takes every trick (the K♠ falls to his
    A♠) and declares the ace marriage: 120 + 200 = 320, made."""
    g = act(new(rs(), ACES), "1: pass", "2: pass", "0: give K♠ to 1", "0: give 10♥ to 2")
    assert legal(g)[-2:] == ["contract 320", "concede"]
    act(g, "0: contract 320", "0: 10♠ J♠ 9♦")  # 12
    assert "play Q♠ declare" not in legal(g)
    refused(g, 0, "play Q♠ declare", MarriageError)
    act(
        g,
        "0: A♥* K♥ 10♥",  # ace marriage 200, no trump; 25
        "0: A♠ K♠ J♦",  # 17
        "0: Q♠ 9♠ Q♦",  # 6
        "0: A♦ 9♥ 10♦",  # 21
        "0: A♣ 9♣ J♣",  # 13
        "0: 10♣ J♥ Q♣",  # 15
        "0: K♣ Q♥ K♦",  # 11
    )
    res = last(g)
    assert res.card_points == (120, 0, 0) and res.marriage_points == (200, 0, 0)
    assert res.deltas == (320, 0, 0)
    check_record(g, tmp_path)


def test_one_on_the_barrel_a_sitter_who_fails_is_not_knocked_off_again(tmp_path: Path) -> None:
    """RULES.md: "A failed contract costs the contract and drops him off the barrel" and
    "barrel_mode ... one (a newcomer knocks the sitter off, −120 ...)"; docs/rules-engine.md:
    "A sitter who falls off in a deal (a failed contract, a penalty concession) is not knocked
    off again by a newcomer of the same deal: one fall, one charge". Seat 0 sits and fails 120
    (TWO_MARRIAGES): 760; seat 1 (800) takes 107 and gets on the barrel alone."""
    rules = rs(barrel_mode="one")
    g = act(new(rules, TWO_MARRIAGES, scores=(880, 800, 0), barrel=(2, 0, 0)), *TWO_MARRIAGES_FAIL)
    res = last(g)
    assert (res.scores, res.barrel) == ((760, 880, 34), (0, 3, 0))
    assert sorted(res.events) == [
        "seat 0 fails the contract and falls off the barrel",
        "seat 1 gets on the barrel",
    ]
    check_record(g, tmp_path)


# --- the throw-in and the barrel together -------------------------------------------------------

LAST_HAND: dict[str, Any] = {"first_hand_commits": False, "all_pass": "last_hand"}


@pytest.mark.parametrize(
    ("start", "barrel", "scores", "left", "events"),
    [
        (
            (0, 0, 880),
            (0, 0, 1),
            (50, 50, 760),
            (0, 0, 0),
            ("seat 2 sat 3 deals on the barrel: -120",),
        ),
        ((880, 0, 0), (2, 0, 0), (880, 50, 0), (1, 0, 0), ()),
    ],
)
def test_a_throw_in_on_the_barrel_uses_a_deal_and_pays_no_bonus_to_a_sitter(
    tmp_path: Path,
    start: tuple[int, ...],
    barrel: tuple[int, ...],
    scores: tuple[int, ...],
    left: tuple[int, ...],
    events: tuple[str, ...],
) -> None:
    """RULES.md: "On the barrel his defender takes are not scored" and "Three deals on the barrel
    without a win: −120"; docs/rules-engine.md: "A sitter's throw-in bonus / halves are not
    scored; a throw-in keeps him sitting" and a sitter's deal counts "whatever it was: ... a
    throw-in". Classic with all_pass = last_hand: seat 2 throws in. Sitting himself on his
    last deal he pays 120; a sitting seat 0 gets no +50 and keeps sitting."""
    g = new(rs(**LAST_HAND), TWO_MARRIAGES, scores=start, barrel=barrel)
    act(g, "0: pass", "1: pass", "2: throw-in")
    res = last(g)
    assert (res.outcome, res.scores, res.barrel, res.events) == ("thrown_in", scores, left, events)
    check_record(g, tmp_path)


def test_1001_the_last_hand_may_throw_in_between_his_two_cards(tmp_path: Path) -> None:
    """RULES.md, 1001: the last hand "takes the talon at the opening bid and may play, raise the
    contract, or throw in"; docs/rules-engine.md: "before passing his two cards, between them or
    after them ..., scored the same each time". After one card given: +50, +50, 0."""
    g = act(new(rs("1001"), TWO_MARRIAGES), "0: pass", "1: pass", "2: give 9♣ to 0")
    assert legal(g)[-1] == "throw-in" and "give 9♥ to 0" not in legal(g)
    act(g, "2: throw-in")
    assert last(g).deltas == (50, 50, 0)
    check_record(g, tmp_path)


def test_4_players_with_the_barrel_the_dealer_reaches_it_with_three_nines(tmp_path: Path) -> None:
    """RULES.md: the 4-player dealer "scores the talon: 100 if it is three nines" and "A player
    whose score would reach 880 or more ... is set to exactly 880 and is on the barrel".
    Dealer 3 at 790 + 100 = 890: 880, on the barrel for 3 deals."""
    g = new(rs("1001-4p", barrel=True), NINES, scores=(0, 0, 0, 790))
    act(g, "0: pass", "1: pass", "2: throw-in")
    res = last(g)
    assert (res.deltas, res.scores, res.barrel) == ((50, 50, 0, 90), (50, 50, 0, 880), (0, 0, 0, 3))
    assert res.events == ("seat 3 gets on the barrel",)
    check_record(g, tmp_path)


def test_the_cap_deal_is_a_sitters_last_he_pays_then_the_standings_decide(tmp_path: Path) -> None:
    """RULES.md: "Three deals on the barrel without a win: −120 ... and off" and "at the cap,
    the standings decide the places". max_deals = 1; seat 1 sits with 1 deal left; seat 0
    concedes 100 free: seat 2 gets 50, seat 1 nothing and then −120: 760 still places first."""
    g = new(rs(max_deals=1), scores=(0, 880, 0), barrel=(0, 1, 0))
    concede_quickly(g)
    r = g.result
    assert r is not None
    assert (r.scores, r.places, r.shortfalls) == ((0, 760, 50), (3, 1, 2), (1000, 0, 950))
    assert (r.winner, r.reason) == (1, "max_deals")
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("preset", "options", "deltas"),
    [
        ("1001", {"concede": "free", "concede_pays": "half"}, (25, 0, 25)),
        ("1001-4p", {"concede_pays": "half"}, (25, -45, 25, 5)),
    ],
)
def test_1001_halves_of_a_concession_are_rounded_to_five(
    tmp_path: Path, preset: str, options: dict[str, Any], deltas: tuple[int, ...]
) -> None:
    """RULES.md §6: "Each opponent then scores half the bid, rounded half up to the ruleset's
    rounding unit (option concede_pays: half ...)"; 1001 rounds to 5: half of 45 is 22.5 → 25.
    With 4 players the opponents are the two dealt in; the dealer scores the talon (5)."""
    hands, talon = TWO_MARRIAGES
    cards = ([*hands, ()], talon) if preset == "1001-4p" else TWO_MARRIAGES
    g = new(rs(preset, **options), cards)
    act(g, "0: pass", "1: bid 45", "2: pass", "1: give J♥ to 0", "1: give Q♣ to 2", "1: concede")
    assert last(g).deltas == deltas
    check_record(g, tmp_path)


def test_1001_4p_a_whole_deal_the_dealer_scores_the_talon_the_declarer_took(
    tmp_path: Path,
) -> None:
    """RULES.md, 1001 with 4 players: "the dealer is dealt no cards and sits out the deal.
    Every deal, whatever happens at the table, he scores the talon: 100 if it is three nines";
    the declarer passes "the two cards" (docs/rules-engine.md: "one to each opponent dealt
    in": the dealer gets none). NINES, seat 0 bids 40, names 160 (120 + ♠ 40) and takes every
    trick: +160; the defenders 0; dealer 3 +100 for the three nines seat 0 took."""
    g = act(new(rs("1001-4p"), NINES), "0: bid 40", "1: pass", "2: pass")
    assert g.declarer == 0 and set(g.talon) == set(parse_cards("9♠ 9♣ 9♥"))
    assert not any(a.endswith("to 3") for a in legal(g))
    with pytest.raises(IllegalActionError):
        g.apply(parse_action("give 9♣ to 3"), seat=0)
    act(g, "0: give 9♣ to 1", "0: give 9♥ to 2")
    assert legal(g)[-2:] == ["contract 160", "concede"]
    act(
        g,
        "0: contract 160",
        "0: A♠ 9♣ 9♦",  # 11
        "0: K♠* Q♦ 9♥",  # ♠ 40, trump ♠; 7
        "0: A♣ J♣ J♦",  # 15
        "0: 10♣ K♣ J♥",  # 16
        "0: 10♠ Q♣ Q♥",  # 16
        "0: Q♠ K♦ K♥",  # 11
        "0: J♠ 10♦ 10♥",  # 22
        "0: 9♠ A♦ A♥",  # 22
    )
    res = last(g)
    assert res.takes == (160, 0, 0, 0)
    assert res.deltas == (160, 0, 0, 100)
    assert g.dealer == 0 and g.active_seats == (1, 2, 3)  # deal 1: seat 0 deals and sits out
    check_record(g, tmp_path)


def test_a_bid_above_the_cap_left_after_passing_stays_the_contract_or_is_conceded(
    tmp_path: Path,
) -> None:
    """RULES.md §5: the contract is "at least the winning bid, at most the greater of the winning
    bid and 120 + the marriages in his 8 cards now"; §6 the concession "at the winning bid";
    "Each opponent then scores half the bid". ACES: seat 0 outbids seat 1 at 300 (cap 120 + 40
    + 200 in his 7 cards), then passes K♠ and A♥ away: no marriage left, so 300 is the only
    contract. He concedes: 0 for him, 150 for each defender."""
    g = act(new(rs(), ACES), "1: bid 105", "2: pass", "0: bid 300", "1: pass")
    assert (g.declarer, g.bid) == (0, 300)
    act(g, "0: give K♠ to 1", "0: give A♥ to 2")
    assert legal(g) == ["contract 300", "concede"]
    act(g, "0: concede")
    assert (last(g).outcome, last(g).deltas) == ("conceded", (0, 150, 150))
    check_record(g, tmp_path)


@pytest.mark.parametrize(
    ("name", "players", "declarer", "throw_in"),
    [
        ("classic", 3, 0, False),
        ("classic-capped", 3, 0, False),
        ("house-penalty", 3, 0, False),
        ("1001", 3, 2, True),
        ("1001-4p", 4, 2, True),
        ("tournament-1001", 3, 2, True),
        ("tournament-1001", 4, 2, True),
    ],
)
def test_every_shipped_ruleset_when_nobody_bids(
    tmp_path: Path, name: str, players: int, declarer: int, throw_in: bool
) -> None:
    """RULES.md §2 (classic: "if both others pass at once, first hand plays 100") and 1001 ("If
    every player before the last hand passes, the last hand takes the talon at the opening bid
    and may ... throw in"), for each preset and each file in rulesets/: who plays, at what bid,
    and whether the throw-in is offered. The declarer then concedes or throws in, and the
    record replays."""
    path = RULESETS / f"{name}.toml"
    rules = load_ruleset(str(path), players=players) if path.is_file() else rs(name)
    assert rules.players == players
    g = new(rules, NINES if players == 4 else TWO_MARRIAGES)
    while g.phase == Phase.BIDDING:
        act(g, f"{g.to_act}: pass")
    assert (g.declarer, g.bid, g.phase) == (declarer, rules.opening_bid, Phase.PASSING)
    assert ("throw-in" in legal(g)) is throw_in
    if throw_in:
        act(g, f"{declarer}: throw-in")
        assert last(g).outcome == "thrown_in"
    else:
        refused(g, declarer, "throw-in", ThrowInError)
        concede_quickly(g)
        assert last(g).outcome == "conceded"
    check_record(g, tmp_path)
