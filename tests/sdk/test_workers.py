"""The SDK runner's worker threads (``sdk.client._Workers``), without an arena: reused when
idle, bounded, cancelled calls not run, a bot's ``SystemExit`` handed to its caller, idle
threads ended by ``shutdown``. (Mutation audit: the daemon flag alone was tested.)"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import Future
from typing import Any

from sdk.client import _Workers

GUARD = 30.0  # (a guard against a hang, not a timing)


def _idle(w: _Workers, n: int) -> None:
    """Wait until ``n`` of ``w``'s threads are idle (a call's result comes just before)."""
    done = threading.Event()
    for _ in range(int(GUARD / 0.01)):
        if w._idle._value == n:  # type: ignore[attr-defined]
            return
        done.wait(0.01)
    raise AssertionError(f"{w._idle._value} idle threads, not {n}")  # type: ignore[attr-defined]


def test_an_idle_thread_is_reused() -> None:
    w = _Workers(4)
    try:
        names = []
        for _ in range(5):
            names.append(w.submit(lambda: threading.current_thread().name).result(GUARD))
            _idle(w, 1)
        assert names == ["sdk-bot_1"] * 5 and w._threads == 1
    finally:
        w.shutdown()


def test_no_more_threads_than_the_most_and_the_rest_wait_their_turn() -> None:
    w = _Workers(2)
    go = threading.Event()
    try:
        futures = [w.submit(go.wait) for _ in range(3)]
        assert w._threads == 2
        assert not futures[2].running() and not futures[2].done()
        go.set()
        assert [f.result(GUARD) for f in futures] == [True] * 3
    finally:
        go.set()
        w.shutdown()


def test_a_call_cancelled_while_it_waits_is_not_run() -> None:
    w = _Workers(1)
    go = threading.Event()
    ran: list[str] = []
    try:
        first = w.submit(go.wait)
        second: Future[Any] = w.submit(lambda: ran.append("second"))
        assert second.cancel()  # (as asyncio.wrap_future does when its awaiter is cancelled)
        third = w.submit(lambda: ran.append("third"))
        go.set()
        assert first.result(GUARD) and third.result(GUARD) is None
        assert ran == ["third"]
    finally:
        go.set()
        w.shutdown()


def test_a_bot_call_raising_system_exit_hands_it_to_its_caller() -> None:
    w = _Workers(1)
    try:
        f = w.submit(lambda: sys.exit(3))
        e = f.exception(GUARD)
        assert isinstance(e, SystemExit) and e.code == 3
        assert w.submit(lambda: 7).result(GUARD) == 7  # the thread goes on
    finally:
        w.shutdown()


def test_shutdown_drops_the_calls_not_started_and_ends_the_threads() -> None:
    w = _Workers(2)
    go = threading.Event()
    threads: list[threading.Thread] = []

    def hold() -> bool:
        threads.append(threading.current_thread())
        return go.wait()

    held = [w.submit(hold), w.submit(hold)]  # both threads busy ...
    while len(threads) < 2:
        go.wait(0.01)
    waiting = w.submit(hold)  # ... so this one waits
    w.shutdown()
    assert waiting.cancelled()
    go.set()
    assert [f.result(GUARD) for f in held] == [True, True]  # running calls go on
    for t in threads:  # and then their threads end
        t.join(GUARD)
        assert not t.is_alive(), t
    assert len(threads) == 2


def test_a_thread_that_cannot_start_leaves_no_call_behind(monkeypatch: Any) -> None:
    """Defect (review of the daemon workers): ``submit`` queued the call, then started a
    thread for it; when the thread could not start (no memory, a process limit) the
    caller got the RuntimeError, yet the call stayed queued and ran later on the next
    thread (a bot's ``act`` made after the runner had given up on it), and the count of
    threads kept the one that never was."""
    w = _Workers(2)
    ran: list[str] = []
    real = threading.Thread.start

    def cannot(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    try:
        monkeypatch.setattr(threading.Thread, "start", cannot)
        try:
            w.submit(lambda: ran.append("refused"))
        except RuntimeError:
            pass
        else:
            raise AssertionError("submit did not raise")
        monkeypatch.setattr(threading.Thread, "start", real)
        assert w.submit(lambda: ran.append("next")).result(GUARD) is None
        assert ran == ["next"] and w._threads == 1
    finally:
        w.shutdown()


def test_a_bot_in_a_worker_process_has_the_hooks_and_methods_of_its_class() -> None:
    """``arena-bot run --workers``: the runner calls only the hooks the bot's class
    overrides, and names its methods as for a bot in its own process."""
    from pathlib import Path

    from engine import Phase
    from sdk.workers import Processes

    spec = f"{Path(__file__).parents[1] / 'support' / 'pid_bot.py'}:PidBot"
    procs = Processes(spec, 1, "PidBot")
    try:
        procs.wait_ready(GUARD)
        bot = procs.make("m1")
        assert bot is not None and bot.name == "PidBot" and bot.match_id == "m1"
        assert bot.hooks == {"on_match_start"}
        assert bot.methods[Phase.PLAYING].startswith("PidBot.act() (pid_bot.py:")
        bot.close()
    finally:
        procs.shutdown()
