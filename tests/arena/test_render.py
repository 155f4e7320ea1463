"""``arena replay``'s rendering of a record (arena/render.py): what the trick table shows."""

from __future__ import annotations

import random
import re

from rich.console import Console

from arena.render import render_record
from engine import Game, Phase, Suit


def _text(rec: dict) -> str:
    console = Console(record=True, width=200)
    console.print(render_record(rec))
    return console.export_text()


def test_a_spade_trump_is_shown_as_spades() -> None:
    """Defect: the trick table showed a ♠ trump as "-" (Suit.SPADES is 0, and the table
    wrote ``trump or "-"``)."""
    for seed in range(500):
        g = Game.new("classic", seed, ["ann", "bob", "cid"])
        rng = random.Random(seed)
        declared = False
        while not g.is_over and g.deal_number < 1:
            acts = g.legal_actions()
            spade = [
                a for a in acts if str(a).endswith("♠ declare") and not str(a).startswith("play A")
            ]
            if spade:
                declared = True
            g.apply_trusted(spade[0] if spade else rng.choice(acts))
        if declared and g.deal_results and g.deal_results[0]:
            break
    assert declared
    text = _text(g.record())
    assert "♠ marriage" in text
    # the trump column of the tricks after the declaration
    assert re.search(r"│ ♠\s+│", text), text


def test_a_trick_under_way_when_the_record_ends_is_shown() -> None:
    """Defect: an interrupted record's last, unfinished trick was left out."""
    g = Game.new("classic", 7, ["ann", "bob", "cid"])
    while g.phase is not Phase.PLAYING:
        g.apply_trusted(g.legal_actions()[0])
    g.apply_trusted(g.legal_actions()[0])  # the lead, and nothing more
    lead = g.trick[0][1]
    text = _text(g.record())
    assert "(unfinished)" in text and str(lead) in text
    assert Suit.SPADES == 0  # why "trump or '-'" was wrong


def test_player_names_are_not_rich_markup() -> None:
    """Defect: a player named "[/]" ended ``arena replay`` with a MarkupError traceback,
    and "[red]rich[/red]" was shown as "rich"."""
    g = Game.new("classic", 3, ["[/]", "[red]rich[/red]", "cid"])
    while g.deal_number < 1:
        g.apply_trusted(g.legal_actions()[0])
    text = _text(g.record())
    assert "[/]" in text and "[red]rich[/red]" in text
