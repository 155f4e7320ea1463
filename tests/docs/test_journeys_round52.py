"""Round 52: an organiser serving a club on one address of its network, with TLS and
tokens, and a bot author on another machine connecting to it, read from README.md and
docs/*.md alone. What did not hold is pinned here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.certs import make_cert
from tests.support.spawn import readline_within

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _joined(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _first_line(tmp_path: Path, cert: Path, key: Path, host: str) -> str:
    """The first line `arena serve --host HOST --port 0` with TLS prints."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{b} = "tok-{b * 16}"\n' for b in "abc"))
    tokens.chmod(0o600)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--tokens", str(tokens), "--port", "0",
         "--host", host, "--tls-cert", str(cert), "--tls-key", str(key),
         "--record-dir", str(tmp_path / "rec")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = readline_within(proc.stdout, 60)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert line is not None and line.startswith(f"arena referee listening on {host}:"), line
    return line.rstrip()


def test_an_arena_on_one_address_names_only_what_reaches_it(tmp_path: Path) -> None:
    """Defect: an organiser serving on one address of the club's network, `arena serve
    --host 192.0.2.2 --tls-cert arena.pem ...` with the certificate tournament.md makes for
    bots on other machines (localhost, the host's name and address), was told "bots
    connect by a name its certificate lists: localhost, arena.example.org, 192.0.2.2"; her
    own bots given `--arena localhost:PORT` met "connection refused" (the arena listens on
    192.0.2.2 alone). With the docs' test certificate (localhost only) no bot could
    connect at all, and nothing said so. (127.0.0.2 stands for the network's address: a
    loopback address other than 127.0.0.1, which localhost does not reach either.)"""
    from arena.cli.serve import _tls_names

    said = (
        " (TLS: bots connect by a name its certificate lists: arena.example.org, 192.0.2.2; not "
        "by localhost, which it lists too: it listens on 192.0.2.2 only)"
    )
    assert _tls_names(["localhost", "arena.example.org", "192.0.2.2"], "192.0.2.2") == said
    assert f"arena referee listening on 192.0.2.2:50051{said}" in _joined(DOCS / "referee.md")
    assert _tls_names(["localhost", "127.0.0.2"], "127.0.0.2").endswith(
        "lists: 127.0.0.2; not by localhost, which it lists too: it listens on 127.0.0.2 only)"
    )
    # every address, or 127.0.0.1 (where localhost leads): every name, as before
    for host in ("0.0.0.0", "127.0.0.1"):
        assert _tls_names(["localhost"], host) == (
            " (TLS: bots connect by a name its certificate lists: localhost)"
        )
    cert, key = make_cert(tmp_path)  # (localhost only: the docs' test certificate)
    assert _first_line(tmp_path, cert, key, "127.0.0.2").endswith(
        "(TLS: its certificate lists localhost, none of which leads to 127.0.0.2, the one "
        "address it listens on: no bot can connect (make one that lists 127.0.0.2, or give "
        "--host to match it))"
    )


def test_a_tournament_on_one_address_refuses_a_server_name_that_leads_elsewhere(
    tmp_path: Path,
) -> None:
    """Defect: the organiser's tournament on the same address (`host = "192.0.2.2"`, `[tls]`
    with the certificate above and the default `server_name`, localhost) launched its
    bundled bots at localhost:PORT: each met "connection refused" for `bot_wait_s`, and the
    run gave up after 30 s saying only that ("3 of 3 bots did not connect within 30s").
    Now it is refused before anything starts, naming server_name, the host and the way out;
    a server_name that leads there (the certificate's address) is taken."""
    from arena.tournament.config import load_config
    from arena.tournament.runner import TournamentError, _check_server_name

    make_cert(tmp_path, names="DNS:localhost,IP:127.0.0.2")
    text = (
        'name = "club"\nhost = "127.0.0.2"\nbots = ["random", "heuristic", "counting"]\n'
        '[tls]\ncert = "arena.pem"\nkey = "arena.key"\n'
    )
    (tmp_path / "club.toml").write_text(text, encoding="utf-8")
    with pytest.raises(TournamentError) as e:
        _check_server_name(load_config(tmp_path / "club.toml"))
    assert str(e.value) == (
        "tls.server_name 'localhost', the name the local bots connect to, does not lead to "
        "127.0.0.2, the one address the arena listens on (host): set server_name to a name "
        'the certificate lists for it (or host = "0.0.0.0", every address)'
    )
    (tmp_path / "club.toml").write_text(text + 'server_name = "127.0.0.2"\n', encoding="utf-8")
    _check_server_name(load_config(tmp_path / "club.toml"))
    assert "a `server_name` that does not lead to `host` (the default localhost with" in _joined(
        DOCS / "tournament.md"
    )
