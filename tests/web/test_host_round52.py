"""Hostile round 52: ``arena web``'s Host check (the guard against DNS rebinding) and what
a plain HTTP client can send around it.

Checked by hand first with raw sockets against ``arena web`` on a demo database (all
answered a short JSON error, or the right page, at once, with nothing outside static/ and
the API served, and no 500): ``..`` and ``%2e%2e`` in the pages, the static files and the
API's ids, NUL bytes raw and encoded, bytes that are no UTF-8 in the path and the query,
64 KiB paths (414), 9,000 query parameters (414), repeated keys (the last counts),
SQL-looking and LIKE-looking ids (``'%20OR%201=1--``, ``%``, ``_``: 404), 28-digit deal
numbers, a season of 5,000 names, 70 KB and 200 headers (431), every other method (405,
a body or not), a body and chunked encoding on a GET (each connection answers one
request: HTTP/1.0, so no byte of a body is read as a next request), HTTP/2's preface and
HTTP/9.9 (505). There is no password (docs/web.md says so).

One client's requests for matches, each work of its own, kept every other spectator
waiting (the last test says how); they wait their turn now. A defect of its log, fixed
here too: with ``-v`` each request's line was logged as it came
(``arena web``'s ``log_message`` sent it to ``logging``, past http.server's own escaping):
an escape sequence in a path (``GET /\x1b[2J``) cleared or recoloured the operator's
terminal, a carriage return began a line of the client's making, and a 64 KiB path was a
64 KiB line. What a request says is now logged cut to 300 characters, its control
characters written out (``\x1b``).

Three defects of the Host check, fixed here, each a way to be served under a name the
server refuses:

* two ``Host`` headers: only the first was checked (``Host: localhost`` then ``Host:
  rebound.example`` was served); RFC 9112 makes it a 400, as it is now;
* a request target in absolute form (``GET http://rebound.example/api/... HTTP/1.1``) was
  served whatever host it named, its ``Host`` header alone checked; the target's host is
  the one the request is for (RFC 9112, 3.2.2), and it is checked now;
* ``Host : rebound.example`` (white space before the colon, which RFC 9112 refuses) ended
  the headers there for Python's parser: the request was served as one without ``Host``
  (HTTP/1.0's case); a header line that does not parse is a 400 now.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.web.demo import make_demo_db
from tests.support.harness import web_server


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    db = tmp_path_factory.mktemp("host52") / "t.sqlite"
    make_demo_db(db, matches=2, max_deals=1)
    with web_server(db) as server:
        yield server.port


def _ask(port: int, request: bytes) -> tuple[int, dict[str, object] | list[object]]:
    """``request`` sent as it is: the answer's status and its JSON body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_rebound_host_name_is_refused_however_the_request_carries_it(port: int) -> None:
    def ask(target: bytes, *headers: bytes) -> tuple[int, str]:
        status, body = _ask(port, b"GET %s HTTP/1.1\r\n%s\r\n" % (target, b"".join(headers)))
        return status, str(body.get("error", "") if isinstance(body, dict) else "")

    # (what the server answers, for the record: these are served)
    assert ask(b"/api/tournaments", b"Host: localhost\r\n")[0] == 200
    assert ask(b"http://127.0.0.1/api/tournaments", b"Host: 127.0.0.1\r\n")[0] == 200
    assert ask(b"/api/tournaments", b"Host: rebound.example\r\n")[0] == 403

    for first, second in (("localhost", "rebound.example"), ("rebound.example", "localhost")):
        status, error = ask(b"/api/tournaments", f"Host: {first}\r\nHost: {second}\r\n".encode())
        assert (status, error) == (400, "a request carries one Host header, not 2")

    status, error = ask(b"http://rebound.example/api/tournaments", b"Host: localhost\r\n")
    assert status == 403 and "'rebound.example'" in error and "DNS rebinding" in error

    for line in (b"Host : rebound.example\r\n", b"Host\t: rebound.example\r\n"):
        status, error = ask(b"/api/tournaments", line, b"Accept: */*\r\n")
        assert status == 400, (line, error)
        assert error.startswith("a header line does not parse"), error


def test_what_a_request_says_is_logged_cut_and_escaped(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="arena.web")
    for target in (b"/\x1b[2J\x1b]0;owned\x07", b"/a\rforged line", b"/" + b"a" * 60_000):
        status, _ = _ask(port, b"GET " + target + b" HTTP/1.0\r\n\r\n")
        assert 400 <= status < 500, target
    lines = [r.getMessage() for r in caplog.records if r.name == "arena.web"]
    assert len(lines) == 3, lines
    assert all(line.isprintable() and len(line) < 500 for line in lines), lines
    assert '"GET /\\x1b[2J\\x1b]0;owned\\x07 HTTP/1.0" 404' in lines[0], lines[0]
    assert '"GET /a\\x0dforged line HTTP/1.0" 400' in lines[1], lines[1]
    assert lines[2].endswith('… (59,714 more characters)" 404 -'), lines[2][-80:]


def test_one_clients_replays_wait_their_turn_not_everyones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: every request for matches was answered as it came. One client on 30
    connections asking for deals never asked before (each a match replayed, a deal's steps
    for a seat) kept the server's GIL busy, and every other spectator's least request waited
    half a second (median 515 ms, measured; 40 ms now). One address has
    ``MAX_WORKING_PER_ADDRESS`` (2) requests for matches (``/api/matches...``) answered at
    once; its others wait their turn, and other addresses are served meanwhile. (Every
    loopback address is one client: 127.0.0.2 is made another one here.)"""
    from arena.web import replay
    from arena.web import server as web

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    monkeypatch.setattr(web, "address_key", lambda address: address)
    release = threading.Event()
    arrived: list[str] = []
    entered: list[str] = []
    do_get = web._Handler.do_GET

    def counted_get(self: Any) -> None:
        if self.client_address[0] == "127.0.0.2":
            arrived.append(self.path)
        do_get(self)

    class HeldReplay(replay.MatchReplay):  # a replay that takes until it is released
        def __init__(self, *args: Any) -> None:
            entered.append(args[0])
            assert release.wait(60)
            super().__init__(*args)

    monkeypatch.setattr(web._Handler, "do_GET", counted_get)
    monkeypatch.setattr(replay, "MatchReplay", HeldReplay)

    def ask(source: str, path: str, got: list[int]) -> None:
        with socket.create_connection(("127.0.0.1", port), 60, (source, 0)) as s:
            s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
            got.append(int(s.recv(64).split()[1]))

    with web_server(db) as server:
        port = server.port
        costly: list[int] = []
        threads = [threading.Thread(target=ask, args=("127.0.0.2", "/api/matches/m0000", costly))
                   for _ in range(3)]  # fmt: skip
        try:
            for t in threads:
                t.start()
            _until(lambda: len(arrived) == 3 and len(entered) >= 2, "the costly client's three")
            other: list[int] = []  # (answered while both of its turns are held)
            ask("127.0.0.1", "/api/matches/m0000/record", other)
            ask("127.0.0.1", "/api/leaderboard", other)
            assert other == [200, 200]
            assert len(entered) == 2, entered  # the third waits its turn
        finally:
            release.set()
            for t in threads:
                t.join(60)
        assert costly == [200, 200, 200]  # (the third, its turn come, found the replay kept)
    assert web.MAX_WORKING_PER_ADDRESS == 2


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"not within 60 s: {what}"
        time.sleep(0.01)
