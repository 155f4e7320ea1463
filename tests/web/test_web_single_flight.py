"""One computation of a cached document at a time (web audit at scale).

Defect: ``DataSource._cached`` computed outside its lock, so N requests of the same cold
document computed it N times side by side: at 10,000 matches a cold ``/api/leaderboard``
took 16 s and ~430 MB; eight at once took 230–261 s each, 5.1 GB. One request computes it
now; the others wait for it and share its document, or its exception.

No timed assertion: the stub computation blocks until every other request is seen waiting
(or, on the old code, computing too), then is released.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import arena.web.data as data
from arena.storage import Storage, TournamentInfo
from arena.web import DataSource, board
from arena.web.demo import make_demo_db
from tests.support.harness import web_server

N = 8
DEADLINE_S = 60  # only against a hang: no assertion is timed


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "t.sqlite"
    make_demo_db(path, matches=2, max_deals=2)
    return path


def _cached(source: Any, *args: Any) -> Any:
    """The document of ``source._cached_keyed``."""
    return source._cached_keyed(*args)[0]


def info_of(db: Path) -> TournamentInfo:
    with Storage.open_readonly(db) as st:
        info = st.tournament("demo")
    assert info is not None
    return info


class Stub:
    """A computation that counts its calls and blocks until released."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
            n = self.calls
        assert self.release.wait(DEADLINE_S), "never released"
        if self.fail:
            raise RuntimeError(f"computation {n} failed")
        return {"computed": n}


def waiting(source: DataSource, what: tuple[str, ...]) -> int:
    """How many requests wait for the computation of ``what`` under way (0 without one)."""
    flights = getattr(source, "_flights", {})
    flight = flights.get(what)
    return 0 if flight is None else int(flight.waiters)


def until(check: Callable[[], bool]) -> None:
    end = time.monotonic() + DEADLINE_S
    while not check():
        assert time.monotonic() < end, "the requests never got there"
        time.sleep(0.005)


def run_all(fns: list[Callable[[], Any]]) -> tuple[list[threading.Thread], list[Any]]:
    """Start one thread per call; its answer (or its exception) lands in the list."""
    out: list[Any] = [None] * len(fns)

    def one(i: int) -> None:
        try:
            out[i] = fns[i]()
        except BaseException as e:  # kept for the assertions
            out[i] = e

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(fns))]
    for t in threads:
        t.start()
    return threads, out


def join(threads: list[threading.Thread]) -> None:
    for t in threads:
        t.join(DEADLINE_S)
        assert not t.is_alive(), "a request never returned"


def test_concurrent_requests_of_a_cold_document_compute_it_once(db: Path) -> None:
    source, info, stub = DataSource(db), info_of(db), Stub()
    what = ("board", "demo")
    threads, out = run_all([lambda: _cached(source, what, info, stub)] * N)
    # every other request waits for the one computing (the old code: all of them compute)
    until(lambda: stub.calls == N or waiting(source, what) == N - 1)
    stub.release.set()
    join(threads)
    assert stub.calls == 1
    assert out[0] == {"computed": 1}
    assert all(doc is out[0] for doc in out)  # one document, shared
    assert _cached(source, what, info, stub) is out[0]  # and cached
    assert stub.calls == 1


def test_an_exception_reaches_every_waiter_and_the_next_request_computes_again(
    db: Path,
) -> None:
    source, info, stub = DataSource(db), info_of(db), Stub(fail=True)
    what = ("bot", "demo", "bold")
    threads, out = run_all([lambda: _cached(source, what, info, stub)] * N)
    until(lambda: stub.calls == N or waiting(source, what) == N - 1)
    stub.release.set()
    join(threads)
    assert stub.calls == 1
    assert all(isinstance(e, RuntimeError) and str(e) == "computation 1 failed" for e in out)
    # nothing was cached, nothing is left under way: the next request computes again
    stub.fail = False
    assert _cached(source, what, info, stub) == {"computed": 2}
    assert stub.calls == 2


def test_another_document_is_not_held_up_by_one_being_computed(db: Path) -> None:
    source, info, slow = DataSource(db), info_of(db), Stub()
    threads, _ = run_all([lambda: _cached(source, ("board", "demo"), info, slow)])
    until(lambda: slow.calls == 1)
    other, out = run_all([lambda: _cached(source, ("bot", "demo", "bold"), info, lambda: {})])
    join(other)  # while the first is still computing
    assert out == [{}] and slow.calls == 1 and threads[0].is_alive()
    slow.release.set()
    join(threads)


def test_a_waiter_for_a_newer_state_of_a_running_tournament_shares_the_document(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the tournament runs, one match more stored while the document was computed
    is no reason to compute it again (the throttle of a slow document): it is shared. A
    finished tournament's is computed again, once the one under way is done."""
    monkeypatch.setattr(data, "SLOW_S", 0.0)  # every computation counts as slow ...
    monkeypatch.setattr(data, "THROTTLE", 1e9)  # ... and stays fresh while it runs
    source, stub = DataSource(db), Stub()
    running = dataclasses.replace(info_of(db), finished_at=None)
    newer = dataclasses.replace(running, completed=running.completed + 1)
    what = ("board", "demo")
    threads, out = run_all([
        lambda: _cached(source, what, running, stub),
        lambda: _cached(source, what, newer, stub),
    ])  # fmt: skip
    until(lambda: stub.calls == 2 or waiting(source, what) == 1)
    stub.release.set()
    join(threads)
    assert stub.calls == 1 and out[1] is out[0]
    finished = dataclasses.replace(newer, finished_at="2026-01-01T00:00:00")
    assert _cached(source, what, finished, stub) == {"computed": 2}


def test_concurrent_leaderboard_requests_build_the_leaderboard_once(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the server: N concurrent GET /api/leaderboard of a cold document."""
    real = board.compute
    stub = Stub()

    def compute(*args: Any) -> dict[str, Any]:
        stub()
        return real(*args)

    monkeypatch.setattr(board, "compute", compute)  # data.py calls board.compute

    def get(url: str) -> Any:
        with urllib.request.urlopen(url + "api/leaderboard", timeout=DEADLINE_S) as r:
            return json.loads(r.read().decode())

    with web_server(db) as server:
        threads, out = run_all([lambda: get(server.url)] * N)
        until(lambda: stub.calls == N or waiting(server.source, ("board", "demo")) == N - 1)
        stub.release.set()
        join(threads)
    assert stub.calls == 1
    assert all(isinstance(doc, dict) for doc in out), out
    assert all(doc == out[0] for doc in out)
    assert [r["matches"] for r in out[0]["rows"]] == [2, 2, 2]
