"""``PlayerView``'s own ``__init__`` (round 55): a view stored as a plain slotted object
would be, then made a ``PlayerView``; the same view, frozen, equal, hashable, printable,
picklable and ``dataclasses.replace``-able as the dataclass's ``__init__`` made it, for
fewer bytecodes; and ``own_next_view`` without ``dataclasses.replace``."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from engine import PRESETS, Game, Phase, PlayerView, observe, own_next_view
from engine.view import _ViewFields

NAMES = ["ann", "bob", "cid"]
#: Short matches (random play may take hundreds of deals to reach 1000).
RULES = dataclasses.replace(PRESETS["classic"], max_deals=3)


def _views(seed: int = 3) -> list[PlayerView]:
    """Every seat's view at every decision of a random game (every phase, all fields
    used: talon, gives, marriages, tricks, deal results)."""
    g = Game.new(RULES, seed, NAMES)
    rng = random.Random(seed)
    views = []
    while g.phase is not Phase.GAME_OVER:
        views += [observe(g, s) for s in range(g.n)]
        g.apply(rng.choice(g.legal_actions()))
    return [*views, *(observe(g, s) for s in range(g.n))]


def _field_by_field(view: PlayerView, cls: type[PlayerView] = PlayerView) -> PlayerView:
    """``view`` rebuilt as the dataclass's own frozen ``__init__`` built it: each field
    through ``object.__setattr__``."""
    made = object.__new__(cls)
    for f in dataclasses.fields(PlayerView):
        object.__setattr__(made, f.name, getattr(view, f.name))
    return made


def _kwargs(view: PlayerView) -> dict[str, Any]:
    return {f.name: getattr(view, f.name) for f in dataclasses.fields(PlayerView)}


def test_the_init_takes_the_fields_in_order_as_the_dataclass_did() -> None:
    params = list(inspect.signature(PlayerView).parameters.values())
    fields = dataclasses.fields(PlayerView)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.annotation for p in params] == [f.type for f in fields]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
    # the storage class holds the same slots in the same order (the class change keeps them)
    assert _ViewFields.__slots__ == PlayerView.__slots__ == tuple(f.name for f in fields)


def test_a_view_is_the_same_as_the_dataclass_init_made() -> None:
    views = _views()
    assert {v.phase for v in views} == set(Phase)
    for v in views:
        ref = _field_by_field(v)
        for made in (PlayerView(**_kwargs(v)), PlayerView(*_kwargs(v).values())):
            assert type(made) is PlayerView
            assert made == ref and hash(made) == hash(ref) and repr(made) == repr(ref)
            assert all(getattr(made, n) is getattr(v, n) for n in PlayerView.__slots__)
            assert pickle.loads(pickle.dumps(made)) == ref
            assert dataclasses.replace(made, scores=(1, 2, 3)) == dataclasses.replace(
                ref, scores=(1, 2, 3)
            )
    assert type(dataclasses.replace(views[0], bid=120)) is PlayerView


def test_a_view_stays_frozen() -> None:
    view = _views()[0]
    for name in PlayerView.__slots__:
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"field '{name}'"):
            setattr(view, name, None)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"field '{name}'"):
            delattr(view, name)
    # (a name that is no field: Python 3.11's frozen slots dataclass raises TypeError from
    # its __setattr__'s super() there, as before this round; either way nothing is set)
    with pytest.raises((AttributeError, TypeError)):
        view.extra = 1  # type: ignore[attr-defined]
    assert not hasattr(view, "__dict__")


def test_a_wrong_argument_is_named_as_before() -> None:
    kwargs = _kwargs(_views()[0])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'trump'"):
        PlayerView(**{k: v for k, v in kwargs.items() if k != "trump"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'trumps'"):
        PlayerView(**kwargs, trumps=None)


class _Same(PlayerView):
    __slots__ = ()


class _Wider(PlayerView):
    __slots__ = ("note",)


class _WithDict(PlayerView):
    pass


@pytest.mark.parametrize("cls", [_Same, _Wider, _WithDict])
def test_a_subclass_keeps_its_class_and_layout(cls: type[PlayerView]) -> None:
    v = _views()[5]
    made = cls(**_kwargs(v))
    assert type(made) is cls
    assert made == _field_by_field(v, cls) and made != v  # (a dataclass's == needs the class)
    assert all(getattr(made, n) is getattr(v, n) for n in PlayerView.__slots__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seat = 1  # type: ignore[misc]


def _traced(call: Callable[[], object]) -> tuple[int, set[str]]:
    """The Python bytecodes ``call`` runs (``sys.settrace``'s opcode events) and the
    functions it runs (``module.qualname``)."""
    count = 0
    functions: set[str] = set()

    def tracer(frame: FrameType, event: str, arg: object) -> Callable[..., Any]:
        nonlocal count
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            count += 1
        elif event == "call":
            functions.add(f"{frame.f_globals.get('__name__')}.{frame.f_code.co_qualname}")
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count, {f for f in functions if not f.endswith("<lambda>")}  # (``call`` itself)


def test_building_a_view_runs_fewer_bytecodes() -> None:
    """Defect (performance): the frozen dataclass's ``__init__`` ran 23 calls of
    ``object.__setattr__`` (8 bytecodes each: 193 bytecodes in all), at every view of
    every decision (``observe``, ``view_from_pb``, the SDK's ``request_view``); a plain
    slot store is 3 (97 in all)."""
    kwargs = _kwargs(_views()[0])
    count, functions = _traced(lambda: PlayerView(**kwargs))
    assert count < 120 and functions == {"engine.view.PlayerView.__init__"}


def test_own_next_view_builds_its_view_once_and_equals_observe() -> None:
    """Defect (performance): ``own_next_view`` made its view with ``dataclasses.replace``
    (a loop over the 23 fields and a keyword call: about 550 bytecodes of its 1,100-1,900,
    more than the rest of it). Now one ``PlayerView(...)`` with the fields that change;
    each of its three cases still gives ``observe``'s view."""
    rng = random.Random(1)
    seen: set[Phase] = set()
    for seed in range(40):
        g = Game.new(RULES, seed, NAMES)
        while g.phase is not Phase.GAME_OVER:
            seat = g.to_act
            assert seat is not None
            view = observe(g, seat)
            action = rng.choice(g.legal_actions())
            ahead = own_next_view(view, action)
            g.apply(action)
            if ahead is None:
                continue
            assert type(ahead) is PlayerView and ahead == observe(g, seat)
            _, functions = _traced(lambda v=view, a=action: own_next_view(v, a))
            assert "dataclasses.replace" not in functions
            assert "engine.view.PlayerView.__init__" in functions
            seen.add(view.phase)
        if len(seen) == 3 and seed >= 10:
            break
    assert seen == {Phase.PASSING, Phase.CONTRACT, Phase.PLAYING}
