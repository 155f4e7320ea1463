"""Round 52: the API's answers are compressed for a client that accepts gzip.

Defect: every answer went uncompressed: a club's leaderboard (30 bots, 1,000 matches of a
week) was 249 KB of JSON at each poll that found a match stored (every 3 s while a week
runs, for every reader), its season 836 KB; gzip makes them 74 KB and 263 KB. The
compressed answer is another representation, with an ETag of its own (``-gz``), so that a
poll still gets its 304; a client that does not say it accepts gzip gets the JSON as it
was, and a short answer is not compressed.
"""

from __future__ import annotations

import gzip
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.web.demo import make_demo_db
from tests.support.harness import web_server


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("gz") / "t.sqlite"
    make_demo_db(path, matches=3, max_deals=2)
    with web_server(path) as server:
        yield server.url


def fetch(base: str, path: str, **headers: str) -> tuple[int, Any, bytes]:
    req = urllib.request.Request(base + path.lstrip("/"), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:  # (a 304)
        return e.code, e.headers, e.read()


@pytest.mark.parametrize("path", ["/api/leaderboard", "/api/bots/bold", "/api/tournaments"])
def test_an_answer_is_gzip_for_a_client_that_accepts_it(base: str, path: str) -> None:
    status, plain_h, plain = fetch(base, path)
    assert status == 200 and plain_h["Content-Encoding"] is None
    status, h, body = fetch(base, path, **{"Accept-Encoding": "gzip, deflate, br"})
    assert status == 200 and h["Vary"] == "Accept-Encoding"
    if path == "/api/tournaments":  # (a short answer, 600 bytes, as it is)
        assert len(plain) < 1024
        assert h["Content-Encoding"] is None and body == plain
        return
    assert h["Content-Encoding"] == "gzip"
    assert int(h["Content-Length"]) == len(body) < len(plain)
    assert json.loads(gzip.decompress(body)) == json.loads(plain)
    # another representation, another ETag; each one's poll is a 304
    assert h["ETag"] != plain_h["ETag"]
    for etag, enc in ((h["ETag"], "gzip"), (plain_h["ETag"], "identity")):
        assert fetch(base, path, **{"If-None-Match": etag, "Accept-Encoding": enc})[0] == 304
    # the other's ETag is no match: the answer comes whole
    again = fetch(base, path, **{"If-None-Match": plain_h["ETag"], "Accept-Encoding": "gzip"})
    assert again[0] == 200 and again[1]["Content-Encoding"] == "gzip"


def test_a_client_that_refuses_gzip_gets_json(base: str) -> None:
    for refusal in ("gzip;q=0", "identity", "br"):
        status, h, body = fetch(base, "/api/leaderboard", **{"Accept-Encoding": refusal})
        assert status == 200 and h["Content-Encoding"] is None
        assert json.loads(body)["rows"]
