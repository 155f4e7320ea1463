"""Mutation review of round 40's product changes (arena.render.fitted, the leaderboard's
narrow screen, the no-cap note, arena replay's served-record hint, the database's lock
before the database): each test kills a mutant the earlier tests let survive."""

from __future__ import annotations

import dataclasses
import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table

from tests.arena.fake_referee import make_config, run_fake
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]


def _printed(renderable: Any, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


# ------------------------------------------------------------------- arena.render.fitted


def test_a_folded_long_word_in_a_fold_column_still_fits() -> None:
    """Mutant: the cells of an ``overflow="fold"`` column required whole (as the others'):
    bench's long setup names folded in 80 columns turned the whole table into lines."""
    from arena.render import fitted

    t = Table()
    t.add_column("section", no_wrap=True)
    t.add_column("what", overflow="fold")
    t.add_column("value", justify="right")
    t.add_row("grpc", "event_engine_measurement_of_the_clients_round_trips", "12.5")
    text = _printed(fitted(t), 40)
    assert "│" in text and "what:" not in text, text
    assert "12.5" in text


def test_lines_keep_the_tables_title_and_caption_each_set_apart() -> None:
    """Mutants: the title or the caption dropped from the ``header: value`` lines, or the
    title run into the first row."""
    from arena.render import fitted

    t = Table(title="Results", caption="placed by score")
    t.add_column("bot")
    t.add_column("score", justify="right")
    t.add_row("alpha-long-name", "1001")
    t.add_row("beta-long-name", "-62390")
    lines = [line.rstrip() for line in _printed(fitted(t), 22).splitlines()]
    assert lines[0].strip() == "Results" and lines[1] == "", lines
    assert lines[2] == "bot: alpha-long-name", lines
    assert lines[-2] == "" and lines[-1].strip() == "placed by score", lines
    assert "score: -62390" in lines and "score: 1001" in lines, lines


def test_a_table_drawn_without_padding_fits() -> None:
    """Mutant: rich's box lines not read as gaps between words: "│alpha│1001│" was one
    word, and a table that fits was shown as lines."""
    from arena.render import fitted

    t = Table(padding=0)
    t.add_column("bot")
    t.add_column("score")
    t.add_row("alpha", "1001")
    text = _printed(fitted(t), 80)
    assert "┃bot  ┃score┃" in text and "│alpha│1001 │" in text, text


def test_a_table_of_empty_cells_fits() -> None:
    """Mutant: the empty strings of empty cells counted as words to find: a table with a
    few empty cells never fit."""
    from arena.render import fitted

    t = Table()
    for c in ("bot", "note", "more"):
        t.add_column(c)
    for bot in ("alpha", "beta", "gamma"):
        t.add_row(bot, "", "")
    text = _printed(fitted(t), 80)
    assert "┃ bot " in text and "note:" not in text, text


def test_replay_standings_read_whole_in_30_columns() -> None:
    """Mutant: `arena replay`'s final standings not fitted: in 30 columns the names and
    scores cut to "…"."""
    from arena.render import render_record
    from engine import PRESETS, Game

    names = ["heuristic-one", "counting-two", "random-three"]
    g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=1), 3, names)
    rng = random.Random(3)
    while g.result is None:
        g.apply_trusted(rng.choice(g.legal_actions()))
    text = _printed(render_record(g.record()), 30)
    tail = text[text.index("Final standings") :]
    assert "…" not in tail, tail
    for name in names:
        assert name in tail, tail


# ------------------------------------------------------------- arena leaderboard on screen


def _db(tmp_path: Path, bots: list[str]) -> Path:
    from arena.storage import Storage
    from engine import PRESETS, Game

    db = tmp_path / "lb.sqlite"
    with Storage(db) as st:
        st.ensure_tournament("lb", name="lb", fingerprint="f", total_matches=1,
                             config={"ruleset": {"name": "classic", "players": 3},
                                     "draw_probability": 0.02},
                             bots=[(b, "r") for b in bots])  # fmt: skip
        g = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=4), 1, bots)
        rng = random.Random(1)
        while g.result is None:
            g.apply_trusted(rng.choice(g.legal_actions()))
        st.save_match("lb", match_id="lb-m00000", index=0, table=0, set_no=0, seed=1,
                      seats=bots, record=g.record(), started_at=0.0, finished_at=1.0)  # fmt: skip
    return db


def _leaderboard_on_a_terminal(db: Path, *args: str, columns: int = 30) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "TTY_COMPATIBLE": "1",
           "COLUMNS": str(columns)}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", "from arena.cli import main; main()", "leaderboard", "--db",
         str(db), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return re.sub(r"\x1b\[[0-9;]*m", "", out.stdout)  # (figures in bold, NO_COLOR or not)


def test_arena_leaderboard_in_30_columns_shows_every_bot_whole(tmp_path: Path) -> None:
    """Mutants: `arena leaderboard` (the command, not only to_screen) printing
    to_rich_table in a 30-column terminal (names cut to "…"), and its --list unfitted
    (the tournament's figures cut)."""
    bots = ["counting", "heuristic", "random"]
    db = _db(tmp_path, bots)
    shown = _leaderboard_on_a_terminal(db)
    for bot in bots:
        assert f"bot: {bot}" in shown, shown
    listed = _leaderboard_on_a_terminal(db, "--list")
    assert "id: lb" in listed and "matches: 1/1" in listed and "…" not in listed, listed


def test_one_letter_bot_names_keep_the_bot_header_whole(tmp_path: Path) -> None:
    """Mutant: the header's own length not counted among the names: bots named "a", "b",
    "c" left a bot column that cut its header "bot" and was kept as a table."""
    from arena.leaderboard import build_leaderboard, to_screen
    from arena.storage import Storage

    with Storage(_db(tmp_path, ["a", "b", "c"])) as st:
        lb = build_leaderboard(st, "lb")
    for width in range(20, 60):
        text = _printed(to_screen(lb, width), width)
        assert "bot" in text, (width, text)


# ------------------------------------------------------------------------- no_cap_note


def test_no_cap_note_of_a_ruleset_without_a_concession_is_none() -> None:
    """Mutants: the note given for 1001 with its concession turned off (``concede =
    "off"``; its ``concede_pays`` stays "none"): such matches end, and no concession
    happens; and the note without what caps it."""
    from arena.cli.options import no_cap_note
    from engine.rules import preset

    no_concession = dataclasses.replace(preset("1001"), concede="off")
    assert no_cap_note(no_concession, "caps") is None
    note = no_cap_note(preset("1001"), "--max-deals N caps them")
    assert note is not None and note.endswith("(--max-deals N caps them)"), note


# ------------------------------------------------------------- arena replay's served hint


def _served_record(tmp_path: Path, match_id: str) -> None:
    import json

    from bots import load
    from sdk import play_local

    record = play_local([load("random")] * 3, seed=2, max_deals=2).record
    served = tmp_path / "records" / f"{match_id}.jsonl"
    served.parent.mkdir(parents=True, exist_ok=True)
    served.write_text(json.dumps({"type": "end", "record": record}) + "\n", encoding="utf-8")


def test_replay_hints_the_served_record_when_a_database_lacks_the_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant: the hint given only when there is no database: with --db (or one in runs/)
    not holding the id, records/<id>.jsonl went unnamed."""
    from arena.cli import main
    from arena.storage import Storage

    match_id = "20261205-150000-abcd-m00001"
    _served_record(tmp_path, match_id)
    with Storage(tmp_path / "empty.sqlite"):
        pass
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["replay", match_id, "--db", "empty.sqlite"])
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert f"arena replay records/{match_id}.jsonl" in said, said


def test_replay_hints_no_directory_named_like_a_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant: ``exists`` for ``is_file``: a directory records/<id>.jsonl was offered as
    the record to replay."""
    from arena.cli import main

    match_id = "20261205-150000-abcd-m00002"
    (tmp_path / "records" / f"{match_id}.jsonl").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["replay", match_id])
    assert refused.exit_code == 2
    assert "arena serve recorded" not in refused.output, refused.output


# ------------------------------------------------------------ the lock before the database


def test_a_run_refused_by_the_lock_leaves_no_new_database(tmp_path: Path) -> None:
    """Mutant: the database opened before the lock is taken (the old order): a run refused
    as another's left a new database behind, made while another run was making it."""
    from arena.storage import StorageLockedError
    from arena.tournament.runner import DatabaseLock

    cfg = make_config(tmp_path, bots=3)
    cfg.db.parent.mkdir(parents=True, exist_ok=True)
    holder = DatabaseLock(cfg.db)
    holder.acquire("other")
    try:
        with pytest.raises(StorageLockedError):
            run_fake(cfg)
        assert not cfg.db.exists()
    finally:
        holder.release()


def test_a_database_that_cannot_be_opened_leaves_its_lock_free(tmp_path: Path) -> None:
    """Mutant: the lock not released when the database cannot be opened: the process held
    it (as the run that failed) for as long as the error was kept."""
    from arena.storage import StorageError, lock_owner

    cfg = make_config(tmp_path, bots=3)
    cfg.db.write_bytes(b"not a database at all, " * 100)
    with pytest.raises(StorageError) as refused:
        run_fake(cfg)
    assert refused.value is not None  # (kept: its frames hold what the run made)
    assert lock_owner(cfg.db) is None


def test_a_tournament_and_arena_serve_make_a_nested_database_directory(tmp_path: Path) -> None:
    """Mutants: the database's directory made without its parents, or not at all before
    `arena serve --db` takes the lock beside it."""
    cfg = make_config(tmp_path, bots=3, db=str(tmp_path / "a" / "b" / "t.sqlite"))
    run_fake(cfg)
    assert cfg.db.is_file()

    bots = "".join(f'{b} = "tok-{b * 16}"\n' for b in "abc")
    (tmp_path / "tokens.toml").write_text(f"[bots]\n{bots}")
    (tmp_path / "tokens.toml").chmod(0o600)
    db = tmp_path / "c" / "d" / "served.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "serve", "--tokens",
         "tokens.toml", "--port", "0", "--host", "127.0.0.1", "--max-deals", "2", "--db",
         str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        said: list[str] = []
        while not said or (said[-1] and not said[-1].startswith("storing results in")):
            # (until that line, or the end; a deadline per line: a server that stopped
            # saying where it stores fails here, not at pytest's timeout)
            line = readline_within(proc.stdout, 60)
            assert line is not None, f"arena serve said nothing more in 60 s after {said}"
            said.append(line)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=60)
    assert any(line.startswith("storing results in") for line in said), (said, err)
    assert db.parent.is_dir()


# -------------------------------------------------------------------- sdk: try, client


def test_trys_cap_note_asks_nothing_of_a_cap_the_author_set() -> None:
    """Mutant: the question and "--max-deals N sets the cap" added to the note of a cap
    given with --max-deals (the author set it: the matches were meant to stop there)."""
    from sdk import cli

    out = CliRunner().invoke(cli.main, ["try", "random", "--vs", "random,random", "-n", "1",
                                        "--ruleset", "1001", "--max-deals", "2"])  # fmt: skip
    said = " ".join(out.output.split())
    assert "reached the cap of 2 deals before anyone reached 1001" in said, said
    assert "--max-deals N sets the cap" not in said and "make its contracts" not in said, said


def test_sdk_lists_client_among_its_names() -> None:
    """Mutant: ``client`` left out of ``dir(sdk)``: help(sdk) and editors did not show the
    submodule the guide uses after a plain ``import sdk``."""
    import sdk

    assert "client" in dir(sdk) and "run" in dir(sdk)
    assert sdk.client.run_async is not None


# -------------------------------------------------- the referee: a decision's clock at its sending


def test_a_referee_held_up_before_sending_neither_times_out_nor_charges_the_bot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutants: the decision's start not moved to its sending (the referee's 1.2 s counted
    in the bot's ms, and taken off its bank), and the deadline's timer set at the deadline
    before it was moved (the request timed out at once, its answer on its way)."""
    import asyncio
    import time

    import grpc

    from arena.referee import Referee, RefereeConfig, match, start_server
    from arena.v1 import arena_pb2 as pb
    from engine import PRESETS
    from tests.support.harness import welcomed_call

    real_loop_lag = match.loop_lag
    held = []

    def slow_once(loop: asyncio.AbstractEventLoop) -> Any:
        if not held:  # (the first request only: between its start and its sending)
            held.append(1)
            time.sleep(1.2)
        return real_loop_lag(loop)

    monkeypatch.setattr(match, "loop_lag", slow_once)

    async def bot(call: Any) -> None:
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF or msg.WhichOneof("kind") == "match_ended":
                return
            if msg.WhichOneof("kind") == "decision_request":
                r = msg.decision_request
                d = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                action=r.view.legal_actions[0])  # fmt: skip
                await call.write(pb.BotMessage(decision=d))

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=1000, time_bank_ms=0, max_strikes=3))
        for n in "abc":
            ref.add_bot(n, f"tok-{n}")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                calls = [await welcomed_call(ch, f"tok-{n}", n) for n in "abc"]
                bots = [asyncio.create_task(bot(c)) for c in calls]
                rs = dataclasses.replace(PRESETS["classic"], max_deals=1)
                rec = await ref.run_match("m1", rs, 5, ["a", "b", "c"])
                await asyncio.gather(*bots)
                for c in calls:
                    c.cancel()
        finally:
            await server.stop(0)
        return rec

    rec = asyncio.run(main())
    assert held and not rec["incidents"], rec["incidents"]
    times = [a["ms"] for d in rec["deals"] for a in d["actions"] if "ms" in a]
    assert times and max(times) < 1000, times


def test_replay_of_a_missing_path_gets_no_served_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant: the hint for any RECORD, a path too: ``arena replay x/m1`` (a file that is
    not there) was sent to records/x/m1.jsonl, a guess: a path names the file itself."""
    from arena.cli import main

    _served_record(tmp_path, "x/m1")
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["replay", "x/m1"])
    assert refused.exit_code == 2
    assert "arena serve recorded" not in refused.output, refused.output
