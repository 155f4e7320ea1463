"""Review round 52 (b): a mutation review of round 52's web changes (gzip answers, the
season's single flight and throttle, ``vs=``, the per-address turn for matches, the Host
checks, ``_for_log``, ``arena.render.shown_result``). Each test names the mutants it kills
(ids of the report: G gzip, H the Host checks, the turn and the log, D data.py, R the
replay's reading).

69 hand mutants (G 15 gzip, H 17 Host checks/turns/log, D 20 data.py and the API's
``vs``, R 12 render/replay, E 2 the season's one-game check, J 3 the pages' scripts). The
round's own tests killed 43; the tests here kill 20 more (G2 G6 G9 G11 G14 G15, H7 H8 H9
H11 H14 H15, D8 D10 D14, R3 R5 R8 R10 R12). 5 are equivalent: H4 (``hosts[-1]`` for
``hosts[0]``: two Host headers are a 400 before it), D15 (``not matches_total`` dropped:
implied by the bot having no match at all), R2 (``ended`` read with no rules' result:
``end_reason`` then reads the record's, as before), R4 and R6 (a ``result.deals`` that is
no integer, a result that is no object: the engine's check refuses the record first). J2
is left (the "older matches" of ``?vs=`` dropping ``vs``: it needs over 50 matches of two
bots in a browser).

A defect, fixed (the first test): the check of header lines that do not parse read every
"defect" Python's e-mail parser reports, and it reports some of a multipart
``Content-Type`` with no body: a GET carrying one (a tool's form, Postman's) was a 400
"a header line does not parse".
"""

from __future__ import annotations

import copy
import gzip
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.addresses import address_key
from arena.render import rules_description
from arena.storage import Storage, StorageError
from arena.web import MatchReplay
from arena.web import server as web
from arena.web.demo import demo_record, make_demo_db
from engine.game import Game
from engine.record import forfeit_result
from engine.rules import PRESETS
from tests.support.harness import get_json, web_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    db = tmp_path_factory.mktemp("r52b") / "t.sqlite"
    make_demo_db(db, matches=3, max_deals=2)
    with web_server(db) as srv:
        yield srv


def _raw(port: int, request: bytes, source: str = "127.0.0.1") -> tuple[int, dict[str, str], bytes]:
    """``request`` sent as it is: the status, the headers (lower-case names), the body."""
    with socket.create_connection(("127.0.0.1", port), 30, (source, 0)) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def test_a_get_with_a_multipart_content_type_is_served(server: Any) -> None:
    """The defect above; a line that is no header is still a 400 (round 52's test)."""
    for ctype in (b"multipart/form-data; boundary=--x", b"multipart/mixed"):
        status, _, body = _raw(
            server.port,
            b"GET /api/tournaments HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\n\r\n" % ctype,
        )
        assert status == 200, body
    for bad in (b"Host : localhost\r\n", b" X: 1\r\nHost: localhost\r\n"):
        status, _, _ = _raw(server.port, b"GET /api/tournaments HTTP/1.1\r\n" + bad + b"\r\n")
        assert status == 400, bad


def test_what_accepts_gzip() -> None:
    """G9 (x-gzip dropped), G11 (a q that is no number taken as yes), G15 (``Q=`` not
    read as a q, case-sensitively)."""
    assert web._accepts_gzip(["x-gzip"])
    assert not web._accepts_gzip(["gzip;q=high"])
    assert not web._accepts_gzip(["gzip; Q=0"])
    assert web._accepts_gzip(["identity", "deflate, gzip"])  # (two header lines: one list)


def test_gzip_from_its_threshold_and_two_accept_encoding_lines(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """G2 (``>`` for ``>=``: an answer of exactly GZIP_FROM bytes sent as it is), G14 (only
    the first Accept-Encoding line read), G6 (a 304 without Vary)."""
    ask = b"GET /api/tournaments HTTP/1.1\r\nHost: localhost\r\n%s\r\n"
    status, _, plain = _raw(server.port, ask % b"")
    assert status == 200
    monkeypatch.setattr(web, "GZIP_FROM", len(plain))
    status, h, body = _raw(server.port, ask % b"Accept-Encoding: gzip\r\n")
    assert (status, h.get("content-encoding")) == (200, "gzip")
    assert gzip.decompress(body) == plain
    monkeypatch.setattr(web, "GZIP_FROM", len(plain) + 1)
    status, h, body = _raw(server.port, ask % b"Accept-Encoding: gzip\r\n")
    assert (status, h.get("content-encoding"), body) == (200, None, plain)
    monkeypatch.setattr(web, "GZIP_FROM", 0)
    two = b"Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n"
    status, h, body = _raw(server.port, ask % two)
    assert h.get("content-encoding") == "gzip" and gzip.decompress(body) == plain
    etag = h["etag"].encode()
    status, h, _ = _raw(server.port, ask % (two + b"If-None-Match: " + etag + b"\r\n"))
    # (a 304 says what the 200 varies by: RFC 9110 15.4.5)
    assert (status, h.get("vary"), h.get("etag")) == (304, "Accept-Encoding", etag.decode())


def test_the_turns_of_an_address_are_one_semaphore_kept_while_it_is_connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """H9 (the semaphore looked up by the raw address, not ``address_key``: two loopback
    addresses, one client, had a turn each, and the entry was never dropped), H8 (dropped
    when any connection of the address closed: the next request made another, and the
    limit was gone), H7 (never dropped: one entry per address ever seen)."""
    from arena.web import replay

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    release = threading.Event()
    entered: list[str] = []

    class HeldReplay(replay.MatchReplay):  # a replay that takes until it is released
        def __init__(self, *args: Any) -> None:
            entered.append(args[0])
            assert release.wait(60)
            super().__init__(*args)

    monkeypatch.setattr(replay, "MatchReplay", HeldReplay)
    with web_server(db) as srv:
        got: list[int] = []

        def ask(source: str) -> None:
            got.append(_raw(srv.port, b"GET /api/matches/m0000 HTTP/1.0\r\n\r\n", source)[0])

        threads = [threading.Thread(target=ask, args=(a,)) for a in ("127.0.0.2", "127.0.0.3")]
        try:
            for t in threads:
                t.start()
            _until(lambda: len(entered) == 2, "both turns taken")
            key = address_key("127.0.0.2")
            assert key == address_key("127.0.0.3")
            assert list(srv._working) == [key]
            held = srv._working[key]
            # another request of the client comes and goes: its turns stay held
            assert _raw(srv.port, b"GET /api/leaderboard HTTP/1.0\r\n\r\n", "127.0.0.4")[0] == 200
            assert srv._working.get(key) is held
        finally:
            release.set()
            for t in threads:
                t.join(60)
        assert got == [200, 200]
        _until(lambda: not srv._open, "every connection released")
        assert srv._working == {}


def test_for_log_cuts_past_its_length_only() -> None:
    """H11 (``>=``: a request line of exactly 300 characters said "0 more characters")."""
    assert web._for_log("a" * web.MAX_ERROR_CHARS) == "a" * web.MAX_ERROR_CHARS
    assert web._for_log("a" * (web.MAX_ERROR_CHARS + 1)).endswith("… (1 more characters)")


@pytest.mark.parametrize("error", [StorageError("damaged row"), ValueError("bad value")])
def test_the_path_of_a_failed_request_is_logged_escaped(
    server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, error: Exception
) -> None:
    """H14 (a StorageError's log line), H15 (an unexpected error's): the path as it came."""

    def fail(*args: Any, **kw: Any) -> Any:
        raise error

    monkeypatch.setattr(server.source, "leaderboard", fail)
    caplog.set_level(logging.ERROR, logger="arena.web")
    status, _, _ = _raw(server.port, b"GET /api/leaderboard?x=\x1b[2J HTTP/1.0\r\n\r\n")
    assert status == 500
    messages = [r.getMessage() for r in caplog.records if r.name == "arena.web"]
    assert messages and all("\x1b" not in m for m in messages), messages
    assert any("?x=\\x1b[2J" in m for m in messages), messages


@pytest.fixture(scope="module")
def left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bots a to d; e played a match of it and is no longer seated (a member who left)."""
    path = tmp_path_factory.mktemp("left") / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("demo", name="demo", fingerprint="vs", total_matches=2,
                             config={"name": "demo", "ruleset": "classic"},
                             bots=[(b, "demo") for b in "abcd"])  # fmt: skip
        for i, seats in enumerate([("a", "b", "e"), ("a", "c", "d")]):
            st.save_match("demo", match_id=f"demo-m{i:04d}", index=i, table=0, set_no=i,
                          seed=i, seats=seats, record=demo_record(i, seats, max_deals=1),
                          started_at=1.7e9 + i, finished_at=1.7e9 + i + 1)  # fmt: skip
        st.finish_tournament("demo")
    with web_server(path) as srv:
        yield srv.url


def test_an_opponent_who_left_is_no_404(left: str) -> None:
    """D8 (``or``: a bot of the head to head no longer seated was a 404 on a bot page),
    D14 (a bot with matches, none against that opponent: a 404 for "no bot")."""
    page = get_json(left, "/api/bots/a?vs=e")
    assert (page["vs"], page["matches_total"]) == ("e", 1)
    assert get_json(left, "/api/matches?bot=c&vs=e")["matches_total"] == 0
    assert get_json(left, "/api/matches?bot=e&vs=c")["matches_total"] == 0


def test_a_bot_page_with_vs_has_an_etag_of_its_own(left: str) -> None:
    """D10 (``vs`` not in the page's state: the page against b answered 304 to a client
    holding the ETag of the page of every opponent, which it then showed)."""
    with urllib.request.urlopen(left + "api/bots/a", timeout=10) as r:
        etag = r.headers["ETag"]
    req = urllib.request.Request(left + "api/bots/a?vs=b", headers={"If-None-Match": etag})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    assert status == 200


def test_forfeiters_are_placed_last_on_the_page_as_by_arena_replay() -> None:
    """R5 (the forfeits not applied to the rules' result: the forfeiter shown first)."""
    record = demo_record(2, ("ann", "bob", "cid"), max_deals=3)
    winner = record["result"]["places"].index(1)
    forfeited = copy.deepcopy(record)
    forfeited["forfeits"] = [winner]
    forfeited["incidents"] = [{"kind": "forfeit", "seat": winner, "deal": 2, "detail": "gone"}]
    forfeited["rules_result"] = record["result"]  # (as the referee writes it)
    forfeited["result"] = forfeit_result(record["result"], [winner], 1000)
    places = MatchReplay("m", forfeited).summary["result"]["places"]
    assert places[winner] == 3 and sorted(places) == [1, 2, 3]


def _abandoned_after_a_deal() -> dict[str, Any]:
    """Every seat forfeited in the second deal (a finished deal before it)."""
    game = Game.new(PRESETS["classic"], 3, ["ann", "bob", "cid"])
    while not game.deal_results:
        game.apply(game.legal_actions()[0])
    for _ in range(3):
        game.apply(game.legal_actions()[0])
    rec = game.record()
    scores = list(game.scores)
    rec.update(abandoned=True, rules_result=None, forfeits=[0, 1, 2], match_id="m",
               result={"scores": scores, "places": [3, 3, 3], "winner": None, "deals": 1,
                       "shortfalls": [1000 - x for x in scores], "reason": "forfeits",
                       "forfeits": [0, 1, 2]},
               incidents=[{"kind": "forfeit", "seat": s, "deal": 1, "detail": "gone"}
                          for s in range(3)])  # fmt: skip
    return rec


def test_an_abandoned_match_shows_the_records_result() -> None:
    """R12 (the rules' result read whenever a deal was finished, the match not over: an
    abandoned match's places)."""
    rec = _abandoned_after_a_deal()
    summary = MatchReplay("m", rec).summary
    assert summary["result"] == rec["result"] and summary["deals_played"] == 1
    assert summary["ended"] is not None and "abandoned" in summary["ended"]
    rec["result"]["deals"] = 7  # (the record's count, as `arena replay --list` says it)
    assert MatchReplay("m", rec).summary["deals_played"] == 7


def test_a_preset_with_options_names_its_cap() -> None:
    """R8 (a record naming a preset said its rules without the cap), R10 (nor one whose
    options do not load)."""
    record = demo_record(2, ("ann", "bob", "cid"), max_deals=3)
    for stored, said in (
        ({"preset": "classic", "max_deals": 3}, "classic, 3 deals max"),
        ({"preset": "classic", "max_deals": 3, "bogus": 1}, "? (classic), 3 deals max"),
    ):
        assert rules_description({**record, "ruleset": stored}) == said
        timed = {**record, "ruleset": stored, "time_limit_s": 30}
        assert rules_description(timed) == said.removesuffix(", 3 deals max")


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"not within 60 s: {what}"
        time.sleep(0.01)
