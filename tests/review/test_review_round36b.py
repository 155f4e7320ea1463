"""Review of round 36's later merges (72c9f07..): the runner's bot logs and ``#!`` errors,
the bots' passing (``kept_in_passing``) and ``estimate_take``, ``Storage(resume=)``.

Defects found and fixed (each test's docstring says what happened before):

- passing with the ace marriage: four aces and three marriages (ten cards, no other) gave
  two aces (the rule keeps marriage cards only), throwing the ace marriage (200) away:
  double-dummy 124 against 253 giving the ♣ marriage;
- a bot restarted with its output dropped: its tail (printed when it exits again) was the
  start before's, read from the log that start wrote, its old error shown as the new one's;
- a command bot's script on a file system mounted ``noexec`` was said to be "not
  executable (chmod +x ...)", though it was; its interpreter there likewise;
- a relative ``#!`` interpreter was looked for from the arena's directory, not the bot's
  (where the kernel looks): one naming a directory was only "Permission denied";
- a compiled program (ELF) whose loader is missing (built for another system) was said to
  be not found itself, "(looked for in DIR)", where it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.tournament import runner
from arena.tournament.config import parse_config
from bots._dds import Solver, rule_options
from bots.heuristic import kept_in_passing
from engine import Card, Game, Give, Phase, load_ruleset, observe, parse_action, parse_cards
from tests.bots.test_blunders_round35 import _bot

_CLASSIC = load_ruleset("classic")

# ---------------------------------------------------------------------- the ace marriage

# Seat 0 (first hand, all pass) takes Q♦ K♣ Q♣: four aces and the ♥ ♦ ♣ marriages.
_ACES = ["A♠ A♣ A♦ A♥ K♥ Q♥ K♦", "K♠ Q♠ 10♠ J♠ 9♠ 10♣ J♣", "9♣ 10♦ J♦ 9♦ 10♥ J♥ 9♥"]
_ACES_TALON = "Q♦ K♣ Q♣"


def _deal(gives: list[str] | None = None) -> Game:
    g = Game.new(
        "classic", 0, ["p0", "p1", "p2"],
        deals={0: ([parse_cards(h) for h in _ACES], parse_cards(_ACES_TALON))}, dealer=2,
    )  # fmt: skip
    for a in ["pass", "pass", *(gives or [])]:
        g.apply(parse_action(a), seat=g.to_act)
    return g


def _take(g: Game) -> int:
    return Solver([g.hand_mask(s) for s in range(3)], 0, 0, **rule_options(_CLASSIC)).value()


@pytest.mark.parametrize("name", ["heuristic", "counting", "pimc"])
def test_passing_keeps_the_four_aces_of_an_ace_marriage(name: str) -> None:
    """Four aces and three marriages: no card outside them, so two must go. Before: every
    bot gave two aces (the rule kept the marriages' cards only), losing the ace marriage
    (200): 124 double-dummy. Now the cheapest marriage (♣, 60) goes: 253."""
    g = _deal()
    given: list[Card] = []
    bot = _bot(name)
    while g.phase is Phase.PASSING:
        action = bot.act(observe(g, 0))
        assert isinstance(action, Give)
        given.append(action.card)
        g.apply(action, seat=0)
    assert sorted(given) == sorted(parse_cards("K♣ Q♣")), given
    assert _take(g) == 253
    assert _take(_deal(["give A♠ to 1", "give A♣ to 2"])) == 124  # what was given before


def test_kept_in_passing_with_the_ace_marriage() -> None:
    """The rule: an ace marriage's aces are kept like marriage cards, when the ruleset
    scores it; with it off they are cards like any other (the estimate decides)."""
    hand = parse_cards("A♠ A♣ A♦ A♥ K♥ Q♥ K♦ Q♦ K♣ Q♣")
    assert kept_in_passing(hand, 2) == set(hand)
    assert kept_in_passing(hand, 2, ace_marriage=False) == set(hand[4:])
    three_aces = parse_cards("A♠ A♣ A♦ 9♥ K♥ Q♥ K♦ Q♦ K♣ Q♣")
    assert kept_in_passing(three_aces, 2) == set(three_aces[4:])


# ---------------------------------------------------------------------- a dropped output


def test_a_bot_restarted_with_its_output_dropped_shows_no_old_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot's first start writes its error and exits; its restart cannot write its log (a
    full disk), so it runs with its output dropped, and exits again. Before: its tail
    (printed by the runner as it restarts or gives it up) was the first start's lines,
    "first start's error" shown as the reason of the second exit. Now it says the output
    is dropped."""
    spec = parse_config({"bots": ["random", "heuristic", "counting"]}).bots[0]
    log = tmp_path / "logs" / "x.log"
    bp = runner._BotProcess(
        spec, [sys.executable, "-c", 'print("first start\'s error")'], "tok", log
    )

    async def run_once() -> None:
        await bp.start()
        assert bp.proc is not None
        await bp.proc.wait()
        await bp.stop()

    asyncio.run(run_once())
    assert "first start's error" in bp.tail()

    def full(fh: Any) -> bytes:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runner, "_line_break", full)
    bp.restarts = 1
    bp.argv = [sys.executable, "-c", "print('second')"]
    asyncio.run(run_once())
    assert "first start's error" in log.read_text()  # (the log still holds it)
    tail = bp.tail()
    assert "first start's error" not in tail, tail
    assert "output is dropped" in tail, tail


# ---------------------------------------------------------------------- #! errors


@contextlib.contextmanager
def _noexec(folder: Path) -> Iterator[Path]:
    """A small tmpfs mounted ``noexec`` at ``folder`` (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    folder.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "noexec,size=1m", "tmpfs", str(folder)],
        capture_output=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount: {r.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _said(program: str, cwd: Path) -> str:
    """What the runner says of ``program`` (run from ``cwd``), from the real error."""
    with pytest.raises(OSError) as info:
        subprocess.run([program], cwd=cwd, check=False)
    return runner._launch_error(program, info.value, cwd)


def test_a_script_on_a_noexec_mount_is_not_said_to_need_chmod(tmp_path: Path) -> None:
    """An executable script (mode 755) on a file system mounted noexec: the kernel refuses
    it. Before: "Permission denied: the file is not executable (chmod +x, ...)", advice
    that changes nothing. Now the mount is named."""
    with _noexec(tmp_path / "nx") as nx:
        bot = nx / "bot.sh"
        bot.write_text("#!/bin/sh\nexit 0\n")
        bot.chmod(0o755)
        said = _said("./bot.sh", nx)
    assert said == (
        "Permission denied: the file is on a file system mounted noexec (no program there "
        "can run) (name its interpreter first)"
    ), said


def test_an_interpreter_on_a_noexec_mount_is_not_said_to_be_not_executable(
    tmp_path: Path,
) -> None:
    """A script whose ``#!`` interpreter is an executable file on a noexec mount. Before:
    "its interpreter ... is not executable"; now the mount is named."""
    with _noexec(tmp_path / "nx") as nx:
        interp = nx / "interp"
        interp.write_text("#!/bin/sh\nexit 0\n")
        interp.chmod(0o755)
        bot = tmp_path / "bot.sh"
        bot.write_text(f"#!{interp}\nexit 0\n")
        bot.chmod(0o755)
        said = _said("./bot.sh", tmp_path)
    assert said == (
        f"its interpreter (the #! line: {interp}) is on a file system mounted noexec (no "
        "program there can run)"
    ), said


def test_a_relative_interpreter_is_looked_for_where_the_bot_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``#!tools`` run from the bot's directory, where ``tools`` is a directory (the kernel
    resolves a relative interpreter from the process's directory). Before: looked for from
    the arena's directory, it was not found there and the error was only "Permission
    denied"; now it is said to be a directory."""
    bot_dir = tmp_path / "botdir"
    (bot_dir / "tools").mkdir(parents=True)
    bot = bot_dir / "bot.sh"
    bot.write_text("#!tools\nexit 0\n")
    bot.chmod(0o755)
    elsewhere = tmp_path / "arena"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    said = _said("./bot.sh", bot_dir)
    assert said == "its interpreter (the #! line: tools) is a directory", said


def test_a_plain_non_executable_script_still_gets_chmod_advice(tmp_path: Path) -> None:
    """Pin: a script without its execute bit on an ordinary file system is still told to
    chmod +x (the noexec check does not take it)."""
    bot = tmp_path / "bot.sh"
    bot.write_text("#!/bin/sh\nexit 0\n")
    bot.chmod(0o644)
    said = _said("./bot.sh", tmp_path)
    assert said == (
        "Permission denied: the file is not executable (chmod +x, or name its interpreter first)"
    ), said


def test_a_compiled_program_whose_loader_is_missing_is_not_said_to_be_missing(
    tmp_path: Path,
) -> None:
    """A compiled `command` (ELF) that is there, but names a program loader the machine
    lacks (one built for another libc or system; here /bin/true with its loader's name
    changed): the kernel says "No such file or directory". Before: the runner said that of
    the program, "(looked for in DIR)", where it was; now the loader is named."""
    import re

    elf = Path("/bin/true").read_bytes()
    found = re.search(rb"/lib[^\x00]*ld-[^\x00]*", elf)
    if found is None:
        pytest.skip("/bin/true names no ld- loader here")
    loader = found.group()
    bot = tmp_path / "bot"
    bot.write_bytes(elf.replace(loader, loader[:-1] + b"X", 1))
    bot.chmod(0o755)
    said = _said("./bot", tmp_path)
    gone = (loader[:-1] + b"X").decode()
    assert said == (
        f"its loader ({gone}, named in the program) was not found: a program built for "
        "another system (another libc or architecture)"
    ), said
    assert runner._elf_loader(Path("/bin/true")) == loader
    assert runner._elf_loader(tmp_path / "none") == b""
