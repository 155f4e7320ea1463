"""pimc under an arena's clock (round 47): it reads the deadline it is told.

Before, pimc never looked at ``Bot.deadline``: every decision searched its own budget (0.27 s
of work, a wall-clock backstop at 0.89 s) whatever the arena's limit, so at 100 ms per
decision with a 1 s bank it timed out 19 times in 3 six-deal matches (``arena-bot try pimc
--vs counting,counting -n 3 --max-deals 6 --decision-ms 100 --time-bank-ms 1000``; each a
strike in an arena, three forfeit a match); none after. These tests use injected deadlines
and a fake clock (one that moves only when read), never the machine's speed.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

import bots._dds as dds
import sdk.bot
from bots import counting, pimc
from bots._dds import NODES_PER_SECOND, Solver
from bots.heuristic import HeuristicBot
from bots.pimc import PimcBot
from engine import Game, Phase, PlayerView, observe
from sdk.bot import Deadline


class _Counted(Solver):
    """The solver, every instance counted (did the decision search at all?)."""

    made: ClassVar[int] = 0

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        _Counted.made += 1


class _FakeClock:
    """``perf_counter`` and ``monotonic`` both: a clock that moves ``step`` seconds each time
    it is read (the search reads it every 64 nodes), whatever the machine's speed."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def read(self) -> float:
        self.now += self.step
        return self.now

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        fake = types.SimpleNamespace(perf_counter=self.read, monotonic=self.read)
        for module in (dds, pimc, sdk.bot):
            monkeypatch.setattr(module, "time", fake)


def _view(preset: str, seed: int, wanted: Callable[[PlayerView], bool]) -> PlayerView:
    """The first view (heuristic bots playing every seat) that ``wanted`` picks."""
    g = Game.new(preset, seed, [f"p{i}" for i in range(4 if preset.endswith("4p") else 3)])
    bot = HeuristicBot()
    while not g.is_over:
        seat = g.to_act
        assert seat is not None
        view = observe(g, seat)
        if len(view.legal_actions) > 1 and wanted(view):
            return view
        g.apply(bot.act(view), seat=seat)
    raise AssertionError("no such view")


def _first_lead(view: PlayerView) -> bool:
    """The first lead of the play, a full hand (the slowest decision: few samples solve)."""
    return view.phase is Phase.PLAYING and not view.tricks and not view.trick


def _five_cards(view: PlayerView) -> bool:
    """Five cards in hand: exact searches, no prior of counting's (a search is certain)."""
    return view.phase is Phase.PLAYING and len(view.hand) == 5


_VIEWS = [
    ("classic", _five_cards),
    ("classic", _first_lead),
    ("1001-4p", _first_lead),
    ("1001", _five_cards),
]


@pytest.mark.parametrize(("preset", "wanted"), _VIEWS)
def test_a_spent_limit_is_answered_at_once_without_a_search(
    preset: str, wanted: Callable[[PlayerView], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request whose limit is already spent (it waited in the bot's process, or the
    arena asked again after a reconnect with 0 ms left) is answered with counting's card,
    no solver made: before, pimc searched its whole budget on the time bank."""
    view = _view(preset, 3, wanted)
    monkeypatch.setattr(pimc, "Solver", _Counted)
    monkeypatch.setattr(counting, "Solver", _Counted)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    for limit_s in (1.0, 0.0):
        _Counted.made = 0
        bot = PimcBot(seed=1)
        bot.deadline = Deadline(limit_s=limit_s, bank_s=10.0, received=clock.now - limit_s)
        action = bot.act(view)
        assert action in view.legal_actions
        assert _Counted.made == 0, (preset, limit_s)
        assert bot.stats.samples == 0 and bot.stats.fallbacks == 1


@pytest.mark.parametrize(("preset", "wanted"), _VIEWS)
def test_the_search_ends_inside_the_limit_it_is_told(
    preset: str, wanted: Callable[[PlayerView], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told 100 ms per decision, pimc searches and answers inside them, on a clock that
    moves 0.5 ms every 64 nodes (a machine several times slower than the reference one),
    its time bank untouched. Before, its budget (and the backstop at 0.89 s) did not look
    at the limit: the answer came 0.85 s after the request, 0.75 s of the bank gone."""
    view = _view(preset, 3, wanted)
    monkeypatch.setattr(pimc, "Solver", _Counted)
    monkeypatch.setattr(counting, "Solver", _Counted)
    clock = _FakeClock(step=0.0005)
    clock.install(monkeypatch)
    _Counted.made = 0
    bot = PimcBot(seed=1)
    deadline = Deadline(limit_s=0.1, bank_s=1.0, received=clock.now)
    bot.deadline = deadline
    action = bot.act(view)
    assert action in view.legal_actions
    assert _Counted.made > 0  # (it used the time it had: it searched)
    assert clock.now - deadline.received < deadline.limit_s
    assert deadline.left(bank=False) > 0  # (read on the fake clock: no bank used)


def test_the_work_fits_the_limit_and_the_default_limit_changes_nothing() -> None:
    """The work (solver nodes) of a timed decision is the limit less the margin over
    ``safety``: the same for the same limit, so decisions replay under a tight limit as
    they do under none. At the arena's default 1 s the default budget fits as it is
    (a tournament's decisions the same as before); a contract searched by pimc (not
    delegated, 1.6 budgets) is cut to fit: its 1.43 s backstop overran a 1 s limit."""
    play = _view("classic", 3, _five_cards)
    contract = _view("classic", 3, lambda v: v.phase is Phase.CONTRACT)
    bot = PimcBot(seed=1)
    untimed = bot._budget(play).left
    assert untimed == round(bot.budget * 0.9 * NODES_PER_SECOND)
    bot.deadline = Deadline(limit_s=1.0, bank_s=10.0, received=sdk.bot.time.monotonic())
    assert bot._budget(play).left == untimed
    fit = round((1.0 - bot.margin_s - bot.margin_share) / bot.safety * NODES_PER_SECOND)
    assert bot._budget(contract).left == min(fit, round(1.6 * untimed)) == fit
    bot.deadline = Deadline(limit_s=0.1, bank_s=10.0, received=sdk.bot.time.monotonic())
    tight = round((0.1 - bot.margin_s - 0.1 * bot.margin_share) / bot.safety * NODES_PER_SECOND)
    assert bot._budget(play).left == tight < untimed


def test_a_delegated_play_keeps_to_the_deadline_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the play delegated to counting (``delegate``), counting's endgame search ran on
    a budget of its own, its 0.4 s backstop blind to the arena's limit: with the limit
    spent it still searched. It searches inside pimc's decision budget now: not at all."""
    view = _view("classic", 3, _five_cards)
    monkeypatch.setattr(pimc, "Solver", _Counted)
    monkeypatch.setattr(counting, "Solver", _Counted)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    bot = PimcBot(seed=1)
    bot.delegate = frozenset({"PLAYING"})
    bot.deadline = Deadline(limit_s=1.0, bank_s=10.0, received=clock.now - 1.0)
    _Counted.made = 0
    assert bot.act(view) in view.legal_actions
    assert _Counted.made == 0
    bot.deadline = None  # (untimed: counting's search, its own share of pimc's budget)
    assert bot.act(view) in view.legal_actions
    assert _Counted.made > 0


def test_counting_keeps_its_endgame_search_inside_the_arena_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """counting itself (not through pimc) searched its endgame on a backstop of 0.4 s blind
    to the arena's limit: told 50 ms, a loaded machine's search ran into the bank. Its
    backstop now ends inside the limit (less the margin): with the limit spent, no search;
    with a long limit, the search as before."""
    from bots.counting import CountingBot

    view = _view("classic", 3, _five_cards)
    monkeypatch.setattr(counting, "Solver", _Counted)
    clock = _FakeClock(step=0.0)
    clock.install(monkeypatch)
    bot = CountingBot()
    bot.deadline = Deadline(limit_s=0.05, bank_s=1.0, received=clock.now - 0.05)
    _Counted.made = 0
    assert bot.act(view) in view.legal_actions
    assert _Counted.made == 0
    bot.deadline = Deadline(limit_s=10.0, bank_s=1.0, received=clock.now)
    assert bot.act(view) in view.legal_actions
    assert _Counted.made > 0
