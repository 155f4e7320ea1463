"""Protobuf stand-ins whose repeated fields refuse iteration.

A upb repeated container has no ``__iter__``: a ``for`` over one runs Python's old
sequence protocol, which ends in an ``IndexError`` raised and caught (its message
formatted), some 1,800 instructions a loop. The SDK's and the arena's decoders read
repeated fields by a slice instead; these stand-ins let a test prove it, for any message
(rounds 56 and 57's tests)."""

from __future__ import annotations

from typing import Any

__all__ = ["NoIter", "NoIterMsg"]


class NoIter:
    """A repeated field that may be sliced, measured and tested, not iterated (its
    messages wrapped as :class:`NoIterMsg`)."""

    def __init__(self, items: Any) -> None:
        self._items = [_wrap(x) for x in items]

    def __getitem__(self, key: Any) -> Any:
        assert isinstance(key, slice), "read by index"
        return self._items[key]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        raise AssertionError("a protobuf container iterated: it raises IndexError at its end")


class NoIterMsg:
    """A protobuf message whose repeated fields (its sub-messages' too) are :class:`NoIter`."""

    def __init__(self, msg: Any) -> None:
        self._msg = msg

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._msg, name)
        field = self._msg.DESCRIPTOR.fields_by_name.get(name)
        if field is None:
            return value  # (a method: HasField, WhichOneof, SerializeToString, ...)
        if field.is_repeated:
            return NoIter(value)
        return _wrap(value)


def _wrap(value: Any) -> Any:
    return NoIterMsg(value) if hasattr(value, "DESCRIPTOR") else value
