"""Generated protobuf and gRPC code for ``proto/arena/v1/arena.proto`` (``make proto``).

Nothing here is edited by hand; the Makefile regenerates it from the .proto file.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_GENERATED = ("arena_pb2", "arena_pb2_grpc")


def __getattr__(name: str) -> ModuleType:
    # Reached only while the generated module is not imported yet: a checkout installed
    # without `make` (plain `pip install -e .`) has no generated code, and Python would
    # only say "cannot import name 'arena_pb2'".
    if name not in _GENERATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise ImportError(
            f"the protobuf code ({__name__}.{name}) has not been generated: run `make proto` "
            "(or `make venv`) in the checkout of thousand-arena"
        ) from None
