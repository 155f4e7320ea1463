"""Round 48: the codec's and the engine's caches against cache-free references.

Round 47 made ``arena.protocol`` find the items that repeat from view to view by their
wire bytes (``view_from_pb``: bids, the trick in progress, completed tricks, deal results,
legal actions) and keep a view's ``bids`` and ``tricks`` bytes by the tuple's identity
(``view_to_pb``); the engine memoises ``Game.tricks`` and ``Game.auction()`` and makes
``cards_from_mask`` by byte tables. A cache that hands out a wrong value is seen by a bot
as a wrong view, so every decision of random matches under every preset and shipped
ruleset is checked here against references written from the proto fields and from the
game's actions, with no cache of the module's: the bytes the referee sends, and the
``PlayerView`` a bot gets, field by field and type by type. Also with the caches cleared
at every store (every entry evicted: the freed tuples' ids are reused by the next views),
across two matches decoded in turn in one process, and with items of exactly the size a
decoded item is still kept by."""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import protocol
from arena.protocol import (
    action_from_pb,
    action_to_pb,
    card_from_pb,
    card_to_pb,
    deal_result_from_pb,
    deal_result_to_pb,
    phase_from_pb,
    phase_to_pb,
    suit_from_pb,
    suit_to_pb,
    view_from_pb,
    view_to_pb,
)
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Bid, Game, Pass, PlayerView, Ruleset, Trick, load_ruleset, observe
from engine.cards import ACE_MARRIAGE_VALUE, DECK, cards_from_mask

ROOT = Path(__file__).resolve().parents[2]
RULESETS: list[tuple[str, Ruleset]] = [
    *((name, PRESETS[name]) for name in ("classic", "1001", "1001-4p")),
    *((p.stem, load_ruleset(p)) for p in sorted((ROOT / "rulesets").glob("*.toml"))),
]


# ----------------------------------------------------------------------------- references


def reference_to_pb(v: PlayerView) -> pb.PlayerView:
    """A view as a message, field by field (no cached bytes)."""
    m = pb.PlayerView(
        seat=v.seat,
        players=v.players,
        deal_number=v.deal_number,
        dealer=v.dealer,
        phase=phase_to_pb(v.phase),
        hand=[card_to_pb(c) for c in v.hand],
        active_seats=v.active_seats,
        scores=v.scores,
        legal_actions=[action_to_pb(a) for a in v.legal_actions],
        deal_results=[deal_result_to_pb(r) for r in v.deal_results],
    )
    if v.to_act is not None:
        m.to_act = v.to_act
    if v.talon is not None:
        m.talon_known = True
        m.talon.extend(card_to_pb(c) for c in v.talon)
    for seat, action in v.bids:
        m.bids.add(seat=seat, action=action_to_pb(action))
    for name in ("declarer", "bid", "contract"):
        if getattr(v, name) is not None:
            setattr(m, name, getattr(v, name))
    giver = v.declarer if v.declarer is not None else 0
    for to, card in v.gives:
        g = m.gives.add(seat=giver).action.give
        g.to_seat = to
        if card is None:
            g.SetInParent()
        else:
            g.card.CopyFrom(card_to_pb(card))
    if v.trump is not None:
        m.trump = suit_to_pb(v.trump)
    # (the trick each marriage was declared on: the codec's own rule, no cache in it)
    for (seat, suit), trick in zip(v.marriages, protocol._marriage_tricks(v), strict=True):
        value = ACE_MARRIAGE_VALUE if suit is None else suit.marriage_value
        m.marriages.add(seat=seat, suit=suit_to_pb(suit), value=value, trick=trick)
    for seat, card in v.trick:
        m.trick.add(seat=seat, card=card_to_pb(card))
    for t in v.tricks:
        mt = m.tricks.add(leader=t.leader, winner=t.winner)
        for seat, card in t.cards:
            mt.cards.add(seat=seat, card=card_to_pb(card))
    if v.barrel is not None:
        m.barrel.extend(b if b > 0 else -1 for b in v.barrel)
    return m


def reference_from_pb(m: pb.PlayerView, ruleset: Ruleset) -> PlayerView:
    """A (valid) view message as the view, from its fields (no cache of the codec's)."""
    return PlayerView(
        seat=m.seat,
        players=tuple(m.players),
        ruleset=ruleset,
        deal_number=m.deal_number,
        dealer=m.dealer,
        phase=phase_from_pb(m.phase),
        to_act=m.to_act if m.HasField("to_act") else None,
        hand=tuple(sorted(card_from_pb(c) for c in m.hand)),
        active_seats=tuple(m.active_seats),
        talon=tuple(card_from_pb(c) for c in m.talon) if m.talon_known else None,
        bids=tuple((sa.seat, action_from_pb(sa.action)) for sa in m.bids),
        declarer=m.declarer if m.HasField("declarer") else None,
        bid=m.bid if m.HasField("bid") else None,
        contract=m.contract if m.HasField("contract") else None,
        gives=tuple((sa.action.give.to_seat, _given(sa.action.give)) for sa in m.gives),
        trump=suit_from_pb(m.trump),
        marriages=tuple((mm.seat, suit_from_pb(mm.suit)) for mm in m.marriages),
        trick=tuple((sc.seat, card_from_pb(sc.card)) for sc in m.trick),
        tricks=tuple(
            Trick(t.leader, tuple((sc.seat, card_from_pb(sc.card)) for sc in t.cards), t.winner)
            for t in m.tricks
        ),
        scores=tuple(m.scores),
        barrel=tuple(b if b > 0 else 0 for b in m.barrel) if m.barrel else None,
        legal_actions=tuple(action_from_pb(a) for a in m.legal_actions),
        deal_results=tuple(deal_result_from_pb(r, len(m.players)) for r in m.deal_results),
    )


def _given(g: pb.Give) -> Any:
    return card_from_pb(g.card) if g.HasField("card") else None


def reference_bids(g: Game) -> tuple[tuple[int, Any], ...]:
    """``Game.auction()`` as ``observe`` made it before the memo (round 46)."""
    return tuple((s, a) for s, a in g.actions if isinstance(a, Bid | Pass))


def reference_tricks(g: Game) -> tuple[Trick, ...]:
    """``Game.tricks`` made afresh: a clone whose memo is emptied."""
    fresh = g.clone()
    fresh._made_tricks = ()
    return fresh.tricks


# ----------------------------------------------------------------------------- checks


def same(a: object, b: object, where: str) -> None:
    """``a == b`` and of the same types all the way down (a ``Card`` is no plain int)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, tuple) and not isinstance(a, enum.Enum):
        assert len(a) == len(b), f"{where}: {a!r} vs {b!r}"  # type: ignore[arg-type]
        for i, (x, y) in enumerate(zip(a, b, strict=True)):  # type: ignore[call-overload]
            same(x, y, f"{where}[{i}]")
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def nothing_mutable(value: object, where: str) -> None:
    """No list, dict, set or unfrozen object a bot could change for another view."""
    if isinstance(value, str | bytes | int | float | bool | type(None) | enum.Enum):
        return
    if isinstance(value, tuple):
        for i, x in enumerate(value):
            nothing_mutable(x, f"{where}[{i}]")
        return
    assert dataclasses.is_dataclass(value), f"{where}: a {type(value).__name__}"
    params: Any = getattr(type(value), "__dataclass_params__")  # noqa: B009
    assert params.frozen, f"{where}: {type(value).__name__} is not frozen"
    for f in dataclasses.fields(value):
        if f.name != "ruleset":  # (the caller's own, passed in)
            nothing_mutable(getattr(value, f.name), f"{where}.{f.name}")


def matches(rules: Ruleset, seed: int, deals: int = 2) -> Iterator[tuple[Game, PlayerView, int]]:
    """Every seat's view at every decision of a random match of ``deals`` deals, and at
    its end; a clone played on its own way now and then, its tricks checked afresh."""
    rules = dataclasses.replace(rules, max_deals=deals)
    g = Game.new(rules, seed, [f"p{i}" for i in range(rules.players)])
    rng = random.Random(seed)
    while True:
        for s in range(rules.players):
            yield g, observe(g, s, ended=g.is_over), s
        if g.is_over:
            return
        if rng.random() < 0.05:
            fork = g.clone()
            for _ in range(rng.randrange(1, 12)):
                if fork.is_over:
                    break
                fork.apply_trusted(rng.choice(fork.legal_actions()))
                assert fork.tricks == reference_tricks(fork)
                assert fork.auction() == reference_bids(fork)
        g.apply_trusted(rng.choice(g.legal_actions()))


def check_decision(g: Game, v: PlayerView) -> None:
    """The engine's memos, then both directions of the codec, against the references."""
    if not g.is_over:
        same(g.tricks, reference_tricks(g), "Game.tricks")
        same(g.auction(), reference_bids(g), "Game.auction()")
        same(v.tricks, reference_tricks(g), "view.tricks")
    data = view_to_pb(v).SerializeToString()
    assert data == reference_to_pb(v).SerializeToString()
    wire = pb.PlayerView.FromString(data)
    got = view_from_pb(wire, v.ruleset)
    same(got, reference_from_pb(wire, v.ruleset), "view")
    same(got, v, "view (observe's)")
    nothing_mutable(got, "view")


def play_in_turn(games: list[tuple[Ruleset, int]], deals: int = 2) -> int:
    """The decisions of several matches, checked one of each in turn (one process's
    caches shared by them all); how many were checked."""
    runs = [matches(rules, seed, deals) for rules, seed in games]
    done = 0
    while runs:
        for run in list(runs):
            item = next(run, None)
            if item is None:
                runs.remove(run)
                continue
            g, v, _ = item
            check_decision(g, v)
            done += 1
    return done


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize(("name", "rules"), RULESETS, ids=[n for n, _ in RULESETS])
def test_every_decision_under_every_ruleset_matches_the_references(
    name: str, rules: Ruleset
) -> None:
    """Two matches of the ruleset, decoded in turn, after a match of another table size
    (so that the caches hold items of both)."""
    other = PRESETS["1001-4p" if rules.players == 3 else "classic"]
    assert play_in_turn([(other, 7)], deals=1) > 30
    assert play_in_turn([(rules, 1), (rules, 2)]) > 100


@pytest.mark.parametrize("cap", [1, protocol._CACHE_MAX], ids=["cleared-at-every-store", "full"])
def test_tuples_freed_and_their_ids_reused_encode_as_themselves(
    cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Views holding fresh copies of their bids and tricks (not the game's tuples), each
    dropped after its view: their ids are handed to the next views' tuples, which the
    id-keyed bytes caches of a deal's bids and tricks must not take for the freed ones.
    With the caches' usual size, and with a size of one, every entry evicted at each store
    (the tuples it held freed: some ids are checked to have been reused). At the usual
    size, an entry holds its tuple, so no id of one is reused while its entry lasts: a
    cache keeping the id alone handed the freed tuple's bytes to the next view's."""
    monkeypatch.setattr(protocol, "_CACHE_MAX", cap)
    seen: dict[int, list[object]] = {}  # (lists: holding the tuple would keep its id)
    reused = 0
    for rules, seed in ((PRESETS["classic"], 3), (PRESETS["1001-4p"], 4)):
        for g, v, _ in matches(rules, seed):
            fresh = dataclasses.replace(v, bids=tuple(list(v.bids)), tricks=tuple(list(v.tricks)))
            for t in (fresh.bids, fresh.tricks):
                if t:
                    reused += id(t) in seen and seen[id(t)] != list(t)
                    seen[id(t)] = list(t)
            check_decision(g, fresh)
            check_decision(g, v)
    assert reused > 10 or cap > 1


def _padded(msg: Any, size: int) -> Any:
    """``msg`` with an unknown field (number 1000, as a hostile or newer arena may send)
    making its bytes ``size`` long."""
    base = msg.SerializeToString()
    tag = b"\xc2\x3e"  # field 1000, wire type 2
    for filler in range(size, 0, -1):  # the length's own varint shrinks the filler
        extra = tag + protocol._varint(filler) + b"x" * filler
        if len(base) + len(extra) == size:
            return type(msg).FromString(base + extra)
    raise AssertionError(f"no padding to {size} bytes")


@pytest.mark.parametrize("size", [protocol._DECODED_KEY_MAX, protocol._DECODED_KEY_MAX + 1])
def test_items_at_the_size_limit_decode_alike_kept_or_not(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind of item decoded by its bytes, padded to exactly the limit (kept) and one
    byte past it (not kept): the view is the reference's, at the first decoding and the
    next, and the unpadded items still decode as themselves. (Empty caches: the actions'
    one, never cleared, stores nothing more once full, as it may be in a long session.)"""
    for name in ("_BID_BY_BYTES", "_SEAT_CARD_BY_BYTES", "_TRICK_BY_BYTES", "_RESULT_BY_BYTES",
                 "_ACTION_BY_BYTES"):  # fmt: skip
        monkeypatch.setattr(protocol, name, {})
    v = next(
        v
        for _, v, _ in matches(PRESETS["1001"], 11, deals=3)
        if v.bids and v.trick and v.tricks and v.deal_results and v.legal_actions
    )
    wire = view_to_pb(v)
    padded = pb.PlayerView()
    padded.CopyFrom(wire)
    kinds: dict[str, dict[Any, Any]] = {
        "bids": protocol._BID_BY_BYTES,
        "trick": protocol._SEAT_CARD_BY_BYTES,
        "tricks": protocol._TRICK_BY_BYTES,
        "deal_results": protocol._RESULT_BY_BYTES,
    }
    for field in (*kinds, "legal_actions"):
        items = getattr(padded, field)
        items[0].CopyFrom(_padded(items[0], size))
        assert len(items[0].SerializeToString()) == size
    kept = size <= protocol._DECODED_KEY_MAX
    for _ in range(2):
        got = view_from_pb(padded, v.ruleset)
        same(got, reference_from_pb(padded, v.ruleset), "padded view")
        same(got, v, "padded view (observe's)")
        for field, cache in kinds.items():
            key = (3, getattr(padded, field)[0].SerializeToString())
            assert (key in cache) is kept, field
        assert (padded.legal_actions[0].SerializeToString() in protocol._ACTION_BY_BYTES) is kept
        same(view_from_pb(wire, v.ruleset), v, "unpadded view")


def test_a_bot_cannot_change_what_another_matchs_bot_gets() -> None:
    """Two matches' views share the decoded items (found by their bytes): every one is
    immutable, so a bot that tries to change its view changes nothing another sees."""
    v = next(
        v
        for seed in range(20)
        for _, v, _ in matches(PRESETS["classic"], seed, deals=3)
        if v.bids and v.tricks and v.trick and v.deal_results and v.legal_actions
    )
    data = view_to_pb(v).SerializeToString()
    first = view_from_pb(pb.PlayerView.FromString(data), v.ruleset)
    second = view_from_pb(pb.PlayerView.FromString(data), v.ruleset)
    assert first.tricks[0] is second.tricks[0]  # shared: found by their bytes
    assert first.deal_results[0] is second.deal_results[0]
    for target, name in (
        (first, "bids"),
        (first.deal_results[0], "scores"),
        (first.legal_actions[0], "card"),  # (a Play: the trick in progress)
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(target, name, ())
    with pytest.raises(AttributeError):
        first.tricks[0].winner = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        first.bids[0][0] = 2  # type: ignore[index]
    same(second, v, "the other match's view")
    nothing_mutable(first, "view")


def test_cards_from_mask_is_the_set_bits_in_order() -> None:
    """The byte tables against the bits read one by one, bits past the deck's 24 ignored."""
    rng = random.Random(48)
    masks = [0, (1 << 24) - 1, *(1 << i for i in range(30))]
    masks += [rng.getrandbits(30) for _ in range(3000)]
    for mask in masks:
        want = tuple(DECK[i] for i in range(24) if mask >> i & 1)
        same(cards_from_mask(mask), want, f"cards_from_mask({mask:#x})")
