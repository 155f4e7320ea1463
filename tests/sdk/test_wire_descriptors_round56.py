"""Round 56 (performance, perf56p): ``sdk.wire_view`` holds the descriptor objects of its
copies' messages and fields. upb's Python wrappers keep no descriptor object alive: a
repeated field's container, a sub-message's wrapper, holds its field's descriptor, and one
that nothing else held was made anew for every container the SDK read and freed after it
(callgrind: ``PyUpb_FieldDescriptor_Get`` and ``PyUpb_DescriptorBase_Dealloc``, about
9,000 instructions a request; docs/performance.md, "Parsed once")."""

from __future__ import annotations

import sys
from typing import Any

from arena.v1 import arena_pb2 as pb
from sdk import wire_view


def _unheld(file: Any) -> list[str]:
    """The messages and fields of ``file`` whose descriptor objects nothing holds: each
    made for the look-up alone, referenced by ``getrefcount``'s argument only. (Counted
    here, not in an ``assert``: pytest's rewriting of one keeps its operands.)"""
    out = []
    for name in list(file.message_types_by_name):
        if sys.getrefcount(file.message_types_by_name[name]) <= 1:
            out.append(name)
        desc = file.message_types_by_name[name]
        for field in [f.name for f in desc.fields]:
            if sys.getrefcount(desc.fields_by_name[field]) <= 1:
                out.append(f"{name}.{field}")
    return out


def test_every_field_descriptor_of_the_copies_and_of_arena_v1_is_held() -> None:
    assert _unheld(wire_view._ItemView.DESCRIPTOR.file) == []
    assert _unheld(pb.DESCRIPTOR) == []
    assert len(pb.DESCRIPTOR.message_types_by_name) > 30
