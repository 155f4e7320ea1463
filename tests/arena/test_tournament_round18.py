"""An organiser's audit of docs/tournament.md (round 18): what it found wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament.config import ConfigError, load_config

BOTS = """
[bots]
a = "random"
b = "heuristic"
friend = { remote = true, token_env = "R18_FRIEND_TOKEN" }
"""


def _error(tmp_path: Path, text: str) -> str:
    p = tmp_path / "t.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    return str(ei.value)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("short", "bots.friend.token_env: the value of R18_FRIEND_TOKEN: must be at least 8"),
        ("a secret with spaces", "bots.friend.token_env: the value of R18_FRIEND_TOKEN: a token "
                                 "is printable ASCII without spaces"),
    ],
)  # fmt: skip
def test_a_bad_token_from_the_environment_names_its_variable_and_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    """A token read from `token_env` that is unusable was blamed on `bots.friend.token`,
    a key the file does not have, and one with a space was quoted whole in the message,
    though `token_env` is there to keep it out of files and logs."""
    monkeypatch.setenv("R18_FRIEND_TOKEN", value)
    message = _error(tmp_path, BOTS)
    assert says in message
    assert value not in message


def test_two_remote_bots_with_one_token_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("R18_FRIEND_TOKEN", "s3cret-token-1")
    message = _error(tmp_path, BOTS + 'pal = { remote = true, token_env = "R18_FRIEND_TOKEN" }\n')
    assert "bots.pal.token_env: the same token as bots.friend" in message
    assert "s3cret-token-1" not in message


def _flood(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: int) -> Path:
    """The log of a bot that prints 5,000 lines (~350 KiB, over a limit of 256 KiB), is cut
    once as the runner does twice a second, prints ``then`` more lines and is stopped."""
    import asyncio
    import sys

    from arena.tournament import runner
    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _BotProcess

    monkeypatch.setattr(runner, "LOG_LIMIT_BYTES", _LIMIT)
    monkeypatch.setattr(runner, "LOG_KEEP_BYTES", _KEEP)
    log, first, go, done = (tmp_path / n for n in ("loud.log", "first", "go", "done"))
    code = (
        "import os, sys, time\n"
        "def say(n, tag):\n"
        "    for i in range(n): sys.stdout.write(f'{tag} {i:06d} ' + 'x' * 60 + '\\n')\n"
        "    sys.stdout.flush()\n"
        "say(5000, 'first')\n"
        f"open({str(first)!r}, 'w').close()\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
        f"say({then}, 'then')\n"
        f"open({str(done)!r}, 'w').close()\n"
        "time.sleep(60)\n"
    )

    async def scenario() -> None:
        bot = _BotProcess(BotSpec(name="loud", kind="command"), [sys.executable, "-c", code],
                          "t", log)  # fmt: skip
        await bot.start()
        try:
            for _ in range(1000):  # (a guard, not a timing)
                if first.exists():
                    break
                await asyncio.sleep(0.01)
            bot.trim_log()  # as the runner does twice a second
            assert b"dropped here" in log.read_bytes()
            go.touch()
            for _ in range(1000):
                if done.exists():
                    break
                await asyncio.sleep(0.01)
            assert done.exists()
        finally:
            await bot.stop()

    asyncio.run(scenario())
    return log


_LIMIT, _KEEP = 256 << 10, 16 << 10


def test_a_flooding_bots_log_is_left_at_its_first_and_last_mib_when_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/tournament.md: a bot's log past 64 MiB is cut to its first and last MiB, and
    "the log left at the end is at most about 2 MiB". What a flooding bot wrote after the
    last cut stayed whole when it stopped (up to 64 MiB: 33 MB left by a bot that printed
    100 MB at its start), since the last check cut only a log over the limit again."""
    text = _flood(tmp_path, monkeypatch, then=2500).read_bytes()  # ~180 KiB after the cut
    assert len(text) <= 2 * _KEEP + 4096, len(text)
    assert text.startswith(b"--- ") and b"first 000000 " in text[:_KEEP]
    assert text.endswith(b"then 002499 " + b"x" * 60 + b"\n")
    assert b"bytes dropped here ---" in text


@pytest.mark.parametrize("extra", ['env = { X = "1" }', 'cwd = "."'])
def test_env_or_cwd_on_a_remote_bot_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str
) -> None:
    """`env` and `cwd` are "for a local bot" (docs/tournament.md, `[bots]`): on a remote
    bot, which the arena does not launch, they were accepted and ignored (and still
    changed the tournament id), so an organiser's mistake went unsaid."""
    monkeypatch.setenv("R18_FRIEND_TOKEN", "s3cret-token-1")
    text = BOTS.replace(
        'token_env = "R18_FRIEND_TOKEN" }', f'token_env = "R18_FRIEND_TOKEN", {extra} }}'
    )
    key = extra.split()[0]
    assert f"bots.friend.{key}: a remote bot is not launched by the arena" in _error(tmp_path, text)


def test_a_dying_bots_own_log_says_it_was_restarted_and_then_given_up(tmp_path: Path) -> None:
    """docs/tournament.md: a local bot that dies is restarted up to 3 times, and "after its
    last restart the log says it is not restarted again". The bot's log (`<out>/logs/`)
    said nothing of it: only a "starting" line per start; the exits, the restarts and the
    giving up were on the arena's stderr alone."""
    import asyncio
    import sys
    from collections import Counter

    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _BotProcess, _monitor

    log = tmp_path / "dies.log"

    async def scenario() -> _BotProcess:
        argv = [sys.executable, "-c", "raise SystemExit(7)"]
        bot = _BotProcess(BotSpec(name="dies", kind="command"), argv, "t", log)
        await bot.start()
        stopping = asyncio.Event()
        monitor = asyncio.create_task(_monitor({"dies": bot}, stopping, 2, Counter(dies=1)))
        for _ in range(600):  # (a guard, not a timing)
            if bot.given_up or monitor.done():
                break
            await asyncio.sleep(0.05)
        stopping.set()
        await monitor
        await bot.stop()
        return bot

    bot = asyncio.run(scenario())
    assert bot.given_up and bot.restarts == 2
    lines = [
        line.split(" ", 2)[2] for line in log.read_text().splitlines() if line.startswith("--- ")
    ]
    assert lines == [
        "starting dies",
        "exited with code 7; restarting it (1/2)",
        "starting dies",
        "exited with code 7; restarting it (2/2)",
        "starting dies",
        "exited with code 7 again, after 2 restarts: not restarted; the referee plays its "
        "seats to the end",
    ]


def test_a_full_disk_under_a_dying_bots_log_does_not_end_the_supervision(tmp_path: Path) -> None:
    """The line the runner writes in a dying bot's log (69d99a9) failed on a full disk, as
    meant, but stayed in the file's buffer: closing the log in ``stop()`` wrote it again and
    raised, which ended ``_monitor`` (no bot restarted again, no flooding log cut again for
    the rest of the tournament) and left the bot neither restarted nor given up. The disk
    is full for the old log only (``/dev/full``): the restart opens the log again."""
    import asyncio
    import sys
    from collections import Counter

    from arena.tournament.config import BotSpec
    from arena.tournament.runner import _BotProcess, _monitor

    log = tmp_path / "dies.log"

    async def scenario() -> _BotProcess:
        argv = [sys.executable, "-c", "raise SystemExit(7)"]
        bot = _BotProcess(BotSpec(name="dies", kind="command"), argv, "t", log)
        await bot.start()
        assert bot._fh is not None
        bot._fh.close()
        bot._fh = open("/dev/full", "ab+")  # noqa: SIM115 (closed by stop())
        stopping = asyncio.Event()
        monitor = asyncio.create_task(_monitor({"dies": bot}, stopping, 1, Counter(dies=1)))
        for _ in range(600):  # (a guard, not a timing)
            if bot.given_up or monitor.done():
                break
            await asyncio.sleep(0.05)
        stopping.set()
        await monitor  # (raised OSError: No space left on device)
        await bot.stop()
        return bot

    bot = asyncio.run(scenario())
    assert bot.given_up and bot.restarts == 1
    assert "exited with code 7 again, after 1 restarts: not restarted" in log.read_text()


def test_a_log_cut_twice_says_every_byte_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each cut drops the line the cut before wrote (it follows the first MiB), and its own
    line counted only what it dropped itself: after the last cut at the stop (ab5795e), a
    log that had lost 380 KB said "80000 bytes dropped here". The line now counts every
    byte the bot wrote that is not in the log."""
    import re

    def lines(n: int, tag: str) -> str:
        return "".join(f"{tag} {i:06d} " + "x" * 60 + "\n" for i in range(n))

    text = _flood(tmp_path, monkeypatch, then=1000).read_text()
    (marker,) = re.findall(r"\n--- \S+ log over \d+ MiB: \d+ bytes dropped here ---\n", text)
    said = int(re.search(r"(\d+) bytes dropped", marker).group(1))  # type: ignore[union-attr]
    start = text.split("\n", 1)[0] + "\n"  # the runner's "--- starting" line
    written = len(start) + len(lines(5000, "first")) + len(lines(1000, "then"))
    assert said == written - (len(text) - len(marker))


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("R18_FRIEND_TOKEN", None, "environment variable R18_FRIEND_TOKEN is not set"),
        ("R18_FRIEND_TOKEN", "", "environment variable R18_FRIEND_TOKEN is set, but empty"),
        ("", None, "must name an environment variable, not be empty"),
    ],
)
def test_token_env_unset_empty_or_naming_nothing_is_said_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str | None, says: str
) -> None:
    """A variable set to "" was said to be "not set" (the organiser checks `env` and finds
    it there), and `token_env = ""` said "environment variable  is not set"."""
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    text = BOTS.replace('token_env = "R18_FRIEND_TOKEN"', f'token_env = "{name}"')
    assert f"bots.friend.token_env: {says}" in _error(tmp_path, text)


@pytest.mark.parametrize("old", [{"env": (("X", "1"),)}, {"cwd": Path("/tmp")}])
def test_a_tournament_stored_with_env_on_a_remote_bot_is_said_not_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: dict[str, object]
) -> None:
    """9c88df0 refuses env and cwd on a remote bot; an arena before it accepted them and
    counted them in the tournament id. The config without them is another tournament, and
    the runner told the organiser only "bot friend's launch" differs, then "run it with the
    config it was started with to resume it", which this arena now refuses."""
    import dataclasses

    from arena.tournament.config import BotSpec, identity_changes

    monkeypatch.setenv("R18_FRIEND_TOKEN", "s3cret-token-1")
    p = tmp_path / "t.toml"
    p.write_text(BOTS, encoding="utf-8")
    cfg = load_config(p)
    (friend,) = [b for b in cfg.bots if b.name == "friend"]
    was: BotSpec = dataclasses.replace(friend, **old)  # type: ignore[arg-type]
    stored = {**cfg.identity(), "bots": [was.identity() if b is friend else b.identity()
                                         for b in cfg.bots]}  # fmt: skip
    (change,) = identity_changes(stored, cfg.identity())
    assert change.startswith("bot friend's env or cwd, which a remote bot may no longer have")
    assert "cannot resume that tournament" in change
