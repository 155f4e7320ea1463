"""Generated protobuf and gRPC code for ``proto/arena/v1/arena.proto`` (``make proto``).

Nothing here is edited by hand; the Makefile (or `pip install -e .`) regenerates it from the
.proto file.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from pathlib import Path
from types import ModuleType

_GENERATED = ("arena_pb2", "arena_pb2_grpc")


def __getattr__(name: str) -> ModuleType:
    # Reached only while the generated module is not imported yet: a checkout copied or
    # installed without generating the code (`pip install -e .` before it generated it,
    # `make clean`) has none, and Python would only say "cannot import name 'arena_pb2'".
    if name not in _GENERATED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise ImportError(_not_generated(name)) from None


def _not_generated(name: str) -> str:
    message = (
        f"the protobuf code ({__name__}.{name}) has not been generated: run `make proto` "
        "(or `make venv`) in the checkout of thousand-arena (without make: `pip install -e "
        ".` there, which generates it too)"
    )
    here = Path(__file__).resolve().parent
    for dist in importlib.metadata.distributions(name="thousand-arena"):
        # (the checkout's own build metadata, thousand_arena.egg-info, is one of them)
        installed = Path(str(dist.locate_file(f"arena/v1/{name}.py"))).resolve()
        if installed.parent != here and installed.is_file():
            # The package installed by pip has the code, but Python found this checkout
            # first: on PYTHONPATH, or the current directory (`python -m arena.soak` run
            # in the copy), where running elsewhere is the way out; or both, when taking
            # it off PYTHONPATH alone left the current directory to find it.
            checkout = here.parents[1]
            way = f"run outside the checkout {checkout}"
            if _on_pythonpath(checkout):
                way = f"take the checkout {checkout} off PYTHONPATH"
                if _in_current_directory(checkout):
                    way += " and run outside it"
            return (
                f"{message}; or, to use the package installed by pip "
                f"({installed.parents[2]}), {way}: Python imported it first"
            )
    return message


def _on_pythonpath(folder: Path) -> bool:
    if sys.flags.ignore_environment:  # (python -I, -E: PYTHONPATH is not read)
        return False
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return any(e and Path(e).resolve() == folder for e in entries)


def _in_current_directory(folder: Path) -> bool:
    # sys.path[0] is the current directory for `python -c` ("") and `python -m` (its path);
    # a script's own folder or, with -P / -I, nothing of the current directory otherwise.
    first = sys.path[0] if sys.path else None
    if first is None or first not in ("", os.getcwd()):
        return False
    return Path.cwd().resolve() == folder
