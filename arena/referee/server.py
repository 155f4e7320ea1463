"""Starting the referee's gRPC server: the Arena service, health checking, reflection."""

from __future__ import annotations

import logging

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.referee.config import TLSConfig
from arena.referee.core import Referee
from arena.referee.servicer import ArenaServicer
from arena.v1 import arena_pb2 as pb

__all__ = ["SERVICE_NAME", "start_server"]

log = logging.getLogger("arena.referee")

SERVICE_NAME: str = pb.DESCRIPTOR.services_by_name["Arena"].full_name

# Bots answer within a second; keep idle streams alive through NATs and notice dead peers.
_OPTIONS = [
    # A bot whose connection died silently is noticed within about 15 s (a disconnect:
    # its grace period starts).
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.max_receive_message_length", 1 << 20),
]


def _parse_info_request(data: bytes) -> pb.GetInfoRequest | None:
    """GetInfo's request, or ``None`` when the bytes do not parse (the servicer answers
    INVALID_ARGUMENT; gRPC itself would log a traceback and answer UNKNOWN)."""
    try:
        return pb.GetInfoRequest.FromString(data)
    except DecodeError:
        return None


def _add_arena_service(servicer: ArenaServicer, server: grpc.aio.Server) -> None:
    """``arena_pb2_grpc.add_ArenaServicer_to_server``, but for GetInfo's deserializer."""
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=pb.BotMessage.FromString,
            response_serializer=pb.ServerMessage.SerializeToString,
        ),
        "GetInfo": grpc.unary_unary_rpc_method_handler(
            servicer.GetInfo,
            request_deserializer=_parse_info_request,
            response_serializer=pb.ServerInfo.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC and the SDK take it: an IPv6 address in brackets.

    >>> host_port("127.0.0.1", 80), host_port("::1", 80), host_port("[::1]", 80)
    ('127.0.0.1:80', '[::1]:80', '[::1]:80')
    """
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


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
    server = grpc.aio.server(options=_OPTIONS)
    _add_arena_service(ArenaServicer(referee), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
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
    log.info("referee listening on %s%s", host_port(host, bound), " (TLS)" if tls else "")
    return server, bound
