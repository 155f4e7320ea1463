"""Round 48: the three users' journeys (a bot author on another machine, an organiser, a
spectator) read from README.md and docs/*.md alone, on a fresh clone and a pip-installed
venv of Python 3.13. What did not hold is pinned here.
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from arena.cli.tournament import _announce
from arena.tournament.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

CUP = """
name = "cup"
deals = "independent"
[bots]
a = "random"
b = "heuristic"
friend = { remote = true, token_env = "FRIEND_TOKEN" }
"""


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _announced(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cup.toml"
    path.write_text(text, encoding="utf-8")
    out = StringIO()
    _announce(load_config(path), Console(file=out, width=400))
    return " ".join(out.getvalue().split())


def test_remote_bots_on_port_0_are_told_a_resumed_run_listens_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An organiser's journey: a config with a remote bot and no `port` (0, the default),
    stopped with Ctrl-C and run again to resume, as docs/tournament.md has it ("keeps
    reconnecting for --retry-for seconds, so running the same command again picks it up").
    The resumed run listened on another free port: the remote bot kept reconnecting to the
    old one ("connection refused") and the run waited bot_wait_s for it, then stopped. The
    start of the run now says so, and the doc says it holds on a fixed port only."""
    monkeypatch.setenv("FRIEND_TOKEN", "0123456789abcdef")
    said = _announced(tmp_path, CUP)
    assert "note: remote bots (friend) and port 0 (the default)" in said
    assert "a resumed one too" in said and "port = 50051" in said
    # a fixed port keeps it; local bots only are told their port at every run
    assert "port 0" not in _announced(tmp_path, "port = 50051\n" + CUP)
    local = CUP.replace(
        'friend = { remote = true, token_env = "FRIEND_TOKEN" }\n', 'c = "random"\n'
    )
    assert "note" not in _announced(tmp_path, local)
    doc = _joined(DOCS / "tournament.md")
    assert "so running the same command again picks it up (on a fixed `port`" in doc
    assert "remote bots must be given it each time, a resumed run's too" in doc
