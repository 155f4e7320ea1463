"""Starting the referee's gRPC server: the Arena service, health checking, reflection."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import math
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn
from urllib.parse import unquote

import grpc
from google.protobuf.message import DecodeError
from grpc._cython import cygrpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.addresses import address_key
from arena.protocol import RETRY_AFTER_MS, message_bytes
from arena.referee.config import TLSConfig
from arena.referee.core import CORE_END_SETTLE_S, REFUSALS_LOGGED, Referee
from arena.referee.servicer import ArenaServicer
from arena.referee.sessions import RateMeter
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

__all__ = [
    "HANDSHAKE_TIMEOUT_MS",
    "MAX_OPEN_CALLS",
    "MAX_OPEN_CALLS_PER_ADDRESS",
    "MAX_STREAMS_PER_CONNECTION",
    "SERVICE_NAME",
    "TOKENLESS_LIMIT",
    "TOKENLESS_MAX_BYTES",
    "TOKENLESS_REQUEST_S",
    "TOKENLESS_WINDOW_S",
    "port_problem",
    "start_server",
]


SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["Arena"].full_name
_PLAY = f"/{SERVICE_NAME}/Play"

#: Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS,
#: the least RFC 9113 advises); gRPC counts a stream its client reset until its handler
#: has ended.
MAX_STREAMS_PER_CONNECTION = 100

#: Milliseconds a connection has to finish its TLS and HTTP/2 handshake.
HANDSHAKE_TIMEOUT_MS = 10_000

# Bots answer within a second; keep idle streams alive through NATs and notice dead peers.
_OPTIONS = [
    # A bot whose connection died silently is noticed within about 15 s (a disconnect:
    # its grace period starts). gRPC core (1.85) does not enforce keepalive_timeout_ms: an
    # unanswered ping is given up on after ping_timeout_ms, 60 s by default, which made it
    # 60-70 s; both are set.
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.http2.ping_timeout_ms", 5_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.max_receive_message_length", 1 << 20),
    # A connection without a call (no token needed to open one: ~14 KB each) is closed
    # after a minute; a bot's is never idle (its Play stream), and clients reconnect.
    ("grpc.max_connection_idle_ms", 60_000),
    # A TCP connection that never finishes its TLS and HTTP/2 handshake (no token needed)
    # was held 120 s, gRPC's default: about 20 KB and a descriptor each, so a client
    # opening them steadily held six times what one held for 20 s. A bot's handshake takes
    # milliseconds; 10 s is the time a stream has for its Hello, too.
    ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
    # gRPC shares a port by default (SO_REUSEPORT): a second referee on the same port
    # would start without a word and take a share of the bots. It is refused instead.
    ("grpc.so_reuseport", 0),
    # HTTP/2 "rapid reset" (open a stream and reset it at once, as fast as one can; no
    # token needed): every reset stream still reached the referee's handler, 2,954 of
    # 5,000 sent in one go on one connection, and a flood cut matches to a tenth and took
    # the referee from 55 to 216 MB. With this limit gRPC counts a reset stream until its
    # handler is done, and refuses the streams past it (RST_STREAM ENHANCE_YOUR_CALM)
    # before any Python runs. A bot needs one stream; grpcio clients queue past the limit.
    ("grpc.max_concurrent_streams", MAX_STREAMS_PER_CONNECTION),
    # Not also refuse (REFUSED_STREAM, grpcio's UNAVAILABLE) a stream that its client,
    # keeping within the limit, counts as closed while its handler still ends: 200 calls
    # at once on one grpcio channel had 26 refused so, and 80 cut by deadlines of a
    # millisecond some. Resets past the limit are refused as above all the same.
    ("grpc.http.overload_protection", 0),
]


class _Unparsed:
    """Request bytes that are refused unparsed: ``why``."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], bad: _Unparsed) -> NoReturn:
    try:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bad.why)
    except cygrpc.ExecuteBatchError:
        # The call has its status already: gRPC core ended it (a message it could not
        # decompress, say: the read then says EOF). grpc.aio logs the failed send with a
        # traceback unless the handler ends as cancelled.
        raise asyncio.CancelledError from None
    raise AssertionError("abort returns only by raising")  # pragma: no cover


async def _answer(context: grpc.aio.ServicerContext[Any, Any], response: Any) -> None:
    """Write ``response`` on a call that needs no token. A client may grant its streams no
    flow-control window (SETTINGS_INITIAL_WINDOW_SIZE 0) and read nothing: the answer then
    waits until its connection closes, and fails. Written by grpc.aio, that failure was an
    ERROR with a traceback (``ExecuteBatchError raised in core by servicer method``), one
    per GetInfo, health Check or reflection answer, from any client (transport round 35);
    here it ends the call as cancelled, which grpc.aio logs at DEBUG."""
    try:
        await context.write(response)
    except cygrpc.ExecuteBatchError:
        raise asyncio.CancelledError from None


#: Streaming calls that need no token (health's Watch, reflection) open at once; the next
#: is refused with RESOURCE_EXHAUSTED. Each holds some 20 KB until its client leaves, and
#: nothing else bounds them (Play streams need a token and one per bot lives).
MAX_OPEN_CALLS = 1000


#: Of those, at most this many from one client address.
MAX_OPEN_CALLS_PER_ADDRESS = 100

#: Requests that need no token (GetInfo, health checking, reflection: each message of a
#: reflection call counts) answered per client address within ``TOKENLESS_WINDOW_S``; more
#: are refused with RESOURCE_EXHAUSTED and ``retry-after-ms``; bots' Play streams are not
#: counted. This bounds the answers' work, not gRPC's for each request: a client asking as
#: fast as it can still slows every match (a proxy in front must bound that).
TOKENLESS_LIMIT = 200
TOKENLESS_WINDOW_S = 2.0
#: Addresses whose counts are kept; past this, those whose window is over are forgotten,
#: then those within their limit.
_MAX_ADDRESSES = 4096
#: The largest request that needs no token: GetInfo's is empty, health's and reflection's
#: name a service, a symbol or a file (tens of bytes). A larger one is refused unparsed
#: with INVALID_ARGUMENT.
TOKENLESS_MAX_BYTES = 4096
#: How long a call that needs no token (GetInfo, health) may take to send its request
#: after its headers: one that never does is refused with INVALID_ARGUMENT, not kept open.
TOKENLESS_REQUEST_S = 10.0


class _OpenCalls:
    """The calls that need no token: how many long-lived ones are open, when to stop
    them, and how many requests each client address made lately."""

    __slots__ = ("by_address", "count", "recent", "stopping")

    def __init__(self, stopping: asyncio.Event) -> None:
        self.stopping = stopping
        self.count = 0
        self.by_address: Counter[str] = Counter()
        #: address -> [the start of its current window, requests in it]: a fixed window,
        #: a few bytes per address (a sliding one keeps a time per request: 76 MB at most).
        self.recent: dict[str, list[float]] = {}

    async def request(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Count one request of the caller's address; refuse it over the limit."""
        loop = asyncio.get_running_loop()
        address, shown = _client(context)
        now = loop.time()
        window = self.recent.get(address)
        if window is None or now - window[0] >= TOKENLESS_WINDOW_S:
            if window is None and len(self.recent) >= _MAX_ADDRESSES:
                # The windows over go first, then those within the limit (their clients
                # start new ones): an address refused stays refused to its window's end,
                # however many others ask meanwhile (all were forgotten once).
                live = {a: w for a, w in self.recent.items() if now - w[0] < TOKENLESS_WINDOW_S}
                if len(live) >= _MAX_ADDRESSES:
                    live = {a: w for a, w in live.items() if w[1] >= TOKENLESS_LIMIT}
                    if len(live) >= _MAX_ADDRESSES:  # that many refused at once
                        live.clear()
                self.recent = live
            window = self.recent[address] = [now, 0.0]
        if window[1] >= TOKENLESS_LIMIT:
            wait_s = max(0.001, window[0] + TOKENLESS_WINDOW_S - now)
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {TOKENLESS_LIMIT} requests without a token (GetInfo, health, "
                f"reflection) from {shown} within {TOKENLESS_WINDOW_S:g} s: wait "
                f"{math.ceil(wait_s * 10) / 10:g} s{_counted_as(address)}",
                trailing_metadata=((RETRY_AFTER_MS, str(math.ceil(wait_s * 1000))),),
            )
        window[1] += 1

    @contextlib.asynccontextmanager
    async def one(self, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[None]:
        address, shown = _client(context)
        if self.count >= MAX_OPEN_CALLS:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_OPEN_CALLS} streaming calls without a token (health Watch, "
                "reflection) are open already: retry later",
            )
        if self.by_address[address] >= MAX_OPEN_CALLS_PER_ADDRESS:
            # One client holding every place refused every other client's health Watch.
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_OPEN_CALLS_PER_ADDRESS} streaming calls without a token (health Watch, "
                f"reflection) are open from {shown} already{_counted_as(address)}: retry later",
            )
        self.count += 1
        self.by_address[address] += 1
        try:
            yield
        finally:
            self.count -= 1
            self.by_address[address] -= 1
            if not self.by_address[address]:
                del self.by_address[address]


class _BadMetadataLogged(logging.Filter):
    """grpc.aio logs a metadata value that is not UTF-8 (any caller, no token needed) as an
    ERROR with a traceback, one per value: a client sending such calls as fast as it could
    wrote 1.8 MB of tracebacks in 3 s (transport round). It becomes a warning of one line,
    at most ``REFUSALS_LOGGED`` per 10 s, the next one counting those left out."""

    def __init__(self) -> None:
        super().__init__()
        self.logged = RateMeter(REFUSALS_LOGGED, 10.0)
        self.unlogged = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Invalid encoding on"):
            return True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # (not on an event loop: keep it, without its traceback)
            loop = None
        if loop is not None:
            if self.logged.full(loop):
                self.unlogged += 1
                return False
            self.logged.add(loop)
        value = record.args[0] if isinstance(record.args, tuple) and record.args else b""
        record.msg = "a call's metadata holds a value that is not UTF-8 (read as Latin-1): %s%s"
        record.args = (
            repr(value)[:100],
            f" ({self.unlogged} more not logged)" if self.unlogged else "",
        )
        self.unlogged = 0
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info = record.exc_text = None
        return True


_BAD_METADATA_LOGGED = _BadMetadataLogged()


class _CancelledAtStop(logging.Filter):
    """A call's handler cancelled outside grpc.aio's own handling (by the server's stop, or
    the call's reset, before it ran or while grpc.aio sends its status: trailers queued
    behind data a client that reads nothing never takes) is logged as an ERROR with a traceback of
    ``CancelledError``, "Exception not handled by _handle_exceptions": 438 of them after
    one stop during a flood of resets. A handler cancelled inside that handling is logged
    at DEBUG by grpc.aio itself ("RPC cancelled"); this one is the same event, so it goes
    to DEBUG too. Any other unhandled exception stays an ERROR. (grpc.aio also prints that
    traceback itself, beyond any filter. Beside a bot that reads nothing, hostile round
    42's SIGTERM test, it came from a handler still running when the server's grace ran
    out: ``Referee.end_streams`` now ends such a handler first; round 44.)"""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Exception not handled by _handle_exceptions"):
            return True
        if record.exc_info is None or not isinstance(record.exc_info[1], asyncio.CancelledError):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        # (its args name the method: "Exception not handled ... in servicer method [%s]")
        record.msg = (
            "a call's handler was cancelled (the server's stop or the call's reset) outside "
            "grpc.aio's own handling [%s]"
        )
        record.exc_info = record.exc_text = None
        return True


_CANCELLED_AT_STOP = _CancelledAtStop()


def _address(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """The caller's address without its port (``ipv4:127.0.0.1``, ``ipv6:[::1]``: gRPC
    writes the brackets %-encoded)."""
    peer = unquote(context.peer() or "?")
    return peer.rpartition(":")[0] if peer.count(":") > 1 else peer


def _client(context: grpc.aio.ServicerContext[Any, Any]) -> tuple[str, str]:
    """What the per-address caps count the caller by, and its address as a refusal names
    it. A host with several addresses is one client: every loopback address is this
    machine's, and an IPv6 host is given a /64 and picks addresses in it at will (one
    client held every open place, or asked as often as it liked, from as many addresses);
    ``arena web`` counts its connections the same way."""
    shown = _address(context)
    kind, _, host = shown.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return shown, shown
    return address_key(host.strip("[]")), shown


def _counted_as(key: str) -> str:
    """What a refusal adds when the caps counted its caller with other addresses."""
    if key == "loopback":
        return " (every loopback address counts as one)"
    if "/" in key:
        return f" (an IPv6 address counts as its /64, {key})"
    return ""


def _parsing_refused(handler: grpc.RpcMethodHandler, calls: _OpenCalls) -> grpc.RpcMethodHandler:
    """``handler`` with a request that does not parse answered INVALID_ARGUMENT, naming the
    message: gRPC itself logs a traceback and answers UNKNOWN, for any caller, token or
    not (GetInfo, health checking and reflection need none), as often as it likes. Its
    streaming calls count toward :data:`MAX_OPEN_CALLS`, its requests toward
    :data:`TOKENLESS_LIMIT`."""
    parse = handler.request_deserializer
    if parse is None:
        return handler
    what = getattr(getattr(getattr(parse, "__self__", None), "DESCRIPTOR", None), "full_name",
                   "its request type")  # fmt: skip

    def tolerant(data: bytes) -> Any:
        if len(data) > TOKENLESS_MAX_BYTES:
            # An open health Watch keeps its request, some four times over: 100 Watch calls
            # naming a service of a MiB would take the referee from 45 to 490 MB, and 10
            # addresses could hold 1,000 of them.
            return _Unparsed(
                f"a request of {len(data):,} bytes: requests without a token (GetInfo, "
                f"health, reflection) take at most {TOKENLESS_MAX_BYTES:,}"
            )
        try:
            return parse(data)
        except DecodeError as e:
            return _Unparsed(f"could not parse the message as {what}: {e}")

    async def checked(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        async for request in requests:
            await calls.request(context)
            if isinstance(request, _Unparsed):
                await _refuse(context, request)
            yield request

    async def one_request(context: Any) -> Any:
        """The call's request, read here rather than by grpc.aio: for a call that ended
        without one, grpc.aio would return without a status and gRPC core keep the stream
        for as long as its connection lived (40,000 such GetInfo calls took the referee
        from 50 to 724 MB); one whose request never came would wait as long. The call
        counts toward TOKENLESS_LIMIT before its request comes, so that one address has at
        most that many waiting within TOKENLESS_REQUEST_S."""
        await calls.request(context)
        try:
            request = await asyncio.wait_for(context.read(), TOKENLESS_REQUEST_S)
        except TimeoutError:
            request = _Unparsed(f"no request message came within {TOKENLESS_REQUEST_S:g} s")
        if request is grpc.aio.EOF:
            request = _Unparsed("the call ended without its request message")
        if isinstance(request, _Unparsed):
            await _refuse(context, request)
        return request

    # The unary-request methods are served as request-streaming ones (the same bytes on
    # the wire) so that one_request reads the request; GetInfo and health's Check as
    # response-streaming ones too, so that the answer is written here (_answer).
    if handler.unary_unary is not None:
        uu = handler.unary_unary

        async def unary_unary(_requests: Any, context: Any) -> None:  # writes: _answer
            await _answer(context, await uu(await one_request(context), context))

        return handler._replace(
            request_streaming=True, response_streaming=True, request_deserializer=tolerant,
            unary_unary=None, stream_stream=unary_unary,
        )  # fmt: skip
    if handler.unary_stream is not None and not inspect.isasyncgenfunction(handler.unary_stream):
        us = handler.unary_stream

        async def unary_stream(_requests: Any, context: Any) -> None:  # writes: context.write
            async with calls.one(context):
                request = await one_request(context)
                # Such a call (health's Watch) lasts until its client leaves: at shutdown it
                # is ended here (``stopping``, set by end_streams), not cancelled by gRPC,
                # which logs that as an unhandled exception.
                inner = asyncio.ensure_future(us(request, context))
                stop = asyncio.ensure_future(calls.stopping.wait())
                try:
                    await asyncio.wait((inner, stop), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    if not inner.done():
                        inner.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await inner
                    elif not inner.cancelled():
                        inner.exception()  # (retrieved even if this call is cancelled)
            if not inner.cancelled():
                inner.result()  # (its exception, if any, is gRPC's to report)

        return handler._replace(
            request_streaming=True, request_deserializer=tolerant, unary_stream=None,
            stream_stream=unary_stream,
        )  # fmt: skip
    if handler.stream_stream is not None and inspect.isasyncgenfunction(handler.stream_stream):
        ss = handler.stream_stream

        async def stream_stream(requests: Any, context: Any) -> None:  # writes: _answer
            async with calls.one(context):
                async for response in ss(checked(requests, context), context):
                    await _answer(context, response)
                # The requests' end may be gRPC core's end of the call (a message it cannot
                # decompress): as for Play (core.CORE_END_SETTLE_S), the status is not sent
                # before grpc.aio can hear of it and cancel this call. Returning at once
                # made it log an ERROR with a traceback for 4 of 30 such reflection calls,
                # which need no token.
                await asyncio.sleep(CORE_END_SETTLE_S)

        return handler._replace(request_deserializer=tolerant, stream_stream=stream_stream)
    return handler  # (Play reads with context.read and names a bad message itself)


class _RefuseUnparsed(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Every method of the server but Play (which does so itself): :func:`_parsing_refused`.
    Play's responses may be wire bytes as well as messages (:func:`message_bytes`).
    ``stopping``, once set, ends the calls that would otherwise stay open (health's Watch);
    at most :data:`MAX_OPEN_CALLS` of those are open at once."""

    def __init__(self, stopping: asyncio.Event) -> None:
        self.calls = _OpenCalls(stopping)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        if handler_call_details.method == _PLAY:
            # Its stream parses each message itself (``core._read``): a first message over
            # the Hello's size (HELLO_MAX_BYTES) is refused unparsed, before it costs the
            # loop its parse. And the writer sends a batch as its wire bytes
            # (Stream.write_loop), a message as itself: the same bytes on the wire either way.
            return handler._replace(request_deserializer=None, response_serializer=message_bytes)
        return _parsing_refused(handler, self.calls)


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC and the SDK take it: an IPv6 address in brackets.

    >>> host_port("127.0.0.1", 80), host_port("::1", 80), host_port("[::1]", 80)
    ('127.0.0.1:80', '[::1]:80', '[::1]:80')
    """
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def port_problem(host: str, port: int) -> str | None:
    """Why a server could not listen on ``host:port``, or None. The port is bound here once
    as gRPC binds it (address reuse, no port sharing) and released: a busy port is named
    plainly, before gRPC core logs its own error line. Like gRPC, one address of the host
    that binds is enough. Port 0 is checked too (a free port is bound): a host that does
    not resolve, or is no address of this machine, is named the same way."""
    try:
        infos = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except (OSError, UnicodeError) as e:
        return f"cannot resolve {host!r}: {e}"
    why = ""
    for family, kind, proto, _, addr in infos:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(addr)
                return None
            except OSError as e:
                why = why or (e.strerror or str(e))
    return f"cannot listen on {host_port(host, port)}: {why or 'no address'}"


async def start_server(
    referee: Referee,
    host: str = "127.0.0.1",
    port: int = 0,
    tls: TLSConfig | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Start a ``grpc.aio`` server for ``referee``; return it and the bound port.

    ``port=0`` picks a free port. With ``tls`` the port speaks TLS only. The server also
    serves ``grpc.health.v1.Health`` (``SERVING`` for "" and ``arena.v1.Arena``) and server
    reflection. Stop it with ``await server.stop(grace)``.
    """
    stopping = asyncio.Event()
    for f in (_BAD_METADATA_LOGGED, _CANCELLED_AT_STOP):
        logging.getLogger("grpc._cython.cygrpc").addFilter(f)  # (once)
    server = grpc.aio.server(options=_OPTIONS, interceptors=[_RefuseUnparsed(stopping)])
    pb_grpc.add_ArenaServicer_to_server(ArenaServicer(referee), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    # Its Watch calls stay open until their clients leave: they are ended with the bots'
    # streams (end_streams), or gRPC cancels them at stop and logs each as an unhandled
    # exception.

    async def end_open_calls() -> None:
        await health_servicer.enter_graceful_shutdown()
        stopping.set()

    referee.on_stop.append(end_open_calls)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    address = host_port(host, port)
    if tls is not None:
        key, cert = tls.load()
        bound = server.add_secure_port(address, grpc.ssl_server_credentials([(key, cert)]))
    else:
        bound = server.add_insecure_port(address)
    if not bound:
        raise OSError(f"cannot listen on {address}")
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    # Not logged here: its callers announce it (arena serve on stdout, the tournament in its
    # log), and both showed it twice with their logging turned up.
    return server, bound
