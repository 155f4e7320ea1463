"""Round 57 (hostile arena): the SDK's read path fuzzed at the byte level against the
reference decoder. Real ``ServerMessage`` bytes, as a bot was sent them in real matches
(``arena.bench.sdk_requests.record``: the real referee, every feature on), are mutated on
the wire (truncated, bytes flipped, fields duplicated, reordered, dropped, unknown fields,
wrong wire types, lengths past the end, a non-repeated field repeated, packed lists
unpacked and back, negative enums, varints overlong or past ten bytes, values changed) at
any depth, and fed to the SDK:

* the view decoder the runner uses (``sdk.wire_view``'s public ``wire_items`` and
  ``request_view``) gives exactly ``view_from_pb``'s view of a full protobuf parse, or the
  same error (type and text), never another exception, never another view;
* a real ``BotRunner`` fed the recorded messages with one of them mutated never raises,
  logs no traceback (an exception it did not foresee), asks its bot only with a view the
  reference decoder gives for that request, answers with the bot's own choices only, and
  says something (a warning or an error) about every request it does not put to the bot;
  and it goes on to decide the next real request as the reference says.

Derandomized, ``deadline=None``; the default run is a few seconds, the ``slow`` one
(``-m slow``) tries many more examples."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bench.sdk_requests import record
from arena.protocol import (
    MalformedActionError,
    MalformedMessageError,
    action_from_pb,
    ruleset_from_pb,
    view_from_pb,
)
from arena.v1 import arena_pb2 as pb
from bots.random_bot import RandomBot
from engine import Action, PlayerView, Ruleset
from sdk.client import BotRunner, _Outbox
from sdk.wire_view import request_view, wire_items

# ----------------------------------------------------------------------------- the wire

#: One protobuf field as read off the wire: (number, wire type, value): an int for the
#: varint (0), fixed64 (1) and fixed32 (5) types, the payload's bytes for a length-delimited
#: one (2).
Field = tuple[int, int, Any]


def _varint(n: int, pad: int = 0) -> bytes:
    """``n`` (taken modulo 2**64, as protobuf writes a negative int32) as a varint;
    ``pad`` more bytes than it needs (a non-canonical encoding protobuf reads alike while
    it is at most ten bytes long)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    if pad:
        out[-1] |= 0x80
        out += b"\x80" * (pad - 1) + b"\x00"
    return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("bad varint")
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n & ((1 << 64) - 1), pos


def fields(data: bytes) -> list[Field]:
    """``data`` as its fields; ``ValueError`` if it is not a message's wire bytes."""
    out: list[Field] = []
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wt = key >> 3, key & 7
        if number == 0:
            raise ValueError("field 0")
        value: int | bytes
        if wt == 0:
            value, pos = _read_varint(data, pos)
        elif wt == 1:
            value, pos = int.from_bytes(data[pos : pos + 8], "little"), pos + 8
        elif wt == 5:
            value, pos = int.from_bytes(data[pos : pos + 4], "little"), pos + 4
        elif wt == 2:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        else:
            raise ValueError("groups")
        if pos > len(data):
            raise ValueError("past the end")
        out.append((number, wt, value))
    return out


def encode(fs: list[Field]) -> bytes:
    out = bytearray()
    for number, wt, value in fs:
        out += _varint(number << 3 | wt)
        if wt == 0:
            out += _varint(value)
        elif wt == 1:
            out += (value & ((1 << 64) - 1)).to_bytes(8, "little")
        elif wt == 5:
            out += (value & 0xFFFFFFFF).to_bytes(4, "little")
        else:
            out += _varint(len(value)) + value
    return bytes(out)


def _nested(fs: list[Field]) -> list[int]:
    """The indexes of ``fs``'s length-delimited fields that parse as messages."""
    out = []
    for i, (_, wt, value) in enumerate(fs):
        if wt == 2 and value:
            try:
                fields(value)
            except ValueError:
                continue
            out.append(i)
    return out


# ----------------------------------------------------------------------------- mutations

Draw = Callable[[st.SearchStrategy[Any]], Any]


def _mutate_fields(fs: list[Field], draw: Draw) -> list[Field]:
    """One structural change to ``fs`` (a copy), or to a message nested in it."""
    fs = list(fs)
    nested = _nested(fs)
    if nested and draw(st.integers(0, 4)):  # (mostly deeper: the view's items are there)
        # (half the time the largest: a request's view, where the items are)
        largest = max(nested, key=lambda k: len(fs[k][2]))
        i = largest if draw(st.booleans()) else draw(st.sampled_from(nested))
        number, wt, value = fs[i]
        fs[i] = (number, wt, encode(_mutate_fields(fields(value), draw)))
        return fs
    op = draw(st.sampled_from([
        "duplicate", "swap", "drop", "unknown", "wire_type", "negative", "value", "pack",
        "unpack", "repeat_other", "empty",
    ]))  # fmt: skip
    if not fs:
        op = "unknown"
    i = draw(st.integers(0, max(0, len(fs) - 1)))
    if op == "duplicate":
        fs.insert(draw(st.integers(0, len(fs))), fs[i])
    elif op == "swap":
        j = draw(st.integers(0, len(fs) - 1))
        fs[i], fs[j] = fs[j], fs[i]
    elif op == "drop":
        del fs[i]
    elif op == "unknown":
        number = draw(st.sampled_from([27, 99, 1000, 536870911]))
        wt = draw(st.sampled_from([0, 1, 2, 5]))
        new: Any = draw(st.binary(max_size=8)) if wt == 2 else draw(st.integers(0, 2**32))
        fs.insert(draw(st.integers(0, len(fs))), (number, wt, new))
    elif op == "wire_type":
        number, wt, value = fs[i]
        to = draw(st.sampled_from([w for w in (0, 1, 2, 5) if w != wt]))
        if to == 2:
            value = _varint(value) if isinstance(value, int) else value
        elif isinstance(value, bytes):
            value = len(value)
        fs[i] = (number, to, value)
    elif op == "negative":
        number, wt, _ = fs[i]
        fs[i] = (number, 0, -draw(st.integers(1, 2**31)))
    elif op == "value":
        number, wt, value = fs[i]
        if isinstance(value, int):
            small = [0, 1, 2, 3, 4, 5, 6, 7, 100, 2**31, 2**32 + 1]
            fs[i] = (number, wt, draw(st.sampled_from(small)))
        else:
            fs[i] = (number, wt, draw(st.binary(max_size=12)))
    elif op == "pack":  # the varint fields of one number packed into one
        number = fs[i][0]
        same = [k for k, f in enumerate(fs) if f[0] == number and f[1] == 0]
        if same:
            packed = b"".join(_varint(fs[k][2]) for k in same)
            fs = [f for k, f in enumerate(fs) if k not in same]
            fs.insert(min(same[0], len(fs)), (number, 2, packed))
    elif op == "unpack":  # a length-delimited field read as packed varints
        number, wt, value = fs[i]
        if wt == 2:
            values, pos = [], 0
            try:
                while pos < len(value):
                    v, pos = _read_varint(value, pos)
                    values.append(v)
            except ValueError:
                values = []
            if values:
                fs[i : i + 1] = [(number, 0, v) for v in values]
    elif op == "repeat_other":  # the same field again with another value (merged or last)
        number, wt, value = fs[i]
        other: Any = (
            draw(st.integers(0, 8)) if isinstance(value, int) else draw(st.sampled_from(
                [b"", value[: len(value) // 2], value + value]))
        )  # fmt: skip
        fs.insert(draw(st.integers(i + 1, len(fs))), (number, wt, other))
    elif op == "empty":
        number, wt, value = fs[i]
        fs[i] = (number, wt, 0 if isinstance(value, int) else b"")
    return fs


def _raw_mutation(data: bytes, draw: Draw) -> bytes:
    """One change to the bytes themselves."""
    op = draw(st.sampled_from(["truncate", "flip", "length", "varint11", "overlong"]))
    if not data:
        return data
    k = draw(st.integers(0, len(data) - 1))
    if op == "truncate":
        return data[:k]
    if op == "flip":
        return data[:k] + bytes([data[k] ^ draw(st.integers(1, 255))]) + data[k + 1 :]
    if op == "length":  # a length past the end (or a huge one)
        size = draw(st.sampled_from([len(data), 2**31 - 1, 2**32 + 5, 2**63]))
        return data[:k] + b"\x12" + _varint(size) + data[k:]
    if op == "varint11":  # a varint of eleven bytes: past protobuf's ten
        return data[:k] + b"\x08" + b"\xff" * 10 + b"\x01" + data[k:]
    # overlong: the first field's key written with padding (protobuf reads it alike)
    try:
        fs = fields(data)
    except ValueError:
        return data
    if not fs:
        return data
    number, wt, value = fs[0]
    head = _varint(number << 3 | wt, pad=draw(st.integers(1, 5)))
    return head + encode([(number, wt, value)])[len(_varint(number << 3 | wt)) :] + encode(fs[1:])


@st.composite
def mutated(draw: Draw, data: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 7)) == 0:
            data = _raw_mutation(data, draw)
        else:
            try:
                fs = fields(data)
            except ValueError:
                data = _raw_mutation(data, draw)
                continue
            data = encode(_mutate_fields(fs, draw))
    return data


# ----------------------------------------------------------------------------- recordings


@dataclass(frozen=True)
class Stream:
    """One bot's messages, as it was sent them: the match's ruleset and, for each
    message, the views of its requests (in order) and the match's last view before it."""

    name: str
    messages: tuple[bytes, ...]
    ruleset: Ruleset
    match_id: str

    def __repr__(self) -> str:  # (hypothesis prints the case: the name says which)
        return f"Stream({self.name!r})"


@cache
def _streams() -> tuple[Stream, ...]:
    """The first match of each bot of a small real recording (the messages of its stream up
    to that match's end)."""
    out = []
    for name, messages in record(57, tables=1, matches=1, max_deals=3).bots.items():
        ruleset = None
        match_id = ""
        for data in messages:
            msg = pb.ServerMessage.FromString(data)
            for m in msg.batch.messages[:] if msg.HasField("batch") else [msg]:
                if m.HasField("match_started"):
                    ruleset = ruleset_from_pb(m.match_started.ruleset)
                    match_id = m.match_started.match_id
        assert ruleset is not None
        out.append(Stream(name, tuple(messages), ruleset, match_id))
    return tuple(out)


def _requests(msg: pb.ServerMessage) -> list[pb.DecisionRequest]:
    inner = msg.batch.messages[:] if msg.HasField("batch") else [msg]
    return [m.decision_request for m in inner if m.HasField("decision_request")]


def _previous(stream: Stream, upto: int) -> PlayerView | None:
    """The match's last view before message ``upto`` (as the runner keeps it: the
    MatchStarted's, then each request's), decoded by the reference."""
    previous = None
    for data in stream.messages[:upto]:
        msg = pb.ServerMessage.FromString(data)
        inner = msg.batch.messages[:] if msg.HasField("batch") else [msg]
        for m in inner:
            if m.HasField("match_started"):
                previous = view_from_pb(m.match_started.view, stream.ruleset)
            elif m.HasField("decision_request"):
                previous = view_from_pb(m.decision_request.view, stream.ruleset, previous)
    return previous


def _reference(msg: pb.PlayerView, ruleset: Ruleset, previous: PlayerView | None) -> object:
    """What the runner does with a request's view, as it did before the wire path: the view
    ``view_from_pb`` decodes from the fully parsed message or its error, a view offering
    actions of a kind this protocol does not know (a newer one's) read without them."""
    got = _outcome(partial(view_from_pb, msg, ruleset, previous))
    if isinstance(got, tuple) and got[0] is MalformedActionError and got[1].startswith("action:"):
        known = pb.PlayerView()
        known.CopyFrom(msg)
        del known.legal_actions[:]
        known.legal_actions.extend(
            [a for a in msg.legal_actions if a.WhichOneof("kind") or not a.ByteSize()]
        )
        return _outcome(partial(view_from_pb, known, ruleset, previous))
    return got


def _outcome(call: Callable[[], Any]) -> object:
    """A decoded view, or its error as (type, text): what is compared."""
    try:
        return call()
    except MalformedMessageError as e:
        return (type(e), str(e))


# ----------------------------------------------------------------------------- 1: the decoder


def _check_decoder(data: bytes, ruleset: Ruleset, previous: PlayerView | None) -> None:
    try:
        msg = pb.ServerMessage.FromString(data)
    except DecodeError:
        return  # refused whole by the runner's parse, before any view is read
    wire = wire_items(data)  # (must not raise on bytes that parse)
    if wire is None:
        wired: list[Any] = [None] * len(_requests(msg))
    else:
        inner = wire.batch.messages[:] if wire.HasField("batch") else [wire]
        wired = [m.decision_request.view for m in inner if m.HasField("decision_request")]
    for req, items in zip(_requests(msg), wired, strict=True):
        ref = _outcome(partial(view_from_pb, req.view, ruleset, previous))
        got = _outcome(partial(request_view, req.view, ruleset, previous, items))
        assert got == ref, f"{got!r}\n!=\n{ref!r}\nfor\n{req.view}"
        if isinstance(ref, PlayerView):
            assert type(got) is PlayerView
        # ... and without the wire's items (a view serialized again)
        again = _outcome(partial(request_view, req.view, ruleset, previous))
        assert again == ref


def _positions() -> list[tuple[int, int]]:
    """(stream, message) of every message holding a request, and a few others."""
    out = []
    for s, stream in enumerate(_streams()):
        for k, data in enumerate(stream.messages):
            if _requests(pb.ServerMessage.FromString(data)) or k < 3:
                out.append((s, k))
    return out


@st.composite
def cases(draw: Draw) -> tuple[Stream, int, bytes]:
    s, k = draw(st.sampled_from(_positions()))
    stream = _streams()[s]
    return stream, k, draw(mutated(stream.messages[k]))


_FAST = settings(
    max_examples=200, derandomize=True, deadline=None, database=None,
    suppress_health_check=list(HealthCheck),
)  # fmt: skip
_SLOW = settings(_FAST, max_examples=3000)


def _decoder_case(case: tuple[Stream, int, bytes]) -> None:
    stream, k, data = case
    _check_decoder(data, stream.ruleset, _previous(stream, k))


@_FAST
@given(cases())
def test_the_wire_decoder_gives_the_reference_view_or_error(
    case: tuple[Stream, int, bytes],
) -> None:
    _decoder_case(case)


@pytest.mark.slow
@_SLOW
@given(cases())
def test_the_wire_decoder_gives_the_reference_view_or_error_slow(
    case: tuple[Stream, int, bytes],
) -> None:
    _decoder_case(case)


_REQUEST = pb.ServerMessage.DESCRIPTOR.fields_by_name["decision_request"].number
_VIEW = pb.DecisionRequest.DESCRIPTOR.fields_by_name["view"].number
_VIEW_FIELDS = pb.PlayerView.DESCRIPTOR.fields_by_name
#: A view's varint fields (its repeated ones too), each tried at these values: a seat past
#: the table, the highest uint32, a negative int32 (ten bytes), past 32 bits.
_EDGES = (0, 1, 2, 3, 4, 5, 7, 100, 2**31, 2**32 - 1, 2**32 + 2, 2**64 - 1)
_ITEM_FIELDS = tuple(f.number for f in pb.PlayerView.DESCRIPTOR.fields if f.type == f.TYPE_MESSAGE)


def _with_view(data: bytes, view: list[Field]) -> bytes:
    """``data`` (a ServerMessage holding one request) with ``view`` as its view's fields."""
    out = []
    for number, wt, value in fields(data):
        if number == _REQUEST:
            inner = []
            for n2, w2, v2 in fields(value):
                if n2 == _VIEW:
                    v2 = encode(view)
                inner.append((n2, w2, v2))
            value = encode(inner)
        out.append((number, wt, value))
    return encode(out)


def _sweeps(fs: list[Field]) -> list[list[Field]]:
    """Each varint field of the view at each edge value (set, or added where absent), and
    each list of items emptied, its first item twice, or another list's first item added."""
    out = []
    for f in pb.PlayerView.DESCRIPTOR.fields:
        if f.type in (f.TYPE_MESSAGE, f.TYPE_STRING):
            continue
        for v in _EDGES:
            kept = [x for x in fs if x[0] != f.number]
            out.append([*kept, (f.number, 0, v)])
            if f.is_repeated:  # (one more value, packed or not)
                out.append([*fs, (f.number, 0, v)])
    for number in _ITEM_FIELDS:
        mine = [x for x in fs if x[0] == number]
        out.append([x for x in fs if x[0] != number])
        if mine:
            out.append([*fs, mine[0]])
        for other in _ITEM_FIELDS:
            theirs = [x for x in fs if x[0] == other]
            if other != number and theirs:
                out.append([*fs, (number, 2, theirs[0][2])])
    return out


def test_every_field_of_a_view_at_its_edges_decodes_as_the_reference() -> None:
    """A deterministic sweep beside the random mutations: in real requests (each bot's,
    every second one, the items learnt by then), every varint field of the view at each
    edge value and every list of items emptied, doubled or given another list's item:
    the wire decoder's view or error is the reference's."""
    checked = 0
    for stream in _streams():
        asked = [
            k for k, data in enumerate(stream.messages)
            if pb.ServerMessage.FromString(data).HasField("decision_request")
        ]  # fmt: skip
        for k in asked[::2]:
            previous = _previous(stream, k)
            for sweep in _sweeps(fields(_view_bytes(stream.messages[k]))):
                data = _with_view(stream.messages[k], sweep)
                _check_decoder(data, stream.ruleset, previous)
                checked += 1
    assert checked > 5000


def _view_bytes(data: bytes) -> bytes:
    return pb.ServerMessage.FromString(data).decision_request.view.SerializeToString()


def test_the_mutations_reach_every_outcome() -> None:
    """The strategy is not vacuous: among its first examples some mutated messages do not
    parse, some views are refused by the reference (several fields named), and some still
    decode to a view that differs from the recorded one."""
    seen: dict[str, int] = {}
    named: set[str] = set()

    @settings(_FAST, max_examples=200)
    @given(cases())
    def count(case: tuple[Stream, int, bytes]) -> None:
        stream, k, data = case
        try:
            msg = pb.ServerMessage.FromString(data)
        except DecodeError:
            seen["unparsed"] = seen.get("unparsed", 0) + 1
            return
        previous = _previous(stream, k)
        original = _requests(pb.ServerMessage.FromString(stream.messages[k]))
        for j, req in enumerate(_requests(msg)):
            ref = _outcome(partial(view_from_pb, req.view, stream.ruleset, previous))
            if isinstance(ref, tuple):
                seen["refused"] = seen.get("refused", 0) + 1
                named.add(str(ref[1]).split(":")[0])
            elif j < len(original) and ref != _outcome(
                partial(view_from_pb, original[j].view, stream.ruleset, previous)
            ):
                seen["changed"] = seen.get("changed", 0) + 1

    count()
    assert seen.get("unparsed", 0) > 10 and seen.get("refused", 0) > 10, seen
    assert seen.get("changed", 0) >= 5, seen
    assert len(named) >= 5, named


# ----------------------------------------------------------------------------- 2: the runner


class Recorder(RandomBot):
    """The random bot, keeping every view it was asked with and every action it chose."""

    asked: list[PlayerView]
    chose: list[Action]

    def act(self, view: PlayerView) -> Action:
        action = super().act(view)
        Recorder.asked.append(view)
        Recorder.chose.append(action)
        return action


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@dataclass
class Fed:
    """What a runner did with one message: the views its bot was asked with, the actions
    the bot chose, the answers sent (action, request id) and the lines logged."""

    asked: list[PlayerView]
    chose: list[Action]
    sent: list[pb.Decision]
    lines: list[logging.LogRecord]


async def _feed_all(messages: list[bytes]) -> list[Fed]:
    """A fresh runner (the recording bot, asked on the event loop) fed ``messages`` as
    its read loop feeds it what it reads; what it did with each."""
    runner = BotRunner(Recorder, "in-process", "token", name="fuzz")
    out = _Outbox()
    runner._out = out
    sent: list[pb.Decision] = []

    class Call:  # the stream's write side, as _Outbox.flush writes to it
        async def write(self, msg: pb.BotMessage) -> None:
            msg = pb.BotMessage.FromString(msg.SerializeToString())
            kind = msg.WhichOneof("kind")
            if kind == "decision":
                sent.append(msg.decision)
            elif kind == "decisions":
                sent.extend(msg.decisions.decisions)

    call = Call()
    handler = _Lines()
    log = logging.getLogger("sdk")
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    got = []
    try:
        for data in messages:
            Recorder.asked, Recorder.chose = [], []
            handler.records = []
            sent.clear()
            runner._on_read(data, out)  # (the read loop's handling of one message)
            while runner._tasks:  # a bot being made, a request behind it
                await asyncio.wait(set(runner._tasks))
            if out:
                await out.flush(call)
            got.append(Fed(Recorder.asked, Recorder.chose, list(sent), handler.records))
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        for task in list(runner._tasks):
            task.cancel()
    return got


#: The Welcome of the recordings without "ahead".
_NOT_AHEAD = pb.ServerMessage(
    welcome=pb.Welcome(
        bot_name="fuzz",
        server_version="fuzz",
        protocol_version=1,
        features=["batch", "results_once", "deal_once"],
    )
).SerializeToString()


def _runner_case(case: tuple[Stream, int, bytes], ahead: bool = False) -> None:
    """``ahead``: the Welcome as recorded, listing "ahead" (the bot is also asked on the
    views it foresees, engine.own_next_view of a mutated view: only the no-traceback and
    own-choice checks apply); else without it, every check."""
    stream, k, data = case
    # the recorded messages up to k, k mutated, then the next two as recorded
    feed = [*stream.messages[:k], data, *stream.messages[k + 1 : k + 3]]
    if k and not ahead:  # (each request asked, none answered ahead: what it is asked compared)
        feed[0] = _NOT_AHEAD
    results = asyncio.run(_feed_all(feed))
    for fed in results:
        unforeseen = [r for r in fed.lines if r.exc_info or "could not handle" in r.getMessage()]
        assert not unforeseen, [r.getMessage() for r in unforeseen]
    mine = results[k]
    chosen = [a for fed in results[: k + 1] for a in fed.chose]
    if ahead:
        assert all(action_from_pb(d.action) in chosen for d in mine.sent)
        return
    try:
        msg = pb.ServerMessage.FromString(data)
    except DecodeError:
        assert not mine.asked and any(
            "does not parse" in r.getMessage() and r.levelno >= logging.ERROR for r in mine.lines
        )
        return
    previous = _previous(stream, k)
    refs = [_reference(r.view, stream.ruleset, previous) for r in _requests(msg)]
    good = [v for v in refs if isinstance(v, PlayerView)]
    # the bot is asked only with views the reference gives (in order)
    it = iter(good)
    for view in mine.asked:
        assert any(view == v for v in it), f"asked with\n{view}\nnot among\n{good}"
    # every answer is the bot's own choice (one chosen before, for a request seen again)
    assert all(action_from_pb(d.action) in chosen for d in mine.sent)
    refused = len(refs) - len(good)
    if refused or len(mine.asked) < len(refs):
        said = [r for r in mine.lines if r.levelno >= logging.WARNING]
        assert said or not refs, "a request not put to the bot, and nothing said"


def test_the_runner_fed_the_recordings_asks_the_reference_views() -> None:
    """The harness itself: fed each recorded stream unmutated, the runner asks its bot
    once per request, with the reference's view, and answers each with the bot's choice."""
    asked = 0
    for stream in _streams():
        results = asyncio.run(_feed_all([_NOT_AHEAD, *stream.messages[1:]]))
        for k, (fed, data) in enumerate(zip(results, stream.messages, strict=True)):
            previous = _previous(stream, k)
            refs = [_reference(r.view, stream.ruleset, previous)
                    for r in _requests(pb.ServerMessage.FromString(data))]  # fmt: skip
            assert fed.asked == refs
            assert [action_from_pb(d.action) for d in fed.sent] == fed.chose
            assert not [r for r in fed.lines if r.levelno >= logging.WARNING]
            asked += len(fed.asked)
    assert asked > 100


@_FAST
@given(cases())
def test_a_runner_fed_a_mutated_message_plays_on(case: tuple[Stream, int, bytes]) -> None:
    _runner_case(case)


@_FAST
@given(cases())
def test_a_runner_answering_ahead_fed_a_mutated_message_plays_on(
    case: tuple[Stream, int, bytes],
) -> None:
    _runner_case(case, ahead=True)


@pytest.mark.slow
@settings(_FAST, max_examples=1500)
@given(cases(), st.booleans())
def test_a_runner_fed_a_mutated_message_plays_on_slow(
    case: tuple[Stream, int, bytes], ahead: bool
) -> None:
    _runner_case(case, ahead)


def test_the_wire_tools_read_back_what_they_write() -> None:
    """The mutation tools themselves: every recorded message read as fields and written
    again is the same bytes; a padded varint is read as the same number."""
    for stream in _streams():
        for data in stream.messages:
            assert encode(fields(data)) == data
    for n in (0, 1, 127, 128, 300, 2**32, 2**56):
        for pad in range(2):
            assert _read_varint(_varint(n, pad), 0) == (n, len(_varint(n)) + pad)
