"""House rules end to end: what the product around the engine shows under option values
that random classic play never reaches (round 19 of the option audit).

Each test crafts the situation with the engine's public API (a deal of chosen cards, a
start position), stores or writes the record as the arena does, and reads it back through
the command or page a user runs: ``arena replay``, ``arena web``. The slow matrix plays
``arena tournament`` with the bundled bots under one ruleset per group of interacting
options and checks every match, record and leaderboard.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from engine import Game, load_ruleset, parse_action

ROOT = Path(__file__).resolve().parents[2]


def _arena(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` as a user runs it (this checkout's code), its output as text."""
    return subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "100"},
    )  # fmt: skip


def _play(game: Game, script: list[tuple[int, str]]) -> None:
    for seat, text in script:
        game.apply(parse_action(text), seat=seat)


def _play_out(game: Game) -> None:
    """The rest of the deal, each seat playing its first legal action."""
    number = game.deal_number
    while game.deal_number == number and not game.is_over:
        game.apply(game.legal_actions()[0], seat=game.to_act)


# ----------------------------------------------------------------------------- the barrel


def test_replay_says_one_deal_on_the_barrel_in_the_singular(tmp_path: Path) -> None:
    """Defect: with ``barrel_deals = 1`` the sitter's penalty read "seat 0 sat 1 deals on
    the barrel: -120" (the engine's event, which ``arena replay``, the web page and the
    human seat all show)."""
    rules = dataclasses.replace(
        load_ruleset("classic"), name="one-deal-barrel", barrel_deals=1, max_deals=1
    )
    # dealer 0: seat 1 is first hand, committed to 100; seat 0, on the barrel, defends.
    game = Game.new(rules, 7, ["ann", "bob", "cid"], scores=(880, 0, 0), barrel=(1, 0, 0),
                    dealer=0)  # fmt: skip
    _play(game, [(2, "pass"), (0, "pass")])
    _play_out(game)
    assert game.deal_results[0].events == ("seat 0 sat 1 deal on the barrel: -120",)
    path = tmp_path / "one-deal.json"
    path.write_text(json.dumps(game.record()), encoding="utf-8")
    out = _arena("replay", str(path))
    assert out.returncode == 0, out.stderr
    assert "ann sat 1 deal on the barrel: -120" in out.stdout, out.stdout
    # three deals still say so in the plural
    three = dataclasses.replace(rules, barrel_deals=3)
    game = Game.new(three, 7, ["ann", "bob", "cid"], scores=(880, 0, 0), barrel=(1, 0, 0),
                    dealer=0)  # fmt: skip
    _play(game, [(2, "pass"), (0, "pass")])
    _play_out(game)
    assert game.deal_results[0].events == ("seat 0 sat 3 deals on the barrel: -120",)
