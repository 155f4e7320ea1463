"""Review round 55a: hand mutants of round 54's code no review covered — sdk/wire_view.py
(``request_view``), the tournament's recording accounting (``record_wait_s``,
``MatchRunner.record_cpu_s``, ``Referee.record_cpu_s``, the bench's share),
``arena.bench.forks`` and ``run_tasks``/the strength bench's decision-time columns, and the
replay page's address throttle and phone scrolling (arena/web/static/replay.js). Each test
names the mutants it kills (id and edit) in its docstring; the tally is at the end of this
docstring.

Defects found and fixed (each with its test here):
- the replay page: Back within 400 ms of the last step of a held → (the address's write
  still waiting for the throttle) and Forward again opened a position left before, where
  docs/web.md says Forward opens it where it was left: the waiting write is made as the page
  is hidden (``pagehide``);
- the replay's throttle counted its tokens by the wall clock (``Date.now``): the clock set
  back an hour held the address for an hour; now ``performance.now`` (monotonic);
- ``python -m arena.bench.strength`` ran ``--matches 0``, a ladder naming one bot twice in a
  row, an unknown ``--ruleset`` and ``--max-deals -1`` into a traceback, and took
  ``--workers 0`` and ``--pimc-budget 0`` unsaid: each is named (exit 2), with the checks
  ``python -m arena.bench.forks`` makes, now shared (``check_run_args``).

Run (a mutant at a time, ``pytest -x``): W (sdk/wire_view.py) against
tests/sdk/test_wire_view_round54.py and test_hot_path_round48.py; R (runner.py, match.py,
core.py) against tests/arena/test_recording_share_round54.py and review 54c's recording
tests; B (arena/bench/tournament.py) against tests/bench/test_bench_smoke.py; S, F
(strength.py, forks.py) against tests/bench's forks and strength tests, round 54's
contract tests and review 54c's; J (replay.js, style.css) against
tests/web/test_web_browser_round54.py (not slow). The live ones then against the tests
here and tests/web/test_replay_back_round55.py.

98 mutants: W01-W48, R01-R10, B01-B05, S01-S10, F01, F02, F04-F09, J01-J17.
- Killed by existing tests (44): W01-W04, W06, W08-W12, W14, W15, W17, W18, W25, W26,
  W29, W31, W32, W35-W37, W39, W40, W46; R01-R04, R07-R09; S01, S08; F02, F05, F09; J01,
  J02, J05, J08, J10, J13, J14.
- Killed by the tests here (42): W05, W07, W13, W16, W19-W22, W24, W28, W30, W33, W34,
  W38, W41-W45; R05, R06, R10; B01-B05; S03-S05, S07, S09, S10; F01, F04, F07, F08; J03,
  J04, J07, J09, J15.
- Equivalent (11): W23 (a deal result not kept is decoded again, the same), W27 (an item
  of exactly 4096 bytes not kept: looked up again), W47 (a kept trick always has cards:
  both decoders refuse one without), W48 (the fast path raises no TypeError), S02 (the
  nearest rank never passes the last for a quantile up to 1), S06 (``chunksize``: the
  pool's scheduling only), F06 (a delegate asked with one legal action answers it, as
  the loop does), J06 (every timer set while the tokens are short fires at the moment a
  token is whole: the first writes, the others find the address written), J11, J16 (the
  action log is built anew at each step, scrolled to its top: the current line is never
  above its box, so scrolling up is dead code), J12 (``>=`` scrolls by 0).
- Left (1): J17 (the older-list buttons' hover colour: ``#older-matches:hover`` only), a
  colour, no test.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import MalformedMessageError, view_from_pb, view_to_pb
from arena.v1 import arena_pb2 as pb
from engine import PlayerView, load_ruleset
from sdk import wire_view
from sdk.wire_view import request_view
from tests.sdk.test_wire_view_round54 import _mid_deal_view, _seat_views

# ------------------------------------------------------------------ sdk/wire_view.py


def _same_error(msg: pb.PlayerView, ruleset: Any, previous: PlayerView | None) -> None:
    """``request_view`` raises what ``view_from_pb`` raises, warm (the view's items known
    from the message unedited) or not."""
    with pytest.raises(MalformedMessageError) as want:
        view_from_pb(msg, ruleset, previous)
    with pytest.raises(MalformedMessageError) as got:
        request_view(msg, ruleset, previous)
    assert type(got.value) is type(want.value)
    assert (got.value.what, str(got.value)) == (want.value.what, str(want.value))


def _edited(edit: Any) -> tuple[pb.PlayerView, PlayerView, PlayerView]:
    before, v = _mid_deal_view()
    msg = view_to_pb(v)
    assert request_view(msg, v.ruleset, before) == v  # (its items known: the fast path)
    edit(msg)
    return msg, v, before


def _set(name: str, value: int) -> Any:
    return lambda m: setattr(m, name, value)


def _trick(field: str, value: int) -> Any:
    return lambda m: setattr(m.tricks[-1], field, value)


def _trick_card(m: pb.PlayerView) -> None:
    m.tricks[-1].cards[0].seat = 3


def _trick_card_rank(m: pb.PlayerView) -> None:
    m.tricks[-1].cards[0].card.rank = 9  # type: ignore[assignment]


def _bad_result_and_phase(m: pb.PlayerView) -> None:
    del m.deal_results[-1].scores[:]
    m.phase = 99  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("mutant", "edit"),
    [
        ("W13", lambda m: m.active_seats.append(m.active_seats[0])),
        ("W42", lambda m: m.active_seats.append(3)),
        ("W43", _set("dealer", 3)),
        ("W44", _set("declarer", 3)),
        ("W45", _trick_card),
        ("W19", _trick("leader", 5)),
        ("W20", _trick("winner", 3)),
        ("W21", _trick_card_rank),
        ("W22", _bad_result_and_phase),
    ],
)
def test_a_view_out_of_range_at_its_edge_is_refused_as_view_from_pb_does(
    mutant: str, edit: Any
) -> None:
    """W13 (the active seats' ``len(set(active)) != len(active)`` dropped): a seat twice.
    W42/W43/W44/W45 (``max(active) >= n``, ``dealer >= n``, ``declarer >= n``, a
    completed trick's ``max(seat) >= n`` as ``> n``): seat 3 at a 3-player table, the
    first seat past it. W19/W20 (a completed trick's ``t.leader >= n``/``t.winner >= n``
    dropped). W21 (``_new_trick`` catching only DecodeError): a trick's card of rank 9
    raised the card's error as ``card``, not ``view.tricks.card``. W22 (a deal result
    that does not decode caught as DecodeError only): its error came ahead of the one
    ``view_from_pb`` names first (the unknown phase). Each view is ``view_from_pb``'s to
    refuse, with its own error."""
    msg, v, before = _edited(edit)
    for previous in (before, None):
        _same_error(msg, v.ruleset, previous)


def test_a_view_with_more_players_than_its_ruleset_is_refused_with_its_items_known() -> None:
    """W38 (``n = len(items.players)``, not the ruleset's): a 4-player table's items known,
    a 4-player view under a 3-player ruleset was built as a view of that ruleset."""
    views = next(iter(_seat_views(2, 2, "1001-4p")))
    v4 = views[-1]
    msg = view_to_pb(v4)
    assert request_view(msg, v4.ruleset) == v4  # (its items known at 4 players)
    _same_error(msg, load_ruleset("1001"), None)


def _pair(same_deal: bool, enough: Any) -> tuple[PlayerView, PlayerView]:
    for views in itertools.chain(*(_seat_views(s, 6, "classic") for s in range(3))):
        for before, v in itertools.pairwise(views):
            if (before.deal_number == v.deal_number) == same_deal and enough(before, v):
                return before, v
    raise AssertionError("no such pair of views")


def test_bids_left_out_of_another_deals_view_are_refused() -> None:
    """W05 (``previous.deal_number != deal`` dropped): a view leaving out its deal's first
    bid, the match's last view of an earlier deal: ``view_from_pb`` refuses it (those are
    not this deal's bids); the mutant took the earlier deal's."""
    before, v = _pair(False, lambda b, v: len(b.bids) >= 1 and len(v.bids) >= 1)
    msg = view_to_pb(v, None, len(before.deal_results), 1, 0)
    request_view(view_to_pb(v), v.ruleset)  # (its items known)
    _same_error(msg, v.ruleset, before)


@pytest.mark.parametrize("what", ["bids", "results"])
def test_a_view_leaving_out_fewer_than_the_last_one_held(what: str) -> None:
    """W07 (``previous.bids[:omitted_bids]`` -> ``previous.bids``), W41
    (``previous.deal_results[:omitted]`` -> all of them): a view may leave out fewer bids
    or results than the match's last view held (the referee leaves out all; the protocol
    allows fewer): the rest are the message's own, not twice."""
    if what == "bids":
        before, v = _pair(True, lambda b, v: len(b.bids) >= 2)
        msg = view_to_pb(v, None, len(before.deal_results), 1, 0)
    else:
        before, v = _pair(True, lambda b, v: len(b.deal_results) >= 2)
        msg = view_to_pb(v, None, 1, 0, 0)
    request_view(view_to_pb(v), v.ruleset)  # (its items known)
    assert request_view(msg, v.ruleset, before) == view_from_pb(msg, v.ruleset, before) == v


def _warm(v: PlayerView) -> pb.PlayerView:
    msg = view_to_pb(v)
    request_view(msg, v.ruleset)
    return msg


def _shown_empty_talon(m: pb.PlayerView) -> None:
    m.talon_known = True
    m.ClearField("talon")


@pytest.mark.parametrize(
    ("mutant", "edit"),
    [
        ("W16", _shown_empty_talon),
        ("W33", lambda m: m.ClearField("to_act")),
        ("W34", _set("bid", 0)),
    ],
)
def test_a_field_as_view_from_pb_reads_it(mutant: str, edit: Any) -> None:
    """W16 (``if items.talon_known`` -> ``if items.talon``): a talon shown and empty is
    ``()``, not unknown. W33 (``to_act`` read without ``HasField``): a view with no seat
    to act says ``None``, not seat 0. W34 (``bid`` as ``items.bid or None``): a bid of 0
    sent is 0. Each as ``view_from_pb`` reads it, on the fast path."""
    _, v = _mid_deal_view()
    msg = _warm(v)
    edit(msg)
    assert request_view(msg, v.ruleset) == view_from_pb(msg, v.ruleset)


def test_a_hand_learnt_in_another_order_is_learnt_card_by_card(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """W24 (the hand's items learnt as ``zip(items.hand, view.hand)``, the sorted hand): a
    view with its hand in another order than sorted taught each card's bytes as another
    card of the hand; the next view of fewer cards (one played) held cards it had not."""
    monkeypatch.setattr(wire_view, "_KNOWN", {})
    before, v = _mid_deal_view()
    assert len(v.hand) < len(before.hand)
    assert request_view(view_to_pb(v), v.ruleset) == v  # (every item of v learnt)
    msg = view_to_pb(before)
    cards = list(msg.hand)[::-1]
    del msg.hand[:]
    msg.hand.extend(cards)
    assert request_view(msg, before.ruleset) == before  # (its new items learnt from it)
    assert request_view(view_to_pb(v), v.ruleset) == v  # (the fast path)


def test_a_cache_holds_at_most_its_bound_at_every_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """W28 (``len(cache) >= _CACHE_MAX`` -> ``>``): a cache held one entry past its
    bound."""
    monkeypatch.setattr(wire_view, "_CACHE_MAX", 8)
    cache: dict[bytes, Any] = {}
    for k in range(30):
        wire_view._store(cache, bytes([k]), k)
        assert 1 <= len(cache) <= 8


def _a_view_with_trump() -> PlayerView:
    for seed in range(40):
        for views in _seat_views(seed, 6, "classic"):
            for v in views:
                if v.trump is not None:
                    return v
    raise AssertionError("no view with a trump")


def test_the_views_fields_are_of_view_from_pbs_types() -> None:
    """W30 (``_SUIT``'s suits as ints): the view was equal (an IntEnum equals its int) but
    its trump no Suit: a bot reading ``view.trump.name`` failed. Every field, and the suits
    within, of the type ``view_from_pb`` gives."""
    v = _a_view_with_trump()
    msg = _warm(v)
    got, want = request_view(msg, v.ruleset), view_from_pb(msg, v.ruleset)
    assert got == want
    for f in dataclasses.fields(PlayerView):
        assert type(getattr(got, f.name)) is type(getattr(want, f.name)), f.name
    assert type(got.trump) is type(want.trump) and type(got.phase) is type(want.phase)
    assert [type(s) for _, s in got.marriages] == [type(s) for _, s in want.marriages]


# ------------------------------------------------------------------ the replay's address

#: Fake time (``performance.now``, a wall clock ``Date.now`` that can be set back), timers
#: run by ``advance(ms)``, and ``history.replaceState`` noting each write and its time.
_CLOCK_JS = """
let clock = 1000, wall = 1.7e12;
Object.defineProperty(performance, "now", { value: () => clock, configurable: true });
Date.now = () => wall + clock;
const timers = new Map(); let nextTimer = 1;
// (a timer runs a moment later at the soonest, as in a browser: the clock moves on)
globalThis.setTimeout = (fn, ms) => {
  timers.set(nextTimer, [clock + Math.max(ms, 0.001), fn]);
  return nextTimer++;
};
globalThis.clearTimeout = (id) => { timers.delete(id); };
function advance(ms) {
  const end = clock + ms;
  for (;;) {
    const due = [...timers].filter(([, [t]]) => t <= end).sort((a, b) => a[1][0] - b[1][0]);
    if (!due.length) break;
    const [id, [t, fn]] = due[0];
    timers.delete(id); clock = t; fn();
  }
  clock = end;
}
const writes = [];
globalThis.history = { replaceState: (s, title, url) => {
  writes.push([clock, url.slice(url.indexOf("#"))]); location.hash = url.slice(url.indexOf("#"));
} };
const listeners = {};
globalThis.addEventListener = (type, fn) => { listeners[type] = fn; };
"""


def _replay_js(code: str) -> Any:
    """``code`` run in node after replay.js (its ``main()`` left out) over round 38's fake
    DOM and :data:`_CLOCK_JS`; what it writes, as JSON."""
    import json
    import shutil
    import subprocess

    from arena.web import STATIC_DIR
    from tests.web.test_web_round38 import FAKE_DOM

    node = shutil.which("node")
    assert node is not None, "node runs the pages' scripts here"
    common = (STATIC_DIR / "common.js").read_text(encoding="utf-8")
    script = (STATIC_DIR / "replay.js").read_text(encoding="utf-8").rsplit("main();", 1)[0]
    run = subprocess.run([node, "-e", FAKE_DOM + _CLOCK_JS + common + script + code],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


_STEP_JS = "const step = (k) => { state.step = k; writeHash(); };\n"


def test_the_address_takes_a_burst_then_one_step_when_a_token_is_back() -> None:
    """J09 (``hashTokens < 1`` -> ``<= 0``): half a token wrote at once. J07 (the timer's
    wait ``(1 - hashTokens) * HASH_EVERY_MS`` -> ``HASH_EVERY_MS``): the latest position
    was written later than a whole token allows. J10 (the timer's ``hashTimer = null``
    dropped): after its first write no timer was set again, and the latest position was
    never written."""
    got = _replay_js(
        _STEP_JS
        + """
for (let k = 1; k <= 20; k++) step(k);  // the burst, at once (clock 1000)
advance(200); step(21);                 // half a token: waits until it is whole
const burst = writes.length;
advance(1000);
advance(100); step(22);                 // two tokens and a quarter back: at once
for (let k = 23; k <= 26; k++) step(k); // one more at once, then the timer again
advance(2000);
process.stdout.write(JSON.stringify({ burst, writes: writes.slice(20) }));
"""
    )
    assert got["burst"] == 20
    assert got["writes"] == [
        [1400, "#deal=0&step=21"],  # the moment its token is whole
        [2300, "#deal=0&step=22"],
        [2300, "#deal=0&step=23"],
        [2600, "#deal=0&step=26"],  # three quarters of a token later, the latest
    ]


def test_a_long_pause_gives_a_burst_of_twenty_no_more() -> None:
    """J04 (the tokens not capped at ``HASH_BURST``), J05 (``hashRefilled = now`` dropped:
    every call refilled from the page's start): after a minute's pause, 30 steps at once
    wrote more than 20 (past a browser's limit in a held key's time)."""
    got = _replay_js(
        _STEP_JS
        + """
advance(60000);
for (let k = 1; k <= 30; k++) step(k);
const burst = writes.length;
advance(60000);
for (let k = 31; k <= 60; k++) { advance(30); step(k); }
advance(2000);
process.stdout.write(JSON.stringify({ burst, writes: writes.length, last: location.hash }));
"""
    )
    assert got["burst"] == 20
    assert got["last"] == "#deal=0&step=60"
    assert got["writes"] <= 20 + 1 + 20 + 1 + 900 // 400 + 1


def test_the_clock_set_back_does_not_hold_the_address() -> None:
    """Defect (fixed): the tokens were counted by ``Date.now``, the wall clock: set back an
    hour (by hand, or a clock corrected), the next step waited an hour for its token and
    the address kept an old position that long. ``performance.now`` is monotonic."""
    got = _replay_js(
        _STEP_JS
        + """
for (let k = 1; k <= 20; k++) step(k);
wall -= 3600e3;  // the wall clock set back an hour
advance(10); step(21); advance(1000);
process.stdout.write(JSON.stringify({ writes: writes.length, last: writes[writes.length - 1] }));
"""
    )
    assert got["writes"] == 21
    assert got["last"][1] == "#deal=0&step=21" and got["last"][0] <= 1000 + 10 + 400


def test_a_write_waiting_is_made_as_the_page_is_left() -> None:
    """Defect (fixed): Back within 400 ms of a held key's last step left the address at an
    older position (its write waited for the throttle), and Forward opened that one. The
    page's ``pagehide`` writes it at once; the timer is then let go (no second write)."""
    got = _replay_js(
        _STEP_JS
        + """
for (let k = 1; k <= 22; k++) step(k);
const waiting = location.hash;
listeners.pagehide();
const left = [writes.length, location.hash];
advance(5000);
listeners.pagehide();  // (nothing waits: nothing written)
process.stdout.write(JSON.stringify({ waiting, left, writes: writes.length }));
"""
    )
    assert got["waiting"] == "#deal=0&step=20"
    assert got["left"] == [21, "#deal=0&step=22"]
    assert got["writes"] == 21


# ------------------------------------------------------------------ the recording share


def test_a_referee_sums_the_record_cpu_of_all_its_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """R05 (``Referee.record_cpu_s += runner.record_cpu_s`` -> ``=``): a referee of a
    tournament plays many matches; the share counted the last one's records only."""
    import asyncio

    from arena.referee import Referee, RefereeConfig
    from arena.referee import core as core_mod

    class Runner:
        def __init__(self, *args: Any) -> None:
            self.record_cut, self.record_cpu_s = False, 0.25

        async def run(self) -> dict[str, Any]:
            return {"result": {"scores": [0, 0, 0], "places": [1, 2, 3]}, "forfeits": []}

    monkeypatch.setattr(core_mod, "MatchRunner", Runner)

    async def main() -> float:
        referee = Referee(RefereeConfig())
        referee._by_name = dict.fromkeys("abc", Any)  # type: ignore[arg-type]
        for k in range(4):
            await referee.run_match(f"m{k}", "classic", k, ["a", "b", "c"])
        return referee.record_cpu_s

    assert asyncio.run(main()) == 1.0


def test_the_tables_wait_is_over_the_tables_that_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R06 (``record_wait_s = waited_s / max(1, len(workers))`` -> ``/ cfg.concurrency``): a
    resumed run with one match left plays it on one table, which waits for its store;
    divided by the concurrency (16) that wait was a sixteenth of itself."""
    import time as time_mod

    from arena.storage import Storage
    from tests.arena.fake_referee import make_config
    from tests.arena.fake_referee import run_fake as run

    cfg = make_config(tmp_path, concurrency=16)
    assert run(cfg, max_new_matches=23).played_now == 23
    save = Storage.save_match

    def slow(self: Storage, *args: Any, **kwargs: Any) -> None:
        save(self, *args, **kwargs)
        time_mod.sleep(0.2)  # (a commit's fsync: waited, no CPU)

    monkeypatch.setattr(Storage, "save_match", slow)
    out = run(cfg)
    assert out.finished and out.played_now == 1
    assert out.record_wait_s >= 0.2


def test_a_group_commits_cpu_is_shared_among_its_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R10 (each match of a group given the whole group's CPU, ``f.set_result(cpu)``): at
    concurrency 8 the stores go in groups of up to 4, and the share counted a group's CPU
    once per match in it."""
    from tests.arena.fake_referee import FakeReferee, make_config
    from tests.arena.fake_referee import run_fake as run
    from tests.review.test_mutation_review_round54c import _burning_saves

    burnt = _burning_saves(monkeypatch, 0.02)
    out = run(make_config(tmp_path, concurrency=8), FakeReferee(delay=0.2))
    assert out.finished and len(burnt) == 24
    recording = out.record_s - out.finalize_s
    assert recording <= 1.5 * max(sum(burnt), out.record_wait_s) + 0.1, (recording, sum(burnt))


def test_the_benchs_share_is_recording_over_playing_and_finalize(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """B01 (the share over ``play_s``), B05 (``total_s = play_s``): the tournament's time
    is playing plus ``finalize``. B02 (the worst share as the ``min``): the target holds for
    the largest. B03 (``met: worst <= 5.0``): 5.0 % is not under 5 %. B04 (``recording_s``
    without ``finalize``): it is ``record_s``, which holds it."""
    from types import SimpleNamespace

    from arena.bench import tournament as bench

    figures = iter([(9.0, 1.0, 0.5), (19.0, 1.0, 0.2)])  # play, finalize, record

    def run(cfg: Any, opts: Any) -> Any:
        play, fin, rec = next(figures)
        return SimpleNamespace(play_s=play, finalize_s=fin, record_s=rec, played_now=24,
                               failed=[], store_cpu_s=0.0, record_wait_s=0.0,
                               record_last_wait_s=0.0, record_idle_wait_s=0.0,
                               build_cpu_s=0.0, rate_s=0.0,
                               commits=0)  # fmt: skip

    monkeypatch.setattr(bench, "run", run)
    out = bench.bench_tournament(seconds=1, concurrency=(1, 4))
    assert out["concurrency 1"]["recording_share_percent"] == 5.0
    assert out["concurrency 1"]["recording_s"] == 0.5
    assert out["concurrency 4"]["recording_share_percent"] == 1.0
    assert out["targets"]["recording_share_percent"] == {"value": 5.0, "target": 5.0, "met": False}


# ------------------------------------------------------------------ strength, forks


def test_run_tasks_runs_one_worker_here() -> None:
    """S05 (``workers > 1`` -> ``>= 1``): one worker ran the tasks in a process pool, where
    a function of this process's making (a closure) cannot go; its docs say here."""
    from arena.bench.strength import run_tasks

    seen: list[int] = []

    def note(k: int) -> int:
        seen.append(k)
        return k * k

    assert run_tasks(note, [3, 1, 2], 1) == [9, 1, 4]
    assert seen == [3, 1, 2]


def test_the_pairs_decision_times_are_their_nearest_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    """S03/S04 (p90's quantile 0.95, p50's 0.6), S09 (the tail over all but the last time):
    the stronger bot's 12 decisions (3 games of 4) of 1 to 12 ms report the nearest ranks:
    p50 6, p90 11, p99 and max 12. S07 (a first place shared by all three counted a whole
    win, ``wins += 1``): a third of a win each."""
    from arena.bench import strength

    games = iter(range(3))

    def play(rules: Any, seed: int, names: list[str], budget: Any) -> dict[str, Any]:
        n, g = len(names), next(games)
        times = [[0.0001] * 3 for _ in range(n)]
        times[names.index("heuristic")] = [(4 * g + k) / 1000 for k in (3, 1, 2, 4)]
        return {"names": names, "scores": [0] * n, "places": [1] * n, "deals": 1,
                "seconds": [sum(t) for t in times], "decisions": [len(t) for t in times],
                "times": times}  # fmt: skip

    monkeypatch.setattr(strength, "play_match", play)
    out = io.StringIO()
    pair = strength.bench_strength(("random", "heuristic"), matches=1, workers=1, out=out)["pairs"][
        0
    ]
    assert pair["games"] == 3 and pair["win_rate"] == round(1 / 3, 3)
    tail = [pair[f"ms_{q}"] for q in ("p50", "p90", "p99", "max")]
    assert tail == [6.0, 11.0, 12.0, 12.0]
    # S10 (the table's p99 column printing p90): its last two columns are p99 and max
    assert out.getvalue().splitlines()[-1].split()[-2:] == ["12", "12"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--matches", "0"], "--matches must be at least 1, got 0"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--pimc-budget", "0"], "--pimc-budget must be a positive number of seconds"),
        (["--pimc-budget", "nan"], "--pimc-budget must be a positive number of seconds"),
        (["--bots", "random,random,heuristic"], "--bots: random follows itself"),
        (["--ruleset", "nope"], "unknown preset 'nope'"),
        (["--max-deals", "-1"], "max_deals: must not be negative, got -1"),
    ],
)
def test_the_strength_bench_names_a_bad_argument(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect (fixed): ``--matches 0``, a bot following itself in ``--bots`` (its pair has
    no game of one against two others), an unknown ``--ruleset`` and a negative
    ``--max-deals`` ended in a traceback; ``--workers 0`` and a ``--pimc-budget`` of 0 or
    NaN ran, unsaid. Each is named, exit 2 (as forks names its own, the same checks)."""
    from arena.bench.strength import main

    with pytest.raises(SystemExit) as exc:
        main(["--bots", "random,heuristic", "--matches", "1", "--workers", "1", *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def _fake_forks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int | None, int]]:
    """Forks' play-outs faked (each branch scores its seed's parity): what each was given,
    ``(max_deals, pimc seed)``."""
    from arena.bench import forks

    given: list[tuple[int | None, int]] = []

    def play_out(game: Any, seat: int, delegate: Any, seed: int, budget: Any) -> float:
        given.append((game.ruleset.max_deals, seed))
        return float(len(given) % 2)

    monkeypatch.setattr(forks, "_play_out", play_out)
    return given


def test_both_branches_are_one_deal_played_out_by_one_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    """F04 (``rules = dataclasses.replace(rules, max_deals=1)`` dropped): the branches were
    played to the match's end, not deal 0's. F07 (the new branch's pimc seed + 1): the two
    branches' searches differed by their seed too, not by the decision alone."""
    from arena.bench.forks import fork_seed

    given = _fake_forks(monkeypatch)
    rows = fork_seed(load_ruleset("1001"), 1, "bid-confidence=0.99")
    assert [r for r in rows if "decision" in r]
    assert given and all(deals == 1 for deals, _ in given)
    assert all(a[1] == b[1] for a, b in zip(given[::2], given[1::2], strict=True))


def test_forks_of_one_seed_and_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """F01 (the interval's ``len(diffs) > 1`` -> ``>= 1``): one seed's forks ended in
    ``statistics.stdev``'s error. F08 (``run_tasks(_task, tasks, 1)``): ``workers`` was
    not passed on."""
    from arena.bench import forks

    _fake_forks(monkeypatch)
    asked: list[int] = []
    run_tasks = forks.run_tasks

    def noting(fn: Any, tasks: Any, workers: int) -> Any:
        asked.append(workers)
        return run_tasks(fn, tasks, 1)  # (here: the fake play-outs are this process's)

    monkeypatch.setattr(forks, "run_tasks", noting)
    report = forks.forks("bid-confidence=0.99", "1001", seed=1, matches=1, workers=2)
    assert asked == [2]
    assert report["matches"] == 1 and report["changed"] >= 1
