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


def test_one_deal_left_on_the_barrel_is_said_in_the_singular() -> None:
    """c604680 made the barrel event say "sat 1 deal"; the human seat's table still read
    "bob (1 deals left)" on a sitter's last deal (every barrel reaches it), and the
    engine's refusal of such a start "(1 deals left)"."""
    from engine import Game
    from engine.rules import preset
    from engine.view import observe
    from sdk.human import render_view

    r = preset("classic")
    assert r.barrel
    names = ["ann", "bob", "cid"]
    g = Game.new(r, seed=1, players=names, scores=[0, r.barrel_at, 0], barrel=[0, 1, 0])
    assert "barrel: bob (1 deal left)" in render_view(observe(g, 0))
    g = Game.new(r, seed=1, players=names, scores=[0, r.barrel_at, 0], barrel=[0, 2, 0])
    assert "barrel: bob (2 deals left)" in render_view(observe(g, 0))
    with pytest.raises(ValueError, match=r"seat 1 is on the barrel \(1 deal left\) at 0"):
        Game.new(r, seed=1, players=names, scores=[0, 0, 0], barrel=[0, 1, 0])
