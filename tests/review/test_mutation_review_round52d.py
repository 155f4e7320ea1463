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


def _four_aces(**options: bool) -> Game:
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
    hands: list[list[int]] = [[] for _ in range(n)]
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
