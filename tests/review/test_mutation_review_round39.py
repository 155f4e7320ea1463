"""Mutation review, round 39: the product code of rounds 38 and 39 (``git diff
a74596c..HEAD -- engine arena sdk bots``), mutated by hand one change at a time. Each test
here kills a mutant that the suite let live (the mutant named in its docstring); each goes
through the public surface (the CLIs, the SDK) where it can."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import arena.web.data as web_data
from arena.cli import main as arena
from arena.storage import Storage
from arena.web import DataSource
from arena.web.demo import DEMO_BOTS, demo_record, make_demo_db
from bots import load
from engine import Action, PlayerView
from sdk import Bot, play_local
from sdk.cli import main as arena_bot
from tests.cli.test_bad_input import _fails, _invoke, _stored_tournament

TOKEN = "tok-a-0123456789abcdef"


def test_a_long_poll_strategy_is_shown_cut_at_40_characters() -> None:
    """Mutant (options.py, check_grpc_environment): the cut at 40 characters moved to 400.
    A long junk value (a pasted line) is shown as its first 40 characters and "...", so
    the refusal stays one readable line."""
    value = "junk" + "y" * 100
    r = _invoke(
        arena_bot,
        ["run", "random", "--arena", "127.0.0.1:1", "--token", TOKEN],
        env={"GRPC_POLL_STRATEGY": value},
    )
    text = _fails(r, 2, f"GRPC_POLL_STRATEGY={value[:40]!r}...", "names no poll strategy")
    assert value[:41] not in text


def test_records_as_a_link_to_a_device_is_not_said_to_lead_nowhere(tmp_path: Path) -> None:
    """Mutant (options.py, no_directory): every symbolic link said "a symbolic link to ...,
    which is not there". A link to what is there and no directory (``/dev/null``) is said
    to be there, and no directory."""
    link = tmp_path / "records"
    link.symlink_to(os.devnull)
    r = _invoke(arena_bot, ["try", "random", "-n", "1", "--records", str(link)])
    text = _fails(r, 2, "--records", "it is there, and no directory")
    assert "which is not there" not in text


def test_a_leaderboard_out_directory_named_like_a_file_gets_the_table(tmp_path: Path) -> None:
    """Mutant (leaderboard.py, the format's default): ``--out results.json/`` not taken as a
    directory when choosing the format. A directory by its slash is no file whose extension
    names the format: it gets the table (``leaderboard.txt``), as an existing directory of
    that name does, not a ``leaderboard.json`` in it."""
    _stored_tournament(tmp_path)
    db = tmp_path / "t.sqlite"
    new = tmp_path / "results.json"
    r = _invoke(arena, ["leaderboard", "--db", str(db), "--out", f"{new}/"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in new.iterdir()) == ["leaderboard.txt"]
    assert "│ a " in (new / "leaderboard.txt").read_text(encoding="utf-8")


def test_a_kept_leaderboards_tournament_list_counts_what_its_rows_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant (web/data.py, DataSource.leaderboard): the tournament list read without the
    counted tournament in place. While a running tournament's slow leaderboard is kept, the
    picker's entry for it says the matches its rows count, as ``tournament`` does, not the
    count of now (round 38 had written the list again)."""
    path = tmp_path / "live.sqlite"
    make_demo_db(path, matches=2, max_deals=2)
    with Storage(path) as st:  # still running
        st.conn.execute("UPDATE tournaments SET finished_at = NULL")
    source = DataSource(path)
    monkeypatch.setattr(web_data, "SLOW_S", 0.0)  # every leaderboard is slow ...
    monkeypatch.setattr(web_data, "THROTTLE", 1e9)  # ... and kept
    first = source.leaderboard(None)
    with Storage(path) as st:
        st.save_match("demo", match_id="demo-m0090", index=2, table=0, set_no=0, seed=11,
                      seats=DEMO_BOTS, record=demo_record(11, DEMO_BOTS, max_deals=2),
                      started_at=0.0, finished_at=1.0)  # fmt: skip
    later = source.leaderboard(None)
    assert later["version"] == first["version"]  # the kept document
    listed = {t["id"]: t["completed"] for t in later["tournaments"]}
    assert listed["demo"] == later["tournament"]["completed"] == 2


@pytest.mark.parametrize("value", ["dns:///::1", "dns:::1", "dns:///fe80::1"])
def test_a_dns_target_of_an_ipv6_address_without_brackets_is_taken(value: str) -> None:
    """Mutant (sdk/cli.py, _target_problem): a ``dns:`` target's port read after the first
    colon of any name. gRPC reads an unbracketed name of several colons as an IPv6 host
    without a port (443), and connects it: no port "must be a number" there."""
    from sdk.cli import _address_problem

    assert _address_problem(value) is None


@pytest.mark.parametrize(
    ("value", "kind"), [("ipv4::50051", "IPv4 addresses"), ("ipv6:[]:50051", "IPv6 addresses")]
)
def test_an_ipv4_or_ipv6_target_with_no_host_says_what_it_takes(value: str, kind: str) -> None:
    """Mutant (sdk/cli.py, _target_problem): an address with a port but no host not told
    as such ("'' is none: a name goes after dns:", of no name at all). It is refused in
    one line saying what the scheme takes, with an example, exit 2."""
    r = _invoke(
        arena_bot, ["run", "random", "--arena", value, "--token", TOKEN, "--retry-for", "1"]
    )
    text = _fails(r, 2, "--arena", f"takes {kind}", "with their ports")
    assert "goes after" not in text


WITH_STDOUT = """import sys
from sdk import Bot


class Mine(Bot):
    def on_match_start(self, view):
        with sys.stdout:
            pass

    def play(self, view):
        return view.legal_actions[0]
"""


def test_a_with_block_on_stdout_is_said_at_the_bots_line(tmp_path: Path) -> None:
    """Mutant (sdk/cli.py, _KeptOpen.close): the frames of the with-block's exit not passed
    over. ``with sys.stdout:`` in a bot is said at the bot's line (the ``with``), not at
    arena-bot's own ``__exit__``; the table is printed whole."""
    from tests.sdk.test_author_round38 import _try

    proc = _try(tmp_path, WITH_STDOUT)
    assert proc.returncode == 0, proc.stderr
    assert "│ Mine " in proc.stdout, proc.stdout
    said = [line for line in proc.stderr.splitlines() if "closed sys.stdout" in line]
    assert len(said) == 1, proc.stderr
    assert "the bot closed sys.stdout (mine.py:7, in on_match_start): left open" in said[0]


PERSON = """from bots.random_bot import RandomBot


class Person(RandomBot):
    interactive = True  # (a seat a person plays; this one answers by itself)
"""


def test_a_person_among_the_opponents_plays_one_match_by_default(tmp_path: Path) -> None:
    """Mutant (sdk/cli.py, try): a person's seat among the opponents not counted as
    interactive. `arena-bot try random --vs human,random` plays one match by default, as
    `try human` does (not the 20 of bots alone, each waiting on the person)."""
    (tmp_path / "person.py").write_text(PERSON, encoding="utf-8")
    spec = f"{tmp_path / 'person.py'}:Person"
    r = _invoke(arena_bot, ["try", "random", "--vs", f"{spec},random", "--seed", "3",
                            "--max-deals", "2"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "1 match, ruleset classic, seed 3" in r.output, r.output


@pytest.mark.parametrize("target", ["dns:///localhost", "dns:localhost", "dns:///::1"])
def test_a_dns_target_of_loopback_without_a_port_bypasses_the_proxy(target: str) -> None:
    """Mutant (sdk/client.py, _loopback_host): the host read before a last colon that is
    none of a port's. A ``dns:`` target names its host without a port (gRPC's 443), an
    IPv6 one without brackets: on loopback, it is told so (no proxy is asked for it)."""
    from sdk.client import is_loopback_target

    assert is_loopback_target(target)


BOT_FILE = """from sdk import Bot


class Mine(Bot):
    def act(self, view):
        return view.legal_actions[0]
"""


def test_a_bot_file_loaded_twice_keeps_its_first_module_under_its_name(tmp_path: Path) -> None:
    """Mutant (sdk/loader.py, _own_name): a name already imported not passed over. The same
    file loaded again (``try mine.py --vs mine.py``) is a module of its own: the first
    one's name still finds the first one's class (a spawned process, pickle, find it by
    that name), not the second's."""
    import sys

    from sdk.loader import load_bot

    path = tmp_path / "twice39m.py"
    path.write_text(BOT_FILE, encoding="utf-8")
    one = load_bot(str(path))
    two = load_bot(str(path))
    assert one.__module__ == "twice39m" and two.__module__ != "twice39m"
    assert sys.modules["twice39m"].Mine is one


def test_grpcs_refusal_of_a_target_is_said_in_its_own_reason_alone() -> None:
    """Mutant (sdk/client.py, _why_final): gRPC's whole text kept in the parentheses. The
    line names the address, then gRPC's reason alone ("the target uri is not valid:
    ..."), without gRPC's "Failed to create channel to '...'" saying the address again."""
    import grpc

    from sdk.client import _why_final

    target = "ipv4://x/127.0.0.1:1"
    channel = grpc.insecure_channel(target)
    try:
        with pytest.raises(grpc.RpcError) as ei:
            channel.unary_unary("/arena.v1.Arena/Nothing")(b"", timeout=5)
    finally:
        channel.close()
    said = _why_final(ei.value.code(), ei.value.details(), target)  # type: ignore[attr-defined]
    assert said.startswith(f"gRPC cannot use {target} as an address (the target uri"), said
    assert "Failed to create channel" not in said, said


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX's")
def test_a_child_forked_in_an_arena_hook_is_ended_as_it_comes_back(tmp_path: Path) -> None:
    """Mutant (sdk/client.py, _run_hook): the fork check after a hook that returned dropped.
    A bot whose hook forks in an arena's runner and lets the child come back has the child
    ended there, with the line naming the hook and the match (it hung for ever, a thread
    of a process with no others, deaf to SIGTERM); the parent plays on."""
    import subprocess
    import sys

    script = tmp_path / "forks.py"
    script.write_text(
        "import logging, os, sys\n"
        "from sdk import Bot\n"
        "import sdk.client\n"
        "logging.basicConfig(stream=sys.stdout, format='%(message)s')\n"
        "class Forks(Bot):\n"
        "    def act(self, view):\n"
        "        return view.legal_actions[0]\n"
        "    def on_match_start(self, *args):\n"
        "        self.child = os.fork()\n"
        "bot = Forks()\n"
        "failed = sdk.client._run_hook(bot, 'on_match_start', (), 'm7')\n"
        "_, status = os.waitpid(bot.child, 0)\n"
        "print('parent', failed, os.waitstatus_to_exitcode(status), flush=True)\n",
        encoding="utf-8",
    )
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2, out.stdout
    assert lines[0].startswith("match m7: Forks.on_match_start() (forks.py:"), lines[0]
    assert "forked, and the child (pid" in lines[0] and "it is ended there" in lines[0]
    assert lines[1] == "parent False 0", out.stdout


def test_a_bot_file_beside_a_package_of_its_name_takes_a_name_of_its_own(
    tmp_path: Path,
) -> None:
    """Mutant (sdk/loader.py, _own_name): any module the name finds taken for the file's.
    Beside a package of the same name (``mine/`` with ``__init__.py``, which ``import
    mine`` finds first), the file is not imported as ``mine``: a spawned process importing
    that name would get the package, not the bot's functions."""
    import sys

    from sdk.loader import load_bot

    (tmp_path / "beside39p").mkdir()
    (tmp_path / "beside39p" / "__init__.py").write_text("", encoding="utf-8")
    path = tmp_path / "beside39p.py"
    path.write_text(BOT_FILE, encoding="utf-8")
    cls = load_bot(str(path))
    assert cls.__module__.startswith("_arena_bot_beside39p_"), cls.__module__
    assert "beside39p" not in sys.modules


COROUTINE_FROM_PLAIN = """from sdk import Bot


class Mine(Bot):
    async def think(self, view):
        return view.legal_actions[0]

    def play(self, view):
        return self.think(view)
"""


def test_a_coroutine_from_a_plain_method_again_is_one_short_line(tmp_path: Path) -> None:
    """Mutant (sdk/local.py, _decide): the shorter line for the same mistake again wrote the
    coroutine's repr ("returned <coroutine object Mine.think at 0x...>", an address).
    Under arena-bot, a plain method returning a coroutine again is "... returned a
    coroutine again, N times so far", after the first line's explanation."""
    from tests.sdk.test_author_round38 import _try

    proc = _try(tmp_path, COROUTINE_FROM_PLAIN)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "returned the coroutine of `async def think` (mine.py:5)" in proc.stderr
    assert "Mine.play() (mine.py:8) returned a coroutine again, 2 times so far" in proc.stderr
    assert "<coroutine object" not in proc.stderr, proc.stderr


class _RaisesItsOwn(Bot):
    def act(self, view: PlayerView) -> Action:
        raise RuntimeError("my own mistake")


def test_a_bots_own_runtime_error_gets_no_event_loop_hint() -> None:
    """Mutant (sdk/local.py, _loop_hint): every RuntimeError taken for asyncio's "There is
    no current event loop". A bot's own RuntimeError is told as it is, with no word of
    worker threads and event loops."""
    rand = load("random")
    m = play_local([_RaisesItsOwn, rand, rand], seed=1, max_deals=3, match_id="r-1")
    assert m.incidents and all(i.kind == "error" for i in m.incidents)
    detail = m.incidents[0].detail
    assert "my own mistake" in detail and "event loop" not in detail, detail


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX's")
def test_a_child_forked_in_a_decision_that_raises_is_ended_as_it_comes_back(
    tmp_path: Path,
) -> None:
    """Mutant (sdk/local.py, _decide): the fork check on a decision that raised dropped. A
    bot that forks in ``act`` and raises (in both processes) has the child ended as the
    exception comes back, with the line naming the call; the parent plays its fallback."""
    import subprocess
    import sys

    script = tmp_path / "forks.py"
    script.write_text(
        "import logging, os, sys\n"
        "from engine import Game, observe\n"
        "from sdk import Bot\n"
        "import sdk.local\n"
        "logging.basicConfig(stream=sys.stdout, format='%(message)s')\n"
        "logging.getLogger('sdk.local').propagate = False\n"
        "handler = logging.StreamHandler(sys.stdout)\n"
        "handler.addFilter(lambda r: 'forked' in r.getMessage())\n"
        "logging.getLogger('sdk.local').addHandler(handler)\n"
        "class Forks(Bot):\n"
        "    def act(self, view):\n"
        "        self.child = os.fork()\n"
        "        raise ValueError('after the fork')\n"
        "game = Game.new('classic', 1, ['a', 'b', 'c'])\n"
        "bot = Forks()\n"
        "action, kind, _, _ = sdk.local._decide(bot, observe(game, game.to_act))\n"
        "_, status = os.waitpid(bot.child, 0)\n"
        "print('parent', kind, os.waitstatus_to_exitcode(status), flush=True)\n",
        encoding="utf-8",
    )
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2, out.stdout
    assert lines[0].startswith("Forks.act()") and "forked, and the child (pid" in lines[0]
    assert "it is ended there" in lines[0]
    assert lines[1] == "parent error 0", out.stdout


ONE_WORKER_FAILS = """import multiprocessing
import os

from sdk import Bot

if multiprocessing.parent_process() is not None:  # (the first worker only: a busy GPU)
    try:
        os.close(os.open("first.marker", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        pass
    else:
        raise RuntimeError("no GPU in this process")


class Mine(Bot):
    pass
"""


def test_a_bot_some_workers_load_connects_with_them(tmp_path: Path) -> None:
    """Mutant (sdk/workers.py, none_loaded): "every worker" read as "any worker". A bot one
    worker cannot load (it says why) while another loads it is played by that one: the
    runner goes on to connect (here to no arena: it says it cannot connect), not "no worker
    process could load the bot"."""
    import subprocess

    from tests.sdk.test_author_round38 import ARENA_BOT, _env

    (tmp_path / "mine.py").write_text(ONE_WORKER_FAILS, encoding="utf-8")
    cmd = [*ARENA_BOT, "run", "mine.py:Mine", "--workers", "2", "--arena", "localhost:9",
           "--token", "t", "--retry-for", "2"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert "RuntimeError: no GPU in this process" in proc.stderr, proc.stderr
    assert "no worker process could load the bot" not in proc.stderr, proc.stderr
    assert "cannot connect" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_only_an_output_that_cannot_encode_the_suits_is_made_to_escape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant (options.py, _escape_what_the_output_cannot_encode): every strict stream made
    to escape. A UTF-8 output is left as Python made it (strict); an ASCII one writes
    what it cannot encode as backslash escapes."""
    import io
    import sys

    from arena.cli.options import _escape_what_the_output_cannot_encode

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    err = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    _escape_what_the_output_cannot_encode()
    assert (out.errors, err.errors) == ("strict", "backslashreplace")


HARD_EXIT_LIB = """import os


def shut_down(code):
    os._exit(code)
"""

HARD_EXIT_BOT = """import hardexit39
from sdk import Bot


class Mine(Bot):
    def on_match_start(self, view):
        hardexit39.shut_down(3)
"""


def test_an_installed_librarys_os_exit_is_not_said_to_be_the_bots(tmp_path: Path) -> None:
    """Mutant (sdk/cli.py, _os_exit_said): the library check dropped. An ``os._exit`` that
    an installed library calls (here a directory counted as one) ends the process with its
    code as it would, with no line blaming the bot's code at the library's line; the
    bot's own call is said (tests/sdk/test_author_round38)."""
    import subprocess
    import sys

    from tests.sdk.test_author_round38 import _env

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "hardexit39.py").write_text(HARD_EXIT_LIB, encoding="utf-8")
    (tmp_path / "mine.py").write_text(HARD_EXIT_BOT, encoding="utf-8")
    root = Path(__file__).parents[2]
    code = (
        f"import sys; sys.path[:0] = [{str(root)!r}, {str(lib)!r}]; import sdk.cli; "
        f"sdk.cli._NOT_THE_BOTS = (*sdk.cli._NOT_THE_BOTS, {str(lib)!r}); "
        "sys.exit(sdk.cli.main())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "try", "mine.py:Mine", "-n", "1", "--max-deals", "1"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "called os._exit" not in proc.stderr, proc.stderr
