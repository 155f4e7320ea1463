"""Fixtures of every test, and the fuzz suites' tally of the inputs they tried.

The tally is printed in pytest's terminal summary (also under ``-q``), so ``make test`` and
``make fuzz`` both say how many inputs each fuzzer tried::

    fuzz: inputs tried
    engine: actions tried: 1150
    ...

Under pytest-xdist (``make test`` runs the suite in worker processes) each worker hands its
tally to the controller, which prints the sum: the same figures as a run in one process.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

TALLY: Counter[str] = Counter()


@pytest.fixture(scope="session")
def tally() -> Counter[str]:
    """The session's input counter (session-scoped: hypothesis tests may use it)."""
    return TALLY


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the tally
        workeroutput["fuzz_tally"] = dict(TALLY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """(xdist, in the controller) a worker's tally joins the session's."""
    TALLY.update(getattr(node, "workeroutput", {}).get("fuzz_tally", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not TALLY:
        return
    tr = terminalreporter
    tr.section("fuzz: inputs tried")
    for key in sorted(TALLY):
        tr.write_line(f"{key}: {TALLY[key]}")


@pytest.fixture(autouse=True)
def _no_condensing_filter_left_behind() -> Iterator[None]:
    """`arena-bot` commands run in-process (CliRunner) install a filter that condenses a
    bot's repeated errors on the SDK's loggers, process-wide: a later test counting those
    lines would see the earlier test's count (review: an order-dependent failure)."""
    yield
    from sdk.cli import _BOT_ERROR_LOGGERS, _OncePerSite

    for name in _BOT_ERROR_LOGGERS:
        logger = logging.getLogger(name)
        for f in [f for f in logger.filters if isinstance(f, _OncePerSite)]:
            logger.removeFilter(f)


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """A CLI command run in-process (``arena tournament -vv`` under CliRunner) sets the
    levels of the root, asyncio and grpc loggers and adds a handler to the root logger for
    the rest of its process, as a process of its own should. In a test worker that outlived
    the test: with one test process (``TEST_JOBS=1``) a later test that asserts on what is
    logged saw the server's DEBUG lines, or a traceback of gRPC's written to stderr
    through that handler (round 45, on 3.12 and 3.13). Each test gets the levels and the
    handlers back as they were (pytest's own capturing handlers are among them)."""
    manager = logging.Logger.manager
    loggers = [logging.getLogger(), *(v for v in manager.loggerDict.values()
                                      if isinstance(v, logging.Logger))]  # fmt: skip
    # (and whether each logger is disabled or propagates, and the process-wide
    # ``logging.disable`` level: a library's ``dictConfig`` disables the loggers it does
    # not name, after which a later test's caplog saw nothing of the arena's lines)
    before = {id(lg): (lg.level, list(lg.handlers), lg.disabled, lg.propagate, list(lg.filters))
              for lg in loggers}  # fmt: skip
    disabled_below = manager.disable
    yield
    if manager.disable != disabled_below:
        logging.disable(disabled_below)
    for lg in [logging.getLogger(), *manager.loggerDict.values()]:
        if not isinstance(lg, logging.Logger):
            continue
        level, handlers, off, propagate, filters = before.get(
            id(lg), (logging.NOTSET, [], False, True, [])
        )
        lg.disabled, lg.propagate, lg.filters[:] = off, propagate, filters
        if lg.level != level:
            lg.setLevel(level)
        for h in [h for h in lg.handlers if h not in handlers]:
            lg.removeHandler(h)
            h.close()


@pytest.fixture(autouse=True)
def _stop_signals_as_they_were() -> Iterator[None]:
    """A CLI command run in-process (CliRunner) in the main thread sets the stop signals'
    handlers for the rest of its process, as a process of its own should (`arena serve`
    ignores them once its loop is over). In a test worker that would outlive the test, and
    an ignored signal is inherited by every process it starts later: a later test's Ctrl-C
    would not reach its `arena tournament`. Each test gets them back as they were."""
    sigs = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s]
    main = threading.current_thread() is threading.main_thread()
    before = {s: signal.getsignal(s) for s in sigs} if main else {}
    yield
    for sig, handler in before.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


@pytest.fixture(autouse=True)
def _web_documents_fresh_after_every_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """`arena web` keeps a running tournament's document that took over ``SLOW_S`` (0.1 s)
    to make for a while (``THROTTLE`` times its cost) instead of making it again for each
    match stored. On a loaded machine any document may take that long, and a test that
    stores a match and reads the page at once then saw the page before it (CI-like run:
    the bot page's histogram without the match just stored). Tests of that throttle set
    ``SLOW_S`` themselves; every other test reads what is stored."""
    from arena.web import data

    monkeypatch.setattr(data, "SLOW_S", float("inf"))
