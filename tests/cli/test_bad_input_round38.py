"""Bad input, round 38: combinations and surroundings earlier rounds did not feed in.

A standard output whose encoding has no suits (``PYTHONIOENCODING=ascii``, a Windows code
page under a redirect); ``arena leaderboard --out DIR/`` naming a directory that does not
exist yet; ``http_proxy`` set in the environment of a tournament's bots; and the sequences
that were checked and found fine, pinned: ruleset options at their boundaries, a record
whose ruleset is a file name, ``arena-bot try --vs`` lists that repeat or name the bot
itself. Each either works as documented or is refused in one line naming what was wrong,
never a traceback, and nothing stored is lost.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main as arena
from arena.referee import Referee, RefereeConfig, start_server
from bots.counting import CountingBot
from bots.heuristic import HeuristicBot
from bots.random_bot import RandomBot
from engine.record import replay
from engine.rules import PRESETS, Ruleset, RulesetError
from sdk.cli import main as arena_bot
from sdk.local import play_local
from tests.cli.test_bad_input import _fails, _invoke, _record, _stored_tournament

ROOT = Path(__file__).resolve().parents[2]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------ an output encoding without the suits


def _in(charset: str, cmd: Any, args: list[str]) -> Result:
    """``cmd`` run with standard streams of ``charset`` (strict, as Python makes them for
    ``PYTHONIOENCODING=ascii`` or a code page)."""
    return CliRunner(charset=charset).invoke(cmd, args)


@pytest.mark.parametrize("charset", ["ascii", "latin-1", "cp1252"])
def test_a_tournament_whose_output_has_no_suits_still_writes_its_leaderboard(
    tmp_path: Path, charset: str
) -> None:
    """Defect: with a standard output whose encoding is no Unicode one
    (``PYTHONIOENCODING=ascii``; a Windows code page under a redirect), ``arena
    tournament`` ended, after every match was stored, in a UnicodeEncodeError traceback at
    the leaderboard's title (its dash, μ and σ): exit 1, and the leaderboard files were
    never written. What the encoding lacks is now written as backslash escapes, as
    Python's own standard error writes it."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    r = _in(charset, arena, ["tournament", "--config", str(config), "--no-progress"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 0, r.output
    assert "\\u03bc" in r.output  # μ, written out
    assert sorted(p.name for p in (tmp_path / "out").glob("leaderboard.*")) == [
        "leaderboard.csv", "leaderboard.html", "leaderboard.json", "leaderboard.md",
    ]  # fmt: skip
    assert "6/6 stored" in r.output
    assert db.exists()


@pytest.mark.parametrize("charset", ["ascii", "latin-1"])
def test_replay_leaderboard_and_try_whose_output_has_no_suits_escape_them(
    tmp_path: Path, charset: str
) -> None:
    """Defect: ``arena replay`` (its first ♠), ``arena leaderboard`` (its title's dash) and
    ``arena-bot try`` under an output encoding without them ended in a UnicodeEncodeError
    traceback, exit 1, nothing shown. Each now shows everything, what the encoding lacks
    as backslash escapes (``J\\u2660``)."""
    config = _stored_tournament(tmp_path)
    record = tmp_path / "r.json"
    record.write_text(json.dumps(_record()), encoding="utf-8")
    r = _in(charset, arena, ["replay", str(record)])
    assert r.exit_code == 0 and r.exception is None, (r.output, r.exception)
    assert "\\u2660" in r.output or "\\u2663" in r.output  # a suit, written out
    r = _in(charset, arena, ["leaderboard", "--config", str(config)])
    assert r.exit_code == 0 and r.exception is None, (r.output, r.exception)
    assert "\\u2014" in r.output
    r = _in(charset, arena_bot, ["try", "random", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 0 and r.exception is None, (r.output, r.exception)
    assert "slowest decision" in r.output


def test_a_utf8_output_is_left_strict() -> None:
    """What the fix changes is only an output that cannot encode the suits: a UTF-8 one
    writes them as they are (no escapes)."""
    r = CliRunner().invoke(arena_bot, ["try", "random", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 0, r.output
    assert "\\u" not in r.output


# --------------------------------------------------- --out naming a directory with a slash


def test_a_leaderboard_out_ending_in_a_slash_is_a_directory(tmp_path: Path) -> None:
    """Defect: ``arena leaderboard --out results/`` (a directory, by its slash, as every
    Unix tool reads it) wrote a *file* named ``results`` when no such directory existed
    yet, and replaced a file of that name when one did: a path loses its trailing slash.
    It is now a directory, made if missing, as an existing one is taken; a file where it
    should be is named, and left as it was."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", f"{tmp_path / 'results'}/"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "results").is_dir()
    assert "│ a " in (tmp_path / "results" / "leaderboard.txt").read_text(encoding="utf-8")
    r = _invoke(arena, ["leaderboard", "--config", str(config), "--format", "json",
                        "--out", f"{tmp_path / 'deep' / 'er'}/"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "deep" / "er" / "leaderboard.json").read_text())
    blocker = tmp_path / "notes"
    blocker.write_text("mine\n", encoding="utf-8")
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", f"{blocker}/"])
    _fails(r, 1, "notes: a file, not a directory")
    assert blocker.read_text(encoding="utf-8") == "mine\n"
    # Without the slash, a path that does not exist is still a file name (documented).
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(tmp_path / "plain")])
    assert r.exit_code == 0 and (tmp_path / "plain").is_file(), r.output


# ------------------------------------------------------------- http_proxy and local bots


@pytest.mark.parametrize(
    ("target", "loopback"),
    [
        ("127.0.0.1:50051", True), ("127.8.9.10:1", True), ("[::1]:50051", True),
        ("localhost:1", True), ("LocalHost.:1", True), ("dns:///localhost:1", True),
        ("ipv4:127.0.0.1:1", True), ("ipv6:[::1]:1", True),
        ("arena.example:443", False), ("10.0.0.1:1", False), ("[fe80::1]:1", False),
        ("unix:/tmp/arena.sock", False), ("localhost.example:1", False),
    ],
)  # fmt: skip
def test_which_targets_are_this_machines_loopback(target: str, loopback: bool) -> None:
    from sdk.client import is_loopback_target

    assert is_loopback_target(target) is loopback


def test_bots_reach_an_arena_on_loopback_whatever_http_proxy_says(tmp_path: Path) -> None:
    """Defect: with ``http_proxy`` (or ``https_proxy``, ``grpc_proxy``) set, as on a company
    network or a CI runner, gRPC sent the bot's connection to an arena on 127.0.0.1
    through the proxy: ``arena tournament`` ended "3 of 3 bots did not connect", each log
    saying the arena refused the connection (the proxy had). No proxy can reach this
    machine's loopback: it is now reached directly."""
    dead_proxy = "http://127.0.0.1:9"  # (the discard port: nothing listens on it here)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "http_proxy": dead_proxy,
           "https_proxy": dead_proxy, "grpc_proxy": dead_proxy}  # fmt: skip
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)

    async def main() -> list[str]:
        ref = Referee(RefereeConfig())
        names = ("p1", "p2", "p3")
        for name in names:
            ref.add_bot(name, f"tok-{name}-0123456789")
        server, port = await start_server(ref, port=0)
        cli = [sys.executable, "-c", "from sdk.cli import main; main()", "run", "random"]
        procs = [
            subprocess.Popen(
                [*cli, "--arena", f"127.0.0.1:{port}", "--token", f"tok-{name}-0123456789"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=tmp_path,
            )
            for name in names
        ]
        try:
            return await ref.wait_for_bots(list(names), timeout=30)
        finally:
            for p in procs:
                p.kill()
                p.wait()
            await server.stop(None)

    assert asyncio.run(main()) == []


# ----------------------------------------------------- pinned: found fine, kept so


_BOUNDARY_OPTIONS: list[dict[str, Any]] = [
    {"opening_bid": 120}, {"target": 5, "barrel": False}, {"target": 100, "barrel_at": 95},
    {"max_deals": 1}, {"rounding": 1000}, {"rounding": 7}, {"players": 4},
    {"players": 4, "opening_bid": 120}, {"bid_step": 120, "opening_bid": 120},
    {"barrel_at": 1, "barrel_deals": 1}, {"barrel_penalty": 10_000},
    {"nines_talon_value": 0}, {"players": 4, "rounding": 1000, "target": 5, "barrel": False},
]  # fmt: skip


@pytest.mark.parametrize("base", ["classic", "1001"])
@pytest.mark.parametrize("options", _BOUNDARY_OPTIONS, ids=str)
def test_every_option_at_its_boundary_plays_whole_matches(
    base: str, options: dict[str, Any]
) -> None:
    """Pinned (found fine): a ruleset with options at their edges (an opening bid of 120, a
    target below the opening bid, a rounding larger than any take, a 4-player classic, a
    barrel at 1) plays whole legal matches with the bundled bots, and its record replays
    with every score checked."""
    rules = dataclasses.replace(PRESETS[base], **options)
    bots = [RandomBot, HeuristicBot, CountingBot, RandomBot][: rules.players]
    m = play_local(bots, rules, seed=3, max_deals=rules.max_deals or 6, strict=True)
    assert len(m.record["players"]) == rules.players
    assert replay(m.record).is_over or len(m.record["deals"]) == (rules.max_deals or 6)


@pytest.mark.parametrize(
    ("options", "key", "words"),
    [
        ({"opening_bid": 125}, "opening_bid", "must be at most 120"),
        ({"bid_step": 10, "opening_bid": 105}, "opening_bid", "multiple of bid_step 10"),
        ({"bid_step": 7}, "bid_step", "multiple of 5"),
        ({"barrel_at": 1000}, "barrel_at", "below target 1000"),
        ({"target": 50}, "barrel_at", "below target 50"),
        ({"max_deals": -1}, "max_deals", "must not be negative"),
        ({"rounding": 0}, "rounding", "must be positive"),
        ({"players": 5}, "players", "must be 3 or 4"),
        ({"throw_in_bonus": 2**32 - 1}, "throw_in_bonus", "must be at most"),
    ],
)
def test_options_past_their_boundary_are_refused_naming_the_key(
    options: dict[str, Any], key: str, words: str
) -> None:
    """Pinned (found fine): one past each boundary is a RulesetError naming the key."""
    with pytest.raises(RulesetError) as e:
        dataclasses.replace(PRESETS["classic"], **options)
    assert e.value.key == key and words in str(e.value), str(e.value)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    opening=st.integers(1, 30).map(lambda k: 5 * k),
    step=st.sampled_from([5, 10, 20, 40, 60, 120]),
    target=st.integers(1, 1200),
    rounding=st.integers(1, 2000),
    players=st.sampled_from([3, 4]),
    barrel=st.booleans(),
)
def test_a_ruleset_file_of_any_numbers_loads_or_is_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory,
    opening: int, step: int, target: int, rounding: int, players: int, barrel: bool,
) -> None:  # fmt: skip
    """Pinned (found fine): ``arena rules FILE`` of a ruleset file with these numbers prints
    it (exit 0) or refuses it with exit 2 in one line naming the file and a key."""
    path = tmp_path_factory.mktemp("rs") / "edge.toml"
    path.write_text(
        f'preset = "classic"\nname = "edge"\nopening_bid = {opening}\nbid_step = {step}\n'
        f"target = {target}\nrounding = {rounding}\nplayers = {players}\n"
        f"barrel = {str(barrel).lower()}\n",
        encoding="utf-8",
    )
    r = _invoke(arena, ["rules", str(path)])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    try:
        Ruleset(opening_bid=opening, bid_step=step, target=target, rounding=rounding,
                players=players, barrel=barrel, name="edge")  # fmt: skip
    except RulesetError as e:
        _fails(r, 2, "edge.toml", e.key)
        assert len(r.output.strip().splitlines()) == 1, r.output
    else:
        assert r.exit_code == 0, r.output


@pytest.mark.parametrize("ruleset", ["gone.toml", "rules/house.toml", "/etc/passwd", "."])
def test_a_record_whose_ruleset_is_a_file_name_is_not_read_from_disk(
    tmp_path: Path, ruleset: str
) -> None:
    """Pinned (found fine): a record names its ruleset as a dict or a preset; one naming a
    file (which may be gone, or be anything) is refused as an unknown preset, exit 1,
    and the file is never opened."""
    (tmp_path / "gone.toml").write_text('preset = "1001"\nname = "x"\n', encoding="utf-8")
    record = {**_record(), "ruleset": ruleset}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    for check in ([], ["--check"]):
        r = _invoke(arena, ["replay", *check, str(path)])
        _fails(r, 1, "unknown preset")


@pytest.mark.parametrize(
    "vs",
    ["random,random", "heuristic,heuristic", "bot.py,random", "bot.py:Mine,bot.py",
     "bots.random_bot:RandomBot,random"],
)  # fmt: skip
def test_try_with_opponents_that_repeat_or_are_the_bot_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vs: str
) -> None:
    """Pinned (found fine): ``--vs`` naming an opponent twice, or the bot under test itself
    (by its file, or by the bundled bot it subclasses), plays, each seat a row of its own
    (``random#1``, ``random#2``: the names repeat, as docs/writing-a-bot.md says)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text(
        "from bots.random_bot import RandomBot\n\nclass Mine(RandomBot):\n    pass\n",
        encoding="utf-8",
    )
    r = _invoke(arena_bot, ["try", "bot.py", "-n", "3", "--max-deals", "1", "--vs", vs])
    assert r.exit_code == 0, r.output
    rows = [line for line in r.output.splitlines() if line.startswith("│")]
    assert len(rows) == 3, r.output
    assert len({row.split("│")[1].strip() for row in rows}) == 3, r.output


@pytest.mark.parametrize(
    ("vs", "words"),
    [
        ("random,", "an empty name in 'random,'"),
        ("random,,heuristic", "an empty name"),
        ("random,random,random", "3 opponents named, but the ruleset seats 3 players"),
        ("Random", "did you mean 'random'?"),
        ("bot.py:Nope", "has no 'Nope' (its bots: Mine)"),
    ],
)
def test_try_with_a_bad_opponent_list_is_one_line_naming_vs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vs: str, words: str
) -> None:
    """Pinned (found fine): a bad ``--vs`` list is exit 2 naming ``--vs`` and the fault."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.py").write_text(
        "from bots.random_bot import RandomBot\n\nclass Mine(RandomBot):\n    pass\n",
        encoding="utf-8",
    )
    _fails(_invoke(arena_bot, ["try", "bot.py", "-n", "1", "--vs", vs]), 2, "--vs", words)


# ------------------------------------------------------------ GRPC_POLL_STRATEGY of junk


@pytest.mark.parametrize("value", ["", "junk", "EPOLL1", " epoll1", "epollex"])
def test_a_poll_strategy_grpc_would_abort_on_is_refused_naming_it(
    tmp_path: Path, value: str
) -> None:
    """Defect: ``GRPC_POLL_STRATEGY`` set to what gRPC knows no poll strategy by (junk, a
    capital, or empty: ``export GRPC_POLL_STRATEGY=``) made gRPC abort the process at its
    first server or channel: exit 134 (SIGABRT) after one line of gRPC's own, ``arena
    tournament`` leaving its database locked and its tournament registered. ``arena
    tournament``, ``arena serve`` and ``arena-bot run`` now refuse it at once, exit 2, in
    one line naming the variable; the stored results are not touched."""
    config = _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    before = _digest(db)
    env = {"GRPC_POLL_STRATEGY": value}
    words = ("GRPC_POLL_STRATEGY=", "names no poll strategy gRPC knows", "epoll1, poll or all")
    r = _invoke(arena, ["tournament", "--config", str(config), "--no-progress"], env=env)
    _fails(r, 2, *words)
    assert _digest(db) == before
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        '[bots]\na = "tok-a-0123456789abcdef"\nb = "tok-b-0123456789abcdef"\n'
        'c = "tok-c-0123456789abcdef"\n',
        encoding="utf-8",
    )
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0"], env=env)
    _fails(r, 2, *words)
    r = _invoke(arena_bot, ["run", "random", "--arena", "127.0.0.1:1",
                            "--token", "tok-a-0123456789abcdef"], env=env)  # fmt: skip
    _fails(r, 2, *words)


@pytest.mark.parametrize("value", ["poll", "epoll1", "all", "epollex,poll", "epoll1,"])
def test_a_poll_strategy_grpc_takes_is_left_to_it(tmp_path: Path, value: str) -> None:
    """The check refuses only what gRPC would abort on: a list holding one it knows runs."""
    config = _stored_tournament(tmp_path)
    r = _invoke(arena, ["tournament", "--config", str(config), "--no-progress"],
                env={"GRPC_POLL_STRATEGY": value})  # fmt: skip
    assert r.exit_code == 0, r.output


# ------------------------------------------------- a database where out or its logs go


@pytest.mark.parametrize(
    ("db", "out"), [("o/logs", "o"), ("o", "o"), ("logs", "."), ("o/./logs/x/..", "o")]
)
def test_a_database_where_out_or_its_logs_directory_goes_is_refused_naming_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: str, out: str
) -> None:
    """Defect: a config whose ``db`` is its ``out`` directory or ``out/logs`` (a database
    at the bots' log directory) was taken: the run made the database there, then failed
    to make the directory (exit 1, "cannot write the log of bot 'a' ... check the `out`
    directory, --out"), the database blamed on ``out``. Refused now as a database that is
    a file the run writes is, in one line naming ``db``, exit 2, before anything is made."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ow.toml"
    config.write_text(
        f'name = "ow"\nmax_deals = 2\ndb = "{db}"\nout = "{out}"\n'
        '[bots]\na = "random"\nb = "random"\nc = "random"\n',
        encoding="utf-8",
    )
    r = _invoke(arena, ["tournament", "--config", str(config), "--no-progress"])
    text = _fails(r, 2, "ow.toml: db:", "is the directory the tournament writes")
    assert text.count("Error") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ow.toml"]


# ------------------------------------------- a records directory that is a device or a FIFO


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("fifo", "it is there, and no directory"),
        ("device", "it is there, and no directory"),
        ("dangling link", "a symbolic link to '/nowhere/at/all', which is not there"),
    ],
)
def test_a_records_directory_that_is_a_device_or_fifo_is_said_to_be_no_directory(
    tmp_path: Path, kind: str, words: str
) -> None:
    """Defect: ``arena-bot try --records`` and ``arena serve --record-dir`` given what is
    there and no directory but no regular file either (``/dev/null``, a FIFO, a link to
    nothing) said
    "cannot make the directory ...: File exists" (mkdir's word), which read as if a
    directory were in the way. It is now said to be there, and no directory."""
    if kind == "fifo":
        where = tmp_path / "pipe"
        os.mkfifo(where)
    elif kind == "dangling link":
        where = tmp_path / "link"
        where.symlink_to("/nowhere/at/all")
    else:
        where = Path(os.devnull)
    r = _invoke(arena_bot, ["try", "random", "-n", "1", "--records", str(where)])
    text = _fails(r, 2, "--records", str(where), words)
    assert "File exists" not in text
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        '[bots]\na = "tok-a-0123456789abcdef"\nb = "tok-b-0123456789abcdef"\n'
        'c = "tok-c-0123456789abcdef"\n',
        encoding="utf-8",
    )
    r = _invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                        "--record-dir", str(where)])  # fmt: skip
    text = _fails(r, 2, "--record-dir", str(where), words)
    assert "File exists" not in text


def test_tokens_file_names_differing_only_in_case_are_two_bots(tmp_path: Path) -> None:
    """Pinned (found fine, now in docs/referee.md): in ``arena serve``'s tokens file
    ``Alice`` and ``alice`` are two bots, each with its own token, and one token shared by
    both is refused naming both. (The file is read again when it changes while the arena
    runs: tests/cli/test_tokens_reload_round49.py.)"""
    from arena.cli.serve import load_tokens

    path = tmp_path / "tokens.toml"
    path.write_text('[bots]\nAlice = "tok-1-0123456789"\nalice = "tok-2-0123456789"\n',
                    encoding="utf-8")  # fmt: skip
    assert load_tokens(path) == {"Alice": "tok-1-0123456789", "alice": "tok-2-0123456789"}
    path.write_text('[bots]\nAlice = "tok-1-0123456789"\nalice = "tok-1-0123456789"\n',
                    encoding="utf-8")  # fmt: skip
    r = _invoke(arena, ["serve", "--tokens", str(path), "--port", "0"])
    _fails(r, 2, "--tokens", "bots.alice: the same token as bots.Alice")


def test_a_leaderboard_out_that_is_a_link_into_a_missing_directory_says_so(
    tmp_path: Path,
) -> None:
    """Defect: ``arena leaderboard --out standings.json``, that name a symbolic link to a
    file in a directory that is not there, said "cannot write standings.json: No such file
    or directory" of a link that is there. It now names the link's target and the missing
    directory (exit 1, as every --out that cannot be written). A link to a file that is not
    there yet, in a directory that is, is written through, as a shell's `>` would."""
    _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    link = tmp_path / "standings.json"
    link.symlink_to(tmp_path / "gone" / "s.json")
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(link)])
    _fails(r, 1, "standings.json", "a symbolic link to", "whose directory is not there")
    assert link.is_symlink() and not (tmp_path / "gone").exists()
    other = tmp_path / "other.json"
    other.symlink_to(tmp_path / "s.json")
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", str(other)])
    assert r.exit_code == 0, r.output
    assert other.is_symlink() and json.loads((tmp_path / "s.json").read_text())
