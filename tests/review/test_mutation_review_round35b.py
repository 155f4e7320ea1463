"""Mutation review, round 35 (b): the code changed in round 35 outside the web and the
benchmarks — the referee's answers to a Hello naming unknown matches and its count of
refused tokens, the storage's lost-log removal and file size limit message, the run's open
files check, the config's value cutting and override checks, the replay's refusals, the
bots' barrel bids and own declarations, the SDK's slow-``__init__`` note and class-attribute
warning.

Each test kills mutants (plausible hand-made bugs) that no test killed: it pins behaviour
found correct (no defect unless its docstring says so).
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import parse_config
from arena.tournament.runner import TournamentError


# ---------------------------------------------------------------- referee: sessions, tokens
def test_a_hello_id_of_200_characters_is_answered_and_one_of_201_is_not() -> None:
    """The bound on a ``Hello.running`` id is 200 characters, inclusive (kills ``>=`` for
    ``>`` and a lower bound such as this referee's own id lengths)."""
    from arena.referee.sessions import MAX_MATCH_ID_CHARS, BotSession, Stream

    async def go() -> list[str]:
        s = BotSession("x", "tok-x")
        stream = Stream("one")
        s.attach(stream)
        s.end_unknown(["y" * 200, "z" * 201, "t-" + "w" * 150])
        q, out = stream._queue, []
        while not q.empty():
            m = q.get_nowait()
            if m is not None:
                out.append(m.match_ended.match_id)
        return out

    assert MAX_MATCH_ID_CHARS == 200
    assert asyncio.run(go()) == ["y" * 200, "t-" + "w" * 150]


def test_the_referee_counts_each_refused_token_and_keeps_200_characters_of_the_peer() -> None:
    """Every stream refused for its token counts (not "one came"), and the last peer is
    kept cut at 200 characters (it is the client's to make as long as it likes)."""
    import grpc

    from arena.referee.core import Referee

    class Context:
        def __init__(self, peer: str, metadata: tuple[tuple[str, str], ...]) -> None:
            self._peer, self._metadata = peer, metadata
            self.aborted: list[Any] = []

        def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
            return self._metadata

        def peer(self) -> str:
            return self._peer

        async def abort(self, code: Any, message: str) -> None:
            self.aborted.append(code)

    async def go() -> tuple[int, str]:
        ref = Referee()
        ref.add_bot("ann", "tok-ann-0123456789")
        contexts = [
            Context("ipv4:10.0.0.1:1", ()),
            Context("ipv4:10.0.0.2:2", (("authorization", "Bearer tok-typo-0123456789"),)),
            Context("ipv6:" + "f" * 300, ()),
        ]
        for c in contexts:
            await ref.serve_stream(c)
            assert c.aborted == [grpc.StatusCode.UNAUTHENTICATED]
        return ref.refused_tokens()

    count, peer = asyncio.run(go())
    assert count == 3
    assert peer == ("ipv6:" + "f" * 300)[:200]


def test_refused_tokens_are_said_only_when_a_remote_bot_is_missing(tmp_path: Path) -> None:
    """The "is the remote bot's token right?" line is added only when a *remote* bot of
    the config did not come: not for a local bot that did not come while the remote one
    is connected (kills dropping either half of the condition)."""
    from tests.arena.fake_referee import FakeReferee
    from tests.arena.fake_referee import run_fake as _run

    remote = {"remote": True, "token": "tok-cid-0123456789"}
    cfg = parse_config({"name": "t", "seed": 7, "bot_wait_s": 0.1,
                        "bots": {"ann": "random", "bob": "random", "cid": remote},
                        "db": str(tmp_path / "t.sqlite"), "out": str(tmp_path / "out")},
                       source="test.toml", base_dir=tmp_path)  # fmt: skip
    fake = FakeReferee(absent={"ann"})
    fake.refused_tokens = lambda: (2, "ipv4:10.0.0.9:1")  # type: ignore[attr-defined]
    with pytest.raises(TournamentError) as info:
        _run(cfg, fake)
    said = str(info.value)
    assert "1 of 3 bots did not connect" in said and "\n  ann:" in said
    assert "refused" not in said and "token right" not in said


# ---------------------------------------------------------------- storage
def test_a_lost_log_replaced_by_another_file_is_left_alone(tmp_path: Path) -> None:
    """Only a ``-wal``/``-shm`` that is still this connection's (same device and inode) is
    removed: a file another program put at that path since is left (kills dropping the
    identity check); one still its own is removed."""
    import os

    from arena.storage import Storage

    db = tmp_path / "a.sqlite"
    st = Storage(db)
    try:
        wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
        assert wal.exists() and shm.exists()
        other = tmp_path / "other"
        other.write_bytes(b"someone else's")
        os.replace(other, wal)
        st._drop_lost_log()
        assert wal.read_bytes() == b"someone else's"  # (not this connection's: kept)
        assert not shm.exists()  # (its own: removed)
    finally:
        st.close()


def _fake_fsize(monkeypatch: pytest.MonkeyPatch, soft: int) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, resource.RLIM_INFINITY))


def test_the_file_size_limit_is_met_within_64_kib_by_the_database_or_its_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file within a write (64 KiB) of RLIMIT_FSIZE met it: the database, its ``-wal`` or
    its ``-journal``; none near it, or no limit (RLIM_INFINITY, which is -1 on Linux),
    is not the limit (kills the 64 KiB margin dropped, the infinity test dropped, and
    ``-journal`` swapped for another suffix)."""
    from arena.storage import _file_size_limit_reached

    db = tmp_path / "a.sqlite"
    db.write_bytes(b"x" * 1000)
    _fake_fsize(monkeypatch, 1000 + 60_000)
    assert _file_size_limit_reached(db) == (61_000, db)
    _fake_fsize(monkeypatch, 1000 + 70_000)
    assert _file_size_limit_reached(db) is None
    _fake_fsize(monkeypatch, resource.RLIM_INFINITY)
    assert _file_size_limit_reached(db) is None
    journal = Path(f"{db}-journal")
    journal.write_bytes(b"j" * 200_000)
    _fake_fsize(monkeypatch, 220_000)
    assert _file_size_limit_reached(db) == (220_000, journal)


@pytest.mark.parametrize("code", [10, 13, 10 | (3 << 8)])
def test_a_disk_io_error_or_a_full_one_at_the_file_size_limit_names_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """SQLITE_IOERR (10, with its extended codes) and SQLITE_FULL (13) at the file size
    limit are said as the limit, not as a disk (kills SQLITE_FULL left out)."""
    import sqlite3

    from arena.storage import _translate

    db = tmp_path / "a.sqlite"
    db.write_bytes(b"x" * 1000)
    _fake_fsize(monkeypatch, 4096)
    e = sqlite3.OperationalError("database or disk is full" if code == 13 else "disk I/O error")
    e.sqlite_errorcode = code
    said = str(_translate(e, db, "storing match m"))
    assert "reached this process's file size limit (4096 bytes: `ulimit -f`)" in said, said
    assert "while storing match m" in said


# ---------------------------------------------------------------- runner: open files
def _eight_bots(tmp_path: Path) -> Any:
    return parse_config({"name": "t", "seed": 7,
                         "bots": {f"r{i}": "random" for i in range(8)},
                         "db": str(tmp_path / "t.sqlite"), "out": str(tmp_path / "out")},
                        source="test.toml", base_dir=tmp_path)  # fmt: skip


@pytest.mark.parametrize(
    ("soft", "hard", "raised"),
    [
        (20, resource.RLIM_INFINITY, (1024, resource.RLIM_INFINITY)),  # to 1,024 at least
        (20, 2000, (1024, 2000)),
        (20, 50, (50, 50)),  # (a hard limit of exactly the need is enough)
        (50, 50, None),  # (enough already)
        (49, 49, "error"),
    ],
)
def test_the_open_files_need_is_16_and_3_a_bot_over_those_open(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    soft: int,
    hard: int,
    raised: Any,
) -> None:
    """With 10 files open and 8 bots a run needs 10 + 16 + 3 * 8 = 50: a soft limit under
    it is raised to 1,024 (or the hard limit, if lower, and never under the need), a hard
    limit of exactly 50 is enough, one of 49 is an error that says the need (kills a
    changed per-bot count, the bots left out, ``>`` for ``>=``, the 1,024 floor dropped)."""
    from arena.tournament import runner

    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(runner, "_open_files", lambda: 10)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (soft, hard))
    monkeypatch.setattr(resource, "setrlimit", lambda which, pair: calls.append(pair))
    cfg = _eight_bots(tmp_path)
    if raised == "error":
        with pytest.raises(TournamentError) as info:
            runner._check_open_files(cfg)
        assert "may open 49 files (`ulimit -n`; 49 at most" in str(info.value)
        assert "a tournament of 8 bots needs about 50:" in str(info.value)
        assert calls == []
    else:
        runner._check_open_files(cfg)
        assert calls == ([] if raised is None else [raised])


# ---------------------------------------------------------------- addresses
def test_a_host_of_253_characters_is_taken_and_one_of_254_is_not() -> None:
    """RFC 1035's 253 written characters is the bound, inclusive."""
    from arena.addresses import host_problem

    assert host_problem("a" * 253) is None
    said = host_problem("a" * 254)
    assert said is not None and "at most 253 characters" in said


def test_a_host_is_quoted_whole_up_to_60_characters_then_cut() -> None:
    """A host of 60 characters is quoted whole, one of 61 cut with its length said; a host
    with a control character is cut too (kills ``<`` for ``<=`` and the control-character
    message quoting the host whole)."""
    from arena.addresses import host_problem

    sixty = "a:" + "b" * 58  # (not an IPv6 address: refused, and quoted)
    said = host_problem(sixty)
    assert said is not None and said.endswith(repr(sixty)), said
    said = host_problem(sixty + "c")
    assert said is not None and said.endswith(f"{(sixty + 'c')[:60]!r}... (61 characters)")
    said = host_problem("a\x01" + "b" * 200)
    assert said is not None and "control characters" in said and "(202 characters)" in said
    assert len(said) < 160, said


def test_an_ipv6_address_with_a_zone_is_taken_and_an_empty_zone_is_not() -> None:
    """The host is checked as a whole IPv6 address, zone included ("fe80::1%eth0" taken;
    "::1%", an empty zone, refused: kills checking the address without its zone)."""
    from arena.addresses import host_problem

    assert host_problem("fe80::1%eth0") is None and host_problem("[::1]") is None
    for bad in ("::1%", "fe80::1%%"):
        said = host_problem(bad)
        assert said is not None and "not an IPv6 address" in said, bad


# ---------------------------------------------------------------- config: cutting, overrides
def test_a_bot_key_written_with_spaces_and_set_twice_asks_about_two_bots(
    tmp_path: Path,
) -> None:
    """``bots .a = ...`` twice (a dotted key with spaces) is a bot's key as much as
    ``bots.a`` (kills the ``"bots "`` prefix dropped)."""
    from tests.cli.test_bad_input_round35 import _refused

    e = _refused(tmp_path, 'name = "t"\nbots .a = "random"\nbots .a = "heuristic"\n')
    assert e.message.endswith("line 3 (bots .a = ...) sets a key that the file already set "
                              "(two bots of one name?)"), e.message  # fmt: skip


def test_cut_keeps_100_characters_written_out_and_says_the_length_of_the_original() -> None:
    """``_cut``: up to 100 characters quoted whole, past that the first 100 and the length
    of the text as given (not of its written-out form); control characters written out."""
    from arena.tournament.config import _cut

    assert _cut("a" * 100) == "a" * 100
    assert _cut("a" * 101) == "a" * 100 + "... (101 characters)"
    shown = _cut("\x01" * 150)
    assert shown.endswith("... (150 characters)") and "\x01" not in shown
    assert "\x1b" not in _cut("red\x1b[31m") and _cut("red\x1b[31m").startswith("red")


def test_an_override_of_a_long_key_or_value_is_quoted_cut(tmp_path: Path) -> None:
    """A ``--set`` whose key or value is thousands of characters is named cut, in the key
    of the error and in its message (kills either left whole)."""
    from arena.tournament.config import ConfigError, apply_overrides

    long_key = "k" * 3000
    with pytest.raises(ConfigError) as info:
        apply_overrides({}, [f"{long_key}=[1"])
    assert info.value.key == "k" * 100 + "... (3,000 characters)"
    value = "[" + "1, " * 2000
    with pytest.raises(ConfigError) as info:
        apply_overrides({}, [f"seed={value}"])
    assert info.value.key == "seed"
    assert f"not a TOML value: {value[:100]}... ({len(value.strip()):,} characters)" in str(
        info.value
    )
    assert len(str(info.value)) < 400


def test_an_integer_option_past_a_float_is_said_by_its_range_not_as_a_float(
    tmp_path: Path,
) -> None:
    """Only a key that takes a float is refused as "past the range of a float" for an
    integer of 400 digits; an integer key (``port``) says its own range (kills the float
    test widened to every integer)."""
    from arena.tournament.config import ConfigError

    base = {"name": "t", "bots": {"a": "random", "b": "random", "c": "random"}}
    with pytest.raises(ConfigError) as info:
        parse_config({**base, "port": 10**400}, source="t.toml", base_dir=tmp_path)
    assert info.value.key == "port"
    assert "must be between 0 (any free port) and 65535" in info.value.message
    with pytest.raises(ConfigError) as info:
        parse_config({**base, "bot_wait_s": 10**400}, source="t.toml", base_dir=tmp_path)
    assert "past the range of a float" in info.value.message


@pytest.fixture
def stubs() -> Iterator[None]:
    """The commands' runs stubbed out, as in ``tests/cli/test_bad_input_round35.py``."""
    from tests.cli.test_bad_input_round35 import _stubbed

    with _stubbed():
        yield


def test_an_option_and_a_long_set_of_its_key_are_refused_with_the_set_cut(
    tmp_path: Path, stubs: None
) -> None:
    """``--max-deals 3 --set max_deals=<thousands of digits>``: the override is quoted cut
    at 100 characters (kills it quoted whole)."""
    from tests.cli.test_bad_input_round35 import BOTS3, _error_line, _invoke

    config = tmp_path / "t.toml"
    config.write_text(BOTS3, encoding="utf-8")
    item = "max_deals=" + "9" * 5000
    args = ["tournament", "--config", str(config), "--max-deals", "3", "--set", item]
    line = _error_line(_invoke(args, tmp_path))
    assert f"--max-deals 3 and --set {item[:100]}... both set max_deals" in line, line
    assert len(line) < 300


# ---------------------------------------------------------------- replay: refusals, wording
def test_check_says_interrupted_of_a_match_with_a_forfeit_too(tmp_path: Path) -> None:
    """An interrupted match in which a bot had forfeited is still said to be interrupted
    (kills the line tied to a match without forfeits)."""
    from tests.arena.test_replay_audit_round35 import _random_match, _run, _write

    g = _random_match(4, deals=2)
    g.apply_trusted(g.legal_actions()[0])
    rec = g.record()
    forfeit = {"kind": "forfeit", "seat": 1, "deal": 1, "detail": "3 strikes"}
    rec.update(match_id="t-m00002", forfeits=[1], interrupted=True, incidents=[forfeit])
    r = _run("--check", _write(tmp_path, rec))
    assert r.exit_code == 0, r.output
    assert "interrupted in deal 3: the referee was stopped before the match ended" in r.output


def test_a_record_whose_deals_carry_no_number_replays_in_both_modes(tmp_path: Path) -> None:
    """A deal's ``number`` is optional (taken as its place): a record without any is shown
    whole, not refused as "numbered None" (kills the default dropped)."""
    from tests.arena.test_replay_audit_round35 import _random_match, _run, _write

    rec = _random_match(5).record()
    for d in rec["deals"]:
        d.pop("number", None)
    path = _write(tmp_path, rec)
    shown = _run(path)
    assert shown.exit_code == 0 and "refused" not in shown.output, shown.output
    assert "Deal 3 —" in shown.stdout
    assert _run("--check", path).exit_code == 0


def test_a_deal_with_only_an_outcome_whose_actions_stop_short_is_refused_at_its_end(
    tmp_path: Path,
) -> None:
    """A deal the record scores by its ``outcome`` alone (no deltas, no scores) and whose
    last action is gone is refused under that deal, not at the next (kills ``outcome``
    left out of what scores a deal)."""
    from tests.arena.test_replay_audit_round35 import _flat, _random_match, _run, _write

    rec = _random_match(11).record()
    d0 = rec["deals"][0]
    del d0["actions"][-1], d0["deltas"], d0["scores"]
    assert "outcome" in d0
    shown = _run(_write(tmp_path, rec))
    assert shown.exit_code == 1, shown.output
    assert (
        "refused: Deal 1 (record deal 0): the record scores the deal but its actions do not "
        "finish it"
    ) in _flat(shown.stdout), shown.output


def test_an_illegal_action_in_a_scored_deal_is_named_not_the_unfinished_deal(
    tmp_path: Path,
) -> None:
    """A scored deal refused at an illegal action is refused naming that action: the
    "does not finish it" of the deal cut short there does not replace it (kills the check
    of the deal's end made after an error too)."""
    from tests.arena.test_replay_audit_round35 import _flat, _random_match, _run, _write

    rec = _random_match(11).record()
    act = rec["deals"][0]["actions"][1]
    act["action"] = "bid 995"
    shown = _run(_write(tmp_path, rec))
    assert shown.exit_code == 1, shown.output
    text = _flat(shown.stdout)
    assert f"refused: Deal 1 (record deal 0), action 1 (seat {act['seat']}: bid 995)" in text
    assert "does not finish it" not in text, text


# ---------------------------------------------------------------- engine: seed mismatches
def test_seed_mismatches_takes_a_deal_without_a_number_as_numbered_by_its_place() -> None:
    """A deal without ``number`` is at its place: its cards, not the seed's, are named
    (kills the default taken as deal 0 for every deal)."""
    from engine.record import seed_mismatches
    from tests.arena.test_replay_audit_round35 import _random_match

    rec = _random_match(5, deals=2).record()
    for d in rec["deals"]:
        d.pop("number", None)
    last = len(rec["deals"]) - 1
    d = rec["deals"][last]
    assert last >= 1 and d["actions"] == [] and "hands" in d
    d["hands"][0][0], d["talon"][0] = d["talon"][0], d["hands"][0][0]
    assert seed_mismatches(rec) == [last]


# ---------------------------------------------------------------- bots on the barrel
def _barrel_view() -> Any:
    from tests.bots.test_blunders_round35 import _STRONG, _STRONG_TALON, _TO_125, _game, _view

    view = _view(_game(_STRONG, _STRONG_TALON, _TO_125, scores=[0, 880, 0], barrel=[0, 3, 0]))
    assert view.seat == 1 and view.barrel == (0, 3, 0)
    return view


@pytest.mark.parametrize(("pred", "limit"), [(120.0, 120.0), (130.0, 130.0), (119.0, 0.0)])
def test_heuristic_barrel_limit_is_the_take_at_even_odds_from_120(
    pred: float, limit: float
) -> None:
    """On the barrel the heuristic's bid limit is the amount made at even odds
    (``barrel_confidence`` 0.5: the predicted take itself), 120 included, else 0 (kills
    ``>`` for ``>=`` and the ordinary 0.65 confidence used there)."""
    from bots.heuristic import HeuristicBot

    class Fixed(HeuristicBot):
        def bid_estimate(self, view: Any) -> float:
            return pred - self.take_offset

    assert Fixed().bid_limit(_barrel_view()) == pytest.approx(limit)


@pytest.mark.parametrize(
    ("chances", "limit"),
    [
        ({120: 0.6, 130: 0.55, 135: 0.55, 140: 0.52}, 140.0),  # (at even odds, not 0.65)
        ({120: 0.9, 130: 0.9, 135: 0.2, 140: 0.9}, 130.0),  # (stops at the first it lacks)
        ({120: 0.45, 130: 0.9}, 0.0),
    ],
)
def test_counting_barrel_limit_climbs_the_legal_bids_at_even_odds(
    chances: dict[int, float], limit: float
) -> None:
    """The counting bot on the barrel: 120 must be made at even odds, then each legal bid
    above it while it still is (kills the bid confidence used for the barrel's and the
    climb stopped after the first bid above 120)."""
    from bots.counting import CountingBot

    class Fixed(CountingBot):
        def p_make_bid(self, view: Any, amount: float) -> float:
            return chances.get(int(amount), 0.0)

    view = _barrel_view()
    assert [a.amount for a in view.legal_actions if hasattr(a, "amount")][:3] == [130, 135, 140]
    assert Fixed().bid_limit(view) == limit


# ---------------------------------------------------------------- sdk: warnings, run_async
def test_state_on_the_class_is_warned_of_for_a_deque_and_a_private_name() -> None:
    """A ``collections.deque`` and a ``_private = []`` on the bot's class are shared by
    every match's instance as much as a public list (kills the deque left out of the
    containers and private names skipped); dunders and capitals are not warned of."""
    import collections

    from sdk import Bot
    from sdk.local import _shared_state

    class Mine(Bot):
        _seen: list[int] = []  # noqa: RUF012  (the mistake under test)
        recent: collections.deque[int] = collections.deque()  # noqa: RUF012
        TABLE = {"a": 1}  # noqa: RUF012
        __slots_like__: list[int] = []  # noqa: RUF012

    said = _shared_state(Mine, {})
    assert len(said) == 2, said
    assert said[0].startswith("Mine._seen is a list on the class") and "self._seen = []" in said[0]
    assert said[1].startswith("Mine.recent is a deque on the class")
    assert "self.recent = deque(...)" in said[1]


def test_a_process_pool_bot_is_named_by_the_runner_not_by_its_proxy_class() -> None:
    """With ``--workers`` the bot of a match is a :class:`~sdk.workers.Remote` proxy: the
    slow-``__init__`` note names the bot as the runner does (``name()``), not the proxy's
    own ``__init__`` (kills the ``Remote`` case dropped)."""
    import types

    from sdk.client import BotRunner
    from sdk.workers import Remote

    proxy = Remote.__new__(Remote)
    runner = types.SimpleNamespace(name="Mine")
    assert BotRunner._init_of(runner, proxy) == "Mine()"  # type: ignore[arg-type]


def test_run_async_hands_every_option_to_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_async``'s options reach :class:`BotRunner` as given (kills one dropped)."""
    import sdk.client as client
    from sdk import Bot

    seen: dict[str, Any] = {}

    class Runner:
        def __init__(self, bot: Any, arena: str, token: str, **kw: Any) -> None:
            seen.update(kw, bot=bot, arena=arena, token=token)

        async def run(self) -> Any:
            return "done"

    monkeypatch.setattr(client, "BotRunner", Runner)
    options: dict[str, Any] = {"tls": True, "ca": "ca.pem", "matches": 2, "name": "n",
                               "retry_for": 5.0, "workers": 3, "spec": "mine.py:Mine"}  # fmt: skip
    done: Any = asyncio.run(client.run_async(Bot, "h:1", "tok-0123456789", **options))
    assert done == "done"
    assert seen == {**options, "bot": Bot, "arena": "h:1", "token": "tok-0123456789"}


def test_check_names_the_turn_broken_not_a_forced_mark_on_the_wrong_seat(tmp_path: Path) -> None:
    """An action made by a seat out of its turn and marked ``forced`` is refused for the
    turn (the rule broken), not as "marked forced ... but N were legal" (kills the seat
    left out of what ``_check_by`` leaves to the rules)."""
    from engine import parse_action
    from engine.record import start_game
    from tests.arena.test_replay_audit_round35 import _random_match, _run, _write

    rec = _random_match(5).record()
    g = start_game(rec)
    actions = rec["deals"][0]["actions"]
    j = 0  # (the first action after the first with a choice)
    while j == 0 or len(g.legal_actions()) < 2:
        g.apply(parse_action(actions[j]["action"]), seat=actions[j]["seat"])
        j += 1
    entry = actions[j]
    assert parse_action(entry["action"]) in g.legal_actions() and entry["seat"] == g.to_act
    wrong = (entry["seat"] + 1) % 3
    entry.update(by="forced", seat=wrong)
    r = _run("--check", _write(tmp_path, rec))
    assert r.exit_code == 1, r.output
    assert f"it is seat {g.to_act}'s turn, not seat {wrong}'s" in r.output, r.output
    assert "marked forced" not in r.output


@pytest.mark.parametrize(("take", "chosen"), [(150.0, "contract 120"), (100.0, "concede")])
def test_a_barrel_declarer_whose_only_contract_is_120_names_it_when_he_makes_it(
    take: float, chosen: str
) -> None:
    """On the barrel, at a bid of 120 with no marriage (120 is the cap: the only contract),
    a hand predicted to make it names 120, and concedes (free, he stays on the barrel)
    only when it does not (kills "a contract of 120 or more" read as "above 120")."""
    from bots.heuristic import HeuristicBot
    from engine import Phase, parse_action
    from tests.bots.test_blunders_round35 import _Fixed, _game, _view

    hands = ["A♥ 10♥ K♥ Q♥ A♦ 10♦ A♠", "10♠ K♣ Q♠ J♠ 9♠ J♥ 9♥", "K♦ Q♣ A♣ 10♣ J♣ 9♣ K♠"]
    g = _game(hands, "Q♦ J♦ 9♦", ["bid 120", "pass", "pass"], scores=[0, 880, 0],
              barrel=[0, 3, 0])  # fmt: skip
    bot = _Fixed(take - HeuristicBot.take_offset)
    while g.phase is not Phase.CONTRACT:
        g.apply(bot.act(_view(g)), seat=g.to_act)
    view = _view(g)
    assert view.seat == 1 and view.bid == 120
    assert [str(a) for a in view.legal_actions] == ["contract 120", "concede"]
    assert bot.act(view) == parse_action(chosen)


SLOW_S = 4.0


def _slow_first_bid_class() -> type:
    import threading

    from sdk import Bot

    class SlowFirstBid(Bot):
        def __init__(self) -> None:
            super().__init__()
            self.slow = True

        def bid(self, view: Any) -> Any:
            if self.slow:
                self.slow = False
                threading.Event().wait(SLOW_S)
            return super().bid(view)

    return SlowFirstBid


def _play_one_match(kind: type, caplog: pytest.LogCaptureFixture, bank_ms: int) -> list[str]:
    """One match of ``kind`` (as "slow") against two bundled bots, decisions of 300 ms and
    a bank of ``bank_ms``; the SDK's warnings."""
    import dataclasses
    import logging

    from arena.referee import Referee, RefereeConfig, start_server
    from bots import load
    from engine import load_ruleset
    from sdk.client import BotRunner, run_async
    from tests.support.harness import on_the_loop

    names = ("slow", "heur", "rand")
    kinds = (kind, load("heuristic"), load("random"))

    async def main() -> None:
        ref = Referee(RefereeConfig(decision_ms=300, time_bank_ms=bank_ms, max_strikes=100))
        for name in names:
            ref.add_bot(name, f"token-{name}")
        server, port = await start_server(ref, host="127.0.0.1", port=0, tls=None)
        try:
            target = f"127.0.0.1:{port}"
            # heur and rand are the control: their calls on this loop (see on_the_loop); in
            # a worker thread, a wait for the GIL past 300 ms on a loaded machine would be
            # a slow make or decision of theirs, said in a line this test counts.
            runs = [run_async(kinds[0], target, "token-slow", matches=1, retry_for=30)] + [
                on_the_loop(BotRunner(b, target, f"token-{n}", matches=1, retry_for=30)).run()
                for n, b in zip(names[1:], kinds[1:], strict=True)
            ]
            bots = [asyncio.create_task(r) for r in runs]
            assert not await ref.wait_for_bots(list(names), timeout=30)
            rules = dataclasses.replace(load_ruleset("classic"), max_deals=1)
            await ref.run_match("m1", rules, seed=3, seats=list(names))
            await asyncio.wait_for(asyncio.gather(*bots), 30)
        finally:
            await ref.end_streams()
            await server.stop(1.0)

    with caplog.at_level(logging.WARNING, logger="sdk.client"):
        asyncio.run(main())
    return list(caplog.messages)


def test_a_slow_init_is_named_even_when_the_bank_still_covers_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The slow-``__init__`` note is said once the decision's own time (not the bank) is
    gone: a bank of 5 s covers the 1.5 s ``__init__``, but the bot's author still learns
    that making it took each match's first decision (kills the bank counted in)."""
    from tests.sdk.test_author_round35 import _SlowInit

    said = _play_one_match(_SlowInit, caplog, bank_ms=5000)
    told = [m for m in said if "making the bot took" in m]
    assert len(told) == 1 and told[0].startswith("match m1: making the bot took 1."), said


def test_a_request_behind_a_slow_decision_is_not_blamed_on_the_init(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request that expired behind a slow *decision* (the bot made at once; a first bid
    of 4 s outlasts the deal's requests, so the last of them expires behind it) says "busy
    with an earlier call", and no slow-``__init__`` note is given (kills every request that
    found the bot busy taken as one that waited for it to be made). Asserted only in the
    negative: how many requests expire depends on the machine's speed."""
    said = _play_one_match(_slow_first_bid_class(), caplog, bank_ms=0)
    assert not [m for m in said if "making the bot took" in m or "being made" in m], said
