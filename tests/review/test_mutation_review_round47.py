"""Round 47 review: the next run's clean-up of the bots a killed run left
(``_stop_bots_left_by``) kills only such bots' sessions; the codec's caches of decoded
items stay small whatever an arena sends; and tests that kill the mutants of this round's
changes the other tests let live."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.tournament.runner import DatabaseLock, _stop_bots_left_by
from tests.support.spawn import environment_set

# ------------------------------------------------------- what a killed run's bots left


def _dead_pid() -> int:
    """A pid no process has now (a child's, reaped)."""
    p = subprocess.Popen(["true"])
    p.wait(30)
    return p.pid


@contextlib.contextmanager
def _started(*procs: subprocess.Popen[bytes]) -> Iterator[None]:
    try:
        yield
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL) if os.getsid(p.pid) == p.pid else p.kill()
            p.wait(30)


def _bot(run: int, **more: str) -> subprocess.Popen[bytes]:
    """A process as the run ``run`` starts a bot: its pid and a token in the environment,
    leading a session of its own."""
    env = dict(os.environ, ARENA_PARENT_PID=str(run), ARENA_TOKEN="t", **more)
    bot = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
    environment_set(bot.pid)  # (what the run's clean-up reads)
    return bot


def _killed(bot: subprocess.Popen[bytes], run: int) -> bool:
    """Whether ``bot`` ends by SIGKILL (within a generous bound); if not, why it was not
    taken for the run's bot, said in the failure."""
    try:
        return bot.wait(30) == -signal.SIGKILL
    except subprocess.TimeoutExpired:
        marks = [e for e in Path(f"/proc/{bot.pid}/environ").read_bytes().split(b"\0")
                 if e.startswith(b"ARENA")]  # fmt: skip
        pytest.fail(
            f"bot {bot.pid} not killed: /proc/{run}/stat {_state(run)!r}, its session "
            f"{os.getsid(bot.pid)}, its marks {marks}"
        )


@pytest.mark.parametrize("own_session", [False, True], ids=["in-its-session", "setsid"])
def test_a_shell_holding_a_bots_environment_is_not_killed(own_session: bool) -> None:
    """A shell (a terminal's, leading its session) that holds a killed run's bot's
    environment, from which the next run is started: that run killed the shell's session,
    itself with it (SIGKILL, nothing said). The run's own session is never touched, nor,
    the run started in a session of its own (``setsid``), its parent shell's."""
    run = _dead_pid()
    code = (
        ("import os\nos.setsid()\n" if own_session else "")
        + "from arena.tournament.runner import _stop_bots_left_by\n"
        f"_stop_bots_left_by({run})\nprint('survived', flush=True)\n"
    )
    env = dict(os.environ, ARENA_PARENT_PID=str(run), ARENA_TOKEN="t")
    shell = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -c "$0"; echo shell-on', code],
        env=env, start_new_session=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shell.returncode == 0, shell
    assert shell.stdout.split() == [b"survived", b"shell-on"], shell


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process needs root")
def test_another_users_bot_is_not_killed() -> None:
    """A run as root finds another user's process with the same marks: not its bot."""
    run = _dead_pid()
    env = dict(os.environ, ARENA_PARENT_PID=str(run), ARENA_TOKEN="t")
    other = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True, user=65534)
    environment_set(other.pid)
    mine = _bot(run)
    with _started(other, mine):
        _stop_bots_left_by(run)
        assert _killed(mine, run)  # (the same marks of this user's: killed)
        assert other.poll() is None


def test_only_a_session_leader_with_the_runs_very_pid_is_killed() -> None:
    """A process with the marks that does not lead its session (a bot's child, in a
    session whose leader has no marks), another pid that begins with the run's, or a
    variable whose name ends with the mark's: none is the run's bot (the first, which
    leads a process group, would be killed as the group of a session's leader)."""
    run = _dead_pid()
    code = (
        "import os, subprocess, sys\n"
        f"env = dict(os.environ, ARENA_PARENT_PID='{run}', ARENA_TOKEN='t')\n"
        "p = subprocess.Popen(['sleep', '600'], env=env, preexec_fn=os.setpgrp)\n"
        "print(p.pid, flush=True)\np.wait()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE
    )
    assert child.stdout is not None
    grandchild = environment_set(int(child.stdout.readline()))  # (a group's leader only)
    longer = _bot(run * 10 + 1)  # (e.g. 1234 and 12341)
    env = dict(os.environ, XARENA_PARENT_PID=str(run), ARENA_TOKEN="t")
    suffix = subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)
    environment_set(suffix.pid)
    bot = _bot(run)
    try:
        with _started(child, longer, suffix, bot):
            _stop_bots_left_by(run)
            assert _killed(bot, run)
            assert child.poll() is None and longer.poll() is None and suffix.poll() is None
            assert _state(grandchild) not in (None, b"Z")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(grandchild, signal.SIGKILL)


def _state(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0]
    except OSError:
        return None


def test_a_run_not_yet_reaped_is_gone_and_its_bots_killed_with_their_session() -> None:
    """The killed run a zombie (its parent has not waited for it yet): gone all the same.
    Its bot's session is killed whole: the child that made a process group of its own."""
    run = subprocess.Popen(["sleep", "600"])
    run.kill()
    for _ in range(3000):  # (a guard: SIGKILL ends it)
        if _state(run.pid) == b"Z":
            break
        time.sleep(0.01)
    env = dict(os.environ, ARENA_PARENT_PID=str(run.pid), ARENA_TOKEN="t")
    code = (
        "import os, subprocess\n"
        "p = subprocess.Popen(['sleep', '600'], preexec_fn=os.setpgrp)\n"
        "print(p.pid, flush=True)\np.wait()\n"
    )
    bot = subprocess.Popen(
        [sys.executable, "-c", code], env=env, start_new_session=True, stdout=subprocess.PIPE
    )
    assert bot.stdout is not None
    grandchild = int(bot.stdout.readline())
    assert os.getpgid(grandchild) == grandchild  # (a group of its own, in the session)
    with _started(bot):
        try:
            _stop_bots_left_by(run.pid)
            assert _killed(bot, run.pid)
            for _ in range(3000):
                if _state(grandchild) in (None, b"Z"):
                    break
                time.sleep(0.01)
            else:
                pytest.fail(f"{grandchild} of the bot's session still runs")
        finally:
            run.wait(30)
            with contextlib.suppress(ProcessLookupError):
                os.kill(grandchild, signal.SIGKILL)


@pytest.mark.parametrize(
    ("text", "left_by"),
    [
        ("1234 k47-x", 1234),
        ("1234", 1234),
        ("", None),
        ("abc 1", None),
        ("-5 x", None),
        ("١٢ x", None),
    ],
)
def test_the_lock_names_the_pid_a_killed_run_left_in_it(
    tmp_path: Path, text: str, left_by: int | None
) -> None:
    """``left_by``: the pid a run that did not release the lock wrote in it (then
    replaced by this run's); none when it holds no number (a non-ASCII digit is none)."""
    db = tmp_path / "db.sqlite"
    lock = DatabaseLock(db)
    lock.path.write_text(text)
    lock.acquire("k47-y")
    try:
        assert lock.left_by == left_by
        assert lock.path.read_text() == f"{os.getpid()} k47-y"
    finally:
        lock.release()
    assert not lock.path.exists()  # (released: the next run finds no pid)
    again = DatabaseLock(db)
    again.acquire()
    try:
        assert again.left_by is None
    finally:
        again.release()


# ---------------------------------------------------------- the codec's decoded items


def _unknown_field(size: int) -> bytes:
    """A length-delimited field of number 1000 (none of the schema's) of ``size`` bytes:
    decoding ignores it, the message's bytes keep it."""
    out = bytearray()
    for n in ((1000 << 3) | 2, size):
        while n > 0x7F:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
    return bytes(out) + b"x" * size


def test_items_padded_by_a_hostile_arena_are_not_kept_by_their_bytes() -> None:
    """The SDK decodes a view's repeated items once each, kept by their wire bytes (up to
    4096 per cache). An arena that pads each item with an unknown field of megabytes
    (the SDK takes 64 MB messages) made the bot keep 4096 of each: gigabytes. Such items
    are decoded as before, and not kept."""
    import dataclasses
    import random

    from arena import protocol
    from engine import PRESETS, Game, observe

    rules = dataclasses.replace(PRESETS["1001"], max_deals=3)
    view = None
    for seed in range(20):
        g = Game.new(rules, seed, ["a", "b", "c"])
        rng = random.Random(seed)
        while not g.is_over and view is None:
            v = observe(g, g.to_act)
            if v.deal_results and v.tricks and v.trick and v.bids and v.legal_actions:
                view = v
            g.apply_trusted(rng.choice(g.legal_actions()))
        if view is not None:
            break
    assert view is not None
    msg = protocol.view_to_pb(view)
    pad = _unknown_field(protocol._DECODED_KEY_MAX)
    for field in ("bids", "trick", "tricks", "deal_results", "legal_actions"):
        for item in getattr(msg, field):
            item.MergeFromString(pad)
    caches = (protocol._BID_BY_BYTES, protocol._SEAT_CARD_BY_BYTES, protocol._TRICK_BY_BYTES,
              protocol._RESULT_BY_BYTES)  # fmt: skip
    for cache in (*caches, protocol._ACTION_BY_BYTES):
        cache.clear()
    decoded = protocol.view_from_pb(msg, rules)
    assert decoded == view
    assert all(not cache for cache in caches), [len(c) for c in caches]
    assert max(map(len, protocol._ACTION_BY_BYTES)) < 100  # (bids' actions, not padded)
    # Unpadded, the same items are kept (and found again).
    again = protocol.view_from_pb(protocol.view_to_pb(view), rules)
    assert again == view and all(caches) and protocol._ACTION_BY_BYTES


def _a_view_msg() -> tuple[object, object]:
    from arena import protocol
    from engine import PRESETS, Game, observe

    g = Game.new(PRESETS["classic"], 3, ["a", "b", "c"])
    return protocol.view_to_pb(observe(g, g.to_act)), PRESETS["classic"]


def test_an_active_seat_of_the_tables_size_is_refused() -> None:
    """Seat 3 at a 3-player table (the first seat past the last): refused, naming
    the field (the seats' quick check compares the highest with the table's size)."""
    from arena.protocol import MalformedMessageError, view_from_pb

    msg, rules = _a_view_msg()
    msg.active_seats[2] = 3  # type: ignore[attr-defined]
    with pytest.raises(MalformedMessageError) as e:
        view_from_pb(msg, rules)  # type: ignore[arg-type]
    assert e.value.what == "view.active_seats", e.value


def test_a_hand_with_an_unknown_card_among_known_ones_is_refused_naming_it() -> None:
    """A hand's cards are looked up by (suit, rank); one not found among known ones is
    decoded field by field, which names the field (not a TypeError sorting the hand)."""
    from arena.protocol import MalformedMessageError, view_from_pb

    msg, rules = _a_view_msg()
    msg.hand[3].rank = 9  # type: ignore[attr-defined]
    with pytest.raises(MalformedMessageError) as e:
        view_from_pb(msg, rules)  # type: ignore[arg-type]
    assert e.value.what == "view.hand", e.value


# ------------------------------------------------------ a config taken for another file


def _config_error(data: dict[str, object], tmp_path: Path) -> str:
    from arena.tournament.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as e:
        parse_config({"db": str(tmp_path / "t.sqlite"), "out": str(tmp_path / "o"), **data},
                     base_dir=tmp_path)  # fmt: skip
    return str(e.value)


def test_a_config_with_a_stray_preset_or_token_like_bots_is_still_a_config(
    tmp_path: Path,
) -> None:
    """Only a file that has no ``[bots]`` and sets ``preset`` is taken for a ruleset file,
    and only one that is all ``[bots]`` of token-like values for a tokens file: a config
    with its bots and a stray ``preset``, or with a ``name`` beside bots of long words no bot
    is named like, is answered as the config it is."""
    said = _config_error({"preset": "classic", "bots": ["random"] * 3}, tmp_path)
    assert "ruleset file" not in said and "preset" in said, said
    said = _config_error(
        {"name": "club", "bots": {"a": "randomrandomrandom", "b": "Zq3-long-value-1",
                                  "c": "Zq3-long-value-2"}},
        tmp_path,
    )  # fmt: skip
    assert "--tokens" not in said and "randomrandomrandom" in said, said
