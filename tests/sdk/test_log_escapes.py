"""``arena-bot``'s log lines show an arena's text with its control characters written out.

Its lines name what the arena sent (its server version, match ids, why it rejected a
decision): an arena that put escape sequences there had them obeyed by the terminal of
whoever runs the bot (a window title, a cleared screen, the clipboard), the human seat's
too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
EVIL = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"

_PROGRAM = f"""
import logging, sys
from sdk.cli import _setup_logging
_setup_logging("info")
log = logging.getLogger("sdk.client")
log.info("connected to x as 'b' (server %s)", {EVIL!r})
log.warning("match %s: decision rejected (illegal, strike 1 of 3): %s", {EVIL!r}, "why\\tnot")
try:
    raise ValueError("boom")
except ValueError:
    log.exception("a bot raised")
"""


def test_arena_text_in_the_log_is_written_out_not_obeyed() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    err = out.stderr
    for c in "\x1b\x07\x9b\u202e":
        assert c not in err
    assert "(server \\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202e)" in err
    assert "why\tnot" in err  # tabs and line breaks (a traceback's) are kept
    assert "Traceback (most recent call last):\n" in err
    assert "ValueError: boom" in err
