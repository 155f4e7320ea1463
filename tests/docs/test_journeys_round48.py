"""Round 48: the three users' journeys (a bot author on another machine, an organiser, a
spectator) read from README.md and docs/*.md alone, on a fresh clone and a pip-installed
venv of Python 3.13. What did not hold is pinned here.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from arena.cli.tournament import _announce
from arena.tournament.config import load_config

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

CUP = """
name = "cup"
deals = "independent"
[bots]
a = "random"
b = "heuristic"
friend = { remote = true, token_env = "FRIEND_TOKEN" }
"""


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _announced(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cup.toml"
    path.write_text(text, encoding="utf-8")
    out = StringIO()
    _announce(load_config(path), Console(file=out, width=400))
    return " ".join(out.getvalue().split())


def test_remote_bots_on_port_0_are_told_a_resumed_run_listens_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An organiser's journey: a config with a remote bot and no `port` (0, the default),
    stopped with Ctrl-C and run again to resume, as docs/tournament.md has it ("keeps
    reconnecting for --retry-for seconds, so running the same command again picks it up").
    The resumed run listened on another free port: the remote bot kept reconnecting to the
    old one ("connection refused") and the run waited bot_wait_s for it, then stopped. The
    start of the run now says so, and the doc says it holds on a fixed port only."""
    monkeypatch.setenv("FRIEND_TOKEN", "0123456789abcdef")
    said = _announced(tmp_path, CUP)
    assert "note: remote bots (friend) and port 0 (the default)" in said
    assert "a resumed one too" in said and "port = 50051" in said
    # a fixed port keeps it; local bots only are told their port at every run
    assert "port 0" not in _announced(tmp_path, "port = 50051\n" + CUP)
    local = CUP.replace(
        'friend = { remote = true, token_env = "FRIEND_TOKEN" }\n', 'c = "random"\n'
    )
    assert "note" not in _announced(tmp_path, local)
    doc = _joined(DOCS / "tournament.md")
    assert "so running the same command again picks it up (on a fixed `port`" in doc
    assert "remote bots must be given it each time, a resumed run's too" in doc


def test_replaying_the_record_file_of_a_match_still_played_says_so(tmp_path: Path) -> None:
    """A spectator's journey: `arena replay records/<match id>.jsonl` of `arena serve`'s
    match under way said "the match was not over when written", as if the file were final
    (a killed referee's); the match was still being played. It now says both, and when to
    replay it, as docs/record-format.md does."""
    from click.testing import CliRunner

    from arena.cli import main as arena

    # (what the referee has written a few actions into a match: its start, then actions)
    live = tmp_path / "20261206-123735-3d95-m00000.jsonl"
    start = {"type": "start", "match_id": live.stem, "players": ["a", "b", "c"]}
    actions = [{"type": "action", "deal": 0, "seat": s, "action": "pass"} for s in (1, 2)]
    live.write_text("".join(json.dumps(x) + "\n" for x in [start, *actions]), encoding="utf-8")
    r = CliRunner().invoke(arena, ["replay", str(live)])
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert "the match is still being played (replay it once it has ended)" in said, said
    assert "or its referee stopped without writing its end (killed, a full disk)" in said
    assert "(a match still being played, a killed referee, a full disk)" in _joined(
        DOCS / "record-format.md"
    )


def test_a_bots_log_says_its_own_place_at_each_matchs_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot author's journey: connected to an organiser's arena, the bot's log is all the
    author reads of the results, and each match's end said "ended: scores [693, -712, 254],
    places [1, 3, 2]" without saying which seat was the bot's (only the match's "started"
    line did, among the lines of the matches played at once). It now ends with the bot's
    own place and score, as docs/writing-a-bot.md shows."""
    import asyncio
    import logging
    import re

    from engine.record import ordinal
    from sdk import Bot
    from tests.sdk.test_limits_round41 import _one_match  # (a match h1 of runners, 1 deal)

    with caplog.at_level(logging.INFO, logger="sdk.client"):
        asyncio.run(_one_match(tmp_path, [Bot, Bot, Bot]))
    ended = [r.getMessage() for r in caplog.records if "match h1 ended:" in r.getMessage()]
    assert len(ended) == 3, ended  # (a line per runner)
    seats = set()
    for line in ended:
        m = re.fullmatch(
            r"match h1 ended: scores \[(.*)\], places \[(.*)\]: this bot \(seat (\d)\) (\S+) "
            r"with (-?\d+)",
            line,
        )
        assert m, line
        scores = [int(x) for x in m[1].split(", ")]
        places = [int(x) for x in m[2].split(", ")]
        seat = int(m[3])
        assert (m[4], int(m[5])) == (ordinal(places[seat]), scores[seat]), line
        seats.add(seat)
    assert seats == {0, 1, 2}
    doc = _joined(DOCS / "writing-a-bot.md")
    assert "places [1, 3, 2]: this bot (seat 2) 2nd with 254`" in doc


def test_arena_serve_over_tls_names_what_bots_connect_by(tmp_path: Path) -> None:
    """A bot author's journey: `arena serve --port 0 --tls-cert arena.pem --tls-key
    arena.key` with the docs' test certificate said "arena referee listening on
    127.0.0.1:45277 (TLS)"; the bot given that address, `--arena 127.0.0.1:45277 --ca
    arena.pem`, failed its handshake (exit 2: the certificate is for localhost). The line
    now names the names the certificate lists, as docs/referee.md says."""
    import os
    import subprocess
    import sys

    from tests.support.certs import make_cert
    from tests.support.spawn import readline_within

    cert, key = make_cert(tmp_path)
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{b} = "tok-{b * 16}"\n' for b in "abc"))
    tokens.chmod(0o600)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--tokens", str(tokens), "--port", "0",
         "--tls-cert", str(cert), "--tls-key", str(key), "--record-dir", str(tmp_path / "rec")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = readline_within(proc.stdout, 60)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert line is not None and line.startswith("arena referee listening on 127.0.0.1:"), line
    assert line.rstrip().endswith(
        "(TLS: bots connect by a name its certificate lists: localhost)"
    ), line
    assert "(TLS: bots connect by a name its certificate lists: localhost)" in _joined(
        DOCS / "referee.md"
    )


def test_workers_load_a_bot_kept_in_a_copy_of_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot author's journey on another machine: `pip install ./thousand-arena`, the bot
    written beside the copy's sources (`thousand-arena/mybot.py`). `arena-bot run
    thousand-arena/mybot.py:Lowest` played, but with `--workers 2` "no worker process
    could load the bot": spawn gave each worker the runner's import path, where the loader
    had put the bot's folder first, and the worker imported the copy's `sdk` and `arena`
    (no protobuf code generated there: ImportError) before it loaded the bot. The workers
    now import the arena's own packages, as the runner did."""
    import sys

    from sdk.loader import load_bot
    from sdk.workers import Processes

    copy = tmp_path / "thousand-arena"
    for package in ("sdk", "arena", "engine"):  # (sources that do not import, as the copy's)
        (copy / package).mkdir(parents=True)
        (copy / package / "__init__.py").write_text(
            f"raise ImportError('the copy of {package} was imported')\n", encoding="utf-8"
        )
    bot = copy / "mybot.py"
    bot.write_text(
        "from sdk import Bot\n\n\nclass Lowest(Bot):\n    name = 'lowest'\n", encoding="utf-8"
    )
    spec = f"{bot}:Lowest"
    monkeypatch.setattr(sys, "path", list(sys.path))  # (the loader puts the folder first)
    assert load_bot(spec).name == "lowest" and sys.path[0] == str(copy)
    procs = Processes(spec, 1, "lowest")
    try:
        procs.wait_ready(60)
        assert not procs.none_loaded(), "the worker could not load the bot"
        remote = procs.make("m1")
        assert remote is not None and remote.name == "lowest"
        remote.close()
    finally:
        procs.shutdown()
    assert sys.path[0] == str(copy)  # (this process's path as the loader left it)


def test_a_fresh_run_stopped_while_the_bots_connect_says_it_forgot_nothing(
    tmp_path: Path,
) -> None:
    """An organiser's journey: `arena tournament --config cup.toml --fresh` over a finished
    tournament, stopped with Ctrl-C while it waited for a remote bot, said "Interrupted
    (SIGINT) as the tournament ended. Every match (24) is stored ...: there is nothing to
    resume": no match had been played, and --fresh had not yet forgotten the old ones (it
    does once every bot has connected, docs/tournament.md). It now says so."""
    import os
    import signal
    import subprocess
    import sys

    from arena.web.demo import make_demo_db
    from tests.support.spawn import readline_within

    db = tmp_path / "cup.sqlite"
    make_demo_db(db, matches=6, bots=("ann", "bob", "cid"), tournament_id="cup")  # finished
    config = tmp_path / "cup.toml"
    config.write_text(
        f'id = "cup"\nname = "cup"\nport = 0\nbot_wait_s = 300\ndb = "{db}"\n'
        f'out = "{tmp_path / "out"}"\n[bots]\n'
        + "".join(f'{b} = {{ remote = true, token = "tok-{b}-0123456789" }}\n' for b in "abc"),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "tournament", "--config", str(config), "--fresh",
         "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        said: list[str] = []
        while not said or "waiting up to" not in said[-1]:
            line = readline_within(proc.stderr, 60)
            assert line, f"arena tournament said nothing more in 60 s after {said}"
            said.append(line)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    words = " ".join(err.split())
    assert "Interrupted (SIGINT) before the first match. Nothing was played, and --fresh " in (
        words
    )
    assert "forgot nothing (it does once every bot has connected): the 6 matches of cup" in words
    assert "run the same command again to start it over." in words
    assert "as the tournament ended" not in words and "nothing to resume" not in words
    doc = _joined(DOCS / "tournament.md")
    assert 'Ctrl-C while the bots connect: "Nothing was played, and --fresh forgot nothing"' in doc
