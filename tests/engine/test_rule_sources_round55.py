"""Round 55: the rule book against the engine, from the Russian source texts' side.

Each test quotes the sentence of a source text it checks (``000`` is
``seeds/000_b7198a0335115b2f.txt``, the game 1000; ``002`` is ``seeds/002_…``, the game
1001, 3 or 4 players), names the RULES.md line that carries it and the options that change
it, and asserts what the rule book gives under each value. Earlier rounds covered most
statements for three players (the table below names where); this file adds what they left:
the four-player table (the dealer sitting out of the auction, the all-pass "2 of 3", the
throw-in and the concession with the dealer scoring the talon) and the rules as a bot sees
them over the wire, under every preset (the talon, the passed cards, the marriages, the
barrel), as the SDK decodes a view.

Source statement -> RULES.md line / option -> where it is tested (earlier rounds by file):

- 000 24 cards, A 10 K Q J 9 = 11 10 4 3 2 0, 120 in all -> Cards -> round39, properties
- 000 marriages ♥100 ♦80 ♣60 ♠40, trump until the next -> §8 -> round53, round54
- 000 ace marriage 200, on an ace lead, after a trick won with a non-ace -> §9,
  ace_marriage -> round40, round53
- 000 7 each, 3 to the talon -> §1 -> round48
- 000 first player committed to 100, raises of 5 or more, both pass: he plays -> §2,
  first_hand_commits, opening_bid, bid_step -> here (3 and 4 players), round53, round54
- 000 cap 120 + the marriages held -> §2, ace_marriage_counts_for_bid -> round53, round40,
  here (4 players)
- 000 talon to the winner, one card to each of the others -> §3 talon_visible, §4 -> here
  (every preset, over the wire), round54
- 000 contract not below the bid -> §5 -> round53, round40
- 000 роспись without / with penalty, halves of the contract to the others -> §6 concede,
  concede_pays (at the bid, in place of the contract: rules-engine.md, "departs") -> round53,
  round47, here (4 players)
- 000 follow suit, else trump, else any; the highest trump takes -> §7 (must_beat a house
  rule) -> round39, round48
- 000 made: the contract only; failed: -contract; the others their points -> §10 -> round53
- 000 880 written 880, three deals, a win at >= 120, a fall costs the contract, three deals
  -120 -> barrel_at, barrel_deals, barrel_penalty -> round53, round54, round40
- 000 many on the barrel, or one: a newcomer knocks the sitter off, two at once both fall ->
  barrel_mode -> round53, round54, round40
- 000 the losers pay their shortfall to 1000 -> The end (shortfalls) -> round39, round54
- 002 dealer by lot, then in turn -> §1 (the match seed) -> round48
- 002 the auction starts left of the dealer, from 40 in fives; no marriage, at most 120; a
  pass is final -> 1001: opening_bid, bid_step, first_hand_commits false -> here
- 002 the talon shown to all, one card to each, face down -> §3, §4 -> here, round54
- 002 no trump until a marriage, declared on one's own lead -> §7, §8 marriage_needs_trick
  -> round54
- 002 sums rounded to 5 -> rounding -> round40, round48
- 002 two of three pass: the last hand takes the talon, plays, raises or throws in (+50 to
  the others) -> all_pass, throw_in_bonus -> here (4 players), round53, round54
- 002 the bidding's winner may give up with the sum as a minus -> 1001: concede penalty,
  concede_pays none -> here (4 players), round53
- 002 4 players: the dealer scores the talon, three nines 100 -> nines_talon_value -> here,
  round53, round54, round40
- 002 1001 or more wins -> target -> round53

Not in either source, and in no option: re-deals, "болты" (bolts), "самосвал" (the dump
at 555): docs/rules-engine.md, "Where RULES.md departs from the source texts".
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import view_from_pb, view_to_pb
from engine import (
    PRESETS,
    AlreadyPassedError,
    Bid,
    Concede,
    Contract,
    Game,
    Give,
    HiddenGive,
    Pass,
    Phase,
    Play,
    Ruleset,
    ThrowIn,
    load_ruleset,
    observe,
    parse_action,
    parse_cards,
    public_action,
)
from sdk.wire_view import request_view

NAMES = ["ann", "bob", "cid", "dan"]
ROOT = Path(__file__).resolve().parents[2]

# Seat 0 is first hand in every deal here: the dealer is seat 2 at three, seat 3 at four
# (who is dealt nothing and sits out). Seat 0 holds the ♠ marriage (cap 160), seat 1 no
# marriage (cap 120), seat 2 the ♥ marriage (cap 220). The talon scores 11 + 3 + 0 = 14.
HANDS = ["A♠ 10♠ K♠ Q♠ J♠ 9♠ A♥", "A♣ 10♣ K♣ J♣ 9♣ 10♦ K♦", "Q♦ J♦ 9♥ J♥ Q♥ K♥ 10♥"]
TALON = "A♦ Q♣ 9♦"
TALON_POINTS = 14


def rs(preset: str = "classic", **options: Any) -> Ruleset:
    return dataclasses.replace(PRESETS[preset], **options)


def new(rules: Ruleset, **start: Any) -> Game:
    n = rules.players
    hands = [parse_cards(h) for h in HANDS] + ([()] if n == 4 else [])
    return Game.new(
        rules, 55, NAMES[:n], deals={0: (hands, parse_cards(TALON))}, dealer=n - 1, **start
    )


def act(game: Game, *lines: str) -> None:
    """``"seat: action"`` lines, each by the seat named (the seat check catches a wrong script)."""
    for line in lines:
        seat, text = line.split(": ", 1)
        game.apply(parse_action(text), seat=int(seat))


def bids(game: Game) -> list[int]:
    return [a.amount for a in game.legal_actions() if isinstance(a, Bid)]


# --- 000 / 002: who opens the auction, from what, in what steps, up to what ---------------------


@pytest.mark.parametrize(
    ("rules", "first", "standing", "lowest", "top"),
    [
        # 000: "Первый игрок автоматически обязуется взять 100 очков, следующий за ним по
        # часовой стрелке может перебить и повысить ставку на 5 или более очков, или же
        # сказать "пас"": second hand (seat 1, no marriage: "120 плюс стоимость марьяжей
        # (если они есть на руках)") speaks first, from 105 up to 120.
        (rs(), 1, 100, 105, 120),
        (rs(players=4), 1, 100, 105, 120),
        (rs(bid_step=10), 1, 100, 110, 120),
        # first_hand_commits off: first hand speaks first, from the opening bid, up to 160.
        (rs(first_hand_commits=False), 0, None, 100, 160),
        # 002: "Торговлю начинает игрок, который сидит слева от сдатчика. Минимальное
        # количество очков, с которых можно начинать торг это 40 очков, добавлять можно
        # только 5 очков" — at four too, where the dealer (seat 3) sits out.
        (rs("1001"), 0, None, 40, 160),
        (rs("1001-4p"), 0, None, 40, 160),
        (rs("1001-4p", first_hand_commits=True), 1, 40, 45, 120),
    ],
)
def test_who_opens_the_auction_from_what_and_up_to_what(
    rules: Ruleset, first: int, standing: int | None, lowest: int, top: int
) -> None:
    """RULES.md §2: "First hand is committed to 100 without speaking. Then, clockwise, each
    player either raises (a multiple of 5, at least 5 above the standing bid) or passes";
    options ``first_hand_commits``, ``opening_bid``, ``bid_step``; 1001: "opening bid 40,
    step 5; the player left of the dealer bids or passes like everyone else"."""
    game = new(rules)
    assert (game.to_act, game.bid) == (first, standing)
    got = bids(game)
    assert (got[0], got[-1]) == (lowest, top)
    assert got == list(range(lowest, top + 1, rules.bid_step))
    assert Pass() in game.legal_actions()


def test_a_pass_is_final_and_the_dealer_of_four_never_bids() -> None:
    """002: "Игрок, который спасовал один раз, больше в торгах участия не принимает" (RULES.md
    §2 "a pass is final"); 1001, 4 players: "the dealer is dealt no cards and sits out the
    deal". Seat 1 passes: the turn goes 0 → 2 → 0 past him (and never to the dealer, 3); his
    bid is refused; when seat 2 passes too, seat 0 declares at his 50."""
    game = new(rs("1001-4p"))
    act(game, "0: bid 40", "1: pass", "2: bid 45")
    assert game.to_act == 0
    act(game, "0: bid 50")
    assert game.to_act == 2
    with pytest.raises(AlreadyPassedError, match="a pass is final"):
        game.apply(Bid(55), seat=1)
    assert game.to_act == 2 and game.bid == 50  # (a refusal changes nothing)
    act(game, "2: pass")
    assert (game.phase, game.declarer, game.bid) == (Phase.PASSING, 0, 50)
    assert sorted(game.passed) == [1, 2]


# --- 002: "Если пасуют 2 игрока из трех" at a table of four ---------------------------------------


@pytest.mark.parametrize("bonus", [50, 70, 0])
def test_the_all_pass_of_two_of_three_at_four_and_the_throw_in(bonus: int) -> None:
    """002: "Если пасуют 2 игрока из трех, то игрок на последней руке берет прикуп и,
    просмотрев карты, либо играет, либо называет количество очков, которые он намерен
    взять, либо бросает свои карты (в этом случае все игроки кроме сидящего на прикупе,
    пишут себе в плюс по 50 очков)"; "Если играют 4 игрока, то сдатчик записывает себе за
    прикуп ... сумму очков на картах". RULES.md 1001: "If every player before the last hand
    passes, the last hand takes the talon at the opening bid and may play, raise the
    contract, or throw in: then each other player dealt into the deal scores +50 and he
    scores 0" (``all_pass = "last_hand"``, ``throw_in_bonus``); "4 players: ... Every deal,
    whatever happens at the table, he scores the talon ... its card points (not rounded)".

    At four the dealer is seat 3: seats 0 and 1 pass, and seat 2 (the last hand, right of
    the dealer) takes the talon unasked, at 40. He may throw in at once, or play: his
    contracts start at 40 and he may not concede (that is the bidding's winner's)."""
    game = new(rs("1001-4p", throw_in_bonus=bonus))
    act(game, "0: pass", "1: pass")
    assert (game.phase, game.declarer, game.bid, game.to_act) == (Phase.PASSING, 2, 40, 2)
    assert game.last_hand_take and game.high_bidder is None
    assert ThrowIn() in game.legal_actions()
    trial = game.clone()
    act(trial, "2: give 9♦ to 0", "2: give Q♣ to 1")
    legal = trial.legal_actions()
    assert Contract(40) in legal and Contract(35) not in legal and Concede() not in legal
    assert ThrowIn() in legal
    act(game, "2: throw-in")
    result = game.deal_results[-1]
    assert result.outcome == "thrown_in" and result.contract is None
    assert result.deltas == (bonus, bonus, 0, TALON_POINTS)  # 14: not rounded to 15
    assert game.scores == (bonus, bonus, 0, TALON_POINTS)


def test_all_pass_first_hand_at_four_lets_the_last_hand_speak_and_first_hand_plays() -> None:
    """RULES.md §2, option ``all_pass = "first_hand"``: "if all pass, first hand plays the
    opening bid" (the 000 text's "Если двое игроков сразу скажут "пас", то играет первый");
    the last hand is asked like the others, and the throw-in (1001's "last hand after an
    all-pass") is not offered. First hand, the bidding's declarer at 40, may concede (1001:
    "может бросить карты и записать себе названную сумму со знаком минус"; RULES.md
    ``concede = penalty``, ``concede_pays = none``): −40, nothing to the others, and the
    dealer scores the talon all the same ("whatever happens at the table")."""
    game = new(rs("1001-4p", all_pass="first_hand"))
    act(game, "0: pass", "1: pass")
    assert (game.phase, game.to_act) == (Phase.BIDDING, 2)
    assert bids(game)[0] == 40 and Pass() in game.legal_actions()
    act(game, "2: pass")
    assert (game.phase, game.declarer, game.bid) == (Phase.PASSING, 0, 40)
    assert not game.last_hand_take and ThrowIn() not in game.legal_actions()
    act(game, "0: give 9♦ to 1", "0: give Q♣ to 2")
    legal = game.legal_actions()
    assert Concede() in legal and ThrowIn() not in legal and Contract(40) in legal
    act(game, "0: concede")
    result = game.deal_results[-1]
    assert result.outcome == "conceded"
    assert result.deltas == (-40, 0, 0, TALON_POINTS)


@pytest.mark.parametrize(
    ("concede", "pays", "deltas"),
    [
        ("penalty", "none", (-40, 0, 0, TALON_POINTS)),
        ("free", "none", (0, 0, 0, TALON_POINTS)),
        ("penalty", "half", (-40, 20, 20, TALON_POINTS)),
        ("free", "half", (0, 20, 20, TALON_POINTS)),
    ],
)
def test_a_concession_at_four_under_each_option(
    concede: str, pays: str, deltas: tuple[int, ...]
) -> None:
    """RULES.md §6 (options ``concede``, ``concede_pays``): "he scores 0" / "−bid"; "Each
    opponent then scores half the bid"; the 000 text: "Существует два варианта росписи -
    первый без штрафа, второй со штрафом ... двум другим игрокам записывается на счет по
    половине очков заказанной игры". At four the halves go to the two opponents dealt in
    (docs/rules-engine.md, Interpretations) and the dealer scores the talon (14)."""
    game = new(rs("1001-4p", concede=concede, concede_pays=pays))
    act(game, "0: bid 40", "1: pass", "2: pass", "0: give 9♦ to 1", "0: give Q♣ to 2")
    act(game, "0: concede")
    assert game.deal_results[-1].deltas == deltas


# --- the rules as a bot sees them, under each preset, over the wire ------------------------------

HOUSE_PENALTY = load_ruleset(str(ROOT / "rulesets" / "house-penalty.toml"))
TOURNAMENT_1001 = load_ruleset(str(ROOT / "rulesets" / "tournament-1001.toml"))
TOURNAMENT_1001_4 = load_ruleset(str(ROOT / "rulesets" / "tournament-1001.toml"), players=4)

VIEW_RULESETS = {
    "classic": rs(),
    "classic-hidden-talon": rs(talon_visible=False),
    "classic-4p": rs(players=4),
    "house-penalty": HOUSE_PENALTY,
    "1001": rs("1001"),
    "1001-4p": rs("1001-4p"),
    "tournament-1001": TOURNAMENT_1001,
    "tournament-1001-4p": TOURNAMENT_1001_4,
}


def _script(game: Game) -> None:
    """One deal: seat 0 wins the auction at the lowest bid (committed in classic), gives 9♦
    to seat 1 and Q♣ to seat 2, names the lowest contract, leads A♠ (nobody else holds a
    spade: he takes it), then declares the ♠ marriage with K♠; then every seat plays its
    first legal card to the deal's end. ``_check_views`` is called before each action."""
    _check_views(game)
    while game.phase is Phase.BIDDING:
        seat = game.to_act
        assert seat is not None
        legal = game.legal_actions()
        first_bid = next((a for a in legal if isinstance(a, Bid)), None)
        action = first_bid if seat == 0 and game.bid is None and first_bid else Pass()
        _apply(game, action)
    assert game.declarer == 0
    _apply(game, Give(parse_cards("9♦")[0], 1))
    _apply(game, Give(parse_cards("Q♣")[0], 2))
    _apply(game, min((a for a in game.legal_actions() if isinstance(a, Contract)), key=_amount))
    _apply(game, Play(parse_cards("A♠")[0]))
    while game.trick:
        _apply(game, game.legal_actions()[0])
    assert game.tricks[0].winner == 0
    _apply(game, Play(parse_cards("K♠")[0], declare=True))
    number = game.deal_number
    while game.deal_number == number and not game.is_over:
        _apply(game, game.legal_actions()[0])


def _amount(action: Contract) -> int:
    return action.amount


def _apply(game: Game, action: Any) -> None:
    actor = game.to_act
    assert actor is not None
    game.apply(action, seat=actor)
    # 002: "отдает втемную по одной карте каждому игроку": a give is shown, card and all,
    # to its giver and its receiver only (RULES.md §4 "Only the giver and the receiver
    # learn that card"); every other action is shown to all as it is.
    for observer in range(game.n):
        seen = public_action(action, actor, observer)
        if isinstance(action, Give) and observer not in (actor, action.to):
            assert seen == HiddenGive(action.to)
        else:
            assert seen == action
    _check_views(game)


def _check_views(game: Game) -> None:
    """Every seat's view, as ``observe`` makes it and as the SDK decodes it off the wire,
    against what the sources say is open and what is hidden."""
    r = game.ruleset
    declarer = game.declarer
    for seat in range(game.n):
        view = observe(game, seat)
        msg = view_to_pb(view)
        assert request_view(msg, r) == view == view_from_pb(msg, r)
        if game.phase is Phase.GAME_OVER:
            continue
        assert view.hand == game.hand(seat)
        # RULES.md §3 / 002 "показывает прикуп всем игрокам": nobody sees the talon in the
        # auction; once taken, all (talon_visible) or the declarer alone.
        if game.phase is Phase.BIDDING:
            assert view.talon is None and not msg.talon_known
        elif r.talon_visible or seat == declarer:
            assert view.talon == game.talon and msg.talon_known
        else:
            assert view.talon is None and not msg.talon_known and not msg.talon
        for (to, card), (true_to, true_card) in zip(view.gives, game.gives, strict=True):
            assert to == true_to
            assert card == (true_card if seat in (declarer, to) else None)
        # Marriages are declared aloud (000 "объявить данную масть козырной"), the trump and
        # the scores and the barrel are the table's: the same for every seat.
        assert (view.marriages, view.trump) == (game.marriages, game.trump)
        assert (view.scores, view.barrel) == (tuple(game.scores), game.barrel)
        assert view.bids == game.auction() and view.tricks == game.tricks


@pytest.mark.parametrize("name", sorted(VIEW_RULESETS))
def test_what_each_seat_is_shown_under_each_preset(name: str) -> None:
    """RULES.md §3, §4, §8 and "Invariants": "A player's observation never contains a card he
    has not been allowed to see", under each preset and shipped house-rule file, with the
    barrel in play where the ruleset has it (seat 1 sits on it, 2 deals left: everyone sees
    it), every view as ``observe`` gives it and as the SDK decodes it (``request_view``,
    ``view_from_pb``). The 4-player dealer (seat 3) sees what a defender sees: the talon
    under ``talon_visible`` only, no passed card."""
    rules = VIEW_RULESETS[name]
    start: dict[str, Any] = {}
    if rules.barrel:
        start = {"scores": (0, rules.barrel_at, 0, 0)[: rules.players]}
        start["barrel"] = (0, 2, 0, 0)[: rules.players]
    game = new(rules, **start)
    _script(game)
    result = game.deal_results[0]
    assert result.declarer == 0 and result.marriage_points[0] == 40
    if rules.barrel:  # the sitter's deal counts: one left (RULES.md, the barrel)
        assert game.barrel is not None and game.barrel[1] == 1
    if rules.players == 4:
        assert result.deltas[3] == TALON_POINTS


def test_the_talon_after_a_last_hand_take_is_shown_as_any_taken_talon() -> None:
    """002: after two passes the last hand "берет прикуп и, просмотрев карты" (takes the
    talon, having looked at it), without saying whether the others see it; the arena shows
    it as any taken talon (docs/protocol.md, "The talon after an all-pass in 1001"): to all
    under ``talon_visible``, the dealer of four too, else to him alone."""
    for rules in (rs("1001-4p"), TOURNAMENT_1001_4, rs("1001"), TOURNAMENT_1001):
        game = new(rules)
        act(game, "0: pass", "1: pass")
        assert game.last_hand_take and game.declarer == 2
        for seat in range(rules.players):
            seen = observe(game, seat).talon
            assert seen == (game.talon if rules.talon_visible or seat == 2 else None)
        _check_views(game)
