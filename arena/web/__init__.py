"""``arena web``: a local leaderboard and replay viewer over the tournament database.

::

    from arena.web import DataSource, make_server
    server = make_server(DataSource("runs/arena.sqlite"), port=0)   # 0: a free port
    print(server.url)
    server.serve_forever()

See ``docs/web.md``.
"""

from arena.web.data import DataSource, NotFound
from arena.web.replay import MatchReplay, ReplayFailed, view_json
from arena.web.server import STATIC_DIR, WebServer, make_server

__all__ = [
    "STATIC_DIR",
    "DataSource",
    "MatchReplay",
    "NotFound",
    "ReplayFailed",
    "WebServer",
    "make_server",
    "view_json",
]
