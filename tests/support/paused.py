"""Timed tests start over when the machine paused them: CI's machine is shared, and a process
may stop for a second at any moment. The attempt itself detects the pause (by the clock that
matters) and returns ``None``; a pause is never assumed away."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["unpaused"]

T = TypeVar("T")


def unpaused(attempt: Callable[[], Coroutine[Any, Any, T | None]], tries: int, where: str) -> T:
    """``asyncio.run(attempt())`` until it returns something (not ``None``), at most
    ``tries`` times; ``where`` names the pause for the failure ("past the grace period")."""
    for _ in range(tries):
        got = asyncio.run(attempt())
        if got is not None:
            return got
    raise AssertionError(f"paused {where} in every one of {tries} tries")
