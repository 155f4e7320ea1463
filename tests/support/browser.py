"""The headless Chromium the browser tests share, one per test module: the ``paths`` and
``driver`` fixtures. ``tests/web/conftest.py`` holds them for the tests in ``tests/web``; a
test module elsewhere (a review's) imports them, as a conftest out of its directory does
not reach it (see ``tests/web/test_web_browser.py`` for what the browser needs and when its
tests are skipped)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.test_web_browser import browser_paths, start_driver

__all__ = ["driver", "paths"]


@pytest.fixture(scope="module")
def paths() -> tuple[str, str]:
    """(chromium, chromedriver), or the test skipped (failed under CI=true) saying why."""
    return browser_paths()


@pytest.fixture(scope="module")
def driver(paths: tuple[str, str]) -> Iterator[Any]:
    """A headless Chromium of its own profile, quit at the end of the module."""
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    d = start_driver(*paths, profile)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)
