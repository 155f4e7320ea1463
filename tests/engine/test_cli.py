"""The engine's CLI commands: arena rules, arena replay, arena bench (click's CliRunner)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from engine import Game


def _record(tmp_path: Path, finish: bool = True) -> Path:
    g = Game.new("1001", 3, ["ann", "bob", "cid"])
    rng = random.Random(0)
    while not g.is_over and (finish or g.deal_number < 2):
        legal = g.legal_actions()
        g.apply(legal[-1] if type(legal[-1]).__name__ == "Pass" else rng.choice(legal))
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(g.record(), ensure_ascii=False), encoding="utf-8")
    return path


def test_rules_preset_and_json() -> None:
    r = CliRunner().invoke(main, ["rules", "classic"])
    assert r.exit_code == 0 and "barrel_at = 880" in r.output
    r2 = CliRunner().invoke(main, ["rules", "1001-4p", "--json"])
    assert r2.exit_code == 0 and json.loads(r2.output)["players"] == 4


def test_rules_bad_key_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "x.toml"
    f.write_text('preset = "classic"\nbarrel_mod = "one"\n')
    r = CliRunner().invoke(main, ["rules", str(f)])
    assert r.exit_code == 2 and "barrel_mod" in r.output
    r2 = CliRunner().invoke(main, ["rules", "nope"])
    assert r2.exit_code == 2 and "preset" in r2.output


def test_replay_check_ok_and_refused(tmp_path: Path) -> None:
    path = _record(tmp_path)
    r = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert r.exit_code == 0, r.output
    assert "deal 1:" in r.output and "final" in r.output and "OK" in r.output
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["deals"][1]["actions"][0]["action"] = "contract 100"
    path.write_text(json.dumps(rec), encoding="utf-8")
    r2 = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert (
        r2.exit_code == 1
        and "Deal 2 (record deal 1), action 0" in r2.output
        and "rule broken" in r2.output
    )


def test_replay_pretty(tmp_path: Path) -> None:
    path = _record(tmp_path, finish=False)
    r = CliRunner().invoke(main, ["replay", str(path)])
    assert r.exit_code == 0, r.output
    assert "Deal 1 —" in r.output and "Deal 0" not in r.output  # numbered from 1 for people
    assert "Bidding" in r.output and "♠" in r.output + "♥♦♣"
    r2 = CliRunner().invoke(main, ["replay", str(tmp_path / "missing.json")])
    assert r2.exit_code == 2


def test_bench_engine_json() -> None:
    r = CliRunner().invoke(main, ["bench", "engine", "--json", "--seconds", "0.05"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert set(data["engine"]) == {"classic", "1001", "1001-4p"}
    assert data["engine"]["classic"]["deals_per_s"] > 0
    r2 = CliRunner().invoke(main, ["bench", "--only", "engine", "--seconds", "0.05"])
    assert r2.exit_code == 0 and "deals_per_s" in r2.output
    r3 = CliRunner().invoke(main, ["bench", "nosuch"])
    assert r3.exit_code == 2
