"""Every conversion between the wire protocol (``arena.v1``) and the rules engine's values.

Both directions live here: the referee turns engine values into protobuf messages, and the
bot side (the SDK) turns them back. The pb → engine direction is *total*: a message that
does not describe a value raises a typed error (:class:`MalformedActionError` for actions,
:class:`MalformedMessageError` for the rest) that names what is missing, never a bare
``KeyError`` or ``ValueError`` from deep inside.

Round trips hold: ``view_from_pb(view_to_pb(v), v.ruleset) == v`` for every view made by
``engine.observe``, and likewise for cards, actions, rulesets and deal results.

>>> from engine.actions import Play, parse_action
>>> from engine.cards import Card
>>> action_from_pb(action_to_pb(Play(Card.HK, declare=True)))
Play(card=<Card.HK: 21>, declare=True)
>>> card_to_pb(Card.S9)
suit: SUIT_SPADES
rank: RANK_NINE
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import Any, cast

from arena.v1 import arena_pb2 as pb
from engine.actions import Action, Bid, Concede, Contract, Give, Pass, Play, ThrowIn
from engine.cards import ACE_MARRIAGE_VALUE, Card, Rank, Suit
from engine.game import OUTCOMES, DealResult, Game, GameResult, Phase, Trick
from engine.rules import Ruleset, RulesetError
from engine.view import HiddenGive, PlayerView, observe, visible_gives, visible_talon

__all__ = [
    "AHEAD_MOST",
    "HELLO_BYTE_LIMITED",
    "HELLO_LIMITS",
    "HELLO_MAX_BYTES",
    "PROTOCOL_VERSION",
    "RETRY_AFTER_MS",
    "MalformedActionError",
    "MalformedMessageError",
    "action_event_bytes",
    "action_event_items",
    "action_event_to_pb",
    "action_from_pb",
    "action_to_pb",
    "batch_bytes",
    "card_from_pb",
    "card_to_pb",
    "deal_result_from_pb",
    "deal_result_to_pb",
    "decision_request_bytes",
    "event_item",
    "game_view_bytes",
    "held_descriptors",
    "hello_problem",
    "match_result_from_pb",
    "match_result_to_pb",
    "message_bytes",
    "phase_from_pb",
    "phase_to_pb",
    "public_action_from_pb",
    "ruleset_from_pb",
    "ruleset_to_pb",
    "seat_action_from_pb",
    "seat_action_to_pb",
    "suit_from_pb",
    "suit_to_pb",
    "token_problem",
    "view_from_pb",
    "view_to_pb",
    "weak_token",
]

#: The protocol version this module speaks (``Hello.protocol_version``).
PROTOCOL_VERSION = 1

#: Trailing metadata key of a stream refused for a while (``RESOURCE_EXHAUSTED``: its bot
#: opened too many streams): the milliseconds to wait before the next one is let in.
RETRY_AFTER_MS = "retry-after-ms"

#: The most actions chosen ahead that the referee plays from one ``Decision.ahead`` (the
#: rest are ignored) and that the SDK sends: a seat's longest run of decisions in a row
#: that it can foresee is the declarer's second give, contract and lead.
AHEAD_MOST = 3


#: What one ``Hello`` may hold (docs/protocol.md#the-stream): its repeated fields' entries,
#: and the characters of each string (the bytes, for :data:`HELLO_BYTE_LIMITED`). A Hello
#: over them is refused (INVALID_ARGUMENT) before any entry is read: a MiB of 340,000
#: one-letter features or running ids cost the referee's loop 50-150 ms to go through, as
#: often as a token may reconnect (30 times in 10 s). The SDK sends four features, and names
#: in ``running`` the matches it holds (a tournament's ``concurrency`` at most, 256) and up
#: to 256 it played without its bot; ids are at most 256 bytes (an arena's are ASCII and
#: under 100 characters), as the SDK takes them.
HELLO_LIMITS: Mapping[str, tuple[int, int]] = {
    # field: (the most entries, the most characters, or bytes, of each)
    "bot_name": (1, 256),
    "client": (1, 256),
    "features": (64, 64),
    "running": (1024, 256),
}

#: The fields of :data:`HELLO_LIMITS` whose limit counts UTF-8 bytes, not characters: match
#: ids, which the referee makes in ASCII (a time, hex digits, a tournament's ASCII name),
#: so that its own ids are a byte a character. The others are text (a bot's name in
#: Cyrillic, say), up to 4 bytes a character, and :data:`HELLO_MAX_BYTES` allows for that:
#: a Hello within the limits is never refused for its bytes.
HELLO_BYTE_LIMITED = frozenset({"running"})


def _hello_most_bytes() -> int:
    """The bytes of the first message (a ``BotMessage`` holding the ``Hello``) with every
    limit of :data:`HELLO_LIMITS` reached, text in 4-byte UTF-8 characters (the most one
    takes) and the fields of :data:`HELLO_BYTE_LIMITED` in bytes, both numbers at their
    largest."""
    hello = pb.Hello(protocol_version=2**32 - 1, matches=2**32 - 1)
    for name, (most, chars) in HELLO_LIMITS.items():
        text = ("x" if name in HELLO_BYTE_LIMITED else "\U0001f0a1") * chars
        if isinstance(getattr(hello, name), str):
            setattr(hello, name, text)
        else:
            getattr(hello, name).extend([text] * most)
    return pb.BotMessage(hello=hello).ByteSize()


#: The most bytes a stream's first message may take: a Hello at every limit of
#: :data:`HELLO_LIMITS`, its text in 4-byte characters. A larger one is refused
#: (INVALID_ARGUMENT) before it is parsed: gRPC lets in a MiB, and a MiB of 340,000
#: one-letter ``running`` ids cost the referee 12 ms of its loop (more under load) before
#: :func:`hello_problem` refused it, as often as a token may reconnect; one of these bytes,
#: 3 ms at most (docs/protocol.md).
HELLO_MAX_BYTES = _hello_most_bytes()


def hello_problem(hello: pb.Hello) -> str | None:
    """What in ``hello`` is over :data:`HELLO_LIMITS`, or ``None``. Counts first (``len`` of
    a repeated field reads none of its entries), then each string.

    >>> hello_problem(pb.Hello(features=["batch"], running=["m1"]))
    >>> hello_problem(pb.Hello(running=["m"] * 2000))
    'Hello.running holds 2,000 entries, more than the 1,024 it may hold'
    >>> hello_problem(pb.Hello(bot_name="b" * 300))
    'Hello.bot_name is 300 characters long, more than the 256 it may have'
    >>> hello_problem(pb.Hello(bot_name="Ж" * 256, running=["Ж" * 129]))
    'Hello.running[0] is 258 bytes long in UTF-8, more than the 256 each may have (ids are ASCII)'
    """
    for name, (most, chars) in HELLO_LIMITS.items():
        value = getattr(hello, name)
        if isinstance(value, str):
            if len(value) > chars:
                return (f"Hello.{name} is {len(value):,} characters long, more than the "
                        f"{chars:,} it may have")  # fmt: skip
            continue
        if len(value) > most:
            return f"Hello.{name} holds {len(value):,} entries, more than the {most:,} it may hold"
        in_bytes = name in HELLO_BYTE_LIMITED
        for i, entry in enumerate(value):
            if len(entry) > chars:
                return (f"Hello.{name}[{i}] is {len(entry):,} characters long, more than the "
                        f"{chars:,} each may have")  # fmt: skip
            if in_bytes and not entry.isascii() and len(raw := entry.encode()) > chars:
                return (f"Hello.{name}[{i}] is {len(raw):,} bytes long in UTF-8, more than "
                        f"the {chars:,} each may have (ids are ASCII)")  # fmt: skip
    return None


#: The longest token: it travels in the call's metadata, which gRPC caps at 8 KiB.
MAX_TOKEN = 4096

#: The shortest token an organiser should give a bot: whoever presents it plays as that
#: bot, so it must not be guessable (a tournament refuses shorter remote tokens).
MIN_TOKEN = 8


def token_problem(token: str) -> str | None:
    """What makes ``token`` unusable, or ``None``. A token travels in an HTTP/2 header
    (``authorization: Bearer <token>``): printable ASCII only, and no spaces, which the
    referee would strip from what a bot presents. The token is a secret: the message names
    the first character at fault and where it is, never the token (it went to a CI log, a
    shared screen, from ``--token``, ``ARENA_TOKEN`` or a tokens file alike).

    >>> token_problem("s3cret-Token_1"), token_problem("")
    (None, 'the token is empty')
    >>> token_problem(" t1 ")
    'a token is printable ASCII without spaces: this one has a space at character 1 of 4'
    >>> token_problem("s3cret\\r\\n").split(": ", 1)[1]
    'this one has a carriage return at character 7 of 8 (a line end: was it read from a file?)'
    """
    if not token:
        return "the token is empty"
    bad = [i for i, c in enumerate(token) if not "!" <= c <= "~"]
    if not bad:
        if len(token) > MAX_TOKEN:  # gRPC refuses larger metadata (8 KiB by default)
            return f"a token is at most {MAX_TOKEN} characters, got {len(token)}"
        return None
    i = bad[0]
    c = token[i]
    kind = "a non-ASCII character" if c.isprintable() else "a control character"
    what = _TOKEN_CHARACTERS.get(c) or f"{kind} (U+{ord(c):04X})"
    if "\udc80" <= c <= "\udcff":  # a byte of a command line that was no UTF-8
        what = f"a byte that is no UTF-8 text (0x{ord(c) - 0xDC00:02X})"
    said = f"this one has {what} at character {i + 1} of {len(token)}"
    rest = token.rstrip("\r\n")
    if rest != token and rest and all("!" <= ch <= "~" for ch in rest):
        said += " (a line end: was it read from a file?)"
    return f"a token is printable ASCII without spaces: {said}"


#: The characters a token may not hold, in words (the rest by their code point).
_TOKEN_CHARACTERS = {" ": "a space", "\n": "a newline", "\r": "a carriage return",
                     "\t": "a tab", "\x00": "a NUL byte"}  # fmt: skip


def weak_token(token: str) -> bool:
    """Whether ``token`` is too short to keep another client from playing as its bot.

    >>> weak_token("t1"), weak_token("8-chars!")
    (True, False)
    """
    return len(token) < MIN_TOKEN


class MalformedMessageError(ValueError):
    """A protobuf message that does not describe an engine value; ``what`` names the part."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what


class MalformedActionError(MalformedMessageError):
    """An ``Action`` message that is not an action: no kind set, a card without suit or
    rank, a give without a card, ... ``what`` names the missing or bad field."""


# ----------------------------------------------------------------------------- cards

# engine Suit/Rank are 0-based; the wire enums reserve 0 for UNSPECIFIED.
_CARD_PB: tuple[pb.Card, ...] = tuple(
    pb.Card(suit=pb.Suit.ValueType(c.suit + 1), rank=pb.Rank.ValueType(c.rank + 1)) for c in Card
)


def suit_to_pb(suit: Suit | None) -> pb.Suit.ValueType:
    """An engine suit as a wire enum; ``None`` (no trump / the ace marriage) is UNSPECIFIED."""
    return pb.SUIT_UNSPECIFIED if suit is None else pb.Suit.ValueType(suit + 1)


def suit_from_pb(value: int) -> Suit | None:
    """A wire suit as an engine suit; UNSPECIFIED is ``None``; unknown values raise."""
    if value == pb.SUIT_UNSPECIFIED:
        return None
    if not 1 <= value <= 4:
        raise MalformedMessageError("suit", f"unknown suit value {value}")
    return Suit(value - 1)


def card_to_pb(card: Card) -> pb.Card:
    """A card as a (fresh) ``Card`` message."""
    out = pb.Card()
    out.CopyFrom(_CARD_PB[card])
    return out


def _set_card(dst: pb.Card, card: Card) -> None:
    dst.suit = pb.Suit.ValueType(card.suit + 1)
    dst.rank = pb.Rank.ValueType(card.rank + 1)


_CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(24))
#: (suit, rank) wire values -> card, for the valid pairs only.
_CARD_BY_PB: dict[tuple[int, int], Card] = {(c.suit + 1, c.rank + 1): c for c in _CARDS}


def card_from_pb(msg: pb.Card, what: str = "card") -> Card:
    """A ``Card`` message as an engine card; raises :class:`MalformedActionError` naming
    ``what`` when the suit or rank is missing or unknown."""
    s, r = msg.suit, msg.rank
    card = _CARD_BY_PB.get((s, r))
    if card is not None:
        return card
    if not 1 <= s <= 4:
        raise MalformedActionError(what, "suit missing" if s == 0 else f"unknown suit value {s}")
    if not 1 <= r <= 6:
        raise MalformedActionError(what, "rank missing" if r == 0 else f"unknown rank value {r}")
    return Card((s - 1) * 6 + (r - 1))


# The decoders read a repeated field by a slice (``msg.hand[:]``, a list made in C) before
# they loop over it: a upb container has no ``__iter__``, so a ``for``, ``tuple(...)`` or a
# comprehension over one calls its ``__getitem__`` until it raises ``IndexError``, made
# with its message formatted, some 1,800 instructions a loop (docs/performance.md, "SDK
# changes of 2026-12-15" and "of 2026-12-16").
def _cards_from_pb(msgs: Sequence[pb.Card], what: str) -> tuple[Card, ...]:
    return tuple([card_from_pb(m, what) for m in msgs[:]])  # (a slice: see the note above)


# ----------------------------------------------------------------------------- actions


def _fill_action(out: pb.Action, action: object) -> None:
    if isinstance(action, Play):
        p = out.play
        _set_card(p.card, action.card)
        declare = action.declare
        if not isinstance(declare, bool):  # a truthy "no" must not go as a declaring play
            raise TypeError(f"Play.declare must be a bool, got {declare!r}")
        if declare:
            p.declare = True
    elif isinstance(action, Bid):
        out.bid.amount = action.amount
    elif isinstance(action, Pass):
        getattr(out, "pass").SetInParent()  # `pass` is a Python keyword
    elif isinstance(action, Give):
        _set_card(out.give.card, action.card)
        out.give.to_seat = action.to
    elif isinstance(action, HiddenGive):
        out.give.SetInParent()  # a give as a third seat sees it: no card
        out.give.to_seat = action.to
    elif isinstance(action, Contract):
        out.contract.amount = action.amount
    elif isinstance(action, Concede):
        out.concede.SetInParent()
    elif isinstance(action, ThrowIn):
        out.throw_in.SetInParent()
    else:
        raise TypeError(f"not an engine action: {action!r}")


def action_to_pb(action: Action | HiddenGive) -> pb.Action:
    """An engine action (or a ``HiddenGive`` from ``public_action``) as an ``Action``."""
    out = pb.Action()
    _fill_action(out, action)
    return out


def action_from_pb(msg: pb.Action) -> Action:
    """An ``Action`` message as an engine action.

    Raises :class:`MalformedActionError` naming what is missing: no kind set, a card without
    suit or rank, a give or play without a card.

    >>> action_from_pb(pb.Action(give=pb.Give(to_seat=2)))
    Traceback (most recent call last):
    ...
    arena.protocol.MalformedActionError: give.card: a give needs a card
    """
    kind = msg.WhichOneof("kind")
    if kind == "play":
        p = msg.play
        if not p.HasField("card"):
            raise MalformedActionError("play.card", "a play needs a card")
        return Play(card_from_pb(p.card, "play.card"), declare=p.declare)
    if kind == "bid":
        return Bid(msg.bid.amount)
    if kind == "pass":
        return Pass()
    if kind == "give":
        g = msg.give
        if not g.HasField("card"):
            raise MalformedActionError("give.card", "a give needs a card")
        return Give(card_from_pb(g.card, "give.card"), g.to_seat)
    if kind == "contract":
        return Contract(msg.contract.amount)
    if kind == "concede":
        return Concede()
    if kind == "throw_in":
        return ThrowIn()
    if msg.ByteSize():  # fields, but none this protocol knows (a newer one's kind?)
        raise MalformedActionError(
            "action",
            "a kind this referee does not know (protocol version 1: bid, pass, "
            "give, contract, concede, throw_in, play)",
        )
    raise MalformedActionError("action", "no kind set (bid, pass, give, contract, ...)")


def public_action_from_pb(msg: pb.Action) -> Action | HiddenGive:
    """An action as events show it: like :func:`action_from_pb`, but a ``Give`` without a
    card (seen by a third seat) is a ``HiddenGive``."""
    if msg.WhichOneof("kind") == "give" and not msg.give.HasField("card"):
        return HiddenGive(msg.give.to_seat)
    return action_from_pb(msg)


def seat_action_to_pb(seat: int, action: Action | HiddenGive) -> pb.SeatAction:
    """``(seat, action)`` as a ``SeatAction`` message."""
    out = pb.SeatAction(seat=seat)
    _fill_action(out.action, action)
    return out


def action_event_to_pb(
    match_id: str,
    seq: int,
    source: pb.ActionSource.ValueType,
    seat: int,
    action: Action | HiddenGive,
) -> pb.Event:
    """The ``Event`` of ``seat`` taking ``action``: the message
    ``pb.Event(match_id=match_id, seq=seq, source=source,
    action=seat_action_to_pb(seat, action))``, made by parsing cached bytes (the referee
    makes one per action; building it field by field costs several times as much)."""
    return pb.Event.FromString(_action_event_data(match_id, seq, source, seat, action))


def action_event_bytes(
    match_id: str,
    seq: int,
    source: pb.ActionSource.ValueType,
    seat: int,
    action: Action | HiddenGive,
) -> bytes:
    """:func:`action_event_to_pb`'s event as the wire bytes of one item of
    ``ServerMessage.events`` (key, length, the ``Event``): what the referee queues for a
    bot, parsed only with the message that carries it (:func:`event_item`)."""
    data = _action_event_data(match_id, seq, source, seat, action)
    n = len(data)
    return b"".join((_EVENTS_KEY, _SMALL_VARINT[n] if n < 4096 else _varint(n), data))


def event_item(event: pb.Event) -> bytes:
    """``event`` as the wire bytes of one item of ``ServerMessage.events`` (as
    :func:`action_event_bytes` makes them for action events)."""
    data = event.SerializeToString()
    return _EVENTS_KEY + _varint(len(data)) + data


def batch_bytes(items: Sequence[bytes]) -> bytes:
    """The wire bytes of a ``ServerMessage`` whose ``batch`` holds the messages whose wire
    bytes are ``items``, in order: what protobuf writes for that message (each item as key,
    length and bytes), without copying every message into it and serializing it again (a
    1 KB request cost about 7 µs to copy in)."""
    inner = b"".join([b"".join((_BATCH_ITEM_KEY, _varint(len(d)), d)) for d in items])
    return b"".join((_BATCH_KEY, _varint(len(inner)), inner))


def decision_request_bytes(
    request_id: str,
    match_id: str,
    deal_number: int,
    view: bytes,
    time_limit_ms: int,
    time_bank_ms: int,
) -> bytes:
    """The wire bytes of a ``ServerMessage`` whose ``decision_request`` has these fields and,
    as its ``view``, the ``PlayerView`` whose wire bytes are ``view`` (as
    :func:`game_view_bytes` writes them): the bytes ``SerializeToString`` writes for that
    message (fields in number order, a plain scalar at 0 left out), without parsing the
    view into a message to have it written again (the referee's every request did, some
    18k instructions of upb's decoder and more of its encoder). The ids are encoded as
    protobuf encodes a string (a lone surrogate raises ``UnicodeEncodeError``)."""
    head = _REQUEST_MATCH.get(match_id)
    if head is None:
        head = pb.DecisionRequest(match_id=match_id).SerializeToString()
        _store(_REQUEST_MATCH, match_id, head)
    rid = request_id.encode()
    n = len(rid)
    parts = (
        [_REQUEST_ID_KEY, _SMALL_VARINT[n] if n < 4096 else _varint(n), rid, head] if n else [head]
    )
    if deal_number:
        parts += (_REQUEST_DEAL_KEY, _u32(deal_number))
    n = len(view)
    # The two times as one piece, kept: a match's limit is its decision_ms, and a bank
    # changes only when it is used (their varints of three bytes or more cost a loop each).
    times = _REQUEST_TIMES.get((time_limit_ms, time_bank_ms))
    if times is None:
        times = b"".join(
            (_REQUEST_LIMIT_KEY + _u32(time_limit_ms) if time_limit_ms else b"",
             _REQUEST_BANK_KEY + _u32(time_bank_ms) if time_bank_ms else b"")
        )  # fmt: skip
        _store(_REQUEST_TIMES, (time_limit_ms, time_bank_ms), times)
    parts += (_REQUEST_VIEW_KEY, _SMALL_VARINT[n] if n < 4096 else _varint(n), view, times)
    inner = b"".join(parts)
    n = len(inner)
    return b"".join((_REQUEST_KEY, _SMALL_VARINT[n] if n < 4096 else _varint(n), inner))


def message_bytes(msg: pb.ServerMessage | bytes) -> bytes:
    """The serializer of ``Play``'s responses: a ``ServerMessage``, or the wire bytes of one
    (a batch, :func:`batch_bytes`), as written on the stream."""
    return msg if type(msg) is bytes else msg.SerializeToString()  # type: ignore[union-attr]


def action_event_items(
    match_id: str,
    seq: int,
    source: pb.ActionSource.ValueType,
    seat: int,
    action: Action,
) -> tuple[bytes, bytes]:
    """``action_event_bytes(match_id, seq, source, seat, action)`` and the same event with
    no source (``ACTION_SOURCE_UNSPECIFIED``: as the seats that did not act are told of
    it), made together: the two differ only in the source field, written last."""
    body = _action_event_body(match_id, seq, seat, action)
    source_b = _EVENT_SOURCE_BYTES.get(source)
    if source_b is None:
        source_b = _EVENT_SOURCE + _u32(source)
    n = len(body)
    own = n + len(source_b)
    small = _SMALL_VARINT
    return (
        b"".join((_EVENTS_KEY, small[own] if own < 4096 else _varint(own), body, source_b)),
        b"".join((_EVENTS_KEY, small[n] if n < 4096 else _varint(n), body)),
    )


def _action_event_data(
    match_id: str,
    seq: int,
    source: pb.ActionSource.ValueType,
    seat: int,
    action: Action | HiddenGive,
) -> bytes:
    source_b = _EVENT_SOURCE_BYTES.get(source)
    if source_b is None:
        source_b = _EVENT_SOURCE + _u32(source)
    return _action_event_body(match_id, seq, seat, action) + source_b


def _action_event_body(match_id: str, seq: int, seat: int, action: Action | HiddenGive) -> bytes:
    """An action's ``Event`` bytes up to its source (the last field written)."""
    head = _EVENT_HEAD.get(match_id)
    if head is None:
        head = pb.Event(match_id=match_id).SerializeToString()
        _store(_EVENT_HEAD, match_id, head)
    hit = _EVENT_ACTION_BY_ID.get(id(action))
    if hit is None or hit[0] is not action:
        hit = (action, {})
        _store(_EVENT_ACTION_BY_ID, id(action), hit)
    item = hit[1].get(seat)
    if item is None:
        item = hit[1][seat] = pb.Event(action=seat_action_to_pb(seat, action)).SerializeToString()
    seq_b = _EVENT_SEQ_BYTES[seq] if 0 <= seq < 4096 else _EVENT_SEQ + _u32(seq)
    return b"".join((head, seq_b, item))


def seat_action_from_pb(msg: pb.SeatAction) -> tuple[int, Action | HiddenGive]:
    """A ``SeatAction`` (as events carry them) as ``(seat, action or HiddenGive)``."""
    if not msg.HasField("action"):
        raise MalformedActionError("seat_action.action", "missing")
    return msg.seat, public_action_from_pb(msg.action)


# ----------------------------------------------------------------------------- rulesets

_RULESET_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Ruleset))


def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    """Every option of an engine ``Ruleset`` as a ``Ruleset`` message."""
    return pb.Ruleset(**ruleset.to_dict())


def ruleset_from_pb(msg: pb.Ruleset) -> Ruleset:
    """A ``Ruleset`` message as an engine ``Ruleset``.

    Raises :class:`MalformedMessageError` (``what`` = ``"ruleset.<option>"``) when the
    engine refuses a value.
    """
    try:
        return Ruleset(**{name: getattr(msg, name) for name in _RULESET_FIELDS})
    except RulesetError as e:
        raise MalformedMessageError(f"ruleset.{e.key}", str(e)) from e


# ----------------------------------------------------------------------------- phases

_PHASE_TO_PB: dict[Phase, pb.Phase.ValueType] = {
    ph: pb.Phase.Value(f"PHASE_{ph.name}") for ph in Phase
}
_PHASE_FROM_PB: dict[int, Phase] = {v: ph for ph, v in _PHASE_TO_PB.items()}


def phase_to_pb(phase: Phase) -> pb.Phase.ValueType:
    """An engine ``Phase`` as the wire enum; :func:`phase_from_pb` reads it back.

    >>> phase_from_pb(phase_to_pb(Phase.PLAYING)) is Phase.PLAYING
    True
    """
    return _PHASE_TO_PB[phase]


def phase_from_pb(value: int) -> Phase:
    """A wire phase as an engine ``Phase``; UNSPECIFIED or unknown values raise."""
    try:
        return _PHASE_FROM_PB[value]
    except KeyError:
        raise MalformedMessageError("phase", f"unknown or unspecified phase {value}") from None


# ----------------------------------------------------------------------------- results


def _barrel_to_pb(barrel: Sequence[int] | None) -> list[int]:
    # engine: 0 = not on the barrel; wire: -1 = not on it (empty: no barrel played).
    return [] if barrel is None else [b if b > 0 else -1 for b in barrel]


def _barrel_from_pb(values: Sequence[int]) -> tuple[int, ...] | None:
    return tuple([b if b > 0 else 0 for b in values[:]]) if values else None


def deal_result_to_pb(result: DealResult) -> pb.DealResult:
    """An engine ``DealResult`` as a ``DealResult`` message."""
    return pb.DealResult(
        deal_number=result.number,
        declarer=result.declarer,
        bid=result.bid,
        contract=result.bid if result.contract is None else result.contract,
        conceded=result.outcome == "conceded",
        thrown_in=result.outcome == "thrown_in",
        made=result.outcome == "made",
        takes=result.takes,
        deltas=result.deltas,
        scores=result.scores,
        dealer=result.dealer,
        outcome=result.outcome,
        card_points=result.card_points,
        marriage_points=result.marriage_points,
        barrel=_barrel_to_pb(result.barrel),
        events=result.events,
    )


def deal_result_from_pb(msg: pb.DealResult, players: int | None = None) -> DealResult:
    """A ``DealResult`` message as an engine ``DealResult``; with ``players``, one that
    does not hold a value per seat (or names no seat of the table) raises."""
    outcome = msg.outcome
    if outcome not in OUTCOMES:
        raise MalformedMessageError(
            "deal_result.outcome", f"expected one of {', '.join(OUTCOMES)}, got {outcome!r}"
        )
    if not msg.HasField("declarer"):
        # Every deal has a declarer (when all pass, the ruleset's all_pass names one), and
        # engine.DealResult.declarer is an int: a result without one describes no deal.
        raise MalformedMessageError("deal_result.declarer", "missing (every deal has one)")
    if players is not None:
        _check_per_seat(msg, "deal_result", players, _DEAL_PER_SEAT)
        for name in ("declarer", "dealer"):
            if getattr(msg, name) >= players:
                raise MalformedMessageError(
                    f"deal_result.{name}",
                    f"no seat {getattr(msg, name)} at a {players}-player table",
                )
    return DealResult(
        number=msg.deal_number,
        dealer=msg.dealer,
        declarer=msg.declarer,
        bid=msg.bid,
        contract=msg.contract if outcome in ("made", "failed") else None,
        outcome=outcome,
        card_points=tuple(msg.card_points[:]),  # (slices: see _cards_from_pb)
        marriage_points=tuple(msg.marriage_points[:]),
        takes=tuple(msg.takes[:]),
        deltas=tuple(msg.deltas[:]),
        scores=tuple(msg.scores[:]),
        barrel=_barrel_from_pb(msg.barrel),
        events=tuple(msg.events[:]),
    )


#: The fields of a ``DealResult`` that hold a value per seat (``barrel``: or none).
_DEAL_PER_SEAT = ("card_points", "marriage_points", "takes", "deltas", "scores", "barrel")


def _check_per_seat(msg: Any, what: str, players: int, names: Sequence[str]) -> None:
    """Raise :class:`MalformedMessageError` unless each repeated field of ``names`` holds
    ``players`` values (``barrel`` may be empty: no barrel played)."""
    for name in names:
        k = len(getattr(msg, name))
        if k != players and not (name == "barrel" and k == 0):
            raise MalformedMessageError(f"{what}.{name}", f"{k} values for {players} seats")


def match_result_from_pb(msg: pb.MatchResult, players: int) -> GameResult:
    """A ``MatchResult`` as the :class:`~engine.GameResult` a bot's ``on_match_end`` gets
    (``reason`` ``"forfeit"`` when a seat forfeited); :class:`MalformedMessageError`
    unless ``scores`` and ``places`` hold a value per seat (``shortfalls`` one per seat, or
    none), each place from 1 to ``players``."""
    _check_per_seat(msg, "match_result", players, ("scores", "places"))
    if msg.shortfalls:
        _check_per_seat(msg, "match_result", players, ("shortfalls",))
    places = tuple(msg.places[:])  # (slices: see _cards_from_pb)
    bad = [p for p in places if not 1 <= p <= players]
    if bad:  # (a bot ranking itself by its place was told place 0, or 9 of 3)
        raise MalformedMessageError(
            "match_result.places", f"place {bad[0]} at a {players}-player table"
        )
    firsts = [s for s, p in enumerate(places) if p == 1]
    return GameResult(
        scores=tuple(msg.scores[:]),
        places=places,
        shortfalls=tuple(msg.shortfalls[:]),
        winner=firsts[0] if len(firsts) == 1 else None,
        deals=msg.deals,
        reason="forfeit" if msg.forfeits else msg.reason,
    )


def match_result_to_pb(result: Mapping[str, Any], forfeits: Sequence[int] = ()) -> pb.MatchResult:
    """The ``"result"`` object of a match record (the referee's: forfeiters placed last)
    as a ``MatchResult`` message."""
    return pb.MatchResult(
        scores=result["scores"],
        places=result["places"],
        shortfalls=result.get("shortfalls", ()),
        forfeits=forfeits,
        deals=result.get("deals", 0),
        reason=str(result.get("reason") or ""),
    )


# ----------------------------------------------------------------------------- views


def _marriage_tricks(view: PlayerView) -> list[int]:
    """The index of the trick each marriage of ``view`` was declared on."""
    return _declared_on(view.marriages, view.tricks, view.trick)


def _declared_on(
    marriages: Sequence[tuple[int, Suit | None]],
    tricks: Sequence[Trick],
    trick: Sequence[tuple[int, Card]],
) -> list[int]:
    """The index of the trick each marriage was declared on (``marriages``, ``tricks`` and
    ``trick`` as a view holds them).

    A marriage is declared with a lead, so the declaring lead is the seat's first lead of
    the suit's K or Q (the other one must still be in hand), and the ace marriage is the
    seat's first ace lead (all four aces must still be in hand).
    """
    leads: list[tuple[int, Card]] = [(t.leader, t.cards[0][1]) for t in tricks]
    if trick:
        leads.append(trick[0])
    out = []
    for seat, suit in marriages:
        idx = 0
        for i, (leader, card) in enumerate(leads):
            if leader != seat:
                continue
            if (suit is None and card.rank is Rank.ACE) or (
                suit is not None and card.suit is suit and card.rank in (Rank.KING, Rank.QUEEN)
            ):
                idx = i
                break
        out.append(idx)
    return out


def view_to_pb(
    view: PlayerView,
    out: pb.PlayerView | None = None,
    results_omitted: int = 0,
    bids_omitted: int = 0,
    tricks_omitted: int = 0,
) -> pb.PlayerView:
    """An engine ``PlayerView`` (from ``observe``) as a ``PlayerView`` message.

    ``out``: an empty message to fill in place (say ``msg.decision_request.view``) rather
    than a new one; it is returned. ``results_omitted``: the first that many deal results
    are left out (a request's view to a bot that has them: the "results_once" feature,
    ``deal_results_omitted``). ``bids_omitted``, ``tricks_omitted``: likewise the first bids
    and completed tricks of the deal (the "deal_once" feature).
    """
    data = _view_bytes(view, results_omitted, bids_omitted, tricks_omitted)
    if out is None:
        return pb.PlayerView.FromString(data)
    out.MergeFromString(data)
    return out


def game_view_bytes(
    game: Game,
    seat: int,
    results_omitted: int = 0,
    bids_omitted: int = 0,
    tricks_omitted: int = 0,
    legal_actions: tuple[Action, ...] | None = None,
    *,
    bids: tuple[tuple[int, Action], ...] | None = None,
    tricks: tuple[Trick, ...] | None = None,
) -> bytes:
    """The wire bytes of ``view_to_pb(observe(game, seat), None, results_omitted,
    bids_omitted, tricks_omitted)``, made from ``game`` in one pass, without the
    ``PlayerView`` in between: what the referee sends in each ``DecisionRequest``.
    ``legal_actions``: ``game.legal_actions()`` as the caller already has it (the referee
    asks for it before every action), not asked for again; used only when ``seat`` is to
    act. Likewise ``bids`` and ``tricks``: ``game.auction()`` and ``game.tricks`` as the
    caller just read them (the referee reads them to decide what to leave out; each is a
    call into the engine).

    What the seat sees is decided where ``observe`` decides it: its own hand, the talon
    (``visible_talon``), the passed cards (``visible_gives``), the legal actions when it
    is to act, the rest public; a finished game's view is ``observe``'s own. The property
    tests of tests/arena/test_game_view_bytes_round54.py check that these are the bytes
    ``view_to_pb`` makes of ``observe``'s view, over the presets and random rulesets.
    """
    if game.is_over:
        return _view_bytes(observe(game, seat), results_omitted, bids_omitted, tricks_omitted)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.n:
        raise ValueError(f"no seat {seat!r} in a {game.n}-player game")
    to_act = game.to_act
    if to_act != seat:
        legal_actions = ()
    elif legal_actions is None:
        legal_actions = game.legal_actions()
    return _view_data(
        seat, game.players, game.deal_number, game.dealer, game.phase, to_act,
        _hand_mask_bytes(game.hand_mask(seat)), game.active_seats, visible_talon(game, seat),
        game.auction() if bids is None else bids, game.declarer, game.bid, game.contract,
        visible_gives(game, seat), game.trump, game.marriages, game.trick,
        game.tricks if tricks is None else tricks, game.scores, game.barrel, legal_actions,
        game.deal_results, results_omitted, bids_omitted, tricks_omitted,
    )  # fmt: skip


def _view_bytes(
    view: PlayerView, results_omitted: int, bids_omitted: int, tricks_omitted: int
) -> bytes:
    """The wire bytes :func:`view_to_pb` parses into its message."""
    return _view_data(
        view.seat, view.players, view.deal_number, view.dealer, view.phase, view.to_act,
        _hand_bytes(view.hand), view.active_seats, view.talon, view.bids, view.declarer,
        view.bid, view.contract, view.gives, view.trump, view.marriages, view.trick,
        view.tricks, view.scores, view.barrel, view.legal_actions, view.deal_results,
        results_omitted, bids_omitted, tricks_omitted,
    )  # fmt: skip


def _view_data(
    seat: int,
    players: tuple[str, ...],
    deal_number: int,
    dealer: int,
    phase: Phase,
    to_act: int | None,
    hand: bytes,
    active_seats: tuple[int, ...],
    talon: tuple[Card, ...] | None,
    bids: tuple[tuple[int, Action], ...],
    declarer: int | None,
    bid: int | None,
    contract: int | None,
    gives: tuple[tuple[int, Card | None], ...],
    trump: Suit | None,
    marriages: tuple[tuple[int, Suit | None], ...],
    trick: tuple[tuple[int, Card], ...],
    tricks: tuple[Trick, ...],
    scores: tuple[int, ...],
    barrel: tuple[int, ...] | None,
    legal_actions: tuple[Action, ...],
    deal_results: tuple[DealResult, ...],
    results_omitted: int,
    bids_omitted: int,
    tricks_omitted: int,
) -> bytes:
    """A view's wire bytes from its fields (``hand`` already as its items' bytes): the one
    place that writes a view, for :func:`view_to_pb` and :func:`game_view_bytes`."""
    # The view is written as wire bytes and parsed once (see "view encoding" below).
    # Written as protobuf writes them (``SerializeToString``): a plain scalar at 0 left out
    # (the wire's default), so that these bytes are the ones a bot is sent whether they go
    # as they are (a request, ``MatchRunner._request_bytes``) or parsed and written again.
    parts = [_K_SEAT, _u32(seat)] if seat else []
    parts.append(_players_bytes(players))
    if deal_number:
        parts += (_K_DEAL_NUMBER, _u32(deal_number))
    if dealer:
        parts += (_K_DEALER, _u32(dealer))
    parts += (_K_PHASE, _PHASE_BYTES[phase._value_])
    if to_act is not None:
        parts += (_K_TO_ACT, _u32(to_act))
    if hand:
        parts.append(hand)
    parts.append(_packed_bytes(_ACTIVE_BYTES, "active_seats", active_seats))
    if talon is not None:
        parts.append(_TALON_KNOWN)
        talon_item = _TALON_ITEM
        parts += [talon_item[c] for c in talon]
    if bids_omitted:
        if not 0 < bids_omitted <= len(bids):
            raise ValueError(f"{bids_omitted} bids to leave out of {len(bids)}")
        # (the rest of the auction after them: a bid or two, or none once it is over)
        parts += [_bid_item(s, action) for s, action in bids[bids_omitted:]]
    elif bids:
        hit_b = _BIDS_BY_ID.get(id(bids))
        if hit_b is None or hit_b[0] is not bids:
            hit_b = (bids, b"".join([_bid_item(s, action) for s, action in bids]))
            _store(_BIDS_BY_ID, id(bids), hit_b)
        parts.append(hit_b[1])
    if declarer is not None:
        parts += (_K_DECLARER, _u32(declarer))
    if bid is not None:
        parts += (_K_BID, _u32(bid))
    if contract is not None:
        parts += (_K_CONTRACT, _u32(contract))
    if gives:
        giver = declarer if declarer is not None else 0
        give_items = _GIVE_ITEMS
        for to, card in gives:
            item = give_items.get((giver, to, card))
            if item is None:
                item = _give_item(giver, to, card)
            parts.append(item)
    if trump is not None:
        parts.append(_TRUMP_BYTES[trump])
    if marriages:
        marriage_items = _MARRIAGE_ITEMS
        on = _declared_on(marriages, tricks, trick)
        for (s, suit), k in zip(marriages, on, strict=True):
            item = marriage_items.get((s, suit, k))
            if item is None:
                item = _marriage_item(s, suit, k)
            parts.append(item)
    if trick:
        trick_item = _TRICK_CARD_ITEM
        parts += [trick_item[s][card] for s, card in trick]
    if tricks_omitted:
        if not 0 < tricks_omitted <= len(tricks):
            raise ValueError(f"{tricks_omitted} tricks to leave out of {len(tricks)}")
        by_id_1 = _TRICK_ITEM_BY_ID
        for t in tricks[tricks_omitted:]:
            hit_1 = by_id_1.get(id(t))
            parts.append(hit_1[1] if hit_1 is not None and hit_1[0] is t else _trick_item(t))
    elif tricks:
        parts.append(_joined_kept(_TRICKS_BY_ID, tricks, _TRICK_ITEM_BY_ID, _trick_item))
    parts.append(_packed_bytes(_SCORES_BYTES, "scores", scores))
    if barrel is not None:
        parts.append(_packed_bytes(_BARREL_BYTES, "barrel", _barrel_to_pb(barrel)))
    if legal_actions:
        # The engine's legal tuples are shared (a bid's, a suit's plays, a contract's): the
        # whole list's bytes kept by the tuple's identity, as the bids' and tricks' are.
        parts.append(_joined_kept(_LEGAL_BY_ID, legal_actions, _LEGAL_ITEM_BY_ID, _legal_item))
    results = deal_results
    if results_omitted:
        if not 0 < results_omitted <= len(results):
            raise ValueError(f"{results_omitted} results to leave out of {len(results)}")
        results = results[results_omitted:]
    if results:
        by_id_r = _RESULT_ITEM_BY_ID
        for r in results:
            hit_r = by_id_r.get(id(r))
            parts.append(hit_r[1] if hit_r is not None and hit_r[0] is r else _result_item(r))
    if results_omitted:
        parts += (_K_RESULTS_OMITTED, _u32(results_omitted))
    if bids_omitted:
        parts += (_K_BIDS_OMITTED, _u32(bids_omitted))
    if tricks_omitted:
        parts += (_K_TRICKS_OMITTED, _u32(tricks_omitted))
    return b"".join(parts)


def view_from_pb(
    msg: pb.PlayerView, ruleset: Ruleset, previous: PlayerView | None = None
) -> PlayerView:
    """A ``PlayerView`` message as an engine ``PlayerView``.

    ``ruleset`` is the match's (from ``MatchStarted.ruleset``, see :func:`ruleset_from_pb`):
    views on the wire do not repeat it. Raises :class:`MalformedMessageError` naming the
    field that does not describe a view.

    ``previous``: the match's earlier view, where the results a request's view leaves out
    are taken from (``deal_results_omitted``, the "results_once" feature); a view that
    leaves out more than ``previous`` holds is malformed. Likewise the deal's first bids and
    completed tricks (``bids_omitted``, ``tricks_omitted``, the "deal_once" feature), from
    ``previous`` of the same deal. (The items that repeat from view to view, deal results,
    completed tricks, bids, legal actions, are decoded once each and found again by their
    wire bytes.)
    """
    n = len(msg.players)
    if n != ruleset.players:
        raise MalformedMessageError(
            "view.players", f"expected {ruleset.players} players (the ruleset's), got {n}"
        )
    omitted = msg.deal_results_omitted
    kept: tuple[DealResult, ...] = ()
    if omitted:
        known = previous.deal_results if previous is not None else ()
        if omitted > len(known):
            raise MalformedMessageError(
                "view.deal_results_omitted",
                f"{omitted} results left out, {len(known)} known from the match's earlier views",
            )
        kept = known[:omitted]
    results = omitted + len(msg.deal_results)
    if results > msg.deal_number:
        # A view holds the results of the deals before its own, no more: refused before
        # they are decoded (a message of 64 MiB holds some 600,000, a quarter of a second
        # per MiB to decode; none in a real view of deal 1).
        raise MalformedMessageError(
            "view.deal_results",
            f"{results} results of earlier deals in a view of deal {msg.deal_number + 1}",
        )

    def seat_ok(value: int, what: str) -> int:
        if not 0 <= value < n:
            raise MalformedMessageError(what, f"no seat {value} at a {n}-player table")
        return value

    # The items that repeat from view to view (bids, tricks, legal actions, the cards of
    # the trick in progress) are looked up by their wire bytes (one serialization, in C)
    # among the items decoded and checked before; only the others are decoded field by
    # field, which is also where a malformed one raises. Reading an item's nested fields
    # through the Python accessors costs several times a lookup.
    gives: list[tuple[int, Card | None]] = []
    for sa in msg.gives[:]:  # (slices, here and below: see _cards_from_pb)
        if sa.action.WhichOneof("kind") != "give":
            raise MalformedMessageError("view.gives", "expected give actions")
        g = sa.action.give
        card = card_from_pb(g.card, "view.gives.card") if g.HasField("card") else None
        gives.append((seat_ok(g.to_seat, "view.gives.to_seat"), card))
    bids_kept: tuple[tuple[int, Action], ...] = ()
    tricks_kept: tuple[Trick, ...] = ()
    omitted_bids, omitted_tricks = msg.bids_omitted, msg.tricks_omitted
    if omitted_bids or omitted_tricks:
        deal = msg.deal_number
        if previous is not None and previous.deal_number == deal:
            bids_kept, tricks_kept = previous.bids, previous.tricks  # (of the same deal only)
        bids_kept = _kept(omitted_bids, bids_kept, "bids", deal)
        tricks_kept = _kept(omitted_tricks, tricks_kept, "tricks", deal)
    bid_cache = _BID_BY_BYTES
    bids = list(bids_kept)
    for sa in msg.bids[:]:
        key = (n, sa.SerializeToString())
        bid = bid_cache.get(key)
        if bid is None:
            bid_or_pass = _action_from_pb_cached(sa.action)
            if not isinstance(bid_or_pass, Bid | Pass):
                raise MalformedMessageError(
                    "view.bids", f"expected bids or passes, got {bid_or_pass}"
                )
            bid = (seat_ok(sa.seat, "view.bids.seat"), bid_or_pass)
            _store_decoded(bid_cache, key, bid)
        bids.append(bid)
    tricks = list(tricks_kept)
    trick_cache = _TRICK_BY_BYTES
    for t in msg.tricks[:]:
        # A completed trick is repeated in every later view of its deal: decoded once.
        key = (n, t.SerializeToString())
        trick = trick_cache.get(key)
        if trick is None:
            cards = tuple(
                (seat_ok(sc.seat, "view.tricks.seat"), card_from_pb(sc.card, "view.tricks.card"))
                for sc in t.cards[:]
            )
            if not cards:
                raise MalformedMessageError("view.tricks", "a completed trick without cards")
            leader = seat_ok(t.leader, "view.tricks.leader")
            trick = Trick(leader, cards, seat_ok(t.winner, "view.tricks.winner"))
            _store_decoded(trick_cache, key, trick)
        tricks.append(trick)
    action_cache = _ACTION_BY_BYTES
    legal = []
    for m in msg.legal_actions[:]:
        action = action_cache.get(m.SerializeToString())
        legal.append(_action_from_pb_cached(m) if action is None else action)
    by_pb = _CARD_BY_PB
    raw_hand = msg.hand[:]
    found = [by_pb.get((c.suit, c.rank)) for c in raw_hand]
    held: Sequence[Card] = (
        _cards_from_pb(raw_hand, "view.hand") if None in found else cast("list[Card]", found)
    )
    if len(set(held)) != len(held):
        twice = next(c for i, c in enumerate(held) if c in held[:i])
        raise MalformedMessageError("view.hand", f"{twice} twice")
    hand = tuple(sorted(held))  # (a view's hand is ascending: an arena's order is not trusted)
    active = tuple(msg.active_seats[:])
    if active and max(active) >= n:  # (unsigned: never below 0)
        active = tuple(seat_ok(s, "view.active_seats") for s in active)  # raises
    if len(set(active)) != len(active):
        raise MalformedMessageError("view.active_seats", f"a seat twice: {list(active)}")
    if not active:  # (``first_hand`` is the first of them)
        raise MalformedMessageError("view.active_seats", "none")
    _check_per_seat(msg, "view", n, ("scores", "barrel"))
    return PlayerView(
        seat=seat_ok(msg.seat, "view.seat"),
        players=tuple(msg.players[:]),
        ruleset=ruleset,
        deal_number=msg.deal_number,
        dealer=seat_ok(msg.dealer, "view.dealer"),
        phase=phase_from_pb(msg.phase),
        to_act=seat_ok(msg.to_act, "view.to_act") if msg.HasField("to_act") else None,
        hand=hand,
        active_seats=active,
        talon=_cards_from_pb(msg.talon, "view.talon") if msg.talon_known else None,
        bids=tuple(bids),
        declarer=seat_ok(msg.declarer, "view.declarer") if msg.HasField("declarer") else None,
        bid=msg.bid if msg.HasField("bid") else None,
        contract=msg.contract if msg.HasField("contract") else None,
        gives=tuple(gives),
        trump=suit_from_pb(msg.trump),
        marriages=tuple(
            [
                (seat_ok(m.seat, "view.marriages.seat"), suit_from_pb(m.suit))
                for m in msg.marriages[:]
            ]
        ),
        trick=_trick_from_pb(msg.trick, n) if msg.trick else (),
        tricks=tuple(tricks),
        scores=tuple(msg.scores[:]),
        barrel=_barrel_from_pb(msg.barrel),
        legal_actions=tuple(legal),
        deal_results=kept + _deal_results_from_pb(msg.deal_results, n) if results else (),
    )


def _kept(omitted: int, known: tuple[Any, ...], field: str, deal: int) -> tuple[Any, ...]:
    """The first ``omitted`` of ``known`` (the bids or tricks of the match's last view, if
    it is of the view's deal ``deal``); a view leaving out more is malformed."""
    if omitted > len(known):
        raise MalformedMessageError(
            f"view.{field}_omitted",
            f"{omitted} {field} left out, {len(known)} known from the match's last view of "
            f"deal {deal + 1}",
        )
    return known[:omitted]


# Decoded actions by their wire bytes: a view lists every legal action again at every
# decision, and one serialization (in C) plus a lookup costs a fraction of reading an
# action's nested fields through the Python accessors. Engine actions are immutable, so
# they are shared. Only actions that decoded are stored; the set of actions is small.
_ACTION_BY_BYTES: dict[bytes, Action] = {}
#: Decoded completed tricks by (players at the table, wire bytes).
_TRICK_BY_BYTES: dict[tuple[int, bytes], Trick] = {}
#: Decoded and checked ``(seat, bid or pass)`` of ``PlayerView.bids`` and ``(seat, card)``
#: of ``PlayerView.trick``, by (players at the table, the ``SeatAction``'s or
#: ``SeatCard``'s wire bytes). The seat's range depends on the players, hence the key.
_BID_BY_BYTES: dict[tuple[int, bytes], tuple[int, Action]] = {}
_SEAT_CARD_BY_BYTES: dict[tuple[int, bytes], tuple[int, Card]] = {}
#: Decoded deal results by (players at the table, wire bytes).
_RESULT_BY_BYTES: dict[tuple[int, bytes], DealResult] = {}


def _trick_from_pb(msgs: Sequence[pb.SeatCard], players: int) -> tuple[tuple[int, Card], ...]:
    """``PlayerView.trick``, each ``(seat, card)`` looked up by its bytes (see above)."""
    cache = _SEAT_CARD_BY_BYTES
    out = []
    for sc in msgs[:]:
        key = (players, sc.SerializeToString())
        seat_card = cache.get(key)
        if seat_card is None:
            if not 0 <= sc.seat < players:
                raise MalformedMessageError(
                    "view.trick.seat", f"no seat {sc.seat} at a {players}-player table"
                )
            seat_card = (sc.seat, card_from_pb(sc.card, "view.trick.card"))
            _store_decoded(cache, key, seat_card)
        out.append(seat_card)
    return tuple(out)


def _action_from_pb_cached(msg: pb.Action) -> Action:
    key = msg.SerializeToString()
    action = _ACTION_BY_BYTES.get(key)
    if action is None:
        action = action_from_pb(msg)
        if len(_ACTION_BY_BYTES) < _CACHE_MAX and len(key) <= _DECODED_KEY_MAX:
            _ACTION_BY_BYTES[key] = action
    return action


def _deal_results_from_pb(msgs: Sequence[pb.DealResult], players: int) -> tuple[DealResult, ...]:
    # The referee sends every earlier result at every decision: each is decoded once, and
    # found again by its bytes (as completed tricks are).
    cache = _RESULT_BY_BYTES
    out = []
    for m in msgs[:]:
        key = (players, m.SerializeToString())
        result = cache.get(key)
        if result is None:
            result = deal_result_from_pb(m, players)
            _store_decoded(cache, key, result)
        out.append(result)
    return tuple(out)


# ----------------------------------------------------------------------------- view encoding
#
# ``view_to_pb`` writes the view as wire bytes and parses them into the message once
# (``MergeFromString``) instead of setting fields and extending repeated fields with cached
# messages: upb copies appended messages one by one, each through a Python wrapper, and
# that was most of the cost of a view. Parsing gives the same message as setting the
# fields, and protobuf serializes a message canonically (by field number, whatever the
# order it was filled in), so the bytes on the wire do not change.
#
# The bytes of the parts that repeat from view to view (cards, actions, tricks, deal
# results, ...) are cached. Each cached item is a whole ``PlayerView`` field (key, length
# and value), made by protobuf itself on the first use, so no field layout is written by
# hand here except the keys of the scalar fields.

_VIEW_FIELDS = pb.PlayerView.DESCRIPTOR.fields_by_name


def _varint(n: int) -> bytes:
    """A non-negative int as a protobuf varint."""
    out = bytearray()
    while n > 127:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)
    return bytes(out)


# Up to 4095 (two bytes): seats, deal numbers and bids are taken from here.
_SMALL_VARINT: tuple[bytes, ...] = tuple(_varint(i) for i in range(4096))


def _u32(n: int) -> bytes:
    """A ``uint32`` field value as a varint; out of range raises ``ValueError`` (as setting
    the field does)."""
    if 0 <= n < 4096:
        return _SMALL_VARINT[n]
    if not 0 <= n < 1 << 32:
        raise ValueError(f"Value out of range: {n}")
    return _varint(n)


def _key(name: str) -> bytes:
    """The key (field number and wire type) of a scalar ``PlayerView`` field."""
    return _varint(_VIEW_FIELDS[name].number << 3)  # wire type 0: varint


_K_SEAT = _key("seat")
_K_DEAL_NUMBER = _key("deal_number")
_K_DEALER = _key("dealer")
_K_PHASE = _key("phase")
_K_TO_ACT = _key("to_act")
_K_DECLARER = _key("declarer")
_K_BID = _key("bid")
_K_CONTRACT = _key("contract")
_K_RESULTS_OMITTED = _key("deal_results_omitted")
_K_BIDS_OMITTED = _key("bids_omitted")
_K_TRICKS_OMITTED = _key("tricks_omitted")
_TALON_KNOWN = _key("talon_known") + b"\x01"
# By the member's value: Phase is a plain Enum, whose __hash__ is a Python function.
_PHASE_BYTES: dict[str, bytes] = {ph.value: _varint(v) for ph, v in _PHASE_TO_PB.items()}
_TRUMP_BYTES: tuple[bytes, ...] = tuple(
    pb.PlayerView(trump=suit_to_pb(s)).SerializeToString() for s in Suit
)
_HAND_ITEM: tuple[bytes, ...] = tuple(
    pb.PlayerView(hand=[_CARD_PB[c]]).SerializeToString() for c in Card
)
# A hand's items by each byte of its mask (cards 0-7, 8-15, 16-23): ascending, as
# ``cards_from_mask`` (and so ``observe``) lists a hand.
_HAND_BY_BYTE: tuple[tuple[bytes, ...], ...] = tuple(
    tuple(
        b"".join(_HAND_ITEM[8 * k + i] for i in range(8) if v >> i & 1 and 8 * k + i < 24)
        for v in range(256)
    )
    for k in range(3)
)


def _hand_bytes(hand: Sequence[Card]) -> bytes:
    """The ``PlayerView.hand`` items of ``hand`` (in its order)."""
    item = _HAND_ITEM
    return b"".join([item[c] for c in hand])


def _hand_mask_bytes(mask: int) -> bytes:
    """The ``PlayerView.hand`` items of the cards of ``mask``, ascending."""
    low, mid, high = _HAND_BY_BYTE
    return low[mask & 255] + mid[mask >> 8 & 255] + high[mask >> 16 & 255]


_TALON_ITEM: tuple[bytes, ...] = tuple(
    pb.PlayerView(talon=[_CARD_PB[c]]).SerializeToString() for c in Card
)
_TRICK_CARD_ITEM: tuple[tuple[bytes, ...], ...] = tuple(
    tuple(
        pb.PlayerView(trick=[pb.SeatCard(seat=seat, card=_CARD_PB[c])]).SerializeToString()
        for c in Card
    )
    for seat in range(4)
)
# A completed trick's fields as ``Trick`` writes them (seats 0-3), and the key of
# ``PlayerView.tricks`` (wire type 2: length-delimited).
_TRICK_LEADER: tuple[bytes, ...] = tuple(pb.Trick(leader=s).SerializeToString() for s in range(4))
_TRICK_WINNER: tuple[bytes, ...] = tuple(pb.Trick(winner=s).SerializeToString() for s in range(4))
_TRICK_SEAT_CARD: tuple[tuple[bytes, ...], ...] = tuple(
    tuple(
        pb.Trick(cards=[pb.SeatCard(seat=seat, card=_CARD_PB[c])]).SerializeToString() for c in Card
    )
    for seat in range(4)
)
_K_TRICKS = _varint(_VIEW_FIELDS["tricks"].number << 3 | 2)

# Caches filled on first use; each is emptied when it reaches _CACHE_MAX entries, so a
# long-running referee does not grow without bound.
_CACHE_MAX = 4096
_PLAYERS_BYTES: dict[tuple[str, ...], bytes] = {}
_ACTIVE_BYTES: dict[tuple[int, ...], bytes] = {}
_SCORES_BYTES: dict[tuple[int, ...], bytes] = {}
_BARREL_BYTES: dict[tuple[int, ...], bytes] = {}
_GIVE_ITEMS: dict[tuple[int, int, Card | None], bytes] = {}
_MARRIAGE_ITEMS: dict[tuple[int, Suit | None, int], bytes] = {}
# The engine hands out shared action objects (legal_actions says so) and a match keeps its
# DealResult objects, so these are keyed by identity: id() is much cheaper than the
# dataclasses' generated __hash__. Each entry holds its object, so that its id stays
# valid, and a hit is checked to be that very object.
_LEGAL_ITEM_BY_ID: dict[int, tuple[object, bytes]] = {}
# A view's legal actions (by the tuple's identity) -> their items' bytes, joined.
_LEGAL_BY_ID: dict[int, tuple[object, bytes]] = {}
_BID_ITEMS_BY_ID: dict[int, tuple[object, list[bytes | None]]] = {}
_RESULT_ITEM_BY_ID: dict[int, tuple[DealResult, bytes]] = {}
# Completed tricks likewise: ``Game.tricks`` makes each ``Trick`` once per deal and every
# later view of the deal holds that object. (Keyed by content, as before, a cache of 4,096
# held a few minutes of a referee's tricks: most new tricks of a deal missed it.)
_TRICK_ITEM_BY_ID: dict[int, tuple[Trick, bytes]] = {}
# A view's ``bids`` and ``tricks`` as a whole, by the tuple's identity: ``observe`` gives
# every view the game's own tuples (``Game.auction``, ``Game.tricks``), the same until the
# next bid or completed trick, so most views of a deal find theirs here.
_BIDS_BY_ID: dict[int, tuple[object, bytes]] = {}
_TRICKS_BY_ID: dict[int, tuple[object, bytes]] = {}


def held_descriptors(file: Any) -> list[tuple[Any, ...]]:
    """The descriptor objects of ``file``'s messages and their fields, for a module to hold
    for good: a repeated field's container, a message field's value, holds its field's
    descriptor object, and upb keeps none alive, so one that nothing else held was made
    anew for each such read and freed after it (~12,000 instructions an SDK request,
    docs/performance.md, "Parsed once")."""
    return [(d, *d.fields) for d in file.message_types_by_name.values()]


#: arena.v1's, held for the referee and the SDK alike (both read its messages' fields).
_HELD = held_descriptors(pb.DESCRIPTOR)


def _store(cache: dict[Any, Any], key: object, value: object) -> None:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = value


def _joined_kept(
    cache: dict[int, tuple[object, bytes]],
    items: tuple[Any, ...],
    by_id: dict[int, tuple[Any, bytes]],
    make: Callable[[Any], bytes],
) -> bytes:
    """The joined bytes of ``items``, an engine tuple that many views share (a deal's
    tricks, a legal list), kept by the tuple's identity in ``cache``; each item's by its own
    in ``by_id``, made by ``make`` (which keeps them there) when not kept. (The per-view
    loops over a few new items inline the same lookup: a call per item costs more.)"""
    hit = cache.get(id(items))
    if hit is None or hit[0] is not items:
        made = []
        for x in items:
            one = by_id.get(id(x))
            made.append(one[1] if one is not None and one[0] is x else make(x))
        hit = (items, b"".join(made))
        _store(cache, id(items), hit)
    return hit[1]


#: The longest wire bytes a decoded item is kept by. The referee's items are a few dozen
#: bytes (a deal result with its events a few hundred); a hostile arena's may carry
#: megabytes of unknown fields, which decoding ignores but the bytes keep: kept by them,
#: _CACHE_MAX of those held gigabytes in the bot.
_DECODED_KEY_MAX = 4096


def _store_decoded(cache: dict[Any, Any], key: tuple[int, bytes], value: object) -> None:
    """:func:`_store` of an item decoded from a view, by (players, its wire bytes)."""
    if len(key[1]) <= _DECODED_KEY_MAX:
        _store(cache, key, value)


# action_event_to_pb: match id -> the Event bytes of it; action (by identity, see above)
# -> seat -> the Event bytes of its SeatAction.
_EVENT_HEAD: dict[str, bytes] = {}
_EVENT_ACTION_BY_ID: dict[int, tuple[object, dict[int, bytes]]] = {}
_EVENT_SEQ = _varint(pb.Event.DESCRIPTOR.fields_by_name["seq"].number << 3)
_EVENT_SOURCE = _varint(pb.Event.DESCRIPTOR.fields_by_name["source"].number << 3)
# The seq and source fields whole (a zero source left out, as proto3 writes it).
_EVENT_SEQ_BYTES: tuple[bytes, ...] = tuple(_EVENT_SEQ + _varint(i) for i in range(4096))
_EVENT_SOURCE_BYTES: dict[int, bytes] = {
    v: _EVENT_SOURCE + _varint(v) if v else b"" for v in pb.ActionSource.values()
}
#: The key of an item of ``ServerMessage.events`` (a length-delimited field).
_EVENTS_KEY = _varint(pb.ServerMessage.DESCRIPTOR.fields_by_name["events"].number << 3 | 2)
#: The keys of ``ServerMessage.batch`` and of an item of ``Batch.messages``.
_BATCH_KEY = _varint(pb.ServerMessage.DESCRIPTOR.fields_by_name["batch"].number << 3 | 2)
_BATCH_ITEM_KEY = _varint(pb.Batch.DESCRIPTOR.fields_by_name["messages"].number << 3 | 2)
#: The keys of ``ServerMessage.decision_request`` and of the ``DecisionRequest``'s fields,
#: and (by match id) its ``match_id`` field whole, as protobuf writes it.
_REQUEST_KEY = _varint(
    pb.ServerMessage.DESCRIPTOR.fields_by_name["decision_request"].number << 3 | 2
)
_REQUEST_FIELDS = pb.DecisionRequest.DESCRIPTOR.fields_by_name
_REQUEST_ID_KEY = _varint(_REQUEST_FIELDS["request_id"].number << 3 | 2)
_REQUEST_DEAL_KEY = _varint(_REQUEST_FIELDS["deal_number"].number << 3)
_REQUEST_VIEW_KEY = _varint(_REQUEST_FIELDS["view"].number << 3 | 2)
_REQUEST_LIMIT_KEY = _varint(_REQUEST_FIELDS["time_limit_ms"].number << 3)
_REQUEST_BANK_KEY = _varint(_REQUEST_FIELDS["time_bank_ms"].number << 3)
_REQUEST_MATCH: dict[str, bytes] = {}
_REQUEST_TIMES: dict[tuple[int, int], bytes] = {}


def _players_bytes(players: tuple[str, ...]) -> bytes:
    data = _PLAYERS_BYTES.get(players)
    if data is None:
        data = pb.PlayerView(players=players).SerializeToString()
        _store(_PLAYERS_BYTES, players, data)
    return data


def _packed_bytes(cache: dict[tuple[int, ...], bytes], name: str, values: Any) -> bytes:
    """A repeated integer field (``name``) of ``values``, by way of ``cache``."""
    key = tuple(values)
    data = cache.get(key)
    if data is None:
        field: dict[str, Any] = {name: key}
        data = pb.PlayerView(**field).SerializeToString()
        _store(cache, key, data)
    return data


def _legal_item(action: Action) -> bytes:
    item = pb.PlayerView(legal_actions=[action_to_pb(action)]).SerializeToString()
    _store(_LEGAL_ITEM_BY_ID, id(action), (action, item))
    return item


def _bid_item(seat: int, action: Action) -> bytes:
    hit = _BID_ITEMS_BY_ID.get(id(action))
    if hit is None or hit[0] is not action:
        hit = (action, [None] * 4)
        _store(_BID_ITEMS_BY_ID, id(action), hit)
    items = hit[1]
    item = items[seat] if 0 <= seat < 4 else None
    if item is None:
        sa = pb.SeatAction(seat=seat, action=action_to_pb(action))
        item = pb.PlayerView(bids=[sa]).SerializeToString()
        if 0 <= seat < 4:
            items[seat] = item
    return item


def _give_item(giver: int, to: int, card: Card | None) -> bytes:
    sa = pb.SeatAction(seat=giver)
    g = sa.action.give
    g.to_seat = to
    if card is None:
        g.SetInParent()
    else:
        _set_card(g.card, card)
    item = pb.PlayerView(gives=[sa]).SerializeToString()
    _store(_GIVE_ITEMS, (giver, to, card), item)
    return item


def _marriage_item(seat: int, suit: Suit | None, trick: int) -> bytes:
    m = pb.Marriage(
        seat=seat,
        suit=suit_to_pb(suit),
        value=ACE_MARRIAGE_VALUE if suit is None else suit.marriage_value,
        trick=trick,
    )
    item = pb.PlayerView(marriages=[m]).SerializeToString()
    _store(_MARRIAGE_ITEMS, (seat, suit, trick), item)
    return item


def _trick_item(trick: Trick) -> bytes:
    """The ``PlayerView.tricks`` item of ``trick``, assembled from the wire bytes of its
    fields (in field order, as protobuf writes them: 1 ``leader``, 2 ``cards``, 3
    ``winner``; tests compare it with the message built field by field)."""
    leader, cards, winner = trick
    if 0 <= leader < 4 and 0 <= winner < 4 and all(0 <= s < 4 for s, _ in cards):
        seat_card = _TRICK_SEAT_CARD
        body = b"".join(
            [_TRICK_LEADER[leader], *[seat_card[s][c] for s, c in cards], _TRICK_WINNER[winner]]
        )
        item = b"".join([_K_TRICKS, _u32(len(body)), body])
    else:  # (no seat of the engine's: built field by field, as protobuf would refuse it)
        m = pb.Trick(leader=leader, winner=winner)
        for seat, card in cards:
            _set_card(m.cards.add(seat=seat).card, card)
        item = pb.PlayerView(tricks=[m]).SerializeToString()
    _store(_TRICK_ITEM_BY_ID, id(trick), (trick, item))
    return item


def _result_item(result: DealResult) -> bytes:
    item = pb.PlayerView(deal_results=[deal_result_to_pb(result)]).SerializeToString()
    _store(_RESULT_ITEM_BY_ID, id(result), (result, item))
    return item
