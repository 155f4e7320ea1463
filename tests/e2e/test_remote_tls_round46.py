"""A bot on another machine, over TLS, with a token, as the docs tell the organiser and
the bot author (round 46): `arena serve` and `arena tournament` listening on every
interface with a certificate made by openssl, bots connecting by a non-loopback address
of this machine, and each wrong way in refused with a message that names the mistake."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.spawn import readline_within

BIN = Path(sys.executable).parent
ARENA, BOT = str(BIN / "arena"), str(BIN / "arena-bot")
TOKENS = {"a": "round46-token-aaaa", "b": "round46-token-bbbb", "c": "round46-token-cccc"}
DEADLINE = 90  # generous: the machine is shared


def _openssl() -> str:
    found = shutil.which("openssl")
    if found is None:
        pytest.skip("no openssl to make the certificates")
    return found


def make_cert(where: Path, stem: str, names: str, *, expired: bool = False) -> tuple[Path, Path]:
    """A self-signed certificate for the subjectAltName ``names`` (``DNS:localhost,IP:...``)
    and its key, as an organiser makes one with openssl; ``expired``: it ended yesterday."""
    openssl = _openssl()
    cert, key = where / f"{stem}.pem", where / f"{stem}.key"
    if not expired:
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", str(key), "-out", str(cert), "-subj", "/CN=arena",
             "-addext", f"subjectAltName={names}"],
            check=True, capture_output=True,
        )  # fmt: skip
        return cert, key
    csr, ext = where / f"{stem}.csr", where / f"{stem}.ext"
    ext.write_text(f"subjectAltName={names}\nbasicConstraints=critical,CA:TRUE\n")
    subprocess.run(
        [openssl, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
         "-subj", "/CN=arena"],
        check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        [openssl, "x509", "-req", "-in", str(csr), "-signkey", str(key), "-out", str(cert),
         "-days", "-1", "-extfile", str(ext)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def outside_address() -> str:
    """An IPv4 address of this machine other than loopback (`hostname -I`), that it
    can connect to itself; the test is skipped without one."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10)
        candidates = out.stdout.split()
    except (OSError, subprocess.SubprocessError):
        candidates = []
    for addr in candidates:
        if ":" in addr or addr.startswith("127."):
            continue
        with socket.socket() as s:
            try:
                s.bind((addr, 0))
            except OSError:
                continue
            return addr
    pytest.skip("no non-loopback IPv4 address on this machine")


def _env(token: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_TOKEN", "ARENA_ADDRESS")}
    env["PYTHONUNBUFFERED"] = "1"
    if token is not None:
        env["ARENA_TOKEN"] = token
    return env


def _tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text("[bots]\n" + "".join(f'{n} = "{t}"\n' for n, t in TOKENS.items()))
    path.chmod(0o600)
    return path


def _serve(procs: list, tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], int]:
    """`arena serve -v` on port 0 with the tokens file; (process, port)."""
    p = subprocess.Popen(
        [ARENA, "serve", "--port", "0", "--tokens", str(_tokens_file(tmp_path)),
         "--max-deals", "2", "--record-dir", str(tmp_path / "rec"), "-v", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path,
    )  # fmt: skip
    procs.append(p)
    assert p.stdout is not None
    end = time.monotonic() + DEADLINE
    while (left := end - time.monotonic()) > 0:
        line = readline_within(p.stdout, left)  # (a plain readline waits for ever)
        if not line:
            break
        if line.startswith("port "):
            return p, int(line.split()[1])
    p.kill()
    out, err = p.communicate()
    raise AssertionError(f"arena serve did not start: {out}\n{err}")


def _bot(arena: str, token: str | None, *args: str, timeout: float = DEADLINE):
    return subprocess.run(
        [BOT, "run", "random", "--arena", arena, *args],
        capture_output=True, text=True, env=_env(token), timeout=timeout,
    )  # fmt: skip


def _no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text, text


def test_serve_tls_on_every_interface_by_address_plays_and_keeps_tokens_out(
    tmp_path: Path, procs: list
) -> None:
    """The organiser's certificate names this machine's address; bots connect by it with
    --ca; the match is played, recorded and stored, and no token is in any file made."""
    addr = outside_address()
    cert, key = make_cert(tmp_path, "arena", f"DNS:localhost,IP:{addr}")
    serve, port = _serve(procs, tmp_path, "--host", "0.0.0.0", "--tls-cert", str(cert),
                         "--tls-key", str(key), "--matches", "1", "--db", "db.sqlite")  # fmt: skip
    bots = [
        subprocess.Popen(
            [BOT, "run", "random", "--arena", f"{addr}:{port}", "--ca", str(cert), "--once"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(t),
        )
        for t in TOKENS.values()
    ]
    procs.extend(bots)
    for b in bots:
        _, err = b.communicate(timeout=DEADLINE)
        assert b.returncode == 0, err
        assert "match" in err and "ended" in err, err
        _no_traceback(err)
    out, err = serve.communicate(timeout=DEADLINE)
    assert serve.returncode == 0, err
    assert "1 match(es) played" in out
    assert f"from ipv4:{addr}:" in err  # they came by the outside address
    _no_traceback(out, err)
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 1
    (tmp_path / "board.html").write_text(
        subprocess.run(
            [ARENA, "leaderboard", "--db", str(tmp_path / "db.sqlite"), "--format", "html"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "tokens.toml":
            data = path.read_bytes()
            for token in TOKENS.values():
                assert token.encode() not in data, f"a token in {path}"
    for token in TOKENS.values():
        assert token not in out + err


def test_serve_tls_refusals_name_the_mistake(tmp_path: Path, procs: list) -> None:
    """Wrong token, no token, plain text against TLS, a host the certificate does not
    list, TLS against plain text: each ends (or warns) naming what is wrong."""
    addr = outside_address()
    cert, key = make_cert(tmp_path, "arena", "DNS:localhost")
    serve, port = _serve(procs, tmp_path, "--host", "0.0.0.0", "--tls-cert", str(cert),
                         "--tls-key", str(key))  # fmt: skip
    local = f"localhost:{port}"
    wrong = _bot(local, "not-a-token-of-here", "--ca", str(cert))
    assert wrong.returncode == 2 and "refused the token: unknown token" in wrong.stderr
    missing = _bot(local, None, "--ca", str(cert))
    assert missing.returncode == 2 and "no token: give --token" in missing.stderr
    # (--retry-for 10, not 2: its first try waits for the Welcome no longer, and the closed
    # socket that earns the hint must come within it; an arena paused past it on a loaded
    # machine left "no Welcome ... within 2 s" alone, as tests/sdk/test_cli_audit.py saw)
    plain = _bot(local, TOKENS["a"], "--retry-for", "10")
    assert plain.returncode == 1 and "if the arena uses TLS, pass --tls or --ca" in plain.stderr
    by_addr = _bot(f"{addr}:{port}", TOKENS["a"], "--ca", str(cert))
    assert by_addr.returncode == 2
    assert "not for the host name in --arena" in by_addr.stderr, by_addr.stderr
    self_signed = _bot(local, TOKENS["a"], "--tls")
    assert self_signed.returncode == 2 and "give the certificate" in self_signed.stderr
    _no_traceback(wrong.stderr, missing.stderr, plain.stderr, by_addr.stderr, self_signed.stderr)
    serve.terminate()
    _, err = serve.communicate(timeout=DEADLINE)
    assert "refused: unknown token" in err  # the organiser's side of the wrong token
    for token in TOKENS.values():
        assert token not in err
    _no_traceback(err)
    # TLS against an arena serving plain text
    plain_serve, plain_port = _serve(procs, tmp_path, "--host", "0.0.0.0")
    tls_bot = _bot(f"{addr}:{plain_port}", TOKENS["a"], "--ca", str(cert))
    assert tls_bot.returncode == 2 and "does not answer in TLS" in tls_bot.stderr
    plain_serve.terminate()
    _, err = plain_serve.communicate(timeout=DEADLINE)
    assert "without TLS" in err
    _no_traceback(tls_bot.stderr, err)


def test_serve_refuses_an_expired_certificate(tmp_path: Path) -> None:
    """No bot could ever pass the handshake: the organiser is told at once, not each bot."""
    cert, key = make_cert(tmp_path, "old", "DNS:localhost", expired=True)
    r = subprocess.run(
        [ARENA, "serve", "--port", "0", "--tokens", str(_tokens_file(tmp_path)),
         "--tls-cert", str(cert), "--tls-key", str(key), "--record-dir", str(tmp_path / "r")],
        capture_output=True, text=True, env=_env(), timeout=30,  # (it served on, before)
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "expired" in r.stderr and "old.pem" in r.stderr, r.stderr
    _no_traceback(r.stderr)


def test_serve_notes_a_certificate_only_for_loopback_on_every_interface(
    tmp_path: Path, procs: list
) -> None:
    """The docs' test certificate names localhost only: a bot on another machine cannot
    connect by any name it lists, which the organiser hears at the start."""
    cert, key = make_cert(tmp_path, "arena", "DNS:localhost")
    serve, _ = _serve(procs, tmp_path, "--host", "0.0.0.0", "--tls-cert", str(cert),
                      "--tls-key", str(key))  # fmt: skip
    serve.terminate()
    _, err = serve.communicate(timeout=DEADLINE)
    assert "lists only localhost" in err, err


def _tournament_config(tmp_path: Path, cert: Path, key: Path, **extra: str) -> Path:
    cfg = tmp_path / "remote.toml"
    tls = "".join(f'{k} = "{v}"\n' for k, v in extra.items())
    cfg.write_text(
        'name = "remote46"\nruleset = "classic"\nmatches_per_table = 1\nmax_deals = 2\n'
        'concurrency = 3\nhost = "0.0.0.0"\nport = 0\nbot_wait_s = 60\ndb = "t.sqlite"\n'
        'out = "out"\ndeals = "independent"\n'
        f'[tls]\ncert = "{cert.name}"\nkey = "{key.name}"\n{tls}'
        '[bots]\nrandom = "random"\nfriend = { remote = true, token_env = "FRIEND_TOKEN" }\n'
        'pal = { remote = true, token_env = "PAL_TOKEN" }\n'
    )
    return cfg


def test_tournament_tells_remote_bots_a_name_the_certificate_lists(
    tmp_path: Path, procs: list
) -> None:
    """With [tls] and host 0.0.0.0 the arena used to tell remote bots to connect to
    `localhost` (its server_name, for its own bots): on another machine that is not the
    arena. It names what the certificate lists; remote bots connect by the address, play,
    and their tokens stay out of every file."""
    addr = outside_address()
    cert, key = make_cert(tmp_path, "arena", f"DNS:localhost,IP:{addr}")
    cfg = _tournament_config(tmp_path, cert, key)
    env = _env()
    env["FRIEND_TOKEN"], env["PAL_TOKEN"] = TOKENS["a"], TOKENS["b"]
    t = subprocess.Popen([ARENA, "tournament", "--config", str(cfg)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)  # fmt: skip
    procs.append(t)
    assert t.stderr is not None
    port = None
    end = time.monotonic() + DEADLINE
    while port is None and (left := end - time.monotonic()) > 0:
        line = readline_within(t.stderr, left)
        if not line:
            break
        if "waiting up to" in line:
            assert "localhost:" not in line, line
            assert addr in line, line
            port = int(re.search(r"port (\d+)", line)[1])  # type: ignore[index]
    assert port is not None, "the tournament never said where to connect"
    friends = [
        subprocess.Popen(
            [BOT, "run", "random", "--arena", f"{addr}:{port}", "--ca", str(cert)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tok),
        )
        for tok in (TOKENS["a"], TOKENS["b"])
    ]
    procs.extend(friends)
    for f in friends:
        _, err = f.communicate(timeout=DEADLINE)
        assert f.returncode == 0, err
        _no_traceback(err)
    out, err = t.communicate(timeout=DEADLINE)
    assert t.returncode == 0, err
    assert "stored" in err
    _no_traceback(out, err)
    assert TOKENS["a"] not in out + err and TOKENS["b"] not in out + err
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for token in (TOKENS["a"], TOKENS["b"]):
                assert token.encode() not in data, f"a token in {path}"


def test_tournament_refuses_a_server_name_its_certificate_does_not_list(tmp_path: Path) -> None:
    """The docs say the certificate must name tls.server_name: one that does not made every
    local bot fail its handshake; the run stops before anything starts, naming both."""
    cert, key = make_cert(tmp_path, "arena", "DNS:localhost")
    cfg = _tournament_config(tmp_path, cert, key, server_name="127.0.0.1")
    env = _env()
    env["FRIEND_TOKEN"], env["PAL_TOKEN"] = TOKENS["a"], TOKENS["b"]
    r = subprocess.run([ARENA, "tournament", "--config", str(cfg)], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=DEADLINE)  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert "server_name '127.0.0.1'" in r.stderr and "(localhost)" in r.stderr, r.stderr
    assert "starting random" not in r.stderr  # (no bot was started)
    _no_traceback(r.stderr)


SLOW_BOT = """
import time
from bots.random_bot import RandomBot

class Slow(RandomBot):
    def act(self, view):
        time.sleep(0.05)
        return super().act(view)
"""


def test_same_token_reconnects_mid_match_over_tls(tmp_path: Path, procs: list) -> None:
    """A bot killed mid-match and started again with its token (by the outside address,
    over TLS) takes its seat back: the match ends without a forfeit and is stored."""
    addr = outside_address()
    cert, key = make_cert(tmp_path, "arena", f"DNS:localhost,IP:{addr}")
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    serve, port = _serve(procs, tmp_path, "--host", "0.0.0.0", "--tls-cert", str(cert),
                         "--tls-key", str(key), "--matches", "1", "--db", "db.sqlite",
                         "--grace-s", "60", "--time-bank-ms", "60000")  # fmt: skip
    arena = f"{addr}:{port}"

    def slow() -> subprocess.Popen[str]:
        p = subprocess.Popen([BOT, "run", str(tmp_path / "slow.py:Slow"), "--arena", arena,
                              "--ca", str(cert), "--once"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_env(TOKENS["a"]))  # fmt: skip
        procs.append(p)
        return p

    others = [
        subprocess.Popen(
            [BOT, "run", "random", "--arena", arena, "--ca", str(cert), "--once"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(tok),
        )
        for tok in (TOKENS["b"], TOKENS["c"])
    ]
    procs.extend(others)
    first = slow()
    assert first.stderr is not None
    end = time.monotonic() + DEADLINE
    while True:
        line = readline_within(first.stderr, max(0.0, end - time.monotonic()))
        assert line, "the bot ended (or said nothing) before its match started"
        if "started: seat" in line:
            break
    first.kill()
    first.wait()
    again = slow()
    _, err = again.communicate(timeout=DEADLINE)
    assert again.returncode == 0, err
    assert "ended: scores" in err, err
    for p in others:
        p.communicate(timeout=DEADLINE)
        assert p.returncode == 0
    out, serve_err = serve.communicate(timeout=DEADLINE)
    assert serve.returncode == 0, serve_err
    assert "forfeits []" in serve_err, serve_err
    assert serve_err.count("bot a connected") == 2, serve_err
    assert TOKENS["a"] not in serve_err
    _no_traceback(err, out, serve_err)
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM matches").fetchone()[0] == 1


def test_tournament_says_a_remote_bot_may_have_failed_its_handshake(
    tmp_path: Path, procs: list
) -> None:
    """A friend connecting in plain text to a TLS tournament fails its handshake, which the
    arena never sees: its side is told (and retries), and the organiser's "never
    connected" says that over TLS a failed handshake is unseen, rather than nothing."""
    cert, key = make_cert(tmp_path, "arena", "DNS:localhost")
    cfg = _tournament_config(tmp_path, cert, key)
    # The friend's try must reach the arena while it waits (a try after the wait hears
    # "connection refused", no hint): 20 s, not 4, for a bot starting on a loaded machine.
    cfg.write_text(cfg.read_text().replace("bot_wait_s = 60", "bot_wait_s = 20"))
    env = _env()
    env["FRIEND_TOKEN"], env["PAL_TOKEN"] = TOKENS["a"], TOKENS["b"]
    t = subprocess.Popen([ARENA, "tournament", "--config", str(cfg)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)  # fmt: skip
    procs.append(t)
    assert t.stderr is not None
    port, said = None, ""
    end = time.monotonic() + DEADLINE
    while port is None:
        line = readline_within(t.stderr, max(0.0, end - time.monotonic()))
        assert line, f"the tournament never said where to connect:\n{said}"
        said += line
        if "waiting up to" in line:
            port = int(re.search(r"port (\d+)", line)[1])  # type: ignore[index]
    plain = _bot(f"localhost:{port}", TOKENS["a"], "--retry-for", "10")
    assert plain.returncode == 1 and "pass --tls or --ca" in plain.stderr
    _, rest = t.communicate(timeout=DEADLINE)
    err = said + rest
    assert t.returncode == 1, err
    assert "friend: remote bot, never connected with its token (over TLS:" in err, err
    assert "in plain text" in err
    # host 0.0.0.0 with a certificate for localhost only: said at the start
    assert "lists only localhost" in err
    _no_traceback(plain.stderr, err)
