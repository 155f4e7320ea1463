"""Shared by the fuzz suites: a session-wide tally of the inputs tried, printed at the end.

The tally is printed in pytest's terminal summary (also under ``-q``), so ``make test`` and
``make fuzz`` both say how many inputs each fuzzer tried::

    fuzz: engine actions tried 12345 (refused 6789), servicer messages tried ...
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

TALLY: Counter[str] = Counter()


@pytest.fixture(scope="session")
def tally() -> Counter[str]:
    """The session's input counter (session-scoped: hypothesis tests may use it)."""
    return TALLY


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TALLY:
        return
    tr = terminalreporter
    tr.section("fuzz: inputs tried")
    for key in sorted(TALLY):
        tr.write_line(f"{key}: {TALLY[key]}")
