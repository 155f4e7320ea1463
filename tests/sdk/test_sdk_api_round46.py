"""Round 46: the SDK's public API as a bot author meets it in an editor.

Three small bots written from the docs and docstrings alone (``_Greedy``, ``_Counter``,
``_Watcher`` below) ran into: a misspelt ``from sdk import Plya`` that ``mypy --strict``
passed (the module ``__getattr__`` typed every name as ``Any``); no helper for the legal
plays (every bot, and the guide four times, filters ``legal_actions`` by hand) nor for
the points taken so far (the human seat and the solver each counted them again);
``typing.get_type_hints`` failing on ``sdk.hand``'s functions; and ``help()`` that named
half of ``PlayerView``'s fields, none of ``Bot``'s attributes, and nothing of ``Card``'s
``suit``, ``rank``, ``points`` or ordering."""

from __future__ import annotations

import dataclasses
import inspect
import os
import random
import re
import subprocess
import sys
import textwrap
import types
import typing
from pathlib import Path

import pytest

import sdk
from engine import Card, Game, Phase, Rank, Suit, observe
from sdk import Bid, Bot, Play, PlayerView, hand, play_local

ROOT = Path(__file__).resolve().parents[2]


# --- three bots, written from the docs (their source is also what mypy checks below) ----

BOTS = '''
from __future__ import annotations

import logging

from sdk import (Action, Bid, Bot, Card, Concede, Contract, DealResult, GameResult,
                 Give, HiddenGive, Pass, PlayerView, hand)

log = logging.getLogger("round46")


def _pass_or_first(view: PlayerView) -> Action:
    return Pass() if Pass() in view.legal_actions else view.legal_actions[0]


class _Greedy(Bot):
    """Bids with a strong hand, declares, leads masters, wins a trick cheaply, else dumps."""

    name = "greedy"

    def bid(self, view: PlayerView) -> Action:
        strength = sum(c.points for c in view.hand) + 20 * len(hand.marriages(view.hand))
        bids = sorted((a for a in view.legal_actions if isinstance(a, Bid)),
                      key=lambda b: b.amount)
        if bids and strength >= 60 and bids[0].amount <= hand.bid_cap(view.hand, view.ruleset):
            return bids[0]
        return _pass_or_first(view)

    def give(self, view: PlayerView) -> Action:
        gives = [a for a in view.legal_actions if isinstance(a, Give)]
        return min(gives, key=lambda g: (g.card.points, g.card.rank))

    def play(self, view: PlayerView) -> Action:
        plays = hand.legal_plays(view)
        declaring = [p for p in plays if p.declare]
        if declaring:
            return max(declaring, key=lambda p: p.card.suit.marriage_value)
        cheapest = min(plays, key=lambda p: (p.card.points, p.card.rank))
        if not view.trick:  # this seat leads
            top = [p for p in plays if p.card in hand.masters(view)]
            return max(top, key=lambda p: p.card.points) if top else cheapest
        _, best = hand.trick_winner(view.trick, view.trump)
        winning = [p for p in plays if hand.beats(p.card, best, view.trump)]
        return min(winning, key=lambda p: p.card.points) if winning else cheapest


class _Counter(_Greedy):
    """A declarer that counts what it took and concedes a hopeless contract."""

    name = "counter"

    def contract(self, view: PlayerView) -> Action:
        assert view.bid is not None
        if hand.bid_cap(view.hand, view.ruleset) < view.bid and Concede() in view.legal_actions:
            return Concede()
        if Contract(view.bid) in view.legal_actions:
            return Contract(view.bid)
        return _pass_or_first(view)

    def play(self, view: PlayerView) -> Action:
        taken: int = hand.takes(view)[view.seat]
        if view.declarer == view.seat and view.contract is not None and taken >= view.contract:
            plays = hand.legal_plays(view)  # made: keep the points low from here
            return min(plays, key=lambda p: (p.card.points, p.card.rank))
        return super().play(view)


class _Watcher(_Greedy):
    """Watches the table: the other seats' bids, the talon, the scores and the barrel."""

    name = "watcher"

    def __init__(self) -> None:
        super().__init__()
        self.talon: tuple[Card, ...] | None = None
        self.seen = 0

    def on_action(self, view: PlayerView, seat: int, action: Action | HiddenGive) -> None:
        self.seen += 1

    def on_talon_taken(self, view: PlayerView, declarer: int,
                       talon: tuple[Card, ...] | None) -> None:
        self.talon = talon

    def bid(self, view: PlayerView) -> Action:
        passed = {s for s, a in view.bids if s != view.seat and isinstance(a, Pass)}
        on_barrel = view.barrel is not None and view.barrel[view.seat] > 0
        behind = view.scores[view.seat] < max(view.scores)
        if on_barrel or behind or len(passed) == len(view.active_seats) - 1:
            return super().bid(view)
        return _pass_or_first(view)

    def on_deal_end(self, view: PlayerView, result: DealResult) -> None:
        log.info("%s deal %d: %s", self.match_id, result.number + 1, result.outcome)

    def on_match_end(self, view: PlayerView, result: GameResult) -> None:
        log.info("%s: place %d after %d actions", self.match_id, result.places[view.seat],
                 self.seen)
'''

_space: dict[str, typing.Any] = {"__name__": "round46_bots"}
exec(compile(BOTS, "round46_bots", "exec"), _space)
_Greedy, _Counter, _Watcher = _space["_Greedy"], _space["_Counter"], _space["_Watcher"]


@pytest.mark.parametrize("ruleset", ["classic", "1001", "1001-4p"])
def test_the_three_bots_play_legally_to_the_end(ruleset: str) -> None:
    """The bots written from the docs (with ``hand.legal_plays`` and ``hand.takes``) play
    whole matches without an incident, ``strict`` (an illegal answer would raise)."""
    seats = [_Greedy, _Counter, _Watcher] + ([_Greedy] if ruleset == "1001-4p" else [])
    m = play_local(seats, ruleset=ruleset, seed=46, strict=True, max_deals=25)
    assert m.incidents == ()
    assert m.result.deals > 0


def test_the_bots_pass_mypy_strict_and_a_misspelt_sdk_name_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: ``sdk``'s module ``__getattr__`` (which imports ``run`` and the gRPC side on
    first use) returned ``Any``, so to mypy every name of ``sdk`` existed: ``from sdk
    import Plya`` and ``sdk.hnad`` passed ``mypy --strict`` and failed only at run time.
    It is now defined for the interpreter only; the lazy names are typed from their
    ``TYPE_CHECKING`` imports, ``sdk.client`` too."""
    api = pytest.importorskip("mypy.api")
    good = tmp_path / "round46_bots.py"
    good.write_text(BOTS, encoding="utf-8")
    lazy = tmp_path / "round46_lazy.py"
    lazy.write_text(
        textwrap.dedent("""
            import sdk
            from sdk import ArenaError, RunSummary, run

            def summary(s: RunSummary) -> int:
                return s.matches

            runner = sdk.client.run_async
            errors: tuple[type[ArenaError], ...] = (sdk.ArenaAuthError, sdk.ArenaTLSError)
            started = run
        """),
        encoding="utf-8",
    )
    bad = tmp_path / "round46_typo.py"
    bad.write_text("import sdk\nfrom sdk import Plya\n\nx: int = sdk.hnad\n", encoding="utf-8")
    monkeypatch.chdir(ROOT)  # where mypy finds this checkout's sdk
    args = ["--strict", "--cache-dir", os.devnull, "--no-error-summary"]
    out, err, _ = api.run([*args, str(good), str(lazy), str(bad)])
    lines = [line for line in out.splitlines() if line.strip()]
    assert all("round46_typo.py" in line for line in lines), out + err
    assert any('has no attribute "Plya"' in line for line in lines), out + err
    assert any('has no attribute "hnad"' in line for line in lines), out + err
    # ... and at run time the lazy names still come on first use
    assert sdk.run.__module__ == "sdk.client" and sdk.client.run_async is not None
    with pytest.raises(AttributeError, match="Plya"):
        sdk.Plya  # type: ignore[attr-defined]  # noqa: B018  (mypy refuses it now)


def test_sdk_all_exposes_no_grpc_or_protobuf_type_and_importing_it_loads_no_grpc() -> None:
    """``sdk.__all__`` (and ``sdk.hand``'s) hold the SDK's and the engine's names only, and
    no public signature among them names a gRPC or protobuf type."""
    for mod in (sdk, hand):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, tuple):  # DECK
                assert all(type(v) is Card for v in obj)
                continue
            if isinstance(obj, types.UnionType):  # Action
                assert all(a.__module__ == "engine.actions" for a in obj.__args__), name
                continue
            where = str(getattr(obj, "__module__", None) or getattr(obj, "__name__", ""))
            assert where.split(".")[0] in ("sdk", "engine"), (name, where)
            if inspect.isclass(obj):
                assert all(c.__module__.split(".")[0] in ("sdk", "engine", "builtins", "enum")
                           for c in obj.__mro__), name  # fmt: skip
            if callable(obj) and not inspect.isclass(obj):
                hints = typing.get_type_hints(obj)
                assert not any(re.search(r"grpc|protobuf|_pb2", repr(h)) for h in hints.values())
    code = "import sys, sdk; print(sorted(m for m in sys.modules if 'grpc' in m or 'pb2' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the helpers an author needs --------------------------------------------------------


def _random_games(ruleset: str, seed: int) -> typing.Iterator[Game]:
    """A match played by random legal moves (a declaring lead preferred: marriages), the
    game yielded before every action until the match ends or 12 deals are played."""
    rng = random.Random(seed)
    n = 4 if ruleset.endswith("4p") else 3
    game = Game.new(ruleset, seed, [f"p{i}" for i in range(n)])
    while game.phase is not Phase.GAME_OVER and len(game.deal_results) < 12:
        yield game
        legal = game.legal_actions()
        declaring = [a for a in legal if isinstance(a, Play) and a.declare]
        bids = [a for a in legal if isinstance(a, Bid)]
        if declaring:
            game.apply(declaring[0])
        elif bids and rng.random() < 0.3:
            game.apply(bids[0])
        else:
            game.apply(rng.choice(legal))


@pytest.mark.parametrize("ruleset", ["classic", "1001-4p"])
def test_takes_is_what_each_seat_has_taken_so_far_as_the_engine_counts_it(ruleset: str) -> None:
    """New ``hand.takes(view)``: per seat, the card points of the tricks won in the deal plus
    the marriages declared: the engine's own count (``card_points`` + ``marriage_points``,
    what ``DealResult.takes`` holds at the end) at every play of every deal, from every
    seat's view; marriages and the ace marriage (200) included."""
    checked = marriages = 0
    for seed in range(3):
        for game in _random_games(ruleset, seed):
            if game.phase is not Phase.PLAYING:
                continue
            truth = tuple(game.card_points(s) + game.marriage_points(s) for s in range(game.n))
            for seat in range(game.n):
                view = observe(game, seat)
                assert hand.takes(view) == truth
            checked += 1
            marriages += bool(observe(game, 0).marriages)
    assert checked > 100 and marriages > 0
    # the ace marriage counts 200
    view = dataclasses.replace(
        observe(next(_random_games("classic", 0)), 0), marriages=((1, None), (2, Suit.SPADES))
    )
    assert hand.takes(view) == (0, 200, 40)


def test_legal_plays_are_the_plays_among_the_legal_actions_typed_as_plays() -> None:
    """New ``hand.legal_plays(view)``: the ``Play`` actions of ``view.legal_actions`` in their
    order, a declaring lead among them (``declare=True``); empty outside the play. Its
    return type is ``list[Play]`` (so ``p.card`` passes mypy)."""
    assert typing.get_type_hints(hand.legal_plays)["return"] == list[Play]
    declaring = 0
    for game in _random_games("classic", 7):
        view = observe(game, game.to_act)  # type: ignore[arg-type]
        plays = hand.legal_plays(view)
        assert plays == [a for a in view.legal_actions if isinstance(a, Play)]
        if view.phase is not Phase.PLAYING:
            assert plays == []
        declaring += any(p.declare for p in plays)
    assert declaring > 0


def test_every_public_name_has_a_docstring_and_hints_that_resolve() -> None:
    """Defect: ``typing.get_type_hints`` (what editors' and doc tools' introspection uses)
    raised ``NameError`` on ``sdk.hand``'s functions (``PlayerView`` and ``Ruleset`` were
    imported for the type checker only); and ``Card.suit`` / ``rank`` / ``points`` /
    ``of``, ``Suit.symbol`` and ``Rank.points`` / ``label`` had no docstring in ``help()``.
    Every public function, method and property of the SDK's names now has both."""
    missing: list[str] = []
    for mod in (sdk, hand):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not inspect.getdoc(obj):
                missing.append(name)
            if inspect.isfunction(obj):
                typing.get_type_hints(obj)
            if not inspect.isclass(obj):
                continue
            typing.get_type_hints(obj)
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = member.fget if isinstance(member, property) else member
                fn = getattr(fn, "__func__", fn)
                if inspect.isfunction(fn):
                    typing.get_type_hints(fn)
                    if not inspect.getdoc(fn):
                        missing.append(f"{name}.{attr}")
    assert missing == []


def test_the_docstrings_help_shows_say_what_an_author_needs() -> None:
    """Defect: ``help(PlayerView)`` named 15 of its 23 fields (not ``seat``, ``phase``,
    ``to_act``, ``active_seats``, ``deal_number``, ...), ``help(Bot)`` none of the
    attributes an author sets or reads (``name``, ``quick``, ``match_id``, ``deadline``:
    ``#:`` comments, which ``help`` does not show), nor ``give``'s and ``play``'s defaults;
    and nothing said that cards compare by suit first (``max(hand)`` is no strongest card)."""
    view_doc = inspect.getdoc(PlayerView) or ""
    named = set(re.findall(r"``(\w+)``", view_doc))
    fields = {f.name for f in dataclasses.fields(PlayerView)} | {"first_hand"}
    assert fields - named == set()
    assert "who led" in view_doc or "the one who led" in view_doc
    bot_doc = inspect.getdoc(Bot) or ""
    for attr in ("name", "quick", "match_id", "deadline", "legal_plays", "takes"):
        assert f"``{attr}``" in bot_doc, attr
    for method in (Bot.give, Bot.play, Bot.bid, Bot.contract):
        assert "Default:" in (inspect.getdoc(method) or ""), method.__name__
    card_doc = inspect.getdoc(Card) or ""
    assert "suit first" in card_doc and Card.H9 > Card.SA  # what the docstring warns of
    assert Card.of(Rank.KING, Suit.HEARTS) is Card.HK
    assert [r.points for r in Rank] == [0, 2, 3, 4, 10, 11]
    assert "9 0, J 2, Q 3, K 4, 10 10, A 11" in (inspect.getdoc(Rank.points) or "")


def test_the_guide_names_the_new_helpers_and_bid_cap_says_the_ace_marriage() -> None:
    """The guide's list of ``sdk.hand`` names the two new helpers; ``bid_cap``'s docstring
    said "120 plus the marriages held" but counts the ace marriage's 200 where the
    ruleset plays it and counts it for the bid: now said, and checked."""
    guide = " ".join((ROOT / "docs" / "writing-a-bot.md").read_text(encoding="utf-8").split())
    helpers = guide.split("Helpers for common questions are in `sdk.hand`: ", 1)[1][:600]
    assert "`legal_plays`" in helpers and "`takes`" in helpers
    assert "ace_marriage_counts_for_bid" in (inspect.getdoc(hand.bid_cap) or "")
    aces = sdk.parse_cards("A♠ A♣ A♦ A♥ 9♠ 9♣ 9♦")
    assert hand.bid_cap(aces, sdk.Ruleset.from_dict({"preset": "classic"})) in (120, 320)
    counts = sdk.Ruleset.from_dict({"ace_marriage": True, "ace_marriage_counts_for_bid": True})
    assert hand.bid_cap(aces, counts) == 320
    not_counted = sdk.Ruleset.from_dict({"ace_marriage_counts_for_bid": False})
    assert hand.bid_cap(aces, not_counted) == 120
