"""Round 40: small limits earlier audits listed and left. Each test names the defect it
pins and failed before its fix."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from arena.referee import Referee, RefereeConfig, start_server
from tests.review.test_mutation_review_round40 import _db
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **extra}


# ------------------------------------------ 1. loopback targets: mapped and percent-encoded


@pytest.mark.parametrize(
    ("target", "loopback"),
    [
        ("[::ffff:127.0.0.1]:1", True), ("ipv6:[::ffff:127.0.0.1]:1", True),
        ("ipv6:///[::FFFF:127.0.0.2]:1", True), ("dns:///[::ffff:127.0.0.1]:1", True),
        ("dns:///localhost%3A1", True), ("dns:///%6Cocalhost:1", True),
        ("%5B::1%5D:1", True), ("ipv6:%5B::1%5D:1", True), ("127.0.0.1%3A1", True),
        ("ipv4:127.0.0.1%3A1", True), ("localhost%3A1", True), ("[::1%25lo]:1", True),
        ("[::ffff:10.0.0.1]:1", False), ("ipv6:[::ffff:192.0.2.1]:1", False),
        ("10.0.0.1%3A1", False), ("dns:///arena.example%3A1", False),
    ],
)  # fmt: skip
def test_mapped_and_percent_encoded_loopback_targets_are_told(target: str, loopback: bool) -> None:
    """Defect: ``is_loopback_target`` called ``[::ffff:127.0.0.1]:PORT`` (an IPv4-mapped
    loopback: Python before 3.13 says it is none) and a percent-encoded target (gRPC
    decodes ``%3A``, ``%5B``... after the scheme, and in a target without one) no loopback:
    an arena on this machine given so was reached through ``http_proxy``, never reached."""
    from sdk.client import is_loopback_target

    assert is_loopback_target(target) is loopback


@pytest.mark.parametrize("form", ["[::ffff:127.0.0.1]:{port}", "dns:///localhost%3A{port}"])
def test_a_bot_reaches_a_mapped_or_encoded_loopback_arena_past_a_proxy(
    tmp_path: Path, form: str
) -> None:
    """Defect: with ``http_proxy`` set, ``arena-bot run --arena [::ffff:127.0.0.1]:PORT``
    (or ``dns:///localhost%3APORT``, both passed by --arena's check) never reached the
    arena on this machine: gRPC sent it through the proxy."""
    dead_proxy = "http://127.0.0.1:9"  # (the discard port: nothing listens on it here)
    env = _env(http_proxy=dead_proxy, https_proxy=dead_proxy, grpc_proxy=dead_proxy)
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)

    async def main() -> list[str]:
        ref = Referee(RefereeConfig())
        ref.add_bot("p1", "tok-p1-0123456789")
        server, port = await start_server(ref, port=0)
        cli = [sys.executable, "-c", "from sdk.cli import main; main()", "run", "random"]
        proc = subprocess.Popen(
            [*cli, "--arena", form.format(port=port), "--token", "tok-p1-0123456789"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
        try:
            return await ref.wait_for_bots(["p1"], timeout=30)
        finally:
            proc.kill()
            proc.wait()
            await server.stop(None)

    assert asyncio.run(main()) == []


# ------------------------------------------------------------ 2. tables in a narrow terminal


def _printed(renderable: object, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_try_shows_every_figure_in_40_columns(tmp_path: Path) -> None:
    """Defect: with ``COLUMNS=40`` ``arena-bot try``'s table was squeezed to headers and
    cells of "…" alone (exit 0, not one figure readable): now a ``header: value`` block
    per bot."""
    out = subprocess.run(
        [sys.executable, "-c", "from sdk.cli import main; main()", "try", "random", "-n", "2"],
        capture_output=True, text=True, env=_env(COLUMNS="40"), cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # (the line of the slowest decisions is left whole, to be copied, as it always was)
    assert all(len(line) <= 40 for line in lines if "slowest" not in line), out.stdout
    assert "…" not in out.stdout, out.stdout
    for bot in ("random", "random#1", "heuristic"):
        assert f"bot: {bot}" in lines, out.stdout
    for header in ("matches", "wins", "win %", "place", "score", "pts/deal", "incidents"):
        values = [line.split(": ", 1)[1] for line in lines if line.startswith(header + ": ")]
        assert len(values) == 3 and all(re.fullmatch(r"-?[\d.]+", v) for v in values), (
            header,
            out.stdout,
        )
    assert [line.split(": ")[1] for line in lines if line.startswith("matches: ")] == ["2"] * 3


def test_try_keeps_its_table_where_it_fits() -> None:
    """(In 80 columns the table stays a table, as before.)"""
    from rich.table import Table

    from arena.render import fitted

    t = Table(title="2 matches")
    for c in ("bot", "matches", "wins", "win %", "place", "score", "pts/deal", "incidents"):
        t.add_column(c)
    t.add_row("heuristic", "20", "20", "100", "1.00", "1000", "29.3", "0")
    assert "┃ bot       ┃ matches ┃" in _printed(fitted(t), 80)
    narrow = _printed(fitted(t), 40)
    assert "bot: heuristic" in narrow and "pts/deal: 29.3" in narrow and "┃" not in narrow


def test_bench_shows_every_figure_whole_in_40_columns_and_its_table_in_80() -> None:
    """Defect: ``arena bench`` in 40 columns folded each figure over several lines of a
    two-cell column ("21,9" over "09.2", read as two numbers) and its headers ("va", "lu",
    "e"); in 80 columns its table is as it was (a long measurement name folded)."""
    from arena.cli.bench import _figures_table
    from arena.render import fitted

    results = {
        "engine": {"classic": {"deals_per_s": 21909.2, "decisions_per_s": 519743.7}},
        "grpc_baseline": {"event_engine_off": {"tables_1": {"clients_cpu_us_per_rt": 149.3}}},
        "tournament": {"setup": "4 random bots, classic, max_deals 6, real gRPC on loopback"},
    }
    narrow = _printed(fitted(_figures_table(results)), 40)
    assert all(len(line) <= 40 for line in narrow.splitlines())
    for figure in ("value: 21,909.2", "value: 519,743.7", "value: 149.3",
                   "metric: clients_cpu_us_per_rt", "section: grpc_baseline"):  # fmt: skip
        assert figure in narrow, narrow
    wide = _printed(fitted(_figures_table(results)), 80)
    assert "┃ section       ┃" in wide and "519,743.7 │" in wide, wide


def _leaderboard(tmp_path: Path) -> object:
    from arena.leaderboard import build_leaderboard
    from arena.storage import Storage

    with Storage(_db(tmp_path, ["counting", "heuristic", "random"])) as st:
        return build_leaderboard(st, "lb")


def test_leaderboard_shows_every_figure_in_30_columns(tmp_path: Path) -> None:
    """Defect: in 30 columns ``arena leaderboard`` cut every bot name to "…" and σ off the
    right edge (the narrowest layout left no room for a name): now every column of the
    full table as ``header: value`` lines; where a layout fits (80), the table as before."""
    from arena.leaderboard import to_screen

    lb = _leaderboard(tmp_path)
    text = _printed(to_screen(lb, 30), 30)  # type: ignore[arg-type]
    assert all(len(line) <= 30 for line in text.splitlines()), text
    for r in lb.rows:  # type: ignore[attr-defined]
        assert f"bot: {r.bot}" in text, text
        for figure in (f"μ−3σ: {r.conservative:.2f}", f"μ: {r.mu:.2f}", f"σ: {r.sigma:.2f}",
                       f"matches: {r.matches}", f"bids won: {r.bids_won}"):  # fmt: skip
            assert figure in text, (figure, text)
    wide = _printed(to_screen(lb, 80), 80)  # type: ignore[arg-type]
    assert "┃ # ┃ bot       ┃" in wide, wide


def test_replay_tricks_read_whole_in_30_columns() -> None:
    """Defect: in 30 columns ``arena replay``'s trick table cut the names ("heur…", "coun…")
    and the winners ("heuri…"): now each trick as ``header: value`` lines."""
    from arena.render import render_record
    from engine import Game

    g = Game.new("classic", 3, ["heuristic", "counting", "random"])
    rng = random.Random(3)
    while g.deal_number < 1 and g.result is None:
        g.apply_trusted(rng.choice(g.legal_actions()))
    text = _printed(render_record(g.record()), 30)
    assert all(len(line) <= 30 for line in text.splitlines()), text
    assert "…" not in text, text
    winners = re.findall(r"^winner: (\S+)$", text, re.M)
    assert len(winners) == 8 and set(winners) <= {"heuristic", "counting", "random"}, text
    assert re.findall(r"^#: (\d+)$", text, re.M) == [str(n) for n in range(1, 9)], text


# ----------------------------------------------- 3. a bot no worker loads: said once


ONLY_IN_WORKERS = """import multiprocessing

from sdk import Bot

if multiprocessing.parent_process() is not None:  # (a worker: no GPU there, say)
    raise RuntimeError("no GPU in this process")


class Mine(Bot):
    pass
"""


def test_a_bot_no_worker_can_load_is_said_once_not_once_per_worker(tmp_path: Path) -> None:
    """Defect: ``arena-bot run --workers 3`` with a bot whose module raises in the
    workers printed the same "a worker process cannot load the bot: ..." line 3 times,
    once per worker: it is said once (and the run still exits with code 1)."""
    (tmp_path / "mine.py").write_text(ONLY_IN_WORKERS)
    cmd = [sys.executable, "-c", "from sdk.cli import main; main()", "run", "mine.py:Mine",
           "--workers", "3", "--arena", "localhost:9", "--token", "tok-0123456789",
           "--retry-for", "2"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    said = [line for line in proc.stderr.splitlines() if "cannot load the bot" in line]
    assert len(said) == 1, proc.stderr
    assert "RuntimeError: no GPU in this process" in said[0]
    assert "no worker process could load the bot (see above)" in proc.stderr


# ---------------------------------------------- 4. the tokens file's chmod, to be pasted


@pytest.mark.parametrize(
    "name", ["-bots.toml", "--x.toml", "my bots.toml", 'it\'s "q" $HOME `x`.toml', "bots.toml"]
)
def test_the_tokens_file_chmod_works_pasted_into_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Defect: `arena serve`'s note on a tokens file others can read gave "(chmod 600
    -bots.toml)" for a path starting with "-" (given as ``--tokens=-bots.toml``): chmod
    takes it for an option ("invalid option"), and the tokens stayed readable. Each
    command, run by a shell where the path was given, now makes the file the owner's."""
    from arena.cli.serve import _shared_tokens_note

    (tmp_path / name).write_text('[bots]\na = "x"\n')
    (tmp_path / name).chmod(0o644)
    monkeypatch.chdir(tmp_path)  # (the path as given: relative)
    note = _shared_tokens_note(Path(name))
    assert note is not None
    command = re.fullmatch(r".*\((chmod 600 .*)\)", note)
    assert command is not None, note
    out = subprocess.run(["sh", "-c", command[1]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0, (command[1], out.stderr)
    assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, command[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # (no other file touched)


# ---------------------------------------------- 5. --out where the file system refuses


def _leaderboard_out(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``arena leaderboard --db (the test's) ARGS`` in this process: its code and stderr."""
    from click.testing import CliRunner

    from arena.cli import main

    if not (tmp_path / "lb.sqlite").exists():
        _leaderboard(tmp_path)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(tmp_path / "lb.sqlite"), *args])
    return r.exit_code, " ".join(r.stderr.split())


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="Linux's /proc")
def test_out_into_proc_names_the_path_and_why(tmp_path: Path) -> None:
    """Defect: ``arena leaderboard --out /proc/version`` said "cannot write /proc/version:
    No such file or directory" of a file that is there (the refusal was of the new file
    written beside it, to write it whole), and into a directory (``--format all``) named
    that temporary file ("/proc/leaderboard.json.tmp"). Now the path asked for, and that
    its directory takes no new file."""
    version = Path("/proc/version").read_text()
    for args, said in [
        (["--out", "/proc/version"], "--out /proc/version: cannot write /proc/version: "),
        (["--out", "/proc/x.json"], "--out /proc/x.json: cannot write /proc/x.json: "),
        (["--out", "/proc/", "--format", "all"], "cannot write /proc/leaderboard.json: "),
        (["--out", "/proc/self/", "--format", "md"], "cannot write /proc/self/leaderboard.md: "),
    ]:  # fmt: skip
        code, err = _leaderboard_out(tmp_path, *args)
        assert code == 1, err
        assert said in err and ".tmp" not in err and "Traceback" not in err, err
        parent = "/proc/self" if "self" in said else "/proc"
        because = f"{parent} takes no new file (No such file or directory, though it is there)"
        # (not root: the file is not its user's to write, and that is said)
        assert because in err or "Permission denied" in err, err
    assert Path("/proc/version").read_text() == version


def test_out_under_dev_null_says_it_is_a_file(tmp_path: Path) -> None:
    """(Checked, fine before: ``--out /dev/null/x`` says /dev/null is a file, not a
    directory.)"""
    code, err = _leaderboard_out(tmp_path, "--out", "/dev/null/x")
    assert code == 1 and "--out /dev/null/x: cannot write /dev/null: a file, not a directory" in err


# ------------------------------------------------ 6. 1001 without a deal cap: said


def test_1001_without_a_cap_can_last_for_ever_and_arena_serve_says_so(tmp_path: Path) -> None:
    """Defect: ``arena serve --ruleset 1001`` (or a ruleset file of ``preset = "1001"``
    with ``max_deals = 0``) gave no note, as only a ruleset with the barrel could "play
    for ever"; but in 1001 a concession scores the others nothing, and bots that concede
    push every score down deal after deal: such a match never ends. Shown here with the
    engine, then the note checked (and none where a cap is given)."""
    from arena.cli.options import no_cap_note
    from engine import PRESETS, Game, load_ruleset

    g = Game.new("1001", 1, ["a", "b", "c"])
    while g.result is None and g.deal_number < 200:  # (bid when first, then concede)
        acts = g.legal_actions()
        g.apply_trusted(next((a for a in acts if str(a).startswith(("concede", "bid"))), acts[0]))
    assert g.result is None and max(g.scores) < 0, g.scores

    ruleset = tmp_path / "open.toml"
    ruleset.write_text('preset = "1001"\nname = "open-1001"\nmax_deals = 0\n')
    rs = load_ruleset(str(ruleset))
    assert rs.max_deals == 0
    note = no_cap_note(rs, "--max-deals N caps them")
    assert note is not None and note.startswith("note: matches of open-1001 have no deal cap")
    assert "concede or fail their contracts can play for ever" in note
    assert no_cap_note(dataclasses.replace(rs, max_deals=60), "x") is None
    assert no_cap_note(PRESETS["classic"], "x") is not None  # (the barrel's, as before)
    assert no_cap_note(dataclasses.replace(PRESETS["classic"], barrel=False), "x") is None
    assert no_cap_note(load_ruleset(str(ROOT / "rulesets" / "tournament-1001.toml")), "x") is None

    bots = "".join(f'{b} = "tok-{b * 16}"\n' for b in "abc")
    (tmp_path / "tokens.toml").write_text(f"[bots]\n{bots}")
    (tmp_path / "tokens.toml").chmod(0o600)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import main; main()", "serve", "--tokens",
         "tokens.toml", "--port", "0", "--ruleset", str(ruleset), "--host", "127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env(COLUMNS="300"),
        cwd=tmp_path,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        # (The note comes before the referee starts; a deadline: a note no longer said would
        # otherwise leave the test waiting on a server that runs for ever.)
        said = readline_within(proc.stderr, 60)
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()  # type: ignore[union-attr]
    assert said is not None, "arena serve said nothing on stderr in 60 s"
    assert said.startswith("note: matches of open-1001 have no deal cap: bots that concede"), said
