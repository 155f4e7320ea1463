"""``arena leaderboard``: print or export the leaderboard of a stored tournament again."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from arena.cli.options import (
    NonEmptyPath,
    flush_or_drop_stdout,
    hang_up_safe,
    id_over_name_note,
    reading_newest,
    refuse_empty,
)
from arena.leaderboard import (
    FORMATS,
    build_leaderboard,
    render,
    to_rich_table,
    to_screen,
    write_outputs,
)
from arena.leaderboard.season import build_season, select_season
from arena.render import fitted, printable
from arena.storage import (
    ForeignDatabase,
    Storage,
    StorageError,
    file_in_the_way,
    holds_database,
    lock_owner,
    newest_database,
    sidecars,
    state_of,
)
from arena.tournament.config import (
    ConfigError,
    bot_logs,
    identity_changes,
    load_config,
    stored_where,
)
from arena.tournament.runner import as_stored

__all__ = ["leaderboard"]


def _shown(text: str) -> str:
    """``text`` (a path the user named) for ``err.print``: rich markup and the escape
    sequences a terminal would obey written out (an --out named '\\x1b]0;...' set the
    window's title as "wrote" quoted it)."""
    return escape(printable(text))


@click.command("leaderboard")
@click.option("--db", type=NonEmptyPath(dir_okay=False, path_type=Path),
              help="SQLite database (default: the config's, else the newest runs/*.sqlite, "
                   "as `arena replay` and `arena web` take).")  # fmt: skip
@click.option("--config", "config_path", type=NonEmptyPath(dir_okay=False, path_type=Path),
              help="Take the database and tournament id from this tournament config.")  # fmt: skip
@click.option("--tournament", "tournament_id", help="Tournament id or name (default: the latest).")
@click.option(
    "--format", "fmt", type=click.Choice(["table", *FORMATS, "all"]), default=None,
    help="table: on screen; all: every file format into --out. [default: the extension of "
         "an --out file (.json, .csv, .md, .html), else table]",
)  # fmt: skip
@click.option("--out", "out_given", type=NonEmptyPath(path_type=str),
              help="Output file (or directory for --format all). Default: stdout.")  # fmt: skip
@click.option("--list", "list_only", is_flag=True, help="List the stored tournaments.")
@click.option("--season", metavar="ID|NAME|PREFIX,...",
              help="Rate the matches of several tournaments together, in the order they "
                   "were played: each item a tournament's id, else every one of that name, "
                   "else every one whose name starts with it (club-w: club-w1, ...).")  # fmt: skip
def leaderboard(
    db: Path | None,
    config_path: Path | None,
    tournament_id: str | None,
    fmt: str | None,
    out_given: str | None,
    list_only: bool,
    season: str | None,
) -> None:
    """Print or export the leaderboard of a stored tournament, or of a season of them."""
    out = None if out_given is None else Path(out_given)
    # `--out results/`: a directory, made if missing, as one that exists is taken (a Path
    # drops the slash: a file named `results` was written, or one of that name replaced).
    as_dir = out_given is not None and out_given.endswith(("/", os.sep))
    # soft_wrap: a path or a command in a message stays on one line, whole, to be copied
    err = Console(stderr=True, soft_wrap=True)
    try:
        is_dir = as_dir or (out is not None and out.is_dir())
    except OSError:  # (a name too long, say: the write below says so, as --out's)
        is_dir = False
    ext = out.suffix.lower().lstrip(".") if out is not None and not is_dir else ""
    if fmt is None:  # (else `--out standings.html` would get the text table)
        fmt = ext if ext in FORMATS else "table"
    elif fmt == "all" and ext in FORMATS and out is not None:
        # (it made a directory named `x.json` and wrote the four files into it)
        raise click.UsageError(
            f"--format all writes four files into a directory, and --out {out} names a .{ext} "
            f"file: give a directory (--out {out.with_suffix('')}/), or --format {ext}"
        )
    elif fmt != "all" and ext in FORMATS and ext != fmt:
        # (`--format csv --out results.json` wrote CSV into a .json file: its reader failed)
        raise click.UsageError(
            f"--format {fmt} and --out {out} (a .{ext} file) disagree: give one of them "
            "(the --out file's extension chooses its format)"
        )
    given = tournament_id  # (--tournament as given: a config's id is no name)
    refuse_empty(tournament_id, "--tournament", "a tournament's id or name")
    if list_only and (out is not None or fmt != "table" or tournament_id is not None):
        raise click.UsageError("--list prints the stored tournaments on screen: not with "
                               "--format, --out or --tournament")  # fmt: skip
    refuse_empty(season, "--season", "tournaments' ids, names or the start of their names")
    if season is not None and (list_only or tournament_id is not None or config_path is not None):
        # (one tournament's options: a season is chosen by --season alone, in --db's database)
        raise click.UsageError("--season selects the tournaments: not with --tournament, "
                               "--config or --list")  # fmt: skip
    if fmt == "all" and out is None:
        raise click.UsageError(
            "--format all writes one file per format: name a directory with --out"
        )
    # With --config: that config's tournament if it is stored, else the latest of its name
    # (the config's bots, ruleset or deadlines changed since, or a bot's secret token is
    # not in this shell: neither says where the results are).
    # A --tournament given on the command line is taken as it is (an unknown one is an
    # error), not replaced by the config's latest.
    latest_of: str | None = None
    unloadable = ""  # why the config does not load now, if it does not
    identity: dict[str, Any] | None = None  # the loaded config's (to say what changed)
    fingerprint: str | None = None  # the loaded config's (a fixed `id` may hold another's)
    if config_path is not None:
        try:
            cfg_db, of_config = stored_where(config_path)
        except ConfigError as e:
            raise click.UsageError(str(e)) from e
        db = db or cfg_db
        if tournament_id is None:
            latest_of = of_config
            try:
                identity = (loaded := as_stored(load_config(config_path))).identity()
                tournament_id, fingerprint = loaded.tournament_id, loaded.fingerprint
            except ConfigError as e:  # (its tournament is not known: its latest is shown)
                unloadable = str(e)
    if db is None:
        db = newest_database()
        if db is None:  # (not "no database at runs/default.sqlite": no file was meant)
            raise click.UsageError(
                "no database found in runs/ (run `arena tournament` first, or pass --db)"
            )
        err.print(escape(reading_newest(db)))
    if not db.exists():
        raise click.UsageError(f"no database at {db} (run `arena tournament` first, or --db)")
    try:
        with Storage.open_readonly(db) as st:
            if list_only:
                t = Table(title=Text(f"tournaments in {db}"))
                for c in ("id", "name", "matches", "created", "finished"):
                    t.add_column(c)
                owner = lock_owner(db)
                for info in st.tournaments():
                    # (written out, as the leaderboard's names: see to_rich_table; an
                    # unfinished one said "running" or "stopped", as `arena web` says it)
                    t.add_row(Text(printable(info.id)), Text(printable(info.name)),
                              f"{info.completed}/{info.total_matches}" if info.total_matches > 0
                              else f"{info.completed}/–",
                              Text(info.created_at),
                              Text(info.finished_at or state_of(info, owner)))  # fmt: skip
                stdout_console().print(fitted(t))
                return
            if season is not None:
                lb = build_season(st, season, select_season(st, season))
            else:
                try:
                    tid = st.resolve_tournament(tournament_id or latest_of)
                    if given is not None:  # (an id and another's name: said, not in silence)
                        note = id_over_name_note(given, st.named_too(given))
                        if note is not None:
                            err.print(escape(note))
                    shown = st.tournament(tid) if fingerprint is not None else None
                    if shown is not None and shown.fingerprint != fingerprint:
                        # A fixed `id` names its tournament whatever the config says now: one
                        # edited since it ran showed the stored results with no word that they
                        # are not the config's (`arena tournament` refuses to resume them).
                        stored = shown.config if isinstance(shown.config, dict) else {}
                        changes = identity_changes(stored, identity or {}) or ["its settings"]
                        err.print(escape(f"tournament {tid} was played with another config than "
                                         f"{config_path} now has ({'; '.join(changes)}): "
                                         "showing it as it was played"))  # fmt: skip
                except LookupError:
                    if latest_of is None or tournament_id == latest_of:
                        raise
                    tid = st.resolve_tournament(latest_of)
                    # What changed, as `arena tournament` says it (a bot's code, not the file,
                    # is often what did: "the config changed" sent the reader to the file).
                    shown = st.tournament(tid)
                    # (a config stored by `arena tournament`, whole: not a hand-made row's)
                    stored = shown.config if shown is not None else {}
                    whole = {"bots", "schedule"} <= stored.keys()
                    changes = identity_changes(stored, identity) if whole and identity else []
                    why = (
                        f"changed since {tid} ran: {'; '.join(changes)}"
                        if changes
                        else "the config changed since it ran"
                    )
                    err.print(escape(f"{tournament_id} is not stored ({why}): "
                                     f"showing {tid}, the latest named {latest_of}"))  # fmt: skip
                if unloadable:  # said, not silently replaced by the latest of its name
                    # (a config's fixed `id` names its tournament, whose name is another)
                    shown = st.tournament(tid)
                    by_id = shown is not None and shown.name != latest_of
                    which = "its id" if by_id else f"the latest tournament named {latest_of}"
                    err.print(escape(f"the config does not load now ({unloadable}): showing {tid}, "
                                     f"{which}"))  # fmt: skip
                lb = build_leaderboard(st, tid)
    except LookupError as e:
        why = str(e.args[0] if e.args else e)
        if latest_of is not None:  # the config chose the tournament: it is the one at fault
            why = f"--config {config_path}: {why}"
            if unloadable:  # (the usual reason: a config that is not the tournament's)
                why += f"; the config does not load now: {unloadable}"
        raise click.UsageError(why) from e
    except StorageError as e:
        err.print(f"[red]error:[/] {_shown(str(e))}")
        sys.exit(2 if isinstance(e, ForeignDatabase) else 1)  # (the file named is wrong)

    if fmt != "table" or out is not None:  # (the screen's table says them in its caption)
        for note in lb.notes:
            err.print(f"note: {_shown(note)}")
    if fmt == "table" and out is None:
        screen = stdout_console()
        screen.print(to_screen(lb, screen.width))
        return
    if out is None and fmt != "all":
        click.echo(render(lb, fmt), nl=False)
        return
    target = out
    assert target is not None  # (stdout and `all` without --out are handled above)
    # (the database's -wal too: written over, the matches it held and the database had not
    # yet taken in were lost, every match of a run killed -9)
    kept = {db: "the database", config_path: "the config"}
    kept.update({f: f"the {what} of the database" for f, what in sidecars(db).items()})
    if config_path is not None:
        # (`--out out/cup/logs/mine.log`, completed by the shell: the bot's log, which says
        # why it crashed, replaced by a table; the bots shown too: one that crashed may have
        # been taken out of the config since)
        try:
            logs = bot_logs(config_path, also=[row.bot for row in lb.rows])
        except ConfigError:  # (an `out` no run could use: it wrote no log)
            logs = {}
        kept.update({log: f"bot {bot}'s log" for log, bot in logs.items() if log.is_file()})
    files = [target / f"leaderboard.{f}" for f in (*FORMATS, "txt")] + [target]
    for path, name in kept.items():
        if path is not None and any(os.path.realpath(f) == os.path.realpath(path) for f in files):
            raise click.UsageError(f"--out {target} would write over {name} ({path})")
    # (target, or the leaderboard.<ext> files of the directory target; `cup.toml/` names a
    # directory to make, which the file in the way refuses below)
    for file in files[:-1] if as_dir else files:
        other = _no_leaderboard(file)
        if other is not None:
            raise click.UsageError(
                f"--out {target} would write over {other}: the leaderboard is written as "
                ".txt, .json, .csv, .md or .html; name another file"
            )
    try:
        if fmt == "table":  # the screen's table as plain text
            if as_dir or target.is_dir():
                target = target / "leaderboard.txt"
            target.parent.mkdir(parents=True, exist_ok=True)
            buffer = io.StringIO()
            Console(file=buffer, width=130, color_system=None).print(to_rich_table(lb, 130))
            _write_whole(target, buffer.getvalue())
            err.print(f"wrote {_shown(str(target))}")
        elif fmt == "all":
            paths = write_outputs(lb, target)
            err.print("wrote " + _shown(", ".join(str(p) for p in paths.values())))
        elif as_dir or target.is_dir():
            paths = write_outputs(lb, target, (fmt,))
            err.print(f"wrote {_shown(str(paths[fmt]))}")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_whole(target, render(lb, fmt))
            err.print(f"wrote {_shown(str(target))}")
    except OSError as e:
        where = e.filename if e.filename is not None else target
        reason = e.strerror or str(e)
        blocker = file_in_the_way(Path(where))
        if isinstance(e, (FileExistsError, NotADirectoryError)) and blocker is not None:
            # (mkdir says "File exists" of a file where a directory is wanted)
            where, reason = blocker, "a file, not a directory"
        elif isinstance(e, FileNotFoundError) and Path(where).is_symlink():
            # (a link to a file in a directory that is not there: "No such file or
            # directory" of the link, which is there)
            reason = f"a symbolic link to {os.readlink(where)!r}, whose directory is not there"
        elif isinstance(e, FileNotFoundError) and Path(where).parent.is_dir():
            # (/proc, /sys: "No such file or directory" of /proc/version, which is there,
            # or of a file to be made in a directory that is there. A file is written
            # whole through a new one beside it, which such a directory refuses.)
            reason = f"{Path(where).parent} takes no new file ({reason}, though it is there)"
        why = _shown(f"--out {target}: cannot write {where}: {reason}")
        err.print(f"[red]error:[/] {why}")
        sys.exit(1)


#: The files an organiser writes by hand, by extension, which no leaderboard format is:
#: an existing one is not written over by ``--out``.
_HAND_WRITTEN = {".toml": "a TOML file (a config, ruleset or tokens file)", ".py": "a Python file"}


def _no_leaderboard(path: Path) -> str | None:
    """What the existing file ``path`` is, in words, when it is one ``--out`` must not write
    over, being no leaderboard: a config, ruleset or tokens file or a bot's code that no
    ``--config`` named (``--out tournaments/cup.toml``, completed by the shell, replaced the
    config with a table, exit 0), or another tournament's database (``--out
    runs/club.sqlite``: every match of it lost). A link is judged by the file it names (a
    link is written through: ``latest.txt`` naming ``cup.toml`` replaced the config)."""
    try:
        real = Path(os.path.realpath(path))
        if not real.is_file():
            return None
    except (OSError, ValueError):
        return None
    kind = _HAND_WRITTEN.get(real.suffix.lower()) or _HAND_WRITTEN.get(path.suffix.lower())
    if kind is None and holds_database(real):
        kind = "an SQLite database (a tournament's)"
    if kind is None:
        return None
    linked = f" ({path} links to {real})" if path.is_symlink() else ""
    return f"{kind}{linked}"


def _write_whole(target: Path, text: str) -> None:
    """Write ``text`` into the file ``target`` whole or not at all, as the `--format all`
    files are: into a temporary file beside it, then renamed over it. Written in place, a
    full disk left the earlier leaderboard there cut to what fitted (an empty file, a JSON
    cut in the middle), exit 1. A target that is no regular file (a FIFO, `/dev/stdout`)
    or a link (renaming would replace the link) is written in place, as before; a file its
    owner may not write is refused, as before (renaming would replace it)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        target.write_text(text, encoding="utf-8")
        return
    if mode is not None and not os.access(target, os.W_OK):  # (renaming would replace it)
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        try:
            tmp.write_text(text, encoding="utf-8")
        except PermissionError:
            if mode is None:
                raise
            # A file its user may write in a directory he may not add to: in place, as before.
            target.write_text(text, encoding="utf-8")
            return
        if mode is not None:  # (a file made private by its owner stays so)
            os.chmod(tmp, stat.S_IMODE(mode))
        tmp.replace(target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError) and e.filename == str(tmp):  # (the name the user gave)
            raise OSError(e.errno, e.strerror, str(target)) from e
        raise


class _Screen(Console):
    """rich's console, but for a closed pipe: rich points stdout at /dev/null and raises
    SystemExit(1) from inside ``print``, which ended ``arena tournament | head -3`` before
    its leaderboard files were written. The same pointing at /dev/null (Python's last flush
    at exit would fail on what is left in its buffer), then an error its caller can catch;
    uncaught, click's own handling of it exits 1 quietly, as before."""

    def on_broken_pipe(self) -> None:
        if self.quiet:
            return
        flush_or_drop_stdout()
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def stdout_console() -> Console:
    """stdout; wide enough for the table even when piped (rich assumes 80 columns then)."""
    c = _Screen(file=hang_up_safe(lambda: sys.stdout))
    return c if c.is_terminal else _Screen(file=c.file, width=max(c.width, 130))
