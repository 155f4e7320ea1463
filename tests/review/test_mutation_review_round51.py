"""Review round 51: the 49th session's hostile-client and server changes (a Hello read
unparsed and refused over ``HELLO_MAX_BYTES``, a later message's bytes weighed before it is
parsed, Play's handler taking raw bytes in and wire bytes out, ``MAX_CONCURRENCY``, the
"missing token" refusal saying what came, and ``lan_address`` where ``arena web``, ``arena
serve`` and ``arena tournament`` say it), read with hand mutants.

A defect: a server listening on every address written otherwise than ``0.0.0.0`` or ``::``
(``--host [::]``, as the options take an IPv6 address, or ``0:0:0:0:0:0:0:0``) said none of
it: ``arena web`` left out that its pages have no password and the URL to hand out,
``arena serve`` and ``arena tournament`` the address remote bots connect to
(``is_every_address`` now tells). The tests of that here fail without it; the others kill
mutants the earlier tests let live: a weightless answer checked against a flood meter
already full (a bot back from a flood refused at its first answer), ``authenticate(None)``,
the concurrency bound itself (256 taken), TLS on every address naming no address, the
shared pages' note with no LAN address. (tests/web/test_dual_stack_round51.py: the second
defect, ``arena web --host ::`` on a system whose IPv6 sockets are IPv6-only.)

67 hand mutants: 46 killed by the earlier tests, 15 by the new ones, 6 equivalent (a bound
of 0 never given; the per-message reset of counters every read sets; Play's handler handed
on to ``_parsing_refused``, which returns it as is; loopback by IPv4 to a dual-stack
referee; ``if address`` for ``is not None`` of a str; a single IPv6 address told to take
IPv4 too), none left.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import main as arena
from arena.cli import web
from arena.referee import Referee, RefereeConfig
from arena.referee.core import _Refusal
from arena.referee.lobby import Lobby
from arena.referee.sessions import AuthError, Stream
from arena.tournament import ConfigError, RunOptions, TournamentError, load_config, run, runner
from arena.tournament.config import MAX_CONCURRENCY
from arena.v1 import arena_pb2 as pb
from arena.web.demo import make_demo_db
from arena.web.server import WebServer
from tests.arena.test_referee_limits import _answer, _Reader
from tests.support.certs import make_cert

TOKENS = '[bots]\nann = "tok-ann-123456"\nbob = "tok-bob-123456"\ncid = "tok-cid-123456"\n'


def _serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """What ``arena serve ARGS`` prints (its tokens file made here) when it plays no match:
    its lobby ends at once, and so does it."""

    async def no_match(self: Lobby) -> None:
        return None

    monkeypatch.setattr(Lobby, "run", no_match)
    tokens = tmp_path / "bots.toml"
    tokens.write_text(TOKENS, encoding="utf-8")
    tokens.chmod(0o600)
    got = CliRunner().invoke(arena, ["serve", "--tokens", str(tokens), "--port", "0",
                                     "--record-dir", str(tmp_path / "r"), *args])  # fmt: skip
    assert got.exit_code == 0, got.output
    return got.stdout


def test_serve_on_every_address_in_brackets_says_what_bots_connect_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--host [::]` listens on every address as `--host ::` does: the line after `port N`
    names the address bots on other machines connect to (it said nothing)."""
    monkeypatch.setattr("arena.addresses.lan_address", lambda: "192.0.2.7")
    lines = _serve(tmp_path, monkeypatch, "--host", "[::]").splitlines()
    assert lines[0].startswith("arena referee listening on [::]:"), lines
    port = lines[1].removeprefix("port ")
    assert lines[2].startswith(f"bots on other machines connect to 192.0.2.7:{port} (this "
                               "machine's address on its default route"), lines  # fmt: skip


def test_serve_on_every_address_over_tls_names_no_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over TLS a bot connects by a name the certificate lists (an address fails its
    handshake): no address is handed out, the names are."""
    monkeypatch.setattr("arena.addresses.lan_address", lambda: "192.0.2.7")
    cert, key = make_cert(tmp_path / "tls")
    out = _serve(tmp_path, monkeypatch, "--host", "0.0.0.0", "--tls-cert", str(cert),
                 "--tls-key", str(key))  # fmt: skip
    lines = out.splitlines()
    assert "(TLS: bots connect by a name its certificate lists: localhost)" in lines[0], lines
    assert "192.0.2.7" not in out and "bots on other machines" not in out, out


def test_web_on_every_address_in_brackets_says_its_pages_have_no_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena web --host [::]` serves every address: it says so, the URL to hand out and
    that the pages have no password (it said only "serving ... at http://[::]:PORT/")."""

    def stop(self: WebServer) -> None:  # (Ctrl-C at once)
        raise KeyboardInterrupt

    monkeypatch.setattr(WebServer, "serve_forever", stop)
    monkeypatch.setattr("arena.addresses.lan_address", lambda: "192.0.2.7")
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    got = CliRunner().invoke(arena, ["web", "--db", str(db), "--host", "[::]", "--port", "0"])
    assert got.exit_code == 0, got.output
    lines = got.stdout.splitlines()
    assert "at http://[::]:" in lines[0], lines
    port = lines[0].split("]:")[1].split("/")[0]
    assert lines[1].startswith("every address of this machine: readers on the network open "
                               f"http://192.0.2.7:{port}/"), lines  # fmt: skip
    assert "no password and in plain HTTP" in lines[1], lines


def test_the_shared_pages_with_no_lan_address_say_how_to_find_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offline (no default route) the note names no address ("http://None:PORT/" had the
    check gone) but how to find one."""
    monkeypatch.setattr("arena.addresses.lan_address", lambda: None)
    note = web._shared_note(8123)
    assert "open http://THIS-MACHINE'S-ADDRESS:8123/ (hostname -I) (by a host name" in note
    assert "None" not in note and "here http://localhost:8123/" in note
    monkeypatch.setattr("arena.addresses.lan_address", lambda: "192.0.2.7")
    assert "open http://192.0.2.7:8123/ (by a host name" in web._shared_note(8123)


def test_a_tournament_on_every_ipv6_address_written_in_full_names_the_lan_address(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`host = "0:0:0:0:0:0:0:0"` listens on every address: the waiting line names the
    address to hand out (it named the wildcard itself, "[0:0:0:0:0:0:0:0]:PORT"), and the
    local bots connect by loopback."""
    monkeypatch.setattr(runner, "lan_address", lambda: "192.0.2.7")
    path = tmp_path / "wild.toml"
    path.write_text(
        f'name = "wild"\nhost = "0:0:0:0:0:0:0:0"\nbot_wait_s = 0.2\n'
        f'db = "{tmp_path / "w.sqlite"}"\nout = "{tmp_path / "o"}"\n[bots]\n'
        'far = { remote = true, token = "0123456789abcdef" }\na = "random"\nb = "random"\n',
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING), pytest.raises(TournamentError, match="never connected"):
        run(load_config(path), RunOptions(progress=False))
    waiting = next(r.getMessage() for r in caplog.records if "remote bots" in r.getMessage())
    assert "connect them to this machine's address, port " in waiting, waiting
    port = waiting.split("this machine's address, port ")[1].split(" ")[0]
    assert f"(192.0.2.7:{port} on its default route)" in waiting, waiting


def test_a_concurrency_of_the_bound_is_taken_and_one_more_refused(tmp_path: Path) -> None:
    """256 matches at once is allowed (the bound itself), 257 is not, in the config and on
    the command line alike."""
    path = tmp_path / "t.toml"
    for concurrency in (MAX_CONCURRENCY, MAX_CONCURRENCY + 1):
        path.write_text(
            f'name = "t"\nconcurrency = {concurrency}\n[bots]\na = "random"\nb = "random"\n'
            'c = "random"\n',
            encoding="utf-8",
        )
        if concurrency == MAX_CONCURRENCY:
            assert load_config(path).concurrency == MAX_CONCURRENCY == 256
            continue
        with pytest.raises(ConfigError, match=r"concurrency: must be between 1 and 256 .*got 257"):
            load_config(path)
    got = CliRunner().invoke(arena, ["tournament", "--config", str(path), "--concurrency", "257"])
    assert got.exit_code == 2, got.output
    assert "'--concurrency': 257 is not in the range 1<=x<=256" in got.stderr, got.stderr


def test_a_flooded_bot_back_within_the_window_has_its_answers_read_and_a_stray_refused() -> None:
    """The flood meter is the bot's, kept across its streams: a bot refused for flooding and
    back within the window has its answers read, parsed or as bytes on the wire (they weigh
    nothing), so that its matches go on; a stray is refused at once. Mutant: a message that
    weighs nothing checked against the full meter (every answer refused as a flood)."""
    answer = pb.BotMessage(decision=_answer(200))
    stray = pb.BotMessage(decision=pb.Decision(match_id="nowhere"))

    async def main(*messages: pb.BotMessage | bytes) -> tuple[_Refusal | None, list[str]]:
        ref = Referee(RefereeConfig(flood_limit=10))
        ref.add_bot("b", "tok")
        session = ref.session("b")
        assert session.flood.over(asyncio.get_running_loop(), 11)  # (its stream that flooded)
        stream = Stream("peer")
        session.attach(stream)
        read: list[str] = []

        def on_message(_: Any, msg: pb.BotMessage) -> int:
            read.append(msg.decision.match_id)
            return int(msg.decision.match_id != "ok")

        ref.on_message = on_message  # type: ignore[method-assign]
        try:
            await ref._read_loop(session, stream, _Reader(*messages))
        except _Refusal as e:
            return e, read
        return None, read

    assert asyncio.run(main(answer, answer.SerializeToString())) == (None, ["ok", "ok"])
    refusal, read = asyncio.run(main(answer.SerializeToString(), stray, answer))
    assert read == ["ok", "nowhere"] and refusal is not None, read
    assert refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refusal.message.startswith("more than 10 messages answering no pending request")


def test_a_call_with_no_metadata_at_all_is_told_it_carried_none() -> None:
    """``authenticate`` takes no metadata (None) as it takes an empty one, as
    ``bearer_token`` does (mutant: iterated as is, a TypeError)."""
    ref = Referee()
    for metadata in (None, (), (("x-token", "t"),)):
        with pytest.raises(AuthError) as refused:
            ref.authenticate(metadata)
        assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
        assert str(refused.value).endswith("(the call carried no 'authorization' metadata)")
