"""Round 38: what the docs show a reader (a session's messages, an example bot's play, the
numbers they give) against what the code sends, plays and uses today.

Found and fixed: writing-a-bot.md's ``Careful`` example, the one that shows how to read
``self.deadline``, ended in ``...`` and returned ``None``: pasted and tried as the guide
says (``arena-bot try mybot.py:Careful --vs random -n 3``), every one of its cards was a
``malformed`` incident (11,934 in three matches) and ``try`` exited 1. It returns a legal
card now, searching until its budget is spent.

Pinned, as run and found right: protocol.md's example session (the Welcome, the
MatchStarted at ``seq`` 0, request ids from "1", the default limit and bank, an illegal
give refused with the words and the strike counts it quotes, events numbered from 1 with
no gap, a deal's end followed by ``deal_started: 1`` in a message with no kind, the
places of ``MatchEnded``), every message and field protocol.md names against the proto,
the numbers protocol.md and referee.md give against the code's constants, the names the
guide takes from ``sdk`` against ``sdk.__all__`` and their signatures, the rehearsal of
``arena serve --port 0`` with ``port N`` on its own line, and every route and key of
web.md's JSON API on a small stored tournament.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from sdk import Bot
from tests.docs.test_docs_round35 import DOCS, ROOT, _joined, _text

# --- the fix: the guide's Careful bot plays ----------------------------------------------


def _careful_block() -> str:
    guide = _text("writing-a-bot.md")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    return next(b for b in blocks if "class Careful(Bot):" in b)


def test_the_guides_careful_bot_plays_its_matches_without_an_incident(tmp_path: Path) -> None:
    """Defect: the ``Careful`` example (how to read ``self.deadline``) ended in ``...`` and
    returned None: tried as the guide says, every card it was asked for was a malformed
    answer, and ``arena-bot try`` exited 1 naming thousands of incidents."""
    (tmp_path / "careful.py").write_text(_careful_block(), encoding="utf-8")
    code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sdk.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), "try", "careful.py:Careful", "--vs", "random",
         "-n", "3", "--max-deals", "4"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if "│ Careful" in line)
    assert row.split("│")[-2].strip() == "0", row  # the incidents column
