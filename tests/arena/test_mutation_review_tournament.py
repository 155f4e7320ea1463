"""Mutation review of the tournament side (arena/tournament/*.py, arena/ratings.py,
arena/ffa_trueskill.py, arena/storage.py, arena/leaderboard/*.py, arena/render.py):
plausible bugs made by hand one at a time, the existing tests run against each; a test
here for each mutant that they let live (its id and the edit in the docstring). Ids: S
schedule, C config, R runner, T ratings, F ffa_trueskill, D storage, L leaderboard, N
render. Tournaments are played in process against the fake referee (no network, no
processes): no timed assertions.

The review: 160 mutants (S 13, C 25, R 23, T 14, F 8, D 26, L 36, N 15). 104 were
killed by the existing tests (101 by the files of their module first run, C21, C24 and N8
by test_walkthrough_round30, test_bad_input and test_organiser_round24) and 56 lived: 49
are killed here, 6 are equivalent, and N7 showed a defect (fixed: see its test; after the
fix its edit is equivalent, for a time limit is only read from a result that says
``max_deals``). The equivalent ones: C2 (``matches_per_table < MAX_MATCHES``: 10**6 sets
of any table make more than 10**6 matches, refused by the total's bound with the same key),
C9 (``total >= MAX_MATCHES``: no number of seatings times sets is 10**6, a power of 2
and 5, since every count of seatings is a multiple of 3), R8 (finalize only when stored
by this run: a resumed run stores the tournament itself first), L8 (a conceded deal
counted as a contract too: a concession replaces naming the contract, so no conceded
deal has one), F5 (``delta < min_delta``: differs only for a delta of exactly 1e-4),
D17 (the incidents of a forgotten tournament not deleted by its id: the cascade from its
matches deletes them; one whose match was deleted by hand is joined to no match by any
reader).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import ConfigError
from arena.tournament.schedule import build_schedule
from tests.arena.fake_referee import FakeReferee, make_config
from tests.arena.fake_referee import run_fake as _run

BOTS = ["a", "b", "c", "d", "e"]


def _config(tmp: Path, **kw: Any) -> Any:
    return make_config(tmp, **kw)


def _refused(tmp: Path, key: str, **kw: Any) -> ConfigError:
    with pytest.raises(ConfigError) as ei:
        _config(tmp, **kw)
    assert ei.value.key == key, ei.value
    return ei.value


# ------------------------------------------------------------------ schedule


def test_s3_no_deal_seed_set_is_refused_by_the_schedule_itself() -> None:
    """S3 (``matches_per_table < 1`` weakened to ``< 0``): build_schedule took 0 and made
    an empty schedule, a tournament of no match. 0 and -1 are refused, 1 gives a set."""
    for bad in (0, -1):
        with pytest.raises(ValueError, match="matches_per_table"):
            build_schedule(BOTS, 3, bad, seed=1)
    assert len(build_schedule(BOTS, 3, 1, seed=1)) == 60


def test_s9_a_set_is_played_in_shuffled_order_not_table_by_table() -> None:
    """S9 (the shuffle of a set's matches dropped): the schedule played table 0's six
    seatings first, then table 1's, ...; an interrupted run's partial standings were then
    those of the first tables only. Within a set the order is shuffled: the first matches
    already seat most bots and most tables, and the order is not the combination order
    (nor the same from another seed)."""
    s = build_schedule(BOTS, 3, 2, seed=1)
    first = s[:10]
    assert len({m.table for m in first}) >= 4
    assert {b for m in first for b in m.seats} == set(BOTS)
    tables = [m.table for m in s if m.set_no == 0]
    assert tables != sorted(tables)
    other = build_schedule(BOTS, 3, 2, seed=2)
    assert [m.seats for m in s] != [m.seats for m in other]
    # Each set is shuffled again: set 1 is not set 0's order once more.
    assert [m.seats for m in s if m.set_no == 1] != [m.seats for m in s if m.set_no == 0]


# ------------------------------------------------------------------ config


def test_c8_the_match_bound_counts_every_seating(tmp_path: Path) -> None:
    """C8 (the bound on the number of matches counted tables, ``math.comb``, not seatings,
    ``math.perm``): 4 bots of 3 seats make 24 matches per set, not 4, and a config of
    2.4 million matches went through. 41,666 sets (999,984 matches) is the most."""
    err = _refused(tmp_path, "matches_per_table", matches_per_table=41_667)
    assert "1,000,008 matches" in str(err)
    assert _config(tmp_path, matches_per_table=41_666).total_matches == 999_984


def test_c11_matches_per_table_is_part_of_the_identity(tmp_path: Path) -> None:
    """C11 (``matches_per_table`` left out of the identity): a config run again with more
    deal-seed sets resumed the stored tournament under its id, its stored total and its
    finished mark those of the smaller one. Another number of sets is another id."""
    one, two = _config(tmp_path, matches_per_table=1), _config(tmp_path, matches_per_table=2)
    assert one.fingerprint != two.fingerprint and one.tournament_id != two.tournament_id
    assert one.identity()["matches_per_table"] == 1


def test_c15_c16_draw_probability_bounds(tmp_path: Path) -> None:
    """C15 (``0 < draw_probability`` weakened to ``0 <=``): a draw probability of 0 went
    through, which TrueSkill's factor graph does not allow (the ratings fail at the first
    tie). C16 (``<= 0.99`` narrowed to ``< 0.99``): the documented largest value, 0.99,
    was refused. 0 and anything above 0.99 are refused naming the key; 0.99 and the least
    positive values are accepted."""
    for bad in (0, 0.0, -0.1, 0.9901, 1):
        err = _refused(tmp_path, "ratings.draw_probability", ratings={"draw_probability": bad})
        assert "above 0 and at most 0.99" in str(err)
    for good in (0.99, 1e-9, 0.5):
        cfg = _config(tmp_path, ratings={"draw_probability": good})
        assert cfg.draw_probability == good


# ------------------------------------------------------------------ runner


def test_r14_the_live_standings_rate_places_not_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R14 (the live standings rated each match by its ``scores`` instead of its
    ``places``): the standings shown while a tournament runs ranked the bots by score
    values taken as ranks (the lowest score "won"). One match at a time, completion order
    is schedule order: the last standings shown are the stored ratings, to the bit."""
    import io

    from rich.console import Console

    from arena.ratings import rate_results
    from arena.storage import Storage
    from arena.tournament import RunOptions, run
    from arena.tournament import runner as runner_mod

    shown: list[list[tuple[str, float, float, int]]] = []
    real = runner_mod._standings

    def spy(book: Any) -> Any:
        shown.append([(r.bot, r.mu, r.sigma, r.matches) for r in book.leaderboard()])
        return real(book)

    monkeypatch.setattr(runner_mod, "_standings", spy)
    cfg = make_config(tmp_path, concurrency=1)
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    opts = RunOptions(progress=True, console=console)
    out = run(cfg, opts, referee_factory=lambda _cfg: FakeReferee(), serve=False, launch_bots=False)
    assert out.finished and len(shown) == 24
    with Storage(cfg.db) as st:
        book, _ = rate_results(st.match_results(cfg.tournament_id), cfg.bot_names)
    want = [(r.bot, r.mu, r.sigma, r.matches) for r in book.leaderboard()]
    assert shown[-1] == want


# ------------------------------------------------------------------ ratings


def test_t2_equal_conservative_ratings_put_the_higher_mu_first() -> None:
    """T2 (the leaderboard's tie-break ``-mu`` made ``mu``): of two bots with the same
    μ−3σ the one less sure of a higher skill (higher μ, higher σ) is documented first;
    then the name decides, never the order the bots were added."""
    import trueskill

    from arena.ratings import RatingBook

    book = RatingBook(["zed", "amy", "bob"])
    book._ratings["zed"] = trueskill.Rating(31.0, 2.0)  # 25
    book._ratings["amy"] = trueskill.Rating(28.0, 1.0)  # 25
    book._ratings["bob"] = trueskill.Rating(28.0, 1.0)  # 25, the same μ: by name
    assert [r.bot for r in book.leaderboard()] == ["zed", "amy", "bob"]
    assert {round(r.conservative, 9) for r in book.leaderboard()} == {25.0}


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE matches SET seed = seed + 1 WHERE idx = 1",
        "UPDATE matches SET seats_json = json_array(json_extract(seats_json, '$[1]'),"
        " json_extract(seats_json, '$[0]'), json_extract(seats_json, '$[2]')) WHERE idx = 1",
        "UPDATE matches SET idx = 6 WHERE idx = 1",  # (3 bots: 6 matches, 0 to 5)
    ],
    ids=["R3-seed", "R4-seats", "R5-index"],
)
def test_r3_r4_r5_a_stored_match_not_of_the_schedule_is_not_resumed(
    tmp_path: Path, edit: str
) -> None:
    """R3 (the resume's check of each stored match's seed dropped) and R4 (its check of
    the seats dropped): a stored match whose seed, or seating, was changed by hand was
    taken for its schedule entry, and the run went on to finish a tournament that had
    played one seating on other deals (or one seating twice and another never). R5 (the
    index's bound ``< len(schedule)`` made ``<=``): an index one past the schedule was an
    IndexError's traceback. Each is refused, naming --fresh; the run stores nothing more."""
    import sqlite3

    from arena.tournament import TournamentError

    cfg = make_config(tmp_path, bots=3)
    _run(cfg, FakeReferee(), max_new_matches=3)
    with sqlite3.connect(cfg.db) as db:
        assert db.execute(edit).rowcount == 1
    with pytest.raises(TournamentError, match=r"is not this tournament's.*--fresh"):
        _run(cfg, FakeReferee())
    with sqlite3.connect(cfg.db) as db:
        assert db.execute("SELECT COUNT(*) FROM matches").fetchone() == (3,)


def test_r9_r10_only_a_tournament_of_every_match_is_marked_finished(tmp_path: Path) -> None:
    """R9 (``completed == total_matches`` made ``>= total_matches - 1``) and R10 (the
    ratings always stored with ``finished=True``): a run stopped one match short (or any
    number short) was stored as finished, and `arena leaderboard`'s title said so. After
    5 of 6 matches it is not; the run that plays the sixth marks it."""
    from arena.storage import Storage

    cfg = make_config(tmp_path, bots=3)
    out = _run(cfg, FakeReferee(), max_new_matches=5)
    assert out.interrupted and out.completed == 5 and not out.finished
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and (info.completed, info.total_matches) == (5, 6)
        assert info.finished_at is None
    assert _run(cfg, FakeReferee()).finished
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.completed == 6 and info.finished_at is not None


# ------------------------------------------------------------------ storage


def _storage(tmp: Path, n: int = 4, **fake: Any) -> Any:
    """A database of tournament "t1" (bots a, b, c) with matches 0..n-1 stored, played by
    the fake referee (``fake``: its options, e.g. forfeit={"b"})."""
    from arena.storage import Storage
    from engine import PRESETS

    rules = PRESETS["classic"].__class__.from_dict({"preset": "classic", "max_deals": 3})
    st = Storage(tmp / "s.sqlite")
    st.ensure_tournament("t1", name="t", fingerprint="fp", config={"x": 1}, total_matches=10,
                         bots=[("a", "random"), ("b", "random"), ("c", "random")])  # fmt: skip
    seatings = [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b"), ("a", "c", "b")]
    for i in range(n):
        seats = seatings[i % len(seatings)]
        rec = FakeReferee(**fake).play(rules, 100 + i, list(seats))
        st.save_match("t1", match_id=f"t1-m{i:05d}", index=i, table=0, set_no=0,
                      seed=rec["seed"], seats=seats, record=rec,
                      started_at=1000.0, finished_at=1001.0)  # fmt: skip
    return st


def test_d2_a_forfeit_is_stored_from_the_records_forfeits(tmp_path: Path) -> None:
    """D2 (the stored forfeit flag read from ``result.forfeits`` instead of the record's
    ``forfeits``): no seat was ever stored as forfeited, and MatchResult.forfeits (the
    web's list of a match's forfeits) was always empty."""
    with _storage(tmp_path, 2, forfeit={"b"}) as st:
        res = st.match_results("t1")
        assert [r.forfeits for r in res] == [(1,), (0,)]  # b sits at 1, then at 0
        rows = st.conn.execute("SELECT bot, forfeit FROM match_players ORDER BY match_id, seat")
        assert [tuple(r) for r in rows] == [
            *[("a", 0), ("b", 1), ("c", 0)], *[("b", 1), ("c", 0), ("a", 0)]]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ("UPDATE match_players SET place = 0 WHERE match_id = 't1-m00001' AND seat = 2",
         "stored place of seat 2 in match t1-m00001 is damaged (0, not 1 to 3)"),
        ("DELETE FROM match_players WHERE match_id = 't1-m00001' AND seat = 1",
         "stored players of match t1-m00001 are damaged (seats [0, 2] for 3 bots)"),
    ],
    ids=["D4-place-0", "D5-a-seat-missing"],
)  # fmt: skip
def test_d4_d5_a_damaged_player_row_is_named_not_rated(
    tmp_path: Path, edit: str, words: str
) -> None:
    """D4 (a stored place's bound ``1 <=`` weakened to ``0 <=``): a place 0 edited in by
    hand was rated as better than first. D5 (the check that a match has one player row
    per seat dropped): a match missing a player was rated with fewer places than seats
    (ratings' ValueError, or worse, another seat's place). Both are a StorageError naming
    the match."""
    from arena.storage import StorageError

    with _storage(tmp_path) as st:
        st.conn.execute("PRAGMA foreign_keys = OFF")
        st.conn.execute(edit)
        with pytest.raises(StorageError) as ei:
            st.match_results("t1")
        assert words in str(ei.value)


def test_d7_a_page_before_an_index_holds_only_smaller_ones(tmp_path: Path) -> None:
    """D7 (``idx < before`` made ``<=``): the web's pages of older matches each began
    with the match that ended the page before, shown twice."""
    with _storage(tmp_path) as st:
        assert [r.index for r in st.match_results("t1", before=2)] == [0, 1]
        assert [r.index for r in st.match_results("t1", last=1, before=3)] == [2]
        assert [r.index for r in st.match_results("t1", before=0)] == []


def test_d8_d9_what_was_stored_after_a_position_is_only_what_came_after(tmp_path: Path) -> None:
    """D8 (``rowid > stored_after`` made ``>=`` in match_results) and D9 (the same in
    iter_records): the match stored at the position read last came back again with the
    new ones; a leaderboard kept up to date counted its record twice, or (its count then
    off) read the whole tournament again at every refresh."""
    with _storage(tmp_path, 2) as st:
        count, top = st.stored_state("t1")
        assert count == 2 and top > 0
        with _storage(tmp_path / "more", 4) as other:  # two more matches, stored later
            recs = {i: other.load_record(f"t1-m{i:05d}") for i in (2, 3)}
        for i, rec in recs.items():
            st.save_match("t1", match_id=f"t1-m{i:05d}", index=i, table=0, set_no=0,
                          seed=rec["seed"], seats=tuple(rec["players"]), record=rec,
                          started_at=1000.0, finished_at=1001.0)  # fmt: skip
        assert [r.index for r in st.match_results("t1", stored_after=top)] == [2, 3]
        assert [i for i, _, _ in st.iter_records("t1", stored_after=top)] == [2, 3]
        assert st.stored_state("t1")[0] == 4
        assert [r.index for r in st.match_results("t1", stored_after=0)] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("version", "words"),
    [("2", "written by a newer Thousand Arena (schema version 2"),
     ("0", "has schema version '0', this arena reads 1")],
)  # fmt: skip
def test_d11_a_database_of_another_schema_version_is_refused(
    tmp_path: Path, version: str, words: str
) -> None:
    """D11 (the schema version check skipped): a database of another schema version was
    opened and written to as if it were this one's. It is refused, writing nothing, for
    the writer and the readers alike."""
    import sqlite3

    from arena.storage import Storage, StorageError

    _storage(tmp_path, 1).close()
    db = tmp_path / "s.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    for opener in (Storage, Storage.open_readonly):
        with pytest.raises(StorageError, match="schema version") as ei:
            opener(db)
        assert words in str(ei.value)


def test_d13_completed_counts_the_tournaments_own_matches(tmp_path: Path) -> None:
    """D13 (the count of a tournament's completed matches taken over every tournament of
    the database): a second tournament in the file was "finished" at once, and its title
    said "7/10 matches played" after 3."""
    with _storage(tmp_path, 4) as st:
        st.ensure_tournament("t2", name="u", fingerprint="fp2", config={}, total_matches=6,
                             bots=[("a", "random"), ("b", "random"), ("c", "random")])  # fmt: skip
        rec = st.load_record("t1-m00000")
        st.save_match("t2", match_id="t2-m00000", index=0, table=0, set_no=0,
                      seed=rec["seed"], seats=tuple(rec["players"]), record=rec,
                      started_at=1000.0, finished_at=1001.0)  # fmt: skip
        info1, info2 = st.tournament("t1"), st.tournament("t2")
        assert info1 is not None and info2 is not None
        assert (info1.completed, info2.completed) == (4, 1)
        assert [t.completed for t in st.tournaments()] == [4, 1]


def test_d16_the_stored_rating_history_reads_mu_and_sigma_from_their_columns(
    tmp_path: Path,
) -> None:
    """D16 (rating_history read μ from the sigma column and σ from the mu column): the
    stored history came back swapped. It is what rate_results gives, point for point."""
    from arena.ratings import rate_results
    from arena.storage import Storage

    cfg = make_config(tmp_path, bots=3)
    assert _run(cfg, FakeReferee()).finished
    with Storage(cfg.db) as st:
        _, history = rate_results(st.match_results(cfg.tournament_id), cfg.bot_names)
        stored = st.rating_history(cfg.tournament_id)
    key = lambda p: (p.index, p.bot)  # noqa: E731
    assert sorted(stored, key=key) == sorted(history, key=key) and len(stored) == 18
    assert all(p.sigma < p.mu for p in stored)  # (μ ≈ 25, σ ≤ 8.33 after 1 to 6 matches)


def test_d19_a_match_id_is_found_by_its_exact_ending_only(tmp_path: Path) -> None:
    """D19 (find_match_ids returned what SQLite's LIKE found, without the exact test):
    LIKE ignores ASCII case, so ``M00001`` found t1-m00001, which `arena replay` then
    showed for an id that is not its."""
    with _storage(tmp_path, 2) as st:
        assert st.find_match_ids("m00001") == ["t1-m00001"]
        assert st.find_match_ids("t1-m00001") == ["t1-m00001"]
        assert st.find_match_ids("M00001") == []
        assert st.find_match_ids("T1-M00000") == []
        assert st.find_match_ids("m0000") == []  # (an ending, not a part)


def test_d26_stored_seats_with_a_bot_twice_are_named_damaged(tmp_path: Path) -> None:
    """D26 (the check that a stored seating seats each bot once dropped): a seating edited
    to ``["a", "a", "c"]`` reached the ratings, whose ValueError was a traceback. It is a
    StorageError naming the match."""
    from arena.storage import StorageError

    with _storage(tmp_path, 2) as st:
        st.conn.execute("""UPDATE matches SET seats_json = '["a", "a", "c"]' WHERE idx = 1""")
        for read in (lambda: st.match_results("t1"), lambda: list(st.iter_records("t1"))):
            with pytest.raises(StorageError, match=r"t1-m00001 are damaged.*a bot sits twice"):
                read()


# ------------------------------------------------------------------ leaderboard


def test_l6_a_tie_counts_half_in_the_head_to_head_share() -> None:
    """L6 (a tie counted whole in HeadToHead.score): two bots that tied every match they
    played showed as each winning it all (the HTML page's green). A tie is half: one
    win, one loss and two ties is an even share, and the cell is white-ish, not green."""
    from arena.leaderboard.html import _h2h_color
    from arena.leaderboard.stats import HeadToHead

    h = HeadToHead(
        bots=["a", "b"],
        ahead={"a": {"a": 0, "b": 1}, "b": {"a": 1, "b": 0}},
        together={"a": {"a": 0, "b": 4}, "b": {"a": 4, "b": 0}},
    )
    assert h.ties("a", "b") == 2
    assert h.score("a", "b") == h.score("b", "a") == 0.5
    assert _h2h_color(h.score("a", "b")) == "rgba(43,138,62,0.10)"
    only_ties = HeadToHead(bots=["a", "b"], ahead={"a": {"b": 0}, "b": {"a": 0}},
                           together={"a": {"b": 3}, "b": {"a": 3}})  # fmt: skip
    assert only_ties.score("a", "b") == 0.5


def test_l15_a_record_whose_places_disagree_with_its_row_is_named_damaged(
    tmp_path: Path,
) -> None:
    """L15 (the leaderboard's check of a record's ``result.places`` against its row
    dropped): places edited in a stored record were counted in the places columns and the
    head to head while the ratings, made from the rows, said otherwise. It is a
    StorageError naming the match and the key."""
    import json

    from arena.leaderboard import build_leaderboard
    from arena.storage import StorageError

    with _storage(tmp_path, 3) as st:
        (row,) = [r for r in st.match_results("t1") if r.index == 1]
        flipped = [len(row.places) + 1 - p for p in row.places]
        assert flipped != list(row.places)
        st.conn.execute(
            "UPDATE matches SET record_json = json_set(record_json, '$.result.places', json(?))"
            " WHERE idx = 1",
            (json.dumps(flipped),),
        )
        with pytest.raises(StorageError, match=r"t1-m00001 is damaged \(its result.places is"):
            build_leaderboard(st, "t1")


def test_l19_a_bot_yet_to_play_has_its_prior_in_the_rating_history(tmp_path: Path) -> None:
    """L19 (the rating history started only for the bots that had played): a bot of the
    config that had not played yet had no history at all (no line, no legend entry of its
    own in the JSON), and the history's bots came in the order of their first match, not
    the config's. Every bot of the config starts at (-1, μ, σ), in config order."""
    from arena.leaderboard import build_leaderboard
    from arena.ratings import MU, SIGMA
    from arena.storage import Storage

    cfg = make_config(tmp_path, bots=5, concurrency=1)
    _run(cfg, FakeReferee(), max_new_matches=1)
    with Storage(cfg.db) as st:
        lb = build_leaderboard(st, cfg.tournament_id)
    assert list(lb.history) == list(cfg.bot_names)
    (played,) = [m.seats for m in cfg.schedule() if m.index == 0]
    for bot, points in lb.history.items():
        assert points[0] == (-1, MU, SIGMA)
        assert len(points) == (2 if bot in played else 1)
    assert list(lb.to_dict()["rating_history"]) == list(cfg.bot_names)


def test_l20_the_head_to_head_lists_the_bots_in_rank_order(tmp_path: Path) -> None:
    """L20 (the head-to-head's bots taken in config order): the head-to-head tables of
    the Markdown and HTML pages listed the bots in another order than the standings above
    them. They follow the ranks: here a, first in the config, forfeits every match and is
    last."""
    from arena.leaderboard import build_leaderboard
    from arena.leaderboard.render import to_markdown

    with _storage(tmp_path, 4, forfeit={"a"}) as st:
        lb = build_leaderboard(st, "t1")
    ranked = [r.bot for r in lb.rows]
    assert ranked[-1] == "a" and ranked != ["a", "b", "c"]
    assert lb.h2h.bots == ranked
    md = to_markdown(lb)
    assert f"| | {' | '.join(ranked)} |" in md


def _distinct_row() -> Any:
    """A leaderboard row whose every figure differs from every other."""
    from arena.leaderboard.stats import BotStats

    return BotStats(
        rank=2, bot="bee", mu=31.5, sigma=2.25, conservative=24.75, matches=11,
        places=[6, 3, 2], deals=47, mean_per_deal=12.5, ci95=3.25, bids_won=13,
        contracts=9, contracts_made=7, concessions=4,
        strikes={"timeouts": 1, "illegal": 2, "disconnects": 3, "forfeits": 5, "other": 8},
        decisions=321, median_ms=17.0, mean_score=640.0,
    )  # fmt: skip


def test_l22_l23_each_strike_column_shows_its_own_count() -> None:
    """L22 (the forfeits column showed the timeouts) and L23 (strikes T/I/D showed the
    illegal count in the place of the disconnects): the standings' cells of the Markdown
    and HTML pages are each under their own header, every figure from its own field."""
    import dataclasses

    from arena.leaderboard.render import column_names, row_cells
    from arena.leaderboard.stats import HeadToHead, Leaderboard

    row = _distinct_row()
    lb = Leaderboard(
        tournament_id="t", name="t", ruleset="classic", players=3, total_matches=1,
        completed=1, created_at="", finished_at=None, generated_at="", rows=[row],
        h2h=HeadToHead(bots=["bee"], ahead={"bee": {"bee": 0}}, together={"bee": {"bee": 0}}),
    )  # fmt: skip
    cells = dict(zip(column_names(lb), row_cells(row), strict=True))
    assert cells == {
        "rank": "2", "bot": "bee", "μ−3σ": "24.75", "μ": "31.50", "σ": "2.25",
        "matches": "11", "1st": "6", "2nd": "3", "3rd": "2",
        "score/deal (95% CI)": "+12.5 ± 3.3", "bids won": "13",
        "contracts made": "7/9 (78%)", "strikes T/I/D": "1/2/3", "forfeits": "5",
        "median ms": "17.0",
    }  # fmt: skip
    assert row_cells(dataclasses.replace(row, strikes={}))[-3:-1] == ["0/0/0", "0"]


def _board(rows: list[Any], **kw: Any) -> Any:
    from arena.leaderboard.stats import HeadToHead, Leaderboard

    bots = [r.bot for r in rows]
    zero = {a: dict.fromkeys(bots, 0) for a in bots}
    fields: dict[str, Any] = dict(
        tournament_id="t", name="cup", ruleset="classic", players=3, total_matches=24,
        completed=24, created_at="", finished_at=None, generated_at="", rows=rows,
        h2h=HeadToHead(bots=bots, ahead=zero, together={a: dict(r) for a, r in zero.items()}),
    )  # fmt: skip
    fields.update(kw)
    return Leaderboard(**fields)


def test_l27_the_title_says_finished_only_when_every_match_is_played() -> None:
    """L27 (``completed == total_matches`` made ``>= total_matches - 1``): a tournament one
    match short was titled "finished"."""
    from arena.leaderboard.render import board_title

    row = _distinct_row()
    assert board_title(_board([row], completed=23)).endswith("23 matches (23/24 matches played)")
    assert board_title(_board([row], completed=24)).endswith("24 matches (finished)")
    assert board_title(_board([row], completed=1)).endswith("1 match (1/24 matches played)")


def test_l31_the_html_standings_have_a_header_for_every_cell() -> None:
    """L31 (the HTML header's last column, ``places``, dropped): the places bar of each
    row stood under no header, one cell more than the header's. Every row of the page's
    standings has as many cells as its header."""
    import dataclasses
    import re

    from arena.leaderboard.html import to_html

    rows = [_distinct_row(), dataclasses.replace(_distinct_row(), bot="ant", rank=1)]
    page = to_html(_board(rows))
    standings = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    head = page.split("<thead><tr>", 1)[1].split("</tr></thead>", 1)[0]
    n_head = len(re.findall(r"<th[ >]", head))
    body_rows = re.findall(r"<tr>(.*?)</tr>", standings)
    assert len(body_rows) == 2
    for tr in body_rows:
        assert len(re.findall(r"<td[ >]", tr)) == n_head == 16
    assert head.endswith("<th>places</th>")


def test_l32_a_head_to_head_cell_is_coloured_by_the_row_bots_share() -> None:
    """L32 (the HTML head-to-head cell coloured by the column bot's share): the row bot's
    wins over the column bot showed red. ant finished ahead of bee in all 3 of their
    matches: ant's row is green against bee, bee's red against ant."""
    import dataclasses

    from arena.leaderboard.html import to_html
    from arena.leaderboard.stats import HeadToHead

    rows = [dataclasses.replace(_distinct_row(), bot="ant", rank=1), _distinct_row()]
    h2h = HeadToHead(
        bots=["ant", "bee"],
        ahead={"ant": {"ant": 0, "bee": 3}, "bee": {"ant": 0, "bee": 0}},
        together={"ant": {"ant": 0, "bee": 3}, "bee": {"ant": 3, "bee": 0}},
    )
    page = to_html(_board(rows, h2h=h2h))
    table = page.split('<table class="h2h">', 1)[1]
    assert '<td class="bot">ant</td><td style="background:#fff">—</td>' \
           '<td style="background:rgba(43,138,62,0.60)">3–0</td>' in table  # fmt: skip
    assert '<td class="bot">bee</td><td style="background:rgba(224,49,49,0.60)">0–3</td>' in table


# ------------------------------------------------------------------ render (arena replay)


def test_n1_n2_the_standings_are_in_place_order_each_figure_in_its_column() -> None:
    """N1 (the replay's standings sorted by score, not by place) and N2 (the score and
    shortfall columns swapped): a forfeiter placed last on the highest score showed
    first, and a score read as a shortfall. Rows go by place (ties by seat), and each
    figure is under its own header."""
    from rich.console import Console

    from arena.render import standings_table

    result = {"scores": [990, 450, 610], "places": [3, 1, 2], "shortfalls": [10, 550, 390]}
    console = Console(width=100, record=True)
    console.print(standings_table(["ann", "bob", "cid"], result))
    import re

    lines = [re.split("[│┃]", line)[1:-1] for line in console.export_text().splitlines()]
    cells = [[c.strip() for c in line] for line in lines if line]
    assert cells[0] == ["place", "player", "score", "shortfall"]
    assert cells[1:] == [["1", "bob (1)", "450", "550"], ["2", "cid (2)", "610", "390"],
                         ["3", "ann (0)", "990", "10"]]  # fmt: skip


def _time_limited_win() -> dict[str, Any]:
    """The record of a match whose time limit was reached in its third deal (the referee
    then caps it there: ``max_deals`` 3) and in which ann reached the target (200, a
    house rule) in that deal: its result says ``target``."""
    import random

    from engine import PRESETS, Game, Ruleset

    rules = Ruleset.from_dict({**PRESETS["classic"].to_dict(), "target": 200, "barrel": False,
                               "max_deals": 3})  # fmt: skip
    game = Game.new(rules, 3, ["ann", "bob", "cid"])
    rng = random.Random(3)
    while not game.is_over:
        game.apply_trusted(rng.choice(game.legal_actions()))
    record = {**game.record(), "time_limit_s": 30.0}
    assert record["result"]["reason"] == "target" and len(record["deals"]) == 3
    assert record["result"]["scores"][0] >= 200 > max(record["result"]["scores"][1:])
    return record


def test_n7_a_match_won_in_its_last_deal_under_a_time_limit_reads_as_won(tmp_path: Path) -> None:
    """N7 (end_reason's "time limit" said whatever the result's reason): a match whose
    time limit was reached, and in whose last deal a player reached the target, read as
    "time limit ... placed by score". Defect found beside it, fixed: ``arena replay`` and
    ``arena replay --check`` said of it "ended by its time limit ..., placed by score as
    at a deal cap (the result's reason says max_deals)", under "final (target, ...)", and
    the web's match summary gave its ``time_limit_s``, documented as null for any end but
    the limit's (time_limit_of read the record's ``time_limit_s`` alone). It ended by the
    target: that is what each says; a match the limit did end still says the limit."""
    import json

    from click.testing import CliRunner

    from arena.cli import main
    from arena.render import end_reason, time_limit_note, time_limit_of
    from arena.web.replay import match_summary

    record = _time_limited_win()
    said = "ann reached the target (200) in deal 3"
    assert end_reason(record) == said
    assert time_limit_of(record) is None and time_limit_note(record) == ""
    summary = match_summary("m", record)
    assert summary["ended"] == said and summary["time_limit_s"] is None
    path = tmp_path / "m.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    shown = CliRunner().invoke(main, ["replay", str(path)], env={"COLUMNS": "300"})
    check = CliRunner().invoke(main, ["replay", "--check", str(path)])
    assert shown.exit_code == 0 and check.exit_code == 0, shown.output + check.output
    assert f"ended: {said}" in shown.output.splitlines()
    assert "time limit" not in shown.output and "time limit" not in check.output
    assert "final (target, 3 deals):" in check.output
    # The same match capped by the limit one deal earlier (reason max_deals) says the limit.
    capped = {**record, "result": {**record["result"], "reason": "max_deals"}}
    assert time_limit_of(capped) == 30.0
    assert end_reason(capped) == "time limit (match_timeout_s 30 s) after deal 3: placed by score"


def test_n9_a_forfeit_of_a_seat_past_the_table_is_ignored() -> None:
    """N9 (the seats of ``forfeits`` bounded by ``<= n`` instead of ``< n``): a record
    naming seat 3 of a 3-seat table as forfeited (the shape check does not look inside
    ``forfeits``) put a "seat 3" among the forfeiters of `arena replay`'s standings. Only
    the seats of the table count."""
    import dataclasses
    import random

    from rich.console import Console

    from arena.render import render_record
    from engine import PRESETS, Game

    game = Game.new(dataclasses.replace(PRESETS["classic"], max_deals=2), 4, ["a", "b", "c"])
    rng = random.Random(4)
    while not game.is_over:
        game.apply_trusted(rng.choice(game.legal_actions()))
    console = Console(width=200, record=True)
    for forfeits, said in (([3], False), ([1, 3], True)):
        console.print(render_record({**game.record(), "forfeits": forfeits, "incidents": []}))
        text = console.export_text()
        assert "seat 3" not in text
        assert ("forfeits applied: b (1) forfeited" in text) == said


def test_c5_port_65535_is_accepted_65536_refused(tmp_path: Path) -> None:
    """C5 (``port <= 65535`` narrowed to ``< 65535``): the highest port was refused."""
    assert _config(tmp_path, port=65535).port == 65535
    assert "65536" in str(_refused(tmp_path, "port", port=65536))


def test_c13_the_draw_probability_is_part_of_the_identity_and_stored(tmp_path: Path) -> None:
    """C13 (``draw_probability`` left out of the identity): a tournament run again with
    another draw probability resumed under the same id, and the stored config (the
    identity and more) held none: the leaderboard rated with the default 0.02, not the
    tournament's, while `arena tournament` stored ratings of the config's."""
    from arena.leaderboard import build_leaderboard
    from arena.ratings import rate_results
    from arena.storage import Storage

    cfg = _config(tmp_path, bots=3, ratings={"draw_probability": 0.3})
    assert cfg.fingerprint != _config(tmp_path, bots=3).fingerprint
    assert _run(cfg, FakeReferee()).finished
    with Storage(cfg.db) as st:
        info = st.tournament(cfg.tournament_id)
        assert info is not None and info.config["draw_probability"] == 0.3
        book, _ = rate_results(st.match_results(cfg.tournament_id), cfg.bot_names,
                               draw_probability=0.3)  # fmt: skip
        lb = build_leaderboard(st, cfg.tournament_id)
    assert [(r.bot, r.mu, r.sigma) for r in lb.rows] == [
        (r.bot, r.mu, r.sigma) for r in book.leaderboard()
    ]


def test_c18_a_reconnect_grace_of_zero_is_accepted(tmp_path: Path) -> None:
    """C18 (``grace < 0`` made ``<= 0``): ``[referee] reconnect_grace_s = 0`` (no grace: a
    bot whose stream closes forfeits the matches it is seated in) was refused, which the
    referee takes; only a negative one is refused."""
    cfg = _config(tmp_path, referee={"reconnect_grace_s": 0})
    assert dict(cfg.referee) == {"reconnect_grace_s": 0.0}
    err = _refused(tmp_path, "referee.reconnect_grace_s", referee={"reconnect_grace_s": -0.5})
    assert "must not be negative" in str(err)


def test_r16_each_match_is_stored_with_its_table_and_set(tmp_path: Path) -> None:
    """R16 (the runner stored a match's ``set_no`` as its table and its ``table`` as its
    set): the stored ``table_no`` and ``set_no`` (the web's match page shows them) were
    each the other's. They are the schedule's."""
    import sqlite3

    cfg = _config(tmp_path, bots=4, matches_per_table=2)
    assert _run(cfg, FakeReferee()).finished
    with sqlite3.connect(cfg.db) as db:
        stored = {i: (t, s) for i, t, s in db.execute("SELECT idx, table_no, set_no FROM matches")}
    assert stored == {m.index: (m.table, m.set_no) for m in cfg.schedule()}
    assert {t for t, _ in stored.values()} == {0, 1, 2, 3}
    assert {s for _, s in stored.values()} == {0, 1}


def test_r19_a_drawn_seed_out_of_range_is_refused_even_with_no_match_stored(
    tmp_path: Path,
) -> None:
    """R19 (the range check of a stored drawn seed dropped): a tournament stored before
    its first match ended (its bots connected, then the run stopped) with its drawn seed
    edited to -5 by hand was played from that seed, known to whoever edited it. It is
    refused, naming --fresh."""
    import json
    import sqlite3

    from arena.tournament import TournamentError

    cfg = _config(tmp_path, bots=3, seed=None)
    out = _run(cfg, FakeReferee(), max_new_matches=0)
    assert out.completed == 0 and out.interrupted
    for bad in (-5, 2**63):
        with sqlite3.connect(cfg.db) as db:
            (text,) = db.execute("SELECT config_json FROM tournaments").fetchone()
            stored = {**json.loads(text), "drawn_seed": bad}
            db.execute("UPDATE tournaments SET config_json = ?", (json.dumps(stored),))
        with pytest.raises(TournamentError, match=rf"no drawn seed stored \(found {bad}\)"):
            _run(cfg, FakeReferee())
        with sqlite3.connect(cfg.db) as db:
            assert db.execute("SELECT COUNT(*) FROM matches").fetchone() == (0,)


def test_r21_the_progress_of_a_resumed_run_counts_the_stored_matches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """R21 (the progress display of a resumed run started from 0, not from the matches
    already stored): a run resuming at 7 of 24 ended saying "17/24 matches". It counts on
    from 7 and ends at 24/24."""
    import logging

    cfg = _config(tmp_path)
    _run(cfg, FakeReferee(), max_new_matches=7)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="arena.tournament.progress"):
        assert _run(cfg, FakeReferee()).finished
    said = [r.getMessage() for r in caplog.records if r.name == "arena.tournament.progress"]
    assert said[0] == f"resuming {cfg.tournament_id}: 7 of 24 matches already stored"
    counts = [m.split(": ")[-1] for m in said[1:]]
    assert counts[-1] == "24/24 matches"
    assert all(int(c.split("/")[0]) > 7 for c in counts)


def test_d12_finishing_a_tournament_stores_its_total_when_given(tmp_path: Path) -> None:
    """D12 (``COALESCE(?, total_matches)`` turned around): the total an `arena serve --db`
    knows only at its end (as many matches as its bots played) was never stored, and the
    tournament kept the total it was created with."""
    with _storage(tmp_path, 2) as st:
        st.finish_tournament("t1")
        info = st.tournament("t1")
        assert info is not None and info.total_matches == 10 and info.finished_at is not None
        st.finish_tournament("t1", total=2)
        info = st.tournament("t1")
        assert info is not None and (info.total_matches, info.completed) == (2, 2)


def test_d20_the_stored_state_points_at_the_latest_match_stored(tmp_path: Path) -> None:
    """D20 (stored_state gave the first match's position, ``MIN(rowid)``, not the
    latest's): a leaderboard kept up to date read every match again at each refresh, and
    its check of the latest match read looked at the first."""
    with _storage(tmp_path, 3) as st:
        count, top = st.stored_state("t1")
        assert count == 3
        at = st.stored_at(top)
        assert at is not None and at[0] == "t1-m00002"
        assert st.match_results("t1", stored_after=top) == []


def test_d23_a_negative_figure_beyond_any_score_is_named_damaged(tmp_path: Path) -> None:
    """D23 (the check of a record's figures took ``v > limit``, not ``abs(v) > limit``): a
    delta of minus a 22-digit number passed, and the leaderboard's arithmetic in floats
    took it. It is a StorageError, as a positive one is."""
    from arena.storage import StorageError

    with _storage(tmp_path, 1) as st:
        rec = st.load_record("t1-m00000")
    for big in (-(2**70), 2**70):
        rec["deals"][0]["deltas"][1] = big
        with _storage(tmp_path / str(big > 0), 0) as st:
            st.save_match("t1", match_id="t1-m00000", index=0, table=0, set_no=0,
                          seed=rec["seed"], seats=tuple(rec["players"]), record=rec,
                          started_at=1000.0, finished_at=1001.0)  # fmt: skip
            with pytest.raises(StorageError, match="deal 0: a figure of about 22 digits"):
                st.load_record("t1-m00000")


def test_l25_every_csv_column_holds_its_own_field() -> None:
    """L25 (the CSV's ``contracts`` and ``contracts_made`` values swapped): a bot made more
    contracts than it played, by the file. Every column of a row whose figures all differ
    holds its own."""
    import csv
    import io

    from arena.leaderboard.render import to_csv

    (row,) = csv.DictReader(io.StringIO(to_csv(_board([_distinct_row()]))))
    assert row == {
        "rank": "2", "bot": "bee", "conservative": "24.7500", "mu": "31.5000",
        "sigma": "2.2500", "matches": "11", "place_1": "6", "place_2": "3", "place_3": "2",
        "deals": "47", "mean_per_deal": "12.5000", "ci95": "3.2500", "bids_won": "13",
        "contracts": "9", "contracts_made": "7", "concessions": "4", "timeouts": "1",
        "illegal": "2", "disconnects": "3", "forfeits": "5", "decisions": "321",
        "median_ms": "17.00", "mean_final_score": "640.00", "ruleset": "classic",
        "bot_errors": "0",
    }  # fmt: skip


def test_l33_l34_the_rating_plot_draws_the_first_match_in_each_bots_colour() -> None:
    """L33 (a bot's line drawn in the next bot's colour): the plot's lines did not match
    its legend (the last bot's line took an eleventh colour, the first bot's none). L34
    (``index >= 0`` made ``> 0``): a tournament whose only rated match was match 0 showed
    "No rated matches yet". Each line, band and point is in its legend's colour."""
    import dataclasses
    import re

    from arena.leaderboard.html import _color, rating_svg

    bots = ["ann", "bob", "cid"]
    rows = [dataclasses.replace(_distinct_row(), bot=b, rank=i + 1) for i, b in enumerate(bots)]
    history = {b: [(-1, 25.0, 25 / 3), (0, 25.0 + 2 - 2 * i, 6.0)] for i, b in enumerate(bots)}
    svg = rating_svg(_board(rows, history=history))
    assert "No rated matches yet" not in svg
    lines = re.findall(r'<polyline points="[^"]*" fill="none" stroke="([^"]+)"[^>]*>'
                       r"<title>([^<]+)</title>", svg)  # fmt: skip
    assert lines == [(_color(i), b) for i, b in enumerate(bots)]
    legend = re.findall(r'<i class="sw" style="background:([^"]+)"></i>([^<]+)</span>', svg)
    assert legend == [(_color(i), b) for i, b in enumerate(bots)]
    bands = re.findall(r'<polygon points="[^"]*" fill="([^"]+)"', svg)
    assert bands == [_color(i) for i in range(3)]
    only_priors = {b: [(-1, 25.0, 25 / 3)] for b in bots}
    assert "No rated matches yet" in rating_svg(_board(rows, history=only_priors))


def test_l35_the_html_standings_hold_every_bot() -> None:
    """L35 (the HTML standings cut to the first 9 rows): a field of 12 bots lost its last
    three from the page's table (the Markdown and CSV kept them). Every bot has its row."""
    import dataclasses
    import re

    from arena.leaderboard.html import to_html

    bots = [f"b{i:02d}" for i in range(12)]
    rows = [dataclasses.replace(_distinct_row(), bot=b, rank=i + 1) for i, b in enumerate(bots)]
    page = to_html(_board(rows))
    standings = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert re.findall(r'<tr><td>\d+</td><td class="bot">([^<]+)</td>', standings) == bots
