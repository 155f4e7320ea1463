"""The v1 wire surface of proto/arena/v1/arena.proto, and the breaking changes between two.

docs/protocol.md "Versions" promises that within v1 fields, enum values, message kinds and
feature names are only ever added, never renumbered or given another meaning. This module
reads the proto's descriptor as protoc (grpc_tools) makes it, reduces it to what a client
depends on (the wire surface: every message's fields by number, with name, JSON name,
type, label, presence and oneof; every enum's values; the services' methods with their
types and streaming; what is ``reserved``), adds the feature names the referee offers, and
compares two such surfaces the way ``buf breaking`` does with its WIRE_JSON category (the
WIRE rules, and the names that JSON encodes by), plus the deletions of messages, enums,
services and methods that buf counts under PACKAGE: the v1 promise covers message kinds
and the RPCs too. tests/data/proto_v1_wire.json is the record of the released surface;
tests/arena/test_proto_compat_round54.py holds the proto to it.

A contributor who adds to the protocol writes the record again with

    .venv/bin/python -m tests.support.proto_wire --write

which refuses (exit 1, naming each change) when the proto breaks the record instead.
``--check`` only compares; ``--old PATH`` compares with another proto file than the record
(an old commit's, say).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2
from grpc_tools import protoc

__all__ = ["RECORD", "breaking_changes", "features", "main", "wire_surface"]

ROOT = Path(__file__).parents[2]
PROTO = ROOT / "proto" / "arena" / "v1" / "arena.proto"
#: The frozen record of the released v1 wire surface.
RECORD = ROOT / "tests" / "data" / "proto_v1_wire.json"

FDP = descriptor_pb2.FieldDescriptorProto
#: buf's FIELD_WIRE_JSON_COMPATIBLE_TYPE groups: a field may change type only within one
#: (types both wire- and JSON-compatible: int32 and uint32, int64 and uint64, fixed32 and
#: sfixed32, fixed64 and sfixed64); every other type is a group of its own.
_WIRE_JSON_GROUP = {"int32": "int32/uint32", "uint32": "int32/uint32",
                    "int64": "int64/uint64", "uint64": "int64/uint64",
                    "fixed32": "fixed32/sfixed32", "sfixed32": "fixed32/sfixed32",
                    "fixed64": "fixed64/sfixed64", "sfixed64": "fixed64/sfixed64"}  # fmt: skip


def _type_name(t: descriptor_pb2.FieldDescriptorProto.Type.ValueType) -> str:
    return FDP.Type.Name(t).removeprefix("TYPE_").lower()


def _descriptor(proto: Path, include: Path) -> descriptor_pb2.FileDescriptorProto:
    """The file's descriptor, from protoc itself (grpc_tools), as the round 45 test reads it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        args = ["protoc", f"-I{include}", f"--descriptor_set_out={out}", str(proto)]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc could not read {proto} (its errors are above)")
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return files[-1]


def _ranges(ranges: Any) -> list[list[int]]:
    # DescriptorProto.ReservedRange's end is exclusive: kept as protoc gives it.
    return sorted([r.start, r.end] for r in ranges)


def _message(m: descriptor_pb2.DescriptorProto, prefix: str, out: dict[str, Any]) -> None:
    name = f"{prefix}.{m.name}"
    oneofs = [o.name for o in m.oneof_decl]
    fields: dict[str, Any] = {}
    for f in m.field:
        synthetic = f.proto3_optional  # proto3 `optional`: a oneof of its own, not a oneof
        entry: dict[str, Any] = {
            "name": f.name,
            "json_name": f.json_name,
            "type": f.type_name.lstrip(".") if f.type_name else _type_name(f.type),
            "kind": _type_name(f.type),
            "label": "repeated" if f.label == FDP.LABEL_REPEATED else "singular",
            "presence": "explicit"
            if synthetic or f.type == FDP.TYPE_MESSAGE or f.HasField("oneof_index")
            else "implicit",
            "oneof": None if synthetic or not f.HasField("oneof_index") else oneofs[f.oneof_index],
        }
        if f.label == FDP.LABEL_REPEATED:
            entry["presence"] = None
        fields[str(f.number)] = entry
    out["messages"][name] = {
        "fields": fields,
        "reserved_numbers": _ranges(m.reserved_range),
        "reserved_names": sorted(m.reserved_name),
    }
    for n in m.nested_type:
        _message(n, name, out)
    for e in m.enum_type:
        _enum(e, name, out)


def _enum(e: descriptor_pb2.EnumDescriptorProto, prefix: str, out: dict[str, Any]) -> None:
    values: dict[str, list[str]] = {}
    for v in e.value:
        values.setdefault(str(v.number), []).append(v.name)
    out["enums"][f"{prefix}.{e.name}"] = {
        "values": values,
        # EnumDescriptorProto.EnumReservedRange's end is inclusive.
        "reserved_numbers": sorted([r.start, r.end + 1] for r in e.reserved_range),
        "reserved_names": sorted(e.reserved_name),
    }


def features() -> list[str]:
    """The feature names today's referee offers in its Welcome."""
    from arena.referee.core import FEATURES

    return sorted(FEATURES)


def wire_surface(
    proto: Path = PROTO, include: Path | None = None, offered: list[str] | None = None
) -> dict[str, Any]:
    """``proto``'s wire surface (with ``offered``, the referee's feature names, or today's)."""
    # The proto imports nothing: its own folder is all protoc needs to read it.
    f = _descriptor(proto, include if include is not None else proto.parent)
    out: dict[str, Any] = {
        "package": f.package,
        "syntax": f.syntax or "proto2",
        "messages": {},
        "enums": {},
        "services": {},
        "features": sorted(offered) if offered is not None else features(),
    }
    for m in f.message_type:
        _message(m, f.package, out)
    for e in f.enum_type:
        _enum(e, f.package, out)
    for s in f.service:
        out["services"][f"{f.package}.{s.name}"] = {
            meth.name: {
                "input": meth.input_type.lstrip("."),
                "output": meth.output_type.lstrip("."),
                "client_streaming": meth.client_streaming,
                "server_streaming": meth.server_streaming,
                "idempotency": descriptor_pb2.MethodOptions.IdempotencyLevel.Name(
                    meth.options.idempotency_level
                ),
            }
            for meth in s.method
        }
    return out


def _reserved(number: int, ranges: list[list[int]]) -> bool:
    return any(lo <= number < hi for lo, hi in ranges)


def _fields(old: dict[str, Any], new: dict[str, Any], msg: str, problems: list[str]) -> None:
    o, n = old["messages"][msg], new["messages"][msg]
    for num, of in o["fields"].items():
        label = f"{msg}.{of['name']} (field {num})"
        nf = n["fields"].get(num)
        if nf is None:
            # FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED and ..._UNLESS_NAME_RESERVED (WIRE_JSON).
            missing = [
                what
                for what, ok in (
                    (f"number {num}", _reserved(int(num), n["reserved_numbers"])),
                    (f"name {of['name']!r}", of["name"] in n["reserved_names"]),
                )
                if not ok
            ]
            if missing:
                problems.append(
                    f"{label} was deleted without reserving its {' and '.join(missing)}"
                )
            continue
        if nf["name"] != of["name"]:  # FIELD_SAME_NAME
            problems.append(f"{label} was renamed to {nf['name']!r}")
        if nf["json_name"] != of["json_name"]:  # FIELD_SAME_JSON_NAME
            problems.append(
                f"{label} changed its JSON name from {of['json_name']!r} to {nf['json_name']!r}"
            )
        if nf["type"] != of["type"]:  # FIELD_WIRE_JSON_COMPATIBLE_TYPE
            og, ng = (_WIRE_JSON_GROUP.get(x, x) for x in (of["type"], nf["type"]))
            if og != ng or of["kind"] in ("message", "enum", "group"):
                problems.append(f"{label} changed type from {of['type']} to {nf['type']}")
        if nf["label"] != of["label"]:  # FIELD_SAME_CARDINALITY
            problems.append(f"{label} changed label from {of['label']} to {nf['label']}")
        elif of["presence"] == "explicit" and nf["presence"] == "implicit":
            # buf lets presence go (one cardinality group); v1 does not: "unset is not 0"
            # (docs/protocol.md) is the field's meaning, lost without it.
            problems.append(f"{label} lost its presence (proto3 optional): unset would read as 0")
        if nf["oneof"] != of["oneof"]:  # FIELD_SAME_ONEOF
            where = {None: "outside any oneof"}
            problems.append(
                f"{label} moved from {where.get(of['oneof'], 'oneof ' + str(of['oneof']))}"
                f" to {where.get(nf['oneof'], 'oneof ' + str(nf['oneof']))}"
            )
    # RESERVED_MESSAGE_NO_DELETE: a reservation is never taken back.
    for lo, hi in o["reserved_numbers"]:
        for k in range(lo, min(hi, lo + 1000)):
            if not _reserved(k, n["reserved_numbers"]):
                problems.append(f"{msg}: reserved number {k} is no longer reserved")
                break
    for name in o["reserved_names"]:
        if name not in n["reserved_names"]:
            problems.append(f"{msg}: reserved name {name!r} is no longer reserved")


def _enums(old: dict[str, Any], new: dict[str, Any], enum: str, problems: list[str]) -> None:
    o, n = old["enums"][enum], new["enums"][enum]
    for num, names in o["values"].items():
        now = n["values"].get(num)
        if now is None:  # ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED / _NAME_RESERVED
            missing = [f"number {num}"] if not _reserved(int(num), n["reserved_numbers"]) else []
            missing += [f"name {x!r}" for x in names if x not in n["reserved_names"]]
            if missing:
                problems.append(
                    f"{enum} value {'/'.join(names)} ({num}) was deleted without reserving"
                    f" its {' and '.join(missing)}"
                )
        elif not set(names) <= set(now):  # ENUM_VALUE_SAME_NAME
            # Every old name is kept (JSON reads a value by any of its names); an alias
            # added (allow_alias) is an addition, as buf takes it.
            problems.append(f"{enum} value {num} was renamed from {names} to {now}")
    for lo, hi in o["reserved_numbers"]:  # RESERVED_ENUM_NO_DELETE
        if not all(_reserved(k, n["reserved_numbers"]) for k in range(lo, min(hi, lo + 1000))):
            problems.append(f"{enum}: reserved numbers {lo}..{hi - 1} are no longer reserved")
    for name in o["reserved_names"]:
        if name not in n["reserved_names"]:
            problems.append(f"{enum}: reserved name {name!r} is no longer reserved")


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What ``new`` breaks of ``old``, one sentence each naming the element; [] if nothing.

    Additions never break. The rules are buf's WIRE_JSON category (FILE_SAME_PACKAGE,
    FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED and ..._NAME_RESERVED, FIELD_SAME_NAME,
    FIELD_SAME_JSON_NAME, FIELD_WIRE_JSON_COMPATIBLE_TYPE, FIELD_SAME_CARDINALITY,
    FIELD_SAME_ONEOF, ENUM_VALUE_NO_DELETE_UNLESS_NUMBER_RESERVED and ..._NAME_RESERVED,
    ENUM_VALUE_SAME_NAME, RESERVED_MESSAGE_NO_DELETE, RESERVED_ENUM_NO_DELETE,
    RPC_SAME_REQUEST_TYPE, RPC_SAME_RESPONSE_TYPE, RPC_SAME_CLIENT_STREAMING,
    RPC_SAME_SERVER_STREAMING, RPC_SAME_IDEMPOTENCY_LEVEL), with PACKAGE's deletions
    (PACKAGE_MESSAGE_NO_DELETE, PACKAGE_ENUM_NO_DELETE, PACKAGE_SERVICE_NO_DELETE,
    RPC_NO_DELETE), a field's lost presence, and a feature name no longer offered.
    """
    problems: list[str] = []
    if new["package"] != old["package"]:
        problems.append(f"the package changed from {old['package']} to {new['package']}")
    if new["syntax"] != old["syntax"]:
        problems.append(f"the syntax changed from {old['syntax']} to {new['syntax']}")
    for msg in old["messages"]:
        if msg not in new["messages"]:
            problems.append(f"message {msg} was deleted")
        else:
            _fields(old, new, msg, problems)
    for enum in old["enums"]:
        if enum not in new["enums"]:
            problems.append(f"enum {enum} was deleted")
        else:
            _enums(old, new, enum, problems)
    for svc, methods in old["services"].items():
        if svc not in new["services"]:
            problems.append(f"service {svc} was deleted")
            continue
        for name, om in methods.items():
            nm = new["services"][svc].get(name)
            if nm is None:
                problems.append(f"method {svc}/{name} was deleted")
                continue
            for key, what in (("input", "request type"), ("output", "response type"),
                              ("client_streaming", "client streaming"),
                              ("server_streaming", "server streaming"),
                              ("idempotency", "idempotency level")):  # fmt: skip
                if nm[key] != om[key]:
                    problems.append(
                        f"method {svc}/{name} changed its {what} from {om[key]} to {nm[key]}"
                    )
    for feature in old["features"]:
        if feature not in new["features"]:
            problems.append(f"feature {feature!r} is no longer offered by the referee")
    return problems


def _dump(surface: dict[str, Any]) -> str:
    return json.dumps(surface, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--write``: the record again, if the proto breaks none of it; ``--check``: compare."""
    p = argparse.ArgumentParser(
        prog="python -m tests.support.proto_wire", description=(__doc__ or "").split("\n\n")[0]
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--write", action="store_true", help=f"write {RECORD.relative_to(ROOT)} again"
    )
    what.add_argument("--check", action="store_true", help="compare the proto with the record")
    p.add_argument("--old", type=Path, help="compare with this proto file instead of the record")
    args = p.parse_args(argv)
    now = wire_surface()
    if args.old is not None:
        old = wire_surface(args.old.resolve(), offered=[])
    elif RECORD.exists():
        old = json.loads(RECORD.read_text(encoding="utf-8"))
    else:
        old = None
    problems = breaking_changes(old, now) if old is not None else []
    for line in problems:
        print(f"breaking: {line}", file=sys.stderr)
    if problems:
        print(
            f"{len(problems)} breaking change(s): v1 only adds (docs/protocol.md, Versions);"
            " a field taken out is `reserved` by number and name",
            file=sys.stderr,
        )
        return 1
    if args.write:
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(_dump(now), encoding="utf-8")
        print(f"wrote {RECORD.relative_to(ROOT)}")
    else:
        print("no breaking change" + (" (no record yet)" if old is None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
