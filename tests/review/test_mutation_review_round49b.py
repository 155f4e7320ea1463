"""Round 49 review (b): the organiser features of the round (the tokens file read again,
``[members]``, ``arena tournament --forget``, the Hello limits), with the tests that kill
the hand mutants the round's own tests let live, and those of the defects found:

- a removed bot whose stream was ended but not yet let go (its handler runs later on the
  loop) was still idle: the lobby could seat it in a new match, which then waited a whole
  grace for it;
- a new token given to a gone bot (its grace had run out) made it no longer gone: each of
  its next matches waited a whole grace for it again;
- a bot listed again with one added in the same edit gave the next bot added the same
  position in the tournament's list (its order was then SQLite's);
- ``--forget`` beside a run's options named them by their Python names
  (``--config-path``, ``--overrides``), not as the user wrote them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli.serve import _TokensWatch
from arena.protocol import hello_problem
from arena.referee import Lobby, Referee
from arena.referee.sessions import Stream
from arena.storage import Storage
from arena.v1 import arena_pb2 as pb
from engine import load_ruleset
from tests.cli.test_forget_round49 import _ids, club, db  # noqa: F401 (fixtures)
from tests.cli.test_tokens_reload_round49 import BOTS, _settle, _watch, _write

WHY = "bot 'cid' was removed from the arena's tokens file"


def _connected(referee: Referee) -> dict[str, Stream]:
    """Every bot of ``referee`` given an open stream (as a Hello does)."""
    streams = {}
    for name in referee.bot_names():
        streams[name] = Stream(f"peer-{name}")
        referee.session(name).attach(streams[name])
    return streams


def _referee() -> Referee:
    referee = Referee()
    for name, token in BOTS.items():
        referee.add_bot(name, token)
    return referee


class _Match:
    """A running match as a seat sees it: what forfeits it was told of."""

    def __init__(self) -> None:
        self.forfeited: list[str] = []

    def forfeit(self, seat: Any, why: str) -> None:
        self.forfeited.append(why)


def test_a_removed_bot_whose_stream_is_not_let_go_yet_is_not_seated() -> None:
    """Defect: its stream is ended at once, but its handler detaches it only when it next
    runs; the lobby, woken by the change, saw it idle and could seat it in a new match."""

    async def go() -> None:
        referee = _referee()
        streams = _connected(referee)
        assert sorted(referee.idle_bots()) == ["ann", "bob", "cid"]
        referee.remove_bot("cid", WHY)
        assert streams["cid"].ending == (grpc.StatusCode.UNAUTHENTICATED, f"token revoked: {WHY}")
        assert referee.session("cid").connected  # (not let go yet: the race)
        assert sorted(referee.idle_bots()) == ["ann", "bob"]

    asyncio.run(go())


def test_a_removed_bots_seats_forfeit_its_queue_is_dropped_and_a_hello_in_flight_ends() -> None:
    async def go() -> None:
        referee = _referee()
        streams = _connected(referee)
        session = referee.session("cid")
        match = _Match()
        session.seats["m1"] = SimpleNamespace(match=match)  # type: ignore[assignment]
        streams["cid"].put(pb.ServerMessage())  # (queued: not to be sent after revoking)
        hello = session.reserved = Stream("peer-2")  # a second stream saying its Hello
        assert referee.remove_bot("cid", WHY) == ["m1"]
        assert match.forfeited == [f"its token was revoked: {WHY}"]
        assert session.gone == f"its token was revoked: {WHY}"
        assert streams["cid"]._queue.qsize() == 1  # (the end mark only)
        # the stream saying Hello is not welcomed after it: its handler checks `ending`
        assert hello.ending == (grpc.StatusCode.UNAUTHENTICATED, f"token revoked: {WHY}")
        # a removed bot's kept result is not waited for: it cannot come back
        session.seats.clear()  # (its match ended, played out for it)
        session.ends["m0"] = (None, 0, pb.ServerMessage())
        session.detach(streams["cid"], 30.0)
        assert referee.away_with_results() == []
        referee.add_bot("cid", BOTS["cid"])  # listed again: not gone for its revoked token
        assert session.gone is None and referee.away_with_results() == ["cid"]

    asyncio.run(go())


def test_a_new_token_alone_leaves_a_gone_bot_gone(tmp_path: Path) -> None:
    """Defect: update_bots let the old token go, then add_bot took the bot for one listed
    again after its removal: gone no more, each of its next matches waited its grace."""
    path, referee, watch = _watch(tmp_path, BOTS)
    referee.session("cid").gone = "it stayed away more than 30 s in match m1"
    _write(path, {**BOTS, "cid": "cid-token-2"})
    _settle(watch)
    assert referee.session("cid").gone == "it stayed away more than 30 s in match m1"


def test_an_added_bot_is_listed_among_the_tournaments(tmp_path: Path) -> None:
    path, referee, _ = _watch(tmp_path, BOTS)
    listed: list[list[str]] = []

    class Results:
        async def add_bots(self, names: list[str]) -> None:
            listed.append(names)

    lobby = Lobby(referee, load_ruleset("classic"))
    watch = _TokensWatch(path, BOTS, lobby, Results())  # type: ignore[arg-type]
    _write(path, {**BOTS, "dan": "dan-token-1"})  # (one added, none removed)
    _settle(watch)
    assert listed == [["dan"]]


def test_bots_added_to_a_stored_tournament_keep_their_order(tmp_path: Path) -> None:
    with Storage(tmp_path / "s.sqlite") as st:
        bots = [("ann", "serve"), ("bob", "serve")]
        st.ensure_tournament("serve-1", name="serve", fingerprint="f", config={},
                             total_matches=0, bots=bots)  # fmt: skip
        # bob removed and listed again with eve in one edit, then fay
        st.add_tournament_bots("serve-1", [("bob", "serve"), ("eve", "serve")])
        st.add_tournament_bots("serve-1", [("fay", "serve")])
        rows = st.conn.execute(
            "SELECT position, bot FROM tournament_bots WHERE tournament_id = 'serve-1'"
            " ORDER BY position"
        ).fetchall()
        info = st.tournament("serve-1")
    assert [tuple(r) for r in rows] == [(0, "ann"), (1, "bob"), (2, "eve"), (3, "fay")]
    assert info is not None and info.bots == ("ann", "bob", "eve", "fay")


def test_a_member_named_as_a_bot_of_none_is_not_that_bot() -> None:
    lobby = Lobby(Referee(), load_ruleset("classic"), members={"b2": "bob"})
    assert lobby._members_among(["bob", "b2", "cid"]) == 3


def test_forget_takes_an_id_before_a_name(db: Path) -> None:  # noqa: F811
    """A tournament named as another's id: the id is the one meant (and is unique)."""
    with Storage(db) as st:
        st.ensure_tournament("t2", name="week1", fingerprint="t2", config={},
                             total_matches=0, bots=[("a", "serve")])  # fmt: skip
    r = CliRunner().invoke(main, ["tournament", "--forget", "week1", "--db", str(db), "--yes"])
    assert r.exit_code == 0, r.output
    assert sorted(_ids(db)) == ["oops-test", "t2"]


def test_forget_beside_a_runs_options_names_them_as_written(db: Path, tmp_path: Path) -> None:  # noqa: F811
    config = tmp_path / "c.toml"
    config.touch()
    r = CliRunner().invoke(main, ["tournament", "--forget", "week1", "--db", str(db),
                                  "--config", str(config), "--set", "seed=1"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "not --config, --set" in r.output, r.output
    assert sorted(_ids(db)) == ["oops-test", "week1"]


@pytest.mark.parametrize("field", ["running", "features"])
def test_a_hello_entry_over_its_characters_is_refused(field: str) -> None:
    limit = {"running": 256, "features": 64}[field]
    assert hello_problem(pb.Hello(**{field: ["x" * limit]})) is None
    assert hello_problem(pb.Hello(**{field: ["x" * (limit + 1)]})) == (
        f"Hello.{field}[0] is {limit + 1} characters long, more than the {limit} each may have"
    )
