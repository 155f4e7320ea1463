"""Round 56 (performance): the SDK reads protobuf's repeated fields by a slice (a upb
container has no ``__iter__``: iterating one raised and caught an ``IndexError`` at its
end, a formatted message each). A bot must still get exactly ``view_from_pb``'s view."""

from __future__ import annotations

from typing import Any

from sdk import wire_view
from sdk.wire_view import _known_view, request_view
from tests.sdk.test_wire_view_round54 import _matches


class _NoIter:
    """A repeated field that may be sliced, measured and tested, not iterated."""

    def __init__(self, items: Any) -> None:
        self._items = list(items)

    def __getitem__(self, key: Any) -> Any:
        assert isinstance(key, slice), "read by index"
        return self._items[key]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        raise AssertionError("a protobuf container iterated: it raises IndexError at its end")


class _Items:
    def __init__(self, msg: Any) -> None:
        self._msg = msg

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._msg, name)
        if name in wire_view._ITEMS or name in ("players", "active_seats", "scores", "barrel"):
            return _NoIter(value)
        return value


def test_the_view_items_are_read_by_a_slice_not_iterated() -> None:
    views, sent = _matches()[0]
    ruleset, previous = views[0].ruleset, None
    for v, msg in zip(views, sent, strict=True):
        view = request_view(msg, ruleset, previous)  # (learns what is new)
        items = _Items(wire_view._ItemView.FromString(msg.SerializeToString()))
        assert _known_view(items, ruleset.players, ruleset, previous) == view == v
        previous = view
