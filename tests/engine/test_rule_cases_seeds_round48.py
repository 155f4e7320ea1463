"""Rule cases from the Russian source texts themselves (round 48), as an outside examiner
writes them: every rule statement of ``seeds/000_b7198a0335115b2f.txt`` (the game 1000,
cited ``000:line``) and ``seeds/002_09e338d987d968f4.txt`` (1001, cited ``002:line``) set
up as a concrete deal and held to the exact outcome RULES.md gives it (legal actions,
refusals, trick winners, the deal's score changes, the barrel, the end of the game).

Every expected number is worked out here by hand from the rule book (the card points
000:4-9, the marriages 000:12-15), never read back from the engine.

Seats: 3 players with dealer 2, so first hand F = 0, second hand S = 1, last hand L = 2;
4 players (1001-4p) with dealer 3, who sits the deal out, and F, S, L = 0, 1, 2 again.

Deal ``A`` (caps: F 120 + ♠ 40 + ♥ 100 = 260, S 120 + ♣ 60 = 180, L 120)::

    F  A♠ 10♠ K♠ Q♠ A♥ K♥ Q♥      talon  Q♦ J♥ 9♥  (5 points)
    S  A♣ 10♣ K♣ Q♣ J♣ 9♣ 9♠
    L  A♦ 10♦ K♦ J♦ 9♦ J♠ 10♥

F declares, passes Q♦ to S and 9♥ to L, and plays ``A_PLAY``: F takes 96 card points
and declares ♠ (40) and ♥ (100): take 236; L takes 24 (his 10♥ beats the declared K♥);
S takes nothing. 96 + 24 = 120.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any

import pytest

from engine import (
    PRESETS,
    AlreadyPassedError,
    BidError,
    Card,
    ConcedeError,
    ContractError,
    Game,
    GiveError,
    IllegalActionError,
    MarriageError,
    Phase,
    PlayError,
    Suit,
    ThrowInError,
    observe,
    parse_action,
    parse_cards,
)

from .conftest import assert_refused

F, S, L, D = 0, 1, 2, 3

DEALS: dict[str, tuple[dict[int, str], str]] = {
    "A": (
        {
            F: "A♠ 10♠ K♠ Q♠ A♥ K♥ Q♥",
            S: "A♣ 10♣ K♣ Q♣ J♣ 9♣ 9♠",
            L: "A♦ 10♦ K♦ J♦ 9♦ J♠ 10♥",
        },
        "Q♦ J♥ 9♥",
    ),
    # The four aces with F (cap 120 + 200 = 320 while the ace marriage counts for the bid);
    # S holds ♠ and ♣ marriages (cap 220), L the ♦ one (cap 200).
    "C": (
        {
            F: "A♠ A♣ A♦ A♥ 9♠ 9♣ 10♠",
            S: "K♠ Q♠ J♠ 10♣ K♣ Q♣ J♣",
            L: "10♦ K♦ Q♦ J♦ 9♦ 10♥ K♥",
        },
        "Q♥ J♥ 9♥",
    ),
    # Three nines in the talon (002:17: the 4-player dealer scores 100 for them).
    "N": (
        {
            F: "A♠ 10♠ K♠ Q♠ A♥ K♥ Q♥",
            S: "A♣ 10♣ K♣ Q♣ J♣ J♠ 9♥",
            L: "A♦ 10♦ K♦ Q♦ J♦ 10♥ J♥",
        },
        "9♠ 9♣ 9♦",
    ),
}

A_GIVES = ("give Q♦ to 1", "give 9♥ to 2")
# By trick: the three cards in play order, the winner and his card points (hand-counted).
A_TRICKS = (
    (("play A♠", "play 9♠", "play J♠"), F),  # 11 + 0 + 2 = 13
    (("play K♠ declare", "play 9♣", "play 9♦"), F),  # ♠ 40, trump ♠; 4
    (("play Q♠", "play J♣", "play J♦"), F),  # 3 + 2 + 2 = 7
    (("play 10♠", "play Q♣", "play K♦"), F),  # 10 + 3 + 4 = 17
    (("play A♥", "play K♣", "play 9♥"), F),  # S, void, no trump: any; 11 + 4 + 0 = 15
    (("play K♥ declare", "play 10♣", "play 10♥"), L),  # ♥ 100, trump ♥; 10♥ > K♥: L 24
    (("play A♦", "play J♥", "play Q♦"), F),  # L leads; F must trump; 11 + 2 + 3 = 16
    (("play Q♥", "play A♣", "play 10♦"), F),  # 3 + 11 + 10 = 24
)
A_PLAY = tuple(a for cards, _ in A_TRICKS for a in cards)


def new(
    deal: str,
    preset: str = "classic",
    *,
    scores: tuple[int, ...] | None = None,
    sitting: tuple[int, ...] | None = None,
    **options: Any,
) -> Game:
    """Deal ``deal`` as the first deal of a match of ``preset`` with ``options``."""
    r = dataclasses.replace(PRESETS[preset], **options)
    hands, talon = DEALS[deal]
    n = r.players
    dealt = [parse_cards(hands.get(s, "")) for s in range(n)]
    names = ["ann", "bob", "cid", "dan"][:n]
    return Game.new(
        r, 48, names, deals={0: (dealt, parse_cards(talon))}, dealer=n - 1,
        scores=scores, barrel=sitting,
    )  # fmt: skip


def act(g: Game, *texts: str) -> None:
    """Each action by the seat to act (the validated door: a refusal fails the case)."""
    for t in texts:
        g.apply(parse_action(t), seat=g.to_act)


def legal(g: Game) -> list[str]:
    return [str(a) for a in g.legal_actions()]


def bids(lo: int, hi: int, step: int = 5) -> list[str]:
    return [f"bid {a}" for a in range(lo, hi + 1, step)] + ["pass"]


def contracts(lo: int, hi: int, *last: str) -> list[str]:
    return [f"contract {a}" for a in range(lo, hi + 1, 5)] + list(last)


# ----------------------------------------------------------------------------- the cases


@dataclasses.dataclass(frozen=True)
class Case:
    """One rule statement: the seed line it comes from, a set-up, and what must hold after
    it (``expect``: attribute of the game or a check name -> value)."""

    source: str
    deal: str
    script: tuple[str, ...]
    expect: Mapping[str, Any]
    preset: str = "classic"
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    scores: tuple[int, ...] | None = None
    barrel: tuple[int, ...] | None = None


PASS2 = ("pass", "pass")  # classic: S and L pass, the committed F plays 100
A_MADE = (*PASS2, *A_GIVES, "contract 235", *A_PLAY)  # 236 >= 235
A_FAILED = (*PASS2, *A_GIVES, "contract 240", *A_PLAY)  # 236 < 240
A_100 = (*PASS2, *A_GIVES, "contract 100", *A_PLAY)
A_120 = (*PASS2, *A_GIVES, "contract 120", *A_PLAY)
# S wins the talon at 105 (F and L pass after his raise), passes 9♠ and 9♥ away, concedes.
S_CONCEDES = ("bid 105", "pass", "pass", "give 9♠ to 0", "give 9♥ to 2", "concede")
F_CONCEDES = (*PASS2, *A_GIVES, "concede")

# fmt: off
CASES: dict[str, Case] = {
    # --- bidding (000:17, 002:13)
    "first hand committed to 100, second hand bids from 105 to his cap 180": Case(
        "000:17 Первый игрок автоматически обязуется взять 100 ... повысить ставку на 5",
        "A", (), {"to_act": S, "bid": 100, "high_bidder": F, "legal": bids(105, 180)},
    ),
    "no marriage: at most 120": Case(
        "000:17 Максимально возможный заказ на игру 120 плюс стоимость марьяжей",
        "A", ("pass",), {"to_act": L, "legal": bids(105, 120)},
    ),
    "both pass at once: the first plays 100": Case(
        "000:17 Если двое игроков сразу скажут пас, то играет первый",
        "A", PASS2, {"declarer": F, "bid": 100, "phase": Phase.PASSING, "hand_sizes": (10, 7, 7)},
    ),
    "the bidding stops on the last raiser": Case(
        "000:17 Выигрывает торги тот, на ком они останавливаются",
        "A", ("bid 105", "pass", "pass"), {"declarer": S, "bid": 105},
    ),
    "a pass is final: the passer is skipped": Case(
        "002:13 Игрок, который спасовал один раз, больше в торгах участия не принимает",
        "A", ("pass", "bid 110", "bid 115"), {"to_act": L, "legal": bids(120, 120)},
    ),
    "the committed first hand may raise his own cap": Case(
        "000:17 (the first hand bids on like the others once raised)",
        "A", ("bid 105", "pass"), {"to_act": F, "legal": bids(110, 260)},
    ),
    "house step 10 from opening 50": Case(
        "000:31 договоренности (RULES.md opening_bid / bid_step)",
        "A", (), {"legal": bids(60, 180, 10)}, options={"opening_bid": 50, "bid_step": 10},
    ),
    "1001: first hand opens at 40, nobody committed": Case(
        "002:13 Торговлю начинает игрок, который сидит слева от сдатчика ... 40 очков",
        "A", (), {"to_act": F, "bid": None, "legal": bids(40, 260)}, preset="1001",
    ),
    "the four aces count 200 for the bid": Case(
        "000:16 Тузовый марьяж приносит игроку 200 очков (RULES.md: counts for the bid)",
        "C", ("bid 105", "pass"), {"to_act": F, "legal": bids(110, 320)},
    ),
    "the four aces do not count under ace_marriage_counts_for_bid off": Case(
        "RULES.md ace_marriage_counts_for_bid",
        "C", ("bid 105", "pass"), {"to_act": F, "legal": bids(110, 120)},
        options={"ace_marriage_counts_for_bid": False},
    ),
    "no ace marriage: the aces count nothing": Case(
        "RULES.md ace_marriage off", "C", ("bid 105", "pass"), {"legal": bids(110, 120)},
        options={"ace_marriage": False},
    ),
    # --- talon and passing (000:18, 002:13)
    "the talon is shown to all": Case(
        "002:13 Этот игрок показывает прикуп всем игрокам",
        "A", PASS2, {"talon_seen": (True, True, True)},
    ),
    "talon_visible off: the declarer alone sees it": Case(
        "RULES.md talon_visible", "A", PASS2, {"talon_seen": (True, False, False)},
        options={"talon_visible": False},
    ),
    "one card each, face down: a third seat does not see it": Case(
        "000:18 раздать по одной остальным двум игрокам; 002:13 отдает втемную",
        "A", (*PASS2, *A_GIVES),
        {"hand_sizes": (8, 8, 8), "phase": Phase.CONTRACT,
         "gives_seen": {F: ("Q♦", "9♥"), S: ("Q♦", None), L: (None, "9♥")}},
    ),
    # --- the contract (000:18, 002:13)
    "the contract: the bid up to 120 + the marriages kept": Case(
        "000:18 Заказ не может быть меньше объявленного при торгах",
        "A", (*PASS2, *A_GIVES), {"legal": contracts(100, 260, "concede")},
    ),
    "a marriage card passed away leaves its marriage out of the cap": Case(
        "000:17 плюс стоимость марьяжей (если они есть на руках)",
        "A", (*PASS2, "give Q♠ to 1", "give 9♥ to 2"), {"legal": contracts(100, 220, "concede")},
    ),
    "a bid above the cap of the 8 cards: the contract is the bid": Case(
        "000:18 Заказ не может быть меньше объявленного при торгах",
        "A", ("bid 105", "pass", "bid 200", "pass", "give K♥ to 1", "give Q♠ to 2"),
        {"declarer": F, "legal": ["contract 200", "concede"]},
    ),
    "concede off: no concession offered": Case(
        "RULES.md concede = off", "A", (*PASS2, *A_GIVES), {"legal": contracts(100, 260)},
        options={"concede": "off"},
    ),
    "1001 declarer: concede, no throw-in": Case(
        "002:17 может бросить карты и записать себе названную сумму со знаком минус",
        "A", ("bid 40", "pass", "pass", *A_GIVES), {"legal": contracts(40, 260, "concede")},
        preset="1001",
    ),
    # --- conceding (000:18, 002:17)
    "free concession at 105: each opponent half, rounded up": Case(
        "000:18 первый без штрафа ... двум другим игрокам ... по половине очков заказанной",
        "A", S_CONCEDES, {"outcome": "conceded", "deltas": (53, 0, 53)},
    ),
    "penalty concession: minus the bid, halves paid": Case(
        "000:18 второй со штрафом (вычитаются очки равные сумме его заказа)",
        "A", S_CONCEDES, {"deltas": (53, -105, 53)}, options={"concede": "penalty"},
    ),
    "concede_pays none": Case(
        "RULES.md concede_pays", "A", S_CONCEDES, {"deltas": (0, 0, 0)},
        options={"concede_pays": "none"},
    ),
    "halves rounded to 5: 52.5 -> 55": Case(
        "RULES.md rounding 5 (half up)", "A", S_CONCEDES, {"deltas": (55, 0, 55)},
        options={"rounding": 5},
    ),
    "1001: a concession costs the bid and pays nothing": Case(
        "002:17 бросить карты и записать себе названную сумму со знаком минус",
        "A", ("bid 40", "pass", "pass", *A_GIVES, "concede"), {"deltas": (-40, 0, 0)},
        preset="1001",
    ),
    # --- play, marriages, trick winners (000:11, 000:19-20, 002:15)
    "a played deal: follow, trump, 10 over K, trump over ace": Case(
        "000:19-20 кидают ... той масти ... необходимо кидать козырь; старший козырь",
        "A", A_MADE,
        {"winners": tuple(w for _, w in A_TRICKS), "card_points": (96, 0, 24),
         "marriage_points": (140, 0, 0), "outcome": "made", "deltas": (235, 0, 24)},
    ),
    "made: only the contract is written": Case(
        "000:21 на его счет записываются только заказанные очки",
        "A", A_100, {"outcome": "made", "deltas": (100, 0, 24)},
    ),
    "failed: the contract is taken off": Case(
        "000:21 Иначе, с его счета списываются те же самые очки",
        "A", A_FAILED, {"outcome": "failed", "deltas": (-240, 0, 24)},
    ),
    "must follow suit": Case(
        "000:19 кидают по одной карте той масти, с которой был сделан заход",
        "A", (*PASS2, *A_GIVES, "contract 100", "play A♠"), {"to_act": S, "legal": ["play 9♠"]},
    ),
    "void and no trump set: any card": Case(
        "000:19 если и козырей нет, то карту другой масти",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:4]),
        {"to_act": S, "trump": Suit.SPADES, "legal_count": 7},
    ),
    "void in the led suit with trumps: must trump": Case(
        "000:19 Если такой карты нет, то необходимо кидать козырь",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:19]),
        {"to_act": F, "trump": Suit.HEARTS, "legal": ["play J♥", "play Q♥"]},
    ),
    "no duty to beat": Case(
        "000:19 (no duty to beat; RULES.md must_beat off)",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:12], "play K♥ declare", "play K♣"),
        {"to_act": L, "legal": ["play 9♥", "play 10♥"]},
    ),
    "must_beat on: the higher card of the led suit": Case(
        "RULES.md must_beat",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:12], "play K♥ declare", "play K♣"),
        {"to_act": L, "legal": ["play 10♥"]}, options={"must_beat": True},
    ),
    "must_beat on: a trick it cannot beat, any card of the suit": Case(
        "RULES.md must_beat", "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:14]),
        {"to_act": L, "legal": ["play 9♥", "play 10♥"]}, options={"must_beat": True},
    ),
    "no marriage on the first lead": Case(
        "002:15 Следующий игрок, который выиграл взятку, получает право объявить свой марьяж",
        "A", (*PASS2, *A_GIVES, "contract 100"), {"declares": []},
    ),
    "after a won trick, both marriages may be declared": Case(
        "000:11 он может заходом в одну из этих карт объявить данную масть козырной",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:3]),
        {"declares": ["play Q♠ declare", "play K♠ declare", "play Q♥ declare", "play K♥ declare"]},
    ),
    "marriage_needs_trick off: on the first lead": Case(
        "RULES.md marriage_needs_trick",
        "A", (*PASS2, *A_GIVES, "contract 100", "play Q♠ declare"),
        {"trump": Suit.SPADES, "marriage_points": (40, 0, 0)},
        options={"marriage_needs_trick": False},
    ),
    "a declared marriage makes trumps; the next one changes them": Case(
        "000:11 козыри действительны до конца игры или до объявления другого марьяжа",
        "A", (*PASS2, *A_GIVES, "contract 100", *A_PLAY[:16]),
        {"trump": Suit.HEARTS, "marriages": ((F, Suit.SPADES), (F, Suit.HEARTS))},
    ),
    "the ace marriage: 200 after a trick won with a non-ace, trumps unchanged": Case(
        "000:16 Перед объявлением тузового марьяжа, необходимо взять взятку другой картой",
        "C", (*PASS2, "give 9♥ to 1", "give J♥ to 2", "contract 100",
              "play 10♠", "play J♠", "play 9♦", "play A♥ declare"),
        {"trump": None, "marriage_points": (200, 0, 0), "marriages": ((F, None),)},
    ),
    # (A trick won with an ace leaves three aces: the ace marriage is gone with it. What
    # the rule adds is that it needs a trick even where a suit marriage does not.)
    "the ace marriage needs a trick even with marriage_needs_trick off": Case(
        "000:16 Перед объявлением тузового марьяжа, необходимо взять взятку",
        "C", (*PASS2, "give 9♥ to 1", "give J♥ to 2", "contract 100"),
        {"to_act": F, "declares": []}, options={"marriage_needs_trick": False},
    ),
    "ace marriage off: never declared": Case(
        "RULES.md ace_marriage",
        "C", (*PASS2, "give 9♥ to 1", "give J♥ to 2", "contract 100",
              "play 10♠", "play J♠", "play 9♦"),
        {"to_act": F, "declares": []}, options={"ace_marriage": False},
    ),
    # --- counting and rounding (000:21-22, 002:15)
    "1001: opponents' takes round to 5 (24 -> 25)": Case(
        "002:15 округляются ... до числа кратного пяти",
        "A", ("bid 40", "pass", "pass", *A_GIVES, "contract 235", *A_PLAY),
        {"deltas": (235, 0, 25)}, preset="1001",
    ),
    "house rounding 5 in classic": Case(
        "RULES.md rounding", "A", A_MADE, {"deltas": (235, 0, 25)}, options={"rounding": 5},
    ),
    # --- all-pass (002:17)
    "1001 all-pass: the last hand takes at 40 and may throw in": Case(
        "002:17 Если пасуют 2 игрока из трех, то игрок на последней руке берет прикуп",
        "A", ("pass", "pass"),
        {"declarer": L, "bid": 40, "phase": Phase.PASSING, "last_hand_take": True,
         "legal_has": "throw-in"},
        preset="1001",
    ),
    "1001 throw-in: +50 to each other player": Case(
        "002:17 все игроки кроме сидящего на прикупе, пишут себе в плюс по 50 очков",
        "A", ("pass", "pass", "throw-in"), {"outcome": "thrown_in", "deltas": (50, 50, 0)},
        preset="1001",
    ),
    "1001 last hand after his gives: play, raise, or throw in, no concession": Case(
        "002:17 либо играет, либо называет количество очков ... либо бросает свои карты",
        "A", ("pass", "pass", "give J♠ to 0", "give 9♥ to 1"),
        {"legal": contracts(40, 200, "throw-in")}, preset="1001",
    ),
    "all_pass first_hand: three passes, the first plays the opening bid": Case(
        "RULES.md all_pass = first_hand",
        "A", ("pass", "pass", "pass"), {"declarer": F, "bid": 40, "last_hand_take": False},
        preset="1001", options={"all_pass": "first_hand"},
    ),
    # --- the 4-player dealer (002:17)
    "4 players: the dealer is dealt nothing and scores the talon's 5": Case(
        "002:17 сдатчик записывает себе за прикуп ... сумму очков на картах",
        "A", ("pass", "pass", "throw-in"),
        {"deltas": (50, 50, 0, 5)}, preset="1001-4p",
    ),
    "4 players: three nines score the dealer 100": Case(
        "002:17 за 3 девятки — 100 очков",
        "N", ("pass", "pass", "throw-in"), {"deltas": (50, 50, 0, 100)}, preset="1001-4p",
    ),
    "4 players: a played deal, the dealer scores the talon too": Case(
        "002:17 Если играют 4 игрока, то сдатчик записывает себе за прикуп",
        "A", ("bid 40", "pass", "pass", *A_GIVES, "contract 235", *A_PLAY),
        {"deltas": (235, 0, 25, 5)}, preset="1001-4p",
    ),
    "4 players: the dealer holds no cards and is never asked": Case(
        "002:5 Сколько игроков 3-4", "A", ("bid 40", "pass", "pass"),
        {"dealer_hand": (), "active_seats": (F, S, L)}, preset="1001-4p",
    ),
    # --- the barrel (000:23-29)
    "reaching 880 or more: 880 only, on the barrel for 3 deals": Case(
        "000:23 достигает 880 или более очков, то ему записывается только 880",
        "A", A_MADE, {"scores": (880, 0, 24), "barrel": (3, 0, 0)}, scores=(700, 0, 0),
    ),
    "a sitter making 120 or more wins with 1000": Case(
        "000:25 сыграть свою игру с заказом не менее 120 очков ... станет победителем",
        "A", A_120,
        {"scores": (1000, 500, 324), "over": ((1, 2, 3), (0, 500, 676), 0, "target")},
        scores=(880, 500, 300), barrel=(3, 0, 0),
    ),
    "a sitter's made contract below 120 scores nothing": Case(
        "000:25 с заказом не менее 120 очков",
        "A", A_100, {"scores": (880, 0, 24), "barrel": (2, 0, 0)},
        scores=(880, 0, 0), barrel=(3, 0, 0),
    ),
    "a sitter failing his contract: minus the contract, off": Case(
        "000:25 набирает менее своего заказа ... списывают очки равные заказу",
        "A", A_FAILED, {"scores": (640, 0, 24), "barrel": (0, 0, 0)},
        scores=(880, 0, 0), barrel=(3, 0, 0),
    ),
    "three deals on the barrel without a win: minus 120, off": Case(
        "000:25 после трех розыгрышей ... списывается 120 очков и он слетает с бочки",
        "A", A_100, {"scores": (760, 0, 24), "barrel": (0, 0, 0)},
        scores=(880, 0, 0), barrel=(1, 0, 0),
    ),
    "a sitting defender's take is not scored": Case(
        "000:24-25 (RULES.md: on the barrel his defender takes are not scored)",
        "A", A_MADE, {"scores": (235, 0, 880), "barrel": (0, 0, 1)},
        scores=(0, 0, 880), barrel=(0, 0, 2),
    ),
    "a free concession leaves the sitter on, the halves to a sitter unscored": Case(
        "000:18 + RULES.md barrel",
        "A", S_CONCEDES, {"scores": (880, 0, 53), "barrel": (2, 0, 0)},
        scores=(880, 0, 0), barrel=(3, 0, 0),
    ),
    "a sitter's penalty concession: minus the bid, off": Case(
        "000:29 При любом случае слета (RULES.md: concede = penalty)",
        "A", F_CONCEDES, {"scores": (780, 50, 50), "barrel": (0, 0, 0)},
        scores=(880, 0, 0), barrel=(3, 0, 0), options={"concede": "penalty"},
    ),
    "many: two reaching 880 together both sit": Case(
        "000:26 на бочку могут влезть сразу несколько игроков",
        "A", F_CONCEDES, {"scores": (0, 880, 880), "barrel": (0, 3, 3)}, scores=(0, 830, 840),
    ),
    "one: two reaching 880 together both fall, minus 120": Case(
        "000:28 если два игрока набирают 880 очков одновременно, то они оба сразу же слетают",
        "A", F_CONCEDES, {"scores": (0, 760, 760), "barrel": (0, 0, 0)}, scores=(0, 830, 840),
        options={"barrel_mode": "one"},
    ),
    "one: a newcomer knocks the sitter off": Case(
        "000:27 последний скидывает сидящего и залезает сам",
        "A", A_MADE, {"scores": (880, 760, 24), "barrel": (3, 0, 0)},
        scores=(700, 880, 0), barrel=(0, 2, 0), options={"barrel_mode": "one"},
    ),
    "house barrel: at 500, 2 deals, 50": Case(
        "000:31 договоренности (barrel_at, barrel_deals, barrel_penalty)",
        "A", A_100, {"scores": (450, 0, 24), "barrel": (0, 0, 0)},
        scores=(500, 0, 0), barrel=(1, 0, 0),
        options={"barrel_at": 500, "barrel_deals": 2, "barrel_penalty": 50},
    ),
    # --- the end (000:22, 000:30, 002:17)
    "no barrel: reaching 1000 ends the game, losers owe their shortfall": Case(
        "000:22 Выигрывает тот, кто первым наберет 1000; 000:30 сколько нехватило до 1000",
        "A", A_MADE, {"scores": (1035, 990, 124), "over": ((1, 2, 3), (0, 10, 876), 0, "target")},
        scores=(800, 990, 100), options={"barrel": False},
    ),
    "1001: 1000 is not enough": Case(
        "002:7 первым набрать 1001 или более очков",
        "A", ("bid 40", "pass", "pass", *A_GIVES, "contract 235", *A_PLAY),
        {"scores": (1000, 0, 25), "phase": Phase.BIDDING}, preset="1001", scores=(765, 0, 0),
    ),
    "1001: two reaching 1001 equal share the first place": Case(
        "002:17 Игрок, который первым набрал 1001 очко или более, считается победителем",
        "A", ("bid 40", "pass", "pass", *A_GIVES, "contract 235", *A_PLAY),
        {"scores": (1001, 0, 1001), "over": ((1, 3, 1), (0, 1001, 0), None, "target")},
        preset="1001", scores=(766, 0, 976),
    ),
    "max_deals: the standings decide": Case(
        "RULES.md max_deals", "A", A_MADE,
        {"over": ((1, 3, 2), (0, 1000, 976), 0, "max_deals")}, options={"max_deals": 1},
    ),
}
# fmt: on


def _check(g: Game, key: str, want: Any, first_tricks: tuple[int, ...]) -> None:
    results = g.deal_results
    if key == "legal":
        got: Any = legal(g)
    elif key == "legal_count":
        got = len(legal(g))
    elif key == "legal_has":
        assert want in legal(g), legal(g)
        return
    elif key == "declares":
        got = [a for a in legal(g) if a.endswith("declare")]
    elif key == "hand_sizes":
        got = tuple(len(g.hand(s)) for s in range(g.n))
    elif key == "talon_seen":
        got = tuple(observe(g, s).talon == g.talon for s in range(g.n))
    elif key == "gives_seen":
        got = {
            s: tuple(None if c is None else str(c) for _, c in observe(g, s).gives) for s in want
        }
    elif key == "winners":
        # The deal is scored (and the next one dealt) with its eighth trick: the first seven
        # are read before the last card, the eighth's taker from the card points.
        got = first_tricks
        want = want[:7]
    elif key in ("outcome", "deltas", "card_points") or (key == "marriage_points" and results):
        (res,) = results
        got = getattr(res, key)
    elif key == "marriage_points":
        got = tuple(g.marriage_points(s) for s in range(g.n))
    elif key == "over":
        r = g.result
        assert r is not None and g.is_over and g.phase is Phase.GAME_OVER
        got = (r.places, r.shortfalls, r.winner, r.reason)
    elif key == "dealer_hand":
        got = g.hand(g.dealer)
        assert observe(g, g.dealer).legal_actions == ()
    else:
        got = getattr(g, key)
    assert got == want, f"{key}: {got!r}, want {want!r}"


@pytest.mark.parametrize("name", list(CASES))
def test_seed_rule_case(name: str) -> None:
    case = CASES[name]
    g = new(case.deal, case.preset, scores=case.scores, sitting=case.barrel, **case.options)
    act(g, *case.script[:-1])
    first_tricks = tuple(t.winner for t in g.tricks)
    act(g, *case.script[-1:])
    for key, want in case.expect.items():
        _check(g, key, want, first_tricks)


# The non-default values of the options the cases above leave at their default.
# fmt: off
CASES.update(
    {
        "throw_in_bonus 30": Case(
            "RULES.md throw_in_bonus", "A", ("pass", "pass", "throw-in"),
            {"deltas": (30, 30, 0)}, preset="1001", options={"throw_in_bonus": 30},
        ),
        "nines_talon_value 60": Case(
            "RULES.md nines_talon_value", "N", ("pass", "pass", "throw-in"),
            {"deltas": (50, 50, 0, 60)}, preset="1001-4p", options={"nines_talon_value": 60},
        ),
        "barrel_penalty 0: the third deal ends the sitting without a fine": Case(
            "RULES.md barrel_penalty", "A", A_100, {"scores": (880, 0, 24), "barrel": (0, 0, 0)},
            scores=(880, 0, 0), barrel=(1, 0, 0), options={"barrel_penalty": 0},
        ),
        "first_hand_commits off in classic: first hand speaks first from 100": Case(
            "RULES.md first_hand_commits", "A", (), {"to_act": F, "bid": None,
                                                     "legal": bids(100, 260)},
            options={"first_hand_commits": False},
        ),
        "target 500 without the barrel": Case(
            "RULES.md target", "A", A_MADE,
            {"scores": (535, 0, 24), "over": ((1, 3, 2), (0, 500, 476), 0, "target")},
            options={"target": 500, "barrel": False},
        ),
    }
)
# fmt: on

# ----------------------------------------------------------------------------- refusals

A_PLAYING = (*PASS2, *A_GIVES, "contract 100")
C_PLAYING = (*PASS2, "give 9♥ to 1", "give J♥ to 2", "contract 100")

# name -> (deal, preset, options, script, seat to answer (None: the seat to act), the
# action, the error): RULES.md "Bad input is part of the rules".
# fmt: off
REFUSALS: dict[str, tuple[str, str, dict[str, Any], tuple[str, ...], int | None, str, type]] = {
    "a bid off the step": ("A", "classic", {}, (), None, "bid 112", BidError),
    "a bid over the cap": ("A", "classic", {}, ("pass",), None, "bid 125", BidError),
    "a bid not above the standing bid": ("A", "classic", {}, ("bid 110",), None, "bid 110",
                                         BidError),
    "a passed seat bids again": ("A", "classic", {}, ("pass", "bid 110"), S, "bid 115",
                                 AlreadyPassedError),
    "two cards to one opponent": ("A", "classic", {}, (*PASS2, "give Q♦ to 1"), None,
                                  "give 9♥ to 1", GiveError),
    "a card to himself": ("A", "classic", {}, PASS2, None, "give 9♥ to 0", GiveError),
    "4 players: a card to the dealer": ("A", "1001-4p", {}, ("bid 40", "pass", "pass"), None,
                                        "give Q♦ to 3", GiveError),
    "a contract below the bid": ("A", "classic", {}, (*PASS2, *A_GIVES), None, "contract 95",
                                 ContractError),
    "a contract over the cap": ("A", "classic", {}, (*PASS2, *A_GIVES), None, "contract 265",
                                ContractError),
    "a contract off the 5": ("A", "classic", {}, (*PASS2, *A_GIVES), None, "contract 102",
                             ContractError),
    "concede off": ("A", "classic", {"concede": "off"}, (*PASS2, *A_GIVES), None, "concede",
                    ConcedeError),
    "classic has no throw-in": ("A", "classic", {}, (*PASS2, *A_GIVES), None, "throw-in",
                                ThrowInError),
    "1001: a declarer who bid may not throw in": ("A", "1001", {}, ("bid 40", "pass", "pass"),
                                                  None, "throw-in", ThrowInError),
    "1001: the last hand after an all-pass may not concede": (
        "A", "1001", {}, ("pass", "pass", "give J♠ to 0", "give 9♥ to 1"), None, "concede",
        ConcedeError,
    ),
    "not following suit": ("A", "classic", {}, (*A_PLAYING, "play A♠"), None, "play A♣",
                           PlayError),
    "not trumping when void": (
        "A", "classic", {},
        (*A_PLAYING, *A_PLAY[:3], "play K♥ declare", "play 9♣", "play 9♥", "play K♠", "play J♣"),
        None, "play A♦", PlayError,
    ),
    "a marriage on the first lead": ("A", "classic", {}, A_PLAYING, None, "play K♠ declare",
                                     MarriageError),
    "a marriage declared following": ("A", "classic", {}, (*A_PLAYING, *A_PLAY[:4]), None,
                                      "play K♣ declare", MarriageError),
    "a marriage whose partner was led": ("A", "classic", {}, (*A_PLAYING, *A_PLAY[:6]), None,
                                         "play Q♠ declare", MarriageError),
    "the ace marriage before a trick": ("C", "classic", {}, C_PLAYING, None, "play A♠ declare",
                                        MarriageError),
    "the ace marriage switched off": ("C", "classic", {"ace_marriage": False},
                                      (*C_PLAYING, "play 10♠", "play J♠", "play 9♦"), None,
                                      "play A♠ declare", MarriageError),
    "a nine declared": ("C", "classic", {}, C_PLAYING, None, "play 9♠ declare", MarriageError),
    "out of turn": ("A", "classic", {}, (), F, "bid 105", IllegalActionError),
}
# fmt: on


@pytest.mark.parametrize("name", list(REFUSALS))
def test_seed_rule_refusal(name: str) -> None:
    deal, preset, options, script, seat, text, error = REFUSALS[name]
    g = new(deal, preset, **options)
    act(g, *script)
    who = g.to_act if seat is None else seat
    assert_refused(g, text, seat=who, error=error)


def test_must_trump_leaves_only_the_trump() -> None:
    """000:19 "Если такой карты нет, то необходимо кидать козырь": L, void in ♠ with ♥
    trumps, is offered his one trump and nothing else."""
    g = new("A")
    act(g, *A_PLAYING, *A_PLAY[:3], "play K♥ declare", "play 9♣", "play 9♥", "play K♠", "play J♣")
    assert (g.to_act, g.trump, legal(g)) == (L, Suit.HEARTS, ["play 10♥"])


# ----------------------------------------------------------------------------- dealing


@pytest.mark.parametrize(("preset", "n"), [("classic", 3), ("1001", 3), ("1001-4p", 4)])
def test_the_deal_from_the_seed(preset: str, n: int) -> None:
    """000:17 "Каждому игроку раздается по 7 карт, три кладутся в прикуп"; 002:11 "далее
    игроки сдают карты по очереди"; RULES.md §1: the first dealer drawn from the match seed,
    the deal passing clockwise, a deal reproducible from (seed, deal number); 4 players:
    the dealer is dealt nothing."""
    names = ["ann", "bob", "cid", "dan"][:n]
    for seed in (1, "x48"):
        g, again = Game.new(preset, seed, names), Game.new(preset, seed, names)
        assert g.dealer == random.Random(f"{seed}:dealer").randrange(n)
        for k in range(3):
            assert g.dealer == (g.first_dealer + k) % n and g.deal_number == k
            assert (g.dealt_hands, g.talon) == (again.dealt_hands, again.talon)
            sizes = [len(h) for h in g.dealt_hands]
            assert sizes == [0 if (n == 4 and s == g.dealer) else 7 for s in range(n)]
            cards = [c for h in g.dealt_hands for c in h] + list(g.talon)
            assert sorted(cards) == sorted(Card) and len(g.talon) == 3
            assert g.active_seats[0] == (g.dealer + 1) % n  # first hand: left of the dealer
            for x in (g, again):  # on to the next deal: a throw-in or a concession
                act(x, "pass", "pass")
                if x.last_hand_take:
                    act(x, "throw-in")
                    continue
                d = x.to_act
                assert d is not None
                a, b = (s for s in x.active_seats if s != d)
                act(x, f"give {x.hand(d)[0]} to {a}")
                act(x, f"give {x.hand(d)[0]} to {b}", "concede")
