"""Details of the tournament a mutation audit found unguarded: the schedule's table numbers,
the runner's count of the matches each bot has left, and the config's boundary values."""

from __future__ import annotations

import asyncio
import itertools
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena.tournament import RunOptions, run
from arena.tournament import runner as runner_module
from arena.tournament.config import BotSpec, ConfigError, TournamentConfig, parse_config
from arena.tournament.schedule import build_schedule
from tests.arena.fake_referee import FakeReferee, make_config

# --- the schedule ------------------------------------------------------------------------


def test_tables_are_numbered_from_zero_in_combination_order() -> None:
    """Mutation audit: ``enumerate(tables, 1)`` numbered the tables from 1. A table number
    is, like the schedule ``index`` and ``set_no``, 0-based: table ``t`` is the t-th
    ``players``-combination of the bots (``itertools.combinations`` order), as stored in
    the ``matches.table_no`` column."""
    bots = ["a", "b", "c", "d", "e"]
    tables = list(itertools.combinations(bots, 3))
    s = build_schedule(bots, players=3, matches_per_table=2, seed=4)
    assert sorted({m.table for m in s}) == list(range(len(tables)))  # 0 .. 9
    assert sorted({m.set_no for m in s}) == [0, 1]
    assert [m.index for m in s] == list(range(len(s)))
    for m in s:
        # the seats of table t are a seating (permutation) of the t-th combination
        assert tuple(sorted(m.seats, key=bots.index)) == tables[m.table], m
    # every table is played in every seating once per set
    per_table = Counter((m.table, m.set_no) for m in s)
    assert set(per_table.values()) == {6} and len(per_table) == len(tables) * 2
    # the four-player case: one table, number 0
    four = build_schedule(["a", "b", "c", "d"], players=4, matches_per_table=1, seed=1)
    assert {m.table for m in four} == {0}


# --- the runner: matches left per bot ---------------------------------------------------


class _ExitedBot:
    """Stands for a :class:`_BotProcess` whose process has exited with code 0 (a bot run
    with ``--matches N`` that has played its N); counts the restarts the monitor tries."""

    def __init__(self, name: str) -> None:
        self.spec = BotSpec(name=name, kind="sdk", bot="random")
        self.proc = types.SimpleNamespace(returncode=0)
        self.exited = True
        self.restarts = 0
        self.given_up = False
        self.done = False
        self.starts = 0

    async def start(self) -> None:
        self.starts += 1

    async def stop(self) -> None:
        pass

    def tail(self, lines: int = 8) -> str:
        return ""

    def trim_log(self) -> None:
        pass

    def note(self, text: str) -> None:
        pass


def test_a_failed_match_counts_as_played_for_the_bots_left_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation audit: without ``left.subtract(m.seats)`` after a failed match, the bots of
    that match kept one match "left" after the run's last match: a `--matches N` bot that
    exited after its last match would be restarted for nothing. After a run with a failed
    match, no bot has a match left, and a bot of the failed match that exits is marked done,
    not restarted."""
    captured: list[Counter[str]] = []
    real_monitor = runner_module._monitor

    async def spy(
        procs: Any, stopping: asyncio.Event, max_restarts: int, left: Counter[str]
    ) -> None:
        captured.append(left)
        await real_monitor(procs, stopping, max_restarts, left)

    monkeypatch.setattr(runner_module, "_monitor", spy)
    cfg = make_config(tmp_path)
    out = run(cfg, RunOptions(progress=False), referee_factory=lambda _c: FakeReferee(fail={5}),
              serve=False, launch_bots=False)  # fmt: skip
    assert [i for i, _ in out.failed] == [5] and out.completed == 23
    assert len(captured) == 1
    left = captured[0]
    assert set(left) == set(cfg.bot_names)
    assert dict(left) == dict.fromkeys(cfg.bot_names, 0), left

    # What the count decides: the monitor does not restart a bot with no match left.
    failed_match = next(m for m in build_schedule(
        list(cfg.bot_names), 3, cfg.matches_per_table, cfg.seed) if m.index == 5)  # fmt: skip
    bot = _ExitedBot(failed_match.seats[0])

    async def watch() -> None:
        stopping = asyncio.Event()
        procs: dict[str, Any] = {bot.spec.name: bot}
        monitor = asyncio.create_task(real_monitor(procs, stopping, 3, left))
        for _ in range(200):  # (a guard: the monitor looks at once)
            if bot.done or bot.restarts or bot.given_up:
                break
            await asyncio.sleep(0.02)
        stopping.set()
        await monitor

    asyncio.run(watch())
    assert bot.done and bot.restarts == 0 and bot.starts == 0 and not bot.given_up


# --- config boundaries ------------------------------------------------------------------


def _config(tmp_path: Path, **kw: Any) -> TournamentConfig:
    data: dict[str, Any] = {
        "name": "bounds",
        "db": str(tmp_path / "t.sqlite"),
        "out": str(tmp_path / "out"),
        "bots": {"a": "random", "b": "random", "c": "random"},
    }
    data.update(kw)
    return parse_config(data, source="bounds.toml", base_dir=tmp_path)


def _refused(tmp_path: Path, key: str, value: Any) -> ConfigError:
    with pytest.raises(ConfigError) as ei:
        _config(tmp_path, **{key: value})
    assert ei.value.key == key, ei.value
    assert str(ei.value).startswith(f"bounds.toml: {key}: ")
    return ei.value


def test_matches_per_table_zero_is_refused_one_is_accepted(tmp_path: Path) -> None:
    """Mutation audit: ``1 <= matches_per_table`` weakened to ``0 <=`` let a tournament of
    no match through. 0 is refused naming the key; 1 (the least) is accepted."""
    assert "got 0" in str(_refused(tmp_path, "matches_per_table", 0))
    _refused(tmp_path, "matches_per_table", -1)
    assert _config(tmp_path, matches_per_table=1).matches_per_table == 1


def test_bot_wait_s_zero_is_refused_a_positive_wait_is_accepted(tmp_path: Path) -> None:
    """Mutation audit: ``bot_wait_s <= 0`` weakened to ``< 0`` let a wait of 0 s through
    (no bot could ever connect in time). 0 and 0.0 are refused naming the key; the least
    positive wait is accepted."""
    _refused(tmp_path, "bot_wait_s", 0)
    _refused(tmp_path, "bot_wait_s", 0.0)
    _refused(tmp_path, "bot_wait_s", -1.5)
    assert _config(tmp_path, bot_wait_s=0.001).bot_wait_s == 0.001
    assert _config(tmp_path, bot_wait_s=1).bot_wait_s == 1.0


def test_seed_2_to_the_63_is_refused_one_less_is_accepted(tmp_path: Path) -> None:
    """Mutation audit: ``seed < 2**63`` weakened to ``<= 2**63`` let a seed through that
    does not fit SQLite's signed 64-bit integer. 2**63 is refused naming the key;
    2**63 - 1 and 0 are accepted, -1 refused."""
    assert str(2**63) in str(_refused(tmp_path, "seed", 2**63))
    assert _config(tmp_path, seed=2**63 - 1).seed == 2**63 - 1
    assert _config(tmp_path, seed=0).seed == 0
    _refused(tmp_path, "seed", -1)
