"""Review of round 40's changes (tables fitted to narrow terminals, the no-cap note of
1001, try's cap note): each test names the defect it pins, and failed before its fix."""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table


def _table() -> Table:
    t = Table(title="Results")
    t.add_column("bot")
    t.add_column("score", justify="right")
    t.add_row("alpha", "1001")
    t.add_row("[bold]b[/bold]", "-62390")
    return t


def _printed(renderable: Any, width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=True, color_system="truecolor").print(renderable)
    return buf.getvalue()


def test_a_fitted_table_that_fits_is_drawn_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect (cost): ``fitted`` drew a table to see whether it fit, then drew it again to
    show it: `arena replay` of a long match (a tricks table a deal; 2,000 deals) took half
    as long again as before (15.6 s of CPU against 10.4 s). The lines looked at are now the
    lines shown, the same to the byte (colours too)."""
    from arena.render import fitted

    calls = 0
    draw = Table.__rich_console__

    def counted(self: Table, console: Console, options: Any) -> Iterator[Any]:
        nonlocal calls
        calls += 1
        return draw(self, console, options)

    expected = _printed(_table(), 80)
    monkeypatch.setattr(Table, "__rich_console__", counted)
    shown = _printed(fitted(_table()), 80)
    assert calls == 1
    assert shown == expected
    # Where it does not fit, the same figures as lines (drawn once, to be looked at).
    calls = 0
    narrow = _printed(fitted(_table()), 12)
    assert calls == 1
    plain = re.sub(r"\x1b\[[0-9;]*m", "", narrow)  # (the headings are bold, as the table's)
    assert "score: " in plain and "-62390" in plain


def test_the_no_cap_note_of_a_free_concession_does_not_say_the_scores_fall() -> None:
    """Defect (message): a ruleset whose concession is free (its declarer scores 0) and
    pays nobody else (``concede_pays = "none"``) was noted as one where "the scores fall
    deal after deal": under it they stand still. 1001's (a penalty) still says they fall."""
    from arena.cli.options import no_cap_note
    from engine import Ruleset
    from engine.rules import preset

    free = dataclasses.replace(Ruleset(), name="free-none", barrel=False,
                               concede="free", concede_pays="none")  # fmt: skip
    note = no_cap_note(free, "caps")
    assert note is not None
    assert "fall" not in note
    assert "scores nobody else, and its declarer nothing either" in note
    note_1001 = no_cap_note(preset("1001"), "caps")
    assert note_1001 is not None and "the scores fall deal after deal" in note_1001


def test_trys_cap_note_in_1001_does_not_speak_of_the_barrel() -> None:
    """Defect (message): `arena-bot try --ruleset 1001` whose matches reached its default
    cap asked "does the bot ever bid? a player on the barrel needs contracts to finish":
    1001 has no barrel, and random bots that bid and concede or fail reach the cap there."""
    from sdk import cli

    def said(ruleset: str) -> str:
        out = CliRunner().invoke(cli.main, ["try", "random", "--vs", "random,random", "-n",
                                            "1", "--ruleset", ruleset])  # fmt: skip
        return " ".join(out.output.split())

    in_1001 = said("1001")
    assert "reached the cap of 1000 deals" in in_1001, in_1001
    assert "barrel" not in in_1001
    assert "does the bot make its contracts?" in in_1001
