"""Unit tests of engine.game: a hand-built deal played through, errors, barrel, the end."""

from __future__ import annotations

import dataclasses
import random

import pytest

from engine import (
    PRESETS,
    AlreadyPassedError,
    BidError,
    CardNotHeldError,
    ConcedeError,
    ContractError,
    Game,
    GameOverError,
    GiveError,
    IllegalActionError,
    MarriageError,
    NotAnActionError,
    NotYourTurnError,
    Phase,
    PlayError,
    ThrowInError,
    WrongPhaseError,
    parse_action,
    parse_cards,
)

NAMES = ["ann", "bob", "cid"]


def game_with(
    first: str,
    second: str,
    third: str,
    talon: str,
    preset: str = "classic",
    seed: int = 0,
    **options: object,
) -> Game:
    """A game whose deal 0 gives these cards to first, second and third hand."""
    rs = dataclasses.replace(PRESETS[preset], **options)  # type: ignore[arg-type]
    names = NAMES if rs.players == 3 else [*NAMES, "dan"]
    probe = Game.new(rs, seed, names)
    hands: list[tuple[object, ...]] = [() for _ in range(rs.players)]
    for seat, text in zip(probe.active_seats, (first, second, third), strict=True):
        hands[seat] = parse_cards(text)
    return Game.new(rs, seed, names, deals={0: (hands, parse_cards(talon))})  # type: ignore[dict-item]


F = "A♠ 10♠ K♥ Q♥ 9♣ J♣ Q♣"
S = "K♠ Q♠ J♠ 9♠ A♣ 10♣ K♣"
T = "A♥ 10♥ J♥ 9♥ A♦ 10♦ K♦"
TALON = "Q♦ J♦ 9♦"


def do(g: Game, *texts: str) -> None:
    for t in texts:
        g.apply(parse_action(t), seat=g.to_act)


def test_classic_deal_played_through() -> None:
    g = game_with(F, S, T, TALON)
    f, s, t = g.active_seats
    assert g.to_act == s and g.bid == 100 and g.high_bidder == f
    assert g.legal_actions()[0] == parse_action("bid 105")
    # S's cap is 120 + his ♠ marriage 40 (K♣ without Q♣ counts nothing).
    assert g.legal_actions()[-2] == parse_action("bid 160")
    do(g, "pass", "pass")
    assert g.phase is Phase.PASSING and g.declarer == f and g.bid == 100
    assert len(g.hand(f)) == 10
    do(g, f"give 9♦ to {s}")
    with pytest.raises(GiveError, match="already received"):
        g.apply(parse_action(f"give J♦ to {s}"))
    with pytest.raises(GiveError, match="yourself"):
        g.apply(parse_action(f"give J♦ to {f}"))
    do(g, f"give J♦ to {t}")
    assert g.phase is Phase.CONTRACT
    legal = g.legal_actions()
    assert str(legal[0]) == "contract 100" and str(legal[-2]) == "contract 220"
    assert str(legal[-1]) == "concede"
    with pytest.raises(ContractError, match="at least the winning bid"):
        g.apply(parse_action("contract 95"))
    with pytest.raises(ContractError, match="multiple of 5"):
        g.apply(parse_action("contract 102"))
    with pytest.raises(ContractError, match="at most"):
        g.apply(parse_action("contract 225"))
    do(g, "contract 100")
    with pytest.raises(MarriageError, match="after winning a trick"):
        g.apply(parse_action("play K♥ declare"))
    do(g, "play A♠")
    with pytest.raises(MarriageError, match="only with a lead"):
        g.apply(parse_action("play K♠ declare"))
    with pytest.raises(PlayError, match="follow suit"):
        g.apply(parse_action("play A♣"))
    do(g, "play 9♠", "play 9♥")
    assert g.to_act == f and g.card_points(f) == 11
    with pytest.raises(MarriageError, match="partner"):
        g.apply(parse_action("play Q♣ declare"))
    do(g, "play K♥ declare")
    assert g.marriage_points(f) == 100 and str(g.trump) == "♥"
    # S holds no heart and no trump: any card; T must follow hearts.
    assert len(g.legal_actions()) == 7
    do(g, "play K♣")
    with pytest.raises(PlayError, match="follow suit"):
        g.apply(parse_action("play A♦"))
    do(g, "play A♥")
    assert g.to_act == t
    # T leads a diamond: S has one (9♦ given to him), F has Q♦.
    do(g, "play A♦", "play Q♦", "play 9♦")
    while g.deal_number == 0:
        g.apply(g.legal_actions()[0])
    assert g.deal_number == 1 and len(g.deal_results) == 1
    res = g.deal_results[0]
    assert sum(res.card_points) == 120
    assert res.outcome == "made" and res.deltas[f] == 100
    assert res.deltas[s] == res.takes[s] and res.deltas[t] == res.takes[t]


def test_refusals_leave_state_unchanged_and_name_everything() -> None:
    g = game_with(F, S, T, TALON)
    before = g.record()
    _f, s, t = g.active_seats
    cases: list[tuple[object, type[IllegalActionError], str]] = [
        ("bid 105", NotAnActionError, "expected an Action"),
        (None, NotAnActionError, "NoneType"),
        (parse_action("bid 103"), BidError, "multiple of 5"),
        (parse_action("bid 100"), BidError, "raise the standing 100"),
        (parse_action("bid 225"), BidError, "120 \\+ the marriages"),
        (parse_action("play A♠"), WrongPhaseError, "not allowed in the bidding phase"),
        (parse_action("concede"), WrongPhaseError, "bidding"),
    ]
    for action, err, text in cases:
        with pytest.raises(err, match=text) as info:
            g.apply(action)
        assert "legal: bid 105" in str(info.value)
        assert info.value.seat == s and info.value.legal == g.legal_actions()
        assert g.record() == before
    with pytest.raises(NotYourTurnError, match=f"seat {s}'s turn"):
        g.apply(parse_action("bid 105"), seat=t)
    do(g, "pass")
    with pytest.raises(AlreadyPassedError) as passed:
        g.apply(parse_action("bid 110"), seat=s)
    assert isinstance(passed.value, NotYourTurnError) and isinstance(passed.value, BidError)
    # the legal actions listed are the seat to act's: the message says whose turn it is
    assert f"a pass is final (it is seat {g.to_act}'s turn)" in str(passed.value)


def test_card_not_held_and_throw_in_refused() -> None:
    g = game_with(F, S, T, TALON)
    do(g, "pass", "pass")
    with pytest.raises(CardNotHeldError, match="not in your hand"):
        g.apply(parse_action(f"give K♠ to {g.active_seats[1]}"))
    do(g, f"give 9♦ to {g.active_seats[1]}", f"give J♦ to {g.active_seats[2]}")
    with pytest.raises(ThrowInError):
        g.apply(parse_action("throw-in"))


def test_concede_free_pays_half_rounded_up() -> None:
    g = game_with(F, S, T, TALON)
    f, s, t = g.active_seats
    do(g, "bid 105", "pass", "pass", f"give 9♦ to {f}", f"give J♦ to {t}", "concede")
    res = g.deal_results[0]
    assert res.outcome == "conceded" and res.deltas[s] == 0
    assert res.deltas[f] == res.deltas[t] == 53


def test_concede_off_is_refused() -> None:
    g = game_with(F, S, T, TALON, concede="off")
    _f, s, t = g.active_seats
    do(g, "pass", "pass", f"give 9♦ to {s}", f"give J♦ to {t}")
    assert "concede" not in [str(a) for a in g.legal_actions()]
    with pytest.raises(ConcedeError, match="off"):
        g.apply(parse_action("concede"))


def test_1001_all_pass_last_hand_throw_in() -> None:
    g = game_with(F, S, T, TALON, preset="1001")
    f, s, t = g.active_seats
    assert g.to_act == f and g.bid is None
    assert str(g.legal_actions()[0]) == "bid 40"
    do(g, "pass", "pass")
    assert g.phase is Phase.PASSING and g.declarer == t and g.bid == 40 and g.last_hand_take
    do(g, f"give 9♦ to {f}", f"give J♦ to {s}")
    kinds = {type(a).__name__ for a in g.legal_actions()}
    assert kinds == {"Contract", "ThrowIn"}
    with pytest.raises(ConcedeError, match="throw in"):
        g.apply(parse_action("concede"))
    do(g, "throw-in")
    assert g.deal_results[0].deltas == tuple(50 if x != t else 0 for x in range(3))


def test_1001_4p_dealer_scores_talon_and_nines() -> None:
    g = game_with(F, S, T, "9♦ J♦ Q♦", preset="1001-4p")
    f, s, t = g.active_seats
    d = g.dealer
    assert not g.hand(d)
    do(g, "bid 40", "pass", "pass", f"give 9♦ to {s}", f"give J♦ to {t}", "concede")
    res = g.deal_results[0]
    assert res.deltas[d] == 5 and res.deltas[f] == -40 and res.deltas[s] == res.deltas[t] == 0
    nines = "9♠ 9♣ 9♦"
    g2 = game_with(
        "A♠ 10♠ K♠ Q♠ J♠ A♣ 10♣",
        "K♣ Q♣ J♣ A♦ 10♦ K♦ Q♦",
        "J♦ A♥ 10♥ K♥ Q♥ J♥ 9♥",
        nines,
        preset="1001-4p",
    )
    do(g2, "bid 40", "pass", "pass")
    decl = g2.declarer
    others = [x for x in g2.active_seats if x != decl]
    do(g2, f"give 9♠ to {others[0]}", f"give 9♣ to {others[1]}", "concede")
    assert g2.deal_results[0].deltas[g2.deal_results[0].dealer] == 100


def test_barrel_sitter_defender_takes_not_scored_and_penalty_after_three() -> None:
    sitter = Game.new("classic", 3, NAMES).active_seats[2]  # the dealer of deal 0
    scores, barrel = [0, 0, 0], [0, 0, 0]
    scores[sitter], barrel[sitter] = 880, 3
    g = Game.new("classic", 3, NAMES, scores=scores, barrel=barrel)
    for k in range(3):
        # Everybody passes to the committed first hand, who concedes for free.
        while g.phase is Phase.BIDDING:
            g.apply(parse_action("pass"))
        # When the sitter is first hand he declares and concedes for free: still sitting.
        others = [x for x in g.active_seats if x != g.declarer]
        hand = g.hand(g.declarer)
        g.apply(parse_action(f"give {hand[0]} to {others[0]}"))
        g.apply(parse_action(f"give {g.hand(g.declarer)[0]} to {others[1]}"))
        g.apply(parse_action("concede"))
        res = g.deal_results[-1]
        if k < 2:
            assert res.deltas[sitter] == 0 and res.barrel is not None
            assert res.barrel[sitter] == 2 - k
        else:
            assert res.deltas[sitter] == -120 and g.scores[sitter] == 760
            assert any("barrel" in e for e in res.events)


def test_barrel_mode_one_newcomers_fall_together() -> None:
    g = game_with(F, S, T, TALON, barrel_mode="one")
    _f, s, t = g.active_seats
    g._scores = [0, 0, 0]
    g._scores[s] = 879
    g._scores[t] = 879
    do(g, "pass", "pass", f"give 9♦ to {s}", f"give J♦ to {t}", "concede")
    # Both opponents receive 50 at once and reach 880 together: both fall off to 760.
    assert g.scores[s] == g.scores[t] == 760


def test_max_deals_ends_with_places_and_shared_places() -> None:
    rs = dataclasses.replace(PRESETS["classic"], max_deals=2)
    g = Game.new(rs, 9, NAMES)
    rng = random.Random(2)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    assert g.result is not None and g.result.reason == "max_deals" and g.result.deals == 2
    sc = g.result.scores
    for seat, place in enumerate(g.result.places):
        assert place == 1 + sum(1 for x in sc if x > sc[seat])
    with pytest.raises(GameOverError):
        g.apply(parse_action("pass"))
    assert g.legal_actions() == () and g.to_act is None


def test_places_ties_share() -> None:
    g = Game.new("classic", 1, NAMES)
    g._scores = [500, 500, 100]
    g._finish("max_deals")
    assert g.result is not None
    assert g.result.places == (1, 1, 3) and g.result.winner is None
    assert g.result.shortfalls == (500, 500, 900)


def test_clone_is_independent_and_deterministic() -> None:
    g = Game.new("1001", "abc", NAMES)
    rng = random.Random(4)
    for _ in range(40):
        g.apply_trusted(rng.choice(g.legal_actions()))
    c = g.clone()
    rec = g.record()
    for _ in range(30):
        c.apply_trusted(c.legal_actions()[0])
    assert g.record() == rec
    a, b = g.clone(), g.clone()
    for _ in range(50):
        a.apply_trusted(a.legal_actions()[-1])
        b.apply_trusted(b.legal_actions()[-1])
    assert a.record() == b.record()


def test_same_seed_same_deals_and_legal_actions_sorted() -> None:
    from engine import action_sort_key

    for preset in PRESETS:
        names = NAMES if PRESETS[preset].players == 3 else [*NAMES, "dan"]
        a, b = Game.new(preset, 11, names), Game.new(preset, 11, names)
        assert a.dealt_hands == b.dealt_hands and a.dealer == b.dealer
        rng = random.Random(8)
        for _ in range(300):
            legal = a.legal_actions()
            assert list(legal) == sorted(legal, key=action_sort_key)
            assert len(set(legal)) == len(legal)
            a.apply(rng.choice(legal))
            if a.is_over:
                break


def test_must_beat() -> None:
    g = game_with(F, S, T, TALON, must_beat=True)
    _f, s, t = g.active_seats
    do(g, "pass", "pass", f"give 9♦ to {s}", f"give J♦ to {t}", "contract 100", "play 10♠")
    # S holds K♠ Q♠ J♠ 9♠: none beats 10♠, so any spade.
    assert len(g.legal_actions()) == 4
    do(g, "play 9♠")
    g2 = game_with(S, F, T, TALON, must_beat=True)
    _f2, s2, t2 = g2.active_seats
    do(g2, "pass", "pass", f"give 9♦ to {s2}", f"give J♦ to {t2}", "contract 100", "play K♠")
    # Second hand holds A♠ 10♠: both beat K♠.
    assert [str(a) for a in g2.legal_actions()] == ["play 10♠", "play A♠"]
    lo = "A♠ 9♠ K♥ Q♥ 9♣ J♣ Q♣"
    hi = "K♠ Q♠ J♠ 10♠ A♣ 10♣ K♣"
    g3 = game_with(hi, lo, T, TALON, must_beat=True)
    _f3, s3, t3 = g3.active_seats
    do(g3, "pass", "pass", f"give 9♦ to {s3}", f"give J♦ to {t3}", "contract 100", "play J♠")
    with pytest.raises(PlayError, match="must_beat"):
        g3.apply(parse_action("play 9♠"), seat=s3)
    assert [str(a) for a in g3.legal_actions()] == ["play A♠"]
