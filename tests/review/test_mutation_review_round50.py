"""Round 50 review: tests that kill the hand mutants of the 48th session's changes (the
Hello limits and a gone bot's Hello grace, the handshake timeout, the upgrade path, the
action events kept as bytes, the abandoned record's forfeits, the replay's takes line, the
legends, the bots' last barrel deal and four bare aces) that the other tests let live. The
mutants and their fate are listed in the round's report; each test names what it pins."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import HELLO_LIMITS
from arena.referee import Referee, RefereeConfig
from arena.referee import core as core_module
from arena.referee import match as match_module
from arena.referee import server as server_mod
from arena.tournament.config import identity_changes
from arena.tournament.runner import as_stored
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Game, HiddenGive, replay
from engine.record import ReplayError
from sdk import client as client_module
from sdk.bot import Bot
from sdk.client import BotRunner, _Outbox
from tests.arena.fake_referee import make_config
from tests.arena.fake_referee import run_fake as _run
from tests.arena.test_event_bytes_round49 import _events_of_matches
from tests.arena.test_mutation_review_referee import first_legal, seat_bots

ROOT = Path(__file__).parent.parent.parent
ONE_DEAL = dataclasses.replace(PRESETS["classic"], max_deals=1)


# ----------------------------------------------------------------------- action events


def test_the_action_sent_on_is_the_very_object_the_engine_applied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_decide`` returns the engine's own equal action, the one it applied (mutant:
    applied the engine's, returned the bot's decoded answer: each event of it missed the
    bytes kept by the engine's object, made anew for every answer)."""
    applied: list[Any] = []
    apply_trusted = Game.apply_trusted

    def keep(self: Game, action: Any) -> None:
        applied.append(action)
        apply_trusted(self, action)

    sent: list[tuple[Any, Any]] = []
    made = match_module.action_event_bytes

    def seen(mid: str, seq: int, source: Any, seat: int, action: Any) -> bytes:
        if not isinstance(action, HiddenGive):
            sent.append((action, applied[-1]))
        return made(mid, seq, source, seat, action)

    made_items = match_module.action_event_items

    def seen_items(mid: str, seq: int, source: Any, seat: int, action: Any) -> tuple[bytes, bytes]:
        sent.append((action, applied[-1]))  # (round 55: the actor's and the public events)
        return made_items(mid, seq, source, seat, action)

    monkeypatch.setattr(Game, "apply_trusted", keep)
    monkeypatch.setattr(match_module, "action_event_bytes", seen)
    monkeypatch.setattr(match_module, "action_event_items", seen_items)
    _events_of_matches()
    assert len(sent) > 100
    assert all(action is last for action, last in sent)


def test_each_seat_is_told_its_own_source_and_a_give_only_to_whom_it_goes() -> None:
    """Per seat: its own actions with their source (the bot's, forced), another seat's
    without; a give's card to the actor and the receiver only (mutants: the actor's event
    made as the hidden one; a third seat's censored give taken from the event made for the
    receiver, card and all, when the receiver came first in the loop)."""

    async def main() -> dict[str, Any]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0))
        streams = seat_bots(ref, ("a", "b", "c"), first_legal)
        await ref.run_match("m1", ONE_DEAL, 5, ["a", "b", "c"])
        return streams

    streams = asyncio.run(main())
    gives = 0
    for me, name in enumerate(("a", "b", "c")):
        events = [e for m in streams[name].log for e in m.events if e.HasField("action")]
        assert events
        for e in events:
            actor = e.action.seat
            if actor == me:
                assert e.source in (pb.ACTION_SOURCE_BOT, pb.ACTION_SOURCE_FORCED)
            else:
                assert e.source == pb.ACTION_SOURCE_UNSPECIFIED
            if e.action.action.HasField("give"):
                give = e.action.action.give
                gives += 1
                assert give.HasField("card") == (me in (actor, give.to_seat)), (me, e)
    assert gives == 2 * 3  # (both gives, told to each of the three seats)


# ------------------------------------------------------------------------- the grace


def test_a_bot_away_at_the_start_that_is_not_gone_has_its_whole_grace() -> None:
    """Only a gone bot whose stream is saying Hello has 1 s (``GONE_HELLO_GRACE_S``): one
    merely not connected when its match starts (a restart, a reconnect under way) has the
    referee's whole ``reconnect_grace_s`` (mutant: every seat away at the start had 1 s)."""

    async def main() -> tuple[str, float]:
        ref = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=0, reconnect_grace_s=60))
        seat_bots(ref, ("a", "b"), first_legal)
        ref.add_bot("c", "tok-c")  # registered, not connected (and never gone)
        task = asyncio.create_task(ref.run_match("m1", ONE_DEAL, 5, ["a", "b", "c"]))
        try:
            for _ in range(1000):
                if "m1" in ref.session("c")._away:
                    break
                await asyncio.sleep(0.01)
            until, _ = ref.session("c")._away["m1"]
            left = until - asyncio.get_running_loop().time()
            runner = ref.session("c").seats["m1"].match
            detail = next(i["detail"] for i in runner.incidents if i["seat"] == 2)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return detail, left

    detail, left = asyncio.run(main())
    assert detail == "not connected at the start; 60 s to reconnect"
    assert left > 30


# ----------------------------------------------------------------------- handshake


def test_the_handshake_timeout_is_the_hellos_and_the_docs_say_it() -> None:
    """A connection has as long for its handshake as a stream for its Hello, 10 s, as
    docs/protocol.md says (mutant: gRPC's 120 s default written back)."""
    assert server_mod.HANDSHAKE_TIMEOUT_MS == core_module.HELLO_TIMEOUT_S * 1000
    seconds = f"{server_mod.HANDSHAKE_TIMEOUT_MS / 1000:g} s"
    doc = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert f"**Handshake**: a connection has {seconds} to finish its TLS and HTTP/2" in doc


# ------------------------------------------------------------------- the SDK's Hello


class _Named(Bot):
    name = "n" * 300


def _hello_of(runner: BotRunner, monkeypatch: pytest.MonkeyPatch) -> pb.Hello:
    """The Hello ``runner`` sends on its next stream (its channel fails at once)."""
    sent: list[pb.BotMessage | None] = []

    class Kept(_Outbox):
        __slots__ = ()

        def put_nowait(self, msg: pb.BotMessage | None) -> None:
            sent.append(msg)
            super().put_nowait(msg)

    class NoChannel(Exception):
        pass

    def fail() -> Any:
        raise NoChannel

    monkeypatch.setattr(client_module, "_Outbox", Kept)
    runner._channel = fail  # type: ignore[method-assign]
    with pytest.raises(NoChannel):
        asyncio.run(runner._session())
    assert sent and sent[0] is not None
    return sent[0].hello


def test_the_sdks_hello_keeps_within_the_limits_the_matches_it_holds_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long bot name is cut to the limit (the referee refuses a Hello over it: the bot
    never connected), and ``running`` to 1,024 ids, the matches it holds first (mutants:
    not cut; the unmade ids first, the held match's id cut off)."""
    runner = BotRunner(_Named, "127.0.0.1:1", "tok")
    runner._unmade.update({f"u{i}": ("lost", 0) for i in range(1100)})
    runner._matches["m-held"] = object()  # type: ignore[assignment]
    hello = _hello_of(runner, monkeypatch)
    assert hello.bot_name == "n" * HELLO_LIMITS["bot_name"][1]
    assert len(hello.running) == HELLO_LIMITS["running"][0]
    assert hello.running[0] == "m-held" and hello.running[1] == "u0"
    assert core_module.hello_problem(hello) is None


@pytest.mark.parametrize("holds", ["nothing", "a match", "an unmade match"])
def test_the_connected_line_says_it_waits_only_with_no_match_under_way(
    holds: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot holding a match (or one it could not make) resumes it: "waiting to be seated"
    would be wrong (mutants: said always; said beside an unmade match)."""
    runner = BotRunner(Bot, "127.0.0.1:1", "tok")
    if holds == "a match":
        runner._matches["m1"] = object()  # type: ignore[assignment]
    elif holds == "an unmade match":
        runner._unmade["m1"] = ("lost", 0)
    with caplog.at_level(logging.INFO, logger="sdk.client"):
        runner._on_welcome(pb.Welcome(bot_name="b", server_version="9"), _Outbox())
    (line,) = [r.getMessage() for r in caplog.records if "connected to" in r.getMessage()]
    assert ("waiting to be seated" in line) == (holds == "nothing"), line


# ---------------------------------------------------------------- abandoned records

OLD = ROOT / "tests" / "arena" / "data" / "abandoned_6960bee0.json"


def test_an_abandoned_record_with_one_seat_not_forfeited_is_refused() -> None:
    """Every seat, not all but one (mutant: a record of three seats with two forfeits,
    the third seat's win cut off, passed)."""
    rec = json.loads(OLD.read_text(encoding="utf-8"))
    replay(rec)
    two = copy.deepcopy(rec)
    two["forfeits"] = two["result"]["forfeits"] = [0, 1]
    two["incidents"] = [
        i for i in two["incidents"] if not (i["kind"] == "forfeit" and i["seat"] == 2)
    ]
    with pytest.raises(ReplayError, match=r"abandoned: .*every seat has forfeited.*\[0, 1\]"):
        replay(two)


# ------------------------------------------------------------------- identity changes


def test_a_bundled_bot_changed_beyond_its_code_is_said_by_its_parts() -> None:
    """The words "another version of the arena's bots/" are said only of a bundled bot
    alike but for its code: one whose env changed too is said so (mutant: every bundled bot
    whose code changed was put down to the arena's version, its env change unsaid)."""
    old = {"bots": [{"name": "r", "bot": "random", "code": "1", "env": {"A": "1"}}]}
    new = {"bots": [{"name": "r", "bot": "random", "code": "2", "env": {"A": "2"}}]}
    assert identity_changes(old, new) == ["bot r's code and env"]
    new["bots"][0]["env"] = {"A": "1"}
    assert identity_changes(old, new) == [
        "bundled bots r: another version of the arena's bots/ than the one that played it"
    ]


def test_a_rule_changed_in_a_damaged_stored_ruleset_is_said() -> None:
    """A stored ruleset that is no ruleset (a damaged row) has every key it holds in use
    (mutant: none, and no change to it was said)."""
    old = {"ruleset": {"name": "x", "barrel": False, "barrel_mode": 5}}
    new = {"ruleset": {"name": "x", "barrel": False, "barrel_mode": "many"}}
    assert identity_changes(old, new) == ['ruleset.barrel_mode 5 → "many"']


def test_an_option_one_side_uses_is_a_change() -> None:
    """An option is left out only when neither ruleset uses it: the barrel switched on
    with another penalty plays that penalty, which is said (mutant: used by both)."""
    a = {**PRESETS["classic"].to_dict(), "barrel": False}
    b = {**PRESETS["classic"].to_dict(), "barrel_penalty": 200}
    assert identity_changes({"ruleset": a}, {"ruleset": b}) == [
        "ruleset.barrel false → true",
        "ruleset.barrel_penalty 120 → 200",
    ]


# -------------------------------------------------------------------------- as_stored


def test_a_fixed_id_tournament_of_this_config_is_taken_as_it_is(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its own stored tournament: the config, and no word of a ruleset stored with an
    option it never uses (mutant: the early return dropped; it said one with none)."""
    cfg = make_config(tmp_path, bots=3, ruleset="1001", id="club")
    assert _run(cfg, max_new_matches=1).completed == 1
    with caplog.at_level(logging.INFO, logger="arena.tournament"):
        assert as_stored(cfg) is cfg
    assert "was stored with a ruleset" not in caplog.text


def test_of_two_older_tournaments_of_its_rules_the_latest_is_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tournaments of its name stored by an older arena, each with another option its
    ruleset never uses: the config is the latest's, as the docstring says (mutant: the
    first stored)."""
    from arena.tournament import runner as runner_mod

    cfg = make_config(tmp_path, bots=3, ruleset="1001")
    ids = []
    with monkeypatch.context() as older:  # (an arena before as_stored)
        older.setattr(runner_mod, "as_stored", lambda c: c)
        for unused in ({"barrel_mode": "one"}, {"barrel_penalty": 7}):
            was = dataclasses.replace(cfg, ruleset=dataclasses.replace(cfg.ruleset, **unused))
            ids.append(_run(was, max_new_matches=1).tournament_id)
    assert len(set(ids)) == 2 and cfg.tournament_id not in ids
    assert as_stored(cfg).tournament_id == ids[1]


def test_a_four_seat_ruleset_is_described_without_its_unused_options_only() -> None:
    """The options a table of four never uses are left out of its description, and the one
    only it uses is kept (mutants: four seats left as they were; the probe of three seats)."""
    from engine.rules import describe_ruleset

    four = PRESETS["1001-4p"].to_dict()
    assert describe_ruleset({**four, "name": "h", "barrel_mode": "one"}) == "h (1001-4p)"
    assert describe_ruleset({**four, "name": "h", "nines_talon_value": 5}) == (
        "h (1001-4p + nines_talon_value 5)"
    )


def test_the_web_legend_names_the_columns_as_their_headings_do() -> None:
    """The standings' legend under the table says "Bids won", the column's heading since
    the 48th session ("bidding wins" was renamed in the heading, not in the legend)."""
    js = (ROOT / "arena" / "web" / "static" / "leaderboard.js").read_text(encoding="utf-8")
    headings = re.findall(r'^  \["\w+", "([^"]+)"', js, re.M)
    assert "bids won" in headings
    legend = re.search(r'"Ranked by μ−3σ[^"]*"', js)
    assert legend is not None
    assert "Bids won: the deals the bot declared" in legend[0]
    assert "idding win" not in legend[0]


# ------------------------------------------------------------------- four bare aces


def _names_as_before(hands: list[str], talon: str) -> bool:
    """Whether counting names the contract a bot whose aces model never binds names."""
    from bots.counting import CountingBot
    from engine import Pass, Phase
    from tests.bots.test_blunders_round35 import _finish_setup, _game

    class Before(CountingBot):
        aces_bare_offset = 1000.0  # made at every level: never binds

    g = _game(hands, talon)
    while g.phase is Phase.BIDDING:
        g.apply(Pass(), seat=g.to_act)
    new, old = CountingBot(), Before()
    new.safety = old.safety = 1e6
    return _finish_setup(g.clone(), new)[-1] == _finish_setup(g.clone(), old)[-1]


def test_four_aces_with_a_ten_name_as_before() -> None:
    """The four aces' model binds without a ten only (mutant: bound with a ten too)."""
    from tests.bots.test_aces_round49 import _HANDS, _TALON

    assert not _names_as_before(_HANDS, _TALON)  # (it binds here)
    # The declarer's 9♥ swapped for the defenders' 10♥: four aces and a ten.
    ten = [_HANDS[0].replace("9♥", "10♥"), _HANDS[1], _HANDS[2].replace("10♥", "9♥")]
    assert _names_as_before(ten, _TALON)
