"""`arena web` under a hostile client and over a damaged database (an audit of the server):
requests fed a byte at a time, connections from many loopback or IPv6 addresses, the
security headers of every answer, and stored rows changed outside the arena.

Timing: the request deadline is made small; no assertion is on a duration. A test waits
for what it expects, with a generous guard (``GUARD_S``), and fails at the guard."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import sqlite3
import struct
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.web import DataSource
from arena.web import server as web
from arena.web.demo import make_demo_db
from tests.support.harness import web_server
from tests.support.spawn import readline_within

GUARD_S = 30.0


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hardening") / "t.sqlite"
    make_demo_db(path, matches=3, max_deals=2)
    return path


def wait_until(condition: Callable[[], bool], what: str, guard: float = GUARD_S) -> None:
    end = time.monotonic() + guard
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"not within {guard} s (a guard, not a requirement): {what}")
        time.sleep(0.02)


def served(srv: web.WebServer) -> int:
    """Connections the server holds a slot for."""
    with srv._open_lock:
        return sum(srv._open.values())


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    try:
        return socket.create_connection(("127.0.0.1", port), 10, (source, 0))
    except OSError as e:  # (Linux answers on all of 127.0.0.0/8; other systems may not)
        pytest.skip(f"cannot connect from {source}: {e}")


def answer(port: int, source: str = "127.0.0.1", path: str = "/api/tournaments") -> bytes:
    with connect(port, source) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        return b"".join(iter(lambda: s.recv(65536), b""))


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server closed ``s`` (without waiting for it)."""
    s.setblocking(False)
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True
    finally:
        s.setblocking(True)


def trickle(s: socket.socket, byte: bytes = b"a") -> bool:
    """Send one more byte of a never-ending header line; False once the server cut it."""
    try:
        s.sendall(byte)
    except OSError:
        return False
    return not closed_by_server(s)


# --- 1. slow requests hold no slot for ever ----------------------------------------------


def test_a_request_fed_a_byte_at_a_time_is_cut_at_its_deadline(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: the handler's ``timeout = 60`` was per recv: a request line or headers fed
    a byte every 25 s was never cut off, and held its thread and its slot. A request must
    now arrive whole within ``REQUEST_DEADLINE``; a connection whose request has not is
    shut down, answering nothing, and its slot is free."""
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 0.5, raising=False)
    with web_server(db) as srv:
        slow = connect(srv.port)
        slow.sendall(b"GET /api/tournaments HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        # a byte every 50 ms: far inside the per-recv timeout, never a whole request
        wait_until(lambda: not trickle(slow), "the trickled request is cut off")
        slow.close()
        wait_until(lambda: served(srv) == 0 and srv.deadlines.pending() == 0, "its slot freed")
        # a connection that sends nothing is closed at the deadline too
        with connect(srv.port) as idle:
            wait_until(lambda: closed_by_server(idle), "an idle connection is closed")
        # a request that comes whole is served
        assert answer(srv.port).startswith(b"HTTP/1.0 200 ")
        wait_until(lambda: served(srv) == 0, "every slot freed")


def test_a_client_resetting_half_a_request_writes_no_traceback(
    db: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a connection reset while its request was read (a client sending half a
    request, then an RST) printed socketserver's 20-line traceback to the server's stderr,
    one per connection, as fast as a client could connect. It is now a line at debug
    level; the slot is freed as before."""
    with caplog.at_level(logging.DEBUG, logger="arena.web"), web_server(db) as srv:
        for _ in range(3):
            s = connect(srv.port)
            s.sendall(b"GET /api/tourn")
            wait_until(lambda: served(srv) == 1, "the connection is being served")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()  # (linger 0: a reset)
            wait_until(lambda: served(srv) == 0, "its slot freed")
        assert answer(srv.port).startswith(b"HTTP/1.0 200 ")
    err = capsys.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("connection ended" in r.getMessage() for r in caplog.records) == 3


def test_a_requests_headers_are_bounded_in_all(db: Path) -> None:
    """Defect: http.server bounds each header line (64 KiB) and their number (100), not
    their sum: 32 connections from one address, each sending 99 lines of 64 KB within the
    deadline, took the server from 47 to 246 MB (four addresses fill all 128 slots). Past
    ``MAX_HEADER_BYTES`` in all, a request is answered 431 and its connection closed; a
    large cookie within the bound is served."""
    line = b"X-A: " + b"a" * 21900 + b"\r\n"  # (three: just past the bound, all read)
    assert 2 * len(line) < web.MAX_HEADER_BYTES < 3 * len(line)
    with web_server(db) as srv:
        for lines, status in ((2, b" 200 "), (3, b" 431 ")):
            with connect(srv.port) as s:
                s.sendall(b"GET /api/tournaments HTTP/1.0\r\nHost: 127.0.0.1\r\n" + line * lines)
                s.sendall(b"\r\n")
                got = b"".join(iter(lambda: s.recv(65536), b""))
            assert got.startswith(b"HTTP/1.0") and status in got.split(b"\r\n", 1)[0], got[:200]
        wait_until(lambda: served(srv) == 0, "every slot freed")


def test_the_audits_slow_connections_no_longer_keep_everyone_out(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit's attack: 4 x 32 connections from 127.0.0.1..127.0.0.4, each feeding its
    headers a byte at a time, took every slot (128 in all, 32 per address) and every real
    request was answered 503 for as long as the attacker liked. Loopback is one address now
    (32 slots, the rest answered 503 at once) and the 32 are cut at their deadline: a real
    request is served while the attacker still trickles."""
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 0.5, raising=False)
    with web_server(db) as srv:
        slow: list[socket.socket] = []
        try:
            for i in range(1, 5):
                for _ in range(32):
                    s = connect(srv.port, f"127.0.0.{i}")
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    slow.append(s)
            real: list[bytes] = []

            def attacked() -> bool:
                for s in list(slow):  # the attacker keeps feeding every connection left
                    if not trickle(s):
                        slow.remove(s)
                        s.close()
                real.append(answer(srv.port, "127.0.0.1"))
                return real[-1].startswith(b"HTTP/1.0 200 ")

            wait_until(attacked, "a real request is served")
        finally:
            for s in slow:
                s.close()


def test_a_burst_of_connections_waits_in_the_backlog_not_for_tcp_to_resend(db: Path) -> None:
    """Defect: socketserver's backlog of 5. Connections made while the server was busy
    past it had their SYN dropped and waited for TCP to resend it (1 s, then 3 s, 7 s):
    the audit's 128 connections took 16 s to open. Here nobody accepts (the server is not
    started): each connect completes in the kernel while the backlog has room, at once on
    loopback, and one past it waits seconds for a resend (the timeout is well under one)."""
    server = web.make_server(DataSource(db), "127.0.0.1", 0)
    opened: list[socket.socket] = []
    try:
        for _ in range(40):
            s = socket.socket()
            opened.append(s)
            s.settimeout(0.5)
            s.connect(("127.0.0.1", server.port))  # (a timeout here is the defect)
    finally:
        for s in opened:
            s.close()
        server.server_close()


def test_every_loopback_address_is_one_client(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: 127.0.0.2 was another address than 127.0.0.1 (any local process can connect
    from all of 127.0.0.0/8): the per-address cap counted each on its own."""
    # (a long deadline: the idle ones stay for the test)
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 60.0, raising=False)
    with web_server(db) as srv:
        idle = [connect(srv.port, "127.0.0.2") for _ in range(web.MAX_CONNECTIONS_PER_ADDRESS)]
        try:
            wait_until(lambda: served(srv) == len(idle), "the idle connections are counted")
            busy = answer(srv.port, "127.0.0.3")
            assert busy.startswith(b"HTTP/1.0 503 "), busy[:80]
        finally:
            for s in idle:
                s.close()
        wait_until(lambda: served(srv) == 0, "the idle connections are let go")
        assert answer(srv.port, "127.0.0.3").startswith(b"HTTP/1.0 200 ")


def test_ipv6_clients_are_counted_by_their_64(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect: each IPv6 address counted on its own, and a host is given a whole /64 to
    pick addresses from. (Connections are handed to the server as a socket pair with the
    client address an IPv6 one: no test machine has a /64 of its own.)"""
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 60.0, raising=False)
    srv = web.make_server(DataSource(db))
    clients: list[socket.socket] = []

    def hand_over(address: str) -> socket.socket:
        ours, theirs = socket.socketpair()
        clients.append(ours)
        srv.process_request(theirs, (address, 40000, 0, 0))
        return ours

    try:
        for i in range(web.MAX_CONNECTIONS_PER_ADDRESS):
            hand_over(f"2001:db8::{i + 1:x}")
        assert served(srv) == web.MAX_CONNECTIONS_PER_ADDRESS
        one_more = hand_over("2001:db8::ffff:ffff:ffff:ffff")  # the same /64
        one_more.settimeout(10)
        assert b"".join(iter(lambda: one_more.recv(4096), b"")).startswith(b"HTTP/1.0 503 ")
        hand_over("2001:db8:0:1::1")  # the next /64 is another client
        assert served(srv) == web.MAX_CONNECTIONS_PER_ADDRESS + 1
    finally:
        for c in clients:
            c.close()
        wait_until(lambda: served(srv) == 0, "the handed-over connections are let go")
        srv.server_close()
    key = web.address_key
    assert key("2001:db8::1") == key("2001:db8::ffff:1:2") != key("2001:db8:0:1::1")
    assert key("::1") == key("127.9.9.9") == key("::ffff:127.0.0.1") == "loopback"
    # an IPv4 client of a dual-stack server (--host ::) is its IPv4 address, not a /64
    assert key("::ffff:192.0.2.1") == "192.0.2.1" != key("::ffff:192.0.2.2")


# --- 2. security headers ------------------------------------------------------------------


SECURITY = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def head_of(raw: bytes) -> tuple[str, dict[str, str]]:
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    return head[0], {
        k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:])
    }


def raw_answer(port: int, request: bytes) -> bytes:
    with connect(port) as s:
        s.sendall(request)
        return b"".join(iter(lambda: s.recv(65536), b""))


def test_every_answer_carries_the_security_headers(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: no answer said ``nosniff``, forbade framing (clickjacking the replay's
    controls), set a Content-Security-Policy or a Referrer-Policy."""
    host = b"Host: 127.0.0.1\r\n"
    requests = {
        "page": b"GET / HTTP/1.0\r\n" + host + b"\r\n",
        "replay page": b"GET /replay/demo-m0000 HTTP/1.0\r\n" + host + b"\r\n",
        "script": b"GET /static/replay.js HTTP/1.0\r\n" + host + b"\r\n",
        "style": b"GET /static/style.css HTTP/1.0\r\n" + host + b"\r\n",
        "api": b"GET /api/leaderboard HTTP/1.0\r\n" + host + b"\r\n",
        "head": b"HEAD /api/tournaments HTTP/1.0\r\n" + host + b"\r\n",
        "favicon": b"GET /favicon.ico HTTP/1.0\r\n" + host + b"\r\n",
        "404": b"GET /nothing HTTP/1.0\r\n" + host + b"\r\n",
        "403 host": b"GET / HTTP/1.0\r\nHost: rebound.example\r\n\r\n",
        "405": b"POST /api/leaderboard HTTP/1.0\r\n" + host + b"Content-Length: 0\r\n\r\n",
        "400 request line": b"GET / HTTP/9z\r\n\r\n",
    }
    with web_server(db) as srv:
        for what, request in requests.items():
            status, headers = head_of(raw_answer(srv.port, request))
            assert status.startswith("HTTP/1."), (what, status)
            for k, v in SECURITY.items():
                assert headers.get(k) == v, (what, status, k, headers)
            csp = [d.strip() for d in headers["content-security-policy"].split(";")]
            assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, csp
            scripts = [d for d in csp if d.startswith(("script-src", "default-src"))]
            assert not any("unsafe" in d for d in scripts), csp
        # the 503 of a connection over the cap too
        wait_until(lambda: served(srv) == 0, "the answered connections are let go")
        monkeypatch.setattr(web, "MAX_CONNECTIONS_PER_ADDRESS", 1)
        with connect(srv.port) as holder:
            holder.sendall(b"GET / HT")
            wait_until(lambda: served(srv) == 1, "the holder is counted")
            status, headers = head_of(raw_answer(srv.port, requests["api"]))
        assert status.startswith("HTTP/1.0 503 ")
        for k, v in SECURITY.items():
            assert headers.get(k) == v, ("503", k, headers)
        assert "frame-ancestors 'none'" in headers["content-security-policy"]


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    from tests.web.test_web_browser import browser_paths, start_driver

    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    driver = start_driver(*browser_paths(), profile)
    try:
        yield driver
    finally:
        driver.quit()
        import shutil

        shutil.rmtree(profile, ignore_errors=True)


@pytest.mark.browser
def test_the_pages_work_under_their_content_security_policy(db: Path) -> None:
    """The policy must not break the pages: they load their scripts and styles from
    /static/ and set style attributes from their scripts (the legend's swatches, the
    trump's size). Every violation the browser reports is collected."""
    from tests.web.test_web_browser import load, wait_for

    with chromium() as driver, web_server(db) as srv:
        driver.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument",
            {"source": "window.__csp = []; document.addEventListener("
             "'securitypolicyviolation', e => window.__csp.push("
             "e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile));"},
        )  # fmt: skip
        for path in ("", "bot/careful", "replay/demo-m0001#deal=0&step=30"):
            load(driver, srv.url + path)
            policy = driver.execute_script(
                "const r = await fetch(location.href);"
                " return r.headers.get('content-security-policy');"
            )
            assert policy and "default-src 'self'" in policy, policy
            if path == "":
                swatch = wait_for(driver, ".swatch")[0]
                assert swatch.value_of_css_property("background-color") not in (
                    "rgba(0, 0, 0, 0)", "transparent"
                )  # fmt: skip
            if path.startswith("replay"):
                driver.find_element("css selector", "#next-action").click()
            time.sleep(0.3)  # (violations are reported as events, after the fact)
            assert driver.execute_script("return window.__csp") == [], path


# --- 3. damaged stored rows: a 500 naming what is damaged --------------------------------


DAMAGE = {
    "draw_probability": (
        "UPDATE tournaments SET config_json = json_set(config_json, '$.draw_probability', 'lots')",
        ["/api/leaderboard", "/api/bots/bold"],
        ["tournament demo", "draw_probability 'lots'"],
    ),
    "ruleset.players": (
        "UPDATE tournaments SET config_json = json_set(config_json, '$.ruleset',"
        ' json(\'{"name": "classic", "players": "three"}\'))',
        ["/api/leaderboard", "/api/bots/bold"],
        ["tournament demo", "ruleset.players 'three'"],
    ),
    "deltas_json": (
        "UPDATE deals SET deltas_json = '[1, 2' WHERE match_id = 'demo-m0001'",
        ["/api/bots/bold"],
        ["deltas of deal 0 of match demo-m0001"],
    ),
    "config_json a list": (
        "UPDATE tournaments SET config_json = '[1, 2]'",
        ["/api/leaderboard", "/api/bots/bold", "/api/matches"],
        ["config of tournament demo", "JSON list, not an object"],
    ),
    "idx text": (
        "UPDATE matches SET idx = 'one' WHERE id = 'demo-m0001'",
        ["/api/leaderboard", "/api/bots/bold", "/api/matches"],
        ["index of match demo-m0001", "text 'one'"],
    ),
    "incident detail a BLOB": (
        "UPDATE incidents SET detail = X'00ff41'",
        ["/api/bots/randy"],
        ["incident detail of match demo-m0001", "a BLOB"],
    ),
    "match started_at a BLOB": (
        "UPDATE matches SET started_at = X'00ff41' WHERE id = 'demo-m0001'",
        ["/api/matches/demo-m0001"],
        ["started_at of match demo-m0001", "a BLOB"],
    ),
}


def status_of(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_row_is_a_500_naming_it_without_the_databases_path(
    damage: str, db: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defects: some damaged rows were a 400, as if the request were at fault (a bad
    ``draw_probability`` or ``ruleset.players``, unparsable ``deltas_json``), others a bare
    500 with only a Python exception (a ``config_json`` list: AttributeError; a text
    ``idx``: TypeError; a BLOB incident detail: bytes not JSON serializable). Each is a 500
    whose error names the tournament or match and what is damaged, and not where the
    database is (its file name only)."""
    sql, apis, expected = DAMAGE[damage]
    path = tmp_path / "damaged.sqlite"
    path.write_bytes(db.read_bytes())
    with sqlite3.connect(path) as c:
        c.execute(sql)
    c.close()
    with web_server(path) as srv:
        for api in apis:
            code, body = status_of(srv.url + api.lstrip("/"))
            assert code == 500, (api, body)
            for text in expected:
                assert text in body["error"], (api, body)
            assert "damaged" in body["error"] and str(tmp_path) not in body["error"], body
            assert body["error"].startswith("damaged.sqlite: "), body
        # what the damage does not touch is still served
        assert status_of(srv.url + "api/tournaments")[0] == 200
        if damage != "config_json a list":  # (whether a match is held back is its config's)
            assert status_of(srv.url + "api/matches/demo-m0000/record")[0] == 200
    assert "Traceback" not in caplog.text


def test_no_answer_names_the_databases_directory(db: Path) -> None:
    """A 404 says ``no match 'x' in t.sqlite``, not the database's absolute path."""
    with web_server(db) as srv:
        for api in ("api/matches/nope", "api/leaderboard?tournament=nope"):
            code, body = status_of(srv.url + api)
            assert code == 404 and "t.sqlite" in body["error"], body
            assert str(db.parent) not in body["error"], body


def test_the_deadline_thread_is_one_and_stops_with_the_server(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One watchdog thread for every connection, not one per connection; it ends with
    the server."""
    monkeypatch.setattr(web, "REQUEST_DEADLINE", 60.0, raising=False)
    # The threads themselves, not their idents: a thread of an earlier test that ended
    # after this look (a handler still closing its connection) leaves its ident to the
    # next thread started, the watchdog perhaps, which was then taken for an old one.
    before = set(threading.enumerate())
    with web_server(db) as srv:
        held = [connect(srv.port) for _ in range(10)]
        wait_until(lambda: srv.deadlines.pending() == 10, "ten requests awaited")
        watchdogs = [t for t in threading.enumerate()
                     if t.name == "arena-web-deadlines" and t not in before]  # fmt: skip
        assert len(watchdogs) == 1
        for s in held:
            s.close()
    watchdogs[0].join(GUARD_S)
    assert not watchdogs[0].is_alive()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_arena_web_stops_on_sigterm_and_a_hang_up_as_on_ctrl_c(db: Path, sig: str) -> None:
    """Defect: `arena web` stopped cleanly (exit 0) on Ctrl-C only; SIGTERM (``kill``,
    systemd, ``docker stop``) and its terminal closing killed it by the signal (exit 143,
    129), which a supervisor counts as a failure. It stops as `arena serve` does now, and it
    still answered requests until then."""
    import os
    import signal
    import subprocess

    from tests.support.spawn import python_after

    proc = subprocess.Popen(
        # (a hang-up not ignored even when the suite runs under nohup: it would be inherited)
        python_after("signal.signal(signal.SIGHUP, signal.SIG_DFL)", "-c",
                     "from arena.cli import main; main()", "web", "--db", str(db), "--port", "0"),
        cwd=Path(__file__).parents[2], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = readline_within(proc.stdout, 60)  # (a deadline: a server that says nothing)
        assert line, "arena web said nothing in 60 s"
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        assert answer(port).startswith(b"HTTP/1.0 200 OK")
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=GUARD_S)
        assert proc.returncode == 0, (proc.returncode, out, err)
        assert "Traceback" not in err, err
    finally:
        proc.kill()
        proc.wait()
