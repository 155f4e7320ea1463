"""A fault-injecting TCP proxy on 127.0.0.1 for network tests (asyncio, no root needed).

Bots connect to ``proxy.port``; each connection is forwarded to ``target_port``. The
faults are those of real networks:

- ``silence()`` / ``restore()``: a pulled cable. Nothing is forwarded either way, no FIN
  and no RST: both sockets stay open and what was sent waits (in the senders' buffers, as
  unacknowledged data would). A connection that one side closed meanwhile is reset on the
  other side when the link comes back (its peer's TCP answers the retransmission with an
  RST). New connections are accepted but not forwarded until the link is back.
  ``silence_after``: silent once so many bytes have gone one way.
- ``latency``: seconds added to every chunk, each way (order kept); ``rate``: bytes per
  second each way (a slow link).
- ``cut_after``: ``(direction, n)``: the next connection is cut after ``n`` bytes have
  gone ``"up"`` (bot to arena) or ``"down"`` (arena to bot), mid-frame if ``n`` falls
  there: both sides are reset.
  ``cut_each``: a function giving that for each new connection.
- ``reset_side("server")``: the arena's sockets are reset, the bots' kept open and silent
  (and the reverse with ``"client"``); new connections are forwarded as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

_CHUNK = 4096


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with an RST (SO_LINGER 0), not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass
class _Conn:
    client: asyncio.StreamWriter
    server: asyncio.StreamWriter | None = None
    #: Sides kept open and silent by reset_side: nothing is read from or written to them.
    frozen: set[str] = field(default_factory=set)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    done: bool = False

    def close(self, rst: bool) -> None:
        self.done = True
        for w in (self.client, self.server):
            if w is not None and not w.is_closing():
                if rst:
                    _reset(w)
                else:
                    w.close()


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.latency = 0.0
        self.rate: float | None = None
        self.cut_after: tuple[str, int] | None = None
        #: When set, every new connection is cut where it says (``cut_after`` first).
        self.cut_each: Callable[[], tuple[str, int] | None] | None = None
        #: Bytes delivered so far, each way (every connection).
        self.moved = {"up": 0, "down": 0}
        #: ``(direction, n)``: the link goes silent once ``n`` bytes have gone that way.
        self.silence_after: tuple[str, int] | None = None
        self.connections = 0  # accepted so far
        self.cuts = 0  # connections cut by cut_after
        self._up = asyncio.Event()
        self._up.set()
        self._conns: list[_Conn] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        self._up.set()
        for c in list(self._conns):
            c.close(rst=False)
            for t in c.tasks:
                t.cancel()
        for c in list(self._conns):
            for t in c.tasks:
                with contextlib.suppress(BaseException):
                    await t
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def silent(self) -> bool:
        return not self._up.is_set()

    def silence(self) -> None:
        self._up.clear()

    def restore(self) -> None:
        self._up.set()

    def open_connections(self) -> int:
        return sum(not c.done for c in self._conns)

    def reset_side(self, side: str) -> None:
        """Reset every open connection on ``side`` ("server": the arena's socket, "client":
        the bot's) and keep the other side open and silent for ever."""
        assert side in ("server", "client")
        other = "client" if side == "server" else "server"
        for c in self._conns:
            if c.done or c.server is None:
                continue
            c.frozen.add(other)
            c.frozen.add(side)
            _reset(c.server if side == "server" else c.client)

    async def _accept(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        self.connections += 1
        conn = _Conn(cw)
        self._conns.append(conn)
        cut, self.cut_after = self.cut_after, None
        if cut is None and self.cut_each is not None:
            cut = self.cut_each()
        await self._up.wait()
        try:
            sr, sw = await asyncio.open_connection(*self.target)
        except OSError:
            conn.close(rst=True)
            return
        conn.server = sw
        budget: dict[str, int | None] = {"up": None, "down": None}
        if cut is not None:
            budget[cut[0]] = cut[1]
        conn.tasks = [
            asyncio.ensure_future(self._pump(conn, cr, sw, "up", budget)),
            asyncio.ensure_future(self._pump(conn, sr, cw, "down", budget)),
        ]

    async def _pump(
        self,
        conn: _Conn,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        direction: str,
        budget: dict[str, int | None],
    ) -> None:
        src_side, dst_side = ("client", "server") if direction == "up" else ("server", "client")
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes | None]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                at, data = await queue.get()
                try:
                    if at > loop.time():
                        await asyncio.sleep(at - loop.time())
                    await self._up.wait()
                    while dst_side in conn.frozen or src_side in conn.frozen:
                        await asyncio.sleep(3600)
                    if conn.done:
                        return
                    if data is None:  # the source closed: pass its FIN on
                        with contextlib.suppress(OSError, RuntimeError):
                            if dst.can_write_eof():
                                dst.write_eof()
                        return
                    try:
                        dst.write(data)
                        await dst.drain()
                    except (OSError, RuntimeError):
                        conn.close(rst=True)
                        return
                    self.moved[direction] += len(data)
                    quiet = self.silence_after
                    if quiet is not None and quiet[0] == direction and (
                        self.moved[direction] >= quiet[1]):  # fmt: skip
                        self.silence_after = None
                        self.silence()
                    if self.rate:
                        await asyncio.sleep(len(data) / self.rate)
                finally:
                    queue.task_done()

        sender = asyncio.ensure_future(deliver())
        try:
            while not conn.done:
                await self._up.wait()
                while src_side in conn.frozen:
                    await asyncio.sleep(3600)
                size = _CHUNK if not self.rate else max(1, min(_CHUNK, int(self.rate / 10)))
                left = budget[direction]
                if left is not None:
                    size = max(1, min(size, left))
                try:
                    data = await src.read(size)
                except OSError:
                    data = b""
                if not data:
                    await queue.put((loop.time() + self.latency, None))
                    break
                await queue.put((loop.time() + self.latency, data))
                if left is not None:
                    budget[direction] = left - len(data)
                    if left - len(data) <= 0:
                        # The cut: what passed so far is delivered, then both sides reset.
                        await queue.join()
                        self.cuts += 1
                        conn.close(rst=True)
                        return
            await sender
        finally:
            if not sender.done():
                sender.cancel()
