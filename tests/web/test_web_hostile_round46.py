"""Audit round 46: ``arena web`` against hostile and careless HTTP clients.

Checked by hand first against a real ``arena web --port 0`` on tournaments made by
``arena tournament`` (3 bots, ``max_deals 2``; one of 36 matches served while it was
played): path traversal in every route and static file (``..``, ``%2e%2e``, encoded
slashes and backslashes, absolute paths and absolute-form request targets, NUL bytes,
fullwidth letters, 64 KB paths), every query parameter with wrong types, huge, negative
and Unicode numbers and repeated keys, unknown ids and tournaments, ids with HTML in them
(answered as JSON only, with ``nosniff``), every seat view of every deal (no other seat's
cards or legal moves, the talon only once it is shown), other methods, malformed request
lines and headers, a TLS handshake, 120 connections feeding a byte a second from one
address (another address still answered at once), 16 clients polling while a tournament
wrote, and the database removed, replaced by garbage and by another tournament's while
served (a 500 naming it, then the new one's pages). Bot and tournament names with markup
or control characters cannot be made by a config (``arena tournament`` refuses them); the
pages' handling of such stored names is pinned by test_web_round38.py.

Three defects, fixed here:

* an error answer quoted the request's id, name, path or method whole: a 60,000-character
  ``?tournament=`` came back as a 60 KB "no tournament 'aaa…'" (and a bad request line the
  same); every error answer is now a short text;
* a match reference of 50,000 characters or more (``/api/matches/aaa…``) was a 500,
  "database error while looking up matches: LIKE or GLOB pattern too complex": the lookup by
  suffix was a SQLite LIKE, which refuses longer patterns. It compares the ids' ends now
  (``substr``): a 404;
* ``/bot/<name>`` and ``/replay/<id>`` whose name is no valid percent-encoding (``/bot/%``,
  ``/replay/%FF``) were served their page, whose script's ``decodeURIComponent`` then threw:
  the page said "Loading…" for ever. The server answers them 400 now, saying why.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.storage import Storage
from tests.web.test_web_browser import arena_web

ROOT = Path(__file__).parents[2]

CONFIG = """
name = "{name}"
ruleset = "classic"
seed = 46
matches_per_table = {sets}
max_deals = 2
concurrency = 2
db = "{db}"
out = "{out}"

[bots]
r1 = "random"
h1 = "heuristic"
r2 = "random"
"""


def _tournament(tmp: Path, name: str, sets: int = 1) -> list[str]:
    """The command line of ``arena tournament`` on a small config in ``tmp``."""
    config = tmp / f"{name}.toml"
    config.write_text(
        CONFIG.format(name=name, sets=sets, db=tmp / f"{name}.sqlite", out=tmp / f"out-{name}")
    )
    return [sys.executable, "-c", "from arena.cli import main; main()", "tournament",
            "--config", str(config), "--no-progress"]  # fmt: skip


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("r46")
    run = subprocess.run(_tournament(tmp, "small"), cwd=ROOT, capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return tmp / "small.sqlite"


@pytest.fixture(scope="module")
def base(played: Path) -> Iterator[str]:
    with arena_web(played) as url:
        yield url.rstrip("/")


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def _raw(port: int, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is: (status, body) of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def _get(base: str, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# --- defects -----------------------------------------------------------------------------


def test_an_error_answer_is_short_whatever_the_request_quotes(base: str) -> None:
    """Defect: a 404 quoted the tournament, bot, match or path asked for whole, and a 400 or
    405 the request line or method: a 60,000-character reference came back as an answer of
    60 KB. Each is a short JSON error now, still naming what was asked (its start)."""
    port = _port(base)
    long = "a" * 60_000
    probes = {
        f"/api/leaderboard?tournament={long}": 404,
        f"/api/bots/{long}": 404,
        f"/api/matches?bot={long}": 404,
        f"/api/matches/{long}": 404,
        f"/api/matches/{long}/record": 404,
        f"/{long}": 404,
        f"/static/{long}": 404,
        f"/api/{long}": 404,
        f"/api/bots/r1?limit={long}": 400,
    }
    for path, want in probes.items():
        status, body = _raw(port, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        doc = json.loads(body)
        assert (status, doc["status"]) == (want, want), path[:50]
        assert len(body) < 1000 and "aaaa" in doc["error"], (path[:50], len(body))
    for request in (f"{long} / HTTP/1.1\r\n\r\n", f"GET / {long}\r\n\r\n", f"GET {long}\r\n\r\n"):
        status, body = _raw(port, request.encode())
        assert 400 <= status < 500 and len(body) < 1000, (request[:20], status, len(body))
        assert json.loads(body)["error"]


def test_a_match_reference_too_long_for_a_like_pattern_is_a_404(base: str, played: Path) -> None:
    """Defect: the suffix lookup of a match reference was a LIKE, which SQLite refuses past
    50,000 characters: ``/api/matches/<60,000 characters>`` was a 500 "database error". It
    is "no match" now, and a suffix with LIKE's wildcards and escape still names no match
    but its own."""
    for path in ("", "/record", "/deals/0"):
        status, body = _get(base, f"/api/matches/{'m' * 60_000}{path}")
        assert (status, json.loads(body)["status"]) == (404, 404), path
    with Storage.open_readonly(played) as st:
        assert st.find_match_ids("m" * 60_000) == []
        ids = st.find_match_ids("m00001")
        assert len(ids) == 1 and ids[0].endswith("-m00001")
        assert st.find_match_ids(ids[0]) == ids
        for wild in ("m0000_", "%1", "m0000\\1", "M00001", "00001 "):
            assert st.find_match_ids(wild) == [], wild


def test_a_page_whose_name_no_browser_decodes_is_a_400(base: str) -> None:
    """Defect: ``/bot/<name>`` and ``/replay/<id>`` were served their page whatever the
    name, and the page's script reads the name with ``decodeURIComponent``, which throws
    on a ``%`` not followed by two hex digits and on bytes that are no UTF-8: the page was
    left at "Loading…". The server answers those 400, saying why; a name that decodes (any
    text, of a bot that may not exist: the page says so) still gets its page. Node's
    ``decodeURIComponent`` (the browsers') agrees on each one."""
    bad = ["/bot/%", "/bot/r1%", "/bot/%zz", "/bot/%E0%A4%A", "/replay/%FF", "/replay/%ED%A0%80",
           "/replay/%C0%AE%C0%AE", "/bot/%e2%82"]  # fmt: skip
    good = ["/bot/r1", "/bot/r%C3%A9", "/bot/%F0%9F%98%80", "/bot/nobody", "/replay/m00001",
            "/replay/%3Cscript%3E", "/bot/100%25"]  # fmt: skip
    for path in bad:
        status, body = _get(base, path)
        doc = json.loads(body)
        assert (status, doc["status"]) == (400, 400), path
        assert "percent-encod" in doc["error"], (path, doc)
    for path in good:
        status, body = _get(base, path)
        assert status == 200 and body.startswith(b"<!doctype html>"), path
    node = shutil.which("node")
    if node is None:
        pytest.fail("node checks what decodeURIComponent refuses (test_web_round38.py too)")
    script = (
        "const out = {};"
        f"for (const p of {json.dumps(bad + good)}) {{"
        "  try { decodeURIComponent(p.split('/')[2]); out[p] = true; }"
        "  catch (e) { out[p] = false; } }"
        "process.stdout.write(JSON.stringify(out));"
    )
    run = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60)
    decodes = json.loads(run.stdout)
    assert decodes == {p: p in good for p in bad + good}


# --- checked, no defect: pinned ----------------------------------------------------------


def test_a_seat_view_holds_no_other_seats_cards_nor_moves(base: str) -> None:
    """Every seat view of every deal of a played tournament: no card of another seat's
    hand, no legal moves but the seat's own, no passed card between two other seats, no
    talon while bidding (classic shows it once the talon is taken); and as many steps as
    the face-up view."""
    matches = json.loads(_get(base, "/api/matches")[1])["matches"]
    assert len(matches) == 6
    for m in matches:
        mid = m["match_id"]
        n = len(m["players"])
        for k in range(m["deals"]):
            up = json.loads(_get(base, f"/api/matches/{mid}/deals/{k}")[1])["steps"]
            for seat in range(n):
                status, body = _get(base, f"/api/matches/{mid}/deals/{k}?seat={seat}")
                assert status == 200, (mid, k, seat)
                doc = json.loads(body)
                assert doc["seat"] == seat and doc["summary"] is None
                assert len(doc["steps"]) == len(up)
                for step in doc["steps"]:
                    v = step["view"]
                    others = [h for j, h in enumerate(v["hands"]) if j != seat]
                    assert all(h is None or set(h) <= {None} for h in others), (mid, k, seat)
                    assert not v["legal"] or v["to_act"] == seat, (mid, k, seat, step["i"])
                    for g in v["gives"]:
                        assert g["card"] is None or seat in (g["from"], g["to"]), g
                    if v["phase"] == "BIDDING":
                        assert v["talon"] is None, (mid, k, seat, step["i"])
    status, body = _get(base, f"/api/matches/{matches[0]['match_id']}/deals/0?seat=3")
    assert status == 400 and "seats are 0 to 2" in json.loads(body)["error"]


def test_traversal_and_odd_requests_get_a_clean_error_or_the_right_page(base: str) -> None:
    """Paths out of static/ by every spelling, absolute-form targets, NUL bytes, fullwidth
    letters, other methods and malformed requests: a JSON 4xx, or the one file named."""
    port = _port(base)
    host = "\r\nHost: 127.0.0.1\r\n\r\n"
    not_found = ["/static/../server.py", "/static/%2e%2e/server.py", "/static/..%2fserver.py",
                 "/static/%2fetc%2fpasswd", "/static/..%5c..%5cserver.py",
                 "/static/common.js%00.png", "/static/%EF%BD%83ommon.js", "/..%2f..%2fetc/passwd",
                 "/api/matches/..%2f..%2fx", "/%3Cscript%3E"]  # fmt: skip
    for path in not_found:
        status, body = _raw(port, f"GET {path} HTTP/1.1{host}".encode())
        assert status == 404 and json.loads(body)["status"] == 404, path
    status, body = _raw(port, f"GET //static/common.js HTTP/1.1{host}".encode())
    assert status == 200 and body.startswith(b"// Shared helpers")
    # (an absolute-form target names the host the request is for: round 52 checks it)
    status, body = _raw(port, f"GET http://evil.example/api/tournaments HTTP/1.1{host}".encode())
    assert status == 403 and "DNS rebinding" in json.loads(body)["error"]
    status, body = _raw(port, f"GET http://127.0.0.1/api/tournaments HTTP/1.1{host}".encode())
    assert status == 200 and json.loads(body)[0]["name"] == "small"
    for method in ("POST", "PUT", "DELETE", "CONNECT", "get"):
        status, body = _raw(port, f"{method} / HTTP/1.1{host}".encode())
        assert status == 405 and json.loads(body)["status"] == 405, method
    for request in (b"GARBAGE\r\n\r\n", b"GET / HTTP/2.0\r\n\r\n", b"GET / FOO/1.1\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: <script>\r\n\r\n"):  # fmt: skip
        status, body = _raw(port, request)
        assert 400 <= status < 506 and json.loads(body)["error"], request
    assert _raw(port, b"GET /api/tournaments HTTP/1.0\r\n\r\n")[0] == 200  # (no Host)


def test_the_database_removed_or_replaced_while_served(tmp_path: Path) -> None:
    """A database moved away, then garbage in its place, then another tournament's: a 500
    naming the file (not its directory) with no traceback, then that tournament's pages."""
    first = subprocess.run(_tournament(tmp_path, "one"), cwd=ROOT, capture_output=True,
                           timeout=120)  # fmt: skip
    assert first.returncode == 0, first.stderr
    db = tmp_path / "served.sqlite"
    shutil.copy(tmp_path / "one.sqlite", db)
    with arena_web(db) as url:
        b = url.rstrip("/")
        assert json.loads(_get(b, "/api/leaderboard")[1])["tournament"]["name"] == "one"
        db.rename(tmp_path / "moved.sqlite")
        for content in (None, b"garbage\n"):
            if content is not None:
                db.write_bytes(content)
            for path in ("/api/tournaments", "/api/leaderboard", "/api/bots/r1", "/api/matches"):
                status, body = _get(b, path)
                error = json.loads(body)["error"]
                assert status == 500 and "served.sqlite" in error, (path, error)
                assert str(tmp_path) not in error and "Traceback" not in error
            assert _get(b, "/")[0] == 200
        db.unlink()
        second = subprocess.run(_tournament(tmp_path, "two"), cwd=ROOT, capture_output=True,
                                timeout=120)  # fmt: skip
        assert second.returncode == 0, second.stderr
        shutil.copy(tmp_path / "two.sqlite", db)
        assert json.loads(_get(b, "/api/leaderboard")[1])["tournament"]["name"] == "two"
        matches = json.loads(_get(b, "/api/matches")[1])["matches"]
        mid = matches[0]["match_id"]
        assert mid.startswith("two-") and _get(b, f"/api/matches/{mid}/deals/0?seat=1")[0] == 200


def test_clients_polling_while_a_tournament_writes_get_whole_answers(tmp_path: Path) -> None:
    """8 clients polling every route while ``arena tournament`` plays 24 matches into the
    served database: every answer a 200, or a 403 for a match whose deals are held back
    (duplicate deals still to be played), never a 500; once it is over, none held back."""
    first = subprocess.run(_tournament(tmp_path, "live"), cwd=ROOT, capture_output=True,
                           timeout=120)  # fmt: skip
    assert first.returncode == 0, first.stderr  # (a database to serve from the start)
    runner = subprocess.Popen(
        _tournament(tmp_path, "live", sets=4),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[tuple[str, int]] = []
    try:
        with arena_web(tmp_path / "live.sqlite") as url:
            b = url.rstrip("/")

            def poll() -> None:
                while runner.poll() is None:
                    for path in ("/api/tournaments", "/api/leaderboard?tournament=live",
                                 "/api/bots/h1?tournament=live",
                                 "/api/matches?tournament=live&limit=3"):  # fmt: skip
                        status, body = _get(b, path)
                        seen.append((path, status))
                        if path.startswith("/api/matches") and status == 200:
                            for m in json.loads(body)["matches"][:2]:
                                deal = f"/api/matches/{m['match_id']}/deals/0?seat=0"
                                seen.append((deal, _get(b, deal)[0]))
                    time.sleep(0.05)

            threads = [threading.Thread(target=poll) for _ in range(8)]
            for t in threads:
                t.start()
            _, err = runner.communicate(timeout=120)
            for t in threads:
                t.join(60)
            assert runner.returncode == 0, err
            matches = json.loads(_get(b, "/api/matches?tournament=live")[1])["matches"]
            assert len(matches) == 24
            assert all(_get(b, f"/api/matches/{m['match_id']}")[0] == 200 for m in matches)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    statuses = {s for _, s in seen}
    assert seen and statuses <= {200, 403}, [x for x in seen if x[1] not in (200, 403)][:5]
    assert all(s == 200 for p, s in seen if "/deals/" not in p)
