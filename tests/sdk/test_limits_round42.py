"""Round 42: a bot's failed decisions, visible to the organiser.

A bot on the SDK whose decision method raised played on (the SDK sent its fallback, a legal
answer): the referee recorded nothing, so the record, ``arena replay``, the leaderboard and
the web pages showed nothing of it; only the bot's own log said so. The SDK now says so in
``Decision.failed`` (a field an old client leaves unset), and the referee records a
``bot_error`` incident of the seat, no strike. ``arena-bot try --records`` writes the
incidents of a local match as a referee's record lists them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from harness import ROOT, attach_in_process, get_json, web_server
from spawn import readline_within

from arena.v1 import arena_pb2 as pb
from engine import PRESETS, PlayerView
from engine.actions import Action
from sdk import Bot

RAISES = """from sdk import Bot


class Raises(Bot):
    \"\"\"Raises at every card it plays (its bids and the rest are the SDK's defaults).\"\"\"

    def play(self, view):
        raise ValueError("boom")
"""

NAMES = ("mine", "r1", "r2")


def _run(args: list[str], cwd: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "250"}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          **kw)  # fmt: skip


ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
ARENA_BOT = [sys.executable, "-c", "from sdk.cli import main; main()"]


def test_a_bot_that_raises_in_arena_serve_shows_in_record_replay_leaderboard_and_web(
    tmp_path: Path,
) -> None:
    """Defect: an SDK bot raising at every card it played went unseen by the organiser:
    no incident in the record, nothing in ``arena replay``, the leaderboard or the web.
    Each failed decision is a ``bot_error`` incident now (no strike, no forfeit), counted
    where the incidents are. (The bot runs in a worker process, ``--workers 1``: the
    runner's other paths are another test's.)"""
    (tmp_path / "mine.py").write_text(RAISES)
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "tok-{n}-0123456789abcdef"\n' for n in NAMES))
    tokens.chmod(0o600)
    db = tmp_path / "serve.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen(
        [*ARENA, "serve", "--port", "0", "--tokens", str(tokens), "--matches", "1",
         "--max-deals", "2", "--seed", "7", "--record-dir", str(tmp_path / "rec"),
         "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    bots: list[subprocess.Popen[str]] = []
    try:
        assert serve.stdout is not None
        port = None
        give_up = time.monotonic() + 60
        while port is None and time.monotonic() < give_up:
            # (within a deadline: a serve that says nothing fails the test, not hangs it)
            line = readline_within(serve.stdout, max(0.0, give_up - time.monotonic()))
            assert line is not None, "arena serve printed no port within 60 s"
            assert line, "arena serve ended before it listened"
            if line.startswith("port "):
                port = int(line.split()[1])
        assert port is not None
        for name, bot in zip(NAMES, ("mine.py:Raises", "random", "random"), strict=True):
            log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 (closed with the bot)
            bots.append(subprocess.Popen(
                [*ARENA_BOT, "run", bot, "--arena", f"127.0.0.1:{port}", "--token",
                 f"tok-{name}-0123456789abcdef", "--once",
                 *(["--workers", "1"] if name == "mine" else [])],
                stdout=log, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
            ))  # fmt: skip
            log.close()
        assert serve.wait(90) == 0
        for b in bots:
            b.wait(60)
    finally:
        for p in (serve, *bots):
            if p.poll() is None:
                p.kill()
                p.wait()
        if serve.stdout is not None:
            serve.stdout.close()
    out_of_mine = (tmp_path / "mine.log").read_text()
    said = re.search(r"the bot failed (\d+) of its (\d+) decision\(s\)", out_of_mine)
    assert said is not None, out_of_mine
    failed = int(said.group(1))
    assert failed > 3 and "the bot's calls run in 1 worker process" in out_of_mine, out_of_mine

    # The record: one bot_error per failed decision, the seat's, no strike, no forfeit.
    (file,) = (tmp_path / "rec").glob("*.jsonl")
    record = json.loads(file.read_text().splitlines()[-1])["record"]
    seat = record["players"].index("mine")
    incidents = record["incidents"]
    assert [i["kind"] for i in incidents] == ["bot_error"] * failed, incidents
    assert {i["seat"] for i in incidents} == {seat} and record["forfeits"] == []
    assert incidents[0]["detail"].startswith(
        "the bot's decision failed (ValueError); its client sent its fallback 'play "
    ), incidents[0]
    # The fallbacks are the bot's answers ("by": "bot"), as the referee took them.
    by = [a["by"] for d in record["deals"] for a in d["actions"] if a["seat"] == seat]
    assert "fallback" not in by

    # arena replay: the match's incident lines, and the tournament's list.
    match_id = record["match_id"]
    shown = CliRunner().invoke(_arena_main(), ["replay", "--db", str(db), match_id])
    assert shown.exit_code == 0, shown.output
    assert f"mine ({seat}): not strikes: {failed} bot_errors" in shown.output, shown.output
    assert "bot_error, a decision the bot failed (its client sent a fallback)" in " ".join(
        shown.output.split()
    )
    checked = CliRunner().invoke(_arena_main(), ["replay", "--check", "--db", str(db), match_id])
    assert checked.exit_code == 0, checked.output
    listed = CliRunner().invoke(_arena_main(), ["replay", "--list", "--db", str(db)])
    assert listed.exit_code == 0 and f"! mine: {failed} bot_errors" in listed.output, listed.output

    # arena leaderboard: no strike, and the failed decisions said under the table.
    board = CliRunner().invoke(_arena_main(), ["leaderboard", "--db", str(db)],
                               env={"COLUMNS": "250"})  # fmt: skip
    assert board.exit_code == 0, board.output
    text = " ".join(board.output.split())
    assert f"decisions failed (bot_error, no strike): mine {failed}" in text, board.output

    # arena web: the leaderboard row counts them apart from the strikes; the bot page
    # lists them among the incidents that are no strike.
    with web_server(db) as server:
        base = f"http://127.0.0.1:{server.port}/"
        rows = {r["bot"]: r for r in get_json(base, "/api/leaderboard")["rows"]}
        mine = rows["mine"]
        assert (mine["strikes"], mine["other_incidents"], mine["bot_errors"]) == (0, failed, failed)
        assert rows["r1"]["bot_errors"] == 0
        page = get_json(base, "/api/bots/mine")
        assert page["strikes"] == [] and page["other_incidents_not_listed"] == 0
        assert [i["kind"] for i in page["other_incidents"]] == ["bot_error"] * failed


def _arena_main() -> Any:
    from arena.cli import main

    return main


# ------------------------------------------------------------------ the referee, raw


def test_the_referee_records_decision_failed_clipped_and_an_old_client_as_before() -> None:
    """``Decision.failed`` set: a ``bot_error`` incident (its reason cut to 64 characters),
    the answer applied as any (no strike). Unset, as every older client sends it: nothing
    recorded, as before. Answers by three raw bots on in-process streams."""
    from arena.referee import Referee, RefereeConfig

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=5000))
        count = 0

        def answer(bot: str, req: pb.DecisionRequest) -> None:
            nonlocal count
            d = pb.Decision(request_id=req.request_id, match_id=req.match_id)
            d.action.CopyFrom(req.view.legal_actions[0])
            if bot == "mine":
                count += 1
                if count == 1:
                    d.failed = "E" * 100_000  # a client's reason, of any length
                elif count == 4:
                    d.failed = ""  # set, but empty: still a failure
                elif count % 2:
                    d.failed = "KeyError"
            ref.on_decision(ref.session(bot), d)

        attach_in_process(ref, NAMES, answer)
        one = dataclasses.replace(PRESETS["classic"], max_deals=1)
        return await ref.run_match("raw42", one, 3, list(NAMES))

    record = asyncio.run(main())
    incidents = record["incidents"]
    assert incidents and {i["kind"] for i in incidents} == {"bot_error"}, incidents
    assert {i["seat"] for i in incidents} == {0} and record["forfeits"] == []
    first = incidents[0]["detail"]
    assert first.startswith("the bot's decision failed (" + "E" * 63 + "…); its client sent"), first
    assert sum("(no reason given)" in i["detail"] for i in incidents) == 1
    keyerrors = sum("(KeyError)" in i["detail"] for i in incidents)
    # mine's answers without it (and the others', which never set it) recorded nothing
    asked = sum(
        1 for d in record["deals"] for a in d["actions"] if a["seat"] == 0 and a["by"] == "bot"
    )
    assert asked > len(incidents) == 2 + keyerrors >= 3
    assert all(a["by"] != "fallback" for d in record["deals"] for a in d["actions"])


class QuickRaises(Bot):
    """A quick bot (asked on the runner's loop) that raises now and then."""

    quick = True
    calls = 0

    def act(self, view: PlayerView) -> Action:
        self.calls += 1
        if self.calls % 3 == 1:
            raise KeyError("now and then")
        return super().act(view)


class AnswersNone(Bot):
    """A bot asked in a worker thread that answers no action now and then."""

    calls = 0

    def play(self, view: PlayerView) -> Action:
        self.calls += 1
        return None if self.calls % 2 else super().play(view)  # type: ignore[return-value]


def test_the_sdks_runner_says_which_decisions_failed_on_either_path(tmp_path: Path) -> None:
    """The SDK's runner sets ``Decision.failed`` for each decision its bot failed, asked
    on its loop (a quick bot) or in a worker thread: the exception's type, or that no
    action came, and only for those; the record's ``bot_error`` incidents are as many as
    the errors the runner counted."""
    from harness import arena

    async def main() -> tuple[dict[str, Any], list[Any]]:
        async with arena(tmp_path) as a:
            names = list(NAMES)
            tasks = await a.runners(names, [QuickRaises, AnswersNone, Bot], 1)
            one = dataclasses.replace(PRESETS["classic"], max_deals=2)
            record = await a.referee.run_match("h42", one, 4, names)
            return record, list(await asyncio.wait_for(asyncio.gather(*tasks), 60))

    record, summaries = asyncio.run(main())
    by_seat: dict[int, list[str]] = {}
    for i in record["incidents"]:
        assert i["kind"] == "bot_error", i
        by_seat.setdefault(i["seat"], []).append(i["detail"])
    assert set(by_seat) == {0, 1} and record["forfeits"] == []
    assert all(d.startswith("the bot's decision failed (KeyError)") for d in by_seat[0])
    assert all(d.startswith("the bot's decision failed (no action: NoneType)") for d in by_seat[1])
    assert [len(by_seat[0]), len(by_seat[1]), 0] == [s.errors for s in summaries]
    # now and then: the other decisions were the bots' own, and no incident
    mine = [a for d in record["deals"] for a in d["actions"] if a["seat"] == 0 and a["by"] == "bot"]
    assert len(mine) > len(by_seat[0])


# ------------------------------------------------------------------ arena-bot try


class Illegal(Bot):
    """Bids an illegal amount once; raises in on_deal_end (a hook: no arena records it)."""

    told = False

    def bid(self, view: PlayerView) -> Action:
        from engine import Bid

        if not self.told:
            self.told = True
            return Bid(7)
        return super().bid(view)

    def on_deal_end(self, view: PlayerView, result: Any) -> None:
        raise RuntimeError("hook")


def test_try_records_hold_the_incidents_a_referee_would_record(tmp_path: Path) -> None:
    """Defect: ``arena-bot try --records DIR`` wrote the rules' record alone: a bot's
    failed decisions and illegal answers, counted in the table's incidents, were nowhere
    in the record, and ``arena replay`` of it said nothing. They are listed now as a
    referee lists them (``bot_error``, ``illegal``); a failed hook is not (an arena never
    learns of it)."""
    (tmp_path / "mine.py").write_text(RAISES)
    rec = tmp_path / "recs"
    r = _run([*ARENA_BOT, "try", "mine.py:Raises", "-n", "1", "--seed", "3", "--records",
              str(rec)], tmp_path)  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr  # (incidents: exit code 1)
    (file,) = rec.glob("*.json")
    record = json.loads(file.read_text())
    kinds = {i["kind"] for i in record["incidents"]}
    assert kinds == {"bot_error"}, record["incidents"]
    failed = len(record["incidents"])
    # the table's incidents column counts the same decisions
    row = re.search(r"^│ Raises .*│\s+(\d+) │$", r.stdout, re.M)
    assert row is not None and int(row.group(1)) == failed, r.stdout
    assert (
        "Raises.play() (mine.py:7) raised ValueError: boom; played play "
        in (record["incidents"][0]["detail"])
    )
    shown = CliRunner().invoke(_arena_main(), ["replay", str(file)])
    assert shown.exit_code == 0, shown.output
    assert f"not strikes: {failed} bot_errors" in shown.output, shown.output
    checked = CliRunner().invoke(_arena_main(), ["replay", "--check", str(file)])
    assert checked.exit_code == 0, checked.output


def test_play_local_incidents_as_a_referees_record(tmp_path: Path) -> None:
    """``sdk.local.arena_record``: an illegal answer is ``illegal``, a failed hook is left
    out (its ``LocalIncident`` names the hook), and the record replays."""
    from engine import replay
    from sdk import play_local
    from sdk.local import arena_record

    match = play_local([Illegal, Bot, Bot], PRESETS["classic"], seed=5, max_deals=1)
    hooks = [i for i in match.incidents if i.hook]
    assert hooks and {i.hook for i in hooks} == {"on_deal_end"}
    record = arena_record(match)
    assert [i["kind"] for i in record["incidents"]] == ["illegal"], record["incidents"]
    assert record["incidents"][0]["seat"] == 0 and record["incidents"][0]["deal"] == 0
    assert "played" in record["incidents"][0]["detail"]
    assert replay(record).is_over
    assert "incidents" not in match.record  # (the rules' record itself is left as it was)
