"""Review of round 38's changes (SDK guards, --arena target checks, proxy bypass, ...):
each test names the defect it pins, and failed before its fix."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import Referee, RefereeConfig, start_server

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------- http_proxy and loopback targets


@pytest.mark.parametrize(
    ("target", "loopback"),
    [
        ("ipv4:///127.0.0.1:1", True), ("ipv6:///[::1]:1", True), ("IPV4:127.0.0.1:1", True),
        ("DNS:///localhost:1", True), ("Dns:localhost:1", True),
        ("dns://8.8.8.8/localhost:1", True), ("ipv4:127.0.0.1:1,127.0.0.2:2", True),
        ("ipv4:127.0.0.1:1,10.0.0.1:1", False), ("ipv4:///10.0.0.1:1", False),
        ("dns:50051", False), ("dns:", False), ("unix:/tmp/arena.sock", False),
    ],
)  # fmt: skip
def test_every_target_form_on_loopback_is_told(target: str, loopback: bool) -> None:
    """Defect: ``is_loopback_target`` read "dns:///", "dns:", "ipv4:" and "ipv6:" only, in
    lower case and without "//": an arena on 127.0.0.1 given as ``ipv4:///127.0.0.1:PORT``,
    ``IPV4:127.0.0.1:PORT`` or a list of loopback addresses (every one passed by
    ``--arena``'s check, and gRPC connects to each) went through ``http_proxy``."""
    from sdk.client import is_loopback_target

    assert is_loopback_target(target) is loopback


@pytest.mark.parametrize("form", ["ipv4:///127.0.0.1:{port}", "IPV4:127.0.0.1:{port}"])
def test_a_bot_reaches_a_loopback_arena_of_any_target_form_past_a_proxy(
    tmp_path: Path, form: str
) -> None:
    """Defect: with ``http_proxy`` set, ``arena-bot run --arena ipv4:///127.0.0.1:PORT``
    (or ``IPV4:...``) never reached the arena: gRPC sent it through the proxy."""
    dead_proxy = "http://127.0.0.1:9"  # (the discard port: nothing listens on it here)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "http_proxy": dead_proxy,
           "https_proxy": dead_proxy, "grpc_proxy": dead_proxy}  # fmt: skip
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


# ------------------------------------------------------- the per-decision path's costs


def _a_view() -> object:
    from engine import Game, observe

    game = Game.new("classic", 1, ["a", "b", "c"])
    assert game.to_act is not None
    return observe(game, game.to_act)


def test_a_decision_makes_no_system_call_to_check_for_a_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: round 38's fork check read ``os.getpid()`` before and after every decision:
    a system call each, the SDK's own CPU per decision from 0.48 to 1.14 us (thread time,
    a bot that answers at once). A counter Python's fork hook grows is read instead."""
    import sdk.local
    from sdk import Bot

    calls: list[int] = []
    real = os.getpid

    def counted() -> int:
        calls.append(1)
        return real()

    class First(Bot):
        def act(self, view: object) -> object:
            return view.legal_actions[0]  # type: ignore[attr-defined]

    view = _a_view()
    monkeypatch.setattr(os, "getpid", counted)
    for _ in range(20):
        action, kind, _, _ = sdk.local._decide(First(), view)  # type: ignore[arg-type]
        assert kind == "bot" and action == view.legal_actions[0]  # type: ignore[attr-defined]
    assert calls == []


def _fork_in_a_decision(tmp: Path, child: str = "pass") -> subprocess.CompletedProcess[str]:
    """A process whose bot forks in ``act`` (the child then runs ``child``) and returns;
    its stdout: the log lines, then "parent <kind> <the child's exit code>"."""
    script = tmp / "forks.py"
    script.write_text(
        "import logging, os, sys\n"
        "from engine import Game, observe\n"
        "from sdk import Bot\n"
        "import sdk.local\n"
        "logging.basicConfig(stream=sys.stdout, format='%(message)s')\n"
        "class Forks(Bot):\n"
        "    def act(self, view):\n"
        "        self.child = os.fork()\n"
        "        if self.child == 0:\n"
        f"            {child}\n"
        "        return view.legal_actions[0]\n"
        "game = Game.new('classic', 1, ['a', 'b', 'c'])\n"
        "bot = Forks()\n"
        "action, kind, _, _ = sdk.local._decide(bot, observe(game, game.to_act))\n"
        "_, status = os.waitpid(bot.child, 0)\n"
        "print('parent', kind, os.waitstatus_to_exitcode(status), flush=True)\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX's")
def test_a_child_forked_in_a_decision_is_still_ended_as_it_comes_back(tmp_path: Path) -> None:
    """(The check above is the same check: a bot that forks in ``play`` and lets the child
    come back is ended there, with the line naming the call; the parent plays on.)"""
    out = _fork_in_a_decision(tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["Forks.act()", "parent"], out.stdout
    assert "forked, and the child (pid" in lines[0] and "it is ended there" in lines[0]
    assert lines[1].endswith(" bot 0")  # (the parent played on; the child exited 0)


def test_a_coroutine_returned_by_a_plain_method_is_still_named_as_its_function() -> None:
    """(Round 38's naming of an un-awaited ``async def`` helper, kept now that the method
    is found only for a coroutine inside ``_not_an_action``.)"""
    import logging

    import sdk.local
    from sdk import Bot

    class Forgets(Bot):
        async def helper(self, view: object) -> object:
            return view.legal_actions[0]  # type: ignore[attr-defined]

        def act(self, view: object) -> object:
            return self.helper(view)

    class AsyncAct(Bot):
        async def act(self, view: object) -> object:  # type: ignore[override]
            return view.legal_actions[0]  # type: ignore[attr-defined]

    view = _a_view()
    log = logging.getLogger("t39")
    _, kind, detail, _ = sdk.local._decide(Forgets(), view, log)  # type: ignore[arg-type]
    assert kind == "malformed" and "the coroutine of `async def helper` (" in detail
    _, kind, detail, _ = sdk.local._decide(AsyncAct(), view, log)  # type: ignore[arg-type]
    assert kind == "malformed" and "is `async def`" in detail


# ------------------------------------------------------------ GRPC_POLL_STRATEGY, bench


def test_arena_bench_refuses_a_poll_strategy_grpc_would_abort_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: round 38 refused a ``GRPC_POLL_STRATEGY`` gRPC aborts on in ``arena
    tournament``, ``arena serve`` and ``arena-bot run``, not in ``arena bench``, whose
    sections but the engine's start gRPC: ``make bench`` ended in a traceback
    ("RuntimeError: baseline server did not start"), exit 1. The engine's section alone
    uses no gRPC, and runs."""
    from click.testing import CliRunner

    from arena.cli import main as arena

    monkeypatch.setenv("GRPC_POLL_STRATEGY", "junk")
    for args in (["grpc_baseline"], ["--only", "referee"], []):
        r = CliRunner().invoke(arena, ["bench", *args, "--seconds", "0.05"])
        assert r.exit_code == 2, (args, r.output)
        assert "GRPC_POLL_STRATEGY='junk'" in r.output and r.exception is not None
        assert not isinstance(r.exception, RuntimeError)
    r = CliRunner().invoke(arena, ["bench", "engine", "--seconds", "0.05", "--json"])
    assert r.exit_code == 0, r.output
    assert "engine" in r.output


@pytest.mark.parametrize(
    ("value", "refused"),
    [("none,epoll1", True), ("none", True), ("junk,none,poll", True), ("epoll1,none", False),
     ("junk,poll", False), ("all", False), ("EPOLL1", True), ("", True)],
)  # fmt: skip
def test_a_poll_strategy_list_is_judged_by_the_first_grpc_knows(
    monkeypatch: pytest.MonkeyPatch, value: str, refused: bool
) -> None:
    """Defect: ``check_grpc_environment`` let a list through when any item was one it
    takes: ``GRPC_POLL_STRATEGY=none,epoll1``, whose first, gRPC's no-polling ``none``,
    gRPC takes and then aborts on at its first channel (SIGABRT, exit 134), as on "none"
    alone (refused, as if gRPC did not know it)."""
    import click

    from arena.cli.options import check_grpc_environment

    monkeypatch.setenv("GRPC_POLL_STRATEGY", value)
    if not refused:
        check_grpc_environment()
        return
    with pytest.raises(click.UsageError) as e:
        check_grpc_environment()
    said = e.value.format_message()
    assert said.startswith(f"GRPC_POLL_STRATEGY={value!r} in the environment ")
    if "none" in value.split(",")[:2] and value != "EPOLL1":
        assert "starts with gRPC's no-polling 'none'" in said


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX's")
@pytest.mark.parametrize(("leave", "status"), [("sys.exit(3)", 3), ("sys.exit()", 0),
                                               ("sys.exit('bye')", 1)])  # fmt: skip
def test_a_child_forked_in_a_decision_that_exits_keeps_its_exit_code(
    tmp_path: Path, leave: str, status: int
) -> None:
    """Defect (round 39's review): a child the bot forked in ``play`` that ended itself
    with ``sys.exit(n)`` was ended by the fork check with code 0, and said to have come
    back into the match. It exits with its own code now, as Python would have, silently
    (a ``sys.exit("text")`` says its text, code 1)."""
    out = _fork_in_a_decision(tmp_path, leave)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"parent bot {status}"], out.stdout
    assert ("bye" in out.stderr) == (status == 1)
