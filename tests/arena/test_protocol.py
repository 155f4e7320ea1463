"""arena.protocol: protobuf ⇄ engine conversions, both directions, total and lossless."""

from __future__ import annotations

import random

import pytest

from arena.protocol import (
    MalformedActionError,
    MalformedMessageError,
    action_event_to_pb,
    action_from_pb,
    action_to_pb,
    card_from_pb,
    card_to_pb,
    deal_result_from_pb,
    deal_result_to_pb,
    match_result_from_pb,
    match_result_to_pb,
    phase_from_pb,
    public_action_from_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    seat_action_from_pb,
    seat_action_to_pb,
    view_from_pb,
    view_to_pb,
)
from arena.v1 import arena_pb2 as pb
from engine import (
    DECK,
    PRESETS,
    Bid,
    Card,
    Concede,
    Contract,
    Game,
    Give,
    HiddenGive,
    Pass,
    Phase,
    Play,
    ThrowIn,
    observe,
    public_action,
)

ALL_ACTIONS = [
    Bid(105),
    Pass(),
    Give(Card.HK, 2),
    Contract(120),
    Concede(),
    ThrowIn(),
    Play(Card.S9),
    Play(Card.HQ, declare=True),
]


def _wire(msg):  # any message, through bytes and back
    return type(msg).FromString(msg.SerializeToString())


def test_every_card_round_trips_and_is_distinct() -> None:
    seen = set()
    for c in DECK:
        m = _wire(card_to_pb(c))
        assert card_from_pb(m) is c
        seen.add((m.suit, m.rank))
    assert len(seen) == 24


@pytest.mark.parametrize("action", ALL_ACTIONS, ids=str)
def test_actions_round_trip(action: object) -> None:
    m = _wire(action_to_pb(action))  # type: ignore[arg-type]
    assert action_from_pb(m) == action


def test_hidden_give_is_a_give_without_card() -> None:
    m = _wire(action_to_pb(HiddenGive(1)))
    assert m.WhichOneof("kind") == "give" and not m.give.HasField("card")
    assert public_action_from_pb(m) == HiddenGive(1)
    # A bot's decision may not be a hidden give.
    with pytest.raises(MalformedActionError, match=r"give\.card"):
        action_from_pb(m)
    sa = _wire(seat_action_to_pb(0, HiddenGive(2)))
    assert seat_action_from_pb(sa) == (0, HiddenGive(2))


@pytest.mark.parametrize(
    ("msg", "what"),
    [
        (pb.Action(), "action"),
        (pb.Action(play=pb.PlayCard(declare=True)), "play.card"),
        (pb.Action(play=pb.PlayCard(card=pb.Card(suit=pb.SUIT_HEARTS))), "play.card"),
        (pb.Action(play=pb.PlayCard(card=pb.Card(rank=pb.RANK_ACE))), "play.card"),
        (pb.Action(give=pb.Give(to_seat=1)), "give.card"),
        (pb.Action(give=pb.Give(card=pb.Card(suit=9, rank=1), to_seat=1)), "give.card"),  # type: ignore[arg-type]
    ],
)
def test_malformed_actions_name_what_is_missing(msg: pb.Action, what: str) -> None:
    with pytest.raises(MalformedActionError) as e:
        action_from_pb(msg)
    assert e.value.what == what
    assert str(e.value).startswith(what + ":")


def test_malformed_card_messages() -> None:
    with pytest.raises(MalformedActionError, match="suit missing"):
        card_from_pb(pb.Card(rank=pb.RANK_NINE))
    with pytest.raises(MalformedActionError, match="unknown rank value 7"):
        card_from_pb(pb.Card(suit=pb.SUIT_SPADES, rank=7))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_rulesets_round_trip(name: str) -> None:
    rs = PRESETS[name]
    assert ruleset_from_pb(_wire(ruleset_to_pb(rs))) == rs


def test_bad_ruleset_names_the_option() -> None:
    m = ruleset_to_pb(PRESETS["classic"])
    m.players = 5
    with pytest.raises(MalformedMessageError) as e:
        ruleset_from_pb(m)
    assert e.value.what == "ruleset.players"


def test_phase_unspecified_is_refused() -> None:
    with pytest.raises(MalformedMessageError, match="phase"):
        phase_from_pb(pb.PHASE_UNSPECIFIED)
    assert phase_from_pb(pb.PHASE_PLAYING) is Phase.PLAYING


def _random_games(preset: str, seeds: range, max_deals: int):
    rs = PRESETS[preset]
    for seed in seeds:
        g = Game.new(rs, seed, [f"p{i}" for i in range(rs.players)])
        rng = random.Random(seed)
        while not g.is_over and g.deal_number < max_deals:
            yield g
            g.apply_trusted(rng.choice(g.legal_actions()))
        yield g


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
def test_observe_round_trips_through_the_wire(preset: str) -> None:
    """observe(game, seat) -> pb -> bytes -> pb -> PlayerView is the same view."""
    rs = ruleset_from_pb(ruleset_to_pb(PRESETS[preset]))
    n = 0
    for g in _random_games(preset, range(2), 4):
        for seat in range(rs.players):
            v = observe(g, seat)
            assert view_from_pb(_wire(view_to_pb(v)), rs) == v
            n += 1
    assert n > 300


def test_game_over_view_round_trips() -> None:
    rs = PRESETS["1001"]
    g = Game.new(rs, 1, ["a", "b", "c"])
    while not g.is_over:
        g.apply_trusted(g.legal_actions()[-1])
    for seat in range(3):
        v = observe(g, seat)
        assert v.phase is Phase.GAME_OVER
        assert view_from_pb(_wire(view_to_pb(v)), rs) == v


def test_deal_results_round_trip_with_all_outcomes() -> None:
    outcomes = set()
    for preset in ("classic", "1001", "1001-4p"):
        finals = {id(g): g for g in _random_games(preset, range(4), 12) if g.deal_number >= 11}
        for r in (r for g in finals.values() for r in g.deal_results):
            m = _wire(deal_result_to_pb(r))
            assert deal_result_from_pb(m) == r
            assert m.conceded == (r.outcome == "conceded")
            assert m.made == (r.outcome == "made")
            outcomes.add(r.outcome)
    assert "failed" in outcomes and len(outcomes) >= 2


def test_deal_result_without_outcome_is_refused() -> None:
    with pytest.raises(MalformedMessageError, match="outcome"):
        deal_result_from_pb(pb.DealResult(declarer=1))


def test_marriages_carry_value_and_trick() -> None:
    rs = PRESETS["classic"]
    for g in _random_games("classic", range(30), 3):
        if g.phase is Phase.PLAYING and g.marriages:
            v = observe(g, 0)
            m = view_to_pb(v)
            for (seat, suit), mm in zip(v.marriages, m.marriages, strict=True):
                assert mm.seat == seat
                assert mm.value == (200 if suit is None else suit.marriage_value)
                tricks = [*v.tricks]
                lead = tricks[mm.trick].cards[0] if mm.trick < len(tricks) else v.trick[0]
                assert lead[0] == seat
            assert view_from_pb(m, rs) == v
            return
    pytest.fail("no marriage in the sampled games (the seeds are fixed)")


def test_views_never_carry_hidden_cards_of_others() -> None:
    """A give seen by a third seat has no card on the wire."""
    for g in _random_games("classic", range(5), 2):
        if g.phase is Phase.PLAYING and g.gives:
            for seat in range(3):
                m = view_to_pb(observe(g, seat))
                for sa in m.gives:
                    shown = sa.action.give.HasField("card")
                    assert shown == (seat in (g.declarer, sa.action.give.to_seat))
            return
    pytest.fail("no deal reached the play")


def test_public_action_events_on_the_wire() -> None:
    give = Give(Card.HA, 1)
    assert seat_action_from_pb(seat_action_to_pb(0, public_action(give, 0, 2))) == (
        0,
        HiddenGive(1),
    )
    assert seat_action_from_pb(seat_action_to_pb(0, public_action(give, 0, 1))) == (0, give)


def test_action_events_are_the_messages_built_field_by_field() -> None:
    """action_event_to_pb caches bytes per match and per action: whatever the match, seq,
    source, seat and (censored) action, it makes the message the fields describe."""
    give = Give(Card.HA, 1)
    cases = [(Bid(120), 0), (Pass(), 2), (give, 0), (public_action(give, 0, 2), 0),
             (Play(Card.SK, declare=True), 1), (Contract(130), 2)]  # fmt: skip
    for mid in ("m1", "другой-матч"):
        for seq in (1, 127, 128, 4095, 4096, 70_000):
            for source in (pb.ACTION_SOURCE_BOT, pb.ACTION_SOURCE_FALLBACK):
                for action, seat in cases:
                    want = pb.Event(match_id=mid, seq=seq, source=source)
                    want.action.CopyFrom(seat_action_to_pb(seat, action))
                    got = action_event_to_pb(mid, seq, source, seat, action)
                    assert got == want
                    assert got.SerializeToString() == want.SerializeToString()


def test_view_built_in_place_is_the_same_view() -> None:
    for g in _random_games("1001-4p", range(1), 3):
        for seat in range(4):
            v = observe(g, seat)
            msg = pb.ServerMessage()
            assert view_to_pb(v, msg.decision_request.view) is msg.decision_request.view
            assert msg.decision_request.view == view_to_pb(v)


def test_match_result_to_pb() -> None:
    m = match_result_to_pb(
        {"scores": [1000, 500, -20], "places": [1, 3, 2], "shortfalls": [0, 500, 1020],
         "deals": 9},
        forfeits=[1],
    )  # fmt: skip
    assert list(m.places) == [1, 3, 2] and list(m.forfeits) == [1] and m.deals == 9


def test_the_match_result_says_why_the_match_ended_as_locally() -> None:
    """A bot's on_match_end gets the same GameResult.reason from an arena as from a local
    match ("target", "max_deals"); it used to be "" unless a seat forfeited."""
    from bots import load
    from sdk import play_local

    local = play_local([load("random")] * 3, seed=4, max_deals=2).result
    assert local.reason == "max_deals"
    msg = match_result_to_pb(
        {"scores": list(local.scores), "places": list(local.places),
         "shortfalls": list(local.shortfalls), "deals": local.deals, "reason": local.reason}
    )  # fmt: skip
    assert msg.reason == "max_deals"
    assert match_result_from_pb(msg, 3) == local
    forfeited = match_result_to_pb({"scores": [0, 0, 0], "places": [1, 1, 3], "deals": 1,
                                    "reason": "target"}, forfeits=[2])  # fmt: skip
    assert match_result_from_pb(forfeited, 3).reason == "forfeit"
    with pytest.raises(MalformedMessageError, match=r"match_result\.scores: 3 values for 4"):
        match_result_from_pb(forfeited, 4)


# ----------------------------------------------------------------------------- found by an audit


def test_a_declare_that_is_no_bool_is_not_put_on_the_wire() -> None:
    """Defect: ``Play(card, declare="no")`` went out as a declaring play (a truthy string);
    like any field of the wrong type it is refused (the SDK sends a malformed action)."""
    assert action_to_pb(Play(Card.HK, declare=False)).play.declare is False
    for declare in ("no", 1, None):
        with pytest.raises(TypeError, match=r"Play\.declare must be a bool"):
            action_to_pb(Play(Card.HK, declare=declare))  # type: ignore[arg-type]


def _playing_view(preset: str = "classic"):
    """A view of the seat to act, in a deal with a completed trick; the game's ruleset."""
    rs = PRESETS[preset]
    g = Game.new(rs, 3, [f"p{i}" for i in range(rs.players)])
    rng = random.Random(3)
    while not observe(g, 0).tricks or g.to_act is None:
        g.apply_trusted(rng.choice(g.legal_actions()))
    return observe(g, g.to_act), rs


def _mutate(view, what: str) -> None:
    if what == "players":
        view.players.append("intruder")
    elif what == "active_seats":
        view.active_seats[0] = 7
    elif what == "active_seats twice":
        view.active_seats[1] = view.active_seats[0]
    elif what == "hand":
        view.hand.append(view.hand[0])
    elif what == "declarer":
        view.declarer = 99
    elif what == "tricks.leader":
        view.tricks[0].leader = 5
    elif what == "tricks.winner":
        view.tricks[0].winner = 3


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        ("players", "view.players"),
        ("active_seats", "view.active_seats"),
        ("active_seats twice", "view.active_seats"),
        ("hand", "view.hand"),
        ("declarer", "view.declarer"),
        ("tricks.leader", "view.tricks.leader"),
        ("tricks.winner", "view.tricks.winner"),
    ],
)
def test_inconsistent_views_are_refused_naming_the_field(mutation: str, field: str) -> None:
    """Defect: views the referee never sends reached the bot unchecked (more players than
    the ruleset seats, seats out of range, a card twice in the hand) while other bad fields
    were refused by name."""
    v, rs = _playing_view()
    msg = view_to_pb(v)
    assert view_from_pb(_wire(msg), rs) == v
    _mutate(msg, mutation)
    with pytest.raises(MalformedMessageError) as e:
        view_from_pb(_wire(msg), rs)
    assert e.value.what == field


def test_a_four_player_view_is_refused_for_a_three_player_ruleset() -> None:
    v, rs = _playing_view("1001-4p")
    assert view_from_pb(view_to_pb(v), rs) == v
    with pytest.raises(MalformedMessageError, match=r"expected 3 players \(the ruleset's\), got 4"):
        view_from_pb(view_to_pb(v), PRESETS["classic"])


def test_a_deal_result_without_declarer_is_refused() -> None:
    """Every deal has a declarer (engine.DealResult.declarer is an int): a result without
    one describes no deal (the SDK skips that event, see tests/sdk/test_hostile_arena.py)."""
    g = Game.new("classic", 1, ["a", "b", "c"])
    while not g.deal_results:
        g.apply_trusted(g.legal_actions()[-1])
    msg = deal_result_to_pb(g.deal_results[0])
    msg.ClearField("declarer")
    with pytest.raises(MalformedMessageError, match="every deal has one") as e:
        deal_result_from_pb(msg)
    assert e.value.what == "deal_result.declarer"
