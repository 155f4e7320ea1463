"""Review round 35b: a fresh reading of the late changes of 12-05 (the referee's stream
limit and streaming-served tokenless answers, the SDK's round-4 changes, the leaderboard
and web changes), each defect found pinned by a test that failed before its fix, and what
was checked without a defect."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

import sdk.client
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from sdk import Bot


class _Peers(pb_grpc.ArenaServicer):
    """An arena whose GetInfo keeps the peer (client address and port) of each call."""

    def __init__(self) -> None:
        self.peers: list[str] = []

    async def GetInfo(self, request: Any, context: Any) -> pb.ServerInfo:
        self.peers.append(context.peer())
        return pb.ServerInfo(server_version="x")


def test_bots_of_one_process_have_a_connection_each() -> None:
    """Defect: grpcio shares one connection between the channels of a process to the same
    address (its global subchannel pool), and the referee takes at most 100 streams on one
    connection (MAX_STREAMS_PER_CONNECTION, round 35): of 105 bots run in one process
    (run_async), 5 were never welcomed, their Play streams waiting for a free stream for
    ever. Each runner's channel has a connection of its own now."""

    async def main() -> list[str]:
        servicer = _Peers()
        server = grpc.aio.server()
        pb_grpc.add_ArenaServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        channels = [
            sdk.client.BotRunner(Bot, f"127.0.0.1:{port}", f"t{i}")._channel() for i in range(2)
        ]
        try:
            for channel in channels:
                await pb_grpc.ArenaStub(channel).GetInfo(pb.GetInfoRequest(), timeout=30)
        finally:
            for channel in channels:
                await channel.close()
            await server.stop(None)
        return servicer.peers

    peers = asyncio.run(main())
    assert len(peers) == 2
    assert peers[0] != peers[1], peers


def test_the_webs_match_lists_search_only_the_listed_records_for_a_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: the web's leaderboard (recomputed at every match stored, while its page
    polls) and every page of /api/matches searched the record of every match of the
    tournament for its time limit (Storage.time_limits: 45 MB of records for 3,000 matches
    of 8 deals, 0.13 s each time), to mark 20 matches. They name the matches they list
    now; the statuses are the same (the time-limited match still says so)."""
    from arena.storage import Storage
    from arena.web.data import DataSource
    from arena.web.demo import make_demo_db

    db = tmp_path / "t.sqlite"
    ids = make_demo_db(db, matches=4, max_deals=1)
    cut = ids[-1]
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "UPDATE matches SET record_json = json_set(record_json, '$.time_limit_s', 30.0)"
            " WHERE id = ?",
            (cut,),
        )
    asked: list[list[str] | None] = []
    real = Storage.time_limits

    def spy(self: Storage, tid: str, match_ids: Any = None) -> dict[str, float]:
        asked.append(None if match_ids is None else list(match_ids))
        return real(self, tid, match_ids)

    monkeypatch.setattr(Storage, "time_limits", spy)
    source = DataSource(db)
    recent = source.leaderboard(None)["recent"]
    page = source.matches(None, bot=None, limit=2)["matches"]
    assert {m["match_id"]: m["status"] for m in recent}[cut] == "time limit (30 s)"
    assert [m["status"] for m in page] == ["time limit (30 s)", ""]
    assert len(asked) == 2
    assert asked[0] is not None and sorted(asked[0]) == sorted(m["match_id"] for m in recent)
    assert asked[1] == [m["match_id"] for m in page]
    with Storage.open_readonly(db) as st:
        assert real(st, "demo", [ids[0]]) == {}
        assert real(st, "demo", [cut, ids[0]]) == real(st, "demo") == {cut: 30.0}
