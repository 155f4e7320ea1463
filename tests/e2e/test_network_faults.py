"""The network between a bot and the arena fails as real networks do (network round 19).

A fault-injecting TCP proxy (``tests/support/netproxy.py``) sits between a real
``arena-bot run`` process and the referee's real server: the link goes silent (no FIN, no
RST), comes back before or after the grace period, is reset on one side, is slow or late,
or is cut mid-frame. Each fault strikes at a chosen moment of a match: in the lobby, at a
bid, mid-trick, at the last decision, just after the MatchEnded; the moment is caught when
the referee queues its message for the bot (before it is written), so the fault holds that
message. Assertions are on outcomes (reconnected, resumed, forfeited, counted once), never
on durations. A silent link is noticed only by keepalive (10 s + 5 s, fixed on both
sides), so those tests are ``slow``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from harness import Arena, arena, as_message
from netproxy import FaultProxy

import bots
from arena.referee.lag import LoopLag
from arena.referee.sessions import BotSession
from arena.v1 import arena_pb2 as pb
from engine import PRESETS

ROOT = Path(__file__).resolve().parents[2]
DEALS = 2
SHORT = dataclasses.replace(PRESETS["classic"], max_deals=DEALS)
#: How long any one wait here may last before the test fails (a hang, not a slow machine).
PATIENCE = 120.0

Predicate = Callable[[pb.ServerMessage], bool]


def _request(msg: pb.ServerMessage) -> pb.DecisionRequest | None:
    return msg.decision_request if msg.WhichOneof("kind") == "decision_request" else None


def _bidding(msg: pb.ServerMessage) -> bool:
    r = _request(msg)
    return r is not None and r.view.phase == pb.PHASE_BIDDING


def _mid_trick(msg: pb.ServerMessage) -> bool:
    r = _request(msg)
    return r is not None and r.view.phase == pb.PHASE_PLAYING and len(r.view.trick) > 0


def _last_decision(msg: pb.ServerMessage) -> bool:
    # One of the match's last requests: the last deal's play with at most four cards left.
    # (At most two, as it was, never came in some matches: the bot's last cards there were
    # forced, or answered ahead without a request, since the "ahead" feature of 2026-12-12.)
    r = _request(msg)
    v = r.view if r is not None else None
    return v is not None and v.deal_number == DEALS - 1 and v.phase == pb.PHASE_PLAYING and (
        len(v.hand) <= 4)  # fmt: skip


def _ended(msg: pb.ServerMessage) -> bool:
    return msg.WhichOneof("kind") == "match_ended"


#: The moments a fault strikes at (``lobby``: before the match starts).
MOMENTS: dict[str, Predicate | None] = {
    "lobby": None,
    "bidding": _bidding,
    "mid_trick": _mid_trick,
    "last_decision": _last_decision,
    "ended": _ended,
}


def _on_message_to(
    monkeypatch: pytest.MonkeyPatch, bot: str, when: Predicate, fault: Callable[[], None]
) -> asyncio.Event:
    """Run ``fault()`` once, when the referee first queues for ``bot`` a message for which
    ``when`` holds (before it is written: the fault takes that message too, and the hook
    goes with the test's ``monkeypatch``). The event that says it has run."""
    fired = asyncio.Event()
    send = BotSession.send

    def hooked(self: BotSession, msg: pb.ServerMessage | bytes) -> bool:
        # (a request is sent as its wire bytes)
        if self.name == bot and not fired.is_set() and when(as_message(msg)):
            fired.set()
            fault()
        return send(self, msg)

    monkeypatch.setattr(BotSession, "send", hooked)
    return fired


async def _sdk_bot(address: str, token: str, *extra: str) -> asyncio.subprocess.Process:
    """``arena-bot run random`` against ``address`` (its output: stdout, with stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from sdk.cli import main; main()", "run", "random",
        "--arena", address, "--token", token, "--log-level", "info", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=str(ROOT), env=env,
    )  # fmt: skip


async def _until(cond: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + PATIENCE
    while not cond():
        assert loop.time() < end, f"never: {what}"
        await asyncio.sleep(0.05)


@dataclasses.dataclass
class Outcome:
    record: dict[str, Any]
    rc: int | None
    output: str
    connections: int
    seat: int

    def incidents(self, kind: str) -> list[dict[str, Any]]:
        return [i for i in self.record["incidents"] if i["kind"] == kind and i["seat"] == self.seat]


@contextlib.asynccontextmanager
async def _table(tmp: Path, **config: Any) -> AsyncIterator[tuple[Arena, FaultProxy]]:
    """A referee, a proxy in front of it, and the in-process bots ``b`` and ``c`` (direct)."""
    async with arena(tmp, **config) as a, FaultProxy(a.port) as px:
        a.referee.add_bot("a", "tok-a")
        # (b and c are the control: their calls on this loop, see on_the_loop; a's the
        # faults'. Some tests here excuse no stall at all: LoopLag.TOLERANCE is inf.)
        tasks = await a.runners(["b", "c"], [bots.load("random")] * 2, matches=1,
                                controls=("b", "c"))  # fmt: skip
        try:
            yield a, px
        finally:
            for t in tasks:
                t.cancel()
            for t in tasks:
                with contextlib.suppress(BaseException):
                    await t


async def _exit(proc: asyncio.subprocess.Process) -> tuple[int | None, str]:
    """The bot's exit code (``None``: it did not exit within PATIENCE, killed) and output."""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), PATIENCE)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        return None, out.decode(errors="replace")
    return proc.returncode, out.decode(errors="replace")


async def _silent_link(
    tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    moment: str,
    *,
    back: str,
    grace_s: float,
) -> Outcome:
    """Bot ``a`` (``arena-bot run --once``) through the proxy; the link goes silent at
    ``moment`` and comes back when ``back`` says: ``"reconnecting"`` once the referee has
    noticed (for a moment at which it holds a seat of the bot) and the bot has opened a new
    connection, ``"forfeited"`` once the match is over without the bot."""
    # A decision may take 40 s, with no bank: a link noticed dead later than that (gRPC's
    # default ping timeout made it 60-70 s) times the bot out instead.
    config = {"reconnect_grace_s": grace_s, "decision_ms": 40_000, "time_bank_ms": 0}
    async with _table(tmp, **config) as (a, px):
        proc = await _sdk_bot(px.address, "tok-a", "--once")
        assert not await a.referee.wait_for_bots(["a"], PATIENCE)
        when = MOMENTS[moment]
        if when is None:
            px.silence()
            fired = asyncio.Event()
            fired.set()
        else:
            fired = _on_message_to(monkeypatch, "a", when, px.silence)
        match = asyncio.ensure_future(a.referee.run_match("m1", SHORT, 11, ["a", "b", "c"]))
        try:
            await _until(fired.is_set, f"the moment {moment}")
            if back == "reconnecting":
                if moment != "ended":
                    await _until(lambda: not a.referee.session("a").connected,
                                 "the referee notices the silent link")  # fmt: skip
                await _until(lambda: px.connections >= 2, "the bot tries a new connection")
            else:
                await _until(match.done, "the match ends without the bot")
            px.restore()
            record = await asyncio.wait_for(match, PATIENCE)
            rc, out = await _exit(proc)
        finally:
            match.cancel()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return Outcome(record, rc, out, px.connections, 0)


@pytest.mark.slow
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_silent_link_back_within_the_grace_resumes_the_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    """Defect: docs/protocol.md says a silent connection is noticed within about 15 s
    (keepalive: a ping every 10 s, 5 s for its answer), on both sides; it took 60 to 70 s,
    each side: gRPC core 1.85 does not enforce ``keepalive_timeout_ms``, an unanswered
    ping is given up on only after ``grpc.http2.ping_timeout_ms`` (60 s by default). A bot
    behind a pulled cable was timed out (struck) before anyone noticed it was gone. Now
    the referee counts a disconnect, the SDK opens a new connection, and the match resumes
    when the link is back, before a 40 s decision runs out."""
    o = asyncio.run(_silent_link(tmp_path, monkeypatch, moment, back="reconnecting", grace_s=90))
    assert o.rc == 0, o.output
    assert "match m1 ended" in o.output, o.output
    assert o.connections >= 2, o.output  # a new connection, not the old one revived
    assert o.record["forfeits"] == [], o.record["incidents"]
    assert not o.incidents("timeout"), o.record["incidents"]
    if moment != "ended":
        assert o.record["disconnects"][o.seat] >= 1, o.record["incidents"]
    if moment not in ("lobby", "ended"):  # (in the lobby, the bot had not seen it start)
        assert "match m1 resumed" in o.output, o.output


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["bidding", "mid_trick", "last_decision"])
def test_a_silent_link_back_after_the_grace_forfeits_and_the_bot_learns_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    o = asyncio.run(_silent_link(tmp_path, monkeypatch, moment, back="forfeited", grace_s=1))
    assert o.record["forfeits"] == [o.seat], o.record["incidents"]
    assert o.incidents("disconnect"), o.record["incidents"]
    assert o.rc == 0, o.output
    assert "match m1 ended" in o.output, o.output


def _bot_actions(rec: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    return [x for d in rec["deals"] for x in d["actions"] if x["seat"] == seat and x["by"] == "bot"]


async def _through(
    tmp: Path, set_up: Callable[[FaultProxy], None], **config: Any
) -> tuple[Outcome, FaultProxy]:
    """One match of bot ``a`` (``arena-bot run --once``) through a proxy that ``set_up``
    made faulty from the start."""
    async with _table(tmp, **config) as (a, px):
        set_up(px)
        proc = await _sdk_bot(px.address, "tok-a", "--once")
        try:
            assert not await a.referee.wait_for_bots(["a"], PATIENCE)
            rec = await asyncio.wait_for(
                a.referee.run_match("m1", SHORT, 5, ["a", "b", "c"]), PATIENCE
            )
            rc, out = await _exit(proc)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return Outcome(rec, rc, out, px.connections, 0), px


@pytest.mark.parametrize(("latency", "rate"), [(0.05, None), (0.3, None), (0.05, 4000.0)])
def test_a_late_or_slow_link_is_timed_at_the_referee_and_costs_no_strike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, latency: float, rate: float | None
) -> None:
    """50 to 300 ms each way, or a link of 4 KB/s (a view is about 1 KB): the decision time
    is measured at the referee, from sending the request to reading the answer
    (docs/protocol.md, "Time"), so it holds both trips; within the limit (1 s) plus the bank
    it is no timeout, and the bot plays every decision itself. (The loop's stalls are
    not excused here: the proxy shares the referee's loop, so on a loaded machine a
    stall while an answer waits in the proxy was excused from the trip, 494 ms for 600.)"""
    monkeypatch.setattr(LoopLag, "TOLERANCE", math.inf)

    def slow(px: FaultProxy) -> None:
        px.latency, px.rate = latency, rate

    o, _ = asyncio.run(_through(tmp_path, slow, decision_ms=1000))
    assert o.rc == 0, o.output
    assert o.record["incidents"] == [], o.record["incidents"]
    mine = _bot_actions(o.record, o.seat)
    assert mine and all(x["ms"] >= 2 * latency * 1000 for x in mine), mine
    assert o.connections == 1


def test_the_time_bank_pays_for_the_round_trip_until_it_is_spent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit shorter than the round trip (50 ms, 150 ms each way): every answer is late
    and drawn from the bank (1 s) until it is spent; only then do answers time out; the
    bot, its late answers refused, is still told its end. (The loop's stalls are not
    excused, as above: the proxy shares the referee's loop.)"""
    monkeypatch.setattr(LoopLag, "TOLERANCE", math.inf)

    def late(px: FaultProxy) -> None:
        px.latency = 0.15

    for _ in range(3):
        o, _ = asyncio.run(_through(tmp_path, late, decision_ms=50, time_bank_ms=1000))
        if _bot_actions(o.record, o.seat):
            break
        # (Not even the first answer came in on the bank: 1 s minus the 300 ms round trip
        # was outwaited by a pause of a process on a loaded machine. Again.)
    assert o.rc == 0, o.output
    assert "match m1 ended" in o.output, o.output
    mine = _bot_actions(o.record, o.seat)
    timeouts = o.incidents("timeout")
    assert timeouts, o.record["incidents"]
    assert (o.record["forfeits"] == [o.seat]) == (len(timeouts) >= 3), o.record["incidents"]
    # Answers before the first timeout were late and taken (paid by the bank), and together
    # they overran the limit by no more than the bank.
    assert mine and all(x["ms"] > 50 for x in mine), mine
    assert sum(x["ms"] - 50 for x in mine) <= 1000 + 1, mine


SERVE_BOTS = ("a", "b", "c")


async def _serve(tmp: Path, *extra: str) -> tuple[asyncio.subprocess.Process, int]:
    """``arena serve --port 0`` (tokens ``tok-<name>`` for SERVE_BOTS, 2-deal matches,
    records and a database in ``tmp``) and its port."""
    tokens = tmp / "tokens.toml"
    tokens.write_text("[bots]\n" + "".join(f'{n} = "tok-{n}"\n' for n in SERVE_BOTS))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from arena.cli import main; main()", "serve", "--port", "0",
        "--tokens", str(tokens), "--ruleset", "classic", "--max-deals", str(DEALS),
        "--record-dir", str(tmp / "rec"), "--db", str(tmp / "arena.sqlite"), *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(ROOT), env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    while True:
        line = (await asyncio.wait_for(proc.stdout.readline(), PATIENCE)).decode()
        assert line, (await proc.stderr.read()).decode() if proc.stderr else "no output"
        if line.startswith("port "):
            return proc, int(line.split()[1])


def _check_stored(tmp: Path, matches: int) -> None:
    """Every match of the serve run is stored once, whole, and replays (`arena replay
    --check`), its file and its database row alike."""
    from click.testing import CliRunner

    from arena.cli import main as arena_cli
    from arena.storage import Storage

    with Storage.open_readonly(tmp / "arena.sqlite") as st:
        (info,) = st.tournaments()
        assert info.completed == info.total_matches == matches, info
        results = st.match_results(info.id)
        ids = [r.match_id for r in results]
        assert len(ids) == len(set(ids)) == matches, ids
        for r in results:
            assert sorted(r.seats) == sorted(SERVE_BOTS) and r.deals == DEALS, r
    files = sorted((tmp / "rec").glob("*.jsonl"))
    assert [f.stem for f in files] == sorted(ids), files
    for target in [*map(str, files), *ids]:
        args = ["replay", "--check", target] + (["--db", str(tmp / "arena.sqlite")] if (
            not target.endswith(".jsonl")) else [])  # fmt: skip
        checked = CliRunner().invoke(arena_cli, args)
        assert checked.exit_code == 0, (target, checked.output)


async def _cut_loop(tmp: Path, cuts: int, matches: int) -> list[Any]:
    """``arena serve`` for ``matches`` matches; the three SDK bots (runners, retrying fast)
    reach it through a proxy that cuts each of the first ``cuts`` connections after a
    random number of bytes, one way or the other (mid-frame, mostly); the runners'
    summaries."""
    import random

    from sdk.client import BotRunner

    rng = random.Random(19)
    server, port = await _serve(tmp, "--matches", str(matches), "--grace-s", "60")
    try:
        async with FaultProxy(port) as px:

            def cut() -> tuple[str, int] | None:
                if px.connections > cuts:
                    return None
                return ("down", rng.randint(1, 6000)) if rng.random() < 0.6 else (
                    "up", rng.randint(1, 800))  # fmt: skip

            px.cut_each = cut
            runners = [
                BotRunner(bots.load("random"), px.address, f"tok-{n}", matches=matches,
                          initial_backoff=0.02, max_backoff=0.2, retry_for=PATIENCE)
                for n in SERVE_BOTS
            ]  # fmt: skip
            summaries = await asyncio.wait_for(
                asyncio.gather(*(r.run() for r in runners)), PATIENCE * 3
            )
            assert await asyncio.wait_for(server.wait(), PATIENCE) == 0
            assert px.cuts >= cuts * 2 // 3, (px.cuts, px.connections)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    return list(summaries)


@pytest.mark.parametrize("cuts", [30, pytest.param(300, marks=pytest.mark.slow)])
def test_connections_cut_mid_frame_lose_no_result_and_count_none_twice(
    tmp_path: Path, cuts: int
) -> None:
    """Connections cut (RST) after a random number of bytes, bot to arena or back, in the
    middle of an HTTP/2 frame mostly: `arena serve` stays up, the bots reconnect and play
    on, every match is stored once and replays, and every bot counts each match once."""
    # (3 matches for 30 cuts once ended after 19 connections, 16 of them cut: too little
    # traffic to reach the cuts asserted, one test process on 3.12. Twice that is enough.)
    matches = max(6, cuts // 10)
    summaries = asyncio.run(_cut_loop(tmp_path, cuts, matches))
    for s in summaries:
        assert s.matches == matches, s
    _check_stored(tmp_path, matches)


def test_connections_reset_in_their_handshake_again_and_again_are_retried(
    tmp_path: Path,
) -> None:
    """Defect: a connection reset while the bot's gRPC still sends its HTTP/2 preface ends
    the call with INTERNAL ("Internal error from Core", the bot's own gRPC core's), and the
    SDK gave up at the 4th in a row (ArenaError, the bot gone, its seats forfeited) within
    seconds of back-off, whatever --retry-for said: 32 of 400 cuts at random places did
    it, and a flaky link that resets the next few connections ended the bot. INTERNAL is
    retried as UNAVAILABLE is now."""
    from sdk.client import BotRunner

    async def main() -> tuple[Any, int]:
        async with _table(tmp_path) as (a, px):
            px.cut_each = lambda: ("up", 10) if px.connections <= 6 else None
            runner = BotRunner(
                bots.load("random"),
                px.address,
                "tok-a",
                matches=1,
                initial_backoff=0.01,
                max_backoff=0.05,
                retry_for=PATIENCE,
            )
            task = asyncio.ensure_future(runner.run())
            try:
                assert not await a.referee.wait_for_bots(["a"], PATIENCE)
                await a.referee.run_match("m1", SHORT, 3, ["a", "b", "c"])
                return await asyncio.wait_for(task, PATIENCE), px.connections
            finally:
                task.cancel()

    # Each of the first 6 connections fails at its 10th byte up (the proxy's count of its
    # cuts may miss one the arena's reset ended first: 5 was seen on a loaded machine); the
    # bot played its match through a 7th.
    summary, connections = asyncio.run(main())
    assert connections >= 7
    assert summary.matches == 1, summary


async def _one_side_reset(tmp: Path, monkeypatch: pytest.MonkeyPatch, side: str) -> Outcome:
    """Mid-trick, the proxy resets ``side`` of bot ``a``'s connection and keeps the other
    side open and silent for ever."""
    config = {"reconnect_grace_s": 90, "decision_ms": 40_000, "time_bank_ms": 0}
    async with _table(tmp, **config) as (a, px):
        proc = await _sdk_bot(px.address, "tok-a", "--once")
        try:
            assert not await a.referee.wait_for_bots(["a"], PATIENCE)
            _on_message_to(monkeypatch, "a", _mid_trick, lambda: px.reset_side(side))
            rec = await asyncio.wait_for(
                a.referee.run_match("m1", SHORT, 11, ["a", "b", "c"]), PATIENCE
            )
            rc, out = await _exit(proc)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return Outcome(rec, rc, out, px.connections, 0)


@pytest.mark.parametrize("side", ["client", pytest.param("server", marks=pytest.mark.slow)])
def test_a_connection_reset_on_one_side_and_silent_on_the_other_is_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side: str
) -> None:
    """The bot's side reset (the arena's silent): the bot reconnects at once and its new
    stream takes over from the one the arena still holds. The arena's side reset (the
    bot's silent): the arena counts a disconnect at once, the bot learns of it through its
    keepalive (about 15 s: longer than the default grace of 5 s, hence 90 s here) and comes
    back. Either way the match is resumed, with no strike."""
    o = asyncio.run(_one_side_reset(tmp_path, monkeypatch, side))
    assert o.rc == 0, o.output
    assert "match m1 resumed" in o.output and "match m1 ended" in o.output, o.output
    assert o.connections >= 2
    assert o.record["forfeits"] == [] and not o.incidents("timeout"), o.record["incidents"]
    if side == "server":
        assert o.record["disconnects"][o.seat] >= 1, o.record["incidents"]


@pytest.mark.slow
def test_a_link_that_flaps_every_second_delays_the_match_and_breaks_nothing(
    tmp_path: Path,
) -> None:
    """Silent one second, back the next, for the whole match (100 ms each way besides,
    so that it lasts): keepalive may or may not call it a disconnect (a ping unanswered 5 s
    does); every decision waits for the link, within its time, or is asked again."""

    async def flap(px: FaultProxy) -> None:
        px.latency = 0.1
        while True:
            px.silence()
            await asyncio.sleep(1.0)
            px.restore()
            await asyncio.sleep(1.0)

    flapper: list[asyncio.Task[None]] = []

    def start(px: FaultProxy) -> None:
        flapper.append(asyncio.ensure_future(flap(px)))

    async def main() -> Outcome:
        try:
            o, _ = await _through(tmp_path, start, decision_ms=5000)
            return o
        finally:
            flapper[0].cancel()

    o = asyncio.run(main())
    assert o.rc == 0, o.output
    assert o.record["forfeits"] == [] and not o.incidents("timeout"), o.record["incidents"]
    assert "match m1 ended" in o.output, o.output


async def _sdk_bots_on(address: str, names: tuple[str, ...], *extra: str) -> list[Any]:
    return [await _sdk_bot(address, f"tok-{n}", "--once", *extra) for n in names]


@pytest.mark.slow
@pytest.mark.parametrize("tls", [False, True])
def test_serve_keeps_the_seat_of_a_bot_behind_a_silent_link_until_it_is_back(
    tmp_path: Path, tls: bool
) -> None:
    """`arena serve` (with TLS too): bot ``a``'s link goes silent mid-match (after 3 KB
    to the bot, 7 KB with TLS) and comes back once the bot has tried a new connection; the match is
    played out with ``a`` back in its seat, stored once, and serve ends (--matches 1)."""
    extra: tuple[str, ...] = ()
    host = "127.0.0.1"
    if tls:
        from tests.support.certs import make_cert

        cert, key = make_cert(tmp_path / "tls")
        extra, host = ("--tls-cert", str(cert), "--tls-key", str(key)), "localhost"
    bot_extra = ("--ca", str(tmp_path / "tls" / "arena.pem")) if tls else ()

    async def main() -> tuple[int | None, str, int]:
        server, port = await _serve(tmp_path, "--matches", "1", "--grace-s", "90", *extra)
        procs: list[Any] = []
        try:
            async with FaultProxy(port) as px:
                # (TLS's handshake takes about 2.5 KB of them: past the Welcome.)
                px.silence_after = ("down", 7000 if tls else 3000)
                procs = await _sdk_bots_on(f"{host}:{px.port}", ("a",), *bot_extra)
                procs += await _sdk_bots_on(f"{host}:{port}", ("b", "c"), *bot_extra)
                await _until(lambda: px.silent, "the link goes silent")
                await _until(lambda: px.connections >= 2, "the bot tries a new connection")
                px.restore()
                rc, out = await _exit(procs[0])
                assert await asyncio.wait_for(server.wait(), PATIENCE) == 0
                return rc, out, px.connections
        finally:
            for p in [server, *procs]:
                if p.returncode is None:
                    p.kill()
                    await p.wait()

    rc, out, connections = asyncio.run(main())
    assert rc == 0 and "match" in out and "resumed" in out, out
    _check_stored(tmp_path, 1)
    from arena.storage import Storage

    with Storage.open_readonly(tmp_path / "arena.sqlite") as st:
        (info,) = st.tournaments()
        (result,) = st.match_results(info.id)
        rec = st.load_record(result.match_id)
    assert rec["forfeits"] == [], rec["incidents"]
    assert rec["disconnects"][result.seats.index("a")] >= 1, rec["incidents"]
    assert connections >= 2


@pytest.mark.slow
def test_a_link_that_never_comes_back_hangs_nothing(tmp_path: Path) -> None:
    """Bot ``a``'s link goes silent mid-match for good: `arena serve` counts the
    disconnect, forfeits the seat after its grace, finishes and stores the match, and ends
    (--matches 1); the bot, whose new connections are accepted and never answered, gives
    up after --retry-for (exit 1) rather than wait for ever."""

    async def main() -> tuple[int | None, str]:
        server, port = await _serve(tmp_path, "--matches", "1", "--grace-s", "2")
        procs: list[Any] = []
        try:
            async with FaultProxy(port) as px:
                px.silence_after = ("down", 3000)
                procs = await _sdk_bots_on(px.address, ("a",), "--retry-for", "5")
                procs += await _sdk_bots_on(f"127.0.0.1:{port}", ("b", "c"))
                assert await asyncio.wait_for(server.wait(), PATIENCE) == 0
                return await _exit(procs[0])
        finally:
            for p in [server, *procs]:
                if p.returncode is None:
                    p.kill()
                    await p.wait()

    rc, out = asyncio.run(main())
    assert rc == 1 and "unreachable" in out, out
    _check_stored(tmp_path, 1)
    from arena.storage import Storage

    with Storage.open_readonly(tmp_path / "arena.sqlite") as st:
        (info,) = st.tournaments()
        (result,) = st.match_results(info.id)
    assert result.forfeits == (result.seats.index("a"),), result


@pytest.mark.slow
def test_a_tournament_keeps_a_remote_seat_behind_a_silent_link_until_it_is_back(
    tmp_path: Path,
) -> None:
    """`arena tournament` with a remote token seat (docs/tournament.md) whose link goes
    silent mid-tournament and comes back once the bot has tried a new connection: every
    match is played and stored once, none forfeited, and the remote bot is told the
    tournament is over (exit 0)."""
    import re

    from arena.storage import Storage

    cfg = tmp_path / "net.toml"
    cfg.write_text(
        'name = "net"\nruleset = "classic"\nseed = 5\nmatches_per_table = 1\n'
        f"max_deals = {DEALS}\nconcurrency = 1\nport = 0\nbot_wait_s = 60\n"
        f'db = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path / "out"}"\n'
        "[referee]\nreconnect_grace_s = 90\n"
        '[bots]\nr1 = "random"\nr2 = "random"\n'
        'friend = { remote = true, token = "friend-token-19" }\n'
    )

    async def main() -> tuple[int | None, str, int]:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
        tour = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from arena.cli import main; main()", "tournament",
            "--config", str(cfg), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, cwd=str(tmp_path), env=env,
        )  # fmt: skip
        assert tour.stdout is not None
        friend = None
        try:
            seen = ""
            while (m := re.search(r"connect\s+them\s+to\s+[\d.]+:(\d+)", seen)) is None:
                line = (await asyncio.wait_for(tour.stdout.readline(), PATIENCE)).decode()
                assert line, seen
                seen += line
            async with FaultProxy(int(m[1])) as px:
                px.silence_after = ("down", 6000)
                friend = await _sdk_bot(px.address, "friend-token-19")
                await _until(lambda: px.silent, "the link goes silent")
                await _until(lambda: px.connections >= 2, "the bot tries a new connection")
                px.restore()
                rc, out = await _exit(friend)
                await asyncio.wait_for(tour.communicate(), PATIENCE)
                assert tour.returncode == 0
                return rc, out, px.connections
        finally:
            for p in (tour, friend):
                if p is not None and p.returncode is None:
                    p.kill()
                    await p.wait()

    rc, out, connections = asyncio.run(main())
    assert rc == 0 and "resumed" in out, out
    assert connections >= 2
    with Storage.open_readonly(tmp_path / "t.sqlite") as st:
        (info,) = st.tournaments()
        results = st.match_results(info.id)
        assert info.completed == info.total_matches == len(results) > 0
        assert all(r.forfeits == () for r in results), results
        disconnects = sum(
            st.load_record(r.match_id)["disconnects"][r.seats.index("friend")] for r in results
        )
    assert disconnects >= 1


@pytest.mark.slow
def test_away_at_a_request_the_clock_runs_and_strikes_the_seat_out_within_its_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As docs/protocol.md says: the grace does not stop the decision clock. With the
    default limit, bank and strikes, a seat whose link goes silent at a request (and stays
    so) times out there, then at each later request, and forfeits by strikes, within a
    grace of 60 s."""

    async def main() -> dict[str, Any]:
        async with _table(tmp_path, reconnect_grace_s=60) as (a, px):
            proc = await _sdk_bot(px.address, "tok-a", "--once")
            try:
                assert not await a.referee.wait_for_bots(["a"], PATIENCE)
                _on_message_to(monkeypatch, "a", _mid_trick, px.silence)
                return await asyncio.wait_for(
                    a.referee.run_match("m1", SHORT, 11, ["a", "b", "c"]), PATIENCE
                )
            finally:
                proc.kill()
                await proc.wait()

    rec = asyncio.run(main())
    assert rec["forfeits"] == [0], rec["incidents"]
    kinds = [i["kind"] for i in rec["incidents"] if i["seat"] == 0]
    # (whether keepalive noticed the silence before the third strike, 5 to 15 s, varies)
    assert kinds.count("timeout") == 3, rec["incidents"]
    assert [i["detail"] for i in rec["incidents"] if i["kind"] == "forfeit"] == ["3 strikes"]
