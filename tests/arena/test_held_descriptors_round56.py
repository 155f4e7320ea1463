"""Round 56: arena.v1's descriptor objects are held by ``arena.protocol``, so the referee's
process (which never imports the SDK's ``wire_view``, where perf56p first held them) does
not make and free one at each read of a repeated field or a sub-message (-0.4 % of the
referee's instructions per decision in its hot loop)."""

from __future__ import annotations

import subprocess
import sys

_CHECK = """
import sys
from arena.referee import Referee  # noqa: F401 (the referee's process imports this)
from arena.v1 import arena_pb2 as pb
assert "sdk.wire_view" not in sys.modules, "the referee imported the SDK"
unheld = []
for name in list(pb.DESCRIPTOR.message_types_by_name):
    if sys.getrefcount(pb.DESCRIPTOR.message_types_by_name[name]) <= 1:
        unheld.append(name)
    desc = pb.DESCRIPTOR.message_types_by_name[name]
    for field in [f.name for f in desc.fields]:
        if sys.getrefcount(desc.fields_by_name[field]) <= 1:
            unheld.append(name + "." + field)
print(len(pb.DESCRIPTOR.message_types_by_name), unheld)
"""


def test_the_referees_process_holds_arena_v1s_descriptors() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split(maxsplit=1)
    assert int(out[0]) > 30
    assert out[1].strip() == "[]"
