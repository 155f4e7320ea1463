"""Round 51: `arena web --host ::` serves the IPv4 URL it hands out on every system.

`arena web` on every address (``--host ::``, ``[::]``) hands out the IPv4 address of the
machine's default route. It listened on an IPv6 socket as the system made it: where such a
socket takes IPv6 alone unless told (``net.ipv6.bindv6only=1``, the BSDs, Windows), that URL
was refused. The socket is now told to take both, as ``arena serve``'s (gRPC's) is.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from arena.web.demo import make_demo_db
from tests.support.harness import get_json, web_server


def test_every_ipv6_address_serves_ipv4_where_ipv6_sockets_are_ipv6_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = socket.socket.__init__

    def v6_only(self: socket.socket, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        # (the default of such a system, for a socket made: not one accepted, made of a
        # descriptor)
        if self.family == socket.AF_INET6 and kwargs.get("fileno") is None:
            self.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)

    monkeypatch.setattr(socket.socket, "__init__", v6_only)
    db = tmp_path / "club.sqlite"
    make_demo_db(db, matches=1, max_deals=1, tournament_id="club-w1")
    for host in ("::", "[::]"):
        with web_server(db, host) as server:
            listed = get_json(f"http://127.0.0.1:{server.port}/", "api/tournaments")
            assert [t["id"] for t in listed] == ["club-w1"], host
            assert get_json(f"http://[::1]:{server.port}/", "api/tournaments") == listed
    # (one IPv6 address is that address alone)
    with web_server(db, "::1") as server, pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=10).close()
