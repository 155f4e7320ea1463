"""Round 54: ``arena leaderboard --config X --out FILE`` no longer writes over a bot's log.

Limit left by round 53 (which refused an existing .toml, .py or SQLite file): ``--out
out/demo/logs/randy.log`` (completed by the shell) replaced the log of a bot of the
config's run, the one file that says why it crashed, with a table, exit 0. An existing
file the config's run names as a bot's log (``<out>/logs/<bot>.log``) is refused, naming
the bot, exit 2, and left as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.tournament.config import bot_logs
from arena.web.demo import make_demo_db

LOG = "--- 12:00:00 starting randy\nTraceback: why it crashed\n"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """In ``tmp_path``: runs/demo.sqlite (tournament demo) and demo.toml, whose run writes
    its logs in out/demo/logs/ (randy's is there); returns the config."""
    monkeypatch.chdir(tmp_path)
    make_demo_db(tmp_path / "runs" / "demo.sqlite", matches=2, max_deals=1)
    config = tmp_path / "demo.toml"
    config.write_text(
        'name = "demo"\nout = "out/demo"\n'
        '[bots]\nbold = "heuristic"\ncareful = "counting"\nrandy = "random"\n',
        encoding="utf-8",
    )
    (tmp_path / "out" / "demo" / "logs").mkdir(parents=True)
    (tmp_path / "out" / "demo" / "logs" / "randy.log").write_text(LOG, encoding="utf-8")
    return config


def _board(*args: str) -> Result:
    return CliRunner().invoke(main, ["leaderboard", *args])


@pytest.mark.parametrize("fmt", [[], ["--format", "json"]])
def test_out_refuses_a_bots_log_of_the_configs_run(setup: Path, fmt: list[str]) -> None:
    log = Path("out/demo/logs/randy.log")
    bad = _board("--config", str(setup), "--out", str(log), *fmt)
    assert bad.exit_code == 2, bad.output
    said = " ".join(bad.stderr.split())
    assert f"--out {log} would write over bot randy's log ({log.resolve()})" in said, said
    assert log.read_text(encoding="utf-8") == LOG


def test_a_link_to_a_bots_log_is_refused_too(setup: Path) -> None:
    os.symlink("out/demo/logs/randy.log", "latest.txt")
    bad = _board("--config", str(setup), "--out", "latest.txt")
    assert bad.exit_code == 2 and "would write over bot randy's log" in bad.stderr, bad.output
    assert Path("out/demo/logs/randy.log").read_text(encoding="utf-8") == LOG


def test_other_files_are_written_as_before(setup: Path) -> None:
    # a log no run wrote yet, and a file beside the logs: no bot's log to keep
    for out in ("out/demo/logs/bold.log", "out/demo/board.txt"):
        done = _board("--config", str(setup), "--out", out)
        assert done.exit_code == 0, done.output
        assert "careful" in Path(out).read_text(encoding="utf-8")
    # without --config, no run's logs are known (the file is no .toml, .py or database)
    done = _board("--db", "runs/demo.sqlite", "--out", "out/demo/logs/randy.log")
    assert done.exit_code == 0, done.output


def test_bot_logs_reads_the_bots_of_either_form_without_validating(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        f'name = "c"\nout = "{tmp_path}/o"\nbots = ["random", "gone/mine.py:Mine", 7]\n',
        encoding="utf-8",
    )
    assert bot_logs(config) == {
        tmp_path / "o" / "logs" / "random.log": "random",
        tmp_path / "o" / "logs" / "Mine.log": "Mine",
    }
    # the default out is out/<name>, from the current directory, as the runner's
    config.write_text('name = "c"\n[bots]\n"bad name" = "random"\nok = "x.py:X"\n', "utf-8")
    assert bot_logs(config) == {Path("out/c/logs/ok.log").resolve(): "ok"}
