"""Rule book traceability (round 45): RULES.md statements no earlier test checked directly,
or checked only under ``classic`` while the text applies to ``1001`` and to 4 players too.

Every expectation here is computed by hand from RULES.md on a constructed deal (the
public API of docs/rules-engine.md, "Setting up a rule case"), never read from the engine.

Trace of the gaps: RULES.md section, the statement, -> the test here (the statements
already covered, and by which earlier test, are listed in the round 45 report):

- §8 under 1001, 3 and 4 players: "a marriage may be declared only by a player who has
  already won a trick" (`marriage_needs_trick` stays on in `1001`: its section does not
  list it as a difference); "asking to declare ... following ... is refused"
  -> test_1001_no_marriage_on_the_first_trick_then_declared_after_a_won_trick
- §2 / §5 / §9 under 1001, 4 players: the four aces count 200 for the bid cap and the
  contract cap; the ace marriage is declared by leading an ace once a trick is won with a
  non-ace; 200; no trump -> test_1001_4p_the_ace_marriage_whole_deal_by_hand
- §7, 4 players: the declarer leads the first trick, the winner the next; the dealer is
  never to act -> test_1001_4p_the_ace_marriage_whole_deal_by_hand
- §3, 4 players: "He now holds 10"; §4 "Everyone holds 8" (the dealer none)
  -> test_1001_4p_the_ace_marriage_whole_deal_by_hand
- §10 + 1001 + 4 players: take >= contract -> +contract, else -contract (304 against 300
  and 305); takes rounded to 5; the dealer's talon "every deal, whatever happens at the
  table" on a failed contract, not rounded -> test_1001_4p_the_ace_marriage_whole_deal_by_hand
- §2 `ace_marriage_counts_for_bid = false` under 1001, 4 players
  -> test_1001_4p_four_aces_without_ace_marriage_counts_for_bid_cap_at_120
- §7 `must_beat`, 4 players: "he must choose one that beats the trick if he can"; it never
  obliges a void player to trump -> test_must_beat_with_four_players
- §5 under 1001, 4 players: the contract cap counts the marriages in the 8 cards *now*
  -> test_1001_4p_contract_cap_counts_the_eight_cards_after_the_pass
- 1001 "(after passing the two cards)": no concession before or between the two gives
  -> test_1001_4p_concession_only_after_both_cards_are_passed
- Bad input under 1001 / 4 players: "the state is unchanged after a refused action", the
  error names the action and the legal actions -> every test here (``refused``)
- What a player is shown (tests/e2e/test_rulebook_trace_round45.py): every kind of bad
  input over the wire; 1001's first-lead marriage refusal over the wire.

Where seed 002 (1001) reads otherwise: it says only "Марьяж объявляется только при своем
ходе" and nothing of a won trick; RULES.md keeps `marriage_needs_trick` on for `1001` (its
1001 section lists the differences, and this is not one), so the tests follow RULES.md
(the seed's "Следующий игрок, который выиграл взятку, получает право объявить свой марьяж"
agrees). Seed 002 also says of the 1001 auction "добавлять можно только 5 очков" (raise by
5 only); RULES.md says "at least 5 above the standing bid", so a jump (F opening at 100 or
120 here) is legal: RULES.md is followed.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine import (
    Bid,
    Contract,
    Game,
    IllegalActionError,
    MarriageError,
    Play,
    PlayError,
    WrongPhaseError,
    load_ruleset,
    parse_action,
    parse_card,
    parse_cards,
)

N3 = ["ann", "bob", "cid"]
N4 = ["ann", "bob", "cid", "dan"]


def acts(g: Game, *moves: tuple[int, str]) -> None:
    """Apply ``(seat, action text)`` in order (the seat check catches a wrong script)."""
    for seat, text in moves:
        assert g.to_act == seat, (text, g.to_act, seat)
        g.apply(parse_action(text), seat=seat)


def refused(g: Game, seat: int, text: str, err: type[IllegalActionError]) -> None:
    """``text`` by ``seat`` is refused with ``err`` and changes nothing (RULES.md, Bad input)."""
    before = (g.phase, g.to_act, g.actions, g.scores, g.trump, g.marriages, g.hand(seat))
    with pytest.raises(err) as info:
        g.apply(parse_action(text), seat=seat)
    msg = str(info.value)
    assert "legal:" in msg and parse_action(text).__str__() in msg, msg
    assert (g.phase, g.to_act, g.actions, g.scores, g.trump, g.marriages, g.hand(seat)) == before


# The marriage deal: first hand F holds the ♥ marriage; the talon completes the ♦ marriage.
F_HAND = "K♥ Q♥ A♠ 10♠ 9♣ J♣ 9♦"
S_HAND = "A♥ 10♥ A♣ 10♣ K♣ Q♣ J♦"
L_HAND = "J♥ 9♥ K♠ Q♠ J♠ 9♠ A♦"
M_TALON = "10♦ K♦ Q♦"


def marriage_deal(players: int, **options: object) -> tuple[Game, int, int, int]:
    """The marriage deal under ``1001`` for ``players``: the dealer is the last seat (3
    players) or seat 0 (4 players, dealt nothing); returns (game, F, S, L)."""
    name = "1001" if players == 3 else "1001-4p"
    rules = dataclasses.replace(load_ruleset(name), **options)  # type: ignore[arg-type]
    hands = [parse_cards(h) for h in (F_HAND, S_HAND, L_HAND)]
    if players == 4:
        g = Game.new(rules, 7, N4, deals={0: ([[], *hands], parse_cards(M_TALON))}, dealer=0)
        return g, 1, 2, 3
    g = Game.new(rules, 7, N3, deals={0: (hands, parse_cards(M_TALON))}, dealer=2)
    return g, 0, 1, 2


@pytest.mark.parametrize("players", [3, 4])
def test_1001_no_marriage_on_the_first_trick_then_declared_after_a_won_trick(players: int) -> None:
    """RULES.md §8 under ``1001`` (3 and 4 players): F leads K♥ holding Q♥ on the first
    trick and asks to declare: refused (no trick won yet), nothing scored, no trump. He
    leads A♠ instead; S (void in ♠, no trump set) discards J♦, L follows with 9♠: F wins
    11 + 2 + 0 = 13. Then K♥ declared: +100 at once, ♥ trump from that trick; S, holding
    A♥ and 10♥, asking to declare when following is refused."""
    g, f, s, lh = marriage_deal(players)
    acts(g, (f, "bid 100"), (s, "pass"), (lh, "pass"))
    acts(g, (f, f"give 9♣ to {s}"), (f, f"give J♣ to {lh}"), (f, "contract 100"))
    assert g.to_act == f and g.trump is None
    refused(g, f, "play K♥ declare", MarriageError)
    assert Play(parse_card("K♥"), declare=True) not in g.legal_actions()
    acts(g, (f, "play A♠"), (s, "play J♦"), (lh, "play 9♠"))
    assert g.to_act == f and g.card_points(f) == 13 and g.marriage_points(f) == 0
    acts(g, (f, "play K♥ declare"))
    assert g.marriage_points(f) == 100 and str(g.trump) == "♥"
    assert g.marriages == ((f, g.trump),)
    refused(g, s, "play A♥ declare", MarriageError)  # following: no declaring
    # S holds A♥ 10♥: he must follow ♥ (and may play either: no duty to beat)
    assert {str(a) for a in g.legal_actions()} == {"play A♥", "play 10♥"}


def ace_deal(**options: object) -> tuple[Game, int, int, int]:
    """1001, 4 players, dealer seat 0 (dealt nothing): F (seat 1) holds the four aces and no
    suit marriage; the talon 9♥ 9♦ J♦ is worth 2 to the dealer."""
    rules = dataclasses.replace(load_ruleset("1001-4p"), **options)  # type: ignore[arg-type]
    hands = [
        [],
        parse_cards("A♠ A♣ A♦ A♥ 10♠ 9♠ 9♣"),
        parse_cards("K♠ Q♠ J♠ 10♣ K♣ Q♣ J♣"),
        parse_cards("10♥ K♥ Q♥ J♥ 10♦ K♦ Q♦"),
    ]
    g = Game.new(rules, 11, N4, deals={0: (hands, parse_cards("9♥ 9♦ J♦"))}, dealer=0)
    return g, 1, 2, 3


@pytest.mark.parametrize(
    ("contract", "outcome", "declarer_delta"),
    [(120, "made", 120), (300, "made", 300), (305, "failed", -305), (320, "failed", -320)],
)
def test_1001_4p_the_ace_marriage_whole_deal_by_hand(
    contract: int, outcome: str, declarer_delta: int
) -> None:
    """RULES.md §2/§5/§9/§7/§10 and the 1001 section, 4 players, one deal.

    Bidding: F's cap is 120 + 200 (four aces, `ace_marriage_counts_for_bid` on) = 320:
    bid 320 is offered, 325 refused. F bids 120, S and L pass; the dealer (seat 0) is never
    asked. F takes the talon (10 cards), gives 9♥ to S and 9♦ to L; his 8 cards still hold
    the four aces: contract cap 320 (325 refused). Contract 120, 300, 305 or 320.
    Play (F leads first though he is first hand only by chance of the seat; the winner leads
    on):
      1. F 10♠ (A♠ declare refused: no trick won), S J♠, L 9♦: F wins with a ten, 12.
      2. F A♥ declare: +200, no trump. S 9♥ (must follow), L J♥: F, 13.
      3. F A♠, S K♠, L Q♦: F, 18.   4. F A♣, S J♣, L K♦: F, 17.
      5. F A♦, S Q♠ (void, no trump), L 10♦: F, 24.   6. F 9♠, S 10♣, L 10♥: F, 20.
      7. F 9♣, S K♣, L K♥: S, 8.   8. S Q♣, L Q♥, F J♦: S, 8.
    F: 104 cards + 200 = 304: a contract of 120 or 300 is made (+ the contract, never
    more), 305 or 320 failed (− the contract). S: 16 -> 15 (rounded to 5, 1 < 2.5). L: 0.
    Dealer, "every deal, whatever happens at the table": the talon 0 + 0 + 2 = 2, not
    rounded."""
    g, f, s, lh = ace_deal()
    legal = g.legal_actions()
    assert Bid(320) in legal and Bid(325) not in legal and g.to_act == f
    refused(g, f, "bid 325", IllegalActionError)
    acts(g, (f, "bid 120"), (s, "pass"), (lh, "pass"))
    assert len(g.hand(f)) == 10
    acts(g, (f, "give 9♥ to 2"), (f, "give 9♦ to 3"))
    assert [len(g.hand(x)) for x in (f, s, lh)] == [8, 8, 8] and g.hand(0) == ()
    contracts = [a.amount for a in g.legal_actions() if isinstance(a, Contract)]
    assert contracts == list(range(120, 325, 5))
    refused(g, f, "contract 325", IllegalActionError)
    acts(g, (f, f"contract {contract}"))
    assert g.to_act == f
    refused(g, f, "play A♠ declare", MarriageError)
    script = [
        (f, "play 10♠"), (s, "play J♠"), (lh, "play 9♦"),
        (f, "play A♥ declare"), (s, "play 9♥"), (lh, "play J♥"),
        (f, "play A♠"), (s, "play K♠"), (lh, "play Q♦"),
        (f, "play A♣"), (s, "play J♣"), (lh, "play K♦"),
        (f, "play A♦"), (s, "play Q♠"), (lh, "play 10♦"),
        (f, "play 9♠"), (s, "play 10♣"), (lh, "play 10♥"),
        (f, "play 9♣"), (s, "play K♣"), (lh, "play K♥"),
        (s, "play Q♣"), (lh, "play Q♥"), (f, "play J♦"),
    ]  # fmt: skip
    for i, (seat, text) in enumerate(script):
        assert g.to_act == seat != 0, (i, text)
        if i == 4:  # after the ace marriage: 200 scored, no trump set
            assert g.marriage_points(f) == 200 and g.trump is None
            assert g.marriages == ((f, None),)
            refused(g, s, "play Q♠", PlayError)  # S holds 9♥: he must follow ♥
        g.apply(parse_action(text), seat=seat)
    r = g.deal_results[0]
    assert r.outcome == outcome and (r.declarer, r.bid, r.contract) == (f, 120, contract)
    assert r.card_points == (0, 104, 16, 0) and r.marriage_points == (0, 200, 0, 0)
    assert r.deltas == (2, declarer_delta, 15, 0) == g.scores


def test_1001_4p_four_aces_without_ace_marriage_counts_for_bid_cap_at_120() -> None:
    """RULES.md §2, option `ace_marriage_counts_for_bid` off, under 1001 with 4 players: F
    holds no suit marriage, so his cap is 120 (not 320); the ace marriage itself may still
    be declared (option `ace_marriage` on)."""
    g, f, _s, _l = ace_deal(ace_marriage_counts_for_bid=False)
    bids = [a.amount for a in g.legal_actions() if isinstance(a, Bid)]
    assert bids == list(range(40, 125, 5))
    refused(g, f, "bid 125", IllegalActionError)


@pytest.mark.parametrize("must_beat", [False, True])
def test_must_beat_with_four_players(must_beat: bool) -> None:
    """RULES.md §7 under 1001 with 4 players: F gives 9♣ to S (who then holds A♣ 10♣ K♣ Q♣
    9♣) and 9♦ to L; F leads J♣ at the first trick. S must follow ♣; with `must_beat` he
    must beat J♣ if he can: A♣ 10♣ K♣ Q♣ only, 9♣ refused; without it any of his five ♣.
    L (void in ♣, no trump set) then may play any card either way: must_beat never obliges
    him to trump."""
    g, f, s, lh = marriage_deal(4, must_beat=must_beat)
    acts(g, (f, "bid 100"), (s, "pass"), (lh, "pass"))
    acts(g, (f, f"give 9♣ to {s}"), (f, f"give 9♦ to {lh}"), (f, "contract 100"), (f, "play J♣"))
    plays = {str(a) for a in g.legal_actions()}
    beating = {"play A♣", "play 10♣", "play K♣", "play Q♣"}
    assert plays == (beating if must_beat else beating | {"play 9♣"})
    if must_beat:
        refused(g, s, "play 9♣", PlayError)
    acts(g, (s, "play Q♣"))
    assert len(g.legal_actions()) == 8  # L: any of his 8 cards (9♦ given to him)


def test_1001_4p_contract_cap_counts_the_eight_cards_after_the_pass() -> None:
    """RULES.md §5 under 1001 with 4 players: F bids 100 holding the ♥ marriage (bid cap
    220); the talon brings K♦ Q♦ (♦ marriage, 80). Passing K♦ away leaves ♥ only: the
    contract runs 100, 105, ..., 220 (225 refused), not up to 300."""
    g, f, s, lh = marriage_deal(4)
    acts(g, (f, "bid 100"), (s, "pass"), (lh, "pass"))
    acts(g, (f, f"give K♦ to {s}"), (f, f"give 9♣ to {lh}"))
    contracts = [a.amount for a in g.legal_actions() if isinstance(a, Contract)]
    assert contracts == list(range(100, 225, 5))
    refused(g, f, "contract 225", IllegalActionError)


def test_1001_4p_concession_only_after_both_cards_are_passed() -> None:
    """RULES.md 1001: "may concede in place of naming the contract (after passing the two
    cards)": a concession before the cards are passed, or between them, is refused (the
    passing phase); after them it costs F the bid (−100) and pays S and L nothing; the
    4-player dealer scores the talon 10 + 4 + 3 = 17 whatever happens."""
    g, f, s, lh = marriage_deal(4)
    acts(g, (f, "bid 100"), (s, "pass"), (lh, "pass"))
    refused(g, f, "concede", WrongPhaseError)
    acts(g, (f, f"give 9♣ to {s}"))
    refused(g, f, "concede", WrongPhaseError)
    acts(g, (f, f"give J♣ to {lh}"), (f, "concede"))
    r = g.deal_results[0]
    assert r.outcome == "conceded" and r.deltas == (17, -100, 0, 0)
    assert g.scores == (17, -100, 0, 0)
