"""A new bot author's walk through README.md and docs/writing-a-bot.md (round 32 of the
bot-author audit, its round 2): each test is a defect the walk met, or what it checked and
found as the docs say it."""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import sdk
from sdk import Bot, play_local
from sdk.cli import main

ROOT = Path(__file__).parents[2]
#: gRPC's own words, which a bot's author should never have to read.
GRPC_WORDS = ("UNAVAILABLE", "UNKNOWN", "failed to connect to all addresses", "last error",
              "ipv4:", "ipv6:", "%5B", "Stream removed")  # fmt: skip


_HELD: list[socket.socket] = []


def _closed_port() -> int:
    """A port where nothing listens and nothing will: bound and not listening (a connect
    is refused) and held so until this process ends. (Closed again at once, as before, a
    test running beside it in parallel could take the port for a server of its own.)"""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _HELD.append(s)
    return int(s.getsockname()[1])


def test_an_arena_not_reached_is_said_in_words_not_grpcs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot started at a port where no arena listens logged gRPC's status and its
    core's words ("UNAVAILABLE (failed to connect to all addresses; last error: UNKNOWN:
    ipv6:%5B::1%5D:4: Failed to connect to remote host: Connection refused); reconnecting
    in 0.4s"), and gave up with "... unreachable for 600s: UNAVAILABLE: failed to connect
    to all addresses; ...". Both say what happened in words now."""
    port = _closed_port()
    with caplog.at_level(logging.WARNING, logger="sdk.client"), pytest.raises(sdk.ArenaError) as e:
        sdk.run(Bot, arena=f"127.0.0.1:{port}", token="t", retry_for=0.3)
    warned = [m for m in caplog.messages if "reconnecting in" in m]
    assert warned, caplog.messages
    assert warned[0].startswith(
        f"cannot connect to the arena at 127.0.0.1:{port}: connection refused (is an arena "
        f"serving at 127.0.0.1:{port}? it is tried again for up to 0.3 s (--retry-for)); "
    ), warned[0]
    error = str(e.value)
    assert error.startswith(f"the arena at 127.0.0.1:{port} has been unreachable for 0s (the "
                            f"last try: cannot connect to the arena at 127.0.0.1:{port}: "
                            "connection refused)"), error  # fmt: skip
    for said in (*warned, error):
        assert not any(w in said for w in GRPC_WORDS), said


def test_a_lost_connection_and_a_failed_handshake_are_said_without_grpcs_codes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a connection lost mid-match was logged "UNAVAILABLE (Stream removed (Socket
    closed)); reconnecting in 0.3s", and a failed TLS handshake said gRPC's status and
    address first ("the TLS handshake with h:1 failed: UNKNOWN: ipv4:127.0.0.1:4: Tls
    handshake failed ..."). The loss is said in words, the arena's own messages as they
    are, and the handshake by its reason and likely cause."""
    import grpc

    from sdk.client import _tls_error, _why_ended
    from tests.sdk.test_cli_audit import REFUSED, SELF_SIGNED, _runner

    runner, _ = _runner(["Stream removed (Socket closed)"], welcome=True)
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    lost = [m for m in caplog.messages if "reconnecting in" in m]
    assert len(lost) == 1 and lost[0].startswith(
        "the connection to the arena at 127.0.0.1:4 was lost: socket closed; reconnecting in "
    ), caplog.messages

    u = grpc.StatusCode.UNAVAILABLE
    dns = ("DNS resolution failed for nosuch:50051: C-ares status is not ARES_SUCCESS qtype=A "
           "name=nosuch is_balancer=0: Domain name not found")  # fmt: skip
    assert _why_ended(u, dns, "nosuch:50051") == (
        "cannot connect to the arena at nosuch:50051: domain name not found"
    )
    assert _why_ended(u, REFUSED, "h:4") == "cannot connect to the arena at h:4: connection refused"
    web = ("failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:4: "
           "Failed parsing HTTP/2 (Expected SETTINGS frame as the first frame, got frame type "
           "79)")  # fmt: skip
    assert _why_ended(u, web, "h:4") == (
        "cannot connect to the arena at h:4: what answers there is no arena (it does not speak "
        "gRPC: failed parsing HTTP/2 (Expected SETTINGS frame as the first frame, got frame "
        "type 79))"
    )
    assert _why_ended(u, "the arena is stopping", "h:4") == (
        "the arena at h:4 ended the stream: the arena is stopping"
    )
    tls = str(_tls_error(SELF_SIGNED, "127.0.0.1:4", None))
    assert tls.startswith("the TLS handshake with 127.0.0.1:4 failed: Tls handshake failed ")
    assert "CERTIFICATE_VERIFY_FAILED" in tls and "a CA the system trusts" in tls
    assert not any(w in tls for w in GRPC_WORDS), tls


UNSEEDED = """
import random

from sdk import Bot


class Unseeded(Bot):
    def act(self, view):
        return random.choice(view.legal_actions)
"""

SEEDED = """
import random

from sdk import Bot


class Seeded(Bot):
    def on_match_start(self, view):
        self.rng = random.Random(view.seat)

    def act(self, view):
        return self.rng.choice(view.legal_actions)
"""


def test_arena_bot_try_names_a_bot_that_draws_from_the_shared_random(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a bot that called ``random.choice`` played different matches at each
    ``arena-bot try`` with the same ``--seed`` (the table changed from run to run) and
    nothing said why, though the docs say the seed plays a match again. ``try`` names the
    method, once; a bot with a ``random.Random`` of its own, and the bundled opponents,
    get no such line."""
    (tmp_path / "unseeded.py").write_text(UNSEEDED)
    (tmp_path / "seeded.py").write_text(SEEDED)
    args = ["-n", "2", "--max-deals", "2", "--vs", "random,heuristic"]
    with caplog.at_level(logging.WARNING, logger="sdk.local"):
        r = CliRunner().invoke(main, ["try", str(tmp_path / "unseeded.py"), *args])
    assert r.exit_code == 0, r.output
    said = [m for m in caplog.messages if "random module's shared generator" in m]
    assert len(said) == 1, caplog.messages
    assert re.match(
        r"match local-0-0: Unseeded\.act\(\) \(unseeded\.py:8\) \(deal 1, \w+\) used the random "
        r"module's shared generator \(random\.choice, random\.random, \.\.\.\): the same "
        r"--seed will not play its matches again, ", said[0]
    ), said[0]  # fmt: skip
    assert "keep a random.Random(seed) of the bot's own instead" in said[0]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sdk.local"):
        r = CliRunner().invoke(main, ["try", str(tmp_path / "seeded.py"), *args])
    assert r.exit_code == 0, r.output
    assert "shared generator" not in caplog.text, caplog.text


def test_every_name_the_docs_give_the_sdk_exists_and_the_types_they_name_import() -> None:
    """Defect: writing-a-bot.md says ``sdk.run`` returns a ``RunSummary`` and
    ``LocalMatch.incidents`` holds ``LocalIncident``s, but ``from sdk import RunSummary``
    (for a type hint) failed: neither was in ``sdk.__all__``. Both are now, ``RunSummary``
    made on first use as ``run`` is (``import sdk`` imports no gRPC). And every
    ``sdk.NAME`` the README and docs/ name resolves."""
    for name in ("RunSummary", "LocalIncident"):
        assert name in sdk.__all__ and name in dir(sdk)
    from sdk import LocalIncident

    assert sdk.RunSummary is importlib.import_module("sdk.client").RunSummary
    m = play_local([Bot, Bot, Bot], seed=1, max_deals=1)
    assert all(isinstance(i, LocalIncident) for i in m.incidents)
    assert set(sdk.__all__) <= set(dir(sdk))
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    docs = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    for dotted in sorted(set(re.findall(r"\bsdk(?:\.[A-Za-z_]\w*)+", docs))):
        parts = dotted.split(".")
        obj: object = sdk
        for i, part in enumerate(parts[1:], 1):
            if not hasattr(obj, part) and f"{'.'.join(parts[:i])}.{part}" not in sys.modules:
                importlib.import_module(".".join(parts[: i + 1]))
            assert hasattr(obj, part), f"the docs name {dotted}, which does not exist"
            obj = getattr(obj, part)


def test_a_syntax_error_is_named_by_its_path_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a bot whose helper beside it had a syntax error was refused with "importing
    'mine.py' failed: SyntaxError: invalid syntax (helper.py, line 1)": the file's name
    only, and not the line, where every other import error says "(at PATH, line N, in
    <module>: CODE)". A syntax error is said the same way now, in the bot's file or any it
    imports."""
    from sdk.loader import BotLoadError, load_bot

    monkeypatch.setattr(sys, "path", list(sys.path))  # (the loader puts the bot's folder on it)
    (tmp_path / "mine.py").write_text("from sdk import Bot\nimport helper_r32\n\n\nclass A(Bot):"
                                      "\n    pass\n")  # fmt: skip
    (tmp_path / "helper_r32.py").write_text("x = 1\ndef f(:\n    pass\n")
    (tmp_path / "typo.py").write_text("from sdk import Bot\n\n\nclass B(Bot)\n    pass\n")
    with pytest.raises(BotLoadError) as e:
        load_bot(str(tmp_path / "mine.py"))
    helper = tmp_path / "helper_r32.py"
    said = str(e.value)  # (Python's own message, "invalid syntax", differs between versions)
    assert "failed: SyntaxError: " in said and said.endswith(f" (at {helper}, line 2: def f(:)")
    with pytest.raises(BotLoadError) as e:
        load_bot(str(tmp_path / "typo.py"))
    typo = tmp_path / "typo.py"
    said = str(e.value)
    assert "failed: SyntaxError: " in said and said.endswith(f" (at {typo}, line 4: class B(Bot))")


def test_a_missing_module_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defects: (1) a bot module named ``torchbot`` (``arena-bot try torchbot:T``) whose
    ``import torch`` failed was refused as "no module 'torchbot' and no bundled bot of that
    name": any missing module its name started with was taken for the bot's own; (2) a
    module bot that failed to import said only "No module named 'torch'", without the line
    a file bot's error names; (3) neither said what to do: a package installed for another
    Python than the one running arena-bot, or a neighbour in a package imported without
    the dot, are the usual causes. Each is said now."""
    from sdk.loader import BotLoadError, load_bot

    bot = "from sdk import Bot\n\n\nclass T(Bot):\n    pass\n"
    (tmp_path / "torchbot.py").write_text("import torch_not_installed_here\n" + bot)
    (tmp_path / "torch_not_installed_herebot.py").write_text("import torch_not_installed_here\n"
                                                              + bot)  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    with pytest.raises(BotLoadError) as e:
        load_bot("torch_not_installed_herebot:T")
    said = str(e.value)
    assert said.startswith("importing 'torch_not_installed_herebot' failed: ModuleNotFoundError: "
                           "No module named 'torch_not_installed_here' (at "), said  # fmt: skip
    assert "torch_not_installed_herebot.py, line 1, in <module>: import torch_not" in said
    assert said.endswith(f"; it is not installed for the Python that runs the bot "
                         f"({sys.executable}): `{sys.executable} -m pip install ...` installs "
                         "a package there")  # fmt: skip
    with pytest.raises(BotLoadError) as e:
        load_bot(str(tmp_path / "torchbot.py"))
    assert f"({sys.executable}): `{sys.executable} -m pip install ...`" in str(e.value)

    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "neighbour_r32.py").write_text("X = 1\n")
    (pkg / "pbot.py").write_text("import neighbour_r32\n" + bot)
    with pytest.raises(BotLoadError) as e:
        load_bot(str(pkg / "pbot.py"))
    assert str(e.value).endswith(
        "; neighbour_r32 beside it is a module of its package mypkg: import it relatively, "
        "`from . import neighbour_r32` or `from .neighbour_r32 import ...`"
    ), e.value


SCRIPT = """
import sdk
from sdk import Bot


class Scripted(Bot):
    pass


sdk.run(Scripted, arena="127.0.0.1:{port}", token="t", retry_for={retry_for})
"""


def test_a_bot_file_that_runs_itself_when_imported_is_refused_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a bot file ending with ``sdk.run(Scripted, arena=..., token=...)`` outside
    ``if __name__ == "__main__":`` (a script's way to start itself) made ``arena-bot try``
    try to reach that arena while it imported the file, for --retry-for (ten minutes)
    before any local match, and ``arena-bot run`` (and every worker) connect with the
    file's own arguments. The import is refused, naming the line and what to do."""
    from sdk.loader import BotLoadError, load_bot

    monkeypatch.setattr(sys, "path", list(sys.path))
    f = tmp_path / "script.py"
    f.write_text(SCRIPT.format(port=_closed_port(), retry_for=0.3))  # (before: 0.3 s retried)
    with pytest.raises(BotLoadError) as e:
        load_bot(str(f))
    said = str(e.value)
    assert said.startswith(
        f"importing {str(f)!r} failed: RuntimeError: sdk.run() was called while arena-bot "
        "imported the bot's file to load its class: a script's own run belongs under "
        '`if __name__ == "__main__":` (at '
    ), said
    assert said.endswith(", line 10, in <module>: sdk.run(Scripted, arena=\"127.0.0.1:"
                         f"{said.split('127.0.0.1:')[-1]}")  # fmt: skip
    assert "sdk/client.py" not in said  # (the bot's line, not the SDK's)
    # Run as a script, or imported by a program of its own, the file runs as it says.
    f.write_text(SCRIPT.format(port=_closed_port(), retry_for=0))
    r = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert "cannot connect to the arena at 127.0.0.1:" in r.stderr, r.stderr


def test_the_rehearsal_says_its_bots_may_warn_before_the_arena_listens() -> None:
    """Defect: writing-a-bot.md's rehearsal starts ``arena serve`` and its bots at once, so
    pasted as it is the bots' first lines were warnings that no arena serves there, which
    the guide never mentioned: the author was left to wonder what went wrong. The guide
    says that they are expected, quoting the warning as the bots now say it."""
    guide = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    block = guide.index("arena serve --tokens tokens.toml --max-deals 12 --port 50051")
    said = guide.index('"cannot connect to the arena at localhost:50051: connection refused', block)
    assert "is expected then, and the bots connect at the next try" in guide[said:]
