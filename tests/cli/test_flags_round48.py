"""Flags of ``arena tournament`` that contradict each other are refused, not resolved by
their order."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main


@pytest.mark.parametrize("order", [["--resume", "--fresh"], ["--fresh", "--resume"]])
def test_resume_and_fresh_together_are_refused_before_anything_is_touched(
    tmp_path: Path, order: list[str]
) -> None:
    db = tmp_path / "t.sqlite"
    result = CliRunner().invoke(main, ["tournament", *order, "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert "--resume and --fresh contradict each other" in result.output
    assert not db.exists()  # nothing opened, so nothing stored could be forgotten
