"""A bot author's code misbehaving (round 46 of the bot-author audit), each tried under
``arena-bot try`` and ``arena-bot run`` against an ``arena serve`` (or a tournament with a
file bot). Each test is a defect the round met (its docstring says which).

Checked and found as the docs say (no test here): an answer of a subclass of ``Play`` or
``Pass`` (the engine's action, locally and in an arena); ``parse_action`` of "play 10♥",
"play Th", "play kH" (the same play; "play T h" is refused, naming the text and the forms
it reads); a ``staticmethod`` ``play``, a ``functools.partial`` or a callable object as a
class's ``play`` (a partial of a two-argument function refused at load, naming it); a
bot class with ``__slots__``, with ``abc.ABCMeta``, a plain ``@dataclass``, a subclass of
``bots.heuristic.HeuristicBot`` overriding ``play`` (named ``heuristic``, as documented);
a heavy first decision (3 s: ``try`` warns naming it; an arena's bank pays, a warning in
the bot's log, no strike); ``Path(__file__).parent / "model.bin"``, an environment
variable and a sibling module, under ``try``, ``run`` and a tournament run from another
directory; two bot classes in one file (refused without ``:Class``, naming both);
``RecursionError`` in ``act`` (a bug: the fallback, one traceback with Python's "[Previous
line repeated ...]"); a view kept and read after the next decision (frozen: unchanged); a
bot slow only from the second deal on (``try --decision-ms 200 --time-bank-ms 1000``
counts the timeouts and warns that 3 forfeit; the arena with the same limits strikes and
forfeits it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import sys
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest

from bots import load
from engine import PRESETS
from sdk import Action, Bot, Play, PlayerView, play_local

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from harness import arena  # noqa: E402

HERE = Path(__file__).name


def _line_of(fn: Any) -> str:
    return f"{HERE}:{fn.__code__.co_firstlineno}"


# ----------------------------------------- a method set on the instance, named by its own


def _raising_play(bot: Bot, view: PlayerView) -> Action:
    raise ValueError("boom")


class PartialPlay(Bot):
    """Its ``play`` is a ``functools.partial`` set in ``__init__``."""

    def __init__(self) -> None:
        super().__init__()
        self.play = functools.partial(_raising_play, self)  # type: ignore[method-assign]


class Chooser:
    def choose(self, view: PlayerView) -> object:
        return "nonsense"


class BorrowedAct(Bot):
    """Its ``act`` is the bound method of another object, set in ``__init__``."""

    def __init__(self) -> None:
        super().__init__()
        self.act = Chooser().choose  # type: ignore[assignment]


class CallsNone:
    def __call__(self, view: PlayerView) -> object:
        return None


class CallableObject(Bot):
    """Its ``play`` is an object with a ``__call__``."""

    play = CallsNone()  # type: ignore[assignment]


def test_a_method_set_on_the_instance_is_named_where_it_is_defined() -> None:
    """Defect: a decision method set on the instance (``self.play = partial(...)``, another
    object's bound method as ``self.act``) was named by the class's, the SDK's own default:
    "PartialPlay.play() (bot.py:146) raised", and "BorrowedAct.bid() (bot.py:134)" for an
    ``act`` that answered; a callable object as ``play`` was named with no file. They are
    named by the function that runs now, as a method defined in the class is."""
    rand = load("random")
    m = play_local([PartialPlay, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    for i in m.incidents:
        assert i.detail.startswith(f"PartialPlay.play() ({_line_of(_raising_play)}) raised")
    m = play_local([BorrowedAct, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    for i in m.incidents:
        assert i.detail.startswith(f"BorrowedAct.act() ({_line_of(Chooser.choose)}) returned")
    m = play_local([CallableObject, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    for i in m.incidents:
        assert i.detail.startswith(f"CallableObject.play() ({_line_of(CallsNone.__call__)}) ")


# ---------------------------------------------------- an action's look-alike as the answer

LookAlike = namedtuple("LookAlike", "card declare")


class NamedTupleBot(Bot):
    def play(self, view: PlayerView) -> Action:
        first = view.legal_actions[0]
        assert isinstance(first, Play)
        return LookAlike(first.card, first.declare)  # type: ignore[return-value]


class DictBot(Bot):
    def play(self, view: PlayerView) -> Action:
        first = view.legal_actions[0]
        assert isinstance(first, Play)
        return {"card": first.card}  # type: ignore[return-value]


class AmountBot(Bot):
    def bid(self, view: PlayerView) -> Action:
        return {"amount": 120}  # type: ignore[return-value]


def test_an_actions_look_alike_is_told_what_to_return() -> None:
    """Defect: a namedtuple or dict with the fields of a legal play ("LookAlike(card=...,
    declare=False)") was only "not an Action", though equal in every field to the play it
    meant; it is told now which of the engine's classes to return, and which action."""
    rand = load("random")
    m = play_local([NamedTupleBot, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    for i in m.incidents:
        played = i.detail.rpartition("; played ")[2].removesuffix(" instead")
        assert "which is not an Action: a LookAlike with the fields of an action" in i.detail
        assert f"return Play(...) ({played})" in i.detail, i.detail
    m = play_local([DictBot, rand, rand], seed=1, max_deals=6)
    assert m.incidents and all("a dict with the fields of an action" in i.detail
                               for i in m.incidents)  # fmt: skip
    # (An amount alone is a bid's or a contract's: both are named.)
    m = play_local([AmountBot, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    assert "return Bid(...) (bid 120) or Contract(...) (contract 120)" in m.incidents[0].detail
    # A dict of no action's fields is said as before, with no advice.
    from sdk.local import _hint

    assert _hint({"card": 3}) == "" and _hint({"colour": "red"}) == ""


# ------------------------------------------------------------- a frozen dataclass as a bot


@dataclasses.dataclass(frozen=True)
class FrozenBot(Bot):
    """Its settings as a frozen dataclass's fields."""

    depth: int = 3

    def play(self, view: PlayerView) -> Action:
        return view.legal_actions[-1]


def test_a_frozen_dataclass_bot_plays_locally_and_timed() -> None:
    """Defect: a ``@dataclass(frozen=True)`` bot made ``play_local`` (and ``arena-bot
    try``) fail with ``FrozenInstanceError`` out of the runner's own line that sets
    ``self.match_id``: a raw traceback, no table. The runners set their attributes past
    the bot's ``__setattr__`` now."""
    rand = load("random")
    m = play_local([FrozenBot, rand, rand], seed=1, max_deals=2, match_id="mine")
    assert not m.incidents and m.names[0] == "FrozenBot"
    m = play_local([FrozenBot, rand, rand], seed=1, max_deals=2, decision_ms=60_000)
    assert not m.incidents


def test_a_frozen_dataclass_bot_plays_its_arena_matches(tmp_path: Path) -> None:
    """Defect: under ``arena-bot run`` the frozen dataclass bot was made, then setting its
    ``match_id`` raised: no bot for the match, every request unanswered, the match
    forfeited on timeouts. It plays now, with no strike."""
    rand = load("random")

    async def main() -> tuple[dict[str, Any], list[Any]]:
        async with arena(tmp_path, decision_ms=20_000, time_bank_ms=0) as a:
            names = ["frozen", "r1", "r2"]
            tasks = await a.runners(names, [FrozenBot, rand, rand], 1)
            rules = dataclasses.replace(PRESETS["classic"], max_deals=2)
            record = await a.referee.run_match("m1", rules, 1, names)
            return record, list(await asyncio.wait_for(asyncio.gather(*tasks), 60))

    record, summaries = asyncio.run(main())
    assert record["forfeits"] == []
    assert summaries[0].decisions > 0
    assert summaries[0].errors == 0 and summaries[0].rejected == 0


# ----------------------------------------- a neighbour named like a module imported already


def test_a_neighbour_named_like_the_arenas_module_is_named_as_hidden(tmp_path: Path) -> None:
    """Defect: a bot beside its own ``engine.py`` (its search engine) that imports from it
    was refused with "cannot import name 'search' from 'engine' (.../engine/__init__.py)":
    nothing said that its file was never read, the arena's ``engine`` being imported
    already. It is said now, with what to do."""
    from sdk.loader import BotLoadError, load_bot

    (tmp_path / "engine.py").write_text("def search(view):\n    return view.legal_actions[0]\n")
    (tmp_path / "mine46.py").write_text(
        "from sdk import Bot\nfrom engine import search\n\n\nclass Mine(Bot):\n"
        "    def act(self, view):\n        return search(view)\n"
    )
    with pytest.raises(BotLoadError) as err:
        load_bot(str(tmp_path / "mine46.py"))
    said = str(err.value)
    assert "cannot import name 'search' from 'engine'" in said
    assert "engine.py beside it is not what `engine` imports: a module engine was imported " \
        "already" in said and said.endswith("rename engine.py")  # fmt: skip
    # A folder of that name (a package of the bot's: `from engine.search import ...`) too.
    (tmp_path / "engine.py").unlink()
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "search.py").write_text("def search(view):\n    return None\n")
    (tmp_path / "mine46b.py").write_text(
        "from sdk import Bot\nfrom engine.search import search\n\n\nclass Mine(Bot):\n    pass\n"
    )
    with pytest.raises(BotLoadError) as err:
        load_bot(str(tmp_path / "mine46b.py"))
    assert "engine beside it is not what `engine` imports" in str(err.value)
    # A module missing for another reason keeps its own advice.
    (tmp_path / "mine46c.py").write_text("import no_such_module_46\n")
    with pytest.raises(BotLoadError) as err:
        load_bot(str(tmp_path / "mine46c.py"))
    assert "beside it is not what" not in str(err.value)
    assert "it is not installed for the Python that runs the bot" in str(err.value)


# ------------------------------------------------------- an action's notation, other forms


class TwoWordCard(Bot):
    """Builds its play's notation from the card's rank and suit, with a space between."""

    def play(self, view: PlayerView) -> Action:
        from sdk import parse_action

        first = view.legal_actions[0]
        assert isinstance(first, Play)
        text = str(first.card)
        return parse_action(f"play {text[:-1]} {text[-1]}")


def test_a_card_written_in_two_words_is_said_to_be_one() -> None:
    """Defect: ``parse_action("play T h")`` (rank and suit apart) was refused with the
    list of forms only, which showed nothing wrong with either; it says now that a card is
    one word, and the action meant. The other notations of a card are read as documented
    (``10♥``, ``Th``, lower case)."""
    from engine import ActionParseError, parse_action

    assert {parse_action(t) for t in ("play 10♥", "play Th", "PLAY th", "play 10H")} == {
        parse_action("play 10♥")
    }
    with pytest.raises(ActionParseError, match=r"\(a card is one word: 'play 10♥'\)"):
        parse_action("play T h")
    with pytest.raises(ActionParseError, match=r"\(a card is one word: 'give K♥ to 2'\)"):
        parse_action("give k H to 2")
    with pytest.raises(ActionParseError, match=r"expected e\.g\."):  # (no action meant: as before)
        parse_action("play T h now")
    rand = load("random")
    m = play_local([TwoWordCard, rand, rand], seed=1, max_deals=6)
    assert m.incidents
    assert all("(a card is one word: 'play " in i.detail for i in m.incidents)
