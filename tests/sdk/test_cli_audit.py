"""A bot author's audit of ``arena-bot``: a TLS mistake is final, a missing token names
ARENA_TOKEN, Ctrl-C in ``try`` keeps the matches played, a bot that raises prints its
traceback once per place, ``--vs`` bots are shown by their names, and the rehearsal of
docs/writing-a-bot.md runs on a port ``arena serve --port 0`` picked.

Every server and bot process started here is killed and reaped before its test ends."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner

from bots.random_bot import RandomBot
from sdk.cli import main
from sdk.client import ArenaError, ArenaTLSError, BotRunner
from tests.support.certs import make_cert

ROOT = Path(__file__).parents[2]
#: ``arena-bot`` as a process. SIGINT is set back to Python's default first: a child
#: inherits an ignored SIGINT (a test run started in the background of a shell), and
#: Python then leaves it ignored.
ARENA_BOT = ("-c", "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from sdk.cli import main; main()")  # fmt: skip
HINT = "if the arena uses TLS, pass --tls or --ca"

# gRPC's status details (grpc 1.85) for each way a TLS set-up goes wrong.
_FAILED = "failed to connect to all addresses; last error: "
SELF_SIGNED = (_FAILED + "UNKNOWN: ipv4:127.0.0.1:4: Tls handshake failed (TSI_PROTOCOL_FAILURE)"
               ": SSL_ERROR_SSL: error:1000007d:SSL routines:OPENSSL_internal:"
               "CERTIFICATE_VERIFY_FAILED: self signed certificate: OK")  # fmt: skip
WRONG_HOST = (_FAILED + "UNKNOWN: ipv4:127.0.0.1:4: Custom verification check failed with "
              "error: UNAUTHENTICATED: Hostname Verification Check failed.")  # fmt: skip
NOT_TLS = (_FAILED + "UNKNOWN: ipv4:127.0.0.1:4: Tls handshake failed (TSI_PROTOCOL_FAILURE): "
           "SSL_ERROR_SSL: error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER: "
           "Invalid certificate verification context: OK")  # fmt: skip
SOCKET_CLOSED = _FAILED + "UNAVAILABLE: ipv4:127.0.0.1:4: Socket closed"
REFUSED = (_FAILED + "UNKNOWN: ipv6:%5B::1%5D:4: Failed to connect to remote host: "
           "Connection refused")  # fmt: skip


def _runner(
    details: list[str], *, tls: bool = False, welcome: bool = False
) -> tuple[BotRunner, list[str]]:
    """A runner whose streams fail UNAVAILABLE with ``details``, one after the other (after
    a Welcome if ``welcome``), then end normally."""
    runner = BotRunner(RandomBot, "127.0.0.1:4", "tok", tls=tls, initial_backoff=0.001)
    tried: list[str] = []

    async def session() -> bool:
        if len(tried) == len(details):
            return False
        tried.append(details[len(tried)])
        runner._welcomed = welcome
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), tried[-1]
        )

    runner._session = session  # type: ignore[method-assign]
    return runner, tried


@pytest.mark.parametrize(
    ("details", "cause"),
    [
        (SELF_SIGNED, "not signed by a CA the system trusts"),
        (WRONG_HOST, "not for the host name in --arena (127.0.0.1:4)"),
        (NOT_TLS, "does not answer in TLS"),
    ],
)
def test_a_failed_tls_handshake_is_final(details: str, cause: str) -> None:
    """Defect: a certificate that does not verify was retried as an outage for
    --retry-for (600 s) with no hint. The first failed handshake ends the run with the
    likely cause."""
    runner, tried = _runner([details] * 5, tls=True)
    with pytest.raises(ArenaTLSError) as e:
        asyncio.run(runner.run())
    message = str(e.value)
    assert message.startswith("the TLS handshake with 127.0.0.1:4 failed: ")
    assert "UNKNOWN" not in message and "ipv4:" not in message
    assert cause in message and "last error" not in message
    assert len(tried) == 1


def test_a_plaintext_bot_dropped_before_any_welcome_gets_a_tls_hint_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A plaintext client of a TLS arena sees only "Socket closed", as in an outage: it
    keeps retrying, but its first such warning names the likely cause."""
    runner, _ = _runner([REFUSED, SOCKET_CLOSED, SOCKET_CLOSED])
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    hinted = [HINT in r.getMessage() for r in caplog.records if "reconnecting" in r.message]
    assert hinted == [False, True, False]
    for tls, welcome in ((True, False), (False, True)):  # TLS already, or the arena reached
        caplog.clear()
        runner, _ = _runner([SOCKET_CLOSED] * 2, tls=tls, welcome=welcome)
        with caplog.at_level(logging.WARNING, logger="sdk.client"):
            asyncio.run(runner.run())
        assert "cannot connect to the arena at 127.0.0.1:4: socket closed" in caplog.text
        assert HINT not in caplog.text


def test_after_the_tls_hint_no_warning_asks_whether_an_arena_is_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect (docs audit of round 37): against a TLS arena without --tls, the first
    warning gave the TLS hint and the second asked "is an arena serving at ...?", pointing
    away from the cause the first had named: an arena is serving there, over TLS."""
    runner, _ = _runner([SOCKET_CLOSED] * 3)
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    said = [r.getMessage() for r in caplog.records if "reconnecting" in r.message]
    assert len(said) == 3 and HINT in said[0], said
    assert not any("is an arena serving" in m for m in said), said


def test_an_unreachable_arena_that_only_dropped_the_bot_names_tls_too() -> None:
    runner, _ = _runner([SOCKET_CLOSED] * 50)
    runner.retry_for = 0.0
    with pytest.raises(ArenaError, match="unreachable") as e:
        asyncio.run(runner.run())
    assert HINT in str(e.value) and not isinstance(e.value, ArenaTLSError)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


@asynccontextmanager
async def _serve(tmp: Path, *args: str) -> AsyncIterator[int]:
    """``arena serve --port 0`` with tokens t1, t2, t3 (its log in tmp/serve.log); the port
    it printed. Killed on exit if still running."""
    tokens = tmp / "tokens.toml"
    tokens.write_text('[bots]\nmine = "t1"\nheur = "t2"\nrand = "t3"\n')
    with open(tmp / "serve.log", "wb") as log:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from arena.cli import main; main()", "serve",
            "--tokens", str(tokens), "--port", "0", "--record-dir", str(tmp / "rec"), *args,
            stdout=asyncio.subprocess.PIPE, stderr=log, cwd=str(tmp), env=_env(),
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        while True:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, (tmp / "serve.log").read_text()
            if line.startswith("port "):
                break
        yield int(line.split()[1])
        if "--matches" in args:  # it stops by itself after them
            assert await asyncio.wait_for(proc.wait(), 60) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def _arena_bot(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, str]:
    """Run ``arena-bot ARGS`` to its end (killed after ``timeout``); exit code, stderr."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *ARENA_BOT, *args, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE, cwd=str(cwd), env=_env(**(env or {})),
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, err.decode(errors="replace")


def test_tls_mistakes_against_a_real_arena(tmp_path: Path) -> None:
    """`arena serve --tls-cert/--tls-key`, and bots that get TLS wrong: --tls against its
    self-signed certificate and --ca with an address the certificate does not name stop at
    once (exit code 2, the cause named); a plaintext bot keeps retrying, with the hint."""
    cert, key = make_cert(tmp_path / "certs")

    async def main() -> None:
        async with _serve(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as port:
            common = ("run", "random", "--token", "t1")
            self_signed, wrong_host, plain = await asyncio.gather(
                _arena_bot(tmp_path, *common, "--arena", f"localhost:{port}", "--tls"),
                _arena_bot(tmp_path, *common, "--arena", f"127.0.0.1:{port}", "--ca", str(cert)),
                # (--retry-for 10: its first try waits for the Welcome until then, and the
                # closed socket that names the plaintext mistake must come within that
                # wait. With 1 s, an arena paused past it (a loaded machine; a SIGSTOP of
                # 3 s in a scratch run) left only "no Welcome from the arena within 1 s")
                _arena_bot(tmp_path, *common, "--arena", f"127.0.0.1:{port}", "--retry-for", "10"),
            )
        code, err = self_signed
        assert code == 2, err
        assert f"arena-bot: the TLS handshake with localhost:{port} failed" in err
        assert "CERTIFICATE_VERIFY_FAILED" in err and "a CA the system trusts" in err
        assert "ssl_transport_security" not in err  # gRPC core's own line: said better
        code, err = wrong_host
        assert code == 2, err
        assert "Hostname Verification" in err and "not for the host name in --arena" in err
        code, err = plain
        assert code == 1, err
        assert ": socket closed" in err and err.count(HINT) == 2  # the first warning; the end
        assert "reconnecting" in err and "TLS handshake" not in err

    asyncio.run(main())


def test_run_without_a_token_names_arena_token() -> None:
    """Defect: "Missing option '--token'" hid that ARENA_TOKEN gives it too."""
    r = CliRunner().invoke(main, ["run", "random"], env={"ARENA_TOKEN": ""})
    assert r.exit_code == 2
    assert "give --token TOKEN or set ARENA_TOKEN" in r.output


ENDER = """
import sys
from sdk import Bot

class Ender(Bot):
    name = "ender"

    def on_match_end(self, view, result):
        print("match over", file=sys.stderr, flush=True)
"""


def test_try_interrupted_prints_the_matches_played(tmp_path: Path) -> None:
    """Defect: Ctrl-C in `try` printed "Aborted!", exit code 1, and threw the matches
    already played away. Now their table, marked as interrupted, and exit code 130."""
    (tmp_path / "ender.py").write_text(ENDER)

    async def main() -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *ARENA_BOT, "try", "ender.py", "--vs", "random", "-n", "100000",
            "--max-deals", "2", stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=str(tmp_path), env=_env(),
        )  # fmt: skip
        try:
            assert proc.stderr is not None
            ended = 0
            while ended < 3:
                line = await asyncio.wait_for(proc.stderr.readline(), 60)
                assert line, "arena-bot try ended before three matches"
                ended += line.startswith(b"match over")
            proc.send_signal(signal.SIGINT)
            out, _ = await asyncio.wait_for(proc.communicate(), 60)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode is not None
        return proc.returncode, out.decode()

    code, out = asyncio.run(main())
    assert code == 130, out
    assert "interrupted after " in out and " of 100000 matches" in out
    played = int(out.split("interrupted after ")[1].split()[0])
    assert played >= 2  # the third ended as the signal came; that match may be dropped
    row = next(line for line in out.splitlines() if "ender" in line)
    assert row.split("│")[2].strip() == str(played)
    assert "Aborted" not in out and "slowest decision: ender" in out


RAISER = """
from sdk import Bot


class Raiser(Bot):
    name = "raiser"

    def bid(self, view):
        raise KeyError("bid")

    def play(self, view):
        raise ValueError("no idea")
"""


def test_a_raising_bot_prints_each_traceback_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a bot raising on every decision printed a full traceback each time (384
    lines for 2 short matches). Now once per place it raises from, then one line."""
    f = tmp_path / "raiser.py"
    f.write_text(RAISER)
    with caplog.at_level(logging.ERROR, logger="sdk.local"):
        r = CliRunner().invoke(main, ["try", str(f), "--vs", "random", "-n", "2",
                                      "--max-deals", "2"])  # fmt: skip
    assert r.exit_code == 1, r.output  # incidents fail the command
    mine = [rec for rec in caplog.records if "Raiser." in rec.getMessage()]
    with_traceback = [rec for rec in mine if rec.exc_info]
    assert len(with_traceback) == 2  # one per site: bid's KeyError, play's ValueError
    again = [rec.getMessage() for rec in mine if not rec.exc_info]
    assert len(again) >= 5
    assert any("ValueError again in play (raiser.py:12), 2 times so far" in m for m in again)
    assert any("KeyError again in bid (raiser.py:9), 2 times so far" in m for m in again)
    assert all("again in" in m and "times so far" in m for m in again)


NONE = """
from sdk import Bot


class Nothing(Bot):
    def play(self, view):
        return None
"""


def test_a_bot_answering_none_at_every_decision_is_explained_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (bot-author audit): a bot returning ``None`` (or a string) logged the whole
    explanation at every decision (74 lines in three 5-deal matches), where a repeated
    exception is one line with a count. Now the first is explained and the later ones say
    "returned None again, N times so far", as for exceptions."""
    f = tmp_path / "nothing.py"
    f.write_text(NONE)
    with caplog.at_level(logging.ERROR, logger="sdk.local"):
        r = CliRunner().invoke(main, ["try", str(f), "--vs", "random", "-n", "2",
                                      "--max-deals", "2"])  # fmt: skip
    assert r.exit_code == 1, r.output
    mine = [rec.getMessage() for rec in caplog.records if "Nothing.play() (" in rec.getMessage()]
    assert len(mine) >= 5
    assert "returned None, which is not an Action (deal 1, playing); playing " in mine[0]
    for n, m in enumerate(mine[1:], 2):
        assert f"Nothing.play() (nothing.py:6) returned None again, {n} times so far (deal " in m
        assert "which is not" not in m and m.endswith(" instead")


CHEAT = """\
from sdk import Bot, Card, Play


class Cheat(Bot):
    def play(self, view):
        return Play(next(c for c in Card if c not in view.hand))
"""


def test_an_illegal_answer_in_try_names_the_match_method_and_deal_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect (new-author audit): an illegal answer in ``arena-bot try`` was logged as
    "cheat: illegal action 'play 9♠' by seat 0: ...", naming neither the match of the
    series, the method nor the deal (a raise or a ``None`` names all three), once per
    decision. Now it names them, and the same rule broken again is one line with a count."""
    f = tmp_path / "cheat.py"
    f.write_text(CHEAT)
    with caplog.at_level(logging.WARNING, logger="sdk.local"):
        r = CliRunner().invoke(main, ["try", str(f), "--vs", "random", "-n", "2",
                                      "--max-deals", "2"])  # fmt: skip
    assert r.exit_code == 1, r.output
    mine = [rec.getMessage() for rec in caplog.records if "Cheat.play() (" in rec.getMessage()]
    assert len(mine) >= 5
    first = mine[0]
    assert first.startswith("match local-0-0: Cheat.play() (cheat.py:5) answered illegally: ")
    assert "is not in your hand; legal: " in first and " (deal 1, playing); playing " in first
    for n, m in enumerate(mine[1:], 2):
        assert m.startswith("match local-0-")
        assert f", illegal (CardNotHeldError) again, {n} times so far (deal " in m
        assert "legal: " not in m and m.endswith(" instead")


def test_try_shows_vs_bots_by_their_names(tmp_path: Path) -> None:
    """Defect: `--vs raiser.py` was shown as "raiser.py", the tried bot by its ``name``."""
    (tmp_path / "raiser.py").write_text(RAISER)
    (tmp_path / "plain.py").write_text("from sdk import Bot\n\nclass Plain(Bot):\n    pass\n")
    r = CliRunner().invoke(
        main,
        ["try", "random", "--vs", f"{tmp_path / 'raiser.py'},{tmp_path / 'plain.py'}:Plain",
         "-n", "1", "--max-deals", "1"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = [line.split("│")[1].strip() for line in r.output.splitlines() if "│" in line]
    assert rows == ["random", "raiser", "Plain"]


def test_the_rehearsal_on_a_free_port_and_a_raising_bot_in_an_arena(tmp_path: Path) -> None:
    """docs/writing-a-bot.md's rehearsal with `arena serve --port 0` (the port passed as
    ARENA_ADDRESS, the tokens as ARENA_TOKEN); the bot that raises on every card prints
    one traceback per place in `run` too."""
    (tmp_path / "raiser.py").write_text(RAISER.replace('raise KeyError("bid")', "return "
                                                       "super().bid(view)"))  # fmt: skip
    # Six deals of a fixed seed: with two deals of a new seed each run, the bot was at
    # times never asked to play a card (concessions), and there was nothing to count.
    (tmp_path / "short.toml").write_text('preset = "classic"\nmax_deals = 6\n')

    async def main() -> list[tuple[int, str]]:
        args = ("--ruleset", "short.toml", "--matches", "1", "--seed", "1")
        async with _serve(tmp_path, *args) as port:
            address = {"ARENA_ADDRESS": f"localhost:{port}"}
            return await asyncio.gather(
                *(_arena_bot(tmp_path, "run", bot, "--once", env={**address, "ARENA_TOKEN": t})
                  for bot, t in (("heuristic", "t2"), ("random", "t3"), ("raiser.py", "t1"))),
            )  # fmt: skip

    results = asyncio.run(main())
    for code, err in results:
        assert code == 0, err
    err = results[2][1]
    assert err.count("Traceback (most recent call last)") == 1, err
    assert "ValueError again in play (raiser.py:12), 2 times so far" in err
    assert "1 match(es)" in err


_LAUNCHER_GONE = """\
import os, sys
import sdk.cli

which = sys.argv[1]
if which == "zombie":  # a launcher that died and that nobody has reaped yet
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # it has exited; still not reaped
elif which == "parent":
    pid = os.getppid()
else:  # alive, but not the bot's parent (a bot launched through a wrapper)
    pid = int(which)
os.environ["ARENA_PARENT_PID"] = str(pid)
sdk.cli._die_with_launcher()
print("still running")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's parent-death signal")
def test_a_bot_whose_launcher_died_unreaped_stops_at_once(tmp_path: Path) -> None:
    """Defect: a bot checks, once its parent-death signal is armed, that the tournament
    that launched it is still there (it may have died while the bot started), with
    `os.kill(pid, 0)`, which also finds a zombie: a tournament SIGKILLed while its bots
    started, and not yet reaped by whatever ran it, left every bot running (and
    reconnecting) for `--retry-for` seconds."""
    import subprocess

    script = tmp_path / "launcher_gone.py"
    script.write_text(_LAUNCHER_GONE)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for which, alive in (("zombie", False), ("parent", True), (str(sleeper.pid), True)):
            proc = subprocess.run([sys.executable, str(script), which], capture_output=True,
                                  text=True, timeout=60)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert ("still running" in proc.stdout) == alive, (which, proc.stdout)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_try_fails_when_the_tried_bot_had_incidents_and_only_then(tmp_path: Path) -> None:
    """Defect: ``arena-bot try`` exited 0 after a bot that answered illegally at every
    decision (a script or CI checking a bot before it connects saw success; an arena would
    have forfeited it on strikes). Now it says so and exits 1, after the table; an opponent's
    incidents are not the tried bot's failure."""
    f = tmp_path / "cheat.py"
    f.write_text(CHEAT)
    args = ["-n", "2", "--max-deals", "2"]
    r = CliRunner().invoke(main, ["try", str(f), "--vs", "random", *args])
    said = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert "│ Cheat " in r.output  # the table still printed, before the verdict
    assert said.endswith("in 2 matches (the incidents column): exit code 1"), said
    assert re.search(r"error: Cheat had [1-9][0-9]* incidents in 2 matches", said), said
    r = CliRunner().invoke(main, ["try", "random", "--vs", str(f), *args])
    assert r.exit_code == 0, r.output
    assert "error:" not in r.output


#: ``arena-bot run ARGS`` as a process stopped by a SIGTERM as soon as its runner runs,
#: which then gets another signal (``{sig}``) in its teardown (``{where}``).
_STOPPED_THEN_SIGNALLED = """
import asyncio, os, signal, sys, time
import sdk.client

def late():
    os.kill(os.getpid(), signal.{sig})
    time.sleep(0.2)  # (delivered by then)

class Late:  # collected as the modules are torn down, after the exit
    def __del__(self):
        late()

async def cancelled_at_the_end():  # cancelled by asyncio.run once the runner is done
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        late()
        raise

real = sdk.client.BotRunner.run
async def run_then_term(self):
    if "{where}" == "loop":
        asyncio.get_running_loop().create_task(cancelled_at_the_end())
    else:
        sys.modules["late_holder"] = type(sys)("late_holder")
        sys.modules["late_holder"].late = Late()
    asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.SIGTERM)
    return await real(self)
sdk.client.BotRunner.run = run_then_term

from sdk.cli import main
sys.argv = ["arena-bot", "run", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("where", ["loop", "exit"])
def test_run_stopped_keeps_its_exit_through_a_signal_in_its_teardown(where: str, sig: str) -> None:
    """Defect: once `arena-bot run` had stopped on a signal, a second one (a second Ctrl-C, a
    supervisor's SIGTERM) in its teardown killed it by that signal (exit 143) or made a
    stop that had gone well exit 130: in asyncio.run's teardown, where the stop signals'
    handlers had been removed already, and in Python's last teardown, where they are back
    at their defaults. Here the second signal comes in one of them every time."""
    import subprocess

    probe = _STOPPED_THEN_SIGNALLED.format(sig=sig, where=where)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", probe, "random", "--arena", "127.0.0.1:4", "--token", "t1"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert "done (signal SIGTERM)" in out.stderr, out.stderr


@pytest.mark.parametrize("form", ["ipv4:127.0.0.1:{port}", "dns:127.0.0.1:{port}"])
def test_grpc_targets_without_slashes_are_passed_to_grpc(form: str) -> None:
    """Defect: gRPC's own target forms without "//" (``ipv4:127.0.0.1:50051``,
    ``ipv6:[::1]:50051``, ``dns:host:50051``) were refused as "expected HOST:PORT", though
    ``dns:///host:50051`` was let through. They reach gRPC now: against a port where
    nothing listens, gRPC's own "connection refused" after --retry-for, exit 1 (a usage
    error is exit 2). A port alone after the scheme (``dns:50051``) is still HOST:PORT."""
    import socket

    from sdk.cli import _address_problem

    with socket.socket() as s:  # (bound, not listening: a connect is refused; held while
        s.bind(("127.0.0.1", 0))  # the bot runs, so that no test beside it takes the port)
        port = s.getsockname()[1]
        value = form.format(port=port)
        assert _address_problem(value) is None
        r = CliRunner().invoke(
            main,
            ["run", "random", "--arena", value, "--token", "token-aaaa-1", "--retry-for", "0.5"],
        )
    assert r.exit_code == 1, r.output
    assert "connection refused" in r.output and "expected HOST:PORT" not in r.output, r.output
    assert _address_problem("ipv6:[::1]:50051") is None  # (not run: IPv6 may be off)
    assert _address_problem("dns:50051") is None  # (the host "dns", port 50051)
    assert "U+FF11" in (_address_problem("ipv4:１２７.0.0.1:1") or "")
