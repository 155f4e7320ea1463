"""Round 55 (limits): every JSON the project prints or serves is strict JSON.

``json.dumps`` writes an infinite float as ``Infinity`` (and NaN as ``NaN``): no strict
parser (``jq``, a browser's ``JSON.parse``) reads it. The strength and forks benches wrote
``"ci95": [-Infinity, Infinity]`` for one seed, and ``arena web`` served ``Infinity`` for
a match duration changed by hand. Each output is parsed here with a ``parse_constant``
that raises, as a strict parser does.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena import strict_json
from arena.bench import forks as forks_mod
from arena.bench import strength as strength_mod
from arena.cli import main as arena_main
from arena.web.demo import make_demo_db
from tests.support.harness import web_server


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")


def strict(text: str) -> Any:
    """``text`` parsed as a strict parser does: ``NaN``, ``Infinity`` refused."""
    return json.loads(text, parse_constant=_refuse)


def test_strict_parse_refuses_what_python_writes_for_infinity() -> None:
    """The check itself: what ``json.dumps`` writes by default is refused, what
    :func:`strict_json.dumps` writes is read, the number as null."""
    value = {"ci95": [float("-inf"), float("inf")], "x": [1.5, float("nan")], "t": (2.0,)}
    with pytest.raises(ValueError, match="Infinity is no JSON"):
        strict(json.dumps(value))
    assert strict(strict_json.dumps(value)) == {"ci95": [None, None], "x": [1.5, None], "t": [2.0]}
    assert strict_json.dumps({"a": 1.25}, indent=1) == json.dumps({"a": 1.25}, indent=1)


def test_strength_with_one_seed_prints_json_and_says_why_no_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--bots", "random,heuristic", "--matches", "1", "--max-deals", "1", "--workers", "1"]
    assert strength_mod.main([*argv, "--json"]) == 0
    report = strict(capsys.readouterr().out)
    (pair,) = report["pairs"]
    assert pair["ci95"] is None and pair["games"] == 3
    assert strength_mod.main(argv) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert "none: 1 seed" in row and "inf" not in row
    # two seeds: an interval, as before
    assert strength_mod.main([*argv[:3], "2", *argv[4:], "--json"]) == 0
    lo, hi = strict(capsys.readouterr().out)["pairs"][0]["ci95"]
    assert lo < hi


def _scripted_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """fork_seed's rows scripted (its play-outs, pimc's searches, are tested elsewhere):
    what is under test is the figures' JSON."""

    def scripted(rules: Any, seed: int, spec: str, budget: Any = None) -> list[dict[str, Any]]:
        return [
            {"seed": seed, "seat": 0, "old": -75.0, "new": 5.0, "decision": "bidding at 45"},
            {"seed": seed, "seat": 1, "old": 10.0, "new": 10.0},
            {"seed": seed, "seat": 2, "old": 0.0, "new": 0.0},
        ]

    monkeypatch.setattr(forks_mod, "fork_seed", scripted)


def test_forks_with_one_seed_prints_json_and_says_why_no_interval(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _scripted_forks(monkeypatch)
    argv = ["--variant", "bid-confidence=0.9", "--matches", "1", "--workers", "1"]
    assert forks_mod.main([*argv, "--json"]) == 0
    report = strict(capsys.readouterr().out)
    assert report["ci95"] is None and report["changed"] == 1
    assert report["gain_per_deal"] == round(80 / 3, 2)
    assert forks_mod.main(argv) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert "+26.67 (no interval: one seed) per deal" in line and "inf" not in line
    assert forks_mod.main([*argv[:3], "2", *argv[4:], "--json"]) == 0
    assert strict(capsys.readouterr().out)["ci95"] == [26.67, 26.67]  # (equal seeds)


@pytest.fixture()
def edited_db(tmp_path: Path) -> Path:
    """A demo tournament whose matches' durations were changed by hand to 1e999 (SQLite
    keeps an infinite REAL)."""
    path = tmp_path / "t.sqlite"
    make_demo_db(path, matches=2, max_deals=2)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE matches SET duration_s = 9e999")
    return path


def test_web_api_serves_strict_json_for_an_infinite_stored_number(edited_db: Path) -> None:
    with web_server(edited_db) as server:

        def get(path: str) -> Any:
            with urllib.request.urlopen(server.url + path, timeout=10) as r:
                return strict(r.read().decode())

        listed = get("api/matches")["matches"]
        assert [m["duration_s"] for m in listed] == [None, None]
        match_id = listed[0]["match_id"]
        assert get(f"api/matches/{match_id}")["stored"]["duration_s"] is None
        assert get("api/bots/bold")["matches"][0]["duration_s"] is None
        assert get("api/leaderboard")["rows"]
        assert get(f"api/matches/{match_id}/record")["players"]
        assert get(f"api/matches/{match_id}/deals/0")["steps"]


def test_leaderboard_json_is_strict(edited_db: Path) -> None:
    result = CliRunner().invoke(
        arena_main, ["leaderboard", "--db", str(edited_db), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert {r["bot"] for r in strict(result.output)["rows"]} == {"bold", "careful", "randy"}


def test_arena_bench_json_is_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine section as run (its figures finite), and a section whose figure is not
    (a ratio over a zero, say): null, not ``Infinity``."""
    result = CliRunner().invoke(arena_main, ["bench", "engine", "--json", "--seconds", "0.05"])
    assert result.exit_code == 0, result.output
    assert strict(result.output)["engine"]["classic"]["deals_per_s"] > 0

    import arena.cli.bench as bench_cli

    def sections(names: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        return {"engine": {"ratio": float("inf"), "spread": float("nan"), "n": 3}}

    monkeypatch.setattr(bench_cli, "run_sections", sections)
    result = CliRunner().invoke(arena_main, ["bench", "engine", "--json"])
    assert result.exit_code == 0, result.output
    assert strict(result.output) == {"engine": {"ratio": None, "spread": None, "n": 3}}
