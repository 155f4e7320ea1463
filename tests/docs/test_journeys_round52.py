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


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (
            "DNS:localhost,IP:127.0.0.2",
            "(TLS: bots connect by a name its certificate lists: 127.0.0.2; not by localhost, "
            "which it lists too: it listens on 127.0.0.2 only)",
        ),
        (
            "DNS:localhost",
            "(TLS: its certificate lists localhost, none of which leads to 127.0.0.2, the one "
            "address it listens on: no bot can connect (make one that lists 127.0.0.2, or "
            "give --host to match it))",
        ),
    ],
)
def test_an_arena_on_one_address_names_only_what_reaches_it(
    tmp_path: Path, names: str, said: str
) -> None:
    """Defect: an organiser serving on one address of the club's network, `arena serve
    --host 192.0.2.2 --tls-cert arena.pem ...` with the certificate tournament.md makes for
    bots on other machines (localhost, the host's name and address), was told "bots
    connect by a name its certificate lists: localhost, arena.example.org, 192.0.2.2"; her
    own bots given `--arena localhost:PORT` met "connection refused" (the arena listens on
    192.0.2.2 alone). With the docs' test certificate (localhost only) no bot could
    connect at all, and nothing said so. (127.0.0.2 stands for the network's address: a
    loopback address other than 127.0.0.1, which localhost does not reach either.)"""
    cert, key = make_cert(tmp_path, names=names)
    assert _first_line(tmp_path, cert, key, "127.0.0.2").endswith(said)
    assert (
        "(TLS: bots connect by a name its certificate lists: arena.example.org, 192.0.2.2; not "
        "by localhost, which it lists too: it listens on 192.0.2.2 only)" in _joined(
            DOCS / "referee.md")
    )  # fmt: skip
