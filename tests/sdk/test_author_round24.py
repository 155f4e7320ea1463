"""A new bot author's mistakes (round 24 of the bot-author audit): each test is a mistake
whose message did not say what was wrong, or where."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))


from bots import BUNDLED, load
from engine import Action, Card, DealResult, PlayerView
from sdk import Bot, play_local
from sdk.cli import main
from sdk.client import BotRunner


class _ExitsInPlay(Bot):
    def play(self, view: PlayerView) -> Action:
        raise SystemExit(3)


class _InterruptedInPlay(Bot):
    def play(self, view: PlayerView) -> Action:
        raise KeyboardInterrupt  # what a Ctrl-C in an endless loop of the bot's raises


class _ExitsInAHook(Bot):
    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        sys.exit("no more")


def test_a_bot_that_exits_is_named_with_its_call_and_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Defect: a bot's ``sys.exit(3)`` stopped ``arena-bot try`` with "the series stopped:
    a seat left it (SystemExit 3)" and ``arena-bot run`` with "the bot left (exit code
    3)": neither said which bot, which call or which line (a ``sys.exit`` deep in a
    library, say). The line that left is logged, with the method, match and deal."""
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit) as e:
        play_local([_ExitsInPlay, Bot, Bot], seed=1, max_deals=3)
    assert e.value.code == 3
    first = _ExitsInPlay.play.__code__.co_firstlineno
    line = f"_ExitsInPlay.play() (test_author_round24.py:{first})"
    said = caplog.text
    assert f"match local-1: {line} raised SystemExit(3) at test_author_round24.py:" in said
    assert ", in play (deal " in said and ", playing): the bot leaves" in said

    caplog.clear()
    with caplog.at_level(logging.WARNING), pytest.raises(SystemExit):
        play_local([_ExitsInAHook, Bot, Bot], seed=1, max_deals=3)
    assert (
        "match local-1: _ExitsInAHook.on_deal_end() raised SystemExit('no more') at "
        "test_author_round24.py:" in caplog.text
    )


def test_a_ctrl_c_in_a_stuck_decision_names_it(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: Ctrl-C on an ``arena-bot try`` whose bot loops for ever printed only
    "interrupted after 0 of 20 matches: no results": not which call was stuck, nor where.
    The interrupted call is named, with its line and how long it had run."""
    with caplog.at_level(logging.WARNING), pytest.raises(KeyboardInterrupt):
        play_local([_InterruptedInPlay, Bot, Bot], seed=1, max_deals=3)
    said = caplog.text
    assert "match local-1: _InterruptedInPlay.play() (test_author_round24.py:" in said
    assert "was interrupted (KeyboardInterrupt) at test_author_round24.py:" in said
    assert re.search(r", playing, after \d+\.\d s\)", said), said


WRONG_METHODS = """
from sdk import Bot


class NoView(Bot):
    def play(self):
        return None


class ShortHook(Bot):
    def on_deal_end(self, view):
        pass


class Typos(Bot):
    def Play(self, view):
        return view.legal_actions[-1]

    def on_deal_ended(self, view, result):
        pass

    def on_trick_end(self, view, trick):
        pass

    def player(self, seat):  # a helper, not a misspelt method: not warned of
        return seat


class OwnAct(Bot):
    def act(self, view):
        return self.play(view, 0)

    def play(self, view, depth):  # its act's helper: no runner calls it
        return view.legal_actions[depth]
"""


def test_a_method_the_runners_cannot_call_is_refused_at_start(tmp_path: Path) -> None:
    """Defect: ``def play(self)`` (the view forgotten) or ``def on_deal_end(self, view)``
    was found only at the first call, and then at every one: "TypeError: NoView.play()
    takes 1 positional argument but 2 were given", whose traceback and repeats ("TypeError
    again in act (bot.py:129)") named the SDK's line. ``arena-bot`` refuses the bot at
    start (exit code 2), as one whose ``__init__`` needs arguments, naming the method,
    its line and how it is called."""
    f = tmp_path / "wrong.py"
    f.write_text(WRONG_METHODS)
    r = CliRunner().invoke(main, ["try", f"{f}:NoView", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert (
        "NoView.play() (wrong.py:6) is def play(self), but the runners call it as play(view)"
        in said
    )
    r = CliRunner().invoke(
        main,
        ["run", f"{f}:ShortHook", "--token", "t", "--arena", "127.0.0.1:1", "--retry-for", "1"],
    )
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert (
        "ShortHook.on_deal_end() (wrong.py:11) is def on_deal_end(self, view), but the "
        "runners call it as on_deal_end(view, result)" in said
    )
    r = CliRunner().invoke(main, ["try", f"{f}:OwnAct", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 0, r.output


def test_a_misspelt_method_is_warned_of_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Defect: a bot whose ``play`` was spelt ``Play`` (or whose hook was
    ``on_deal_ended``, or a hook that does not exist, ``on_trick_end``) played Bot's
    defaults, and nothing said so. ``arena-bot`` warns of each at start, with what was
    likely meant."""
    f = tmp_path / "wrong.py"
    f.write_text(WRONG_METHODS)
    with caplog.at_level(logging.WARNING, logger="sdk.loader"):
        r = CliRunner().invoke(main, ["try", f"{f}:Typos", "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 0, r.output
    said = [rec.getMessage() for rec in caplog.records if rec.name == "sdk.loader"]
    assert said == [
        "Typos.Play() (wrong.py:16) is never called by the runners: did you mean play()?",
        "Typos.on_deal_ended() (wrong.py:19) is never called by the runners: did you mean "
        "on_deal_end()?",
        "Typos.on_trick_end() (wrong.py:22) is never called by the runners: the hooks are "
        "on_match_start(), on_action(), on_talon_taken(), on_deal_end(), on_match_end()",
    ]
    from sdk.local import method_mistakes

    for name in BUNDLED:  # the bundled bots are as they should be
        assert method_mistakes(load(name)()) == ([], [])


def test_a_card_an_amount_or_a_generator_answer_says_what_to_return() -> None:
    """Defect: a bot that returned the card it chose (``legal_actions[0].card``) was told
    "returned <Card.C10: 10>, which is not an Action", one that returned its bid's amount
    "returned 120, ...", and one with a ``yield`` in ``play`` "returned <generator object
    ...>": what was wrong, not what to return. Each now says what it is and what to
    return instead."""

    class ReturnsTheCard(Bot):
        def play(self, view: PlayerView) -> Action:
            return view.legal_actions[0].card  # type: ignore[attr-defined,no-any-return]

    class ReturnsTheAmount(Bot):
        def bid(self, view: PlayerView) -> Action:
            return 120  # type: ignore[return-value]

    class Yields(Bot):
        def play(self, view: PlayerView) -> Action:
            yield view.legal_actions[0]  # type: ignore[misc]

    m = play_local([ReturnsTheCard, ReturnsTheAmount, Yields], seed=3, max_deals=2)
    first = {i.seat: i.detail for i in reversed(m.incidents)}
    card = re.search(r"returned Card\.(\w+), which is not an Action: a Card; return", first[0])
    assert card, first[0]
    assert f"Play(card) to play it (play {Card[card.group(1)]}); played " in first[0]
    assert (
        "returned 120, which is not an Action: an int; return Bid(120) to bid it, "
        "Contract(120) to name the contract; played pass instead" in first[1]
    ), first[1]
    assert (
        "returned <generator object " in first[2]
        and "which is not an Action: a generator (the method has a `yield`); return the "
        "action instead; played "
        in first[2]
    ), first[2]


def test_a_seat_given_no_bot_is_refused_before_play_naming_it() -> None:
    """Defect: ``play_local(["heuristic", "random", Mine])`` (the names ``arena-bot``
    takes) failed with "making the bot 'heuristic' for match local-1 raised TypeError:
    'str' object is not callable", a module with "'module' object is not callable", a
    class that is no Bot with "<class 'x.NotABot'> made <x.NotABot object at 0x...>, which
    is not a sdk.Bot", and a class for the list with "object of type 'type' has no
    len()". Each is refused first, naming the seat, what was given and what to give."""

    class NotABot:
        pass

    cases = {
        "the str 'heuristic', a name: give the bot's class (sdk.loader.load_bot('heuristic')": [
            "heuristic",
            Bot,
            Bot,
        ],
        "the module logging: give its bot class (logging.ClassName)": [Bot, Bot, logging],
        "the class NotABot, which does not derive from sdk.Bot: write `class NotABot(Bot):`": [
            Bot,
            NotABot,
            Bot,
        ],
    }
    for said, bots in cases.items():
        seat = next(i for i, b in enumerate(bots) if b is not Bot)
        with pytest.raises(TypeError) as e:
            play_local(bots, seed=1, max_deals=1)
        assert str(e.value).startswith(f"play_local: the bot of seat {seat} is {said}"), e.value
    with pytest.raises(TypeError) as e:
        play_local(Bot, seed=1)  # type: ignore[arg-type]
    assert str(e.value).startswith("play_local takes a list of bots, one per seat, got <class")
    with pytest.raises(TypeError) as e:
        BotRunner("mybot.py:Lowest", "localhost:1", "t")  # type: ignore[arg-type]
    assert str(e.value).startswith("the bot to run is the str 'mybot.py:Lowest', a name")


def test_a_call_that_does_not_return_is_said_while_the_match_waits() -> None:
    """Defect: ``arena-bot try`` with a bot in an endless loop printed nothing, ever: a
    local match cannot cut a call off, so it waited in silence. Under ``try`` a call that
    has run as long as an arena waits (its default 1 s + 10 s of time bank, or
    ``--decision-ms`` and ``--time-bank-ms``) is logged once, naming the match, the call
    and the deal, while the match goes on waiting for it. (Here with a wait of 0.01 s,
    and a bot that returns once the line is logged.)"""
    from sdk.local import watch_slow_calls

    told = threading.Event()
    lines: list[str] = []

    class Told(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            # (Stuck's: on a loaded machine another bot's call may run past 10 ms too)
            if "Stuck.play() " in record.getMessage() and "and not returned" in record.getMessage():
                lines.append(record.getMessage())
                told.set()

    class Stuck(Bot):
        def play(self, view: PlayerView) -> Action:
            told.wait(60)  # returns as soon as the watch has said it
            return view.legal_actions[0]

    handler = Told()
    logging.getLogger("sdk.local").addHandler(handler)
    try:
        with watch_slow_calls(0.01, ", as long as it may"):
            m = play_local([Stuck, Bot, Bot], seed=1, max_deals=1)
    finally:
        logging.getLogger("sdk.local").removeHandler(handler)
    assert m.result.deals == 1 and told.is_set()
    first = (
        f"match local-1: Stuck.play() (test_author_round24.py:{Stuck.play.__code__.co_firstlineno})"
    )
    assert lines[0].startswith(f"{first} (deal 1, playing) has run for "), lines
    assert lines[0].endswith(
        " s and not returned, as long as it may; a local match waits for it (Ctrl-C stops it, "
        "naming the line the bot is at)"
    ), lines


STUCK_FILE = """
import logging
import os
import threading

from sdk import Bot

told = threading.Event()


class _Told(logging.Handler):
    def emit(self, record):
        # (its own call's: on a loaded machine an opponent's bid may run past 1 ms too)
        if "Stuck.play() " in record.getMessage() and "and not returned" in record.getMessage():
            told.set()


logging.getLogger("sdk.local").addHandler(_Told())


class Stuck(Bot):
    def play(self, view):
        told.wait(60)  # returns as soon as arena-bot try has said it
        return view.legal_actions[0]
"""


def test_arena_bot_try_says_a_call_that_does_not_return(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same through ``arena-bot try``, whose wait is an arena's: ``--decision-ms 1
    --time-bank-ms 0`` here."""
    f = tmp_path / "stuck.py"
    f.write_text(STUCK_FILE)
    args = ["try", f"{f}:Stuck", "-n", "1", "--max-deals", "1"]
    with caplog.at_level(logging.WARNING, logger="sdk.local"):
        r = CliRunner().invoke(main, [*args, "--decision-ms", "1", "--time-bank-ms", "0"])
    assert r.exit_code == 1, r.output  # its timeout is an incident
    # (stuck.py's: the line of the test before, logged by its watch's thread, can reach
    # this test's caplog when that thread is still between the logger's handlers)
    said = [m for m in caplog.messages if "and not returned" in m and "(stuck.py:" in m]
    assert said and ") (deal 1, playing) has run for " in said[0], caplog.messages
    assert ", as long as an arena waits for a decision (0.001 s); " in said[0], said


THREAD_FILE = """
import threading

from sdk import Bot


class Threaded(Bot):
    def __init__(self):
        super().__init__()
        self.stop = threading.Event()
        # A background worker, never stopped: Python waits for it at exit, for ever.
        threading.Thread(target=self.stop.wait, name="searcher").start()

    def play(self, view):
        return view.legal_actions[0]
"""


def test_a_thread_the_bot_left_running_does_not_hold_the_exit(tmp_path: Path) -> None:
    """Defect: a bot that started a thread and never stopped it made ``arena-bot try``
    hang for ever after printing its table (and ``run --once`` after its "done" line):
    Python waits at exit for every thread that is not a daemon. ``arena-bot`` names the
    threads and exits without them, with the command's exit code."""
    (tmp_path / "threaded.py").write_text(THREAD_FILE)
    root = Path(__file__).parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    argv = [sys.executable, "-m", "sdk.cli", "try", "threaded.py", "--vs", "random", "-n", "1"]
    try:
        done = subprocess.run(
            [*argv, "--max-deals", "1"], cwd=tmp_path, env={**env, "PYTHONPATH": str(root)},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    except subprocess.TimeoutExpired as e:  # (what it did before: it never exited)
        pytest.fail(f"arena-bot try did not exit: {e.stderr!r}")
    assert done.returncode == 0, done.stderr
    assert "1 match, ruleset classic" in done.stdout, done.stdout
    assert re.search(
        r"WARNING sdk\.client: the bot left \d threads? running \(searcher(, searcher)*\): "
        r"exiting without waiting for (it|them)\n",
        done.stderr,
    ), done.stderr


def test_a_misspelt_bot_name_says_what_it_likely_meant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: ``mybot.Lowest`` (a dot for the colon), ``MyBot.py`` (the file is
    ``mybot.py``) and ``heurstic`` were refused with "no module 'mybot.Lowest' and no
    bundled bot of that name" or "no file 'MyBot.py'" and the list of forms, not with the
    name that was meant."""
    from sdk.loader import BotLoadError, load_bot

    (tmp_path / "mybot.py").write_text("from sdk import Bot\n\nclass Lowest(Bot):\n    pass\n")
    monkeypatch.chdir(tmp_path)
    meant = {
        "mybot.Lowest": "no module 'mybot.Lowest' and no bundled bot of that name (did you "
        "mean 'mybot.py:Lowest'?): ",
        "mybot.py.Lowest": "(did you mean 'mybot.py:Lowest'?): ",
        "heurstic": "no module 'heurstic' and no bundled bot of that name (did you mean "
        "'heuristic'?): ",
        "MyBot.py": "no file 'MyBot.py' (did you mean 'mybot.py'?): ",
        "mybto.py:Lowest": "no file 'mybto.py' (did you mean 'mybot.py'?): ",
    }
    for spec, said in meant.items():
        with pytest.raises(BotLoadError) as e:
            load_bot(spec)
        assert said in str(e.value), e.value
    # (names no other test loads: a module another test imported stays in sys.modules)
    for spec in ("zzz_unlike.py", "zzz_unlike"):  # nothing like it: no guess
        with pytest.raises(BotLoadError) as e:
            load_bot(spec)
        assert "did you mean" not in str(e.value), e.value


def test_sdk_run_in_a_running_event_loop_says_what_to_await() -> None:
    """Defect: ``sdk.run`` in a notebook (an event loop runs there) failed with asyncio's
    "asyncio.run() cannot be called from a running event loop" and a RuntimeWarning of a
    coroutine never awaited, not naming ``run_async``, which is what to use there."""
    import warnings

    from sdk import run

    async def main() -> None:
        run(Bot, arena="127.0.0.1:1", token="t", retry_for=0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine ... was never awaited"
        with pytest.raises(RuntimeError) as e:
            asyncio.run(main())
    assert "await sdk.client.run_async(bot, arena, token, ...) there instead" in str(e.value)


def test_an_arena_never_reached_is_asked_about_once(caplog: pytest.LogCaptureFixture) -> None:
    """Defect: a bot started before its arena, or at a wrong port, logged only gRPC's
    words ("UNAVAILABLE (failed to connect to all addresses; ... Connection refused);
    reconnecting in 0.4s") and went on for --retry-for, ten minutes by default, with no
    word of how long. Its first warning asks whether an arena serves at that address and
    says for how long it is tried; an arena reached once is not asked about."""
    from tests.sdk.test_cli_audit import REFUSED, _runner

    runner, _ = _runner([REFUSED] * 3)
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    asked = [m for m in caplog.messages if "is an arena serving" in m]
    assert asked == [
        "cannot connect to the arena at 127.0.0.1:4: connection refused (is an arena serving "
        "at 127.0.0.1:4? it is tried again for "
        f"up to 600 s (--retry-for)); reconnecting in {asked[0].rpartition(' in ')[2]}"
    ], caplog.messages
    caplog.clear()
    runner, _ = _runner([REFUSED] * 3, welcome=True)
    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(runner.run())
    assert "is an arena serving" not in caplog.text


class _Unprintable(Exception):
    def __str__(self) -> str:
        return self.missing  # type: ignore[attr-defined,no-any-return]  # the bot's bug


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr broke")


def test_an_exception_or_answer_that_cannot_be_printed_is_still_replaced() -> None:
    """Defect: a bot's exception whose ``str()`` raises (a bug in the bot's own exception
    class), or an answer whose ``repr()`` raises, broke the runner while it wrote the
    message: ``arena-bot try`` stopped with the SDK's traceback ("RuntimeError: Mine (seat
    0) failed in deal 1: RuntimeError: repr broke"), and in an arena "a step of the match
    failed" and the decision went unanswered. The fallback is played and the message says
    what could not be printed."""

    class RaisesUnprintable(Bot):
        def play(self, view: PlayerView) -> Action:
            raise _Unprintable

    class HookRaisesUnprintable(Bot):
        def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
            raise _Unprintable

    class ReturnsNoRepr(Bot):
        def play(self, view: PlayerView) -> Action:
            return _NoRepr()  # type: ignore[return-value]

    m = play_local([RaisesUnprintable, HookRaisesUnprintable, ReturnsNoRepr], seed=3, max_deals=2)
    first = {i.seat: i.detail for i in reversed(m.incidents)}
    assert (
        "raised _Unprintable (its str() raised AttributeError: '_Unprintable' object has no "
        "attribute 'missing'); played " in first[0]
    ), first[0]
    assert first[1] == (
        "raised in on_deal_end: _Unprintable (its str() raised AttributeError: '_Unprintable' "
        "object has no attribute 'missing')"
    ), first[1]
    assert (
        "returned <a _NoRepr, whose repr() raised RuntimeError: repr broke>, which is not an "
        "Action; played " in first[2]
    ), first[2]


def test_self_deadline_used_in_untimed_local_play_says_why_it_is_none() -> None:
    """Defect: the README names ``self.deadline.left()``; a bot that used it was told at
    every local decision "AttributeError: 'NoneType' object has no attribute 'left'",
    with no word that local play has no deadline unless it is timed."""

    class Budgeted(Bot):
        def play(self, view: PlayerView) -> Action:
            budget = self.deadline.left() / 2  # type: ignore[union-attr]
            return view.legal_actions[0] if budget >= 0 else view.legal_actions[-1]

    m = play_local([Budgeted, Bot, Bot], seed=3, max_deals=1)
    assert m.incidents, "Budgeted was never asked"
    assert m.incidents[0].detail.startswith("Budgeted.play() (test_author_round24.py:") and (
        "raised AttributeError: 'NoneType' object has no attribute 'left' (self.deadline is "
        "None: local play has no deadline unless timed, arena-bot try --decision-ms N or "
        "play_local(..., decision_ms=N)); played " in m.incidents[0].detail
    ), m.incidents[0].detail
    timed = play_local([Budgeted, Bot, Bot], seed=3, max_deals=1, decision_ms=60_000)
    assert not timed.incidents, timed.incidents


def test_a_bot_that_exits_in_its_init_at_start_is_named(tmp_path: Path) -> None:
    """Defect: a bot whose ``__init__`` calls ``sys.exit(5)`` (a model file missing, say)
    ended ``arena-bot try`` and ``run`` at the start-up check with exit code 5 and not a
    word. It is refused as an ``__init__`` that raises is, naming the line."""
    f = tmp_path / "quits.py"
    f.write_text(
        "import sys\n\nfrom sdk import Bot\n\n\nclass Quits(Bot):\n    def __init__(self):\n"
        "        super().__init__()\n        sys.exit(5)\n"
    )
    r = CliRunner().invoke(main, ["try", str(f), "-n", "1", "--max-deals", "1"])
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert "Quits() raised SystemExit: 5 (quits.py:9, in __init__) (a bot is made" in said, said
