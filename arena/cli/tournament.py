"""``arena tournament``: run (or resume) a round-robin tournament from a TOML config."""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import click
from click.core import ParameterSource
from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape as _markup_escape

from arena.cli.leaderboard import stdout_console
from arena.cli.options import (
    NonEmptyPath,
    check_grpc_environment,
    flush_or_drop_stdout,
    hang_up_safe,
    in_clear_note,
    no_cap_note,
    table_size_note,
)
from arena.leaderboard import build_leaderboard, to_screen, write_outputs
from arena.render import PrintableFormatter, plural, printable
from arena.stopping import ignore_stop_signals, stop_signals
from arena.storage import ForeignDatabase, Storage, StorageError, file_in_the_way
from arena.tournament.config import (
    MAX_CONCURRENCY,
    ConfigError,
    TournamentConfig,
    load_config,
    override_key,
)
from arena.tournament.runner import (
    ConfigMismatch,
    Interrupted,
    RunOptions,
    TournamentError,
    TournamentOutcome,
    as_stored,
    orphans_stopped,
    run,
)
from engine.rules import describe_ruleset

__all__ = ["setup_logging", "tournament"]

log = logging.getLogger("arena.tournament")


class _PlainLog(logging.StreamHandler):  # type: ignore[type-arg]
    """The tournament's log handler where stderr is not a terminal (see setup_logging)."""


def escape(text: str) -> str:
    """``text`` for the console: rich's markup escaped, and what a terminal would obey rather
    than show (escape sequences in a path or a name from the config) written out."""
    return _markup_escape(printable(text, keep="\n"))


def setup_logging(verbose: int, console: Console) -> None:
    """Log to ``console`` (stderr): through rich on a terminal, as plain lines into a file or
    a pipe; the referee's per-match lines only with ``-vv``."""
    root = logging.getLogger()
    if not any(isinstance(h, RichHandler | _PlainLog) for h in root.handlers):
        handler: logging.Handler
        if console.is_terminal:
            # The date as the plain lines, the bots' logs and the leaderboard write it: rich's
            # default (the locale's, `12/03/26` in C) reads as March 12 as readily as Dec 3.
            handler = RichHandler(console=console, show_path=False, rich_tracebacks=False,
                                  log_time_format="[%Y-%m-%d %H:%M:%S]")  # fmt: skip
            handler.setFormatter(logging.Formatter("%(message)s"))
        else:
            # `make tournament 2> run.log`, CI, nohup: rich would wrap each line at 80
            # columns (a path cut in two, a grep that misses) and pad it with spaces.
            handler = _PlainLog(console.file)
            # Its lines whole, as on a terminal: they are the arena's own (what bots send
            # is cut where it is read), and a long one (a hundred remote bots named) lost
            # its end ("connect them to HOST:PORT") to the cut meant for a hostile arena's
            # lines in `arena-bot run`'s log.
            handler.setFormatter(
                PrintableFormatter("%(asctime)s %(levelname)s %(message)s", clip_messages=False)
            )
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose >= 2 else logging.INFO)
    for noisy in ("arena.referee", "grpc", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose >= 2 else logging.WARNING)
    # (set every time: a second run in one process, as in tests, kept the first one's level)
    logging.getLogger("arena.tournament.runner").setLevel(
        logging.WARNING if verbose == 0 else logging.NOTSET
    )


def _can_ask() -> bool:
    """Whether someone can be asked a question: stdin is a terminal."""
    return sys.stdin is not None and sys.stdin.isatty()


def _forget(ref: str, db: Path | None, yes: bool) -> None:
    """``--forget REF``: delete the stored tournament ``REF`` (its id, or a name only one
    has) from ``db``, under the database's lock (a run writing it, of that tournament or
    another, refuses it), after asking (``yes``: without). A test run or a mistaken name
    otherwise stayed in the database for good: the latest by default in the leaderboard,
    replay and web, listed in every selector."""
    from arena.storage import StorageLockedError, lock_owner, sidecar_problem
    from arena.tournament.runner import DatabaseLock

    if db is None:
        raise click.UsageError("--forget deletes a tournament from a database: name it, --db FILE")
    if not db.is_file():
        why = "no such file" if not os.path.lexists(db) else "not a file"
        raise click.BadParameter(f"{db}: {why} (no database there)", param_hint="--db")
    problem = sidecar_problem(db)
    if problem is not None:
        raise click.BadParameter(problem, param_hint="--db")
    lock = DatabaseLock(db)
    try:
        lock.acquire()
    except StorageLockedError as e:
        owner = lock_owner(db)
        which = f" (tournament {owner})" if owner else ""
        raise click.ClickException(
            printable(f"{e}{which}: a tournament is deleted only while no run writes its "
                      "database; nothing was deleted")
        ) from None  # fmt: skip
    except StorageError as e:
        raise click.ClickException(printable(f"{e}; nothing was deleted")) from None
    storage = None
    try:
        storage = Storage(db)
        infos = storage.tournaments()
        found = [t for t in infos if t.id == ref] or [t for t in infos if t.name == ref]
        if not found:
            stored = ", ".join(f"{t.id} ({t.name})" for t in infos) or "none"
            raise click.BadParameter(
                printable(f"no tournament {ref!r} in {db} (stored: {stored}); nothing was deleted"),
                param_hint="--forget",
            )  # fmt: skip
        if len(found) > 1:
            raise click.BadParameter(
                printable(f"{len(found)} tournaments in {db} are named {ref}: "
                          f"{', '.join(t.id for t in found)}; give the id of the one to "
                          "delete (nothing was deleted)"),
                param_hint="--forget",
            )  # fmt: skip
        t = found[0]
        when = f"finished {t.finished_at}" if t.finished_at else "not finished"
        what = printable(f"tournament {t.id} ({t.name}: {plural(t.completed, 'match')} "
                         f"stored, created {t.created_at}, {when})")  # fmt: skip
        if not yes:
            if not _can_ask():  # (no one to ask: a script, a pipe, cron)
                raise click.UsageError(f"--forget {ref} would delete {what} from {db}: give "
                                       "--yes to delete it (nothing was deleted)")  # fmt: skip
            if not click.confirm(f"Delete {what} from {db}?", default=False, err=True):
                click.echo("Nothing was deleted.", err=True)
                sys.exit(1)
        storage.delete_tournament(t.id)
        click.echo(f"deleted {what} from {printable(str(db))}")
    except ForeignDatabase as e:  # (the file named is wrong: a bad argument, exit 2)
        raise click.BadParameter(
            printable(f"{e}; nothing was deleted"), param_hint="--db"
        ) from None
    except StorageError as e:
        raise click.ClickException(printable(f"{e}; nothing was deleted")) from None
    finally:
        if storage is not None:
            storage.close()
        lock.release()


def _toml_str(value: str) -> str:
    # A JSON string is a valid TOML basic string, but for the surrogate pairs that JSON
    # writes for characters past U+FFFF (an emoji in a path), which TOML refuses.
    return json.dumps(value, ensure_ascii=False)


@click.command("tournament")
@click.option(
    "--config", "config_path", type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=Path("tournaments/default.toml"), show_default=True,
    help="Tournament TOML file (docs/tournament.md); the default is a checkout's.",
)  # fmt: skip
@click.option("--concurrency", type=click.IntRange(1, MAX_CONCURRENCY),
              help=f"Matches played at once (at most {MAX_CONCURRENCY}).")  # fmt: skip
@click.option("--out", type=NonEmptyPath(file_okay=False, path_type=Path),
              help="Directory of the leaderboard files and bot logs.")  # fmt: skip
@click.option("--db", type=NonEmptyPath(dir_okay=False, path_type=Path), help="SQLite database.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="Tournament seed (a new tournament).")  # fmt: skip
@click.option("--matches-per-table", type=click.IntRange(min=1), help="Deal-seed sets.")
@click.option("--max-deals", type=click.IntRange(min=0), help="Deal cap per match (0: none).")
# Two flags, not click's `--resume/--fresh` pair: of that pair the last given wins, and
# `--resume ... --fresh` would forget a stored tournament the same line asks to resume.
@click.option("--resume", "resume_flag", is_flag=True,
              help="Resume the stored tournament of this config (the default).")  # fmt: skip
@click.option("--fresh", is_flag=True,
              help="Forget the stored tournament of this config and start again.")  # fmt: skip
@click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE",
    help="Override any config key (value read as TOML), e.g. --set deadlines.decision_ms=500.",
)  # fmt: skip
@click.option("--no-progress", is_flag=True, help="Log lines instead of the live display.")
@click.option("-v", "--verbose", count=True, help="More logging (-vv: the referee's too).")
@click.option(
    "--forget", metavar="ID|NAME",
    help="Delete this stored tournament (its id, or a name only one tournament has) and all "
    "its matches from --db, and run nothing; asks first (--yes: does not).",
)  # fmt: skip
@click.option("--yes", is_flag=True, help="With --forget: delete without asking.")
def tournament(
    config_path: Path,
    concurrency: int | None,
    out: Path | None,
    db: Path | None,
    seed: int | None,
    matches_per_table: int | None,
    max_deals: int | None,
    resume_flag: bool,
    fresh: bool,
    overrides: tuple[str, ...],
    no_progress: bool,
    verbose: int,
    forget: str | None,
    yes: bool,
) -> None:
    """Run a round-robin tournament: every table of bots in every seating on the same deals
    (unless the config says deals = "independent").

    Results are stored as they complete; running the same command again (without --fresh,
    which would start over) resumes an interrupted tournament. The leaderboard is printed
    and written to the out directory (leaderboard.json, .csv, .md, .html).
    """
    ctx = click.get_current_context()
    if forget is not None or yes:
        # (each named as the user wrote it: config_path is --config, overrides --set)
        given = [p.opts[0] for p in ctx.command.params
                 if p.name not in ("forget", "yes", "db") and p.name is not None
                 and ctx.get_parameter_source(p.name) is not ParameterSource.DEFAULT]  # fmt: skip
        if forget is None:
            raise click.UsageError("--yes goes with --forget (it deletes without asking)")
        if given:  # (a run's options beside it: which was meant?)
            raise click.UsageError(
                "--forget deletes a stored tournament and runs nothing: give it with --db "
                f"(and --yes) only, not {', '.join(given)}"
            )
        _forget(forget, db, yes)
        return
    if resume_flag and fresh:
        raise click.UsageError(
            "--resume and --fresh contradict each other: give one (--fresh forgets the "
            "stored tournament of this config and starts again; --resume is the default)"
        )
    resume = not fresh
    check_grpc_environment()
    if ctx.get_parameter_source("config_path") is ParameterSource.DEFAULT and not (
        config_path.exists()
    ):
        # The default is a file of the repository: where the package was installed by pip
        # (an organiser's server) there is none, and "no such file" would name no way out.
        raise click.UsageError(
            f"no tournament config here: the default, {config_path}, is a file of a "
            "thousand-arena checkout (the installed package has none). Pass --config FILE: "
            "a checkout's tournaments/*.toml, or a file of your own such as\n"
            '  name = "mine"\n  max_deals = 12\n  bots = ["random", "heuristic", "counting"]\n'
            "(every key: docs/tournament.md)"
        )
    err_console = Console(file=hang_up_safe(lambda: sys.stderr, reader_may_leave=True))
    setup_logging(verbose, err_console)
    raw = {"concurrency": concurrency, "out": out, "db": db, "seed": seed,
           "matches_per_table": matches_per_table, "max_deals": max_deals}  # fmt: skip
    options_set = {
        k: _toml_str(str(v)) if isinstance(v, Path) else v for k, v in raw.items() if v is not None
    }
    # A bad value of an option is blamed on the option, not on the file: "--max-deals 2000000".
    given_as = {f"{k}={v}": f"--{k.replace('_', '-')} {raw[k]}" for k, v in options_set.items()}
    earlier: dict[str, str] = {}  # key -> the --set that set it
    for item in overrides:  # ("--max-deals 3 --set max_deals=5" ran with 3, saying nothing)
        key = override_key(item)
        cut = item if len(item) <= 100 else f"{item[:100]}..."
        if key in options_set:
            option = f"--{key.replace('_', '-')}"
            raise click.UsageError(
                f"{option} {raw[key]} and --set {cut} both set {key}: give one of them"
            )
        # Two --set of one key, or of a table and a key in it, ran with the last, the other
        # dropped unsaid (`--set max_deals=2 --set max_deals=3` played 3).
        for was_key, was in earlier.items():
            inside = (key + ".").startswith(was_key + ".") or (was_key + ".").startswith(key + ".")
            if was != item and key and inside:
                was_cut = was if len(was) <= 100 else f"{was[:100]}..."
                raise click.UsageError(  # (the config and the key named, as a ConfigError)
                    f"{config_path}: {min(key, was_key, key=len)}: --set {was_cut} and --set "
                    f"{cut} both set it: give one of them"
                )
        earlier[key] = item
    sets = [*overrides, *given_as]
    try:
        cfg = load_config(config_path, sets, given_as)
        cfg = as_stored(cfg)  # (before anything says the tournament's id: the stored one's)
        _announce(cfg, err_console)  # (builds the schedule: a while for a large one)
    except ConfigError as e:
        raise click.UsageError(str(e)) from e
    except KeyboardInterrupt:  # click would say "Aborted!" and exit 1
        err_console.print("[yellow]Interrupted[/] before the tournament started: nothing "
                          "was played or stored.", soft_wrap=True)  # fmt: skip
        sys.exit(130)
    t0 = time.monotonic()
    # What --fresh would forget, as it stands before the run: it forgets it only once every
    # bot has connected, so a run stopped before that has left it as it was.
    kept = None if resume else _stored_state(cfg)
    _say_what_is_stored(cfg, _stored_state(cfg) if resume else kept, resume, err_console)
    options = RunOptions(
        fresh=not resume,
        progress=not no_progress and err_console.is_terminal,
        console=err_console,
    )
    try:
        with orphans_stopped():  # no bot's process outlives the run
            outcome = run(cfg, options)
    except KeyboardInterrupt as e:  # (Interrupted: SIGINT, SIGTERM or SIGHUP)
        signum = getattr(e, "signum", signal.SIGINT)
        with _signals_stop_the_leaderboard(cfg, err_console, signum):
            done = _stored(cfg)
            name = signal.Signals(signum).name
            if done is None:  # (before every bot had come: the tournament was not stored)
                err_console.print(
                    f"[yellow]Interrupted ({name}) before the first match.[/] Nothing was "
                    "played or stored: run the same command again to start the tournament.",
                    soft_wrap=True,
                )
            elif kept is not None and _stored_state(cfg) == kept:
                # (--fresh, stopped while the bots connected: it said "as the tournament
                # ended ... nothing to resume" of the finished one it had not yet forgotten)
                err_console.print(
                    f"[yellow]Interrupted ({name}) before the first match.[/] Nothing was "
                    f"played, and --fresh forgot nothing (it does once every bot has "
                    f"connected): the {plural(done, 'match')} of {cfg.tournament_id} stored "
                    f"in {escape(str(cfg.db))} are kept; run the same command again to start "
                    "it over"
                    + ("." if done >= cfg.total_matches else ", or without --fresh to resume it."),
                    soft_wrap=True,
                )
            elif done >= cfg.total_matches:  # (the signal came as the last match was stored)
                err_console.print(
                    f"[yellow]Interrupted ({name}) as the tournament ended.[/] Every match "
                    f"({done}) is stored in {escape(str(cfg.db))}: there is nothing to resume.",
                    soft_wrap=True,
                )
            else:
                err_console.print(
                    f"[yellow]Interrupted ({name}).[/] {plural(done, 'match')} "
                    f"{'is' if done == 1 else 'are'} stored in "
                    f"{escape(str(cfg.db))}; run the same command again"
                    + (" without --fresh" if not resume else "")
                    + " to resume (the "
                    "matches in progress, up to the concurrency, are played again, "
                    + (
                        "from fresh seeds)." if cfg.deals == "independent" else "from their seeds)."
                    ),
                    soft_wrap=True,
                )
            _show(cfg, err_console)
            _exit(128 + signum)  # 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as a shell
    except (TournamentError, StorageError) as e:
        err_console.print(f"[red]error:[/] {escape(str(e))}", soft_wrap=True)
        # (what was named does not fit: another program's database, a config that is not
        # the stored tournament's; the rest is the run failing)
        sys.exit(2 if isinstance(e, ForeignDatabase | ConfigMismatch) else 1)
    code = 1 if outcome.failed else 130 if outcome.interrupted else 0
    with _signals_stop_the_leaderboard(cfg, err_console):
        shown = _show(cfg, err_console)
    if not shown and not code:  # every result is stored, but the files (or table) are not
        code = 1
    # The run is over, its files written (or said not to be): a stop signal from here on
    # ends the exit at once with this code. Python's handlers killed the finished run
    # (-15, a SIGINT's traceback or click's "Aborted!", exit 1) in its last lines and in
    # the teardown of gRPC (some 0.15 s). (For the rest of the process, as a process of
    # its own should: tests/conftest.py puts them back after a test's CLI runner.)
    _end_on_signals(code)
    _summary(outcome, cfg, err_console, t0)
    if code:
        sys.exit(code)


def _summary(
    outcome: TournamentOutcome, cfg: TournamentConfig, err_console: Console, t0: float
) -> None:
    """The last lines of a run that was not interrupted by a signal."""
    took = time.monotonic() - t0
    msg = (
        f"{plural(outcome.played_now, 'match')} played in {took:.1f}s; {outcome.completed}/"
        f"{outcome.total} stored in {cfg.db} (tournament {outcome.tournament_id})"
    )
    if outcome.skipped:
        were = "was" if outcome.skipped == 1 else "were"
        msg += f"; {outcome.skipped} {were} already stored (resumed)"
    err_console.print(escape(msg), soft_wrap=True)
    if outcome.failed:
        err_console.print(
            f"[red]{plural(len(outcome.failed), 'match')} failed[/] (see the log above); run "
            "the same command again to retry them.",
            soft_wrap=True,
        )


def _announce(cfg: TournamentConfig, console: Console) -> None:
    seed = "a secret seed" if cfg.seed is None else f"seed {cfg.seed}"
    console.print(
        f"[bold]{escape(cfg.name)}[/]: "
        + escape(
            f"{len(cfg.bots)} bots ({', '.join(cfg.bot_names)}), "
            f"ruleset {describe_ruleset(cfg.ruleset)}, "
            f"{cfg.total_matches} matches ("
            + (f"max {plural(cfg.max_deals, 'deal')} each" if cfg.max_deals else "no deal cap")
            + f"), concurrency {cfg.concurrency}, {seed}"
        ),
        soft_wrap=True,
    )
    sized = table_size_note(cfg.ruleset, cfg.ruleset_source, len(cfg.bots), "ruleset")
    if sized:  # (a club that tried its file at four would otherwise find tables of three)
        console.print(escape(sized), soft_wrap=True)
    # (the config's max_deals is the ruleset's: 0 is no cap)
    endless = no_cap_note(cfg.ruleset, "max_deals, or match_timeout_s, caps them")
    if endless and not cfg.match_timeout_s:
        # As `arena serve` says it: bots that never bid high enough would otherwise play a
        # match for ever, and the tournament never end.
        console.print(escape(endless), soft_wrap=True)
    remote = [b.name for b in cfg.bots if not b.is_local]
    if not remote:
        return
    # What a remote bot (one we do not run, so cannot trust) could learn, said before it
    # plays: among one's own bots neither matters.
    who = f"remote bots ({', '.join(remote)})"
    clear = None if cfg.tls is not None else in_clear_note(cfg.host, who, "a [tls] table")
    if clear is not None:
        console.print(escape(clear), soft_wrap=True)
    if cfg.port == 0:
        # A remote bot keeps reconnecting to the port it was given: after a Ctrl-C the
        # resumed run listened on another free port, where it never came (bot_wait_s ran out).
        console.print(
            escape(
                f"note: {who} and port 0 (the default): every run listens on another free "
                "port, a resumed one too, so the remote bots must be given the new port each "
                "time (one still reconnecting to the last never comes); a fixed `port` "
                "(port = 50051) keeps one"
            ),
            soft_wrap=True,
        )
    if cfg.seed is not None:
        console.print(
            escape(
                f"note: {who} and seed {cfg.seed} from the config or the command line: every "
                "deal of every match follows from it, so a bot that knows or guesses it "
                "knows every hand; leave `seed` out to have a secret one drawn (kept in the "
                "database for resuming)"
            ),
            soft_wrap=True,
        )
    if cfg.deals == "duplicate":
        # Duplicate deals show every bot the same hands in every seating: one that remembers
        # them knows its opponents' cards later on.
        console.print(
            escape(
                f"note: duplicate deals with {who}: a bot that remembers the hands it was "
                "dealt knows, in its later seatings, the hand of whoever sits where it sat; "
                'deals = "independent" gives every match its own'
            ),
            soft_wrap=True,
        )


@contextlib.contextmanager
def _signals_stop_the_leaderboard(
    cfg: TournamentConfig, console: Console, first: int | None = None
) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP while the leaderboard is written, once the run is over (its event
    loop no longer handles them: a Ctrl-C there would end in click's "Aborted!", exit 1, and
    a SIGTERM in a silent death): the writing stops with a message that every finished match
    is stored and how to write the files, exit 128 + the signal (``first``: the one that
    interrupted the run, if one did)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # (signals reach the main thread only)
        return

    def stop(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, stop) for sig in stop_signals()}
    try:
        yield
    except Interrupted as e:
        console.print(
            f"[yellow]Interrupted ({signal.Signals(e.signum).name}) while writing the "
            "leaderboard.[/] "
            + escape(
                f"Every finished match is stored in {cfg.db}; `arena leaderboard --db "
                f"{cfg.db} --tournament {cfg.tournament_id} --format all --out {cfg.out}` "
                "writes the leaderboard files"
            ),
            soft_wrap=True,
        )
        _exit(128 + (first or e.signum))
    finally:
        for sig, handler in previous.items():
            if signal.getsignal(sig) is stop:  # (not _exit's: they stay to the end)
                signal.signal(sig, handler)


def _end_on_signals(code: int) -> None:
    """From now on a stop signal ends the process at once with exit ``code`` (what was
    written so far flushed), and from Python's first atexit call on it is ignored
    (:func:`~arena.stopping.ignore_stop_signals`). Nothing from a thread other than the
    main one, which signals do not reach."""

    def now(signum: int, frame: object) -> None:
        with contextlib.suppress(Exception):  # (what is written so far goes out)
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in stop_signals():
        signal.signal(sig, now)
    # Python's exit sets every signal it handles back to the default right after the
    # atexit calls, before it tears the modules down (gRPC's server with them): a
    # signal then killed the process (-2, not 130; seen under load). Ignored from the
    # first atexit call on (registered last): the rest is teardown, the code is given.
    atexit.unregister(ignore_stop_signals)  # (once, whatever the calls before)
    atexit.register(ignore_stop_signals)


def _exit(code: int) -> NoReturn:
    """``sys.exit(code)`` at the end of a stopped run, a stop signal more ending the process
    at once with the same code (:func:`_end_on_signals`). With the handlers it had before
    (Python's), one that came once the stop had said all it says raised KeyboardInterrupt on
    the way out: click's "Aborted!" and exit 1, or "Exception ignored in ...
    AioServer.__dealloc__" and its traceback from gRPC's teardown, or a death by the signal
    (a second Ctrl-C a moment late, as a loaded machine made it in a test)."""
    _end_on_signals(code)
    sys.exit(code)


def _stored(cfg: TournamentConfig) -> int | None:
    """How many of the tournament's matches are stored; None when the tournament is not (a
    first run stores it once every bot has connected)."""
    try:
        with Storage(cfg.db) as st:
            if st.tournament(cfg.tournament_id) is None:
                return None
            return len(st.completed_indices(cfg.tournament_id))
    except StorageError:
        return 0


def _stored_state(cfg: TournamentConfig) -> tuple[str, str | None, int, str] | None:
    """The stored tournament's creation and finish times, its matches stored and its
    fingerprint (None when it is not stored, or cannot be read): what ``--fresh``
    replaces, once it does."""
    if not Path(cfg.db).is_file():  # (not made here: the run makes it, as it should be)
        return None
    try:  # (read-only: the run, not this look, writes the database, once it holds the lock)
        with Storage.open_readonly(cfg.db) as st:
            info = st.tournament(cfg.tournament_id)
            if info is None:
                return None
            done = len(st.completed_indices(cfg.tournament_id))
            return info.created_at, info.finished_at, done, info.fingerprint
    except StorageError:
        return None


def _say_what_is_stored(
    cfg: TournamentConfig,
    stored: tuple[str, str | None, int, str] | None,
    resume: bool,
    console: Console,
) -> None:
    """Say, before the run, what it does with the tournament this config already stored.
    The command of a finished tournament run again (a club's config run the next week)
    said only "resuming ...: 6 of 6 matches already stored" and "0 matches played", and
    ``--fresh`` over one forgot its stored matches without a word: neither said that
    another ``--seed`` or ``name`` plays a new tournament beside the stored one."""
    if stored is None:
        return
    _, finished_at, done, fingerprint = stored
    beside = "another name (--set name=NEW) or --seed N plays a new tournament beside it"
    # (a fixed `id` stored with another config: the run refuses it, saying what changed)
    if resume and finished_at is not None and fingerprint == cfg.fingerprint:
        console.print(
            escape(
                f"note: tournament {cfg.tournament_id} finished {_when(finished_at)}, every "
                f"match stored ({done} of {cfg.total_matches}): this run plays nothing and "
                f"writes its leaderboard again; {beside}, and --fresh plays it again, "
                f"forgetting its {plural(done, 'match')}"
            ),
            soft_wrap=True,
        )
    elif not resume and done:
        state = "finished " + _when(finished_at) if finished_at else "not finished"
        console.print(
            escape(
                f"note: --fresh forgets the {plural(done, 'match')} stored of tournament "
                f"{cfg.tournament_id} ({state}) once every bot has connected, and plays it "
                + ("again" if cfg.seed is None else f"again on the same deals (seed {cfg.seed})")
                + f"; {beside}, keeping them"
            ),
            soft_wrap=True,
        )


def _when(stamp: str) -> str:
    """A stored time as the summary says it, to the minute: ``2026-12-06 13:11``."""
    return stamp[:16].replace("T", " ")


def _show(cfg: TournamentConfig, err_console: Console) -> bool:
    """Print the leaderboard and write its files (whatever is stored so far); False if that
    failed (the message says why)."""
    try:
        with Storage(cfg.db) as st:
            if st.tournament(cfg.tournament_id) is None:
                return True
            lb = build_leaderboard(st, cfg.tournament_id)
    except (StorageError, LookupError) as e:
        err_console.print(f"[red]cannot build the leaderboard:[/] {escape(str(e))}", soft_wrap=True)
        return False
    screen = stdout_console()
    printed = True
    try:
        screen.print(to_screen(lb, screen.width))
    except OSError as e:
        if e.filename is not None:
            raise
        # The output's reader left (`arena tournament | head -3`: EPIPE) or its disk is
        # full (`> /dev/full`): the run ended in a silent exit 1 or in "cannot write" here,
        # the leaderboard's files never written. They are written all the same; the
        # table is said not to be printed (exit 1), and the output dropped (Python's last
        # flush at exit would fail on what is left in its buffer).
        flush_or_drop_stdout()
        err_console.print(
            "[red]cannot print the leaderboard on the standard output:[/] "
            + escape(str(e.strerror or e)),
            soft_wrap=True,
        )
        printed = False
    try:
        paths = write_outputs(lb, cfg.out)
    except OSError as e:
        # (`out` replaced by a file while the run played: mkdir says only "File exists")
        blocker = file_in_the_way(cfg.out)
        why = f"{blocker} is a file, not a directory" if blocker is not None else e.strerror or e
        err_console.print(
            f"[red]cannot write the leaderboard files to {escape(str(cfg.out))} (out, --out):[/] "
            + escape(
                f"{why}. Every result is stored; `arena leaderboard --db {cfg.db} "
                f"--tournament {cfg.tournament_id} --format all --out DIR` writes them"
            ),
            soft_wrap=True,
        )
        return False
    err_console.print(
        "leaderboard: " + escape(", ".join(str(p) for p in paths.values())), soft_wrap=True
    )
    return printed
