"""Addresses: who a client is, for the caps counted per client address (``arena web``'s
connections, the referee's calls that need no token), and what may be listened on. Kept
free of gRPC: the command line checks its options before it loads gRPC."""

from __future__ import annotations

import ipaddress
import unicodedata

__all__ = [
    "address_key",
    "host_problem",
    "is_every_address",
    "is_loopback_host",
    "lan_address",
    "non_ascii_problem",
]


def is_every_address(host: str) -> bool:
    """Whether a server listening on ``host`` listens on every address of this machine:
    the unspecified address, however written (an IPv6 one may come in brackets, as
    ``--host`` takes it), which is no address a client elsewhere connects to. Spelt
    otherwise than ``0.0.0.0`` or ``::`` (``[::]``, ``0:0::0``), the notes of what to hand
    out and that the pages have no password were left out.

    >>> [is_every_address(h) for h in ("0.0.0.0", "::", "[::]", "0:0:0:0:0:0:0:0")]
    [True, True, True, True]
    >>> [is_every_address(h) for h in ("127.0.0.1", "[::1]", "localhost", "192.0.2.7")]
    [False, False, False, False]
    """
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:  # a host name: one address (or a few), not every one
        return False


def lan_address() -> str | None:
    """This machine's address on its default route (IPv4), or None: a UDP socket
    "connected" to a documentation address sends nothing, and takes the address the
    system would send from. What to hand out of a server listening on every address
    (``0.0.0.0``), which is no address a client elsewhere connects to."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # (TEST-NET-1: no packet leaves)
            address = str(s.getsockname()[0])
    except OSError:  # (no network, no default route)
        return None
    return None if address.startswith(("127.", "0.")) else address


def address_key(host: str) -> str:
    """What a per-address cap counts a client by: its IP address, but every loopback
    address as one (127.0.0.2 is as local as 127.0.0.1: 4 x 32 connections from
    127.0.0.1..4 filled every slot) and an IPv6 address by its /64 (a host is given a
    whole /64 and picks addresses in it at will).

    >>> address_key("127.0.0.3") == address_key("::1") == address_key("::ffff:127.0.0.1")
    True
    >>> address_key("2001:db8::1"), address_key("::ffff:192.0.2.7"), address_key("192.0.2.7")
    ('2001:db8::/64', '192.0.2.7', '192.0.2.7')
    """
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
            host.partition("%")[0]
        )
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # an IPv4 client of a dual-stack server (--host ::)
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def is_loopback_host(host: str) -> bool:
    """Whether the host name or address ``host`` (an IPv6 address may come in brackets)
    is this machine's loopback, which no other machine reaches: ``localhost`` (any case,
    a final dot), a loopback address, an IPv4-mapped one too.

    >>> [is_loopback_host(h) for h in ("LocalHost.", "127.0.0.2", "[::1]", "::ffff:127.0.0.1")]
    [True, True, True, True]
    >>> [is_loopback_host(h) for h in ("0.0.0.0", "[::]", "arena.example", "192.0.2.7")]
    [False, False, False, False]
    """
    inner = host.strip("[]").lower().rstrip(".")
    if inner == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(inner)
    except ValueError:  # a host name: it may stand for any address
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        # ("::ffff:127.0.0.1": Python before 3.13 calls it no loopback, and gRPC connects
        # to 127.0.0.1 by it)
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def host_problem(host: str) -> str | None:
    """What makes ``host`` no address to listen on, or None (an IPv6 address may come in
    brackets). An empty one would listen on every address, without a word."""
    if not host.strip("[] "):
        return "must not be empty (0.0.0.0 or :: listen on every address)"
    if any(c.isspace() or not c.isprintable() for c in host):
        return f"an address has no spaces or control characters, got {_shown(host)}"
    non_ascii = non_ascii_problem(host)
    if non_ascii:
        return non_ascii
    inner = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if "[" in inner or "]" in inner or (inner != host and ":" not in inner):
        # (gRPC cannot parse "[::1" nor "[127.0.0.1]": its own log line "Unparsable name"
        # would come after the run started, naming neither option nor key)
        return f"brackets go around a whole IPv6 address only ([::1]), got {host!r}"
    name, colon, port = host.rpartition(":")
    if colon and ":" not in name and name.strip("[]") and port.isascii() and port.isdigit():
        # "127.0.0.1:80" was looked up as a host name: "cannot resolve ... (is the port
        # free ...?)", after the run had started
        return f"the address alone: the port is given apart (--port, or port), got {host!r}"
    if ":" in inner:
        # ("a:b", "::1::2": looked up as a host name after the run had started, "cannot
        # resolve", exit 1; a host name has no ':', so it is an IPv6 address or nothing)
        try:
            ipaddress.IPv6Address(inner)  # (with a zone, "fe80::1%eth0", too)
        except ValueError:
            return f"not an IPv6 address, and a host name has no ':', got {_shown(host)}"
    if len(inner) > _HOST_MAX:
        return (f"longer than any host name (at most {_HOST_MAX} characters), got "
                f"{_shown(host)}")  # fmt: skip
    return None


def non_ascii_problem(host: str) -> str | None:
    """What is wrong with a host name or address holding a character that is no ASCII, or
    None. Neither gRPC nor the resolver takes one ("misformatted domain name", retried as
    an unreachable arena; "cannot resolve" once the run had started): a look-alike, a
    Cyrillic 'о' in "lоcalhost" or full-width digits in "１２７.0.0.1", pasted from a
    chat or a document, is named by its code point.

    >>> print(non_ascii_problem("l\\u043ecalhost")[:57])
    a host is written in ASCII: 'lоcalhost' holds 'о' (U+043E
    >>> non_ascii_problem("localhost") is None
    True
    """
    for c in host:
        if not c.isascii():
            name = unicodedata.name(c, "")
            return (f"a host is written in ASCII: {_shown(host)} holds {c!r} "
                    f"(U+{ord(c):04X}{' ' + name if name else ''}; an internationalised "
                    "name is written in its xn-- form)")  # fmt: skip
    return None


#: The longest host name DNS has (RFC 1035: 255 octets on the wire, 253 written).
_HOST_MAX = 253


def _shown(host: str) -> str:
    """``host`` quoted for a message, cut past 60 characters."""
    return repr(host) if len(host) <= 60 else f"{host[:60]!r}... ({len(host):,} characters)"
