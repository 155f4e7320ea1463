"""``arena web``: serve the leaderboard and the replay viewer on localhost (read-only)."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from urllib.parse import quote

import click

from arena.cli.options import Host, HostName, NonEmptyPath, id_over_name_note, refuse_empty
from arena.render import printable
from arena.stopping import ignore_stop_signals, stop_signals

__all__ = ["web"]


@click.command("web")
@click.option(
    "--db",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="The tournament database (default: the newest runs/*.sqlite).",
)
@click.option("--host", type=Host(), default="127.0.0.1", show_default=True,
              help="Address to bind.")  # fmt: skip
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to bind (0: any free port).",
)
@click.option(
    "--tournament",
    default=None,
    help="Tournament id or name to show first (a name: the latest of that name, at each "
    "request; default: the latest).",
)
@click.option(
    "--season",
    default=None,
    metavar="ID|NAME|PREFIX,...",
    help="A season of tournaments (as `arena leaderboard --season` selects them): its "
    "standings at /?season=..., linked from every tournament's leaderboard.",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    type=HostName(),
    metavar="NAME",
    help="A host name the pages may be reached by (repeatable; '*': any). IP addresses "
    "and localhost always work; other names are refused, against DNS rebinding.",
)
@click.option("-v", "--verbose", is_flag=True, help="Log every request.")
def web(
    db: Path | None,
    host: str,
    port: int,
    tournament: str | None,
    season: str | None,
    allowed_hosts: tuple[str, ...],
    verbose: bool,
) -> None:
    """Serve the leaderboard, bot pages and replay viewer of a tournament database.

    The database is opened read-only, so this can run beside a running tournament: the
    leaderboard page refreshes itself while matches land.
    """
    from arena.leaderboard.season import SeasonError, check_one_game, select_season
    from arena.storage import ForeignDatabase, Storage, StorageError, newest_database
    from arena.web import DataSource, make_server

    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(message)s")
    refuse_empty(tournament, "--tournament", "a tournament's id or name")
    refuse_empty(season, "--season", "tournaments' ids, names or the start of their names")
    if db is None:
        db = newest_database()
        if db is None:
            raise click.UsageError("no database found in runs/: pass --db PATH")
    if not db.exists():
        raise click.BadParameter(f"no database at {db}", param_hint="--db")
    try:
        with Storage.open_readonly(db) as st:
            st.tournaments()  # a file that is no database fails here
            if tournament is not None:
                st.resolve_tournament(tournament)  # (refused now if there is none)
                note = id_over_name_note(tournament, st.named_too(tournament))
                if note is not None:  # (an id and another's name: said, not in silence)
                    click.echo(note, err=True)
            if season is not None:
                try:  # (selected again at each request: next week's is in it once stored)
                    # (the rules too: a selection of two games was served, and its page
                    # answered 400)
                    check_one_game(select_season(st, season))
                except SeasonError as e:
                    raise click.BadParameter(str(e), param_hint="--season") from None
        # The reference as given, resolved at each request: a name is the latest of that
        # name (a new run of `arena serve --db`), as ?tournament= takes it; an id stays.
        source = DataSource(db, tournament, season)
    except ForeignDatabase as e:  # (the file named is wrong, as `arena serve --db` says)
        raise click.BadParameter(str(e), param_hint="--db") from e
    except StorageError as e:
        raise click.ClickException(str(e)) from e
    except LookupError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="--tournament") from e
    try:
        server = make_server(source, host, port, allowed_hosts)
    except OSError as e:
        from arena.referee.server import host_port

        raise click.ClickException(f"cannot listen on {host_port(host, port)}: {e}") from e
    click.echo(printable(f"arena web: serving {db} at {server.url} (Ctrl+C to stop)"))
    if season is not None:
        click.echo(printable(f"season {season}: {server.url}?season={quote(season, safe=',')}"))
    from arena.addresses import is_every_address

    if is_every_address(host):  # (no browser elsewhere opens http://0.0.0.0:8000/)
        click.echo(printable(_shared_note(server.port)))
    _stop_on_signals()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        ignore_stop_signals()  # the exit is decided: a second signal must not cut it short
        server.server_close()


def _shared_note(port: int) -> str:
    """What to hand out when the pages are served on every address (``--host 0.0.0.0``):
    the wildcard URL printed above is no address a reader can open, and the pages have no
    password and no TLS (docs/web.md, "Sharing the pages")."""
    from arena.addresses import lan_address

    address = lan_address()
    where = (f"http://{address}:{port}/" if address is not None
             else f"http://THIS-MACHINE'S-ADDRESS:{port}/ (hostname -I)")  # fmt: skip
    return (
        f"every address of this machine: readers on the network open {where} (by a host "
        f"name only with --allow-host NAME), here http://localhost:{port}/; whoever reaches "
        "the port reads every stored tournament and match, with no password and in plain "
        "HTTP"
    )


def _stop_on_signals() -> None:
    """SIGTERM (``kill``, systemd, ``docker stop``) and a hang-up stop the server as Ctrl-C
    does, with exit code 0, as `arena serve` and `arena tournament` stop: their default
    actions killed it by the signal (exit 143), which supervisors count as a failure.
    Signals reach the main thread only: from another (a test's CLI runner) nothing to do."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    for sig in stop_signals():
        signal.signal(sig, stop)
