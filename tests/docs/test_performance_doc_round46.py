"""docs/performance.md's count of the round trips a deal needs: its script, pasted as a
reader would, prints the figures the text quotes (the engine is deterministic per seed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "performance.md"


def _script() -> str:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    (count,) = [b for b in blocks if "answerable ahead" in b]
    return count


def _run(tmp_path: Path, *args: str) -> str:
    script = tmp_path / "count.py"
    script.write_text(_script(), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_classic_count_is_what_the_text_quotes(tmp_path: Path) -> None:
    line = _run(tmp_path, "classic", "3")
    assert line == "23.85 actions, 6.97 forced, 16.87 round trips, 3.35 answerable ahead per deal"
    text = DOC.read_text(encoding="utf-8")
    assert "23.85 actions, 6.97 of them forced" in text
    assert "16.87 round trips" in text and "3.35 follow the same" in text
    assert "leaving 13.52" in text  # 16.87 - 3.35


def test_the_1001_counts_are_what_the_text_quotes(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    for players, (trips, ahead) in {"3": ("18.54", "3.44"), "4": ("18.49", "3.43")}.items():
        line = _run(tmp_path, "1001", players)
        assert f"{trips} round trips, {ahead} answerable ahead" in line
        left = f"{float(trips) - float(ahead):.2f}"
        assert f"{trips} → {left}" in text
