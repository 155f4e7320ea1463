"""The referee: a ``grpc.aio`` server that holds every match's true state, tells each bot
only what its seat may see, accepts only legal moves in time, and records every match.

>>> from arena.referee import Referee, RefereeConfig
>>> ref = Referee(RefereeConfig(decision_ms=500))
>>> ref.add_bot("random-1", "token-1")

Then ``server, port = await start_server(ref)`` and ``await ref.run_match(...)``; see
docs/referee.md and docs/architecture.md ("arena: referee ⇄ tournament").
"""

import os

# gRPC core writes INFO lines of its own to stderr unless told otherwise before it loads: one
# for every client connection that sends a GOAWAY with an error code (any client, no token:
# 44,524 connections wrote 7.5 MB in 5 s) or fails its TLS handshake (a plaintext client, a
# port scan). Set here, not in `arena serve`: `arena.cli.options` loads gRPC through this
# package before any command runs. GRPC_VERBOSITY=INFO shows them.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from arena.referee.config import RefereeConfig, TLSConfig
from arena.referee.core import SERVER_VERSION, Referee
from arena.referee.lobby import Lobby
from arena.referee.server import SERVICE_NAME, start_server
from engine.record import INCIDENT_KINDS

__all__ = [
    "INCIDENT_KINDS",
    "SERVER_VERSION",
    "SERVICE_NAME",
    "Lobby",
    "Referee",
    "RefereeConfig",
    "TLSConfig",
    "start_server",
]
