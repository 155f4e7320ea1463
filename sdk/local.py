"""In-process matches: bots against each other with no server, through the rules engine.

>>> from bots import load
>>> m = play_local([load("random")] * 3, seed=1, max_deals=2)
>>> m.result.deals
2

:func:`play_local` asks each bot exactly what the referee would: the same
``engine.observe`` views, forced moves played without asking (unless the ruleset says
``ask_forced``), the same treatment of a bot that raises or answers illegally (see
:mod:`sdk.bot`). :func:`play_series` plays many matches with rotating seats (what
``arena-bot try`` prints).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import difflib
import inspect
import logging
import math
import os
import random
import signal
import site
import sys
import sysconfig
import threading
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial, partialmethod
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

import engine
from arena.deadlines import DEFAULT_TIME_BANK_MS, bank_left, deadline_problem, timeout_words
from engine import (
    Action,
    Bid,
    Card,
    Concede,
    Contract,
    Game,
    GameResult,
    Give,
    IllegalActionError,
    Pass,
    Phase,
    Play,
    PlayerView,
    Ruleset,
    ThrowIn,
    fallback_action,
    load_ruleset,
    observe,
    parse_action,
    parse_card,
    public_action,
)
from engine.record import check_record_shape, start_game
from sdk.bot import Bot, Deadline
from sdk.loader import _SDK_DIR

__all__ = [
    "BotFactory",
    "BotMakeError",
    "LocalIncident",
    "LocalMatch",
    "RecordedDecision",
    "SeriesEntry",
    "SeriesInterrupted",
    "SeriesResult",
    "arena_record",
    "decide_failed",
    "failures_said",
    "hook_result",
    "hook_view",
    "make_bot",
    "mean_ci95",
    "overrides",
    "play_local",
    "play_series",
    "record_decisions",
    "resolve_ruleset",
]

log = logging.getLogger("sdk.local")

#: A bot class, or any callable returning a fresh bot (one per match).
BotFactory = type[Bot] | Callable[[], Bot]


@dataclass(frozen=True, slots=True)
class LocalIncident:
    """A bot misbehaved: ``kind`` is ``"error"`` (raised), ``"illegal"``, ``"malformed"``
    (answered no Action) or ``"timeout"`` (answered past its deadline, in a match timed
    by ``decision_ms``: "no decision within 1100 ms (1000 ms + 100 ms of time bank):
    Mine.play() (mine.py:12) took 1234 ms; played pass instead"). ``detail`` says what the
    bot did and, for a decision, the fallback played instead: "Mine.play() (mine.py:12)
    raised ValueError: boom; played play 9♠ instead", "... returned None, which is not an
    Action; played ...", "illegal action 'play 9♠' by seat 0: 9♠ is not in your hand; ...;
    played play 10♣ instead", "raised in on_deal_end: KeyError: 'x'". ``hook``: the hook
    that failed ("on_deal_end"), "" for a decision."""

    seat: int
    deal: int
    kind: str
    detail: str
    hook: str = ""


#: A local incident's kind as a referee records it (docs/referee.md): a decision the bot
#: failed is the SDK's fallback sent as its answer in an arena (``bot_error``, no strike).
_ARENA_KIND = {"error": "bot_error", "malformed": "bot_error", "illegal": "illegal",
               "timeout": "timeout"}  # fmt: skip


def failures_said(failed: int, decided: int | None, hooks_failed: int) -> str | None:
    """What a bot failed in a match, said at the match's end by `arena-bot run` and `arena-bot
    try` alike (``None``: nothing failed): ``failed`` decisions (of ``decided``, if known)
    that raised or answered no action, and ``hooks_failed`` hook calls that raised. Each
    was logged above with its traceback; a hook's failure is said here only: it answers
    nothing, so no referee hears of it, and no record, leaderboard or web page has it."""
    if not (failed or hooks_failed):
        return None
    said = []
    if failed:
        of = "" if decided is None else f" of its {decided}"
        said.append(
            f"the bot failed {failed}{of} decision(s) (raised, or answered no action: the "
            "fallback was sent, which the arena counts as no strike and records as a "
            "bot_error)"
        )
    if hooks_failed:
        said.append(
            f"{hooks_failed} hook call(s){'' if said else ' of the bot'} failed (logged "
            "here only: no arena records a hook's failure)"
        )
    return f"{', and '.join(said)}; see the errors above"


def arena_record(match: LocalMatch) -> dict[str, Any]:
    """``match``'s record with its ``incidents`` as a referee's record lists them
    (``{"kind", "seat", "deal", "detail"}``, docs/record-format.md), for ``arena replay``:
    a decision the bot failed (it raised, or answered no action) is a ``bot_error``, an
    illegal answer ``illegal``, a timed match's late answer ``timeout``; a hook that failed
    is not listed (a referee never learns of it). Each action says, as a referee's does,
    who chose it (``by``) and, on a decision the bot failed, ``"failed": true``
    (:attr:`LocalMatch.chosen`); not its ``ms``, a time, which would make the records of
    two runs of one seed differ."""
    incidents = [
        {"kind": _ARENA_KIND[i.kind], "seat": i.seat, "deal": i.deal, "detail": i.detail}
        for i in match.incidents
        if not i.hook and i.kind in _ARENA_KIND
    ]
    record = {**match.record, "incidents": incidents}
    deals = match.record.get("deals", [])
    if match.chosen and len(match.chosen) == sum(len(d["actions"]) for d in deals):
        chosen = iter(match.chosen)
        marked = []
        for deal in deals:
            actions = []
            for entry in deal["actions"]:
                by, failed = next(chosen)
                # (the keys of a referee's record: arena/referee/match.py; but its ms)
                meta: dict[str, Any] = {"by": by}
                if failed:
                    meta["failed"] = True
                actions.append({**entry, **meta})
            marked.append({**deal, "actions": actions})
        record["deals"] = marked
    return record


@dataclass(frozen=True, slots=True)
class RecordedDecision:
    """One action of a match record, with the view its seat had when it was taken."""

    #: The deal, counted from 0 as the record counts it (`arena replay`'s "Deal 3" is 2).
    deal: int
    #: The action's place in its deal's ``actions``, from 0.
    index: int
    seat: int
    #: What the seat saw before the action: what a bot's method was called with.
    view: PlayerView
    action: Action
    #: A referee's record says who chose it: ``"bot"``, ``"forced"`` (the only legal
    #: action, not asked) or ``"fallback"`` (the referee's); ``""`` where it does not.
    by: str


def record_decisions(record: Mapping[str, Any]) -> Iterator[RecordedDecision]:
    """Every action of a match record (an arena's, ``arena-bot try --records``', a
    ``play_local`` record) with the view its seat had then, in order: to call a bot again
    on one decision it took, under a debugger (docs/writing-a-bot.md). A record the rules
    refuse raises ``engine.ReplayError`` (not a record) or ``engine.IllegalActionError``
    at the action refused (``arena replay --check`` says why)."""
    check_record_shape(record)
    game = start_game(record)
    for deal in record["deals"]:
        for index, entry in enumerate(deal["actions"]):
            seat, action = entry["seat"], parse_action(entry["action"])
            view = observe(game, seat)
            yield RecordedDecision(game.deal_number, index, seat, view, action, entry.get("by", ""))
            game.apply(action, seat=seat)


@dataclass(frozen=True, slots=True)
class LocalMatch:
    """What :func:`play_local` returns: names by seat, the record, the result, incidents."""

    names: tuple[str, ...]
    record: dict[str, Any]
    result: GameResult
    incidents: tuple[LocalIncident, ...] = ()
    #: Per seat, the longest its bot took over one decision, in seconds (an arena cuts a
    #: decision off at its limit: 1 s by default, plus the match's time bank).
    slowest: tuple[float, ...] = ()
    #: Per seat, which decision that was: "match local-0-1, deal 2, playing: Mine.play()
    #: (mine.py:12)" ("" for a seat never asked), so that a slow one can be found again.
    slowest_at: tuple[str, ...] = ()
    #: Per action of ``record``, in its order: ``(by, failed)`` as a referee records them
    #: (docs/record-format.md): who chose it (``"bot"``; ``"forced"``: the only legal
    #: action, not asked; ``"fallback"``: played for the bot after an illegal answer or a
    #: timeout), and whether the bot failed the decision (it raised, or answered no
    #: action: the SDK's fallback, sent as its answer in an arena, ``"by": "bot"``).
    #: :func:`arena_record` writes them into the record's actions (no ``ms``: a decision's
    #: time differs from run to run, and the same seed gives the same records); ``()`` for
    #: a match that did not say.
    chosen: tuple[tuple[str, bool], ...] = ()

    @property
    def scores(self) -> tuple[int, ...]:
        """The final scores, per seat (``result.scores``)."""
        return self.result.scores

    @property
    def places(self) -> tuple[int, ...]:
        """Each seat's place, 1 the best (``result.places``)."""
        return self.result.places


def resolve_ruleset(
    ruleset: str | Path | Ruleset, max_deals: int | None = None, players: int | None = None
) -> Ruleset:
    """A preset name (for ``players`` players: "1001" with 4 is "1001-4p"), a TOML path or
    a ruleset, with ``max_deals`` applied if given."""
    r = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset, players)
    if max_deals is not None:
        r = dataclasses.replace(r, max_deals=max_deals)
    return r


class BotMakeError(RuntimeError):
    """Making a match's bot failed (its ``__init__`` raised, or the factory made no Bot);
    the bot's exception is the ``__cause__``."""


def factory_problem(bot: object) -> str | None:
    """What ``bot`` is, when it is none of what the runners take for a seat (a ``Bot``
    subclass, a factory that makes a bot, or a bot instance), else ``None``. Found before
    any match: "'str' object is not callable" at the first match said neither which seat
    nor what to give instead."""
    if isinstance(bot, Bot) or (isinstance(bot, type) and issubclass(bot, Bot)):
        coroutines = async_methods(bot)
        if coroutines is not None and isinstance(bot, type) and bot.act is Bot.act:
            coroutines = _async_of_instance(bot, coroutines)
        if coroutines is not None:
            cls = bot if isinstance(bot, type) else type(bot)
            what = "the class" if isinstance(bot, type) else "a bot of class"
            return f"{what} {cls.__name__}, whose {coroutines}"
        return None
    if isinstance(bot, type):
        return (
            f"the class {bot.__name__}, which does not derive from sdk.Bot: write "
            f"`class {bot.__name__}(Bot):`, with `from sdk import Bot`"
        )
    if isinstance(bot, str):
        return (
            f"the str {_short_repr(bot)}, a name: give the bot's class "
            f"(sdk.loader.load_bot({_short_repr(bot)}) is the class that name gives)"
        )
    if isinstance(bot, ModuleType):
        return f"the module {bot.__name__}: give its bot class ({bot.__name__}.ClassName)"
    if not callable(bot):
        return (
            f"{_short_repr(bot)}, of type {type(bot).__name__}: give a Bot class, a factory that "
            "makes a bot, or a bot"
        )
    return None


def _async_of_instance(cls: type[Bot], said: str) -> str | None:
    """:func:`async_methods` of a bot of ``cls``, a class whose ``act`` is ``Bot``'s and
    that has an ``async def`` method the runners call (``said``, the class's verdict). Only
    an instance tells whether its ``act`` is set in ``__init__`` (``self.act = ...``), which
    makes an ``async def play`` its helper, never called: such a class was refused as if
    the runners called it. One bot is made for this, for such a class only (nearly always
    a wrong one, refused after); if that fails, the class's verdict stands (each match
    would say why it cannot make the bot)."""
    try:
        bot = cls()
    except Exception:
        return said
    return async_methods(bot) if isinstance(bot, Bot) and "act" in vars(bot) else said


def make_bot(factory: BotFactory | Bot) -> Bot:
    """A fresh bot from a class or factory (an instance is used as it is)."""
    if isinstance(factory, Bot):
        return factory
    bot = factory()
    if not isinstance(bot, Bot):
        raise TypeError(f"{factory!r} made {bot!r}, which is not a sdk.Bot")
    coroutines = async_methods(bot)  # (a class given itself is refused before any match)
    if coroutines is not None:
        raise TypeError(f"{factory!r} made a bot of class {type(bot).__name__}, whose {coroutines}")
    return bot


def decide_failed(
    bot: Bot,
    view: PlayerView,
    logger: logging.Logger = log,
    *,
    deadline: Deadline | None = None,
    match_id: str | None = None,
) -> tuple[Action, str | None]:
    """:func:`_decide` as an arena's runner asks it: ``(action, failed)``, ``failed`` being
    ``None`` when the bot answered an Action, else what failed in a few words (the type of
    the exception it raised, ``"ValueError"``, or ``"no action: NoneType"``), which the
    runner sends with the fallback (``Decision.failed``) for the arena's record."""
    action, _, _, failed = _decide(bot, view, logger, deadline=deadline, match_id=match_id)
    return action, failed


def stops_the_bot(e: BaseException) -> bool:
    """Whether what a bot's code raised stops it rather than counting as its bug:
    ``SystemExit`` (the bot leaves) and ``KeyboardInterrupt`` (a person stops it). Every
    other ``BaseException`` — a ``GeneratorExit``, a library's own subclass — is a bug like
    any exception (it stopped ``arena-bot try`` with a traceback, and in an arena left the
    match's later requests unanswered until the seat forfeited)."""
    return isinstance(e, (SystemExit, KeyboardInterrupt))


#: Python's own library: a bot's ``random.choice([])`` fails there, but the bot's line
#: is the place to name.
_STDLIB = tuple({sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")})


#: Code that is never the bot's own: the SDK and the rules engine (a helper such as
#: ``sdk.hand.trick_winner`` given a bad argument raises there).
_THE_ARENAS = (_SDK_DIR, str(Path(engine.__file__).parent) + os.sep)


def _installed_libraries() -> tuple[str, ...]:
    """Where the installed libraries are: the install scheme's ``site-packages``, and every
    other directory :mod:`site` puts on the path for them. A Debian Python's scheme names
    ``/usr/local/lib/python3.11/dist-packages`` alone, its packages (``apt install
    python3-numpy``) being in ``/usr/lib/python3/dist-packages``; a virtual environment made
    with ``--system-site-packages`` reads its base's too, and ``pip install --user`` goes to
    the user's ``~/.local``."""
    found: list[str] = []
    with contextlib.suppress(AttributeError):  # (an old virtualenv's site module)
        found += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    # (Windows' site also names the prefix itself, a venv's root: a bot kept there is not
    # installed)
    dirs = {d for d in found if Path(d).name in ("site-packages", "dist-packages")}
    dirs |= {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    return tuple(sorted(d for d in dirs if d))


#: The installed libraries (:func:`_installed_libraries`). In a virtual environment they
#: are inside ``platstdlib`` (``.venv/lib/python3.11/site-packages`` in
#: ``.venv/lib/python3.11``): not Python's own library for that (see :func:`_in_stdlib`).
_SITE = _installed_libraries()

#: Code that is not the bot's own, most likely: the above, Python's library and the
#: installed libraries.
_NOT_THE_BOTS = (*_STDLIB, *_SITE, *_THE_ARENAS)


def _in_stdlib(filename: str) -> bool:
    """Whether ``filename`` is in Python's own library (not in the installed libraries,
    which a virtual environment keeps inside it: a bot installed there with pip is no part
    of Python's library)."""
    return filename.startswith(_STDLIB) and not filename.startswith(_SITE)


def raise_site(tb: TracebackType) -> traceback.FrameSummary:
    """The innermost frame of ``tb`` in the bot's own code: outside Python's library, the
    installed libraries, the SDK and the engine (a bot's ``hand.trick_winner([], None)``
    raises in the engine, but the bot's line is the place to name, and each of its lines
    is a place of its own); else (a bot installed with pip, in the installed libraries
    itself) the innermost outside Python's library, the SDK and the engine; else the
    innermost outside Python's library (else the innermost)."""
    frames = traceback.StackSummary.extract(traceback.walk_tb(tb), lookup_lines=False)
    passes = (
        lambda f: f.startswith(_NOT_THE_BOTS),
        lambda f: f.startswith(_THE_ARENAS) or _in_stdlib(f),
        _in_stdlib,
    )
    for excluded in passes:
        for frame in reversed(frames):
            if not excluded(frame.filename):
                return frame
    return frames[-1]


def bot_site(e: BaseException) -> traceback.FrameSummary | None:
    """Where the bot's code raised ``e``: :func:`raise_site`; ``None`` when that is in
    Python's library or in the SDK (its own raise, or a call of the bot's that failed
    before running any of its lines: ``__init__`` given no arguments it needs)."""
    if e.__traceback__ is None:
        return None
    site = raise_site(e.__traceback__)
    return None if _in_stdlib(site.filename) or site.filename.startswith(_SDK_DIR) else site


def log_leaving(
    e: BaseException,
    call: str,
    logger: logging.Logger,
    where: str,
    view: PlayerView | None = None,
    took: float = 0.0,
) -> None:
    """Say which call of the bot left, and from which of its lines, when what it raised
    stops it (``SystemExit``, ``KeyboardInterrupt``: :func:`stops_the_bot`): the runner
    then stops with the exit code, and "the bot left (exit code 3)" or "interrupted after
    0 of 20 matches" alone named neither the call nor the line (a ``sys.exit`` deep in a
    library, a Ctrl-C in an endless loop: ``took`` says how long that decision ran). Not
    said of a leave in the SDK's own code (the human seat's "quit": the person knows)."""
    site = bot_site(e)
    if site is None:
        return
    at = f"at {Path(site.filename).name}:{site.lineno}, in {site.name}"
    deal = "" if view is None else f"deal {view.deal_number + 1}, {view.phase}"
    if isinstance(e, KeyboardInterrupt):
        ran = f"after {took:.1f} s" if view is not None else ""
        why = ", ".join(w for w in (deal, ran) if w)
        logger.warning("%s%s was interrupted (KeyboardInterrupt) %s%s", where, call, at,
                       f" ({why})" if why else "")  # fmt: skip
    else:
        code = e.code if isinstance(e, SystemExit) else None
        logger.warning("%s%s raised SystemExit(%r) %s%s: the bot leaves", where, call,
                       code, at, f" ({deal})" if deal else "")  # fmt: skip


def _decide(
    bot: Bot,
    view: PlayerView,
    logger: logging.Logger = log,
    *,
    reraise: bool = False,
    deadline: Deadline | None = None,
    match_id: str | None = None,
) -> tuple[Action, str, str, str | None]:
    """Ask ``bot`` for its action; returns ``(action, kind, detail, failed)``.

    ``kind`` is ``"bot"`` when the bot answered with an Action (legal or not: the caller
    judges), ``"error"`` when it raised and ``"malformed"`` when it returned no Action (or
    one with a field of the wrong type, such as ``Play("10♣")``, or a coroutine: the
    method is ``async def``); in both of those cases the action is the referee's fallback
    (``engine.fallback_action``: a pass where legal, else the first legal action), and
    what went wrong is logged, naming the match, the deal (counted from 1, as ``arena
    replay`` does) and the bot's method (``arena-bot`` logs a repeat of the same mistake
    as one shorter line with a count, see ``sdk.cli``). ``detail``: what the bot did when
    its answer was replaced (the detail of a :class:`LocalIncident`: its exception or the
    value it returned, and the fallback); ``failed``: that in a few words
    (:func:`decide_failed`; ``None``: the bot answered).
    ``reraise``: what the bot raised goes on instead, and a malformed answer raises
    ``TypeError`` (for ``strict`` callers; not logged). ``deadline`` becomes
    ``bot.deadline`` for the call; ``match_id`` names the match in the log (default:
    ``bot.match_id``, which an instance shared by several matches cannot tell).
    """
    match_id = match_id or bot.match_id  # (the log's "match m1: ", made only when said)
    tell(bot, "deadline", deadline)
    t0 = time.monotonic()
    forked = forks  # (a global read: os.getpid(), a system call, is not for every decision)
    try:
        action = bot.act(view)
        if forks != forked:  # (named only then: this is every decision's path)
            not_a_fork(bot, _method(bot, view), _where(match_id), logger)
    except BaseException as e:
        where = _where(match_id)
        if forks != forked:
            not_a_fork(bot, _method(bot, view), where, logger, e)
        if stops_the_bot(e):
            head = f"{type(bot).__name__}.{_method(bot, view)}"
            log_leaving(e, head, logger, where, view, time.monotonic() - t0)
            raise
        if reraise:
            raise
        fallback = fallback_action(view.legal_actions)
        # The method as the lines for a wrong answer name it: the bot's ``name`` alone
        # ("raises raised in deal 1") told neither the class nor which method raised.
        head = f"{type(bot).__name__}.{_method(bot, view)}"
        hint = _NO_DEADLINE if deadline is None and _used_deadline(e) else _loop_hint(e)
        logger.error(
            "%s%s raised in deal %d (%s)%s; playing %s instead",
            where, head, view.deal_number + 1, view.phase, hint, fallback,
            exc_info=bot_exc_info(e),
        )  # fmt: skip
        detail = f"{head} raised {_exception(e)}{hint}; played {fallback} instead"
        return fallback, "error", detail, type(e).__name__[:FAILED_MAX]
    for legal in view.legal_actions:  # (most bots answer one of these: nothing to check)
        if legal is action and type(action) in _ENGINE_ACTIONS:
            return action, "bot", "", None
    problem = _not_an_action(action, bot, view)
    if problem is None:  # (a bot's subclass of an action made the engine's: _plain)
        return (action if type(action) in _ENGINE_ACTIONS else _plain(action)), "bot", "", None
    where = _where(match_id)
    head = f"{type(bot).__name__}.{_method(bot, view)}"
    if reraise:
        raise TypeError(f"{head} {problem}")
    fallback = fallback_action(view.legal_actions)
    # A bot that answers wrong does so at every decision: under arena-bot (sdk.cli's
    # filter) the same mistake again (the method, the type of the answer) is this shorter
    # line with a count, as a repeated exception is.
    did = (
        "is `async def`"
        if problem == _ASYNC_DEF
        else "returned a coroutine"
        if inspect.iscoroutine(action)
        else f"returned {_short_repr(action)}"
    )
    when = f" (deal {view.deal_number + 1}, {view.phase}); playing {fallback} instead"
    logger.error(
        "%s%s %s%s", where, head, problem, when,
        extra={"sdk_again": ((head, type(action).__qualname__), f"{where}{head} {did}", when)},
    )  # fmt: skip
    failed = f"no action: {type(action).__name__}"[:FAILED_MAX]
    return fallback, "malformed", f"{head} {problem}; played {fallback} instead", failed


def _where(match_id: str | None) -> str:
    """How a line of the bot's decision names its match ("match m1: "; "" for none)."""
    return f"match {match_id}: " if match_id else ""


#: The longest ``Decision.failed`` the SDK sends (the referee keeps 64 characters).
FAILED_MAX = 64


def _loop_hint(e: BaseException) -> str:
    """Why ``asyncio.get_event_loop()`` failed in a bot's call (Python's words name a
    thread, not the cause), else ""."""
    if isinstance(e, RuntimeError) and str(e).startswith("There is no current event loop"):
        return (
            " (a bot's calls run in worker threads in an arena, which have no event loop, "
            "and arena-bot try runs them so: asyncio.run(...) runs a coroutine to its end)"
        )
    return ""


#: What a bot told of ``self.deadline.left()`` failing on ``None`` is told: the README
#: names ``self.deadline.left()``, and locally, untimed, every decision then raised
#: "'NoneType' object has no attribute 'left'" with no word of why it was ``None``.
_NO_DEADLINE = (
    " (self.deadline is None: local play has no deadline unless timed, arena-bot try "
    "--decision-ms N or play_local(..., decision_ms=N))"
)


def _used_deadline(e: BaseException) -> bool:
    """Whether ``e`` is a use of a ``Deadline``'s attribute on ``None``."""
    return (
        isinstance(e, AttributeError)
        and getattr(e, "obj", 0) is None
        and getattr(e, "name", None) in ("left", "limit_s", "bank_s", "received")
    )


#: What a bot method that is ``async def`` is told (its coroutine is closed, unrun).
_ASYNC_DEF = "is `async def`: bot methods must be plain functions (see docs/writing-a-bot.md)"


def bot_exc_info(
    e: BaseException,
) -> tuple[type[BaseException], BaseException, TracebackType | None]:
    """``exc_info`` for logging what a bot raised, its traceback starting at the bot's own
    code: the SDK's frames before it (the runner, its worker thread, ``Bot.act``'s
    dispatch; five of them for an arena's hook) only bury the line that raised. A
    traceback wholly in the SDK (a bug of its own) is kept whole."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_SDK_DIR):
        tb = tb.tb_next
    return type(e), e, (tb or e.__traceback__)


def _exception(e: BaseException) -> str:
    """``e`` as a log or incident shows it: ``ValueError: boom`` (the type alone when the
    exception has no message). Its ``str()`` is the bot's code: when that fails too, the
    type and that failure (it raised out of the runner, which then left the decision
    unanswered in an arena and stopped ``arena-bot try`` with the SDK's traceback)."""
    try:
        text = str(e)
    except Exception as err:
        return f"{type(e).__name__} (its str() raised {_exception(err)})"
    if len(text) > _EXCEPTION_MAX:  # (kept in every incident: megabytes each, per decision)
        text = f"{text[:_EXCEPTION_MAX]}… ({len(text) - _EXCEPTION_MAX:,} more characters)"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


#: The longest exception message an incident or a ``strict`` error quotes.
_EXCEPTION_MAX = 1000


def _short_repr(value: object, limit: int = 100) -> str:
    """``repr(value)``, cut to ``limit`` characters (a bot's answer can be a huge list).
    A ``repr`` of the bot's own that fails is said as such (see :func:`_exception`)."""
    try:  # (a card as Card.C10, not <Card.C10: 10>)
        text = f"Card.{value.name}" if isinstance(value, Card) else repr(value)
    except Exception as err:
        text = f"<a {type(value).__qualname__}, whose repr() raised {_exception(err)}>"
    if isinstance(value, (list, tuple)) and value and all(isinstance(a, Action) for a in value):
        # In the notation the logs use ("play 9♠"), not the dataclasses' long reprs.
        brackets = "[]" if isinstance(value, list) else "()"  # (a subclass's repr has others)
        text = f"{brackets[0]}{', '.join(map(str, value))}{brackets[1]}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: The type each field of an action must have, and its name in a message (``bool`` is no
#: amount or seat).
_FIELD_TYPES: dict[str, tuple[type, str]] = {
    "amount": (int, "an int"),
    "to": (int, "an int"),
    "card": (Card, "a Card"),
    "declare": (bool, "a bool"),
}


def _not_an_action(
    action: object, bot: Bot | None = None, view: PlayerView | None = None
) -> str | None:
    """What is wrong with a bot's answer as an action ("returned None, which is not an
    Action"), or ``None`` if it is one. A coroutine (the method is ``async def``) is
    closed: it will never run, and Python would warn that it was never awaited. One that a
    plain method of ``bot`` returned for ``view`` (it called an ``async def`` of the
    bot's without awaiting it) is named as that function's: "is `async def`" would send
    the author to a method that is not. (The method is found only then, as the bot and
    the view are passed: this is every decision's path.)"""
    if not isinstance(action, Action):
        if inspect.iscoroutine(action):
            code = getattr(action, "cr_code", None)
            action.close()
            method = "" if bot is None or view is None else _method(bot, view)
            method = method.partition("(")[0]  # ("play() (mine.py:12)": play)
            name = getattr(code, "co_name", method)
            if name == method or code is None:
                return _ASYNC_DEF
            at = f"{Path(code.co_filename).name}:{code.co_firstlineno}"
            return (
                f"returned the coroutine of `async def {name}` ({at}), which is not an "
                "Action and was never run: bot methods must be plain functions and return "
                f"the action (asyncio.run({name}(...)) runs one to its end)"
            )
        return f"returned {_short_repr(action)}, which is not an Action{_hint(action)}"
    kind = type(action)
    fields = _FIELDS_OF.get(kind)
    if fields is None:  # once per class: this runs at every decision
        # (the engine's class's fields: a bot's subclass with a field of its own raised
        # KeyError here, out of the decision, though its play is the engine's, _plain)
        fields = _FIELDS_OF[kind] = tuple(
            (f.name, *_FIELD_TYPES[f.name]) for f in dataclasses.fields(_engine_class(kind))
        )
    for name, want, words in fields:
        value = getattr(action, name)
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            return (
                f"returned {_short_repr(action)}, which is no action: its {name} must be {words}, "
                f"not {type(value).__name__}{_field_hint(name, value)}"
            )
    return None


def _field_hint(name: str, value: object) -> str:
    """What a field written as text (or a whole float) should have been, when it reads as
    one: ``Play("9♦")`` was told its card "must be a Card, not str", and not what the
    bare answer ``"9♦"`` is told, how to make one."""
    if name == "card" and isinstance(value, str):
        try:
            parse_card(value)
        except ValueError:
            return ""
        return f": sdk.parse_card({_short_repr(value)}) is the card"
    number = value if isinstance(value, float) else None
    if isinstance(value, str) and value.strip().isdecimal():
        number = float(value)
    if name in ("amount", "to") and number is not None and number.is_integer():
        return f": write {int(number)}"
    return ""


#: The engine's own action classes, which it judges by (a subclass of one is none of them).
_ENGINE_ACTIONS = frozenset((Bid, Pass, Give, Contract, Concede, ThrowIn, Play))

#: Each action class met (the engine's, and a bot's subclasses of them) to the engine's.
_PLAIN: dict[type, type] = {t: t for t in _ENGINE_ACTIONS}


def _plain(action: Action) -> Action:
    """``action`` as the engine's own class: a bot's subclass of ``Play`` (one with a
    method or a field of its own) is the same play, as it is over the wire to an arena;
    the engine judged it by its class, refused a legal card and then failed itself."""
    kind = type(action)
    base = _engine_class(kind)
    if base is kind:
        return action
    plain: Action = base(**{f.name: getattr(action, f.name) for f in dataclasses.fields(base)})
    return plain


def _engine_class(kind: type) -> type:
    """The engine's action class that ``kind`` (an Action's class) is or subclasses."""
    base = _PLAIN.get(kind)
    if base is None:  # once per subclass
        base = _PLAIN[kind] = next(t for t in kind.__mro__ if _PLAIN.get(t) is t)
    return base


def _hint(answer: object) -> str:
    """What the bot likely meant by an answer that is no Action, when it is plain: several
    actions (``view.legal_actions`` itself, a filtered list), an action's notation, the
    card or the amount of one ("returned Card.C10" and "returned 120" said what was
    wrong, not what to return), or a generator (a ``yield`` in the method)."""
    if isinstance(answer, Card):
        return f": a Card; return Play(card) to play it ({Play(answer)})"
    if type(answer) is int:
        return f": an int; return Bid({answer}) to bid it, Contract({answer}) to name the contract"
    if inspect.isgenerator(answer):
        return ": a generator (the method has a `yield`); return the action instead"
    if isinstance(answer, (list, tuple, set, frozenset)) and answer:
        if all(isinstance(a, Action) for a in answer):
            return f": a {type(answer).__name__} of {len(answer)} actions; return one of them"
    elif isinstance(answer, str):
        try:
            meant = parse_action(answer)
        except ValueError:
            # A card's notation ("A♠", a card's str()) is as plain a slip as the Card.
            try:
                card = parse_card(answer)
            except ValueError:
                return ""
            text = _short_repr(answer)
            return f": a str, a card's notation; return Play(sdk.parse_card({text})) ({Play(card)})"
        # (Cut as the answer is: parse_action reads "play 9h" and a million spaces.)
        return f": a str; sdk.parse_action({_short_repr(answer)}) is the action {meant}"
    return _look_alike(answer)


#: The engine's actions that have fields, which a look-alike can have too.
_WITH_FIELDS = (Play, Give, Bid, Contract)


def _look_alike(answer: object) -> str:
    """What to return instead of a namedtuple, dict or object of the bot's own that has
    the fields of an action (a ``card`` and a ``declare``): "which is not an Action" alone
    left the author wondering why an answer equal in every field to a legal play was
    refused. Only the engine's classes (or subclasses of them) are actions, locally as
    over the wire; "" when ``answer`` is shaped like none."""
    values: dict[Any, Any]
    try:
        if isinstance(answer, Mapping):
            values = dict(answer)
        elif isinstance(answer, tuple) and hasattr(answer, "_asdict"):  # a namedtuple
            values = dict(answer._asdict())
        elif dataclasses.is_dataclass(answer) and not isinstance(answer, type):
            values = {f.name: getattr(answer, f.name) for f in dataclasses.fields(answer)}
        else:
            values = dict(getattr(answer, "__dict__", None) or {})
    except Exception:  # (the bot's own mapping or attributes: anything may raise)
        return ""
    meant: list[Action] = []
    for kind in _WITH_FIELDS:
        fields = dataclasses.fields(kind)
        names = {f.name for f in fields}
        needed = {f.name for f in fields if f.default is dataclasses.MISSING}
        if not values.keys() <= names or not needed <= values.keys():
            continue
        action = kind(**values)
        if _not_an_action(action) is None:  # (its fields of the right types)
            meant.append(action)
    if not meant:
        return ""
    said = " or ".join(f"{type(a).__name__}(...) ({a})" for a in meant)
    return (
        f": a {type(answer).__name__} with the fields of an action, which is none (only "
        f"the engine's action classes are); return {said}, one of view.legal_actions"
    )


_FIELDS_OF: dict[type, tuple[tuple[str, type, str], ...]] = {}


_PHASE_METHODS = {
    Phase.BIDDING: "bid",
    Phase.PASSING: "give",
    Phase.CONTRACT: "contract",
    Phase.PLAYING: "play",
}


def _method(bot: Bot, view: PlayerView) -> str:
    """The method of ``bot`` that answered ``view``, with where it is defined: ``act()`` if
    the bot overrides it, else the phase method ``Bot.act`` dispatches to."""
    return method_of(bot, view.phase)


def method_of(bot: Bot, phase: Phase) -> str:
    """:func:`_method` for a view in ``phase`` (``"play() (mine.py:12)"``)."""
    # A method set on the instance (``self.play = functools.partial(...)`` or another
    # object's bound method in ``__init__``) is the one called: the class's was the SDK's
    # own default, named as "Mine.play() (bot.py:146)", or the phase method when it was
    # an instance's ``act`` that answered.
    own = getattr(bot, "__dict__", {})
    name = "act" if overrides(bot, "act") else _PHASE_METHODS.get(phase, "act")
    f = _callee(own[name] if name in own else getattr(type(bot), name, None))
    code = getattr(inspect.unwrap(f) if callable(f) else f, "__code__", None)
    if code is None:
        return f"{name}()"
    return f"{name}() ({Path(code.co_filename).name}:{code.co_firstlineno})"


def tell(bot: Bot, attr: str, value: object) -> None:
    """Set the runner's own attribute ``attr`` of ``bot`` (``match_id``, ``deadline``), past
    a ``__setattr__`` that refuses it: a frozen ``@dataclass`` bot (its fields its settings)
    raised ``FrozenInstanceError`` there, which crashed ``arena-bot try`` with the runner's
    traceback and, in an arena, made no bot for any match (every one forfeited)."""
    try:
        setattr(bot, attr, value)
    except Exception:
        object.__setattr__(bot, attr, value)


def overrides(bot: object, hook: str) -> bool:
    """Whether ``bot`` has its own ``hook`` (the base class's do nothing: skip them)."""
    own = getattr(bot, "__dict__", ())
    return getattr(type(bot), hook, None) is not getattr(Bot, hook) or hook in own


#: What the runners call on a bot, and the arguments each call passes (besides ``self``).
CALLS: dict[str, tuple[str, ...]] = {
    "act": ("view",),
    "bid": ("view",),
    "give": ("view",),
    "contract": ("view",),
    "play": ("view",),
    "on_match_start": ("view",),
    "on_action": ("view", "seat", "action"),
    "on_talon_taken": ("view", "declarer", "talon"),
    "on_deal_end": ("view", "result"),
    "on_match_end": ("view", "result"),
}
#: The hooks a runner calls (those a bot does not override are not called).
HOOKS = tuple(c for c in CALLS if c.startswith("on_"))


def async_methods(bot: object, *, qualified: bool = False) -> str | None:
    """What is wrong when methods of ``bot`` (a Bot subclass or instance) that the runners
    call are ``async def`` (``play() (mine.py:12) is `async def`: ...``; ``qualified``:
    ``Mine.play()``), else ``None``. Found where the bot is loaded or given: a coroutine
    is never run, so every decision was the fallback and every hook a failure, said only
    as each was played (the docs describe no async form: a plain method runs what it
    awaits with ``asyncio.run``)."""
    cls = bot if isinstance(bot, type) else type(bot)
    own = {} if isinstance(bot, type) else getattr(bot, "__dict__", {})
    own_act = getattr(cls, "act", None) is not Bot.act or "act" in own
    found = []
    for name in CALLS:
        if own_act and name in _PHASE_METHODS.values():
            continue  # (not called: a bot with its own act is not asked them)
        method = own[name] if name in own else getattr(cls, name, None)
        if method is None or method is getattr(Bot, name):
            continue
        if _is_async(method):
            said = f"{name}()" if name in own else _defined(cls, name)
            found.append((name, f"{cls.__name__}.{said}" if qualified else said))
    if not found:
        return None
    if len(found) == 1:
        name, said = found[0]
        verb, fix = "is", f"write it `def {name}`, and run what it awaits"
    else:
        said = ", ".join(s for _, s in found[:-1]) + f" and {found[-1][1]}"
        verb, fix = "are", "write them with `def`, and run what they await"
    return (
        f"{said} {verb} `async def`: the runners call a bot's methods as plain functions, "
        f"so a coroutine would never run; {fix} to its end with "
        "asyncio.run(...) (see docs/writing-a-bot.md, Awaiting in a decision)"
    )


def _callee(method: object) -> object:
    """The function that a call of ``method`` runs: that of a bound, static or class method,
    of a ``functools.partial`` or ``partialmethod``, or an object's ``__call__`` (a hook
    given as an object); a decorator's wrapper is itself (see :func:`_is_async`)."""
    if inspect.isfunction(method):  # (a partialmethod, as a class gives it: its attribute
        # named ``_partialmethod`` up to Python 3.12, ``__partialmethod__`` from 3.13)
        method = getattr(method, "__partialmethod__", getattr(method, "_partialmethod", method))
    while isinstance(method, partial | partialmethod):
        method = method.func
    if callable(method) and not (inspect.isroutine(method) or isinstance(method, type)):
        method = type(method).__call__  # (an object's: its own function)
    return method


def _is_async(method: object) -> bool:
    """Whether calling ``method`` as the runners do makes a coroutine or an async generator
    that nothing runs (an ``async def``, in any of :func:`_callee`'s forms). A decorator's
    plain ``def`` wrapper is plain: it may run the ``async def`` to its end itself
    (``asyncio.run``), or return its coroutine (told at play time)."""
    f = _callee(method)
    return inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f)


def method_mistakes(bot: Bot) -> tuple[list[str], list[str]]:
    """What is wrong with the methods of ``bot``'s class, found before it plays.

    Errors: a method the runners call that cannot take what they pass (``def
    play(self)``, ``def on_deal_end(self, view)``): it raised ``TypeError`` at every call,
    and the traceback and the repeats named the SDK's line that called it, not the bot's.
    Warnings: a public method that looks meant for the runners but that they never call
    (``def Play``, ``def plays``, ``def on_deal_ended``, ``def on_trick_end``): the bot
    played ``Bot``'s defaults, and nothing said so. A bot with its own ``act`` is not
    asked the phase methods: a ``play`` of its own is its helper, whatever it takes."""
    cls = type(bot)
    own: Mapping[str, object] = getattr(bot, "__dict__", {})
    own_act = overrides(bot, "act")  # (on the class, or set in __init__)
    coroutines = async_methods(bot, qualified=True)
    errors: list[str] = [] if coroutines is None else [coroutines]
    for name, args in CALLS.items():
        if not overrides(bot, name) or (own_act and name in _PHASE_METHODS.values()):
            continue
        if coroutines is not None and f"{cls.__name__}.{name}()" in coroutines:
            continue  # (said above: its signature is not the mistake)
        try:
            signature = inspect.signature(getattr(bot, name))
        except (TypeError, ValueError):  # no signature to read (a builtin): it will tell
            continue
        try:
            signature.bind(*args)
        except TypeError:
            if name in own:  # (set in __init__: the class's is not the one called)
                errors.append(
                    f"{cls.__name__}.{name}, set on the bot to {_named(own[name])}, takes "
                    f"{signature}, but the runners call it as {name}({', '.join(args)})"
                )
                continue
            with contextlib.suppress(TypeError, ValueError):  # as written: with its self
                signature = inspect.signature(getattr(cls, name))
            errors.append(
                f"{cls.__name__}.{_defined(cls, name)} is def {name}{signature}, but the "
                f"runners call it as {name}({', '.join(args)})"
            )
    warnings: list[str] = []
    for name in dir(cls):
        if name.startswith("_") or name in CALLS or hasattr(Bot, name):
            continue
        if not callable(getattr(cls, name, None)):
            continue
        meant = difflib.get_close_matches(name.lower(), CALLS, n=1, cutoff=0.85)
        if not meant and not name.startswith("on_"):
            continue
        hint = (
            f"did you mean {meant[0]}()?"
            if meant
            else f"the hooks are {', '.join(f'{h}()' for h in HOOKS)}"
        )
        warnings.append(
            f"{cls.__name__}.{_defined(cls, name)} is never called by the runners: {hint}"
        )
    warnings += _shared_state(cls, own)
    return errors, warnings


#: Containers that a bot fills as it plays: one on the class is every match's.
_MUTABLE = (list, dict, set, bytearray, collections.deque)


def _shared_state(cls: type, own: Mapping[str, object]) -> list[str]:
    """Warnings for the mutable containers on the bot's classes (``seen = []`` in the class
    body): a new instance is made for every match, but they all share such an attribute,
    so one match's state leaks into the next (and matches played at once mix theirs), and
    a series plays differently from its matches played alone. A name in capitals is taken
    as a constant table, shared on purpose; one of ``own`` (a made instance's attributes:
    ``self.seen = []`` in ``__init__``) is only declared on the class, each instance has
    its own."""
    out = []
    for klass in cls.__mro__:
        if klass is Bot or not issubclass(klass, Bot):
            continue
        for name, value in vars(klass).items():
            if name.startswith("__") or name.isupper() or not isinstance(value, _MUTABLE):
                continue
            if name in own:
                continue
            kind = type(value).__name__
            made = {"list": "[]", "dict": "{}", "set": "set()"}.get(kind, f"{kind}(...)")
            out.append(
                f"{klass.__name__}.{name} is a {kind} on the class ({_where_class(klass)}): "
                "every match's instance of the bot shares it, so what one match puts in it "
                f"is there in the next: make it in __init__ (self.{name} = {made}), or name "
                "it in capitals if it is a constant meant to be shared"
            )
        out += _shared_defaults(klass)
    return out


def _shared_defaults(klass: type) -> list[str]:
    """Warnings for the mutable defaults of ``klass``'s own ``__init__`` (``def
    __init__(self, seen=[])``): the runners make every match's bot with no arguments, so
    every instance gets that one container, as with one on the class."""
    init = vars(klass).get("__init__")
    if init is None or not callable(init):
        return []
    try:
        params = inspect.signature(init).parameters.values()
    except (TypeError, ValueError):
        return []
    # (a constant table named in capitals, in the bot's module or on the class, given as the
    # default, `def __init__(self, weights=WEIGHTS)`, is shared on purpose, as on the class)
    module = getattr(inspect.unwrap(init), "__globals__", None)
    tables = [*(module.items() if isinstance(module, dict) else ()), *vars(klass).items()]
    constants = {id(v) for k, v in tables if k.isupper() and isinstance(v, _MUTABLE)}
    out = []
    for param in params:
        if not isinstance(param.default, _MUTABLE) or id(param.default) in constants:
            continue
        kind = type(param.default).__name__
        made = {"list": "[]", "dict": "{}", "set": "set()"}.get(kind, f"{kind}(...)")
        out.append(
            f"{klass.__name__}.{_defined(klass, '__init__')} gives {param.name} a {kind} "
            "as its default: the bot is made with no arguments for every match, so every "
            "match's instance shares that one, and what one match puts in it is there in "
            f"the next: default it to None and make it in __init__ (self.{param.name} = "
            f"{made} if {param.name} is None else {param.name})"
        )
    return out


def _where_class(cls: type) -> str:
    """``"mine.py:7"``: where class ``cls`` is defined, as far as Python knows."""
    with contextlib.suppress(TypeError, OSError):
        _, first = inspect.getsourcelines(cls)
        return f"{Path(inspect.getfile(cls)).name}:{first}"
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    return Path(path).name if path else cls.__module__


def _defined(cls: type, name: str) -> str:
    """``"play() (mine.py:12)"``: method ``name`` of ``cls`` and where it is defined."""
    return _named(getattr(cls, name), name)


def _named(method: object, name: str | None = None) -> str:
    """``"decide() (mine.py:12)"``: the function a call of ``method`` runs and where it is
    defined, called ``name`` (else by its own name; ``"a functools.partial"`` when it has
    no code to name)."""
    f = _callee(method)
    code = getattr(inspect.unwrap(f) if callable(f) else f, "__code__", None)
    if code is None:
        return f"{name}()" if name is not None else f"a {type(method).__qualname__}"
    return f"{name or code.co_name}() ({Path(code.co_filename).name}:{code.co_firstlineno})"


def not_a_fork(
    bot: Bot, call: str, where: str, logger: logging.Logger = log, exc: BaseException | None = None
) -> None:
    """Ends a child the bot forked in a call (``os.fork()`` and no ``os._exit`` in the
    child) as it comes back from the call (called only then: when :data:`forks` grew
    during the call, see :func:`fork_count`): locally it played
    the rest of the series as a second copy (`arena-bot try` printed its table twice, and
    blamed the fork's reseeding of the random module on the bot); in an arena's runner it
    hung for ever, a thread of a process with no others, deaf to SIGTERM. A child leaving
    by ``sys.exit(n)`` (``exc``, what the call raised) ends with its code and no line: it
    was ended with 0 and said to have come back."""
    if isinstance(exc, SystemExit):  # the child left as it asked, with its code (not 0)
        code = exc.code
        with contextlib.suppress(Exception):
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)  # (as Python says a sys.exit("text"))
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
        os._exit(code if isinstance(code, int) else 0 if code is None else 1)
    with contextlib.suppress(Exception):
        logger.error(
            "%s%s.%s forked, and the child (pid %d) came back from the call into the "
            "match: it is ended there (a child the bot forks must end itself, os._exit)",
            where, type(bot).__name__, call, os.getpid(),
        )  # fmt: skip
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    os._exit(0)


#: How many times Python forked this process into the child it is (``os.fork()``,
#: multiprocessing's "fork"): read before and after each of a bot's decisions, a child the
#: bot forked coming back from one sees it grown (:func:`not_a_fork`). A global, where
#: ``os.getpid()`` read twice per decision (a system call each) doubled the SDK's own cost
#: of one. (A fork Python does not see, a C library's, is not counted: such a child runs
#: no Python.)
forks = 0


def _forked() -> None:
    global forks
    forks += 1


def fork_count() -> int:
    """:data:`forks` now, for another module (an import of the name would copy it): read
    before and after a bot's call, and if it grew the call returned into a forked child."""
    return forks


if hasattr(os, "register_at_fork"):  # (Windows has no fork)
    os.register_at_fork(after_in_child=_forked)


def hook_view(view: PlayerView) -> PlayerView:
    """``view`` as a hook gets it: without legal actions (a hook answers nothing)."""
    return dataclasses.replace(view, legal_actions=()) if view.legal_actions else view


def _hook(bot: Bot, fn: Callable[[], object], what: str) -> tuple[str, BaseException] | None:
    """Run a hook; if it failed, what happened and the exception (what it raised, logged
    with the traceback, or a ``TypeError`` when the hook is ``async def``)."""
    tell(bot, "deadline", None)  # hooks are not timed: not the last decision's, spent one
    # (The match, as a raising hook's line and an arena's runner name it.)
    where, forked = f"match {bot.match_id}: ", forks
    try:
        problem = hook_result(bot, what, fn(), log, where)
        if forks != forked:  # (named only then: every hook's path)
            not_a_fork(bot, _defined(type(bot), what), where)
    except BaseException as e:
        if forks != forked:
            not_a_fork(bot, _defined(type(bot), what), where, exc=e)
        if stops_the_bot(e):
            log_leaving(e, f"{type(bot).__name__}.{what}()", log, f"match {bot.match_id}: ")
            raise
        # The match, as an arena runner's line says: a series plays many.
        # The class, as the lines for a decision name it (a bot's ``name`` may be anyone's).
        log.error("%s raised in %s (match %s)", type(bot).__name__, what, bot.match_id,
                  exc_info=bot_exc_info(e))  # fmt: skip
        return f"raised in {what}: {_exception(e)}", e
    return None if problem is None else (problem, TypeError(problem))


def hook_result(
    bot: Bot, what: str, result: object, logger: logging.Logger, where: str = ""
) -> str | None:
    """What is wrong with ``result``, returned by hook ``what`` of ``bot`` (logged), or
    ``None``. Only a coroutine is: the hook is ``async def`` and never ran (the coroutine
    is closed, so that Python does not warn that it was never awaited)."""
    if not inspect.iscoroutine(result):
        return None
    result.close()
    head = f"{type(bot).__name__}.{_defined(type(bot), what)}"
    again = ((head, "coroutine"), f"{where}{head} is `async def`", "")
    logger.error("%s%s %s", where, head, _ASYNC_DEF, extra={"sdk_again": again})
    return f"{head} {_ASYNC_DEF}"


def _tell_bank(
    bot: Bot, view: PlayerView, used: float, limit_ms: int, paid_ms: int, left_ms: int
) -> None:
    """Warn that a decision went over its limit, so used the match's time bank (as
    ``sdk.client`` warns in an arena, once per match)."""
    log.warning(
        "match %s: a decision took %.0f ms (deal %d, %s: %s.%s), over the limit of %d ms: "
        "the time bank paid %d ms, %d ms of it left for the match. Past the limit and the "
        "bank it is a timeout (an arena plays its fallback and counts a strike; said once "
        "per match)",
        bot.match_id, used * 1000, view.deal_number + 1, view.phase, type(bot).__name__,
        _method(bot, view), limit_ms, paid_ms, left_ms,
    )  # fmt: skip


def _asked(bot: Bot, view: PlayerView) -> str:
    """A decision being asked, as the log names it: "match local-0-1: Mine.play()
    (mine.py:12) (deal 2, playing)"."""
    return (
        f"match {bot.match_id}: {type(bot).__name__}.{_method(bot, view)} "
        f"(deal {view.deal_number + 1}, {view.phase})"
    )


def _limits(decision_ms: int | None, time_bank_ms: int | None) -> tuple[int, int] | None:
    """``(decision_ms, time_bank_ms)`` for a timed local match, ``None`` for an untimed
    one; a value the arena would refuse raises ``ValueError``, naming it."""
    if decision_ms is None:
        if time_bank_ms is not None:
            raise ValueError("time_bank_ms needs decision_ms (the time of one decision)")
        return None
    bank = DEFAULT_TIME_BANK_MS if time_bank_ms is None else time_bank_ms
    for what, value, low in (("decision_ms", decision_ms, 1), ("time_bank_ms", bank, 0)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{what} must be a whole number of ms, not {value!r}")
        problem = deadline_problem(value, low)
        if problem is not None:
            raise ValueError(f"{what} {problem}")
    return decision_ms, bank


def _timed_out(
    bot: Bot,
    view: PlayerView,
    used: float,
    limit_ms: int,
    bank_ms: int,
    strict: bool,
    seat: int,
    waited: float = 0.0,
) -> str:
    """A decision answered past its deadline: logged (or, ``strict``, raised); the
    incident's detail. Words as the referee's (its timeout incident), with the time taken
    (``used``: since the request came, ``waited`` of it for the previous call to end)."""
    fallback = fallback_action(view.legal_actions)
    head = f"{type(bot).__name__}.{_method(bot, view)}"
    # Rounded up: a decision 0.4 ms past a 250 ms deadline "took 251 ms", not "250 ms,
    # past its deadline of 250 ms" (a timeout is at or past the deadline, never before).
    ms = math.ceil(used * 1000)
    took = f"{head} took {ms} ms"
    if waited > 0:  # (the call itself took less: the request waited for the one before)
        took += f" (the request waited {math.ceil(waited * 1000)} ms for the previous call)"
    within = timeout_words(limit_ms, bank_ms)
    if strict:
        raise RuntimeError(
            f"{bot.name} (seat {seat}) timed out in deal {view.deal_number + 1}: {within}: {took}"
        )
    where = f"match {bot.match_id}: "
    when = f" (deal {view.deal_number + 1}, {view.phase}); playing {fallback} instead"
    # A bot too slow is so at every decision (its bank is empty after the first timeout):
    # under arena-bot the same method timing out again is one short line with a count.
    again = ((head, "timeout"), f"{where}{head} timed out ({ms} ms)", when)
    log.warning(
        "%s%s, past its deadline of %d ms (%d ms + %d ms of time bank): its answer is not "
        "used, as an arena would not have waited for it (locally the call cannot be cut "
        "off)%s",
        where, took, limit_ms + bank_ms, limit_ms, bank_ms, when, extra={"sdk_again": again},
    )  # fmt: skip
    return f"{within}: {took}; played {fallback} instead"


def _busy(bot: Bot, view: PlayerView, limit_ms: int, bank_ms: int) -> str:
    """A decision that came while the seat's previous call, which had timed out, still
    ran, and that expired before it ended: an arena's runner does not ask the bot (its
    answer would be late), the referee plays the fallback. Logged; the incident's detail."""
    fallback = fallback_action(view.legal_actions)
    head = f"{type(bot).__name__}.{_method(bot, view)}"
    within = timeout_words(limit_ms, bank_ms)
    where = f"match {bot.match_id}: "
    when = f" (deal {view.deal_number + 1}, {view.phase}); playing {fallback} instead"
    again = ((head, "busy"), f"{where}{head} not asked: still busy", when)
    log.warning(
        "%s%s not asked: the previous decision, which had timed out, still ran when this "
        "one came and until this one had timed out too (%s): an arena asks a match's "
        "decisions one at a time, and would not ask it%s",
        where, head, within, when, extra={"sdk_again": again},
    )  # fmt: skip
    return f"{within}: the bot was still busy with its previous decision; played {fallback} instead"


def _own_name(bot: Bot) -> str:
    """The name a bot gives itself; its class's when that is no text (``name = 5``, or a
    subclass whose ``__init__`` skipped Bot's): as ``arena-bot run`` names it. The match
    refused such a name with a traceback (``players must be names``)."""
    name = getattr(bot, "name", "")
    return name if isinstance(name, str) and name else type(bot).__name__


def _names(bots: Sequence[Bot], names: Sequence[str] | None) -> tuple[str, ...]:
    if names is not None:
        return tuple(names)
    out: list[str] = []
    for b in bots:
        base = _own_name(b)
        name, k = base, 2
        while name in out:
            name, k = f"{base}#{k}", k + 1
        out.append(name)
    return tuple(out)


class _SlowCallWatch:
    """See :func:`watch_slow_calls`: the call a local match waits for, and a thread that
    says so once when it has run ``after_s`` seconds."""

    def __init__(self, after_s: float, why: str) -> None:
        self.after_s, self.why = after_s, why
        #: (number, when it started, what it is) of the call under way; None between calls.
        self.call: tuple[int, float, Callable[[], str]] | None = None
        self._n = 0
        self._mark = _random_mark()
        #: The methods (class, name) said to have used the random module's generator.
        self._drew: set[tuple[type, str]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="sdk-slow-call")

    def started(self, what: Callable[[], str]) -> None:
        self._n += 1
        self.call = (self._n, time.monotonic(), what)
        self._mark = _random_mark()

    def ended(self, key: tuple[type, str]) -> None:
        """The call started last returned (or raised): ``key``, the bot's class and its
        method, drew from the random module's own generator in it (said once per key)."""
        call, self.call = self.call, None
        if call is None or _random_mark() == self._mark or key in self._drew:
            return
        self._drew.add(key)
        log.warning("%s used the random module's shared generator (random.choice, "
                    "random.random, ...): the same --seed will not play its matches again, "
                    "and in an arena every match the bot plays at once draws from it; keep "
                    "a random.Random(seed) of the bot's own instead (see "
                    "docs/writing-a-bot.md, 5); said once", call[2]())  # fmt: skip

    def _watch(self) -> None:
        told = 0
        while not self._stop.wait(min(0.25, self.after_s)):
            call = self.call
            if call is None or call[0] == told or time.monotonic() - call[1] < self.after_s:
                continue
            told = call[0]
            log.warning("%s has run for %.1f s and not returned%s; a local match waits for it "
                        "(Ctrl-C stops it, naming the line the bot is at)",
                        call[2](), time.monotonic() - call[1], self.why)  # fmt: skip


_watching: _SlowCallWatch | None = None


def _random_mark() -> tuple[int, int, float | None]:
    """A mark of the random module's generator that any use changes: its position, a word
    of its state (changed when the position wraps) and its cached gauss. (Two tuple items,
    not the whole state: compared after every call of a bot under ``arena-bot try``.)"""
    _version, words, gauss = random.getstate()
    return words[-1], words[1], gauss


@contextlib.contextmanager
def watch_slow_calls(after_s: float, why: str = "") -> Iterator[None]:
    """While in it, a bot's call in a local match (a decision or a hook) that has run
    ``after_s`` seconds is logged once, naming the match, the call and the deal (``why``
    is added after "and not returned"). A bot in an endless loop kept ``arena-bot try``
    silent for ever: a local match cannot cut a call off (an arena plays its fallback at
    the deadline), so it waited, saying nothing."""
    global _watching
    watch = _SlowCallWatch(after_s, why)
    _watching = watch
    watch._thread.start()
    try:
        yield
    finally:
        _watching = None
        watch._stop.set()


def _local_id(seed: int | str) -> str:
    """The id of a local match of ``seed``: ``local-<seed>``, a negative seed written
    ``minus<n>`` (``local--1-0``, seed -1's first match of ``arena-bot try``, read as a dash
    too many, and split at its dashes it was a seed "" and a rotation 1; also the name of
    its ``--records`` file).

    >>> _local_id(7), _local_id(-12), _local_id("abc")
    ('local-7', 'local-minus12', 'local-abc')
    """
    if isinstance(seed, int) and not isinstance(seed, bool) and seed < 0:
        return f"local-minus{-seed}"
    return f"local-{seed}"


def play_local(
    bots: Sequence[BotFactory | Bot],
    ruleset: str | Path | Ruleset = "classic",
    seed: int | str = 0,
    max_deals: int | None = None,
    *,
    names: Sequence[str] | None = None,
    strict: bool = False,
    match_id: str | None = None,
    decision_ms: int | None = None,
    time_bank_ms: int | None = None,
    timed_seats: Collection[int] | None = None,
) -> LocalMatch:
    """Play one match in-process, one bot per seat; returns the record and result.

    ``bots``: one class/factory (a fresh bot is made) or instance per seat.
    ``ruleset``: a preset name, a TOML path or a :class:`~engine.Ruleset`; ``max_deals``
    caps the match. An illegal answer is logged, recorded as an incident and replaced by
    the referee's fallback (a pass where legal, else the first legal action); with
    ``strict=True`` it raises the engine's :class:`~engine.IllegalActionError` instead (for
    tests), and a bot that raises (in ``act`` or a hook) or answers no Action is a
    ``RuntimeError`` whose ``__cause__`` is the bot's exception. ``match_id`` becomes the
    bots' ``match_id`` (default ``"local-<seed>"``; :func:`play_series` names each of its
    matches ``"local-<seed>-<rotation>"``; a negative seed is written ``minus7``:
    :func:`_local_id`).

    ``decision_ms`` (with ``time_bank_ms``, default 10000 as in ``arena serve``; the names
    of the arena's and a tournament's settings) times the decisions as the referee does:
    each gets ``bot.deadline``, a :class:`~sdk.Deadline` with the limit and what is left
    of the seat's bank; time over the limit comes off the bank (whole milliseconds), and a
    decision that takes ``decision_ms`` + the bank or longer is a timeout: its answer is
    not used, the fallback is played, the bank is emptied, a ``"timeout"`` incident is
    recorded and logged (with ``strict=True``: a ``RuntimeError``). The call cannot be
    cut off: the match waits for it. Only the decision call is timed (in an arena a hook
    still running when the next request comes delays that answer too). ``timed_seats``:
    the seats timed (default: all; it needs ``decision_ms``). Without ``decision_ms``, no
    deadline (``bot.deadline`` is ``None``) and no timeouts.
    """
    if isinstance(bots, str) or not isinstance(bots, Sequence):
        raise TypeError(f"play_local takes a list of bots, one per seat, got {_short_repr(bots)}")
    for i, b in enumerate(bots):
        problem = factory_problem(b)
        if problem is not None:
            raise TypeError(f"play_local: the bot of seat {i} is {problem}")
    if names is not None:
        # (A string was split into one-letter names, "abc" naming the seats a, b, c; a list
        # of the wrong length was refused as "ruleset 'classic' is for 3 players, got 1")
        if isinstance(names, str) or not isinstance(names, Sequence):
            raise TypeError(
                f"play_local: names must be a list of names, one per seat, got {_short_repr(names)}"
            )
        if len(names) != len(bots):
            raise ValueError(
                f"play_local: {len(names)} names for {len(bots)} bots: give one name per seat"
            )
    limits = _limits(decision_ms, time_bank_ms)
    limit_ms = limits[0] if limits is not None else 0
    if timed_seats is not None:
        # (Refused, as time_bank_ms alone is: ignored, it would look like a timed match; a
        # bare seat number would fail on "'int' object is not iterable")
        if limits is None:
            raise ValueError("timed_seats needs decision_ms (the time of one decision)")
        if isinstance(timed_seats, str) or not isinstance(timed_seats, Collection):
            raise ValueError(
                f"timed_seats must be a collection of seat numbers, got {timed_seats!r}"
            )
    rules = resolve_ruleset(ruleset, max_deals, len(bots))
    if len(bots) != rules.players:
        raise ValueError(f"ruleset {rules.name!r} needs {rules.players} bots, got {len(bots)}")
    players = []
    for b in bots:
        try:
            players.append(make_bot(b))
        except BaseException as e:
            if stops_the_bot(e):
                raise
            what = getattr(b, "__name__", repr(b))
            raise BotMakeError(
                f"making the bot {what} for match {match_id or _local_id(seed)} raised "
                f"{_exception(e)}"
            ) from e
    seat_names = _names(players, names)
    for bot in players:
        tell(bot, "match_id", match_id or _local_id(seed))
    game = Game.new(rules, seed, seat_names)
    incidents: list[LocalIncident] = []
    chosen: list[tuple[str, bool]] = []  # per action: LocalMatch.chosen
    # Per seat: what is left of its time bank (ms), None for a seat not timed.
    bank: list[int | None] = [None] * len(players)
    if limits is not None:
        timed = range(len(players)) if timed_seats is None else timed_seats
        for s in timed:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < len(players):
                raise ValueError(f"timed_seats: no seat {s!r} in a match of {len(players)}")
            bank[s] = limits[1]

    watch = _watching  # (None but under arena-bot try: no cost per call otherwise)

    def hook(seat: int, fn: Callable[[], object], what: str) -> None:
        if watch is not None:
            bot = players[seat]
            watch.started(lambda: f"match {bot.match_id}: {type(bot).__name__}.{what}()")
        try:
            failed = _hook(players[seat], fn, what)
        finally:
            if watch is not None:
                watch.ended((type(players[seat]), what))
        if failed is not None:
            detail, e = failed
            if strict:
                raise RuntimeError(f"{players[seat].name} (seat {seat}) {detail}") from e
            incidents.append(LocalIncident(seat, game.deal_number, "error", detail, what))

    # The last view each seat was given: on_deal_end gets it, as in an arena (where the
    # next deal's view has not come yet when the deal's end does).
    last = [hook_view(observe(game, seat)) for seat in range(len(players))]
    for seat, bot in enumerate(players):
        hook(seat, partial(bot.on_match_start, last[seat]), "on_match_start")
    scored = 0
    slowest = [0.0] * len(players)
    slowest_at = [""] * len(players)
    told: set[int] = set()  # the seats told that a decision used their time bank
    # Per seat: how long its last timed-out call ran past the arena's deadline, and when
    # that was measured. An arena had played the fallback at the deadline and gone on: the
    # seat's next requests came while the call still ran, and timed out too once it ran
    # past theirs (the bank is empty), so one call of 15 s lost a match in an arena (three
    # strikes) while a local match counted one timeout.
    behind = [0.0] * len(players)
    behind_at = [0.0] * len(players)
    ask_forced = rules.ask_forced
    # The seats whose bot has its own on_action / on_talon_taken (the others are not called:
    # a view made per action and seat would slow every series down).
    on_action = [s for s, b in enumerate(players) if overrides(b, "on_action")]
    on_talon = [s for s, b in enumerate(players) if overrides(b, "on_talon_taken")]
    while not game.is_over:
        to_act = game.to_act
        assert to_act is not None
        seat = to_act
        deal = game.deal_number
        legal = game.legal_actions()
        asked = len(legal) > 1 or ask_forced
        if not asked:  # a forced move: played without a round trip, as an arena plays it
            action = legal[0]
            game.apply_trusted(action)
            chosen.append(("forced", False))
        late = 0.0  # how long the seat's request waited for its previous call to end
        if asked and behind[seat] > 0 and bank[seat] is not None:
            # (The other seats' turns since then were played while the call ran.)
            now = time.monotonic()
            late, behind[seat] = max(0.0, behind[seat] - (now - behind_at[seat])), 0.0
            wait_ms = limit_ms + (bank[seat] or 0)
            if late >= wait_ms / 1000:  # it came, and expired, while the call still ran
                behind[seat], behind_at[seat] = late - wait_ms / 1000, now
                action = fallback_action(legal)
                detail = _busy(players[seat], observe(game, seat), limit_ms, bank[seat] or 0)
                bank[seat] = 0
                incidents.append(LocalIncident(seat, game.deal_number, "timeout", detail))
                game.apply_trusted(action)
                chosen.append(("fallback", False))
                asked = False
        if asked:
            bot = players[seat]
            view = observe(game, seat)
            last[seat] = view
            left_ms = bank[seat]
            t0 = time.monotonic()
            deadline = None
            if left_ms is not None:
                # Counted from when the request came, as an arena's runner counts it.
                deadline = Deadline(limit_ms / 1000, left_ms / 1000, t0 - late)
            if watch is not None:
                watch.started(partial(_asked, bot, view))
            try:
                action, kind, detail, failed = _decide(bot, view, reraise=strict, deadline=deadline)
            except Exception as e:  # only with strict: it raised, or answered no action
                raise RuntimeError(
                    f"{bot.name} (seat {seat}) failed in deal {game.deal_number + 1}: "
                    f"{_exception(e)}"
                ) from e
            finally:
                if watch is not None:
                    watch.ended((type(bot), method_of(bot, view.phase)))
            done = time.monotonic()
            took = done - t0
            if took > slowest[seat]:
                slowest[seat] = took
                slowest_at[seat] = (
                    f"match {bot.match_id}, deal {view.deal_number + 1}, {view.phase}: "
                    f"{type(bot).__name__}.{_method(bot, view)}"
                )
            if deadline is not None and left_ms is not None:
                used = done - deadline.received
                if used < (limit_ms + left_ms) / 1000:  # as the referee (arena/referee/match.py)
                    bank[seat] = now = bank_left(left_ms, limit_ms, round(used * 1000))
                    if now < left_ms and seat not in told:
                        # Said once per match and seat, as an arena's runner says it: else
                        # the rehearsal would be silent while the bank ran down, until the
                        # timeouts.
                        told.add(seat)
                        _tell_bank(bot, view, used, limit_ms, left_ms - now, now)
                else:  # the arena had stopped waiting: the answer is not used
                    bank[seat] = 0
                    behind[seat], behind_at[seat] = used - (limit_ms + left_ms) / 1000, done
                    detail = _timed_out(bot, view, used, limit_ms, left_ms, strict, seat, late)
                    action, kind = fallback_action(legal), "timeout"
            if kind != "bot":
                incidents.append(LocalIncident(seat, game.deal_number, kind, detail))
            try:
                game.apply(action, seat=seat)
                # A decision the bot failed is its client's fallback, sent as its answer
                # (an arena's "by": "bot", "failed": true); a late one the referee's.
                by = "fallback" if kind == "timeout" else "bot"
                chosen.append((by, by == "bot" and failed is not None))
            except IllegalActionError as e:
                if strict:
                    raise
                fallback = fallback_action(legal)  # what the referee plays
                # Named as a raise or a non-Action is (the match, the method, the deal):
                # "bot.name: ..." alone would not say which of a series' matches, nor where.
                # Under arena-bot the same rule broken again by the method is one short line.
                head = f"{type(bot).__name__}.{_method(bot, view)}"
                where = f"match {bot.match_id}: {head}"
                rule = type(e).__name__
                when = f" (deal {view.deal_number + 1}, {view.phase}); playing {fallback} instead"
                again = ((head, rule), f"{where} answered {action}, illegal ({rule})", when)
                log.warning("%s answered illegally: %s%s", where, e, when,
                            extra={"sdk_again": again})  # fmt: skip
                detail = f"{e}; played {fallback} instead"
                incidents.append(LocalIncident(seat, game.deal_number, "illegal", detail))
                game.apply(fallback, seat=seat)
                chosen.append(("fallback", False))  # (the referee's, after a strike)
                action = fallback
        # Told as an arena's runner tells them (its events, in this order), with the last
        # view each seat was given.
        for s in on_action:
            seen = public_action(action, seat, s)
            hook(s, partial(players[s].on_action, hook_view(last[s]), seat, seen), "on_action")
        if (
            on_talon
            and game.deal_number == deal
            and not game.is_over
            and game.phase is not Phase.BIDDING
            and isinstance(action, Bid | Pass)
        ):
            declarer = game.declarer
            assert declarer is not None
            for s in on_talon:
                talon = observe(game, s).talon
                fn = partial(players[s].on_talon_taken, hook_view(last[s]), declarer, talon)
                hook(s, fn, "on_talon_taken")
        results = game.deal_results
        if len(results) > scored:
            for result in results[scored:]:
                for s, b in enumerate(players):
                    hook(s, partial(b.on_deal_end, hook_view(last[s]), result), "on_deal_end")
            scored = len(results)
    final = game.result
    assert final is not None
    for seat, bot in enumerate(players):
        view = observe(game, seat)
        hook(seat, partial(bot.on_match_end, view, final), "on_match_end")
    return LocalMatch(seat_names, game.record(), final, tuple(incidents), tuple(slowest),
                      tuple(slowest_at), tuple(chosen))  # fmt: skip


# ---------------------------------------------------------------------- series


@dataclass
class SeriesEntry:
    """One line-up position's totals over a series (position 0 is the bot being tried)."""

    name: str
    matches: int = 0
    #: Matches won alone: a first place shared (``GameResult.winner`` ``None``) is no win.
    wins: int = 0
    places: int = 0
    score: int = 0
    deals: int = 0
    incidents: int = 0
    #: Of the incidents, the decisions that timed out (only the tried bot is timed, with
    #: ``decision_ms``).
    timeouts: int = 0
    #: Of the incidents, the hook calls that raised (which no arena records).
    hooks: int = 0
    #: The longest one decision took, in seconds, and which it was (see LocalMatch).
    slowest: float = 0.0
    slowest_at: str = ""

    @property
    def win_rate(self) -> float:
        return self.wins / self.matches if self.matches else 0.0

    @property
    def mean_score(self) -> float:
        return self.score / self.matches if self.matches else 0.0

    @property
    def mean_place(self) -> float:
        return self.places / self.matches if self.matches else 0.0

    @property
    def points_per_deal(self) -> float:
        return self.score / self.deals if self.deals else 0.0


@dataclass
class SeriesResult:
    """What :func:`play_series` returns: one entry per line-up position."""

    ruleset: str
    matches: int
    entries: list[SeriesEntry] = field(default_factory=list)
    #: Matches that ended at the ruleset's ``max_deals`` before anyone won.
    capped: int = 0
    #: Per seed played from every seat (a whole rotation: duplicate deals, each hand played
    #: by the bot and by the others), the bot's points per deal minus the mean of the
    #: others', averaged over the rotation's matches; a rotation cut short is not counted.
    margins: list[float] = field(default_factory=list)

    def margin(self) -> tuple[float, float, float] | None:
        """The mean of :attr:`margins` and its 95% interval (``None`` below 2 seeds)."""
        return mean_ci95(self.margins) if len(self.margins) >= 2 else None


#: Student's t at 97.5 % for 1 to 30 degrees of freedom: a few seeds' interval is wider
#: than 1.96 standard errors (12.7 of them at two seeds), or "beyond chance" is said of luck.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
    2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
    2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def mean_ci95(xs: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its 95 % interval, Student's t over the values
    (infinite below 2 of them)."""
    mean = math.fsum(xs) / len(xs)
    if len(xs) < 2:
        return mean, -math.inf, math.inf
    df = len(xs) - 1
    var = math.fsum((x - mean) ** 2 for x in xs) / df
    # (past 30, the normal's 1.96 with its first correction, within 0.003 of t)
    t = _T975[df - 1] if df <= len(_T975) else 1.96 + 2.37 / df
    half = t * math.sqrt(var / len(xs))
    return mean, mean - half, mean + half


class SeriesInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`play_series`; ``result`` totals the matches finished before it
    (``result.matches`` of them). A ``KeyboardInterrupt`` still, for callers that do not
    care, but the matches already played need not be lost."""

    def __init__(self, result: SeriesResult) -> None:
        super().__init__()
        self.result = result


def play_series(
    bot: BotFactory,
    opponents: Sequence[tuple[str, BotFactory]],
    n: int,
    ruleset: str | Path | Ruleset = "classic",
    seed: int = 0,
    max_deals: int | None = None,
    *,
    name: str | None = None,
    progress: Callable[[int], None] | None = None,
    decision_ms: int | None = None,
    time_bank_ms: int | None = None,
    on_match: Callable[[str, LocalMatch], None] | None = None,
) -> SeriesResult:
    """Play ``n`` matches of ``bot`` against ``opponents`` with rotating seats.

    ``opponents`` (name, factory) fill the other seats, repeated in order if there are
    fewer than needed. Match ``i`` uses seed ``seed + i // players`` and puts the bot in
    seat ``i % players``, so each deal sequence is played from every seat. Ctrl-C raises
    :class:`SeriesInterrupted` with the totals of the matches finished so far.
    ``decision_ms`` / ``time_bank_ms`` time the decisions of ``bot`` (not the opponents',
    which are the yardstick) as :func:`play_local` does, a fresh bank each match.
    ``on_match(match_id, match)`` is called with each match as it finishes (``arena-bot
    try --records`` writes its record), Ctrl-C held back meanwhile as while the match is
    counted (delivered right after): a match counted is one ``on_match`` was done with.
    """
    _limits(decision_ms, time_bank_ms)  # bad values are refused before anything is played
    rules = resolve_ruleset(ruleset, max_deals, len(opponents) + 1)
    p = rules.players
    if not opponents:
        raise ValueError("no opponents")
    opps = [opponents[i % len(opponents)] for i in range(p - 1)]
    # (a caller that made the bot already, `arena-bot try`'s check, gives its name: a bot
    # made once more here loaded whatever its `__init__` loads once more)
    lineup: list[tuple[str, BotFactory]] = [(name or _own_name(make_bot(bot)), bot), *opps]
    entries = [SeriesEntry(lineup[0][0])]
    names = [o[0] for o in opps]
    for k, oname in enumerate(names):
        # A repeated opponent, or one named as the bot tried, is numbered by its
        # occurrences: heuristic#1, random, heuristic#2.
        unique = names.count(oname) == 1 and oname != entries[0].name
        entries.append(SeriesEntry(oname if unique else f"{oname}#{names[: k + 1].count(oname)}"))
    played = capped = 0
    rotations: dict[int, list[float]] = {}  # seed -> the bot's margin in each seat
    try:
        for i in range(n):
            r = i % p
            order = [(j - r) % p for j in range(p)]  # seat -> line-up position
            match_id = f"{_local_id(seed + i // p)}-{r}"  # one per match of the series
            m = play_local(
                [lineup[pos][1] for pos in order],
                rules,
                seed + i // p,
                names=[entries[pos].name for pos in order],
                match_id=match_id,
                decision_ms=decision_ms,
                time_bank_ms=time_bank_ms,
                timed_seats=None if decision_ms is None else (order.index(0),),
            )
            # Said as `arena-bot run` says it at a match's end: what the bot tried failed
            # (each logged above), hooks included, which no arena records.
            mine = [i for i in m.incidents if i.seat == order.index(0)]
            said = failures_said(
                sum(not i.hook and i.kind in ("error", "malformed") for i in mine),
                None,
                sum(bool(i.hook) for i in mine),
            )
            if said is not None:
                log.warning("match %s: %s", match_id, said)
            with _counting():
                _add(entries, order, m)
                capped += m.result.reason == "max_deals"
                me, per_deal = order.index(0), [x / max(1, m.result.deals) for x in m.result.scores]
                others = [x for seat, x in enumerate(per_deal) if seat != me]
                rotations.setdefault(i // p, []).append(per_deal[me] - sum(others) / len(others))
                played = i + 1
                # (Ctrl-C held here too: a match counted has its record written, `try
                # --records`; it was "interrupted after 2 of 4 matches" beside 1 record)
                if on_match is not None:
                    on_match(match_id, m)
            if progress is not None:
                progress(played)
    except KeyboardInterrupt as e:  # the match under way is dropped; the others stand
        raise SeriesInterrupted(
            SeriesResult(rules.name, played, entries, capped, _whole(rotations, p))
        ) from e
    return SeriesResult(rules.name, n, entries, capped, _whole(rotations, p))


def _whole(rotations: dict[int, list[float]], players: int) -> list[float]:
    """Each whole rotation's mean margin (SeriesResult.margins)."""
    return [sum(m) / players for m in rotations.values() if len(m) == players]


@contextlib.contextmanager
def _counting() -> Iterator[None]:
    """Ctrl-C held back while a finished match is counted (delivered right after): caught
    half-way, the totals could say 2 matches in one place and 3 in another. (In the main thread,
    where Python raises KeyboardInterrupt; elsewhere nothing to hold.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old = signal.getsignal(signal.SIGINT)
    if old is None:  # a handler set outside Python: leave it alone
        yield
        return
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if caught and callable(old):
        old(signal.SIGINT, None)  # Python's default raises KeyboardInterrupt
    elif caught and old == signal.SIG_DFL:
        signal.raise_signal(signal.SIGINT)  # the process ends by the signal, as it would


def _add(entries: list[SeriesEntry], order: list[int], m: LocalMatch) -> None:
    """Count match ``m`` (``order``: seat -> line-up position) into the entries."""
    for seat, pos in enumerate(order):
        e = entries[pos]
        e.matches += 1
        # A shared first place is no one's win (GameResult.winner is None): counted for each
        # seat that shared it, the wins of a series added up to more than its matches.
        e.wins += m.result.places[seat] == 1 and m.result.places.count(1) == 1
        e.places += m.result.places[seat]
        e.score += m.result.scores[seat]
        e.deals += m.result.deals
        e.incidents += sum(1 for x in m.incidents if x.seat == seat)
        e.timeouts += sum(1 for x in m.incidents if x.seat == seat and x.kind == "timeout")
        e.hooks += sum(1 for x in m.incidents if x.seat == seat and x.hook)
        if m.slowest[seat] > e.slowest:
            e.slowest, e.slowest_at = m.slowest[seat], m.slowest_at[seat]
