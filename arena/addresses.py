"""Who a client is, for the caps counted per client address (``arena web``'s connections,
the referee's calls that need no token)."""

from __future__ import annotations

import ipaddress

__all__ = ["address_key"]


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
