"""The headless Chromium the browser tests share: one per test module (the fixtures of
``tests/support/browser.py``; see ``tests/web/test_web_browser.py`` for what it needs and
when it is skipped)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import driver, paths
from tests.support.harness import web_server

__all__ = ["base", "driver", "paths"]


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    """The URL of ``arena web`` run in this process on the module's ``db``."""
    with web_server(db) as server:
        yield server.url
