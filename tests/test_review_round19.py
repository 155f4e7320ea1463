"""Defects found reviewing round 19's refactors and fixes."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from sdk.cli import main as arena_bot


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["", ""], "unexpected extra arguments: '' ''"),
        (["", "x"], "unexpected extra arguments: '' x"),
        ([" "], "unexpected extra argument: ' '"),
        (["", "--json"], "unexpected extra argument: '' (an empty one)"),
        (["x", "y"], "unexpected extra arguments (x y)"),
    ],
)
@pytest.mark.parametrize(
    ("prog", "args"), [(arena, ["rules", "classic"]), (arena_bot, ["try", "random"])]
)
def test_empty_or_blank_extra_arguments_are_quoted(
    prog: click.Group, args: list[str], extra: list[str], said: str
) -> None:
    """0cf9cd4 named one empty extra argument, but two of them still read "arguments ( )",
    a blank one "argument ( )" and an empty one beside another "( x)": the parentheses and
    spaces of click's message read as its syntax."""
    if prog is arena_bot and "--json" in extra:
        extra = [""]  # (arena-bot try has no --json)
    r = CliRunner().invoke(prog, [*args, *extra])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert said in r.output, r.output
