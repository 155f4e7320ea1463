"""The tournament's log lines on stderr: rich on a terminal, whole plain lines elsewhere."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from rich.console import Console
from rich.logging import RichHandler

from arena.cli.tournament import setup_logging

LONG = (
    "bot pimc: match m00012 (deal 3): the bot raised ValueError in act; see "
    "/a/directory/with/a/long/name/out/default/logs/pimc.log for the traceback"
)


@pytest.fixture
def root_handlers() -> Iterator[None]:
    """The handlers setup_logging adds, removed afterwards (it adds to the root logger)."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    # (another test's run may have left its own: setup_logging adds one only where none is)
    for h in before:
        root.removeHandler(h)
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in before:
        root.addHandler(h)
    root.setLevel(level)


def _ours() -> list[logging.Handler]:
    """The root logger's handlers but pytest's own (its log capture)."""
    return [h for h in logging.getLogger().handlers if not type(h).__module__.startswith("_pytest")]


def test_into_a_file_each_record_is_one_whole_line(root_handlers: None) -> None:
    """Defect: `make tournament 2> run.log` got rich's terminal layout: every record wrapped
    at 80 columns, a path cut across lines (grep missed it), lines padded with spaces."""
    out = io.StringIO()
    setup_logging(0, Console(file=out))
    logging.getLogger("arena.tournament").warning(LONG + " \x1b]0;title\x07")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith(f"WARNING {LONG} \\x1b]0;title\\x07"), lines
    assert [type(h).__name__ for h in _ours()] == ["_PlainLog"]
    setup_logging(0, Console(file=out))  # a second run in the process adds no second handler
    assert len(_ours()) == 1


def test_on_a_terminal_rich_lays_the_log_out(root_handlers: None) -> None:
    out = io.StringIO()
    setup_logging(0, Console(file=out, force_terminal=True, width=200, color_system=None))
    assert [type(h) for h in _ours()] == [RichHandler]
    logging.getLogger("arena.tournament").warning(LONG)
    assert LONG in out.getvalue()
