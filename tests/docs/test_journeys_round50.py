"""Round 50: three users' journeys read from README.md and docs/*.md alone: a client author
without the SDK (stubs generated from proto/ in a folder of his own, a bot answering every
kind of decision of classic, 1001 and 1001-4p, cut off mid-match and resuming) in an
organiser's `arena serve` beside SDK bots; a bot author entering a club's `make tournament`
and a config of his own, reading why his bot lost; an organiser publishing the results (the
leaderboard files, `arena web` on the LAN, records taken to another machine, a second
tournament in the same database). What did not hold is pinned here.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from arena.storage import Storage
from arena.tournament.schedule import SCHEDULE_VERSION
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db


def _arena(*args: str) -> tuple[int, str, str]:
    got = CliRunner().invoke(arena, list(args))
    return got.exit_code, got.stdout, got.stderr


def test_a_tournaments_records_are_exported_and_replayed_elsewhere_without_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An organiser moving a tournament's records to another machine found no way to
    write them out (only `sqlite3 ... SELECT record_json`, one match at a time, with a
    tool the docs do not install). `arena replay --list --export DIR` writes each listed
    match's record as `DIR/<match id>.json`; in another folder, with no database, each is
    shown and checked, and the match id alone, typed as at home, is answered with the file
    that holds it, where it said only that no database was there."""
    db = tmp_path / "club.sqlite"
    ids = make_demo_db(db, matches=3, max_deals=2)
    code, out, err = _arena("replay", "--list", "--db", str(db), "--export",
                            str(tmp_path / "away" / "exported"))  # fmt: skip
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines()] == ids  # the list, as before
    assert f"wrote 3 record(s) into {tmp_path / 'away' / 'exported'}" in err
    assert sorted(p.name for p in (tmp_path / "away" / "exported").iterdir()) == sorted(
        f"{i}.json" for i in ids
    )
    monkeypatch.chdir(tmp_path / "away")  # another machine: no runs/, no database
    for match_id in ids:
        code, out, err = _arena("replay", "--check", f"exported/{match_id}.json")
        assert code == 0 and "OK: every action is legal" in out, (out, err)
    code, out, err = _arena("replay", f"exported/{ids[1]}.json")
    assert code == 0 and "Final standings" in out, err
    suffix = ids[1].rsplit("-", 1)[1]
    code, out, err = _arena("replay", suffix)
    assert code == 2
    assert f"its record is the file exported/{ids[1]}.json: arena replay exported/{ids[1]}.json" \
        in " ".join(err.split())  # fmt: skip
    # a DIR that cannot be made is named, exit 1; a file, exit 2 (click's)
    (tmp_path / "away" / "plain").write_text("", encoding="utf-8")
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", "plain/sub")
    assert code == 1 and "error: --export plain/sub: cannot write there: Not a directory" in err
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", "plain")
    assert code == 2 and "is a file" in err
    # --export names what it writes: not beside one match's RECORD
    code, _, err = _arena("replay", f"exported/{ids[1]}.json", "--export", "x")
    assert code == 2 and "--export goes with --list" in err


def test_an_unfinished_duplicate_tournament_exports_no_deals_still_to_be_played(
    tmp_path: Path,
) -> None:
    """The records written out are what `arena web` shows: while a tournament of duplicate
    deals runs, a played match deals the cards of the matches of its set still to come, and
    a participant who read its file would know his opponents' hands there. Those are left
    out, with their number, until the tournament has ended."""
    db = tmp_path / "cup.sqlite"
    config = {"name": "cup", "ruleset": "classic", "deals": "duplicate",
              "schedule": SCHEDULE_VERSION, "matches_per_table": 1}  # fmt: skip
    with Storage(db) as st:
        st.ensure_tournament("cup-1", name="cup", fingerprint="cup-1", config=config,
                             total_matches=6, bots=[(b, "demo") for b in DEMO_BOTS])  # fmt: skip
        for i in range(2):
            st.save_match("cup-1", match_id=f"cup-1-m0000{i}", index=i, table=0, set_no=0,
                          seed=7, seats=DEMO_BOTS, record=demo_record(7, DEMO_BOTS, max_deals=1),
                          started_at=1.7e9 + i, finished_at=1.7e9 + i + 1)  # fmt: skip
    out_dir = tmp_path / "exported"
    code, out, err = _arena("replay", "--list", "--db", str(db), "--export", str(out_dir))
    assert code == 0, err
    assert len(out.splitlines()) == 2  # listed all the same
    said = " ".join(err.split())
    assert "wrote 0 record(s)" in said
    assert "2 match(es) left out: tournament cup-1 is unfinished" in said
    assert not list(out_dir.iterdir())
    with Storage(db) as st:
        st.finish_tournament("cup-1")
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(out_dir))
    assert code == 0 and "wrote 2 record(s)" in err and "left out" not in err
    assert len(list(out_dir.iterdir())) == 2


def test_arena_web_on_every_address_says_the_url_to_hand_out(tmp_path: Path) -> None:
    """An organiser sharing the pages on the LAN (`arena web --host 0.0.0.0`) was told only
    `serving ... at http://0.0.0.0:PORT/`, a URL no reader elsewhere can open, and nothing
    of what readers could see. A second line names the URL of this machine's address (or
    how to find it), localhost here, and that the pages have no password and no TLS; that
    URL answers. A copy of a database that holds two tournaments, the other forgotten,
    serves the one to share alone (docs/web.md, "Sharing the pages on a network")."""
    import json
    import signal
    import subprocess
    import sys
    from urllib.request import urlopen

    from tests.support.spawn import readline_within

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=2, max_deals=1, tournament_id="club-w1")
    make_demo_db(db, matches=2, max_deals=1, tournament_id="club-w2")
    pub = tmp_path / "pub.sqlite"
    pub.write_bytes(db.read_bytes())
    code, _, err = _arena("tournament", "--forget", "club-w1", "--db", str(pub), "--yes")
    assert code == 0, err
    child = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "web", "--db", str(pub), "--host", "0.0.0.0",
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        first = readline_within(child.stdout, 60) if child.stdout else None
        second = readline_within(child.stdout, 60) if child.stdout else None
        assert first is not None and "at http://0.0.0.0:" in first, first
        port = int(first.split("http://0.0.0.0:")[1].split("/")[0])
        assert second is not None, first
        assert second.startswith("every address of this machine: readers on the network "
                                 "open http://")  # fmt: skip
        assert f":{port}/ (by a host name only with --allow-host NAME)" in second
        assert f"here http://localhost:{port}/" in second
        assert "no password and in plain HTTP" in second
        handed = second.split("open ")[1].split(" ")[0]
        if "THIS-MACHINE" not in handed:  # (a machine with no network has no such address)
            with urlopen(handed + "api/tournaments", timeout=30) as answer:
                listed = json.load(answer)
            assert [t["id"] for t in listed] == ["club-w2"]
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(30)
        if child.stdout:
            child.stdout.close()


def test_the_protocol_page_says_how_to_generate_the_code_and_it_imports(tmp_path: Path) -> None:
    """A client author without the SDK had the proto and docs/protocol.md, which never said
    how to turn one into code, where the files land (`arena/v1/`, after the proto's path)
    or what to import: the examples use the checkout's generated code. The page's command,
    run as written in a folder outside the checkout, writes modules that import as it says,
    with the stub and messages it names."""
    import re
    import shlex
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "protocol.md").read_text(encoding="utf-8")
    command = re.search(r"```sh\n(python -m grpc_tools\.protoc [^\n]+)\n```", page)
    assert command is not None
    argv = shlex.split(command.group(1).replace("PATH/TO/thousand-arena", str(root)))
    done = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "arena" / "v1" / "arena_pb2.py").is_file()
    assert (tmp_path / "arena" / "v1" / "arena_pb2_grpc.py").is_file()
    probe = (
        "from arena.v1 import arena_pb2, arena_pb2_grpc\n"
        "assert callable(arena_pb2_grpc.ArenaStub)\n"
        "m = arena_pb2.BotMessage(hello=arena_pb2.Hello(protocol_version=1))\n"
        "print(m.WhichOneof('kind'))\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert ran.returncode == 0 and ran.stdout.strip() == "hello", ran.stderr
    assert "`from arena.v1 import arena_pb2, arena_pb2_grpc`" in " ".join(page.split())


def test_a_token_sent_in_the_wrong_form_is_told_what_form_came() -> None:
    """A client author who sent `authorization: <token>` (no "Bearer"), `Bearer: <token>`
    or `Token <token>` was told "missing token", as one who sent no such metadata at all:
    the token was there. The refusal now says which of the two it was, and never quotes
    the value (it may be the token)."""
    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc
    from tests.support.harness import serve_one_bot

    forms: dict[str, tuple[tuple[str, str], ...]] = {
        "none": (), "other key": (("x-token", "tok-x"),),
        "no scheme": (("authorization", "tok-x"),), "colon": (("authorization", "Bearer: tok-x"),),
        "other scheme": (("authorization", "Token tok-x"),),
    }  # fmt: skip

    async def body(ref: object, port: int) -> dict[str, tuple[object, str]]:
        out: dict[str, tuple[object, str]] = {}
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            for label, metadata in forms.items():
                for _ in range(5):  # (a Hello written as the refusal comes: INTERNAL, again)
                    call = pb_grpc.ArenaStub(ch).Play(metadata=metadata)
                    with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError):
                        await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                        await call.read()
                    out[label] = (await call.code(), await call.details() or "")
                    if out[label][0] != grpc.StatusCode.INTERNAL:
                        break
        return out

    got = serve_one_bot(body)
    head = "missing token: send metadata 'authorization: Bearer <token>' "
    for label in forms:
        code, details = got[label]
        assert code == grpc.StatusCode.UNAUTHENTICATED, (label, got[label])
        if label in ("none", "other key"):
            assert details == head + "(the call carried no 'authorization' metadata)", label
        else:
            assert details == head + ("(its 'authorization' metadata is not in that form: the "
                                      "word Bearer, one space, the token)"), label  # fmt: skip
        assert "tok-x" not in details


def test_a_command_bot_naming_arena_bot_outside_the_venv_is_told_where_it_is(
    tmp_path: Path,
) -> None:
    """A bot author's config with `command = "arena-bot run mybot.py:Mine --arena {arena}"`,
    run as the docs run it, `.venv/bin/arena tournament` with the environment not activated,
    stopped with "cannot launch bot 'mine' (arena-bot): No such file or directory", of a
    program that is there. It now says the name was not found in PATH and where this
    arena's Python has it, with what to write."""
    import os
    import subprocess
    import sys

    (tmp_path / "mine.toml").write_text(
        'name = "mine"\nmax_deals = 1\nbot_wait_s = 30\n[bots]\n'
        'mine = { command = "arena-bot run mybot.py:Mine --arena {arena}" }\n'
        'a = "random"\nb = "random"\n', encoding="utf-8")  # fmt: skip
    venv_bin = Path(sys.executable).parent
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not (Path(d) / "arena-bot").exists())  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--config", "mine.toml",
         "--no-progress"],
        cwd=tmp_path, env={**os.environ, "PATH": path or "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    said = " ".join(done.stderr.split())
    assert ("error: cannot launch bot 'mine' (arena-bot): No such file or directory: not "
            "found in any directory of PATH") in said  # fmt: skip
    if (venv_bin / "arena-bot").is_file():  # (the checkout's .venv, where the docs run it)
        assert (f"(this arena's Python has it in {venv_bin}, which PATH lacks: write it as "
                f"{venv_bin / 'arena-bot'}, or activate that environment") in said  # fmt: skip


@pytest.mark.slow  # (a tournament of 6 matches: about 4 s)
def test_a_local_bots_log_ends_as_the_tournament_page_says(tmp_path: Path) -> None:
    """A bot author reading his bot's log after `make tournament` found it ending in
    "stopping: signal SIGTERM" and "done (signal SIGTERM): ...", which nothing in the docs
    explained: had his bot been killed? docs/tournament.md now says that every run ends its
    local bots so, and that a crash reads otherwise; the log of a finished run ends so,
    with no runner's "exited with code" line."""
    import re
    import subprocess
    import sys

    (tmp_path / "mine.py").write_text(
        "from sdk import Bot\n\n\nclass Mine(Bot):\n    name = 'mine'\n", encoding="utf-8"
    )
    (tmp_path / "t.toml").write_text(
        'name = "t"\nmax_deals = 1\nconcurrency = 3\nbots = ["random", "heuristic", '
        '"mine.py:Mine"]\n', encoding="utf-8")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "tournament", "--config", "t.toml", "--no-progress"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "out" / "t" / "logs" / "Mine.log").read_text(encoding="utf-8")
    last = log.rstrip("\n").splitlines()[-2:]
    assert last[0].endswith("INFO sdk.client: stopping: signal SIGTERM"), last
    assert re.search(r"INFO sdk\.client: done \(signal SIGTERM\): 6 match\(es\), \d+ "
                     r"decision\(s\), 0 rejected, 0 bot error\(s\), 0 forfeited$",
                     last[1]), last  # fmt: skip
    assert "exited with code" not in log
    root = Path(__file__).resolve().parents[2]
    page = " ".join((root / "docs" / "tournament.md").read_text(encoding="utf-8").split())
    assert ("an `arena-bot` log then ends `stopping: signal SIGTERM` and `done (signal "
            "SIGTERM): 36 match(es), 332 decision(s), 0 rejected, 0 bot error(s), 0 forfeited`, "
            "which is no "
            "crash") in page  # fmt: skip


def test_the_list_of_a_bots_matches_names_its_worst_deal(tmp_path: Path) -> None:
    """A bot author reading why his bot lost had its matches' final scores (`arena replay
    --list --bot NAME`) and a histogram of its deal scores on the web, but nothing named
    the deal that cost it most, the one to replay first. The list now ends (on stderr) with
    it, as `arena replay` numbers deals, and the command that shows it."""
    import json
    import sqlite3

    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=3, max_deals=3)
    bot = DEMO_BOTS[1]
    with sqlite3.connect(db) as conn:  # what the bot scored in each deal, read by hand
        scored = [
            (json.loads(deltas)[seat], idx, number, match_id)
            for match_id, idx, number, deltas, seat in conn.execute(
                "SELECT d.match_id, m.idx, d.number, d.deltas_json, p.seat FROM deals d"
                " JOIN matches m ON m.id = d.match_id JOIN match_players p"
                " ON p.match_id = d.match_id WHERE p.bot = ?", (bot,))
            if json.loads(deltas)
        ]  # fmt: skip
    delta, _, number, match_id = min(scored)
    code, out, err = _arena("replay", "--list", "--db", str(db), "--bot", bot)
    assert code == 0 and len(out.splitlines()) == 3
    assert err.rstrip().splitlines()[-1] == (
        f"worst deal of {bot}: {match_id}, deal {number + 1} ({delta:+d}): arena replay {match_id}"
    )
    code, out, _ = _arena("replay", "--db", str(db), match_id)
    assert code == 0 and f"Deal {number + 1} — dealer" in out
    code, _, err = _arena("replay", "--list", "--db", str(db))  # (no bot named: no such line)
    assert code == 0 and "worst deal" not in err


@pytest.mark.slow  # (a referee process started and stopped: about 3.5 s)
def test_arena_serve_on_every_address_says_what_remote_bots_connect_to(tmp_path: Path) -> None:
    """An organiser opening `arena serve` to client authors on the LAN (`--host 0.0.0.0`)
    was told `listening on 0.0.0.0:PORT`, no address a bot elsewhere connects to. The line
    after `port N` names one (this machine's address on its default route), and a client
    that connects by it is welcomed."""
    import signal
    import subprocess
    import sys

    import grpc

    from arena.v1 import arena_pb2 as pb
    from arena.v1 import arena_pb2_grpc as pb_grpc
    from tests.support.spawn import readline_within

    tokens = tmp_path / "bots.toml"
    tokens.write_text('[bots]\nann = "tok-ann-123456"\nbob = "tok-bob-123456"\n'
                      'cid = "tok-cid-123456"\n', encoding="utf-8")  # fmt: skip
    tokens.chmod(0o600)
    child = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--tokens", str(tokens), "--host",
         "0.0.0.0", "--port", "0", "--record-dir", str(tmp_path / "records")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        lines = [readline_within(child.stdout, 60) if child.stdout else None for _ in range(3)]
        assert lines[0] is not None and "listening on 0.0.0.0:" in lines[0], lines
        port = int(lines[0].rsplit(":", 1)[1])
        assert lines[1] == f"port {port}\n", lines
        told = lines[2] or ""
        assert told.startswith("bots on other machines connect to "), lines
        address = told.split("connect to ")[1].split(" ")[0]
        if address == "this":  # (a machine with no network: said in words)
            assert f"this machine's address, port {port}" in told
            return
        assert address.endswith(f":{port}") and not address.startswith(("0.", "127."))
        with grpc.insecure_channel(address) as channel:
            call = pb_grpc.ArenaStub(channel).Play(
                iter([pb.BotMessage(hello=pb.Hello(protocol_version=1, matches=0))]),
                metadata=(("authorization", "Bearer tok-ann-123456"),),
            )
            first = next(call)
            assert first.welcome.bot_name == "ann"
            call.cancel()
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(60)
        if child.stdout:
            child.stdout.close()


def test_exported_records_are_checked_all_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the other machine the organiser checked the folder of exported records as a
    shell writes it, `arena replay --check exported/*.json`, and was told only "Got
    unexpected extra arguments (...)", with every file name. `--check` takes several: each
    is checked as alone, a last line counts them and names the ones that failed, and the
    exit code is the worst of theirs. Plain `arena replay` still shows one match, and says
    so when given several."""
    db = tmp_path / "club.sqlite"
    ids = make_demo_db(db, matches=3, max_deals=2)
    code, _, err = _arena("replay", "--list", "--db", str(db), "--export", str(tmp_path / "exp"))
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    files = [f"exp/{i}.json" for i in ids]
    code, out, err = _arena("replay", "--check", *files)
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("== ")] == [
        f"== {f}" for f in files
    ]
    assert out.count("OK: every action is legal") == 3
    assert out.rstrip().splitlines()[-1] == "checked 3 records: 3 OK"
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    code, out, err = _arena("replay", "--check", files[0], "bad.json", "gone.json")
    assert code == 2
    assert out.rstrip().splitlines()[-1] == (
        "checked 3 records: 1 OK, 2 not: bad.json (exit 2), gone.json (exit 2)"
    )
    code, _, err = _arena("replay", *files)
    # (round 55: the three are named after the count)
    assert code == 2 and "one match is shown at a time, not 3 (" in err
    assert "; --check checks several" in err


def test_a_bot_name_of_undecodable_bytes_is_no_bot_not_a_traceback(tmp_path: Path) -> None:
    """`--list --bot NAME` where NAME came from bytes a shell could not decode (a lone
    surrogate in Python's argv) ended in a traceback from SQLite's binding ("surrogates not
    allowed"), in the search for the tournaments the bot plays in and in the search for its
    worst deal; found by the long CLI fuzz. It is no bot, said as any other (exit 2); so
    with `--export`, and `arena-bot try --records` with a NUL is refused as a path."""
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    for extra in ([], ["--export", str(tmp_path / "exp")]):
        got = CliRunner().invoke(arena, ["replay", "--db", str(db), "--list", "--bot",
                                         "\udcff\udcfe", *extra])  # fmt: skip
        assert isinstance(got.exception, SystemExit), got.exception  # (not a traceback)
        assert got.exit_code == 2
        assert "error: --bot: no bot '\\udcff\\udcfe' in tournament demo" in got.stderr
    from sdk.cli import main as arena_bot

    got = CliRunner().invoke(arena_bot, ["try", "random", "-n", "1", "--records", "x\0y"])
    assert got.exit_code == 2 and "a path has no NUL character" in got.output, got.output


def test_a_tournament_on_every_address_names_the_address_remote_bots_connect_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With `host = "0.0.0.0"` the tournament told the organiser to connect remote bots to
    "this machine's address, port N" (no longer 0.0.0.0, round 8), leaving him to find
    which; it now names it as `arena serve` and `arena web` do (its address on its default
    route), when the machine has one."""
    import logging
    import re

    from arena.addresses import lan_address
    from arena.tournament import RunOptions, TournamentError, load_config, run

    path = tmp_path / "wild.toml"
    path.write_text(f'name = "wild"\nhost = "0.0.0.0"\nbot_wait_s = 0.2\n'
                    f'db = "{tmp_path / "w.sqlite"}"\nout = "{tmp_path / "o"}"\n'
                    '[bots]\nfar = { remote = true, token = "0123456789abcdef" }\n'
                    'a = "random"\nb = "random"\n', encoding="utf-8")  # fmt: skip
    with caplog.at_level(logging.WARNING), pytest.raises(TournamentError, match="never connected"):
        run(load_config(path), RunOptions(progress=False))
    waiting = next(r.getMessage() for r in caplog.records if "remote bots" in r.getMessage())
    port = re.search(r"this machine's address, port (\d+)", waiting)
    assert port is not None, waiting
    address = lan_address()
    if address is not None:
        assert f"port {port[1]} ({address}:{port[1]} on its default route)" in waiting, waiting
