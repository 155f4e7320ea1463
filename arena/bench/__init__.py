"""Benchmark sections printed by ``arena bench`` / ``make bench``.

Each section is a function returning a JSON-safe dict of figures. Sections are named in
:data:`SECTIONS` as ``"module:function"``: a new benchmark is added by writing its module
(and one line here).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["SECTIONS", "load_section", "run_sections"]

SECTIONS: dict[str, str] = {
    "engine": "arena.bench.engine:bench_engine",
    "grpc_baseline": "arena.bench.grpc_baseline:bench_grpc_baseline",
    "referee": "arena.bench.referee:bench_referee",
    "memory": "arena.bench.memory:bench_memory",
    "tournament": "arena.bench.tournament:bench_tournament",
}


def load_section(name: str) -> Callable[..., dict[str, Any]]:
    """The benchmark function of section ``name`` (``KeyError`` if unknown)."""
    if name not in SECTIONS:
        raise KeyError(f"unknown bench section {name!r} (known: {', '.join(SECTIONS)})")
    module, _, attr = SECTIONS[name].partition(":")
    fn: Callable[..., dict[str, Any]] = getattr(importlib.import_module(module), attr)
    return fn


def run_sections(names: list[str] | None = None, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Run the named sections (default: every one) and collect their figures.

    ``kwargs`` are passed to the sections that accept them (e.g. ``seconds``).
    """
    import inspect

    out: dict[str, dict[str, Any]] = {}
    for name in names or SECTIONS:
        fn = load_section(name)
        params = inspect.signature(fn).parameters
        out[name] = fn(**{k: v for k, v in kwargs.items() if k in params})
    return out
