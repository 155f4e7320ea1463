"""Review round 56a: hand mutants of round 55's performance changes to hot code (perf55r:
the referee's ``_after`` writing action events into the queues itself, the view written
from the game with the legal actions ``_play`` has, the engine's kept tuples; perf55e:
``PlayerView``'s own ``__init__`` and ``own_next_view`` without ``replace``; perf55s: the
SDK's read path and the answer filled in place; rec55/rec55b: card and play texts by
table, the run's last stores grouped). Each test names the mutants it kills.

83 hand mutants (A: arena/referee/match.py's ``_after``, ``_decide``, ``_send`` and
protocol's ``action_event_items``; P: the view's writer, ``game_view_bytes``,
``_joined_kept``, ``_store``; G: engine/game.py's kept tuples; V: engine/view.py's
``PlayerView.__init__``, ``_ViewFields``, ``own_next_view``/``_next_view``,
``visible_gives``; S: sdk/client.py's ``_on_read``, ``_send_answer``,
``_check_request_view``, ``_on_the_wire``; C: the card and play text tables; R:
arena/tournament/runner.py's run ends). The existing tests killed 58 (S6, R1 by hanging:
the read loop's held outbox never flushed, the last stores never asked for; pytest's
timeout); the tests here kill 11 more (A4, A12, P2, P9, G8, S8, R2, R4, R6, R8, R11; and
A13 again); 14 are equivalent: A10 (the "accepted though not in the legal list" return:
the engine accepts no action outside its list, review 55c's F02), A17 (the legal actions
not handed to ``game_view_bytes``: it asks the engine for the same tuple), P12 (the
hand table's ``< 24``: a mask's third byte holds cards 16-23 only), P13 (a legal
action's item not kept: made again, the same bytes), G3, G6, G7 (an empty or a clone's
kept tuple dropped: made again, equal; ``()`` is one object), V10, V12, V13 (``tuple()``
of a field: the engine's fields are tuples already, ``tuple(t) is t``), S3 (the play
shortcut of ``_on_the_wire`` dropped: a play has no number to clamp), S5 (``_read_size``
not set: the size check of a big view then runs at every request, as before a first
read), R5 (``max`` of the tail's end: the stores return in clock order), R7 (``now <=
play_end``: a last store returning after the last table stopped reads a later clock;
on a frozen test clock both branches count the same).

No defect was found: every mutant that lived was a missing test.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from arena import protocol
from arena.protocol import game_view_bytes, view_from_pb, view_to_pb
from arena.referee import Referee, RefereeConfig
from arena.referee.match import MatchRunner
from arena.referee.sessions import BotSession, Stream
from arena.storage import Storage, StorageError
from arena.tournament import TournamentError, runner
from arena.v1 import arena_pb2 as pb
from engine import PRESETS, Bid, Game, Give, Pass, PlayerView, observe
from sdk.client import BotRunner, _Outbox
from tests.arena.fake_referee import FakeReferee, make_config, run_fake
from tests.arena.test_run_ends_round55 import _no_group_but_needs, _stored_ids
from tests.sdk.test_hot_path_round48 import _Same
from tests.support.harness import as_message

# ----------------------------------------------------------------- perf55r: the referee


class _Answers(Stream):
    """An in-process bot asking for "deal_once" (and "results_once") that answers each
    request with a random legal action at once and keeps each request's view, by match."""

    __slots__ = ("referee", "rng", "session", "views")

    def __init__(self, referee: Referee, session: BotSession, seed: int) -> None:
        super().__init__("in-process")
        self.results_once = self.deal_once = True
        self.referee, self.session = referee, session
        self.rng = random.Random(seed)
        self.views: dict[str, list[pb.PlayerView]] = defaultdict(list)

    def put(self, msg: pb.ServerMessage | bytes) -> None:
        msg = as_message(msg)  # (a request comes as its wire bytes)
        if msg.HasField("decision_request"):
            r = msg.decision_request
            view = pb.PlayerView()
            view.CopyFrom(r.view)
            self.views[r.match_id].append(view)
            answer = pb.Decision(request_id=r.request_id, match_id=r.match_id,
                                 action=self.rng.choice(r.view.legal_actions))  # fmt: skip
            asyncio.get_running_loop().call_soon(self.referee.on_decision, self.session, answer)


def test_a_deal_once_request_leaves_out_every_bid_and_trick_the_last_one_carried() -> None:
    """A12, A13 (the prefix comparison of the bids or the tricks dropped: an auction or a
    deal's tricks grown since the seat's last request is a new tuple, and its old part was
    sent again whole): each request of a deal leaves out exactly the bids and completed
    tricks its seat's previous request of the deal held, nothing on a new deal."""

    async def main() -> list[_Answers]:
        referee = Referee(RefereeConfig(decision_ms=60_000, time_bank_ms=60_000))
        streams = []
        for i, name in enumerate("abc"):
            referee.add_bot(name, f"token-{name}")
            session = referee.session(name)
            stream = _Answers(referee, session, i)
            session.attach(stream)
            streams.append(stream)
        rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
        await asyncio.gather(*(referee.run_match(f"m{i}", rules, 20 + i, ["a", "b", "c"])
                               for i in range(2)))  # fmt: skip
        return streams

    grown_bids = grown_tricks = 0
    for stream in asyncio.run(main()):
        assert sorted(stream.views) == ["m0", "m1"]
        for views in stream.views.values():
            previous: PlayerView | None = None
            rules = dataclasses.replace(PRESETS["classic"], max_deals=4)
            for msg in views:
                view = view_from_pb(msg, rules, previous)
                if previous is None or previous.deal_number != view.deal_number:
                    assert (msg.bids_omitted, msg.tricks_omitted) == (0, 0)
                else:
                    assert (msg.bids_omitted, msg.tricks_omitted) == (
                        len(previous.bids), len(previous.tricks)
                    )  # fmt: skip
                    grown_bids += 0 < len(previous.bids) < len(view.bids)
                    grown_tricks += 0 < len(previous.tricks) < len(view.tricks)
                previous = view
    assert grown_bids > 5 and grown_tricks > 5


def test_a_seat_without_a_stream_is_queued_no_action_event() -> None:
    """A4 (``_after``'s skip of a seat with no stream dropped): an action's event goes to
    each connected seat's queue, censored for the third seat (a give's card hidden), and
    to none of a seat whose bot is disconnected (``BotSession.add_event``'s rule: it gets
    the match again from its view on reconnect), however many actions follow."""

    class Appended(list[bytes]):
        """A session's event queue that keeps everything appended to it."""

        def __init__(self) -> None:
            super().__init__()
            self.all: list[bytes] = []

        def append(self, item: bytes) -> None:
            self.all.append(item)
            super().append(item)

    async def go() -> None:
        sessions = [BotSession(n, f"tok-{n}") for n in ("a", "b", "c")]
        for s in sessions[:2]:
            s.attach(Stream("in-process"))
        queues = [Appended() for _ in sessions]
        for s, q in zip(sessions, queues, strict=True):
            s.events = q
        runner = MatchRunner("m", PRESETS["classic"], 1, sessions, RefereeConfig())
        game = runner.game
        rng = random.Random(3)
        gives = 0
        while game.deal_number == 0 and not game.is_over:
            seat = game.to_act
            assert seat is not None
            action = rng.choice(game.legal_actions())
            game.apply(action, seat=seat)
            before = [len(q.all) for q in queues]
            runner._after(seat, action, "bot", 0, 0)
            assert queues[2].all == []
            gives += isinstance(action, Give)
            for q, n in zip(queues[:2], before[:2], strict=True):
                told = [pb.ServerMessage.FromString(e).events[0] for e in q.all[n:]]
                acted = [e for e in told if e.HasField("action")]
                assert len(acted) == 1
                if isinstance(action, Give):
                    sees = queues.index(q) in (seat, action.to)
                    assert acted[0].action.action.give.HasField("card") == sees
        assert gives == 2

    asyncio.run(go())


# ----------------------------------------------------------- perf55r: the view's writer


def _bidding_game(seed: int = 5) -> tuple[Game, int, tuple[Any, ...]]:
    game = Game.new(PRESETS["classic"], seed, ["a", "b", "c"])
    seat = game.to_act
    assert seat is not None
    return game, seat, game.legal_actions()


def test_an_items_bytes_are_taken_only_from_an_entry_of_that_very_action() -> None:
    """P2 (``_joined_kept``'s check that an item's entry holds that very object dropped):
    an entry under one legal action's id that holds another object (one that once had the
    id) is not served; the list is written anew, and the entry made right."""
    game, seat, legal = _bidding_game()
    want = view_to_pb(observe(game, seat)).SerializeToString()
    first = legal[0]
    protocol._LEGAL_ITEM_BY_ID[id(first)] = (object(), b"stale")
    fresh = tuple(list(legal))  # (an equal tuple no entry holds: its items looked up)
    got = game_view_bytes(game, seat, 0, 0, 0, fresh)
    assert pb.PlayerView.FromString(got).SerializeToString() == want
    assert protocol._LEGAL_ITEM_BY_ID[id(first)][0] is first


def test_the_kept_lists_stay_bounded_and_right_across_a_clear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """P9 (``_store``'s clear dropped: the caches kept by identity, which hold their objects,
    grew for as long as a referee ran): past ``_CACHE_MAX`` entries a cache is emptied, and
    what is written after the clear is still the view's own bytes."""
    monkeypatch.setattr(protocol, "_CACHE_MAX", 4)
    monkeypatch.setattr(protocol, "_LEGAL_BY_ID", {})
    game, seat, legal = _bidding_game()
    want = view_to_pb(observe(game, seat)).SerializeToString()
    kept = [tuple(list(legal)) for _ in range(11)]  # (all alive: no id is reused meanwhile)
    for i, fresh in enumerate(kept):
        got = game_view_bytes(game, seat, 0, 0, 0, fresh)
        assert pb.PlayerView.FromString(got).SerializeToString() == want, i
        assert 1 <= len(protocol._LEGAL_BY_ID) <= 4
        assert protocol._LEGAL_BY_ID[id(fresh)][0] is fresh


# ------------------------------------------------------- perf55r: the engine's kept tuples


@pytest.mark.parametrize("preset", ["classic", "1001-4p"])
def test_a_views_bids_are_every_bid_and_pass_of_the_deal_in_order(preset: str) -> None:
    """G8 (``Game.auction``'s kinds cut to ``Bid``: the passes left out of every view's
    bids, observe's and the referee's alike, so no test comparing the two saw it): each
    seat's ``bids``, at every step of random matches, is exactly the deal's bids and
    passes as applied, with their seats; the same tuple until the next one."""
    rules = PRESETS[preset]
    rng = random.Random(9)
    game = Game.new(rules, 9, [f"p{i}" for i in range(rules.players)])
    applied: list[tuple[int, Any]] = []
    deal = game.deal_number
    passes = 0
    while not game.is_over and game.deal_number < 4:
        if game.deal_number != deal:
            applied, deal = [], game.deal_number
        want = tuple((s, a) for s, a in applied if isinstance(a, Bid | Pass))
        bids = game.auction()
        assert bids == want and game.auction() is bids
        for seat in range(rules.players):
            assert observe(game, seat).bids == want
        passes += any(isinstance(a, Pass) for _, a in want)
        seat = game.to_act
        assert seat is not None
        action = rng.choice(game.legal_actions())
        game.apply(action, seat=seat)
        applied.append((seat, action))
    assert passes > 10


# ------------------------------------------------------------ rec55b: the run's last stores


def test_the_stores_waiting_as_the_last_table_stops_follow_the_group_on_the_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R2 (``need_all`` without its ask: the stores waiting behind a group on the storage
    thread were left to the timer, a run's end held up to ``_GROUP_WAIT_S`` more): the
    last table stops while a group is being written; the stores waiting then are written
    the moment that group returns, in one commit, with no timer set."""
    release = threading.Event()
    written: list[list[str]] = []

    def store_group(storage: Any, tid: str, matches: list[str]) -> tuple[list[None], float]:
        if not written:
            release.wait(60)  # (the first group stays on the thread until told)
        written.append(list(matches))
        return [None] * len(matches), 0.0

    monkeypatch.setattr(runner, "_store_group", store_group)
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 3600.0)

    async def go() -> None:
        with ThreadPoolExecutor(max_workers=1) as pool:
            stores = runner._GroupStores(Any, "t", pool, 100, lambda e: None)  # type: ignore[arg-type]
            first = stores.submit("m1")  # type: ignore[arg-type]
            stores.need(first)  # (a table needs it: written at once)
            assert stores._writing
            ends = [stores.submit(m) for m in ("m2", "m3")]  # type: ignore[arg-type]
            stores.need_all()  # (the last table stops: the group on the thread is first)
            release.set()
            await first
            assert stores._writing and stores._timer is None and stores.commits == 2
            await asyncio.gather(*ends)
            assert written == [["m1"], ["m2", "m3"]]

    asyncio.run(go())


class _LastPlaysOn(FakeReferee):
    """The last match started returns once every other match has been handed over or
    has failed (their tables have stopped playing), ``play_s`` later on the test's clock;
    the commit holding it takes ``commit_s`` on that clock."""

    def __init__(self, now: list[float], total: int, fail: set[int], ids: list[str]) -> None:
        super().__init__(fail=fail)
        self.now, self.total, self.ids = now, total, ids
        self.started = 0
        self.last: str | None = None

    async def run_match(self, mid: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.started += 1
        if self.started == self.total:
            self.last = mid
        record = await super().run_match(mid, *args, **kwargs)
        if mid == self.last:
            while len(self.ids) < self.total - 1 - len(self.fail):
                await asyncio.sleep(0.001)
            self.now[0] += 100.0
        return record


@pytest.mark.timeout(60)  # (R8's mutant waits for ever: a hang guard, not a timing)
@pytest.mark.parametrize("fail", [set(), {0}])
def test_fewer_matches_than_tables_all_stored_at_once_as_the_last_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: set[int]
) -> None:
    """R6 (the tables counted as the concurrency, not the workers started: 6 matches at
    concurrency 8 divided the idle waits by 8), R8 (a table with no store to wait for,
    its only match failed, never said it stopped: the last stores waited for the timer,
    here for ever): three bots, six matches, eight tables asked for; the last match plays
    100 s on the test's clock after the others were handed over, the group holding it
    takes 7 s. Every store waits for the last table's stop, one commit holds them all;
    each idle table's wait counts 100 s, over the six tables that played."""
    now = [0.0]
    monkeypatch.setattr(runner, "_clock", lambda: now[0])
    _no_group_but_needs(monkeypatch)  # (no group size reached, no timer)
    ids: list[str] = []
    groups: list[list[str]] = []
    submit, save = runner._GroupStores.submit, Storage.save_matches

    def handed(stores: runner._GroupStores, match: Any) -> Any:
        ids.append(match.match_id)
        return submit(stores, match)

    referee = _LastPlaysOn(now, 6, fail, ids)

    def saved(storage: Storage, tid: str, matches: Any) -> Any:
        groups.append([m.match_id for m in matches])
        if referee.last in groups[-1]:
            now[0] += 7.0
        return save(storage, tid, matches)

    monkeypatch.setattr(runner._GroupStores, "submit", handed)
    monkeypatch.setattr(Storage, "save_matches", saved)
    out = run_fake(make_config(tmp_path, bots=3, concurrency=8), referee)
    stored = 6 - len(fail)
    assert out.played_now == stored and len(out.failed) == len(fail)
    assert groups == [ids] and len(ids) == stored and out.commits == 1
    assert now[0] == 107.0 and out.record_last_wait_s == 7.0 and out.record_wait_s == 7.0
    assert out.record_idle_wait_s == pytest.approx(100.0 * (stored - 1) / 6)


def test_a_failed_store_still_has_the_last_table_ask_for_the_stores_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R4 (``return`` for the ``break`` after a store failed: that table never said it
    stopped, so no table was the last, and the other tables' last stores waited for the
    timer): the first match's store fails; the run stops, saying so; the stores waiting
    as the tables stop are asked for once, by the last to stop; every match counted is
    stored, the failed one is not."""
    _no_group_but_needs(monkeypatch)
    monkeypatch.setattr(runner, "_GROUP_WAIT_S", 2.0)  # (the mutant's run ends, later)
    asked: list[int] = []
    need_all, save = runner._GroupStores.need_all, Storage.save_matches

    def spied(stores: runner._GroupStores) -> None:
        asked.append(len(stores._waiting))
        need_all(stores)

    def failing(storage: Storage, tid: str, matches: Any) -> Any:
        # (the first match refused, as a record SQLite refuses: the rest stored)
        bad = [m.match_id.endswith("-m00000") for m in matches]
        done = iter(save(storage, tid, [m for m, b in zip(matches, bad, strict=True) if not b]))
        return [StorageError(f"match {m.match_id}: scripted") if b else next(done)
                for m, b in zip(matches, bad, strict=True)]  # fmt: skip

    monkeypatch.setattr(runner._GroupStores, "need_all", spied)
    monkeypatch.setattr(Storage, "save_matches", failing)
    cfg = make_config(tmp_path, concurrency=4)
    with pytest.raises(TournamentError, match=r"results can no longer be stored.*scripted"):
        run_fake(cfg, FakeReferee())
    assert len(asked) == 1
    stored = _stored_ids(cfg.db)
    assert stored and not any(m.endswith("-m00000") for m in stored)


# ------------------------------------------------------------- perf55s: the SDK's read path


def test_a_message_of_events_alone_is_a_streams_progress() -> None:
    """S8 (the events left out of the progress test, read once into a local since round
    55): a message carrying only events (the referee's flush of another match's actions)
    proves the stream worked, so a drop after it is reconnected at once, its back-off
    started again; a Welcome alone, or a message of no events, is no proof."""
    bot = BotRunner(_Same, "127.0.0.1:1", "tok")
    out = _Outbox()
    bot._out = out
    welcome = pb.ServerMessage(welcome=pb.Welcome(bot_name="x", protocol_version=0))
    bot._on_read(welcome.SerializeToString(), out)
    assert bot._welcomed and not bot._progress
    bot._on_read(pb.ServerMessage().SerializeToString(), out)
    assert not bot._progress
    event = pb.Event(match_id="m-gone", seq=3, action=pb.SeatAction(seat=1))
    bot._on_read(pb.ServerMessage(events=[event]).SerializeToString(), out)
    assert bot._progress
