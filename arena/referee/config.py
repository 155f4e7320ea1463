"""The referee's settings."""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
import ssl
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from arena.addresses import is_loopback_host
from arena.deadlines import DEFAULT_TIME_BANK_MS, deadline_problem

__all__ = ["RefereeConfig", "TLSConfig", "pem_problem"]


#: The most strikes a seat may be allowed: every `DecisionRejected` carries the number as a
#: uint32, and a larger one would crash the match at its first strike.
MAX_STRIKES = 1_000_000


@dataclass(frozen=True, slots=True)
class RefereeConfig:
    """How strict and how patient the referee is.

    - ``decision_ms``: time for one decision before the time bank is drawn on.
    - ``time_bank_ms``: per seat and match; time a decision takes over ``decision_ms`` comes
      out of it. A decision is cut off at ``decision_ms`` + what is left of the bank.
    - ``join_timeout_s``: how long ``wait_for_bots`` / the lobby wait for bots by default.
    - ``max_strikes``: the seat forfeits at this many strikes (timeouts, illegal or
      malformed decisions) in one match.
    - ``reconnect_grace_s``: a seated bot whose stream closed may come back within this
      long; after it, it forfeits every match it is seated in.
    - ``record_dir``: when set, every match is written to ``<record_dir>/<match_id>.jsonl``
      as it is played, always to a new file (``.2.jsonl`` and so on if that one exists;
      see docs/referee.md).
    - ``max_wrong_recorded``: per seat and match, answers to requests that are not pending
      beyond this many are only counted (not recorded one by one, not answered); and per
      bot and ``flood_window_s``, answers for matches it has no seat in beyond this many
      are not answered.
    - ``flood_limit``: a bot that sends more than this many messages that answer no
      pending request within ``flood_window_s`` has its stream closed with
      RESOURCE_EXHAUSTED (counted per bot: reconnecting does not reset it). Such a message
      weighs 1 + its KiB; one that answers requests, its KiB past ``ANSWER_BYTES`` a
      decision (``arena.referee.core``).
    - ``reconnect_limit``: a bot that opens more than this many streams within
      ``flood_window_s`` has the next refused with RESOURCE_EXHAUSTED (every reconnect
      resends each of its seats' state).
    - ``max_queued``: a stream with more than this many messages waiting to be written (a
      bot that does not read: gRPC flow control holds the writes) is closed with
      RESOURCE_EXHAUSTED and its queue dropped, so a bot cannot grow the referee's memory.
    - ``max_disconnects_recorded``: per seat and match, disconnects beyond this many are
      only counted (``disconnects`` in the record), not recorded one by one: a bot that
      reconnects in a loop cannot grow the record without bound.
    - ``max_bot_errors_recorded``: per seat and match, decisions its client said failed
      (``Decision.failed``: ``bot_error`` incidents) beyond this many are only counted
      (``bot_errors`` in the record): a client may set it on every answer.
    - ``ask_forced``: ``None`` follows the ruleset's ``ask_forced``; ``True``/``False``
      overrides it (ask bots even for their only legal action, or never).
    """

    decision_ms: int = 1000
    time_bank_ms: int = DEFAULT_TIME_BANK_MS
    join_timeout_s: float = 30.0
    max_strikes: int = 3
    reconnect_grace_s: float = 5.0
    record_dir: Path | None = None
    ask_forced: bool | None = None
    max_wrong_recorded: int = 20
    flood_limit: int = 1000
    flood_window_s: float = 10.0
    reconnect_limit: int = 30
    max_queued: int = 1000
    max_disconnects_recorded: int = 20
    max_bot_errors_recorded: int = 20

    def __post_init__(self) -> None:
        for key, low in (("decision_ms", 1), ("time_bank_ms", 0)):
            problem = deadline_problem(getattr(self, key), low)
            if problem is not None:
                raise ValueError(f"{key} {problem}")
        if not 1 <= self.max_strikes <= MAX_STRIKES:
            raise ValueError(
                f"max_strikes must be between 1 and {MAX_STRIKES:,}, got {self.max_strikes}"
            )
        for key in ("max_queued", "flood_limit", "reconnect_limit"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key} must be at least 1, got {getattr(self, key)}")
        if self.reconnect_grace_s < 0:
            raise ValueError(
                f"reconnect_grace_s must not be negative, got {self.reconnect_grace_s}"
            )


@dataclass(frozen=True, slots=True)
class TLSConfig:
    """Server TLS: PEM certificate chain and private key files."""

    cert_file: Path
    key_file: Path

    def load(self) -> tuple[bytes, bytes]:
        """The (key, certificate chain) bytes, as ``grpc.ssl_server_credentials`` wants."""
        return Path(self.key_file).read_bytes(), Path(self.cert_file).read_bytes()


def key_pair_problem(cert: Path, key: Path) -> str | None:
    """Why the PEM files ``cert`` and ``key`` do not make a server identity (``None`` when
    they do): a key that is not the certificate's, say. gRPC would only fail to bind."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)

    def passphrase() -> str:
        # Without a callback OpenSSL asked for one on the terminal ("Enter PEM pass
        # phrase:", twice), and gRPC, which takes the key as it is, cannot be given one.
        raise _Encrypted

    try:
        ctx.load_cert_chain(str(cert), str(key), password=passphrase)
    except _Encrypted:
        return (
            f"the private key in {key} is encrypted (it asks for a passphrase, which gRPC "
            "cannot be given): write it decrypted, `openssl pkey -in "
            f"{shlex.quote(str(key))} -out arena.key`, readable by you only (`chmod 600 "
            "arena.key`)"
        )
    except ssl.SSLError as e:
        # (a key of another type than the certificate's, EC for RSA: "no certificate assigned")
        if any(w in str(e) for w in _MISMATCH):
            return f"the private key in {key} is not the key of the certificate in {cert}"
        return f"{cert} and {key} are not a usable certificate and key: {e.reason or e}"
    except OSError as e:
        return f"cannot read {cert} or {key}: {e.strerror or e}"
    return None


class _Encrypted(Exception):
    """Raised by :func:`key_pair_problem`'s passphrase callback: the key is encrypted."""


#: OpenSSL's words for a private key that is not the certificate's.
_MISMATCH = ("KEY_VALUES_MISMATCH", "key values mismatch", "NO_CERTIFICATE_ASSIGNED")


def _decoded_cert(cert: Path) -> dict[str, object] | None:
    """The first certificate in the PEM file ``cert`` as :mod:`ssl` decodes a peer's, or
    ``None`` when it cannot be read so (the check it serves is then skipped: gRPC's
    handshake stays the judge)."""
    # (CPython's decoder of a certificate file; SSLContext.get_ca_certs, the public one,
    # leaves out a certificate that is no CA, as one a public authority signed is)
    decode = getattr(getattr(ssl, "_ssl", None), "_test_decode_cert", None)
    if decode is None:
        return None
    try:
        decoded = decode(str(cert))
    except (ssl.SSLError, OSError, ValueError, TypeError):
        return None
    return decoded if isinstance(decoded, dict) else None


def cert_names(cert: Path) -> list[str] | None:
    """The host names and addresses the certificate in ``cert`` is for (its
    subjectAltName, else its common name), or ``None`` when they cannot be read."""
    decoded = _decoded_cert(cert)
    if decoded is None:
        return None
    alt = decoded.get("subjectAltName") or ()
    # (an IPv6 address as clients spell it, "::1", not as ssl decodes it, "0:0:0:0:0:0:0:1":
    # the names are shown to the organiser and the remote bots to connect by)
    names = [
        _canonical_host(str(v)) if k == "IP Address" else str(v)
        for k, v in alt  # type: ignore[attr-defined]
        if k in ("DNS", "IP Address")
    ]
    if not names:  # (clients ignore the common name once there is a subjectAltName)
        for rdn in decoded.get("subject") or ():  # type: ignore[attr-defined]
            names += [str(v) for k, v in rdn if k == "commonName"]
    return names


def cert_expired_problem(cert: Path) -> str | None:
    """Why no bot can pass the TLS handshake with the certificate in ``cert``: it has
    expired (``None`` when it has not, or its dates cannot be read). gRPC serves it
    anyway, and each bot only hears that its handshake failed."""
    decoded = _decoded_cert(cert)
    not_after = None if decoded is None else decoded.get("notAfter")
    if not isinstance(not_after, str):
        return None
    try:
        ends = ssl.cert_time_to_seconds(not_after)
    except ValueError:
        return None
    if ends > time.time():
        return None
    return (f"the certificate in {cert} expired on {not_after}: every bot's TLS handshake "
            "would fail; renew it (make a new one)")  # fmt: skip


def name_in_cert(name: str, names: list[str]) -> bool:
    """Whether a client connecting to host ``name`` finds it among the certificate's
    ``names`` (a ``*.`` wildcard stands for one leftmost label, as TLS clients take it)."""
    host = _canonical_host(name)
    for n in map(_canonical_host, names):
        if n == host:
            return True
        if n.startswith("*.") and "." in host and host.split(".", 1)[1] == n[2:]:
            return True
    return False


def _canonical_host(name: str) -> str:
    """``name`` compared as clients do: an IP address in its one spelling, a host name in
    lower case, without brackets or a final dot."""
    name = name.strip("[]").lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def loopback_only_note(cert: Path, host: str) -> str | None:
    """What an arena listening on ``host`` beyond loopback says at its start when the
    certificate in ``cert`` lists loopback names only (the docs' test certificate lists
    ``localhost``): a bot on another machine connects by none of them, so its handshake
    fails, and all the arena sees is that nobody came. ``None`` otherwise."""
    names = cert_names(cert)
    if is_loopback_host(host) or not names or not all(is_loopback_host(n) for n in names):
        return None
    return (f"note: the certificate in {cert} lists only {', '.join(names)}: a bot on another "
            "machine must connect by a name the certificate lists, and fails its TLS "
            "handshake by any other; make one that lists this machine's host name or "
            "address (subjectAltName=DNS:NAME,IP:ADDRESS)")  # fmt: skip


def names_not_reaching(names: list[str], host: str) -> list[str]:
    """The names of ``names`` (a certificate's) by which no bot reaches an arena listening
    on the one address ``host``: another IP address, and ``localhost`` (127.0.0.1 and ::1)
    unless it is one of those. Nothing for a host name, or every address (``0.0.0.0``),
    and a certificate's host names other than ``localhost`` are kept (they may resolve to
    ``host``). An arena on ``--host 192.0.2.2`` named ``localhost`` first among the names
    to connect by, and a bot on its machine given it met "connection refused".

    >>> names_not_reaching(["localhost", "arena.example", "192.0.2.2"], "192.0.2.2")
    ['localhost']
    >>> names_not_reaching(["localhost", "127.0.0.1", "192.0.2.2"], "127.0.0.2")
    ['localhost', '127.0.0.1', '192.0.2.2']
    >>> names_not_reaching(["localhost", "192.0.2.2"], "0.0.0.0"), names_not_reaching(
    ...     ["LocalHost.", "[::1]"], "[::1]")
    ([], [])
    """
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return []
    if ip.is_unspecified:
        return []
    away = []
    for name in names:
        inner = name.strip("[]").lower().rstrip(".")
        if inner == "localhost":
            if str(ip) not in ("127.0.0.1", "::1"):
                away.append(name)
            continue
        try:
            if ipaddress.ip_address(inner) != ip:
                away.append(name)
        except ValueError:
            continue
    return away


#: The largest PEM file read: a CA bundle of every public root takes about 200 KiB.
MAX_PEM_BYTES = 16 << 20

#: What a PEM file of each kind must hold (``pem_problem``).
PEM_MARKERS = {"certificate": b"-----BEGIN CERTIFICATE-----", "private key": b"PRIVATE KEY-----"}


def pem_problem(path: Path, what: str = "file") -> str | None:
    """Why ``path`` is not a readable PEM ``what`` (``None`` when it is one).

    Checked before gRPC sees the file: gRPC itself only fails to bind or to connect,
    without saying that the file was the cause.
    """
    marker = PEM_MARKERS.get(what, b"-----BEGIN ")
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the reader
            return f"{path} is not a regular file (a PEM {what} is one)"
        if st.st_size > MAX_PEM_BYTES:  # read whole: a MemoryError traceback, or GBs read
            return (f"{path} is too large for a PEM {what}: {st.st_size:,} bytes (at most "
                    f"{MAX_PEM_BYTES:,})")  # fmt: skip
        data = path.read_bytes()
    except OSError as e:
        return f"cannot read {path}: {e.strerror or e}"
    except ValueError:  # a NUL byte in the path
        return f"cannot read {path!r}: the path holds a NUL byte"
    if marker in data:
        for begin in re.finditer(rb"-----BEGIN ([A-Z0-9 ]{1,64})-----", data):
            if b"-----END " + begin.group(1) + b"-----" not in data[begin.end() :]:
                # (OpenSSL said only "PEM lib (_ssl.c:3905)" of it)
                label = begin.group(1).decode()
                return f"{path} is cut short: its BEGIN {label} has no END {label} line"
        return None
    swapped = {"certificate": b"PRIVATE KEY-----", "private key": b"-----BEGIN CERTIFICATE-----"}
    if what in swapped and swapped[what] in data:
        other = "private key" if what == "certificate" else "certificate"
        return f"{path} is not a PEM {what} but a {other}: are the two files swapped?"
    return f"{path} is not a PEM {what}"
