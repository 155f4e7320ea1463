"""Round 52 review (d): the code digests of LF-normalised text, the exit codes of a wrong
database or config, ``check_one_game``, the start stopping on a bot that cannot be started
again, ``arena-bot try --vs`` repeatable and the engine's words on the aces and the cap.

Each test here kills a mutant of that diff the earlier tests let live, or proves a fix:

- ``code_now`` read a bundled bot's imports and digested its files three times at each
  call: a season reads it for each bot of each week, and a 20-week season of the four
  bundled bots took 2 s at each build (``arena leaderboard --season``, ``arena web
  --season``), 0.01 s before. Now cached by the files' sizes and times.
- An arena before round 51 stored the digest of the whole ``bots/`` of an LF checkout; a
  CRLF checkout (git's ``core.autocrlf``) read its own bytes and their CRLF form only, so
  such a tournament (with a file of the user's own in ``bots/``, which no row of
  ``LEGACY_CODE`` holds) read every bundled bot as changed there.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import arena.tournament.bundled as bundled
from arena.leaderboard.season import SeasonError, build_season, check_one_game
from arena.storage import Storage
from arena.tournament.config import code_digest, load_config, older_digests
from engine import Game, IllegalActionError, load_ruleset, parse_action, parse_cards

BUNDLED = ("random", "heuristic", "counting", "pimc")


@pytest.fixture
def fresh_caches() -> Any:
    """The digest caches emptied before and after: a test's folder is no other's."""
    caches = [bundled._bot_code_of, bundled._whole_folder_of]
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


def test_a_season_reads_each_bundled_bots_files_once_not_at_each_week(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_caches: Any
) -> None:
    db = tmp_path / "club.sqlite"
    bots = "".join(f'{b[0]} = "{b}"\n' for b in BUNDLED)
    (tmp_path / "t.toml").write_text(f'name = "club"\ndb = "{db}"\nmax_deals = 1\n[bots]\n{bots}')
    cfg = load_config(tmp_path / "t.toml")
    weeks = 6
    with Storage(db) as st:
        for w in range(weeks):
            st.ensure_tournament(f"club-w{w}", name="club", fingerprint=cfg.fingerprint,
                                 config=cfg.to_json(), total_matches=6,
                                 bots=[(b.name, b.bot or "") for b in cfg.bots])  # fmt: skip
    read: list[str] = []
    real = bundled.bundled_files

    def counted(name: str, folder: Path | None = None) -> list[Path]:
        read.append(name)
        return real(name, folder)

    monkeypatch.setattr(bundled, "bundled_files", counted)
    with Storage.open_readonly(db) as st:
        board = build_season(st, "club", st.tournaments())
    assert len(board.season or ()) == weeks
    assert not board.notes or all("changed since" not in n for n in board.notes)
    assert sorted(read) == sorted(BUNDLED)  # (once each, not once per week)


def test_a_crlf_checkout_reads_an_lf_checkouts_whole_folder_digest_as_its_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_caches: Any
) -> None:
    here = bundled.bots_folder()
    assert here is not None
    lf, crlf = tmp_path / "lf" / "bots", tmp_path / "crlf" / "bots"
    for folder, nl in ((lf, b"\n"), (crlf, b"\r\n")):
        folder.mkdir(parents=True)
        for f in here.glob("*.py"):
            text = f.read_bytes().replace(b"\r\n", b"\n")
            (folder / f.name).write_bytes(text.replace(b"\n", nl))
        (folder / "mybot.py").write_bytes(b"# the user's own" + nl)  # (no LEGACY_CODE row)
    # What an arena before round 51 stored on the LF checkout: all of its bots/, as bytes.
    stored = code_digest(sorted(lf.glob("*.py")), lines="raw")
    assert stored is not None and stored not in bundled.LEGACY_CODE
    monkeypatch.setattr(bundled, "bots_folder", lambda: crlf)
    for bot in BUNDLED:
        assert bundled.code_now(bot, stored) == code_digest(bundled.bundled_files(bot, crlf))
    # and the other way round, as before
    bundled._whole_folder_of.cache_clear()
    back = code_digest(sorted(crlf.glob("*.py")), lines="raw")
    monkeypatch.setattr(bundled, "bots_folder", lambda: lf)
    assert bundled.code_now("pimc", back) == code_digest(bundled.bundled_files("pimc", lf))
    assert bundled.code_now("pimc", "0123456789abcdef") == "0123456789abcdef"


def test_the_digest_of_a_lone_cr_and_of_bytes_that_are_no_text(tmp_path: Path) -> None:
    def bot(where: str, data: bytes) -> Path:
        (tmp_path / where).mkdir()
        (f := tmp_path / where / "bot.py").write_bytes(data)
        return f

    lone, lf, crlf = bot("lone", b"a\rb\r\n"), bot("lf", b"a\rb\n"), bot("crlf", b"a\rb\r\n")
    # (a lone CR is kept: only CRLF is a line end read as LF)
    assert code_digest([lone]) == code_digest([lf]) != code_digest([bot("no", b"ab\n")])
    assert code_digest([lone]) != code_digest([lone], lines="raw")
    assert code_digest([lf], lines="crlf") == code_digest([crlf], lines="raw")
    assert older_digests([lf]) == (code_digest([crlf], lines="raw"),)
    assert older_digests([crlf]) == (code_digest([crlf], lines="raw"),)
    # (bytes that are no UTF-8 are digested as bytes: no error, the older digest kept)
    binary = bot("bin", bytes(range(256)) + b"\r\n\xff\xfe")
    assert code_digest([binary]) is not None
    assert code_digest([binary], lines="raw") in older_digests([binary])
    assert code_digest([binary]) not in older_digests([binary])
    assert older_digests([tmp_path / "missing.py"]) == ()


def test_check_one_game_names_each_game_and_passes_one(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "arena" / "data" / "season_round50" / "club.sqlite"
    db = Path(shutil.copy(fixture, tmp_path / "club.sqlite"))
    with Storage.open_readonly(db) as st:
        infos = {t.id: t for t in st.tournaments()}
    weeks = [t for i, t in infos.items() if i.startswith("club-w")]
    cup = [t for i, t in infos.items() if i.startswith("cup")]
    assert weeks and cup
    check_one_game(weeks)  # (one game: nothing said)
    check_one_game([])
    with pytest.raises(SeasonError) as e:
        check_one_game([*weeks, *cup])
    for t in (*weeks, *cup):
        assert t.id in str(e.value)


def _four_aces(**options: Any) -> Game:
    hands = [parse_cards("A♠ A♣ A♦ A♥ K♥ Q♥ 9♠"), parse_cards("10♠ K♠ Q♠ J♠ 10♣ K♣ Q♣"),
             parse_cards("J♣ 9♣ 10♦ K♦ Q♦ J♦ 9♦")]  # fmt: skip
    rules = dataclasses.replace(load_ruleset("classic"), **options)
    return Game.new(rules, 1, ["a", "b", "c"], deals={0: (hands, parse_cards("10♥ J♥ 9♥"))},
                    dealer=2)  # fmt: skip


@pytest.mark.parametrize("preset", ["classic", "1001", "1001-4p"])
@pytest.mark.parametrize("ace", [True, False])
@pytest.mark.parametrize("counts", [True, False])
def test_the_aces_are_named_exactly_where_they_add_nothing(
    preset: str, ace: bool, counts: bool
) -> None:
    """Every preset and combination of the two options: the note is there iff the four
    aces are held and their 200 is not in the cap, naming the option that takes it away,
    and the cap said is the hand's."""
    rules = dataclasses.replace(load_ruleset(preset), ace_marriage=ace,
                                ace_marriage_counts_for_bid=counts)  # fmt: skip
    n = rules.players
    names = [f"p{i}" for i in range(n)]
    first = Game.new(rules, 1, names, dealer=n - 1).to_act
    assert first is not None
    aces = list(parse_cards("A♠ A♣ A♦ A♥ K♥ Q♥ 9♠"))  # (K♥ Q♥: 100)
    rest = [c for c in range(24) if c not in aces]
    hands: list[Any] = [[] for _ in range(n)]
    for s in range(3):  # (the 4-player dealer, seat 3, sits the deal out)
        hands[s] = aces if s == first else [rest.pop(0) for _ in range(7)]
    game = Game.new(rules, 1, names, deals={0: (hands, rest)}, dealer=n - 1)
    counted = ace and counts
    cap = 120 + 100 + (200 if counted else 0)
    option = "ace_marriage = false" if not ace else "ace_marriage_counts_for_bid = false"
    note = f": the four aces count nothing towards it ({option})"
    with pytest.raises(IllegalActionError) as e:
        game.apply(parse_action(f"bid {cap + 5}"), seat=first)
    assert e.value.rule == (
        f"nobody may bid above 120 + the marriages in his own hand ({cap})"
        + ("" if counted else note)
    )
    # A hand without the four aces: nothing of them is said.
    game.apply(parse_action(f"bid {cap}"), seat=first)
    other = game.to_act
    assert other is not None and other != first
    with pytest.raises(IllegalActionError) as e:
        game.apply(parse_action("bid 500"), seat=other)
    assert "aces" not in e.value.rule and "his own hand" in e.value.rule


@pytest.mark.parametrize("counts", [True, False])
def test_a_contract_over_the_cap_names_the_aces_only_where_they_add_nothing(
    counts: bool,
) -> None:
    game = _four_aces(ace_marriage_counts_for_bid=counts)
    cap = 420 if counts else 220
    while game.phase.value == "bidding":
        seat = game.to_act
        assert seat is not None
        game.apply(parse_action(f"bid {cap}" if seat == 0 else "pass"), seat=seat)
    for text in ("give 9♠ to 1", "give 9♥ to 2"):
        game.apply(parse_action(text), seat=0)
    with pytest.raises(IllegalActionError) as e:
        game.apply(parse_action(f"contract {cap + 5}"), seat=0)
    assert e.value.rule == (
        f"the contract is at most the greater of the bid and 120 + the marriages in hand "
        f"({cap})" + ("" if counts else
                      ": the four aces count nothing towards it "
                      "(ace_marriage_counts_for_bid = false)")
    )  # fmt: skip


@pytest.mark.parametrize(
    ("vs", "said"),
    [
        (["--vs", ""], "name at least one opponent"),
        (["--vs", "random,,heuristic"], "an empty name in 'random,,heuristic'"),
        (["--vs", "random", "--vs", ""], "an empty name"),
    ],
)
def test_try_vs_refuses_an_empty_name(vs: list[str], said: str) -> None:
    from sdk.cli import main as bot_main

    r = CliRunner().invoke(bot_main, ["try", "random", *vs, "-n", "1"])
    assert r.exit_code == 2, r.output
    assert said in r.output and "--vs" in r.output


def test_try_vs_takes_a_bot_file_whose_name_holds_a_comma_as_one_opponent(
    tmp_path: Path,
) -> None:
    """``--vs "my,bot.py:Mine"`` was split at its comma: "3 opponents named, but the ruleset
    seats 3 players" beside another ``--vs``, or an unknown bot ``my``: the file could not
    be named at all."""
    from sdk.cli import main as bot_main

    mine = tmp_path / "my,bot.py"
    mine.write_text(
        "from sdk import Bot\n\n\nclass Mine(Bot):\n    name = 'mine'\n\n"
        "    def act(self, view):\n        return view.legal_actions[0]\n"
    )
    r = CliRunner().invoke(
        bot_main,
        ["try", "random", "--vs", f"{mine}:Mine", "--vs", "random", "-n", "1", "--max-deals", "1"],
    )
    assert r.exit_code == 0, r.output
    assert "mine" in r.output and "opponents named" not in r.output
    # (a comma elsewhere still separates names: the file is only whole when it is there)
    r = CliRunner().invoke(bot_main, ["try", "random", "--vs", f"{tmp_path}/a,b.py", "-n", "1"])
    assert r.exit_code == 2 and "opponents named" not in r.output, r.output


def test_try_vs_still_splits_a_list_that_ends_in_a_bot_file(tmp_path: Path) -> None:
    """``--vs random,/x/mine.py:Mine`` is two opponents: kept whole only where the whole
    value is a file there (else "no file random,/x/mine.py")."""
    from sdk.cli import main as bot_main

    mine = tmp_path / "mine.py"
    mine.write_text(
        "from sdk import Bot\n\n\nclass Mine(Bot):\n    name = 'mine'\n\n"
        "    def act(self, view):\n        return view.legal_actions[0]\n"
    )
    args = ["try", "random", "--vs", f"random,{mine}:Mine", "-n", "1", "--max-deals", "1"]
    r = CliRunner().invoke(bot_main, args)
    assert r.exit_code == 0, r.output
    assert "mine" in r.output and "random#1" in r.output


def test_an_empty_vs_among_several_is_named_as_they_are_joined() -> None:
    from sdk.cli import main as bot_main

    r = CliRunner().invoke(bot_main, ["try", "random", "--vs", "random", "--vs", "", "-n", "1"])
    assert r.exit_code == 2, r.output
    assert "an empty name in 'random,'" in r.output


def test_human_plays_two_heuristic_bots_by_default() -> None:
    """``arena-bot human`` alone: two heuristic opponents (its help says so)."""
    from sdk.cli import main as bot_main

    vs = next(p for p in bot_main.commands["human"].params if p.name == "vs")
    assert vs.multiple and vs.default == ("heuristic,heuristic",)
    tried = next(p for p in bot_main.commands["try"].params if p.name == "vs")
    assert tried.multiple and tried.default == ("random,heuristic",)


def _club(tmp_path: Path, bots: str, extra: str = "") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "club"\ndb = "{tmp_path / "t.sqlite"}"\nmax_deals = 1\n{extra}\n[bots]\n{bots}'
    )
    return path


def test_a_command_bots_older_digest_of_a_crlf_file_is_its_own(tmp_path: Path) -> None:
    """A ``command`` bot's file digested by an arena before round 52 on a CRLF checkout is
    known as the same code (``code_before``), as an ``sdk`` bot's is."""
    (tmp_path / "mine.py").write_bytes(b"print('hi')\r\nprint('there')\r\n")
    cfg = load_config(
        _club(
            tmp_path,
            'mine = { command = ["{python}", "mine.py"], cwd = "." }\n'
            'r1 = "random"\nr2 = "random"\n',
        )
    )
    mine = next(b for b in cfg.bots if b.name == "mine")
    assert mine.kind == "command" and mine.code is not None
    raw = code_digest([tmp_path / "mine.py"], lines="raw")
    assert raw != mine.code and raw in mine.code_before


def test_a_stored_bundled_bot_of_the_same_code_is_not_said_to_be_another_digest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A tournament resumed by its stored ruleset (an option it never uses, as an arena
    before 2026-12-06 stored it) whose bundled bots' code is this arena's: only the ruleset
    is said, not "stored by an arena that took every module of its bots/"."""
    import logging

    from arena.tournament.runner import as_stored
    from engine import Ruleset

    cfg = load_config(_club(tmp_path, 'r1 = "random"\nr2 = "random"\nh = "heuristic"\n',
                            'ruleset = "1001"'))  # fmt: skip
    older = dataclasses.replace(cfg, ruleset=Ruleset.from_dict(
        {**cfg.ruleset.to_dict(), "barrel_mode": "one"}))  # fmt: skip
    assert older.tournament_id != cfg.tournament_id
    with Storage(cfg.db) as st:
        st.ensure_tournament(older.tournament_id, name="club", fingerprint=older.fingerprint,
                             config=older.to_json(), total_matches=6,
                             bots=[(b.name, b.bot or "") for b in older.bots])  # fmt: skip
    with caplog.at_level(logging.INFO):
        assert as_stored(cfg).tournament_id == older.tournament_id
    assert "never uses" in caplog.text
    assert "took every module" not in caplog.text and "line ends" not in caplog.text


def test_a_fixed_id_stored_by_an_arena_of_other_seeds_is_a_bad_config(tmp_path: Path) -> None:
    config = _club(tmp_path, 'a = "random"\nb = "random"\nc = "random"\n', 'id = "cup"')
    cfg = load_config(config)
    with Storage(cfg.db) as st:  # (the schedule of an older arena: other match seeds)
        st.ensure_tournament("cup", name="club", fingerprint=cfg.fingerprint,
                             config={**cfg.to_json(), "schedule": 0}, total_matches=6,
                             bots=[("a", "random")])  # fmt: skip
    from arena.cli import main

    r = CliRunner().invoke(main, ["tournament", "--config", str(config)])
    assert r.exit_code == 2, r.output
    assert "was stored by an older version of the arena" in r.output


def test_a_config_mismatch_is_still_a_storage_error_to_a_caller_of_the_runner() -> None:
    """(A program calling ``run`` caught the refusal of another config as a StorageError.)"""
    from arena.storage import StorageError
    from arena.tournament.runner import ConfigMismatch, TournamentError

    assert issubclass(ConfigMismatch, StorageError) and issubclass(ConfigMismatch, TournamentError)


def test_an_empty_file_as_the_database_is_no_bad_argument_to_the_leaderboard(
    tmp_path: Path,
) -> None:
    """Exit 1 for a file that cannot be read as a database, 2 for another program's."""
    from arena.cli import main

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    r = CliRunner().invoke(main, ["leaderboard", "--db", str(empty)])
    assert r.exit_code == 1, r.output
    assert "error" in r.output


def test_a_bot_restarted_before_the_start_says_nothing_went_wrong() -> None:
    import asyncio

    from arena.tournament import runner
    from tests.support.dead_bot import DeadBot

    p: Any = DeadBot("crashy")
    assert asyncio.run(runner._restart(p, 1, 3)) is None and p.restarts == 1
    p.fails = "cannot launch bot 'crashy': No such file"  # (its program gone meanwhile)
    assert asyncio.run(runner._restart(p, 1, 3)) == "cannot launch bot 'crashy': No such file"
    assert p.given_up_why == "could not be started again"


def test_three_aces_are_no_four_in_the_words_of_the_cap() -> None:
    """A hand of three aces under a ruleset whose aces do not count: nothing of them."""
    rules = dataclasses.replace(load_ruleset("classic"), ace_marriage_counts_for_bid=False)
    hands = [parse_cards("A♠ A♣ A♦ K♥ Q♥ 9♠ 9♣"), parse_cards("10♠ K♠ Q♠ J♠ 10♣ K♣ Q♣"),
             parse_cards("J♣ A♥ 10♦ K♦ Q♦ J♦ 9♦")]  # fmt: skip
    game = Game.new(rules, 1, ["a", "b", "c"], deals={0: (hands, parse_cards("10♥ J♥ 9♥"))},
                    dealer=2)  # fmt: skip
    game.apply(parse_action("bid 105"), seat=1)
    game.apply(parse_action("pass"), seat=2)
    with pytest.raises(IllegalActionError) as e:
        game.apply(parse_action("bid 305"), seat=0)
    assert e.value.rule == "nobody may bid above 120 + the marriages in his own hand (220)"


def test_the_start_stopped_by_a_bot_that_cannot_start_again_restarts_no_other() -> None:
    """Two bots died together before the start, the first not to be started again: the
    start stops on it then, the second left as it is (not started again to be stopped)."""
    import asyncio
    import types

    from arena.tournament import runner
    from arena.tournament.runner import TournamentError
    from tests.support.dead_bot import DeadBot, WaitingReferee

    first = DeadBot("first", "cannot launch bot 'first': No such file")
    second = DeadBot("second")
    cfg: Any = types.SimpleNamespace(bot_names=["first", "second"], bot_wait_s=2.0, bots=[])
    referee: Any = WaitingReferee("first", "second")
    procs: Any = {"first": first, "second": second}
    with pytest.raises(TournamentError) as ei:
        asyncio.run(runner._wait_for_bots(cfg, referee, procs, 3))
    assert "bot 'first' exited with code 1 before the tournament began, and could not" in str(
        ei.value
    )
    assert first.restarts == 1 and second.restarts == 0 and second.starts == 0
