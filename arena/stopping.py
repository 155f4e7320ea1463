"""The signals that stop the arena's long-running commands, and their last moments.

`arena tournament`, `arena serve`, `arena web` and `arena-bot run` stop cleanly on the
first stop signal. Once a process's exit is decided, a later one must not kill it: it would
lose the exit code and whatever was being closed. Kept apart from the tournament runner so
that a bot process or the web server need not import the runner to use it.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["ignore_stop_signals", "stop_signals"]


def stop_signals() -> tuple[signal.Signals, ...]:
    """The signals that stop `arena tournament` and `arena serve` cleanly (every finished
    match kept): SIGINT, SIGTERM, and a hang-up — the terminal of a run started from an
    ssh session closing killed it at once — unless the hang-up is ignored already
    (`nohup`), as it must stay."""
    sigs = [signal.SIGINT, signal.SIGTERM]
    hup: signal.Signals | None = getattr(signal, "SIGHUP", None)  # (not on Windows)
    if hup is not None and signal.getsignal(hup) is not signal.SIG_IGN:
        sigs.append(hup)
    return tuple(sigs)


def ignore_stop_signals() -> None:
    """Every stop signal ignored from now on, for the last moments of a process whose exit
    is decided (its cleanup, and Python's teardown after its atexit calls, where the signals
    are back at their default actions): a second Ctrl-C there killed it by the signal, its
    exit code and whatever it was closing lost. Signals reach the main thread only: from
    another (a test's CLI runner) there is nothing to do."""
    if threading.current_thread() is threading.main_thread():
        for sig in stop_signals():
            signal.signal(sig, signal.SIG_IGN)
