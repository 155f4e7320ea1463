"""Round 38b: a senior reviewer's reading of round 38's product diff (sdk.cli's stream,
signal, os._exit and event-loop guards, sdk.local's fork check, the workers' directory,
gRPC's environment and proxy, serve's database, leaderboard --out DIR/, the web's count)."""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

import pytest

import sdk.client
import sdk.local
from engine import PRESETS, Game, observe
from sdk import Bot

NAMES3 = ["a", "b", "c"]


class _Plain(Bot):
    """A bot with a hook of its own and the base class's phase methods."""

    def act(self, view: Any) -> Any:
        return view.legal_actions[0]

    def on_match_start(self, *args: Any) -> None:
        pass


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[str]:
    """``module.name`` replaced by itself counting its calls (the list of its answers)."""
    real = getattr(module, name)
    calls: list[str] = []

    def counted(*args: Any) -> str:
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_decision_does_not_name_its_method_unless_the_bot_forked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: round 38's fork check (``not_a_fork``) was given the decision's method,
    "act() (mine.py:12)", made by ``method_of`` (a Path and a format, ~7.6 us) after every
    answer of every bot, though it is used only in a forked child: the very cost the round's
    last commit took off the answer's path came back. Named now only in a child."""
    calls = _counting(monkeypatch, sdk.local, "method_of")
    game = Game.new("classic", 1, NAMES3)
    assert game.to_act is not None
    view = observe(game, game.to_act)
    action, kind, _, _ = sdk.local._decide(_Plain(), view)
    assert kind == "bot" and action == view.legal_actions[0]
    assert calls == []


def test_a_raising_decision_still_names_its_method() -> None:
    """(The check above moved the naming, not the lines that use it: a raise is named.)"""
    game = Game.new("classic", 1, NAMES3)
    assert game.to_act is not None
    view = observe(game, game.to_act)

    class Raises(Bot):
        def act(self, view: Any) -> Any:
            raise ValueError("no")

    _, kind, detail, _ = sdk.local._decide(Raises(), view, logging.getLogger("t38b"))
    assert kind == "error" and detail.startswith("Raises.act() (test_review_round38b.py:")


def test_a_local_hook_does_not_name_itself_unless_the_bot_forked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: as above, for every hook a local series calls (``_defined``: an unwrap, a
    Path, a format), though named only in a forked child."""
    calls = _counting(monkeypatch, sdk.local, "_defined")
    bot = _Plain()
    assert sdk.local._hook(bot, lambda: bot.on_match_start(), "on_match_start") is None
    assert calls == []


def test_an_arena_hook_does_not_name_itself_unless_the_bot_forked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect: as above, for every hook the arena runner calls (``sdk.client._run_hook``)."""
    calls = _counting(monkeypatch, sdk.client, "_defined")
    assert sdk.client._run_hook(_Plain(), "on_match_start", (), "m1") is False
    assert calls == []


def test_a_bots_action_subclass_with_a_field_of_its_own_is_played_as_the_engines() -> None:
    """Defect: round 38's ``_plain`` plays a bot's subclass of an engine action "with a
    method or a field of its own" as the engine's (its docstring, and writing-a-bot.md),
    but the answer's check before it read every field of the subclass in its table of
    the engine's fields: a field of the bot's own raised KeyError out of the decision (no
    fallback, the series or the runner's call ended in a traceback)."""
    game = Game.new("classic", 1, NAMES3)
    assert game.to_act is not None
    view = observe(game, game.to_act)
    first = view.legal_actions[0]

    @dataclasses.dataclass(frozen=True)
    class Noted(type(first)):  # type: ignore[misc]
        note: str = "why"

    class Annotates(Bot):
        def act(self, view: Any) -> Any:
            return Noted(**{f.name: getattr(first, f.name) for f in dataclasses.fields(first)})

    action, kind, _, _ = sdk.local._decide(Annotates(), view, logging.getLogger("t38b"))
    assert kind == "bot"
    assert type(action) is type(first) and action == first


def test_a_copy_of_the_kept_open_stream_writes_where_it_does() -> None:
    """Defect: ``_KeptOpen`` (arena-bot's sys.stdout and sys.stderr since round 38) passed
    every attribute on to ``self._stream``, its own too: ``copy.copy(sys.stdout)`` (and
    pickle) made one without it, asked it for ``__setstate__``, and recursed to a
    RecursionError, where a plain stream copies or says it cannot be pickled."""
    import copy
    import io

    from sdk.cli import _KeptOpen

    text = io.StringIO()
    kept = copy.copy(_KeptOpen(text, "stdout"))
    kept.write("one")
    assert text.getvalue() == "one"


def test_a_serve_that_ends_early_on_a_dangling_db_link_removes_the_file_it_made(
    tmp_path: Path,
) -> None:
    """Defect: round 38's ``_Results.close()`` removes a database the serve made when it
    stored nothing (a busy port, say), but by the path given: a ``--db`` that is a symbolic
    link to a file not there yet (SQLite makes it at the link's target) lost the link,
    the user's, and kept the empty database the serve made. Now the made file goes and
    the link stays, as before the serve."""
    from arena.cli.serve import _Results

    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "arena.sqlite"
    link = tmp_path / "arena.sqlite"
    link.symlink_to(target)
    bots = {"a": "t" * 20, "b": "u" * 20, "c": "v" * 20}
    results = _Results.open(link, PRESETS["classic"], bots, None)
    assert target.exists()
    results.close()  # (the serve ended before its start: it could not listen)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert not target.exists()


@pytest.mark.parametrize(
    "target", ["dns:///arena.example:https", "dns:arena.example:http", "dns:///[::1]:https"]
)
def test_a_dns_target_with_a_port_name_grpc_takes_is_let_through(target: str) -> None:
    """Defect: round 38 refused a ``dns:`` target whose port is no number ("the port must
    be a number"), where before it was passed on; gRPC's resolver takes the names ``http``
    and ``https`` (80, 443: "dns:///localhost:https" connects to 127.0.0.1:443), and
    fails only on others ("Failed to parse port"), which stay refused."""
    from sdk.cli import _address_problem

    assert _address_problem(target) is None
    assert _address_problem(target.replace("http", "ssh")) is not None
