"""Review round 46: this session's product changes read with fresh eyes.

1. A bot whose ``act`` (or a hook) is set in ``__init__`` to a function that cannot take
   what the runners pass was refused with the class's method described: "Mine.act()
   (bot.py:125) is def act(self, view: 'PlayerView') -> 'Action', but the runners call it
   as act(view)", the SDK's own ``Bot.act``, a contradiction naming no line of the bot's.
   It names the function set on the bot, its line, and what it takes now.
2. `arena-bot try`'s verdict said "1 of them hook calls that raised" of one hook call.
3. The names a TLS certificate lists, told to the organiser and to remote bots to connect
   by, spelled an IPv6 address as :mod:`ssl` decodes it ("0:0:0:0:0:0:0:1",
   "2001:DB8:0:0:0:0:0:7"), not as an address is written and gRPC's check compares it
   ("::1").

Checked and fine (no test here): ``cert_names`` / ``cert_expired_problem`` on a missing
file, a key file, a key before the certificate, a chain (its first certificate), a
certificate with names only in its CN or only in a URI subjectAltName (lenient: gRPC
then decides); ``name_in_cert`` with ``*.`` against the bare domain and two labels, IPv6
spellings, brackets, case and a final dot.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.referee.config import cert_names, loopback_only_note, name_in_cert
from sdk import Bot
from sdk import cli as sdk_cli
from sdk.local import method_mistakes

# ------------------------------------------------- 1. a method set in __init__, miswritten

_ACT_SET_WRONG = """\
from sdk import Bot


class Mine(Bot):
    def __init__(self):
        self.act = self.decide

    def decide(self):
        return None
"""


def test_try_names_an_act_set_in_init_that_takes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "mine46.py"
    path.write_text(_ACT_SET_WRONG)
    result = CliRunner().invoke(sdk_cli.main, ["try", str(path), "-n", "1"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert (
        "Mine.act, set on the bot to decide() (mine46.py:8), takes (), but the runners "
        "call it as act(view)" in said
    ), said
    assert "bot.py" not in said and "def act(self, view" not in said, said


def test_a_hook_set_in_init_is_named_not_the_base_class_hook() -> None:
    class Hooks(Bot):
        def __init__(self) -> None:
            self.on_deal_end = functools.partial(self.ended, 1)

        def ended(self, n: int, view: object) -> None:
            pass

    errors, _ = method_mistakes(Hooks())
    assert len(errors) == 1, errors
    assert errors[0].startswith("Hooks.on_deal_end, set on the bot to ended() ("), errors
    assert errors[0].endswith(
        "takes (view: 'object') -> 'None', but the runners call it as on_deal_end(view, result)"
    ), errors


def test_a_well_written_act_set_in_init_is_no_mistake() -> None:
    class Fine(Bot):
        def __init__(self) -> None:
            self.act = self.decide

        def decide(self, view: object) -> object:
            return None

    assert method_mistakes(Fine()) == ([], [])


# ---------------------------------------------------------- 2. try's verdict, one hook

_ONE_HOOK = """\
from sdk import Bot


class OneHook(Bot):
    def on_deal_end(self, view, result):
        if result.number == 0:
            raise ValueError("boom once")

    def act(self, view):
        return view.legal_actions[0]
"""

_HOOK_AND_DECISION = """\
from sdk import Bot


class Both(Bot):
    raised = False

    def on_deal_end(self, view, result):
        if result.number == 0:
            raise ValueError("boom once")

    def act(self, view):
        if not self.raised:
            self.raised = True
            raise RuntimeError("first decision")
        return view.legal_actions[0]
"""


def _verdict(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    result = CliRunner().invoke(
        sdk_cli.main, ["try", str(path), "-n", "1", "--max-deals", "2"], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    return " ".join(result.output.split())


def test_try_verdict_of_one_hook_call_alone(tmp_path: Path) -> None:
    said = _verdict(tmp_path, "onehook46", _ONE_HOOK)
    assert said.endswith(
        "error: OneHook had 1 incident in 1 match (the incidents column; a hook call that "
        "raised, which an arena logs in the bot's log but records nowhere): exit code 1"
    ), said


def test_try_verdict_of_one_hook_call_among_others(tmp_path: Path) -> None:
    said = _verdict(tmp_path, "both46", _HOOK_AND_DECISION)
    assert said.endswith(
        "error: Both had 2 incidents in 1 match (the incidents column; 1 of them a hook call "
        "that raised, which an arena logs in the bot's log but records nowhere): exit code 1"
    ), said


# ------------------------------------------- 3. a certificate's IPv6 names, as written


def _cert(where: Path, names: str) -> Path:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make a certificate")
    cert = where / "c.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(where / "c.key"), "-out", str(cert), "-subj", "/CN=arena",
         "-addext", f"subjectAltName={names}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert


def test_a_certificates_ipv6_names_are_said_as_written(tmp_path: Path) -> None:
    cert = _cert(tmp_path, "DNS:localhost,IP:::1,IP:2001:db8::7,IP:127.0.0.1")
    names = cert_names(cert)
    assert names == ["localhost", "::1", "2001:db8::7", "127.0.0.1"], names
    assert name_in_cert("[0:0::1]", names) and name_in_cert("2001:DB8:0::7", names)
    local = _cert(tmp_path, "DNS:localhost,IP:::1")
    note = loopback_only_note(local, "0.0.0.0")
    assert note is not None and "lists only localhost, ::1: a bot" in note, note
