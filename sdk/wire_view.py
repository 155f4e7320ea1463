"""A decision request's view decoded with its repeated items looked up by their bytes.

:func:`request_view` gives exactly what :func:`arena.protocol.view_from_pb` gives (an equal
``PlayerView``, the same errors), for less: ``view_from_pb`` reads each item of the view's
lists (hand, legal actions, bids, tricks, ...) through a Python wrapper and serializes it
to find it among the items it decoded before. Here the view's bytes are parsed once more,
into a copy of ``PlayerView`` whose list items are declared ``bytes`` (in a private
descriptor pool), so each item is its wire bytes already: one dict lookup each. The
runner does not even serialize the view: :func:`wire_items` parses the bytes it read
into a copy of ``ServerMessage`` whose requests' views are such copies, and hands each
request's to :func:`request_view` (``items``); the message is parsed in full too, as
before, so what does not parse is refused as before.

Only items that ``view_from_pb`` itself decoded and checked are known here, learnt from its
results at the same table size (a seat's range depends on it). Anything else (an item not
seen before, a value out of range, an unknown phase or suit, a list of the wrong length, a
view leaving out more than the match's last one held) sends the whole view to
``view_from_pb``, which decodes it, or raises the error naming the field: this module
refuses nothing itself and never builds a view ``view_from_pb`` would not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from arena.protocol import (
    MalformedMessageError,
    card_from_pb,
    deal_result_from_pb,
    held_descriptors,
    phase_from_pb,
    view_from_pb,
)
from arena.v1 import arena_pb2 as pb
from engine import Phase, PlayerView, Ruleset, Suit, Trick

__all__ = ["request_view", "request_view_of", "wire_items"]

#: The repeated message fields of ``PlayerView``, declared ``bytes`` in the copy.
_ITEMS = (
    "hand", "talon", "bids", "gives", "marriages", "trick", "tricks", "legal_actions",
    "deal_results",
)  # fmt: skip

#: The most entries of each cache (then emptied, as arena.protocol's caches are) and the
#: longest item kept: a hostile arena's endless new items cost lookups, not memory.
_CACHE_MAX = 4096
_KEY_MAX = 4096


def _item_classes() -> tuple[Any, Any]:
    """``PlayerView``'s copy (``ItemView``: the same field numbers and wire types, list
    items as ``bytes``, enums as ``uint32``, their values checked here as ``view_from_pb``
    does), and ``ServerMessage``'s (``ItemServer``): its ``decision_request`` a copy of
    ``DecisionRequest`` whose ``view`` is an ``ItemView``, its ``batch`` one whose messages
    are copies too, every other message or string field ``bytes`` (not read)."""
    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="sdk/wire_view.proto", package="sdk.wire_view", syntax="proto3"
    )

    def copy(desc: Any, name: str, keep: dict[str, str]) -> None:
        src = descriptor_pb2.DescriptorProto()
        desc.CopyToProto(src)
        for fd in src.field:
            if fd.name in keep:
                fd.type_name = f".sdk.wire_view.{keep[fd.name]}"
            elif fd.type in (f.TYPE_MESSAGE, f.TYPE_STRING) and (
                desc is not pb.PlayerView.DESCRIPTOR or fd.name in _ITEMS
            ):
                fd.type = f.TYPE_BYTES
                fd.ClearField("type_name")
            elif fd.type == f.TYPE_ENUM:
                fd.type = f.TYPE_UINT32
                fd.ClearField("type_name")
        src.name = name
        file.message_type.add().CopyFrom(src)

    copy(pb.PlayerView.DESCRIPTOR, "ItemView", {})
    copy(pb.DecisionRequest.DESCRIPTOR, "ItemRequest", {"view": "ItemView"})
    copy(pb.Batch.DESCRIPTOR, "ItemBatch", {"messages": "ItemServer"})
    copy(
        pb.ServerMessage.DESCRIPTOR,
        "ItemServer",
        {"decision_request": "ItemRequest", "batch": "ItemBatch"},
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    view, server = (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"sdk.wire_view.{name}"))
        for name in ("ItemView", "ItemServer")
    )
    return view, server


_ItemView, _ItemServer = _item_classes()
#: (taken from the class once: ``items.HasField`` looks its name up among the fields first)
_has = _ItemView.HasField

#: The descriptors of the copies' messages and fields, held here (arena.v1's are held by
#: arena.protocol): see :func:`held_descriptors`.
_HELD = held_descriptors(_ItemView.DESCRIPTOR.file)


def wire_items(data: bytes) -> Any:
    """The ``ServerMessage`` whose bytes are ``data`` (which parse as one: the caller
    parsed them), parsed again as wire_view's copy: its requests' views (``.view`` of
    ``decision_request``, of each of ``batch.messages``' too) with their items as their
    bytes, for :func:`request_view`'s ``items``, without serializing each view again.
    ``None`` if they do not parse so (never seen: the copy reads less than the message,
    in the same wire types; then each view is serialized again, as before)."""
    try:
        return _ItemServer.FromString(data)
    except DecodeError:
        return None


def _phases() -> dict[int, Phase]:
    # (UNSPECIFIED is left out: view_from_pb refuses it)
    return {v: phase_from_pb(v) for v in pb.Phase.values() if v != pb.PHASE_UNSPECIFIED}


_PHASE: dict[int, Phase] = _phases()
_SUIT: dict[int, Suit | None] = {0: None, **{s + 1: s for s in Suit}}

#: Decoded items by (players at the table, field) and then by their wire bytes.
_KNOWN: dict[tuple[int, str], dict[bytes, Any]] = {}


def request_view(
    msg: pb.PlayerView, ruleset: Ruleset, previous: PlayerView | None = None, items: Any = None
) -> PlayerView:
    """``view_from_pb(msg, ruleset, previous)``, the same view or the same error, faster
    for the items seen before (see the module's docs). ``items``: ``msg`` as the copy
    parses it, from the bytes it was read from (:func:`wire_items`); without it ``msg`` is
    serialized and parsed again."""
    return _request_view(msg, None, ruleset, previous, items)


def request_view_of(
    req: pb.DecisionRequest, ruleset: Ruleset, previous: PlayerView | None, items: Any
) -> PlayerView:
    """``request_view(req.view, ruleset, previous, items)``, with ``req.view`` read only
    when it is needed (no ``items``, or a view not known here): each read of it makes a
    upb wrapper and frees it again, and the runner's ``items`` make most views without it."""
    return _request_view(None, req, ruleset, previous, items)


def _request_view(
    msg: pb.PlayerView | None,
    req: pb.DecisionRequest | None,
    ruleset: Ruleset,
    previous: PlayerView | None,
    items: Any,
) -> PlayerView:
    """:func:`request_view` of ``msg``, or of ``req.view`` (read only when needed)."""
    if items is None:
        items = _ItemView.FromString(_view_pb(msg, req).SerializeToString())
    n = ruleset.players
    try:
        view = _known_view(items, n, ruleset, previous)
    except KeyError:  # an item, phase or suit not known here
        view = None
    if view is None:
        view = view_from_pb(_view_pb(msg, req), ruleset, previous)  # (raises what is wrong)
        _learn(items, n, view)
    return view


def _view_pb(msg: pb.PlayerView | None, req: pb.DecisionRequest | None) -> pb.PlayerView:
    if msg is not None:
        return msg
    assert req is not None
    return req.view


def _learn(items: Any, n: int, view: PlayerView) -> None:
    """Remember the items of ``view`` (decoded by ``view_from_pb``) by their bytes."""

    def put(name: str, decoded: Sequence[Any], tail: bool = False) -> None:
        cache = _cache(n, name)
        raw = getattr(items, name)[:]  # (a slice: see _known_view)
        if tail:
            decoded = decoded[len(decoded) - len(raw) :]
        for key, value in zip(raw, decoded, strict=True):
            _store(cache, key, value)

    # The hand is sorted by view_from_pb (the wire's order is not trusted): each card
    # decoded on its own. The lists left out in part ("results_once", "deal_once") are
    # the tails of the view's.
    put("hand", [card_from_pb(pb.Card.FromString(c)) for c in items.hand[:]])
    put("legal_actions", view.legal_actions)
    if view.talon is not None:
        put("talon", view.talon)
    put("bids", view.bids, tail=True)
    put("tricks", view.tricks, tail=True)
    put("trick", view.trick)
    put("gives", view.gives)
    put("marriages", view.marriages)
    put("deal_results", view.deal_results, tail=True)


def _cache(n: int, name: str) -> dict[bytes, Any]:
    return _KNOWN.setdefault((n, name), {})


def _store(cache: dict[bytes, Any], key: bytes, value: object) -> None:
    if len(key) <= _KEY_MAX:
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[key] = value


def _new_trick(data: bytes, n: int) -> Trick | None:
    """A completed trick's bytes decoded as ``view_from_pb`` decodes them; ``None`` where
    it would raise (it then does, naming the field)."""
    try:
        t = pb.Trick.FromString(data)
        cards = tuple([(sc.seat, card_from_pb(sc.card)) for sc in t.cards[:]])
    except (MalformedMessageError, DecodeError):
        return None
    if not cards or max(s for s, _ in cards) >= n or t.leader >= n or t.winner >= n:
        return None
    return Trick(t.leader, cards, t.winner)


def _known_view(
    items: Any, n: int, ruleset: Ruleset, previous: PlayerView | None
) -> PlayerView | None:
    """The view, if everything in it is known and in range; ``None`` (or ``KeyError``)
    sends it to ``view_from_pb``. Each check is one ``view_from_pb`` makes, in the same
    terms. (Its repeated fields are read by a slice, a list made in C: a upb container
    has no ``__iter__``, and iterating one ends in an ``IndexError`` raised and caught,
    its message formatted, some 1,800 instructions each time.)"""
    players = tuple(items.players[:])
    if len(players) != n:
        return None
    deal = items.deal_number
    omitted = items.deal_results_omitted
    raw_results = items.deal_results[:]
    kept: tuple[Any, ...] = ()
    if omitted:
        if previous is None or omitted > len(previous.deal_results):
            return None
        kept = previous.deal_results[:omitted]
    if omitted + len(raw_results) > deal:
        return None
    bids: tuple[Any, ...] = ()
    tricks: tuple[Any, ...] = ()
    omitted_bids, omitted_tricks = items.bids_omitted, items.tricks_omitted
    if omitted_bids or omitted_tricks:
        if previous is None or previous.deal_number != deal:
            return None
        if omitted_bids > len(previous.bids) or omitted_tricks > len(previous.tricks):
            return None
        bids, tricks = previous.bids[:omitted_bids], previous.tricks[:omitted_tricks]
    seat, dealer = items.seat, items.dealer
    # (an optional field's presence asked only of a 0: a value other than 0 is set)
    has = _has
    to_act, declarer = items.to_act, items.declarer
    if not to_act and not has(items, "to_act"):
        to_act = None
    if not declarer and not has(items, "declarer"):
        declarer = None
    if seat >= n or dealer >= n or (to_act or 0) >= n or (declarer or 0) >= n:
        return None  # (unsigned: never below 0)
    known = _KNOWN
    cards = known[n, "hand"]
    held = list(map(cards.__getitem__, items.hand[:]))
    if len(set(held)) != len(held):
        return None
    active = tuple(items.active_seats[:])
    if not active or max(active) >= n or len(set(active)) != len(active):
        return None
    scores = tuple(items.scores[:])
    barrel = items.barrel[:]
    if len(scores) != n or len(barrel) not in (0, n):
        return None
    talon = None
    if items.talon_known:
        cards = known[n, "talon"]
        talon = tuple(map(cards.__getitem__, items.talon[:]))
    # (each repeated field read once: a read makes its container's wrapper anew, and
    # slicing an empty one costs less than a second read)
    raw = items.bids[:]
    if raw:
        cache = known[n, "bids"]
        bids += tuple(map(cache.__getitem__, raw))
    raw = items.tricks[:]
    if raw:
        # (a completed trick comes in one view of its deal, the next leave it out
        # ("deal_once"), and a deal result in one view of its match: new ones, most of
        # them, each decoded on its own rather than the whole view again)
        cache = _cache(n, "tricks")
        for t in raw:
            trick = cache.get(t)
            if trick is None:
                trick = _new_trick(t, n)
                if trick is None:
                    return None
                _store(cache, t, trick)
            tricks += (trick,)
    results = kept
    if raw_results:
        cache = _cache(n, "deal_results")
        for r in raw_results:
            result = cache.get(r)
            if result is None:
                try:
                    result = deal_result_from_pb(pb.DealResult.FromString(r), n)
                except (MalformedMessageError, DecodeError):
                    return None
                _store(cache, r, result)
            results += (result,)
    legal = known[n, "legal_actions"]
    gives, marriages, in_trick = items.gives[:], items.marriages[:], items.trick[:]
    bid, contract = items.bid, items.contract
    if not bid and not has(items, "bid"):
        bid = None
    if not contract and not has(items, "contract"):
        contract = None
    return PlayerView(
        seat=seat,
        players=players,
        ruleset=ruleset,
        deal_number=deal,
        dealer=dealer,
        phase=_PHASE[items.phase],
        to_act=to_act,
        hand=tuple(sorted(held)),
        active_seats=active,
        talon=talon,
        bids=bids,
        declarer=declarer,
        bid=bid,
        contract=contract,
        gives=tuple(map(known[n, "gives"].__getitem__, gives)) if gives else (),
        trump=_SUIT[items.trump],
        marriages=(tuple(map(known[n, "marriages"].__getitem__, marriages)) if marriages else ()),
        trick=tuple(map(known[n, "trick"].__getitem__, in_trick)) if in_trick else (),
        tricks=tricks,
        scores=scores,
        barrel=tuple([b if b > 0 else 0 for b in barrel]) if barrel else None,
        legal_actions=tuple(map(legal.__getitem__, items.legal_actions[:])),
        deal_results=results,
    )
