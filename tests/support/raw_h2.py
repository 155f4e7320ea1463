"""A hand-made HTTP/2 client for tests: sends what grpcio's own client will not (header
values that are not UTF-8, a message whose length prefix lies, a compressed flag without an
encoding) and reports the frames the server sends back, undecoded."""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes((kind, flags))
        + struct.pack(">I", stream)
        + payload
    )


def _hpack_string(data: bytes) -> bytes:
    """An HPACK string literal, not Huffman-coded (RFC 7541 5.1 and 5.2)."""
    n = len(data)
    if n < 127:
        return bytes((n,)) + data
    out, n = bytearray((127,)), n - 127
    while n >= 128:
        out.append(n % 128 | 128)
        n //= 128
    return bytes(out) + bytes((n,)) + data


def header_block(path: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> bytes:
    """A gRPC call's headers, each a literal without indexing (no HPACK state kept)."""
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path.encode()),
              (b":authority", b"localhost"), (b"content-type", b"application/grpc"),
              (b"te", b"trailers"), *extra]  # fmt: skip
    return b"".join(b"\x00" + _hpack_string(k) + _hpack_string(v) for k, v in fields)


def grpc_message(payload: bytes, *, length: int | None = None, compressed: bool = False) -> bytes:
    """A length-prefixed gRPC message; ``length`` may lie about the payload's size."""
    return (
        bytes((int(compressed),))
        + struct.pack(">I", len(payload) if length is None else length)
        + payload
    )


@dataclass(frozen=True)
class Frame:
    kind: int
    flags: int
    stream: int
    payload: bytes


class RawH2:
    """One HTTP/2 connection to ``127.0.0.1:port``; streams numbered 1, 3, 5, ..."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.next_stream = 1
        self._buffer = b""

    def call(self, path: str, *, extra: tuple[tuple[bytes, bytes], ...] = (),
             data: bytes | None = None, end: bool = True) -> int:  # fmt: skip
        """Open a call on a new stream: its headers, then ``data`` in one DATA frame (the
        stream half-closed after it when ``end``); its stream id."""
        sid, self.next_stream = self.next_stream, self.next_stream + 2
        block = header_block(path, extra)
        if data is None:
            self.sock.sendall(frame(HEADERS, END_HEADERS | (END_STREAM if end else 0), sid, block))
        else:
            self.sock.sendall(frame(HEADERS, END_HEADERS, sid, block)
                              + frame(DATA, END_STREAM if end else 0, sid, data))  # fmt: skip
        return sid

    def frames(self, seconds: float, until_ended: set[int] | None = None) -> list[Frame]:
        """The frames received within ``seconds`` (SETTINGS and PING acknowledged), or
        until every stream of ``until_ended`` has ended (a frame with END_STREAM or a
        RST_STREAM), or the server closed the connection."""
        out: list[Frame] = []
        left = set(until_ended or ())
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and (until_ended is None or left):
            while len(self._buffer) >= 9:
                size = int.from_bytes(self._buffer[:3], "big")
                if len(self._buffer) < 9 + size:
                    break
                kind, flags = self._buffer[3], self._buffer[4]
                sid = int.from_bytes(self._buffer[5:9], "big") & 0x7FFFFFFF
                f = Frame(kind, flags, sid, self._buffer[9 : 9 + size])
                self._buffer = self._buffer[9 + size :]
                out.append(f)
                if kind == SETTINGS and not flags & ACK:
                    self.sock.sendall(frame(SETTINGS, ACK, 0))
                elif kind == PING and not flags & ACK:
                    self.sock.sendall(frame(PING, ACK, 0, f.payload))
                if kind == RST_STREAM or (flags & END_STREAM and kind in (DATA, HEADERS)):
                    left.discard(sid)
            if until_ended is not None and not left:
                break
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                break
            if not chunk:
                break
            self._buffer += chunk
        return out

    def close(self) -> None:
        self.sock.close()


class NoWindow(RawH2):
    """A hand-made HTTP/2 connection that grants its streams no flow-control window
    (SETTINGS_INITIAL_WINDOW_SIZE 0: nothing sent on a stream can reach it) and still
    answers the server's PINGs and SETTINGS from a thread of its own (keepalive never
    finds it dead). The frames it received are in ``got``."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), 10)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, b"\x00\x04\x00\x00\x00\x00"))
        self.next_stream = 1
        self._buffer = b""
        self.got: list[Frame] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        while not self.stop.is_set():
            with self.lock:
                self.got += self.frames(0.05)

    def play(self, token: str, hello: bytes) -> int:
        """Open a ``Play`` call with ``token`` and send ``hello`` (a serialized
        ``BotMessage``), the stream left open; its stream id."""
        with self.lock:
            return self.call("/arena.v1.Arena/Play", data=grpc_message(hello), end=False,
                             extra=((b"authorization", f"Bearer {token}".encode()),))  # fmt: skip

    def ended(self, sid: int) -> list[Frame]:
        """The trailers (HEADERS with END_STREAM) received on stream ``sid``."""
        with self.lock:
            return [f for f in self.got if f.stream == sid and f.kind == HEADERS
                    and f.flags & END_STREAM]  # fmt: skip

    def close(self) -> None:
        self.stop.set()
        self.pump.join()
        super().close()
