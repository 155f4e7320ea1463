"""Fixtures of every test."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_condensing_filter_left_behind() -> Iterator[None]:
    """`arena-bot` commands run in-process (CliRunner) install a filter that condenses a
    bot's repeated errors on the SDK's loggers, process-wide: a later test counting those
    lines would see the earlier test's count (review: an order-dependent failure)."""
    yield
    from sdk.cli import _BOT_ERROR_LOGGERS, _OncePerSite

    for name in _BOT_ERROR_LOGGERS:
        logger = logging.getLogger(name)
        for f in [f for f in logger.filters if isinstance(f, _OncePerSite)]:
            logger.removeFilter(f)
