"""Mutation review, round 35: the web (arena/web), the command lines (arena/cli) and the
benchmarks' arithmetic (arena/bench). Each test kills a hand-made bug (named in its
docstring) that no other test noticed; one found a defect, fixed (``--host LOCALHOST`` was
told its traffic went in clear). The benchmarks' figures are checked with small fake
measurements (the referee section's through ``window_figures``): nothing here is timed,
and no measured process is started."""

from __future__ import annotations

import dataclasses
import http.client
import json
import mimetypes
import os
import random
import resource
import socket
import sqlite3
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import pytest

from arena.bench import engine as bench_engine_mod
from arena.bench import grpc_baseline, memory
from arena.bench import referee as bench_referee_mod
from arena.bench import tournament as bench_tournament_mod
from arena.bench.referee import window_figures
from arena.web.demo import make_demo_db
from engine import PRESETS, Game
from tests.support.harness import web_server

# ----------------------------------------------------------------------------- arena/bench

_WIRE = {"sent": 450, "writes": 300, "bot_messages": 200}
_TOTALS = {"matches": 4, "deals": 45, "actions": 1300, "decisions": 900, "incidents": 1}


def _figures(**changes: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "decided": 300,
        "seconds": 2.0,
        "cpu": 0.5,
        "latencies": [i / 1000 for i in range(1, 101)],  # 1 to 100 ms
        "wire": _WIRE,
        "window": {"deals": 10, "actions": 400},
        "totals": _TOTALS,
        "rss_idle_mb": 50.04,
        "peak_rss_mb": 72.36,
    }
    kwargs.update(changes)
    return window_figures(**kwargs)


def test_the_referee_windows_figures_from_fake_measurements() -> None:
    """Mutants killed: deals/s as decisions/s x decisions per deal (``per_s / deals *
    n``); p99 as the 90th percentile; p50 in µs rather than ms; the referee's CPU per
    decision rather than per second, and per decision in ms rather than µs; messages per
    write turned over (writes per message); the window's deals count replaced by the
    fallback's; actions per deal over the decisions."""
    assert _figures() == {
        "decisions": 300,
        "seconds": 2.0,
        "decisions_per_s": 150.0,
        "deals_per_s": 5.0,  # 150 decisions/s, 10 deals per 300 decisions
        "p50_ms": 51.0,  # nearest rank: round(0.5 x 99) = 50, the 51st of 1..100 ms
        "p99_ms": 99.0,
        "referee_cpu": 0.25,
        "referee_cpu_us_per_decision": 1666.7,
        "messages_per_write": 1.5,
        "decisions_per_bot_message": 1.5,
        "decisions_ahead": 0,  # (none said: the "ahead" feature of round 53)
        "matches_completed": 4,
        "incidents": 1,
        "deals": 10,
        "actions_per_deal": 40.0,
        "decisions_per_deal": 30.0,
        "rss_idle_mb": 50.0,
        "peak_rss_mb": 72.4,
    }


def test_a_window_shorter_than_a_deal_counts_the_completed_matches_deals() -> None:
    """Mutants killed: the fallback dropped (a window with no deal ended said 0 deals/s),
    and the fallback's deals per decision taken over the window's decisions (900 bot
    decisions played the 45 deals, not the window's 300)."""
    r = _figures(window={"deals": 0, "actions": 20})
    assert r["deals"] == 0  # what the window saw
    assert r["deals_per_s"] == 7.5  # 150 decisions/s x 45 deals / 900 decisions
    assert r["actions_per_deal"] == 28.89  # 1300 / 45
    assert r["decisions_per_deal"] == 20.0
    assert _figures(decided=0, window={"deals": 0, "actions": 0})["deals_per_s"] == 0.0


def test_the_referee_ratios_and_targets_from_fake_measurements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutants killed: ratio_to_baseline over deals/s; deals_ratio over decisions per
    deal rather than actions per deal (docs/performance.md: deals/s ÷ (baseline ÷ actions
    per deal)); a target met only above its value (a ratio of exactly 1.0 meets ≥ 1.0);
    the deals target at 1.0 instead of 1.2; the first setting's figures put under its name
    and the others' at the top."""
    base = {"round_trips_per_s": 1000.0, "p50_ms": 0.5, "server_cpu_us_per_rt": 300.0}
    measured = {
        1: {"decisions_per_s": 1000.0, "deals_per_s": 24.0},  # ratios 1.0 and 1.2
        10: {"decisions_per_s": 800.0, "deals_per_s": 22.0},  # ratios 0.8 and 1.1
    }
    seen: list[tuple[int, str | None]] = []

    def fake_measure(t: int, exp: str | None, seconds: float, **kw: Any) -> dict[str, Any]:
        seen.append((t, exp))
        return {
            **measured[t],
            "p50_ms": 1.0,
            "p99_ms": 2.0,
            "actions_per_deal": 50.0,
            "decisions_per_deal": 30.0,
            "referee_cpu": 0.5,
        }

    monkeypatch.setattr(bench_referee_mod, "baseline", lambda t, exp, s: base)
    monkeypatch.setattr(bench_referee_mod, "measure_referee", fake_measure)
    out = bench_referee_mod.bench_referee(1.0, tables=(1, 10))
    assert list(out) == ["tables_1", "tables_10", "targets", "event_engine_off", "setup"]
    assert seen == [(1, None), (10, None), (1, grpc_baseline.EXPERIMENTS_OFF),
                    (10, grpc_baseline.EXPERIMENTS_OFF)]  # fmt: skip
    one = out["tables_1"]
    assert one["ratio_to_baseline"] == 1.0
    assert one["deals_ratio"] == 1.2  # 24 / (1000 / 50)
    assert one["baseline_round_trips_per_s"] == 1000.0
    assert one["baseline_server_cpu_us_per_rt"] == 300.0
    assert one["decisions_per_deal"] == 30.0 and one["referee_cpu"] == 0.5
    assert out["tables_10"]["deals_ratio"] == 1.1
    assert out["targets"] == {
        "decisions_tables_1": {"ratio": 1.0, "target": 1.0, "met": True},
        "deals_tables_1": {"ratio": 1.2, "target": 1.2, "met": True},
        "decisions_tables_10": {"ratio": 0.8, "target": 1.0, "met": False},
        "deals_tables_10": {"ratio": 1.1, "target": 1.2, "met": False},
    }
    assert set(out["event_engine_off"]) == {"tables_1", "tables_10"}


def test_the_memory_figures_from_a_fake_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutants killed: KB per table with 1000 KB to the MB (the RSS figures are MiB); the
    target met at exactly 200 MB (the target is "under 200"); the target's value the idle
    RSS; the measurement stopped at its window (no ``min_matches``: matches never reached
    their last deals at once, so the peak was not that of 100 whole matches)."""
    asked: dict[str, Any] = {}

    def fake(tables: int, exp: str | None, seconds: float, **kw: Any) -> dict[str, Any]:
        asked.update(tables=tables, seconds=seconds, **kw)
        return {"peak_rss_mb": peak, "rss_idle_mb": 22.0, "decisions_per_s": 3500.0}

    monkeypatch.setattr(memory, "measure_referee", fake)
    peak = 72.0
    out = memory.bench_memory(seconds=1.5, tables=100)
    assert asked == {"tables": 100, "seconds": 1.5, "min_matches": 100}
    assert out["tables_100"] == {"peak_rss_mb": 72.0, "rss_idle_mb": 22.0,
                                 "kb_per_table": 512.0, "decisions_per_s": 3500.0}  # fmt: skip
    assert out["targets"]["peak_rss_mb_tables_100"] == {"value": 72.0, "target": 200.0,
                                                        "met": True}  # fmt: skip
    peak = 200.0
    assert memory.bench_memory(tables=100)["targets"]["peak_rss_mb_tables_100"]["met"] is False


def test_the_tournament_figures_from_fake_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutants killed: the recording share over the playing time only (``finalize`` is
    part of the tournament's time); matches per minute over playing plus finalize; the
    target judged on the smallest share rather than the largest; a share of exactly 5 %
    counted as under 5 %; ``seconds`` 2.6 making 2 sets rather than about 2.6 (3)."""
    outcomes = {  # concurrency -> (play_s, finalize_s, record_s, played)
        1: (10.0, 2.0, 0.3, 72),
        4: (4.0, 1.0, 0.25, 72),
    }
    configs: list[Any] = []

    def fake_run(cfg: Any, opts: Any) -> Any:
        configs.append(cfg)
        play, fin, rec, played = outcomes[cfg.concurrency]
        return SimpleNamespace(
            play_s=play,
            finalize_s=fin,
            record_s=rec,
            played_now=played,
            failed=[(3, "x")],
            store_cpu_s=0.0,
            record_wait_s=0.0,
            record_last_wait_s=0.0,
            record_idle_wait_s=0.0,
            build_cpu_s=0.0,
            rate_s=0.0,
            commits=0,
        )

    monkeypatch.setattr(bench_tournament_mod, "run", fake_run)
    out = bench_tournament_mod.bench_tournament(seconds=2.6, concurrency=(1, 4))
    # (3 sets at concurrency 1; 5, round(2.6 x 2), at 4: round 58 scaled them)
    assert [c.matches_per_table for c in configs] == [3, 5]
    assert out["concurrency 1"] == {
        "matches": 72,
        "matches_per_min": 432.0,  # 72 matches in 10 s of play
        "seconds": 10.0,
        "failed": 1,
        "recording_s": 0.3,
        "recording_share_percent": 2.5,  # 0.3 s of 12 s
    }
    assert out["concurrency 4"]["recording_share_percent"] == 5.0  # 0.25 s of 5 s
    assert out["concurrency 4"]["matches_per_min"] == 1080.0
    assert out["targets"]["recording_share_percent"] == {"value": 5.0, "target": 5.0,
                                                         "met": False}  # fmt: skip


def test_the_baseline_helpers_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutants killed: the warm-up a half of the window rather than a third; the CPU
    figures' names swapped (the clients' per round trip, the bots' per decision); CPU per
    second divided by the count rather than the wall time; a process's CPU read from its
    children's time (field 16 of /proc/PID/stat) rather than its own system time."""
    assert grpc_baseline.warmup_for(0.9) == pytest.approx(0.3)
    assert grpc_baseline.warmup_for(0.3) == 0.2 and grpc_baseline.warmup_for(6.0) == 1.0
    r: dict[str, Any] = {}
    grpc_baseline.with_cpu(r, "bots", 1.5, 3.0, 1000)
    grpc_baseline.with_cpu(r, "clients", 0.2, 2.0, 4000)
    assert r == {"bots_cpu": 0.5, "bots_cpu_us_per_decision": 1500.0,
                 "clients_cpu": 0.1, "clients_cpu_us_per_rt": 50.0}  # fmt: skip
    # /proc/PID/stat: a command name with ") " in it, then state, ..., utime (14th),
    # stime (15th), cutime, cstime
    line = "4242 (a) b) S 1 2 3 4 5 6 7 8 9 10 300 120 7000 8000 20 0"

    class _Stat:
        def __init__(self, path: str) -> None:
            assert path == "/proc/4242/stat"

        def __enter__(self) -> _Stat:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def read(self) -> str:
            return line

    monkeypatch.setattr(grpc_baseline, "open", _Stat, raising=False)
    ticks = os.sysconf("SC_CLK_TCK")
    assert grpc_baseline.cpu_seconds(4242) == pytest.approx(420 / ticks)


def test_the_engine_benchmark_counts_every_deal_and_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutants killed: the deals of the match under way at the end not counted; 1999
    decisions counted per batch of 2000. A fake CPU clock makes one batch take 0.5 s; the
    deals are counted again here by replaying the same random play."""
    ruleset = dataclasses.replace(PRESETS["classic"], max_deals=3)  # many matches end
    monkeypatch.setitem(PRESETS, "classic-3", ruleset)
    ticks = iter([0.0, 0.5])
    monkeypatch.setattr(time, "process_time", lambda: next(ticks))
    out = bench_engine_mod.bench_preset("classic-3", seconds=0.5, seed=2)
    names = [f"p{i}" for i in range(ruleset.players)]
    rng, match_seed, deals = random.Random(2), 0, 0
    game = Game.new(ruleset, match_seed, names)
    for _ in range(2000):
        if game.is_over:
            deals += len(game.deal_results)
            match_seed += 1
            game = Game.new(ruleset, match_seed, names)
        acts = game.legal_actions()
        game.apply_trusted(acts[int(rng.random() * len(acts))])
    assert match_seed >= 1 and game.deal_results  # matches ended, and one was under way
    deals += len(game.deal_results)
    assert out == {"deals_per_s": round(deals / 0.5, 1), "decisions_per_s": 4000.0}


# ----------------------------------------------------------------------------- arena/cli


def test_a_host_name_takes_253_characters_and_labels_of_63() -> None:
    """Mutants killed: ``--allow-host`` refusing a name of exactly 253 characters (``< 253``)
    or a label of exactly 63 (``< 63``): those are the longest a DNS name and a label may
    be, and a browser sends such a name as it is."""
    from arena.cli.options import HostName

    label = "a" * 63
    longest = ".".join([label, label, label, "b" * 61])
    assert len(longest) == 253
    assert HostName().convert(longest.upper() + ".", None, None) == longest
    for bad in (longest + "c", "a" * 64 + ".lan"):
        with pytest.raises(click.BadParameter, match="not a host name"):
            HostName().convert(bad, None, None)


# ----------------------------------------------------------------------------- arena/web


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("web35") / "t.sqlite"
    make_demo_db(path, matches=4, max_deals=4)
    return path


@pytest.fixture(scope="module")
def base(demo_db: Path) -> Iterator[str]:
    with web_server(demo_db) as server:
        yield server.url


def _status(base: str, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(base + path.lstrip("/"), timeout=30) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def test_the_seat_one_past_the_last_is_the_requests_fault(base: str) -> None:
    """Mutant killed: the API's seat check ``seat > n`` rather than ``seat >= n``: seat 3 of
    a 3-seat match reached the replay's own check, an IndexError answered 500 as the
    server's fault, where the request is at fault (400, saying which seats there are)."""
    code, body = _status(base, "/api/matches/demo-m0000/deals/0?seat=3")
    assert code == 400 and "its seats are 0 to 2" in body["error"], (code, body)
    code, body = _status(base, "/api/matches/demo-m0000/deals/0?seat=2")
    assert code == 200 and body["seat"] == 2, (code, body)


def test_listening_on_localhost_in_any_case_is_no_traffic_in_clear() -> None:
    """Defect (fixed): ``arena serve --host LOCALHOST`` (or a tournament's ``host =
    "LocalHost"``) listens on loopback, as ``localhost`` does (a host name's case does not
    matter), yet was told "every message ... travels in clear ... for anyone who sees the
    traffic": only the lower-case name counted as loopback. Also kills the mutant that
    drops the ``localhost`` case altogether."""
    from arena.cli.options import in_clear_note

    for host in ("localhost", "LOCALHOST", "LocalHost", "127.0.0.2", "[::1]"):
        assert in_clear_note(host, "bots", "--tls") is None, host
    for host in ("0.0.0.0", "localhost.example", "my-localhost", "::"):
        note = in_clear_note(host, "bots", "--tls")
        assert note is not None and note.startswith(f"note: listening on {host} without TLS")


def test_the_open_files_limit_is_raised_to_the_hard_limit_only_upwards(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant killed: ``soft > want`` for ``soft < want``: ``arena serve`` left the soft limit
    of open files at 1,024 (about 1,000 half-open connections keep every bot out) and
    would only ever have lowered it."""
    from arena.cli import options

    calls: list[tuple[int, tuple[int, int]]] = []
    limits = {"now": (1024, 4096)}
    fake = SimpleNamespace(
        RLIMIT_NOFILE=resource.RLIMIT_NOFILE,
        RLIM_INFINITY=resource.RLIM_INFINITY,
        getrlimit=lambda which: limits["now"],
        setrlimit=lambda which, pair: calls.append((which, pair)),
    )
    monkeypatch.setattr(options, "resource", fake)
    options.raise_open_files_limit()
    assert calls == [(fake.RLIMIT_NOFILE, (4096, 4096))]
    calls.clear()
    limits["now"] = (4096, 4096)
    options.raise_open_files_limit()
    assert calls == []


def test_a_name_ending_in_localhost_is_not_localhost() -> None:
    """Mutant killed: ``endswith("localhost")`` for ``endswith(".localhost")``: a page of
    ``evillocalhost`` (an attacker's domain, rebound to 127.0.0.1) would have been served,
    the DNS-rebinding guard passed by a name that merely ends in the same letters."""
    from arena.web.server import host_allowed

    assert host_allowed("board.localhost:8000") and host_allowed("LOCALHOST")
    for name in ("evillocalhost", "evillocalhost:8000", "localhost.evil", "notlocalhost."):
        assert not host_allowed(name), name


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        return b"".join(iter(lambda: s.recv(65536), b""))


def test_headers_of_exactly_the_bound_are_served_and_one_byte_more_is_431(demo_db: Path) -> None:
    """Mutant killed: the header bound's check ``left <= 0`` for ``left < 0``: headers of
    exactly ``MAX_HEADER_BYTES`` (the most a request may send, said the constant) were
    answered 431 as if one byte over."""
    from arena.web import server as web

    start = b"GET /api/tournaments HTTP/1.0\r\n"
    host = b"Host: 127.0.0.1\r\n"
    with web_server(demo_db) as srv:
        for extra, status in ((0, b" 200 "), (1, b" 431 ")):
            fill = web.MAX_HEADER_BYTES + extra - len(host) - 2  # (2: the blank line)
            half = fill // 2
            lines = b"X-A: " + b"a" * (half - 7) + b"\r\n" + b"X-B: " + b"b" * (fill - half - 7)
            headers = host + lines + b"\r\n" + b"\r\n"
            assert len(headers) == web.MAX_HEADER_BYTES + extra
            got = _raw(srv.port, start + headers)
            assert status in got.split(b"\r\n", 1)[0], got[:200]


def test_an_api_answer_is_no_cache_and_a_page_no_store(base: str) -> None:
    """Mutant killed: the two Cache-Control values swapped: the API's answers (with their
    ETag, to be asked again with If-None-Match) were not to be kept, and the pages'
    answers (no ETag) were kept and revalidated with nothing to revalidate by."""
    with urllib.request.urlopen(base + "api/tournaments", timeout=30) as r:
        assert r.headers["Cache-Control"] == "no-cache" and r.headers["ETag"]
    with urllib.request.urlopen(base, timeout=30) as r:
        assert r.headers["Cache-Control"] == "no-store" and r.headers["ETag"] is None


def test_the_figures_table_rows_of_nested_and_flat_figures() -> None:
    """Mutants killed: a dict of figures flattened only when all its values are plain (a
    section with a nested dict and a plain figure side by side printed the nested dict as
    one Python repr); a target's ``met`` (a bool) printed as ``1`` by the integer format;
    a float's thousands printed without their separator (an int's have it)."""
    from arena.cli.bench import _rows

    figures = {"seconds": 1234, "tables_1": {"p50_ms": 0.5, "per_s": 2345.67, "met": True}}
    assert _rows("", figures) == [
        ("seconds", "", "1,234"),
        ("tables_1", "p50_ms", "0.5"),
        ("tables_1", "per_s", "2,345.7"),
        ("tables_1", "met", "True"),
    ]


def test_leaderboard_list_refuses_a_tournament_and_says_an_open_ended_one(tmp_path: Path) -> None:
    """Mutants killed: ``--tournament`` dropped from what ``--list`` refuses (``arena
    leaderboard --list --tournament X`` listed every tournament, X ignored without a word);
    a tournament of no set number of matches (``arena serve --db``'s: total 0) listed as
    "1/0" rather than "1/–"."""
    from click.testing import CliRunner

    from arena.cli import main

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--list", "--tournament", "x"])
    assert r.exit_code == 2 and "not with --format, --out or --tournament" in r.output, r.output
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--list"])
    assert r.exit_code == 0 and " 1/1 " in r.output, r.output
    with sqlite3.connect(db) as c:
        c.execute("UPDATE tournaments SET total_matches = 0")
    c.close()
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--list"])
    assert r.exit_code == 0 and " 1/– " in r.output and "1/0" not in r.output, r.output


def test_a_304_has_no_content_length(base: str) -> None:
    """Mutant killed: ``Content-Length`` sent with every answer: a 304 said "0", which a
    client may take for the length of the answer it keeps (RFC 9110: a 304 sends none, or
    the 200's)."""
    with urllib.request.urlopen(base + "api/tournaments", timeout=30) as r:
        etag = r.headers["ETag"]
    host, port = urllib.parse.urlsplit(base).netloc.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", "/api/tournaments", headers={"If-None-Match": etag})
        r304 = conn.getresponse()
        r304.read()
        assert r304.status == 304 and r304.getheader("Content-Length") is None
        assert r304.getheader("ETag") == etag
    finally:
        conn.close()


def test_the_leaderboard_table_piped_is_laid_out_wide(tmp_path: Path) -> None:
    """Mutant killed: the piped table's width ``min`` for ``max`` of the console's and 130:
    into a pipe or a file (80 columns assumed) the 115-column table was squeezed, its
    headings and figures wrapped over several lines."""
    from click.testing import CliRunner

    from arena.cli import main

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db)])
    assert r.exit_code == 0, r.output
    widest = max(len(line) for line in r.output.splitlines())
    assert 80 < widest <= 130, r.output
    assert "pts/deal ±95%" in r.output  # (a heading whole, on one line)


def test_leaderboard_out_refuses_the_database_named_another_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant killed: ``--out`` compared with ``--db`` as typed rather than as the files
    they name: ``--db /abs/t.sqlite --out t.sqlite`` (run in /abs) wrote the leaderboard's
    text over the tournament database."""
    from click.testing import CliRunner

    from arena.cli import main

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=1, max_deals=1)
    before = db.read_bytes()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(db), "--out", "t.sqlite"])
    assert r.exit_code == 2 and "would write over the database" in r.output, r.output
    assert db.read_bytes() == before


def test_a_head_request_gets_the_headers_and_no_body(demo_db: Path) -> None:
    """Mutant killed: the body written after a HEAD's headers too: the next request on a
    kept-alive connection would read it as the start of its answer."""
    with web_server(demo_db) as srv:
        got = _raw(srv.port, b"HEAD /api/tournaments HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 ") and b"Content-Length: " in head, got[:300]
    assert int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) > 0
    assert body == b""


def test_a_script_typed_application_javascript_is_sent_with_its_charset(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant killed: the charset added to ``text/*`` types only. Where the system's
    mime.types says ``application/javascript`` for ``.js`` (older systems do; this one says
    ``text/javascript``), the pages' scripts went without ``charset=utf-8`` and a browser
    could read their non-ASCII text (the μ, σ and suit signs) as Latin-1."""
    real = mimetypes.guess_type

    def guess(name: str) -> tuple[str | None, str | None]:
        return ("application/javascript", None) if name.endswith(".js") else real(name)

    monkeypatch.setattr(mimetypes, "guess_type", guess)
    with web_server(demo_db) as srv, urllib.request.urlopen(srv.url + "static/common.js") as r:
        assert r.headers["Content-Type"] == "application/javascript; charset=utf-8"


def test_an_error_names_the_database_by_its_file_name_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant killed: the database's paths replaced shortest first: of a database named
    ``runs/t.sqlite`` (relative), an error naming ``/cwd/runs/t.sqlite`` became
    ``/cwd/t.sqlite``, still telling where the server's files are."""
    from arena.web.server import WebServer

    monkeypatch.chdir(tmp_path)
    db = Path("runs") / "t.sqlite"
    fake = SimpleNamespace(source=SimpleNamespace(db=db))
    message = f"{db.absolute()}: the stored deltas are damaged (in {db})"
    assert WebServer.without_path(fake, message) == (  # type: ignore[arg-type]
        "t.sqlite: the stored deltas are damaged (in t.sqlite)"
    )


def test_replay_check_lists_the_final_standing_by_place(tmp_path: Path) -> None:
    """Mutant killed: ``arena replay --check``'s final lines ordered by score (lowest
    first) rather than by place: the winner came last under "final"."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.web.demo import demo_record

    record = demo_record(1, ("ann", "bob", "cid"), max_deals=3)
    assert record["result"]["places"] == [2, 3, 1]  # (scores 128, -203, 154)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    r = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert r.exit_code == 0, r.output
    final = r.output.split("final (max_deals, 3 deals):\n")[1].splitlines()[:3]
    assert final == [
        "  1. cid: 154 (shortfall 0)",
        "  2. ann: 128 (shortfall 872)",
        "  3. bob: -203 (shortfall 1203)",
    ], r.output


def test_a_stop_as_the_last_match_is_stored_says_there_is_nothing_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant killed: ``done > total`` for ``done >= total``: a Ctrl-C that came as the last
    match was stored said "N matches are stored ...; run the same command again to resume"
    of a tournament with nothing left to play."""
    from click.testing import CliRunner

    import arena.cli.tournament as cli
    from arena.cli import main
    from tests.cli.test_bad_input import _stored_tournament

    config = _stored_tournament(tmp_path)

    def stopped(*_a: Any, **_k: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run", stopped)
    r = CliRunner().invoke(main, ["tournament", "--config", str(config), "--no-progress"])
    text = " ".join(r.output.split())
    assert r.exit_code == 130, text
    assert "as the tournament ended" in text and "nothing to resume" in text, text
    assert "to resume (the" not in text


def test_arena_bench_passes_its_seconds_and_every_section_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant killed: ``--seconds`` not passed on (every section measured its default 2 to 3
    s, whatever was asked). The sections named as arguments and with ``--only`` are run
    once each, in order."""
    from click.testing import CliRunner

    import arena.cli.bench as cli_bench
    from arena.cli import main

    asked: list[tuple[Any, dict[str, Any]]] = []

    def fake(names: Any = None, **kw: Any) -> dict[str, dict[str, Any]]:
        asked.append((names, kw))
        return {"engine": {"classic": {"deals_per_s": 1.0}}}

    monkeypatch.setattr(cli_bench, "run_sections", fake)
    r = CliRunner().invoke(
        main, ["bench", "engine", "--only", "memory", "--only", "engine", "--seconds", "0.5",
               "--json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert asked == [(["engine", "memory"], {"seconds": 0.5})]
    assert json.loads(r.output) == {"engine": {"classic": {"deals_per_s": 1.0}}}


def test_verbose_once_is_info_and_twice_debug() -> None:
    """Mutant killed: ``-v`` taken for ``-vv``: one ``-v`` (the runner's lines) put every
    logger at DEBUG, grpc's and asyncio's aside, a flood the docs keep for ``-vv``."""
    import io
    import logging

    from rich.console import Console

    from arena.cli.tournament import setup_logging

    root = logging.getLogger()
    names = ("", "arena.referee", "grpc", "asyncio", "arena.tournament.runner")
    saved = ([*root.handlers], {n: logging.getLogger(n).level for n in names})
    try:
        setup_logging(1, Console(file=io.StringIO()))
        assert root.level == logging.INFO
        assert logging.getLogger("arena.referee").level == logging.WARNING
        assert logging.getLogger("arena.tournament.runner").level == logging.NOTSET
        setup_logging(2, Console(file=io.StringIO()))
        assert root.level == logging.DEBUG
        assert logging.getLogger("arena.referee").level == logging.DEBUG
    finally:
        for h in [h for h in root.handlers if h not in saved[0]]:
            root.removeHandler(h)
        for n, level in saved[1].items():
            logging.getLogger(n).setLevel(level)


def test_the_match_pages_next_before_is_the_oldest_shown_and_none_at_the_end(
    demo_db: Path,
) -> None:
    """Mutants killed: ``next_before`` the newest match shown rather than the oldest (the
    next page repeated this one but its first match); a page of exactly the matches left
    (``len >= limit``) announcing a next page, which came empty."""
    from arena.web.data import DataSource

    src = DataSource(demo_db)
    first = src.matches(None, bot=None, limit=2)
    assert [m["index"] for m in first["matches"]] == [3, 2]
    assert first["next_before"] == 2 and first["matches_total"] == 4
    rest = src.matches(None, bot=None, limit=2, before=first["next_before"])
    assert [m["index"] for m in rest["matches"]] == [1, 0] and rest["next_before"] is None
    whole = src.matches(None, bot=None, limit=4)
    assert len(whole["matches"]) == 4 and whole["next_before"] is None


def test_a_set_played_out_is_shown_while_the_next_is_held_back(tmp_path: Path) -> None:
    """Mutant killed: a deal-seed set with no match left to play counted as held back (with
    0 matches waiting): while the tournament ran, a bot page hid the score per deal of
    every set played out, not only of the set still being played."""
    from arena.web.data import DataSource
    from tests.arena.fake_referee import make_config, run_fake

    cfg = make_config(tmp_path, bots=3, matches_per_table=2, max_deals=2)
    assert cfg.total_matches == 12  # two sets of 6 seatings
    run_fake(cfg, max_new_matches=8)
    with sqlite3.connect(cfg.db) as c:
        per_set = dict(c.execute("SELECT set_no, COUNT(*) FROM matches GROUP BY set_no"))
        held = [s for s, n in per_set.items() if n < 6]
        hidden = c.execute(
            "SELECT COUNT(*) FROM deals d JOIN matches m ON m.id = d.match_id WHERE m.set_no IN "
            f"({','.join('?' * len(held))})",
            held,
        ).fetchone()[0]
        everything = c.execute("SELECT COUNT(*) FROM deals").fetchone()[0]
    c.close()
    assert 6 in per_set.values() and held and 0 < hidden < everything, per_set
    page = DataSource(cfg.db).bot("ann", cfg.tournament_id)
    assert page["deal_scores_held_back"] == hidden
    assert sum(n for _, n in page["deal_score_counts"]) == everything - hidden


def test_incidents_not_listed_are_never_fewer_than_none() -> None:
    """Mutant killed: ``counted - len(listed)`` without ``max(0, ...)``: a bot page whose
    row (the leaderboard's, kept a while during a run) counts fewer strikes than the
    incidents read since would say "-1 not listed"."""
    from arena.web.data import _not_listed

    listed: list[dict[str, Any]] = [{"kind": "timeout"}] * 3
    assert _not_listed({"strikes": 2}, "strikes", listed) == 0
    assert _not_listed({"strikes": 5}, "strikes", listed) == 2
    assert _not_listed(None, "strikes", listed) == 0


def test_run_sections_runs_the_sections_named_with_the_options_each_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutant killed: the names ignored (every available section run: `arena bench engine`
    measured the gRPC baseline, the referee, memory and tournaments too, minutes instead
    of seconds)."""
    import arena.bench as bench

    ran: list[tuple[str, dict[str, Any]]] = []

    def section(name: str, takes_seconds: bool) -> Any:
        if takes_seconds:

            def timed(seconds: float = 2.0) -> dict[str, Any]:
                ran.append((name, {"seconds": seconds}))
                return {"n": 1}

            return timed

        def untimed() -> dict[str, Any]:
            ran.append((name, {}))
            return {"n": 2}

        return untimed

    fns = {"engine": section("engine", True), "memory": section("memory", False)}
    monkeypatch.setattr(bench, "SECTIONS", {"engine": "-:-", "memory": "-:-"})
    monkeypatch.setattr(bench, "load_section", lambda name: fns[name])
    assert bench.run_sections(["memory"], seconds=0.5) == {"memory": {"n": 2}}
    assert ran == [("memory", {})]
    ran.clear()
    assert bench.run_sections(None, seconds=0.5) == {"engine": {"n": 1}, "memory": {"n": 2}}
    assert ran == [("engine", {"seconds": 0.5}), ("memory", {})]


def test_a_bare_ipv6_address_as_host_is_served() -> None:
    """Mutant killed: any ``:`` taken for a port's: a ``Host`` of a bare IPv6 address
    (``::1``, no brackets: HTTP/1.0 clients and scripts send it so) was cut at its first
    colon to "" and refused as a host name."""
    from arena.web.server import host_allowed

    for host in ("::1", "fe80::1", "[::1]:8000", "127.0.0.1:8000"):
        assert host_allowed(host), host
    assert not host_allowed("example.org:8000")


def test_an_ambiguous_match_suffix_is_refused_not_the_first_taken(tmp_path: Path) -> None:
    """Mutant killed: a suffix naming several matches resolved to the first of them: ``1``
    of demo-m0001 and demo-m0011 served the replay of demo-m0001 as if that were meant."""
    from arena.web.data import DataSource, NotFound

    db = tmp_path / "t.sqlite"
    make_demo_db(db, matches=12, max_deals=1)
    src = DataSource(db)
    with pytest.raises(NotFound, match="ambiguous"):
        src.match_id("1")
    assert src.match_id("11") == "demo-m0011" and src.match_id("demo-m0001") == "demo-m0001"


def test_a_tournament_with_no_match_yet_lists_none_and_its_unmet_pairs_no_cell(
    tmp_path: Path,
) -> None:
    """Mutants killed: ``/api/matches`` with no bot asked for answering 404 ("no bot None")
    for a tournament with no match stored yet, rather than an empty list; the head-to-head
    given cells for pairs that never met (played 0: a row of empty cells for a bot not yet
    seated)."""
    from arena.web.data import DataSource
    from tests.arena.fake_referee import make_config, run_fake

    empty = make_config(tmp_path / "empty", bots=3, max_deals=1)
    run_fake(empty, max_new_matches=0)
    page = DataSource(empty.db).matches(None, bot=None, limit=None)
    assert page["matches"] == [] and page["matches_total"] == 0
    one = make_config(tmp_path / "one", bots=4, max_deals=1)
    run_fake(one, max_new_matches=1)
    with sqlite3.connect(one.db) as c:
        [seats] = [json.loads(s) for (s,) in c.execute("SELECT seats_json FROM matches")]
    c.close()
    [absent] = set(one.bot_names) - set(seats)
    cells = DataSource(one.db).leaderboard(None)["head_to_head"]["cells"]
    assert cells[absent] == {}
    for bot in seats:
        assert set(cells[bot]) == set(seats) - {bot}


def test_an_unfinished_matchs_summary_counts_its_played_deals() -> None:
    """Mutant killed: with no result to say how many deals were played (an unfinished
    match), the deals counted were the unfinished ones rather than the played ones."""
    from arena.web.demo import demo_record
    from arena.web.replay import match_summary

    record = demo_record(1, ("ann", "bob", "cid"), max_deals=3)
    del record["result"]
    del record["deals"][-1]["deltas"]  # (the last deal cut short)
    summary = match_summary("m", record)
    assert [d["outcome"] != "unfinished" for d in summary["deals"]] == [True, True, False]
    assert summary["deals_played"] == 2


def test_a_thinned_history_keeps_an_extreme_at_the_end_of_a_run() -> None:
    """Mutant killed: each run of the thinned history one point short (``range(start, end
    - 1)``): a peak at the last point of a run was in no run, and the plot lost it."""
    from arena.web.board import thin

    pts = [(i, 0.0, 1.0) for i in range(1000)]
    pts[99] = (99, 50.0, 1.0)  # the last point of the first of 10 runs
    pts[549] = (549, -50.0, 1.0)
    kept = thin(pts, buckets=10)
    assert pts[99] in kept and pts[549] in kept
