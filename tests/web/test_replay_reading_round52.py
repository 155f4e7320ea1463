"""Round 52: `arena replay` and the replay page read one record alike.

- A record made by hand without ``result`` (docs/record-format.md allows it) whose actions
  end the match: `arena replay` showed the rules' standings and how the match ended; the
  page's summary had ``result: null`` (no places), ``ended: null``, and ``deals_played``
  counted only the deals that carried their own figures (0 of 3 here).
- A capped match's header said its rules without its cap (`Match: classic, seed 2, ...`):
  a match stopped before the cap, or one the cap ended, did not say there was one. Both
  now name it, as the leaderboard names a tournament's (`classic, 3 deals max`); a
  time-limited match's record names the deal its clock stopped it at, so none is said.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli import main as arena_main
from arena.web import MatchReplay
from arena.web.demo import demo_record


def _capped() -> dict[str, Any]:
    record = demo_record(2, ("ann", "bob", "cid"), max_deals=3)
    assert record["result"]["reason"] == "max_deals" and len(record["deals"]) == 3
    return record


def _without_figures(record: dict[str, Any]) -> dict[str, Any]:
    bare = copy.deepcopy(record)
    del bare["result"]
    for deal in bare["deals"]:
        for key in ("deltas", "scores", "outcome"):
            deal.pop(key, None)
    return bare


def _replay_text(tmp_path: Path, record: dict[str, Any]) -> str:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record))
    shown = CliRunner().invoke(arena_main, ["replay", str(path)], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    return shown.output


def _standings(text: str) -> dict[str, tuple[int, int]]:
    """``{player: (place, score)}`` from `arena replay`'s final standings table."""
    rows = re.findall(r"│\s+(\d+) │ (\w+) \(\d\)\s+│\s+(-?\d+) │", text)
    return {name: (int(place), int(score)) for place, name, score in rows}


def test_a_record_without_its_result_reads_the_same_in_both(tmp_path: Path) -> None:
    whole = _capped()
    bare = _without_figures(whole)
    text = _replay_text(tmp_path, bare)
    summary = MatchReplay("m", bare).summary
    result = summary["result"]
    assert result is not None, summary
    players = summary["players"]
    shown = {p: (result["places"][s], result["scores"][s]) for s, p in enumerate(players)}
    assert shown == _standings(text) and len(shown) == 3
    # the referee's own record says the same
    assert result["places"] == whole["result"]["places"]
    assert result["scores"] == whole["result"]["scores"]
    assert summary["deals_played"] == 3 == MatchReplay("m", whole).summary["deals_played"]
    assert summary["ended"] is not None
    assert f"ended: {summary['ended']}" in text


def test_the_deal_cap_is_in_both_headers(tmp_path: Path) -> None:
    record = _capped()
    text = _replay_text(tmp_path, record)
    assert text.startswith("Match: classic, 3 deals max, seed 2, players ann, bob, cid\n"), text
    assert MatchReplay("m", record).summary["ruleset_description"] == "classic, 3 deals max"


def test_a_time_limited_match_names_no_cap(tmp_path: Path) -> None:
    record = _capped()
    record["time_limit_s"] = 30  # (its max_deals is the deal the clock stopped it at)
    text = _replay_text(tmp_path, record)
    assert text.startswith("Match: classic, seed 2, "), text
    assert "ended by its time limit (match_timeout_s 30 s) after deal 3" in text
    assert MatchReplay("m", record).summary["ruleset_description"] == "classic"
