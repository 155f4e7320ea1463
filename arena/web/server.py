"""The HTTP side of ``arena web``: static pages and a read-only JSON API.

Pages (HTML shells in ``static/``, drawn by their scripts from the API)::

    /                          the leaderboard (polls the API while a tournament runs);
                               ?season=S: a season's standings, linking each tournament
    /bot/<name>                one bot: its matches, strikes, score-per-deal distribution
    /replay/<match_id>         the replay viewer; the hash holds the position:
                               #deal=3&step=17&seat=1 (seat absent: face up)

API (JSON)::

    GET /api/tournaments                       the tournaments in the database
    GET /api/leaderboard?tournament=T          rows, rating history, head-to-head, recent matches
    GET /api/season?season=S                   a season's (``arena leaderboard --season S``):
                                               rows, rating history, head-to-head, its
                                               tournaments (``weeks``), title and notes
    GET /api/bots/<name>?tournament=T&limit=N&before=I
                                               one bot's page; its matches newest first, N of
                                               them (1 to 1000, default 50) of a schedule index
                                               below I; ``next_before``: the I of the next page
                                               (null on the last), ``matches_total``: how many;
                                               its newest 50 strikes (``strikes_next_before``)
                                               and other incidents (``other_incidents_...``)
    GET /api/bots/<name>/strikes?tournament=T&limit=N&before=I
                                               its strikes newest first, N of them (default
                                               50), those of a match below I: as its matches
    GET /api/bots/<name>/other_incidents?tournament=T&limit=N&before=I
                                               its incidents that are no strike, likewise
    GET /api/matches?tournament=T&bot=B&limit=N&before=I
                                               match list, newest first (paged as above; no
                                               limit: all)
    GET /api/matches/<id>                      the replay summary (players, deals, result)
    GET /api/matches/<id>/record               the stored record, as is
    GET /api/matches/<id>/deals/<k>?seat=S     the steps of deal k, from 0 (seat absent: face up)

Every JSON answer of 200 carries an ``ETag`` and ``Cache-Control: no-cache`` (a client may
keep it, and asks again each time): a request whose ``If-None-Match`` names it is answered
``304 Not Modified``, with no body. The leaderboard's and a bot page's ETag comes from what
decides them (the tournament's stored state their cached parts were made for, and the rest),
so a 304 costs no serializing; the others' from their body.

The server never writes: the data source opens the database read-only.
"""

from __future__ import annotations

import contextlib
import email.errors
import gzip
import hashlib
import http.client
import ipaddress
import logging
import mimetypes
import re
import secrets
import socket
import sys
import threading
import time
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from arena import strict_json
from arena.addresses import address_key
from arena.leaderboard.season import SeasonError
from arena.render import printable
from arena.storage import StorageError
from arena.web.data import (
    BOT_PAGE,
    INCIDENT_LISTS,
    STRIKE_PAGE,
    DataSource,
    Document,
    HeldBack,
    NotFound,
)
from arena.web.replay import MatchReplay, ReplayCache, ReplayFailed

__all__ = ["STATIC_DIR", "WebServer", "address_key", "host_allowed", "make_server"]

log = logging.getLogger("arena.web")

STATIC_DIR = Path(__file__).with_name("static")
_STATIC_FILES = frozenset(p.name for p in STATIC_DIR.iterdir() if p.is_file())

_PAGES = {"": "index.html", "bot": "bot.html", "replay": "replay.html"}

#: The largest whole number an integer query parameter (``limit``, ``seat``) takes: a
#: larger one is the request's fault (a 400), not an integer SQLite cannot hold (a 500).
MAX_QUERY_INT = 1_000_000

#: The most matches one page of a bot's page lists (``limit`` of ``/api/bots/<name>``).
MAX_PAGE = 1000

#: Mixed into every ETag: a server started again (another version of the pages' documents,
#: say) answers no If-None-Match of the one before with 304.
_ETAG_SALT = secrets.token_hex(8)

#: An answer of the API at least this long is sent gzip-compressed to a client that
#: accepts it (every browser): a club's leaderboard (30 bots, 1,000 matches) was 249 KB of
#: JSON at each poll that found a match stored, 74 KB compressed; a season's 836 KB.
GZIP_FROM = 1024

#: Connections served at once (each holds a thread), in all and from one address. One
#: more is answered 503 at once: held open with half a request line, 300 connections
#: would take 300 threads (57 MB), with no end to it.
MAX_CONNECTIONS = 128
MAX_CONNECTIONS_PER_ADDRESS = 32

#: Requests of one address for matches (``/api/matches...``: a list, a replay, a deal's
#: steps, a record) answered at once; its others wait their turn. Each is work of its own
#: (a match replayed, a deal's steps for a seat, their JSON), taking CPU under one GIL, and
#: there is some for every match stored: 30 connections of one client asking for deals never
#: asked before kept every other spectator's least request waiting half a second (hostile
#: round 52). The leaderboard's, a season's and a bot's documents are not counted: they are
#: made once for all who ask (``data.py``), and one that takes seconds to make the first
#: time must not hold the turn of a client behind a proxy (one address) for them.
MAX_WORKING_PER_ADDRESS = 2

#: Seconds a request has to arrive whole (request line and headers), from the moment the
#: connection is ready for it (accepted, or the previous answer on it sent): a connection
#: whose request is not read by then is shut down. The handler's ``timeout`` is per
#: ``recv``: a request fed a byte every 25 s would never be cut off, and 128 of them would
#: keep every other client at 503 for as long as their sender liked.
REQUEST_DEADLINE = 10.0

#: The most bytes a request's headers take, all lines together (a browser sends a few
#: KiB): one more and the request is answered 431. http.server bounds each line (64 KiB)
#: and their number (100) only: 32 connections from one address holding 99 lines of 64 KB
#: would take the server from 47 to 330 MB, and four addresses fill all 128 slots.
MAX_HEADER_BYTES = 65536

#: The most characters of an error answer's text. Errors quote what was asked (a match id,
#: a tournament, a path, a request line), and a request may carry 64 KiB of it: a
#: 60,000-character ``?tournament=`` came back whole, a 60 KB "no tournament 'aaa…'".
MAX_ERROR_CHARS = 300

#: Headers of every answer. The pages load their scripts and styles from /static/ only;
#: their scripts set ``style`` attributes (a legend's swatch colour, the trump's size), so
#: inline style attributes are allowed, not inline ``<style>`` or scripts.
SECURITY_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    (
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; "
        "style-src-attr 'unsafe-inline'; img-src 'self'; object-src 'none'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
)

_BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n"
    + b"".join(f"{k}: {v}\r\n".encode() for k, v in SECURITY_HEADERS)
    + b"Content-Length: 45\r\nConnection: close\r\n\r\n"
    + b"too many connections at once: try again soon\n"
)


class _HeadReader:
    """A handler's ``rfile`` whose ``readline`` raises ``LineTooLong`` (which http.server
    answers 431) once the lines read since :meth:`limit` pass ``limit``'s bytes."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._left: int | None = None

    def limit(self, most: int | None) -> None:
        self._left = most

    def readline(self, size: int = -1) -> bytes:
        if self._left is None:
            return bytes(self._raw.readline(size))
        most = self._left + 1 if size < 0 else min(size, self._left + 1)
        line = bytes(self._raw.readline(most))
        self._left -= len(line)
        if self._left < 0:
            raise http.client.LineTooLong(f"headers over {MAX_HEADER_BYTES:,} bytes")
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class _Deadlines:
    """One thread for all connections: it shuts down the socket of a connection whose
    request has not arrived whole by its deadline (see ``REQUEST_DEADLINE``). The handler
    arms a connection's deadline before reading a request and disarms it once the request
    is read; :meth:`disarm` says whether it was in time."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[socket.socket, float] = {}
        self._cut: set[socket.socket] = set()
        self._closed = False
        self._thread: threading.Thread | None = None

    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._cond:
            if self._closed:
                return
            self._cut.discard(sock)
            self._due[sock] = time.monotonic() + seconds
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="arena-web-deadlines", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def was_cut(self, sock: socket.socket) -> bool:
        with self._cond:
            return sock in self._cut

    def disarm(self, sock: socket.socket) -> bool:
        """Forget ``sock``'s deadline: False if it had passed (the socket is shut down)."""
        with self._cond:
            if self._due.pop(sock, None) is not None:
                return True
            if sock in self._cut:
                self._cut.discard(sock)
                return False
            return True

    def pending(self) -> int:
        """Connections waiting for their request (tests)."""
        with self._cond:
            return len(self._due)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._due.clear()
            self._cut.clear()
            self._cond.notify()
            thread = self._thread
        if thread is not None:
            thread.join(5)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                for sock in [s for s, due in self._due.items() if due <= now]:
                    del self._due[sock]
                    self._cut.add(sock)
                    # (shutdown does not block; the handler's recv returns at once, and
                    # the handler, seeing the deadline passed, answers nothing)
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                soonest = min(self._due.values(), default=None)
                self._cond.wait(None if soonest is None else max(0.0, soonest - now))


class WebServer(ThreadingHTTPServer):
    """A threading HTTP server that carries the data source and the replay cache."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's backlog is 5: a burst of connections (a page's parallel requests, a
    # few viewers polling) overflowed it, and each connection past it waited for TCP to
    # resend its SYN (1 s, then 3 s, 7 s...). The per-address and total caps still apply.
    request_queue_size = 128

    def __init__(
        self, address: tuple[str, int], source: DataSource, allowed_hosts: Sequence[str] = ()
    ) -> None:
        address = (address[0].strip("[]"), address[1])  # `--host [::1]`, as in a URL
        if ":" in address[0]:  # an IPv6 address (`--host ::` listens on every address)
            self.address_family = socket.AF_INET6
        # Before binding: a bind that fails (a port in use) calls server_close, which closes
        # it (an AttributeError traceback hid the OSError).
        self.deadlines = _Deadlines()
        super().__init__(address, _Handler)
        self.source = source
        #: Host names served besides IP addresses and localhost (see :func:`host_allowed`).
        self.allowed_hosts = tuple(h.lower().rstrip(".") for h in allowed_hosts)
        self.replays = ReplayCache()
        self._open: dict[str, int] = {}  # connections being served, by address_key
        self._open_lock = threading.Lock()
        #: by address_key, while it has a connection open: see MAX_WORKING_PER_ADDRESS
        self._working: dict[str, threading.Semaphore] = {}

    def process_request(self, request: Any, client_address: Any) -> None:
        address = address_key(str(client_address[0]))
        with self._open_lock:
            served = self._open.get(address, 0)
            busy = served >= MAX_CONNECTIONS_PER_ADDRESS or (
                sum(self._open.values()) >= MAX_CONNECTIONS
            )
            if not busy:
                self._open[address] = served + 1
        if busy:  # (a fresh connection's send buffer takes these bytes without blocking)
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # (no thread started: its slot is not released there)
            self._release(address)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        # ThreadingMixIn's, but the slot is released before the connection is closed: a
        # client that saw its answer end and connected again found its old slot still
        # held now and then (a 503, or a count one too high).
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self._release(address_key(str(client_address[0])))
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed while its request was read: a client that reset it (or
        a deadline's cut) is no error of the server, and says one line at debug level;
        anything else is logged with its traceback. (socketserver would print a 20-line
        traceback to stderr for each: a client sending half a request and a reset would
        write them as fast as it could connect.)"""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.debug("%s: connection ended: %s", client_address[0], error)
        else:
            log.exception("error serving a request from %s", client_address[0])

    def _release(self, address: str) -> None:
        with self._open_lock:
            left = self._open.pop(address, 1) - 1
            if left:
                self._open[address] = left
            else:  # (no request of it is being answered: no thread holds its semaphore)
                self._working.pop(address, None)

    def working(self, client: str) -> threading.Semaphore:
        """What a request of ``client`` (an address) for matches holds while it is answered."""
        address = address_key(client)
        with self._open_lock:
            sem = self._working.get(address)
            if sem is None:
                sem = self._working[address] = threading.Semaphore(MAX_WORKING_PER_ADDRESS)
            return sem

    def without_path(self, message: str) -> str:
        """``message`` with the database's path shortened to its file name: an answer does
        not tell where the server's files are (the log, for the operator, does)."""
        db = self.source.db
        paths = {str(db), str(db.absolute()), str(db.resolve())} - {db.name}
        for path in sorted(paths, key=len, reverse=True):
            message = message.replace(path, db.name)
        return message

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def server_bind(self) -> None:
        # Every IPv6 address (`--host ::`) is IPv4's too, as the URL `arena web` hands out
        # is (the IPv4 address of the default route, `lan_address`): where an IPv6 socket
        # takes IPv6 alone unless told (net.ipv6.bindv6only=1, the BSDs, Windows) that URL
        # went unserved. (As http.server's own DualStackServer, and gRPC for `arena serve`;
        # a socket bound to one IPv6 address still takes that address alone.)
        if self.address_family == socket.AF_INET6:
            with contextlib.suppress(AttributeError, OSError):  # (a system with no IPv4)
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    @property
    def url(self) -> str:
        host = str(self.server_address[0])
        return f"http://[{host}]:{self.port}/" if ":" in host else f"http://{host}:{self.port}/"

    def server_close(self) -> None:
        super().server_close()
        self.deadlines.close()


def make_server(
    source: DataSource, host: str = "127.0.0.1", port: int = 0, allowed_hosts: Sequence[str] = ()
) -> WebServer:
    """Bind ``host:port`` (0 = a free port; read it back from ``server.port``).
    ``allowed_hosts``: host names the pages may be reached by, besides IP addresses and
    localhost (``"*"``: any); see :func:`host_allowed`."""
    return WebServer((host, port), source, allowed_hosts)


def host_allowed(header: str | None, allowed: Sequence[str] = ()) -> bool:
    """Whether a request's ``Host`` header may be served.

    A web page the browser loaded from another site can reach this server through DNS
    rebinding: its own host name is made to resolve to 127.0.0.1, so the browser's
    same-origin rule lets its scripts read the answers. Such a request carries that
    name in ``Host``. So a name is served only if it is ``localhost`` (or under
    ``.localhost``) or one of ``allowed`` (lower case; ``"*"`` allows every name); an IP
    address, which no rebinding can use, always is. A request without ``Host`` (HTTP/1.0;
    no browser sends one) is served.

    >>> host_allowed("127.0.0.1:8000"), host_allowed("[::1]:8000"), host_allowed("localhost")
    (True, True, True)
    >>> host_allowed("attacker.example:8000"), host_allowed("board.lan", ["board.lan"])
    (False, True)
    """
    if header is None:
        return True
    name = header.strip().lower()
    if "%" in name:  # an IPv6 zone (fe80::1%eth0) may name anything
        return "*" in allowed
    if name.startswith("["):  # [IPv6] or [IPv6]:port
        address, _, port = name[1:].partition("]")
        return _is_ip(address) and (not port or (port[0] == ":" and port[1:].isdigit()))
    if name.count(":") == 1:  # name:port (more colons: a bare IPv6 address)
        name = name.partition(":")[0]
    name = name.rstrip(".")
    if _is_ip(name) or name == "localhost" or name.endswith(".localhost"):
        return True
    return "*" in allowed or name in allowed


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class _HTTPError(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: WebServer
    server_version = "arena-web/1"
    #: What a request line that does not parse is taken for: http.server's HTTP/0.9 made
    #: the error reply a bare body, with no status line or headers.
    default_request_version = "HTTP/1.0"
    #: A socket operation (a recv, an answer's sendall) gives up after this long. A request
    #: must also arrive whole within ``REQUEST_DEADLINE`` (checked by the server's
    #: ``_Deadlines``): this bound is per recv.
    timeout = 60

    def version_string(self) -> str:  # the Server header: no Python version
        return self.server_version

    def log_message(self, format: str, *args: Any) -> None:
        # http.server's own escapes the control characters of what it logs; this one, which
        # sends it to ``logging`` instead, wrote the request line as it came: an escape
        # sequence in a path recoloured or cleared the operator's terminal (``-v``), a
        # carriage return began a line of the client's making, and 64 KiB came whole.
        shown = tuple(_for_log(a) if isinstance(a, str) else a for a in args)
        log.debug("%s %s", self.address_string(), format % shown)

    def handle_one_request(self) -> None:
        # The request (line and headers) must be read whole by the deadline; an idle
        # keep-alive connection is closed then too.
        self.server.deadlines.arm(self.connection, REQUEST_DEADLINE)
        try:
            super().handle_one_request()
        finally:
            self.server.deadlines.disarm(self.connection)

    def setup(self) -> None:
        super().setup()
        self.rfile = _HeadReader(self.rfile)  # type: ignore[assignment]

    def parse_request(self) -> bool:
        # A connection cut at its deadline has half a request at most: nothing is answered
        # (its socket is shut down) and nothing of it is served.
        if self.server.deadlines.was_cut(self.connection):
            self.close_connection = True
            return False
        reader = self.rfile
        if isinstance(reader, _HeadReader):  # the headers, read by super(), are bounded
            reader.limit(MAX_HEADER_BYTES)
        try:
            parsed = super().parse_request()
        finally:
            if isinstance(reader, _HeadReader):
                reader.limit(None)
        if not self.server.deadlines.disarm(self.connection):
            self.close_connection = True
            return False
        return parsed

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        # http.server reads the request line as Latin-1: raw UTF-8 bytes in it (a client
        # that does not percent-encode) came out as "Ã©" for "é". Read back as UTF-8, as
        # percent-encoded bytes are (what cannot be is replaced, and then not found).
        path = self.path.encode("latin-1").decode("utf-8", "replace")
        url = urlsplit(path)
        raw_parts = [p for p in url.path.split("/") if p]
        parts = [unquote(p) for p in raw_parts]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            if any(isinstance(d, _HEADER_LINE_DEFECTS) for d in self.headers.defects):
                # A line that is no header ("Host : name", white space before the colon,
                # which RFC 9112 refuses) ended the headers there: the request was served as
                # if it had none after it, Host among them, whatever name it held. (Only
                # those: the parser also finds "defects" in a multipart Content-Type with no
                # body, which a GET from a tool's form, Postman's, carries: it was a 400.)
                raise _HTTPError(
                    HTTPStatus.BAD_REQUEST,
                    "a header line does not parse: a header is a name, a colon right after "
                    "it (no white space between), then its value",
                )
            hosts = self.headers.get_all("Host") or []
            if len(hosts) > 1:
                # RFC 9112 (3.2): a 400. Only the first was checked, and a proxy in front
                # that reads the last would have let a rebound name through with it.
                raise _HTTPError(
                    HTTPStatus.BAD_REQUEST,
                    f"a request carries one Host header, not {len(hosts)}",
                )
            # A request target in absolute form (``GET http://name/path``) names the host
            # the request is for, and the Host header is then to be ignored (RFC 9112,
            # 3.2.2): it was served whatever it named, its Host header alone checked.
            host = url.netloc if url.netloc else (hosts[0] if hosts else None)
            if not host_allowed(host, self.server.allowed_hosts):
                raise _HTTPError(
                    HTTPStatus.FORBIDDEN,
                    f"this server does not answer to the host name {host!r:.80} (a guard "
                    "against DNS rebinding): reach it by IP address or localhost, or start "
                    "it with --allow-host NAME",
                )
            if parts[:2] == ["api", "matches"]:  # (work of its own for each: see working)
                with self.server.working(str(self.client_address[0])):
                    self._answer(self._api(parts[1:], query))
            elif parts and parts[0] == "api":
                self._answer(self._api(parts[1:], query))
            elif parts and parts[0] == "static" and len(parts) == 2:
                self._static(parts[1])
            elif not parts or (parts[0] in _PAGES and len(parts) == 2):
                if parts:
                    _check_page_name(raw_parts[1])
                self._static(_PAGES["" if not parts else parts[0]])
            elif parts == ["favicon.ico"]:
                self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
            else:
                raise _HTTPError(HTTPStatus.NOT_FOUND, f"no page {url.path}")
        except _HTTPError as e:
            self._error(e.status, str(e))
        except NotFound as e:
            self._error(HTTPStatus.NOT_FOUND, str(e))
        except HeldBack as e:
            self._error(HTTPStatus.FORBIDDEN, str(e))
        except (ReplayFailed, StorageError) as e:
            # The stored data is at fault, not the request: a damaged row, or a record
            # that does not replay. The message names it; no traceback.
            log.error("%s: %s", _for_log(self.path), e)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(e))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:  # one bad request must not stop the server
            # What the request may be at fault for is an _HTTPError (400) above: anything
            # else (a ValueError of a stored row, say) is the server's: a 500, not a 400.
            log.exception("error serving %s", _for_log(self.path))
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(e).__name__}: {e}")

    def _not_allowed(self) -> None:
        # Read-only: every other method is a JSON 405 (http.server would answer HTML 501).
        self._error(
            HTTPStatus.METHOD_NOT_ALLOWED,
            f"{self.command} is not allowed: this server only reads (GET, HEAD)",
            allow="GET, HEAD",
        )

    def __getattr__(self, name: str) -> Any:
        # http.server looks up do_<METHOD>: every method but GET and HEAD is a 405.
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (a request line too long, a malformed one) as JSON."""
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        self._error(status, message or status.phrase)

    # -- API ------------------------------------------------------------------------------

    def _api(self, parts: list[str], q: dict[str, str]) -> Any:
        src = self.server.source
        tournament = q.get("tournament") or None
        match parts:
            case ["tournaments"]:
                return src.tournaments()
            case ["leaderboard"]:
                return src.leaderboard(tournament)
            case ["season"]:
                spec = q.get("season", "")
                if not spec.replace(",", "").strip():
                    raise _HTTPError(
                        HTTPStatus.BAD_REQUEST,
                        f"season={spec!r:.60} names no tournament: give tournaments' ids, names "
                        "or the start of their names, comma-separated (season=club-w)",
                    )
                try:
                    return src.season(spec)
                except SeasonError as e:  # (tournaments of different rules)
                    raise _HTTPError(HTTPStatus.BAD_REQUEST, str(e)) from None
            case ["bots", name]:
                # (no "all": a bot's matches come a page at a time)
                limit = _int(q, "limit", least=1, most=MAX_PAGE, unset=("",))
                return src.bot(
                    name,
                    tournament,
                    limit=BOT_PAGE if limit is None else limit,
                    before=_int(q, "before"),
                    vs=_vs(q, name),
                )
            case ["bots", name, which] if which in INCIDENT_LISTS:  # strikes, other_incidents
                limit = _int(q, "limit", least=1, most=MAX_PAGE, unset=("",))
                return src.incidents(
                    name,
                    tournament,
                    which,
                    limit=STRIKE_PAGE if limit is None else limit,
                    before=_int(q, "before"),
                )
            case ["matches"]:
                bot = q.get("bot") or None
                return src.matches(
                    tournament,
                    bot=bot,
                    limit=_int(q, "limit"),
                    before=_int(q, "before"),
                    vs=_vs(q, bot),
                )
            case ["matches", ref]:
                match_id = src.match_id(_match_ref(ref))
                src.check_shown(match_id)
                replay = self._replay(match_id)
                return {**replay.summary, **src.match_info(match_id)}
            case ["matches", ref, "record"]:
                match_id = src.match_id(_match_ref(ref))
                src.check_shown(match_id)
                return src.record(match_id)
            case ["matches", ref, "deals", index]:
                match_id = src.match_id(_match_ref(ref))
                src.check_shown(match_id)
                replay = self._replay(match_id)
                k = _deal_index(index, len(replay.summary["deals"]))
                seat = _int(q, "seat")
                if seat is not None and seat >= replay.n:
                    raise _HTTPError(
                        HTTPStatus.BAD_REQUEST,
                        f"no seat {seat} in match {match_id}: its seats are 0 to {replay.n - 1}",
                    )
                return replay.deal(k, seat)
        raise _HTTPError(HTTPStatus.NOT_FOUND, "no such API endpoint: /api/" + "/".join(parts))

    def _replay(self, match_id: str) -> MatchReplay:
        src = self.server.source
        version = src.stored_version(match_id)
        return self.server.replays.get(match_id, lambda: src.record(match_id), version)

    # -- responses ------------------------------------------------------------------------

    def _static(self, name: str) -> None:
        # Only the files of static/, by name: no name from the request reaches the file
        # system (one with a NUL byte made resolve() raise: a 500 and a traceback).
        if name not in _STATIC_FILES:
            raise _HTTPError(HTTPStatus.NOT_FOUND, f"no file {name}")
        path = STATIC_DIR / name
        ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype.endswith("javascript"):
            ctype += "; charset=utf-8"
        self._send(HTTPStatus.OK, path.read_bytes(), ctype)

    def _answer(self, obj: Any) -> None:
        """A 200 of the API with its ETag, or 304 with no body when the request's
        If-None-Match names that ETag."""
        body = None
        if isinstance(obj, Document) and obj.state is not None:
            # what decides the answer, without serializing it (3 MB of JSON: 80 ms)
            digest = hashlib.sha256(f"{_ETAG_SALT}{obj.state!r}".encode()).hexdigest()
        else:
            body = _to_json(obj)
            digest = hashlib.sha256(_ETAG_SALT.encode() + body).hexdigest()
        # The compressed answer is another representation: another ETag (RFC 9110 8.8.3),
        # decided by the request's Accept-Encoding alone, so that a 304 needs no body.
        gz = _accepts_gzip(self.headers.get_all("Accept-Encoding"))
        etag = f'"{digest[:32]}{"-gz" if gz else ""}"'
        # (a list may come on several lines: one list, as if joined by commas, RFC 9110)
        asked = self.headers.get_all("If-None-Match")
        if asked and _etag_matches(", ".join(asked), etag):
            self._send(HTTPStatus.NOT_MODIFIED, b"", None, etag=etag)
            return
        body = _to_json(obj) if body is None else body
        gz = gz and len(body) >= GZIP_FROM
        if gz:
            body = gzip.compress(body, compresslevel=5, mtime=0)
        self._send(HTTPStatus.OK, body, "application/json; charset=utf-8", etag=etag,
                   encoding="gzip" if gz else None)  # fmt: skip

    def _json(self, status: HTTPStatus, obj: Any, allow: str | None = None) -> None:
        self._send(status, _to_json(obj), "application/json; charset=utf-8", allow)

    def _error(self, status: HTTPStatus, message: str, allow: str | None = None) -> None:
        message = self.server.without_path(message)
        if len(message) > MAX_ERROR_CHARS:
            message = message[: MAX_ERROR_CHARS - 1] + "…"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._json(status, {"error": message, "status": int(status)}, allow)

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        ctype: str | None,
        allow: str | None = None,
        *,
        etag: str | None = None,
        encoding: str | None = None,
    ) -> None:
        """``etag``: an answer of the API, which a client may keep and ask again for with
        If-None-Match (``no-cache``: "ask each time"); anything else is not to be kept.
        ``encoding``: the body's Content-Encoding (gzip)."""
        self.send_response(status)
        if allow is not None:
            self.send_header("Allow", allow)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        if encoding is not None:
            self.send_header("Content-Encoding", encoding)
        if etag is not None:  # (its body and its ETag depend on Accept-Encoding)
            self.send_header("Vary", "Accept-Encoding")
        if status != HTTPStatus.NOT_MODIFIED:  # (a 304's would be the 200's length)
            self.send_header("Content-Length", str(len(body)))
        if etag is not None:
            self.send_header("ETag", etag)
        self.send_header("Cache-Control", "no-store" if etag is None else "no-cache")
        for name, value in SECURITY_HEADERS:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


#: What :mod:`email`'s parser of the headers finds in a line that is no header: the
#: headers end there, and what follows is not read as headers.
_HEADER_LINE_DEFECTS = (
    email.errors.MissingHeaderBodySeparatorDefect,
    email.errors.FirstHeaderLineIsContinuationDefect,
    email.errors.MisplacedEnvelopeHeaderDefect,
)


def _vs(q: dict[str, str], bot: str | None) -> str | None:
    """The ``vs`` of a request for ``bot``'s matches: the opponent, or None. Refused (400)
    without a bot (``?vs=C`` alone was read as ``?bot=C``) and naming the bot itself (its
    every match was listed as "against" itself)."""
    vs = q.get("vs") or None
    if vs is not None and bot is None:
        raise _HTTPError(
            HTTPStatus.BAD_REQUEST,
            f"vs={vs!r:.60} lists a bot's matches against another: give the bot too (bot=B&vs=C)",
        )
    if vs is not None and vs == bot:
        raise _HTTPError(
            HTTPStatus.BAD_REQUEST,
            f"vs={vs!r:.60} names the bot itself: name another bot of the tournament",
        )
    return vs


def _for_log(text: str) -> str:
    """``text`` of a request (its line, its path) as the log shows it: cut to
    ``MAX_ERROR_CHARS``, then with what a terminal would obey written out (``\\x1b``).

    >>> _for_log('"GET /\\x1b[2J HTTP/1.0" 404 -')
    '"GET /\\\\x1b[2J HTTP/1.0" 404 -'
    """
    if len(text) > MAX_ERROR_CHARS:
        text = f"{text[:MAX_ERROR_CHARS]}… ({len(text) - MAX_ERROR_CHARS:,} more characters)"
    return printable(text)


def _to_json(obj: Any) -> bytes:
    # (strict: a duration changed by hand to 1e999 made every list of matches "Infinity",
    # which the pages' JSON.parse refused)
    return strict_json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def _accepts_gzip(headers: list[str] | None) -> bool:
    """Whether Accept-Encoding headers accept gzip (``gzip`` or ``x-gzip`` with no
    ``q=0``; ``*`` is not taken for it: a client that says so is rare and may mean less).

    >>> _accepts_gzip(["gzip, deflate, br"]), _accepts_gzip(["br", "GZip;q=0.5"])
    (True, True)
    >>> _accepts_gzip(["gzip;q=0"]), _accepts_gzip(["identity"]), _accepts_gzip(None)
    (False, False, False)
    """
    for item in ",".join(headers or ()).split(","):
        name, *params = item.split(";")
        if name.strip().lower() in ("gzip", "x-gzip"):
            qs = [p.strip()[2:] for p in params if p.strip().lower().startswith("q=")]
            try:
                return float(qs[0] if qs else 1) > 0
            except ValueError:
                return False
    return False


def _etag_matches(header: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names ``etag``: ``*`` (alone: RFC 9110 has no list
    with ``*``, and a 304 tells a client that sent one to use an answer it may not have),
    or a list of ETags compared weakly (``W/"x"`` names ``"x"``), as RFC 9110 says for
    If-None-Match.

    >>> _etag_matches('"a", W/"b"', '"b"'), _etag_matches("*", '"c"'), _etag_matches('"a"', '"c"')
    (True, True, False)
    >>> _etag_matches('"a", *', '"c"'), _etag_matches("W/*", '"c"')
    (False, False)
    """
    if header is None:
        return False
    tags = [t.strip() for t in header.split(",")]
    return tags == ["*"] or etag in (t.removeprefix("W/") for t in tags)


def _deal_index(text: str, count: int) -> int:
    """The ``<k>`` of ``/deals/<k>``: the deal's position in the match, from 0 (as the
    viewer's ``#deal=``), which the pages show as deal k+1. Anything else is the request's
    fault: a 400 saying what is expected, not Python's "invalid literal for int()"."""
    k = _whole(text, count - 1)
    if k is not None:
        return k
    if not count:
        raise _HTTPError(HTTPStatus.BAD_REQUEST, f"no deal {text!r:.60}: the match has no deal")
    raise _HTTPError(
        HTTPStatus.BAD_REQUEST,
        f"deal must be a whole number from 0 to {count - 1} (the deal's 0-based position "
        f"in the match), got {text!r:.60}",
    )


def _whole(text: str, most: int) -> int | None:
    """``text`` as a whole number from 0 to ``most``, else None. Digits only: int() also
    reads a sign, spaces, "1_0" and any Unicode digit ("١"), refuses over 4300 digits with
    a message of its own, and makes numbers SQLite cannot hold (an OverflowError)."""
    digits = text.lstrip("0") or "0"
    if text.isascii() and text.isdecimal() and len(digits) <= len(str(most)):
        n = int(digits)
        if n <= most:
            return n
    return None


def _check_page_name(raw: str) -> None:
    """Refuse the name of ``/bot/<name>`` or ``/replay/<id>`` (``raw``: as the URL has it)
    that a browser cannot decode: the page's script reads it with ``decodeURIComponent``,
    which throws on a ``%`` not followed by two hex digits and on bytes that are no UTF-8,
    and the page then stayed at "Loading…" for ever. (The API takes such a name, decoded
    leniently, and finds no bot or match of it: a 404.)"""
    try:
        if re.search("%(?![0-9A-Fa-f]{2})", raw) is None:
            unquote(raw, errors="strict")
            return
    except UnicodeDecodeError:
        pass
    raise _HTTPError(
        HTTPStatus.BAD_REQUEST,
        f"the name in this URL is not valid percent-encoded UTF-8: {raw!r:.60}",
    )


def _match_ref(ref: str) -> str:
    """A match id (or a suffix of one) from the path. A control character is refused: the
    lookup by suffix is a LIKE, and SQLite ends a LIKE pattern at a NUL (``/api/matches/%00``
    named every match)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in ref):
        raise _HTTPError(
            HTTPStatus.BAD_REQUEST, f"a match id has no control characters, got {ref!r:.60}"
        )
    return ref


def _int(
    q: dict[str, str],
    key: str,
    *,
    least: int = 0,
    most: int = MAX_QUERY_INT,
    unset: tuple[str, ...] = ("", "all", "none"),
) -> int | None:
    """An integer query parameter: a whole number from ``least`` to ``most`` (absent, or
    one of ``unset``: None). Anything else is a 400 saying what is expected."""
    v = q.get(key)
    if v is None or v in unset:
        return None
    n = _whole(v, most)
    if n is not None and n >= least:
        return n
    raise _HTTPError(
        HTTPStatus.BAD_REQUEST,
        f"{key} must be a whole number from {least} to {most}, got {v!r:.60}",
    )
