"""The least values of `arena serve --matches`, `arena-bot run --matches` and the port of
`arena-bot run --arena`: the value below is refused as a usage error naming the option
(exit code 2), the least one accepted. In-process (click's CliRunner); what would serve
or connect is replaced by a stub that records its call, so nothing listens or connects
even if a bound gave way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main as arena
from sdk.cli import main as arena_bot


def _refused(r: Result, option: str) -> None:
    text = " ".join(r.output.split())
    assert r.exit_code == 2, text
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in text
    assert f"'{option}'" in text, text


# --- arena serve --matches ---------------------------------------------------------------


@pytest.fixture
def serve_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``arena serve`` with its server replaced: each call's arguments, nothing served."""
    import arena.cli.serve as serve_module

    calls: list[dict[str, Any]] = []

    async def no_server(*args: Any) -> None:
        calls.append({"max_matches": args[6], "port": args[4]})

    monkeypatch.setattr(serve_module, "_serve", no_server)
    return calls


def _serve(tmp_path: Path, *args: str) -> Result:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[bots]\na = "t1"\nb = "t2"\nc = "t3"\n', encoding="utf-8")
    records = str(tmp_path / "records")
    args = ("--tokens", str(tokens), "--port", "0", "--record-dir", records, *args)
    return CliRunner().invoke(arena, ["serve", *args])


def test_serve_matches_zero_is_refused_one_accepted(
    tmp_path: Path, serve_calls: list[dict[str, Any]]
) -> None:
    """Mutation audit: ``--matches`` IntRange(min=1) weakened to min=0 let `arena serve
    --matches 0` start a referee that could play nothing. 0 is a usage error naming
    --matches, and nothing is served; 1 is accepted."""
    _refused(_serve(tmp_path, "--matches", "0"), "--matches")
    _refused(_serve(tmp_path, "--matches", "-1"), "--matches")
    assert serve_calls == []
    r = _serve(tmp_path, "--matches", "1")
    assert r.exit_code == 0, r.output
    assert serve_calls == [{"max_matches": 1, "port": 0}]


# --- arena-bot run --matches / --arena ---------------------------------------------------


@pytest.fixture
def run_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``arena-bot run`` with its client replaced: each call's arguments, no connection."""
    import sdk.cli
    import sdk.client

    calls: list[dict[str, Any]] = []

    def no_connection(bot: Any, arena: str = "", token: str = "", **kw: Any) -> Any:
        calls.append({"arena": arena, "matches": kw.get("matches")})
        return sdk.client.RunSummary(reason="stub")

    monkeypatch.setattr(sdk.client, "run", no_connection)
    monkeypatch.setattr(sdk.cli, "_setup_logging", lambda level: None)
    monkeypatch.setattr(sdk.cli, "_die_with_launcher", lambda: None)
    for var in ("ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_PARENT_PID"):
        monkeypatch.delenv(var, raising=False)
    return calls


def _run(*args: str) -> Result:
    return CliRunner().invoke(arena_bot, ["run", "random", "--token", "t", *args])


@pytest.mark.parametrize("value", ["0", "-3"])
def test_bot_run_matches_below_one_is_refused(run_calls: list[dict[str, Any]], value: str) -> None:
    """Mutation audit: ``arena-bot run --matches`` typed a plain int let 0 and -3 through
    (a bot that would connect and never stop after N). Each is a usage error naming
    --matches, and nothing connects."""
    _refused(_run("--arena", "127.0.0.1:50051", "--matches", value), "--matches")
    assert run_calls == []


def test_bot_run_matches_one_is_accepted(run_calls: list[dict[str, Any]]) -> None:
    r = _run("--arena", "127.0.0.1:50051", "--matches", "1")
    assert r.exit_code == 0, r.output
    assert run_calls == [{"arena": "127.0.0.1:50051", "matches": 1}]


def test_bot_run_arena_port_zero_is_refused_port_one_accepted(
    run_calls: list[dict[str, Any]],
) -> None:
    """Mutation audit: the port check ``1 <= int(port)`` weakened to ``0 <=`` let
    ``--arena host:0`` through, an address no arena listens on (retried for --retry-for
    seconds). Port 0 is a usage error naming --arena, and nothing connects; port 1 and
    65535 are accepted."""
    for address in ("localhost:0", "127.0.0.1:0", "[::1]:0", "localhost:00"):
        _refused(_run("--arena", address), "--arena")
    assert run_calls == []
    assert _run("--arena", "localhost:1").exit_code == 0
    assert _run("--arena", "[::1]:65535").exit_code == 0
    assert [c["arena"] for c in run_calls] == ["localhost:1", "[::1]:65535"]


def test_serve_caps_deals_and_says_when_classic_has_no_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (walkthrough): `arena serve` had no deal cap to give; three simple bots that
    never bid 120 played one classic match for ever (2,400 deals in two minutes: nobody
    can win from the barrel without a contract of 120). ``--max-deals N`` caps the
    matches; without it, a classic arena says so at the start."""
    import arena.cli.serve as serve_module

    rulesets: list[Any] = []

    async def no_server(*args: Any) -> None:
        rulesets.append(args[2])

    monkeypatch.setattr(serve_module, "_serve", no_server)
    r = _serve(tmp_path, "--max-deals", "40")
    assert r.exit_code == 0, r.output
    assert rulesets[-1].max_deals == 40 and "no deal cap" not in r.output
    r = _serve(tmp_path)
    assert r.exit_code == 0 and not rulesets[-1].max_deals  # 0: none
    assert "matches of classic have no deal cap" in " ".join(r.output.split())
    # 1001 has no barrel, but a concession scores nobody else: noted too (round 40)
    r = _serve(tmp_path, "--ruleset", "1001")
    assert r.exit_code == 0 and "matches of 1001 have no deal cap" in " ".join(r.output.split())
    r = _serve(tmp_path, "--ruleset", "1001", "--max-deals", "40")
    assert r.exit_code == 0 and "no deal cap" not in r.output
    _refused(_serve(tmp_path, "--max-deals", "0"), "--max-deals")
