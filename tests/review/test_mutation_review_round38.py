"""Mutation review of round 37's product changes that round 37's own review
(``test_mutation_review_round37.py``) did not reach (``8a9190d..a74596c``): the lock path
of a database named through a symbolic link, `arena serve`'s closing of the runs an
earlier serve left unfinished and its count of interrupted matches, ``--arena`` as gRPC's
``dns:``/``ipv4:``/``ipv6:`` targets without ``//``, config values quoted as written, the
bots' concession model, the leaderboard's and the web's independent deals, and `arena
replay`'s message of an edited seed. Each test here kills a plausible bug the earlier
tests let through (named in its docstring).

No defect found: every surviving mutant was a gap in the tests, not in the code. Left as
equivalent: ``min(failed, bid)`` in the defenders' share of a failure (a mean below the bid
is below it), ``>=`` for ``>`` between pimc's concession and play (equal floats).
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from arena.storage import lock_path

# ------------------------------------------------------------------ the database's lock


def test_a_chain_of_links_locks_the_file_at_its_end(tmp_path: Path) -> None:
    """Mutant: the link read one step only (``readlink``, not ``resolve``): a link to a
    link to the database had its lock beside the middle link, and a run through it and one
    through the file's own name both ran on the database."""
    real = tmp_path / "runs" / "arena.sqlite"
    real.parent.mkdir()
    real.touch()
    (tmp_path / "mid.sqlite").symlink_to(Path("runs") / "arena.sqlite")
    (tmp_path / "top.sqlite").symlink_to("mid.sqlite")
    assert lock_path(tmp_path / "top.sqlite") == real.with_name("arena.sqlite.lock")


def test_a_database_named_directly_keeps_its_lock_as_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutant: every path resolved, not only a link's: the lock of ``--db runs/a.sqlite``
    became an absolute path (and one through a linked folder the folder's real name), in
    every message naming it ("cannot make the lock file ...")."""
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to("real")
    monkeypatch.chdir(tmp_path)
    assert lock_path(Path("real/a.sqlite")) == Path("real/a.sqlite.lock")
    assert lock_path(Path("via/a.sqlite")) == Path("via/a.sqlite.lock")
    assert not os.path.isabs(lock_path(Path("a.sqlite")))


# ------------------------------------------------------------------ serve: runs left unfinished


def test_a_dead_serve_with_matches_is_marked_finished_with_their_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Pinned at the unit level (the faults tests kill these mutants too, with real serves
    killed, in a minute): the note of a run an earlier `arena serve` left unfinished names
    the matches it stored (not its ``total``, 0 without --matches), its tournament is
    marked finished with them, not removed for its total of 0; a finished serve tournament
    beside it is left as it was."""
    from arena.cli.serve import _Results
    from arena.storage import Storage
    from arena.web.demo import DEMO_BOTS, demo_record
    from engine import PRESETS

    db = tmp_path / "serve.sqlite"
    bots = {name: name * 8 for name in DEMO_BOTS}
    done = _Results.open(db, PRESETS["classic"], bots, 5)
    done_id = done.start("20261205-000000-aaaa")
    done._open = False  # (finished below, by hand, empty: a close() would remove it)
    done.close()
    with Storage(db) as st:
        st.finish_tournament(done_id, total=0)  # (a serve that ended, empty: kept as is)
    dead = _Results.open(db, PRESETS["classic"], bots, None)  # (no --matches: total 0)
    tid = dead.start("20261205-000001-bbbb")
    for k in (1, 2):
        dead._storage.save_match(
            tid, match_id=f"{tid}-m{k:04d}", index=k, table=0, set_no=k, seed=k,
            seats=DEMO_BOTS, record=demo_record(k, DEMO_BOTS, max_deals=1),
            started_at=0.0, finished_at=1.0,
        )  # fmt: skip
    dead._open = False  # (killed: its close(), which finishes an open run, never ran)
    dead.close()
    capsys.readouterr()
    again = _Results.open(db, PRESETS["classic"], bots, None)
    try:
        again.start("20261205-000002-cccc")
    finally:
        again.close()
    err = capsys.readouterr().err
    assert f"tournament {tid} was left unfinished" in err, err
    assert "marked finished with its 2 match(es)" in err and done_id not in err, err
    with Storage.open_readonly(db) as st:
        info = {t.id: t for t in st.tournaments()}
    assert info[tid].finished_at is not None and info[tid].completed == 2
    assert info[tid].total_matches == 2
    assert info[done_id].finished_at is not None and info[done_id].total_matches == 0


# ------------------------------------------------------------------ --arena without //


@pytest.mark.parametrize("value", ["dns:", "ipv4:", "ipv6:", "dns:0", "ipv4:70000"])
def test_a_grpc_scheme_naming_no_target_is_still_refused(value: str) -> None:
    """Mutants: the scheme taken with nothing after it (``dns:`` let through, to be retried
    for --retry-for seconds), or with a number alone after it (``dns:0``, ``ipv4:70000``: a
    HOST:PORT whose port is out of range, as it always was, taken as a target)."""
    from sdk.cli import _address_problem

    said = _address_problem(value)
    assert said is not None and "port" in said, said


@pytest.mark.parametrize(
    "value", ["ipv4:127.0.0.1:50051", "dns:arena:50051", "ipv6:[::1]:50051", "dns:50051"]
)
def test_grpc_targets_without_slashes_are_taken(value: str) -> None:
    """Pinned: gRPC's ``dns:``/``ipv4:``/``ipv6:`` forms without ``//`` pass, and a port
    alone after ``dns:`` is the HOST:PORT it always was."""
    from sdk.cli import _address_problem

    assert _address_problem(value) is None


@pytest.mark.parametrize("value", ["DNS:///lоcalhost:50051", "Ipv4:///１２７.0.0.1:1"])
def test_a_look_alike_after_a_scheme_in_capitals_is_refused(value: str) -> None:
    """Mutant: the scheme of a target URI compared as written, not in any case: a
    look-alike after ``DNS:///`` passed the check that ``dns:///`` has."""
    from sdk.cli import _address_problem

    bad = next(c for c in value if not c.isascii())
    said = _address_problem(value)
    assert said is not None and f"U+{ord(bad):04X}" in said, said


# ------------------------------------------------------------------ the bots' concession


def test_a_contract_made_at_the_bid_leaves_each_defender_half_the_rest() -> None:
    """Mutant: the defenders' share of what a made contract leaves taken as a third, not
    a half: a contract of 100 made just at 100 leaves 20, 10 to each (100 − 10 = 90)."""
    from bots.heuristic import relative_score_of_play

    assert relative_score_of_play(1.0, 100, -500) == pytest.approx(90.0)
    assert relative_score_of_play(1.0, 40, -500) == pytest.approx(40.0 - 40.0)


def test_pimc_last_hand_plays_a_strong_hand_rather_than_throw_in() -> None:
    """Mutant: pimc throwing in where playing scores less than the bonus the others get
    (the sign of the bonus dropped): the last hand in 1001 at 40 holding A♥ 10♥ K♥ Q♥ A♦
    10♦ A♠ (a take of ~170) threw in, 0 and 50 to each other player, a sure 40."""
    from engine import Contract, Phase, ThrowIn, observe
    from tests.bots.test_blunders_round35 import _HOPELESS, _OTHERS, _game
    from tests.bots.test_judgement_round37 import _pimc_own

    g = _game([_HOPELESS, _OTHERS[1], _OTHERS[0]], "J♥ Q♦ K♠", ["pass", "pass"],
              ruleset="1001")  # fmt: skip
    while g.phase is Phase.PASSING:
        g.apply(_pimc_own().act(observe(g, 2)), seat=2)
    view = observe(g, 2)
    assert ThrowIn() in view.legal_actions and view.bid == 40
    assert isinstance(_pimc_own().act(view), Contract)


def test_pimc_weighs_the_defenders_takes_by_the_heuristics_offset_prediction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutants: pimc's take for the defenders' share computed without the heuristic's
    ``take_offset`` (the raw estimate is ~15 points short of what a hand takes, so each
    defender was given ~7 points more, and it conceded or threw in hands worth playing), or
    handed to the model as the bid (the take and the bid swapped)."""
    import bots.pimc
    from bots.heuristic import HeuristicBot, estimate_take
    from engine import observe
    from tests.bots.test_judgement_round37 import _PENALTY_HALF, _at_contract, _pimc_own

    seen: list[tuple[float, float, float]] = []
    real = bots.pimc.relative_score_of_play

    def spy(
        p: float, bid: float, pred: float, sigma: float = 35.0, made_scores: float | None = None
    ) -> float:
        seen.append((p, bid, pred))
        return real(p, bid, pred, sigma, made_scores=made_scores)

    g = _at_contract(_PENALTY_HALF, _pimc_own())
    view = observe(g, 0)
    monkeypatch.setattr(bots.pimc, "relative_score_of_play", spy)
    _pimc_own().act(view)
    take = estimate_take(view.hand, view.ruleset) + HeuristicBot.take_offset
    assert seen and all(s[1:] == (view.bid, take) for s in seen), (seen, view.bid, take)


# ------------------------------------------------------------------ independent deals


def test_a_serves_tournament_is_not_said_to_have_independent_deals(tmp_path: Path) -> None:
    """Mutants: the note "independent deals" given to an `arena serve` tournament too, in
    the leaderboard's title or the web API's ``deals_note`` (its config says
    ``deals = "independent"``, but every match of a serve is dealt on a seed of its own:
    nothing to tell apart from a duplicate run of it)."""
    from arena.cli.serve import _Results
    from arena.leaderboard.render import board_title
    from arena.leaderboard.stats import build_leaderboard
    from arena.storage import Storage
    from arena.web.data import DataSource
    from engine import PRESETS

    db = tmp_path / "serve.sqlite"
    bots = {"a": "t" * 20, "b": "u" * 20, "c": "v" * 20}
    running = _Results.open(db, PRESETS["classic"], bots, None)
    try:
        tid = running.start("20261205-000000-aaaa")
        with Storage.open_readonly(db) as st:
            lb = build_leaderboard(st, tid)
        assert lb.deals == "independent" and lb.deals_note == ""
        assert "independent" not in board_title(lb), board_title(lb)
        api = DataSource(db).leaderboard(None)["tournament"]
        assert (api["id"], api["deals"], api["deals_note"]) == (tid, "independent", None)
    finally:
        running.close()


@pytest.mark.browser
def test_the_web_picker_tells_two_runs_of_one_config_apart_by_their_deals(
    tmp_path: Path,
) -> None:
    """Mutant: the page's tournament picker leaving the deals out of its labels: two runs
    of one config, one with independent deals and one with duplicate deals, were told
    apart by their ids and dates only (the rules of both being the same)."""
    from arena.storage import Storage
    from arena.web.demo import make_demo_db
    from tests.web.test_web_browser import arena_web, browser_paths, load, start_driver

    db = tmp_path / "two.sqlite"
    make_demo_db(db, matches=2, max_deals=1)
    with Storage(db) as st:
        demo = st.tournament("demo")
        assert demo is not None and demo.config.get("deals") == "independent"
        st.ensure_tournament("demo-dup", name="demo", fingerprint="demo-dup",
                             config={**demo.config, "deals": "duplicate"}, total_matches=2,
                             bots=[(b, "demo") for b in demo.bots])  # fmt: skip
    paths = browser_paths()
    driver = start_driver(*paths, str(tmp_path / "profile"))
    try:
        with arena_web(db) as url:
            load(driver, f"{url}?tournament=demo-dup")
            options = driver.find_elements("css selector", "#tournament-select option")
            labels = [o.text for o in options]
            line = driver.find_element("css selector", "#progress").text
    finally:
        driver.quit()
    assert sorted(x.split(", ")[1] for x in labels) == ["demo", "demo-dup"], labels
    assert any(x.startswith("demo [independent deals, demo, ") for x in labels), labels
    assert any(x.startswith("demo [duplicate deals, demo-dup, ") for x in labels), labels
    assert "deals" not in line, line  # (duplicate: the format's default, not said)


# ------------------------------------------------------------------ the SDK's installed libraries


@pytest.mark.parametrize("user_site", [True, False])
def test_the_installed_libraries_are_the_site_directories_of_packages(
    monkeypatch: pytest.MonkeyPatch, user_site: bool
) -> None:
    """Mutants: Debian's ``dist-packages`` (``apt install python3-numpy``) left out, or the
    user's ``~/.local`` site taken when user sites are off (a virtual environment) and
    left out when they are on (``pip install --user``): a frame there was taken for the
    bot's own code, or the bot's own code under ``~/.local`` for a library's."""
    import site

    from sdk.local import _installed_libraries

    monkeypatch.setattr(site, "getsitepackages", lambda: [
        "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
        "/usr/lib/python3.11", "/opt/py/lib/python3.11/site-packages",
    ])  # fmt: skip
    monkeypatch.setattr(site, "ENABLE_USER_SITE", user_site)
    monkeypatch.setattr(site, "getusersitepackages", lambda: "/home/u/.local/site-packages")
    found = set(_installed_libraries())
    assert {"/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages",
            "/opt/py/lib/python3.11/site-packages"} <= found  # fmt: skip
    assert "/usr/lib/python3.11" not in found
    assert ("/home/u/.local/site-packages" in found) is user_site


# ------------------------------------------------------------------ replay: an edited seed


def _swapped(rec: dict[str, Any], deals: range) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    for k in deals:
        h = out["deals"][k]["hands"]
        h[0][0], h[1][0] = h[1][0], h[0][0]
    return out


def test_changed_deals_are_named_as_shown_or_not_by_where_the_display_stops(
    tmp_path: Path,
) -> None:
    """Mutants: "Deals" said of one deal above because several were changed, "Deal" left
    out (or made plural) before the deals not shown when none is above. The display stops
    in Deal 2 at a card the seat no longer holds (deals 2 to the last changed): "Deal 2
    above; 3, 4 not shown"; stopped in Deal 1 by an edited bid, the changed later deals
    are all not shown, "Deal 2 not shown" or "Deals 2, 3, 4 not shown"."""
    from tests.arena.test_replay_audit_round35 import _random_match, _run, _write

    rec = _random_match(11, deals=3).record()
    rec["match_id"] = "t-m00001"
    n = len(rec["deals"])
    assert n == 4
    later = _swapped(rec, range(1, n))
    r = _run(_write(tmp_path, later, "later.json"))
    assert r.exit_code == 1 and "refused: Deal 2 (record deal 1)" in r.stdout, r.output
    assert "(Deal 2 above; 3, 4 not shown: the display stops in Deal 2)" in r.stderr, r.stderr
    for edited, said in ((range(1, 2), "(Deal 2 not shown"), (range(1, n), "(Deals 2, 3, 4 not")):
        rec_ = _swapped(rec, edited)
        rec_["deals"][0]["actions"][0]["action"] = "bid 5"  # (refused in Deal 1)
        r = _run(_write(tmp_path, rec_, "first.json"))
        assert r.exit_code == 1 and "refused: Deal 1 (record deal 0)" in r.stdout, r.output
        assert f"{said}" in r.stderr and "the display stops in Deal 1)" in r.stderr, r.stderr
