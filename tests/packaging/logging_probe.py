"""Two probes run in order, in one process, by
tests/packaging/test_pyversions_round45.py (this file's name keeps pytest from collecting
it on its own): the first sets logging up as ``arena tournament -vv`` does, the second must
find none of it (tests/conftest.py undoes it after each test)."""

from __future__ import annotations


def test_probe_sets_logging_up_as_tournament_vv_does() -> None:
    import io
    import logging

    from rich.console import Console

    from arena.cli.tournament import setup_logging

    setup_logging(2, Console(file=io.StringIO()))
    assert logging.getLogger().level == logging.DEBUG
    assert logging.getLogger("grpc").level == logging.DEBUG


def test_probe_finds_logging_as_a_fresh_process_has_it() -> None:
    import logging

    from arena.cli.tournament import _PlainLog

    assert logging.getLogger().level == logging.WARNING
    for name in ("grpc", "asyncio", "arena.referee", "arena.tournament.runner"):
        assert logging.getLogger(name).level == logging.NOTSET, name
    assert not any(isinstance(h, _PlainLog) for h in logging.getLogger().handlers)
