"""Round 36's hostile ``World`` (used by rounds 36, 45, 55 and 56) stops what it started
when its start fails: on d4e987ba a World failing in its ``__init__`` was left running in
its test worker (loop, server and bots), and a later test in that worker failed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.hostile.test_hostile_round36 import World


class _Failed(RuntimeError):
    pass


def test_a_world_whose_start_fails_leaves_nothing_running(tmp_path: Path) -> None:
    made: list[World] = []

    class FailingWorld(World):
        def __init__(self, tmp: Path) -> None:
            made.append(self)
            super().__init__(tmp)

        async def _start(self) -> None:
            await super()._start()  # everything started: server, bots, the honest table
            raise _Failed("the start failed after everything was started")

    with pytest.raises(_Failed):
        FailingWorld(tmp_path)
    (w,) = made
    assert w.loop.is_closed() and not w.thread.is_alive()
    assert all(t.done() for t in [w.table, *w.runner_tasks])
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", w.port), timeout=5),
    ):
        pass  # the server's port is closed
