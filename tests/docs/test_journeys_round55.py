"""Round 55: the organiser's journey through docs/tournament.md's configs and command lines,
run as documented. What did not hold is pinned here (the bad input of the same journey:
tests/cli/test_bad_input_round55.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _arena(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from arena.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


def test_a_ruleset_without_a_preset_builds_on_classic_as_documented(tmp_path: Path) -> None:
    """Doc defect: docs/rules-engine.md said "A TOML file names a preset", and the
    tournament config's ``ruleset`` row named inline tables with one only; a file (or
    table) without ``preset`` was taken, on ``classic``, which no doc said. Both docs say
    it now, and ``arena rules`` shows it."""
    assert "without `preset`, `classic` is its base" in _joined(DOCS / "rules-engine.md")
    assert "(a file or table without `preset` builds on `classic`)" in _joined(
        DOCS / "tournament.md"
    )
    (tmp_path / "np.toml").write_text("must_beat = true\n", encoding="utf-8")
    r = _arena(tmp_path, "rules", "np.toml")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "# np (classic + must_beat on)", r.stdout


def _documented_options(section: str) -> set[str]:
    """The options of the table under ``### `arena <section>` `` in docs/tournament.md."""
    text = (DOCS / "tournament.md").read_text(encoding="utf-8")
    body = text.split(f"### `arena {section}`", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("| `-")]
    return {o for row in rows for o in re.findall(r"`(--?[a-z][a-z-]*)", row.split(" | ")[0])}


@pytest.mark.parametrize("command", ["tournament", "leaderboard"])
def test_every_option_the_docs_table_lists_is_the_commands_and_back(command: str) -> None:
    """The options docs/tournament.md's table lists for ``arena tournament`` and ``arena
    leaderboard`` are those the command takes, no more, no fewer. (Doc defect: the
    tournament's row said ``-v``, ``-vv`` only, of ``-v, --verbose``.)"""
    import click

    from arena.cli import main

    cmd = main.get_command(click.Context(main), command)
    assert cmd is not None
    taken = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} - {"--help"}
    documented = _documented_options(command)
    if command == "tournament":
        documented.discard("-vv")  # (-v given twice, as the row says)
    assert documented == taken


def test_the_documented_first_line_and_a_finished_run_again(tmp_path: Path) -> None:
    """The journey of docs/tournament.md: its example's config (`cup`, three bots, a house
    ruleset of classic with must_beat, 20 deals, concurrency 2, seed 1) starts with the
    very line the docs quote, stores its 6 matches, and the same command again plays
    nothing, saying so (exit 0 both)."""
    (tmp_path / "house.toml").write_text('preset = "classic"\nmust_beat = true\n')
    (tmp_path / "cup.toml").write_text(
        'name = "cup"\nruleset = "house.toml"\nmax_deals = 20\nconcurrency = 2\nseed = 1\n'
        'db = "runs/cup.sqlite"\nout = "out/cup"\n'
        '[bots]\na = "random"\nb = "random"\nc = "random"\n',
        encoding="utf-8",
    )
    documented = ("cup: 3 bots (a, b, c), ruleset house (classic + must_beat on), 6 matches "
                  "(max 20 deals each), concurrency 2, seed 1")  # fmt: skip
    assert f"`{documented}`" in _joined(DOCS / "tournament.md")
    first = _arena(tmp_path, "tournament", "--config", "cup.toml", "--no-progress")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == documented, first.stderr
    assert re.search(r"6/6 stored in \S*runs/cup\.sqlite", first.stdout + first.stderr)
    again = _arena(tmp_path, "tournament", "--config", "cup.toml", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "every match stored (6 of 6): this run plays nothing" in " ".join(again.stderr.split())
