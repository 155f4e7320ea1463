"""The proto keeps v1's compatibility promise (docs/protocol.md, Versions), checked as `buf
breaking` would with its WIRE_JSON rules against the frozen record of the released surface,
tests/data/proto_v1_wire.json (tests/support/proto_wire.py makes and compares it).

The first two tests hold today's proto and referee to the record; the rest edit a copy of
the proto the ways a contributor might and check that the comparison passes each addition
and fails each break, naming exactly what changed.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.support.proto_wire import PROTO, RECORD, breaking_changes, features, wire_surface

ROOT = Path(__file__).parents[2]
UPDATE = "python -m tests.support.proto_wire --write"


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    return json.loads(RECORD.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def today() -> dict[str, Any]:
    return wire_surface()


def test_the_proto_and_referee_break_nothing_of_the_released_v1(
    record: dict[str, Any], today: dict[str, Any]
) -> None:
    assert record["package"] == "arena.v1" and len(record["messages"]) > 30  # the whole file
    assert "Play" in record["services"]["arena.v1.Arena"]
    assert set(record["features"]) <= set(features())
    assert breaking_changes(record, today) == []


def test_the_record_holds_every_addition(record: dict[str, Any], today: dict[str, Any]) -> None:
    """An addition to the proto (or a feature the referee now offers) is recorded with it:
    a later change that took it back again is then a break the test above sees."""
    if today != record:
        added = [
            f"{kind} {name}"
            for kind in ("messages", "enums", "services")
            for name in today[kind]
            if today[kind][name] != record[kind].get(name)
        ] + [f"feature {f!r}" for f in today["features"] if f not in record["features"]]
        pytest.fail(
            f"the proto or the referee's features changed since {RECORD.name} was written"
            f" ({', '.join(added) or 'the file itself'}): write it again with `{UPDATE}`"
        )


def _edited(tmp: Path, *edits: tuple[str, str]) -> dict[str, Any]:
    """The wire surface of a copy of the proto with each (old, new) replaced once."""
    text = PROTO.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, f"the proto no longer has {old!r} once"
        text = text.replace(old, new)
    path = tmp / "arena.proto"
    path.write_text(text, encoding="utf-8")
    return wire_surface(path)


# Each: (edits, what the comparison must say: [] for a change that breaks nothing).
ADDITIONS = {
    "a field": [("uint32 tricks_omitted = 26;", "uint32 tricks_omitted = 26; bool new_one = 27;")],
    "a oneof member": [("PlayCard play = 7;", "PlayCard play = 7;\n    Pass fold = 8;")],
    "an enum value": [("INCIDENT_BOT_ERROR = 7;", "INCIDENT_BOT_ERROR = 7; INCIDENT_NEW = 8;")],
    "a message and a method": [
        ("rpc GetInfo(GetInfoRequest) returns (ServerInfo);",
         "rpc GetInfo(GetInfoRequest) returns (ServerInfo);\n  rpc Ping(Knock) returns (Pass);"),
        ("package arena.v1;", "package arena.v1;\nmessage Knock {}"),
    ],
    # FIELD_WIRE_JSON_COMPATIBLE_TYPE: int32 and uint32 are one group (wire and JSON).
    "uint32 to int32": [("uint32 amount = 1;  // the new standing bid", "int32 amount = 1;")],
    # Presence gained: an old reader reads an unset field as 0, as it always did.
    "presence": [("uint32 dealer = 4;", "optional uint32 dealer = 4;")],
    # The field's name and number stay reserved: nobody can give them another meaning.
    "a field removed, reserved": [("bool declare = 2;", 'reserved 2; reserved "declare";')],
    "an enum value removed, reserved": [
        ("INCIDENT_BOT_ERROR = 7;", 'reserved 7; reserved "INCIDENT_BOT_ERROR";')
    ],
}  # fmt: skip

BREAKS = {
    "a field removed": (
        [("bool declare = 2;", "")],
        ["arena.v1.PlayCard.declare (field 2) was deleted without reserving its number 2"
         " and name 'declare'"],
    ),
    "a field removed, only its number reserved (JSON reads the name)": (
        [("bool declare = 2;", "reserved 2;")],
        ["arena.v1.PlayCard.declare (field 2) was deleted without reserving its name 'declare'"],
    ),
    "a field renumbered": (
        [("uint32 seat = 2;", "uint32 seat = 9;")],
        ["arena.v1.MatchStarted.seat (field 2) was deleted without reserving its number 2"
         " and name 'seat'"],
    ),
    "a field renamed": (
        [("string client = 3;", "string client_name = 3;")],
        ["arena.v1.Hello.client (field 3) was renamed to 'client_name'",
         "arena.v1.Hello.client (field 3) changed its JSON name from 'client' to 'clientName'"],
    ),
    "a JSON name given": (
        [("string client = 3;", 'string client = 3 [json_name = "clientName"];')],
        ["arena.v1.Hello.client (field 3) changed its JSON name from 'client' to 'clientName'"],
    ),
    "a field's type": (
        [("uint32 time_limit_ms = 5;", "string time_limit_ms = 5;")],
        ["arena.v1.DecisionRequest.time_limit_ms (field 5) changed type from uint32 to string"],
    ),
    "uint32 to uint64 (JSON writes 64-bit numbers as strings)": (
        [("uint32 time_limit_ms = 5;", "uint64 time_limit_ms = 5;")],
        ["arena.v1.DecisionRequest.time_limit_ms (field 5) changed type from uint32 to uint64"],
    ),
    "a field's message type": (
        [("Suit suit = 1;  // required", "Rank suit = 1;")],
        ["arena.v1.Card.suit (field 1) changed type from arena.v1.Suit to arena.v1.Rank"],
    ),
    "a field's label": (
        [("uint32 deal_number = 3;   // the deal this", "repeated uint32 deal_number = 3; //")],
        ["arena.v1.DecisionRequest.deal_number (field 3) changed label from singular to"
         " repeated"],
    ),
    "a field moved into a oneof": (
        [("Suit suit = 1;  // required", "oneof which { Suit suit = 1; }")],
        ["arena.v1.Card.suit (field 1) moved from outside any oneof to oneof which"],
    ),
    "a oneof member moved out": (
        [("PlayCard play = 7;", "}\n  PlayCard play = 7;\n  oneof rest {\n    Pass more = 9;")],
        ["arena.v1.Action.play (field 7) moved from oneof kind to outside any oneof"],
    ),
    "presence lost (unset would read as seat 0)": (
        [("optional uint32 to_act = 6;", "uint32 to_act = 6;")],
        ["arena.v1.PlayerView.to_act (field 6) lost its presence (proto3 optional): unset"
         " would read as 0"],
    ),
    "an enum value removed": (
        [("INCIDENT_BOT_ERROR = 7;", "")],
        ["arena.v1.Incident value INCIDENT_BOT_ERROR (7) was deleted without reserving its"
         " number 7 and name 'INCIDENT_BOT_ERROR'"],
    ),
    "an enum value renamed": (
        [("RANK_NINE = 1;", "RANK_9 = 1;")],
        ["arena.v1.Rank value 1 was renamed from ['RANK_NINE'] to ['RANK_9']"],
    ),
    "a method removed": (
        [("rpc GetInfo(GetInfoRequest) returns (ServerInfo);", "")],
        ["method arena.v1.Arena/GetInfo was deleted"],
    ),
    "a method's streaming": (
        [("rpc GetInfo(GetInfoRequest) returns (ServerInfo);",
          "rpc GetInfo(GetInfoRequest) returns (stream ServerInfo);")],
        ["method arena.v1.Arena/GetInfo changed its server streaming from False to True"],
    ),
    "a method's request type": (
        [("rpc GetInfo(GetInfoRequest) returns (ServerInfo);",
          "rpc GetInfo(Pass) returns (ServerInfo);")],
        ["method arena.v1.Arena/GetInfo changed its request type from arena.v1.GetInfoRequest"
         " to arena.v1.Pass"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("edits", ADDITIONS.values(), ids=ADDITIONS.keys())
def test_an_addition_breaks_nothing(
    edits: list[tuple[str, str]], today: dict[str, Any], tmp_path: Path
) -> None:
    new = _edited(tmp_path, *edits)
    assert new != today  # the edit took
    assert breaking_changes(today, new) == []


@pytest.mark.parametrize("case", BREAKS.values(), ids=BREAKS.keys())
def test_a_break_is_named(
    case: tuple[list[tuple[str, str]], list[str]], today: dict[str, Any], tmp_path: Path
) -> None:
    edits, said = case
    assert breaking_changes(today, _edited(tmp_path, *edits)) == said


def test_a_new_package_breaks_it_all(today: dict[str, Any], tmp_path: Path) -> None:
    """arena.v2 is the way to break v1 (docs/protocol.md): every element of v1 is gone."""
    said = breaking_changes(today, _edited(tmp_path, ("package arena.v1;", "package arena.v2;")))
    assert said[0] == "the package changed from arena.v1 to arena.v2"
    assert "message arena.v1.Hello was deleted" in said
    assert "service arena.v1.Arena was deleted" in said


def test_deletions_of_kinds_features_and_reservations_are_named(
    today: dict[str, Any], tmp_path: Path
) -> None:
    """A message, an enum, the service, a feature the referee offered, a reservation: each
    taken away is named (the old surface here holds one more of each)."""
    old = copy.deepcopy(today)
    old["messages"]["arena.v1.Gone"] = {"fields": {}, "reserved_numbers": [],
                                        "reserved_names": []}  # fmt: skip
    old["enums"]["arena.v1.GoneKind"] = {"values": {"0": ["GONE_KIND_UNSPECIFIED"]},
                                         "reserved_numbers": [], "reserved_names": []}  # fmt: skip
    old["services"]["arena.v1.Lobby"] = {}
    old["features"] = sorted([*old["features"], "telepathy"])
    card = ("Suit suit = 1;  // required", 'Suit suit = 1; reserved 30 to 31; reserved "colour";')
    reserved = _edited(tmp_path, card)
    old["messages"]["arena.v1.Card"] = reserved["messages"]["arena.v1.Card"]
    assert breaking_changes(old, today) == [
        "arena.v1.Card: reserved number 30 is no longer reserved",
        "arena.v1.Card: reserved name 'colour' is no longer reserved",
        "message arena.v1.Gone was deleted",
        "enum arena.v1.GoneKind was deleted",
        "service arena.v1.Lobby was deleted",
        "feature 'telepathy' is no longer offered by the referee",
    ]


def test_the_command_refuses_to_write_a_break_and_names_it(tmp_path: Path) -> None:
    """`python -m tests.support.proto_wire --check --old PATH` against a proto that has one
    more field than today's: today's then "deleted" it, exit 1 naming it; --check against
    the record itself passes."""
    text = PROTO.read_text(encoding="utf-8")
    old = tmp_path / "arena.proto"
    old.write_text(text.replace("bool declare = 2;", "bool declare = 2;\n  uint32 spin = 3;"))
    cmd = [sys.executable, "-m", "tests.support.proto_wire", "--check"]
    out = subprocess.run([*cmd, "--old", str(old)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1, out
    assert "breaking: arena.v1.PlayCard.spin (field 3) was deleted without reserving its" \
        " number 3 and name 'spin'" in out.stderr  # fmt: skip
    ok = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert (ok.returncode, ok.stdout) == (0, "no breaking change\n"), ok.stderr


#: Today's proto is held to the proto of each wire surface a referee has served, from the
#: first referee (9d40b8bf, `arena serve`) to "ahead" (bc41834d): the first version of each
#: of the 11 distinct surfaces among the 53 versions of the file in the history, made once
#: with `git show` (README.md beside it says how), so the test needs no git history. (The
#: two commits before 9d40b8bf were a 22-second skeleton whose Event.view, field 7, no
#: referee or SDK ever used; 7 is Event.talon_taken since cb752955.)
HISTORY = ROOT / "tests" / "data" / "proto_history_round54" / "protos.tar.xz"


def test_every_proto_a_referee_served_is_kept(today: dict[str, Any], tmp_path: Path) -> None:
    """Each version of the proto a referee has served, held to today's as the record is:
    nothing any of them had is broken (so a record written afresh would not hide a break
    of an earlier release)."""
    with tarfile.open(HISTORY) as archive:
        archive.extractall(tmp_path, filter="data")
    versions = sorted(tmp_path.glob("*.proto"))  # named by date: the first is the oldest
    assert len(versions) == 11, [p.name for p in versions]
    assert versions[0].name.endswith("-9d40b8bf.proto") and "-bc41834d." in versions[-1].name
    broken: dict[str, list[str]] = {}
    for version in versions:
        said = breaking_changes(wire_surface(version, offered=[]), today)
        if said:
            broken[version.name] = said
    assert broken == {}
