"""The headless Chromium the browser tests share: one per test module (see
``tests/web/test_web_browser.py`` for what it needs and when it is skipped)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness import web_server
from tests.web.test_web_browser import browser_paths, start_driver


@pytest.fixture(scope="module")
def paths() -> tuple[str, str]:
    return browser_paths()


@pytest.fixture(scope="module")
def driver(paths: tuple[str, str]) -> Iterator[Any]:
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    d = start_driver(*paths, profile)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def base(db: Path) -> Iterator[str]:
    """The URL of ``arena web`` run in this process on the module's ``db``."""
    with web_server(db) as server:
        yield server.url
