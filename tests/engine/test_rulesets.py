"""Rulesets: presets, TOML files, validation errors naming the key, dict round trip."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine import PRESETS, Game, Ruleset, RulesetError, load_ruleset
from engine.rules import TomlFileError, did_you_mean, read_toml_file

ROOT = Path(__file__).resolve().parents[2]


def test_presets() -> None:
    c, m, m4 = PRESETS["classic"], PRESETS["1001"], PRESETS["1001-4p"]
    assert (c.target, c.opening_bid, c.bid_step, c.first_hand_commits) == (1000, 100, 5, True)
    assert (c.barrel, c.barrel_at, c.barrel_deals, c.barrel_penalty, c.barrel_mode) == (
        True,
        880,
        3,
        120,
        "many",
    )
    assert (c.concede, c.concede_pays, c.rounding, c.talon_visible) == ("free", "half", 1, True)
    assert (c.must_beat, c.marriage_needs_trick, c.ace_marriage) == (False, True, True)
    assert (m.target, m.barrel, m.opening_bid, m.first_hand_commits) == (1001, False, 40, False)
    assert (m.concede, m.concede_pays, m.rounding, m.all_pass) == (
        "penalty",
        "none",
        5,
        "last_hand",
    )
    assert (m.throw_in_bonus, m4.players, m4.nines_talon_value) == (50, 4, 100)
    assert c.max_deals == 0 and c.ask_forced is False


def test_1001_names_the_game_for_3_or_4_players() -> None:
    """RULES.md: preset `1001` is "3 or 4 players"; the name gives the ruleset of the size
    asked for. Classic (RULES.md: 3 players) stays 3, and the sizes are checked."""
    g = Game.new("1001", 5, ["a", "b", "c", "d"])
    assert g.ruleset is PRESETS["1001-4p"] and len(g.hand(g.dealer)) == 0
    assert Game.new("1001", 5, ["a", "b", "c"]).ruleset is PRESETS["1001"]
    assert load_ruleset("1001", 4) is PRESETS["1001-4p"] and load_ruleset("1001") is PRESETS["1001"]
    with pytest.raises(ValueError, match="'classic' is for 3 players, got 4"):
        Game.new("classic", 5, ["a", "b", "c", "d"])
    with pytest.raises(RulesetError, match="unknown preset 'nope'"):
        Game.new("nope", 5, ["a", "b", "c"])


@pytest.mark.parametrize("name", list(PRESETS))
def test_round_trip(name: str) -> None:
    r = PRESETS[name]
    assert Ruleset.from_dict(r.to_dict()) == r
    assert load_ruleset(name) is r
    hash(r)


def test_toml_files(tmp_path: Path) -> None:
    r = load_ruleset(ROOT / "rulesets" / "house-penalty.toml")
    assert r.concede == "penalty" and r.barrel_mode == "one" and r.must_beat
    assert r.name == "house-penalty" and r.target == 1000
    for path in (ROOT / "rulesets").glob("*.toml"):
        load_ruleset(path)
    f = tmp_path / "mine.toml"
    f.write_text('preset = "1001"\nplayers = 4\n')
    r2 = load_ruleset(str(f))
    assert r2.players == 4 and r2.name == "mine" and r2.target == 1001


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('preset = "nope"', "preset"),
        ("colour = 3", "colour"),
        ("must_beat = 3", "must_beat"),
        ("players = 5", "players"),
        ('concede = "maybe"', "concede"),
        ("target = true", "target"),
        ("bid_step = 0", "bid_step"),
        ("opening_bid = 101", "opening_bid"),
        ("barrel_at = 2000", "barrel_at"),
        ("max_deals = -1", "max_deals"),
        ("this is not toml", "file"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, text: str, key: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(RulesetError) as info:
        load_ruleset(f)
    assert info.value.key == key and info.value.source == str(f)
    # The file is named, whichever command prints it (`arena-bot try` and `arena serve`
    # named only the key); a file that is no TOML at all is the file's own fault.
    assert str(info.value).startswith(f"{f}: " if key == "file" else f"{f}: {key}: ")


def test_missing_file_and_unknown_preset() -> None:
    with pytest.raises(RulesetError) as info:
        load_ruleset("nosuch.toml")
    assert info.value.key == "file"
    with pytest.raises(RulesetError) as info2:
        load_ruleset("classik")
    assert info2.value.key == "preset"


def test_frozen_and_validated_on_replace() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["classic"].target = 5  # type: ignore[misc]
    with pytest.raises(RulesetError):
        dataclasses.replace(PRESETS["classic"], barrel_mode="two")


def test_a_ruleset_file_based_on_1001_is_sized_for_four_players(tmp_path: Path) -> None:
    """Defect (audit round 3): a TOML file with `preset = "1001"` (RULES.md: 1001 is for 3
    or 4 players) loaded for a 4-seat table stayed a 3-player ruleset, so the shipped
    rulesets/tournament-1001.toml could not be played by four. Its preset is sized like the
    bare name now, unless the file sets `players` itself."""
    house = tmp_path / "house.toml"
    house.write_text('preset = "1001"\nmax_deals = 60\n')
    four = load_ruleset(house, 4)
    assert four.players == 4 and four.max_deals == 60 and four.name == "house"
    assert dataclasses.replace(four, name="1001-4p", max_deals=0) == PRESETS["1001-4p"]
    assert load_ruleset(house).players == 3 and load_ruleset(house, 3).players == 3
    g = Game.new(load_ruleset(house, 4), 5, ["a", "b", "c", "d"])
    assert len(g.hand(g.dealer)) == 0  # the 4-player dealer sits out
    pinned = tmp_path / "pinned.toml"
    pinned.write_text('preset = "1001"\nplayers = 3\n')
    assert load_ruleset(pinned, 4).players == 3  # the file's own word wins
    shipped = Path(__file__).parents[2] / "rulesets" / "tournament-1001.toml"
    assert load_ruleset(shipped, 4).players == 4
    assert Ruleset.from_dict({"preset": "1001"}, 4).players == 4
    assert Ruleset.from_dict({"preset": "classic"}, 4).players == 3  # no 4-player classic


def test_a_misspelt_option_preset_or_choice_gets_a_did_you_mean(tmp_path: Path) -> None:
    """Defect (organiser audit): `must_bet = true` in a ruleset file or a tournament's inline
    ruleset said only "unknown option (known: ...)", though a tournament config's own keys
    get "did you mean"; a misspelt preset or choice neither. All three get one now."""
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict({"preset": "classic", "must_bet": True})
    assert info.value.key == "must_bet"
    assert str(info.value).startswith("must_bet: unknown option (did you mean 'must_beat'?); ")
    assert "known options: name, players," in str(info.value)
    f = tmp_path / "house.toml"
    for text, words in [
        ('preset = "classic"\nmust_bet = true\n',
         "must_bet: unknown option (did you mean 'must_beat'?)"),
        ('preset = "clasic"\n', "preset: unknown preset 'clasic' (did you mean 'classic'?)"),
        ('concede = "penalt"\n',
         "concede: must be one of 'free', 'penalty', 'off', got 'penalt' "
         "(did you mean 'penalty'?)"),
    ]:  # fmt: skip
        f.write_text(text)
        with pytest.raises(RulesetError, match="did you mean") as info:
            load_ruleset(f)
        assert str(info.value).startswith(f"{f}: {words}")
    with pytest.raises(RulesetError, match=r"unknown preset 'clasic' \(did you mean 'classic'\?\)"):
        load_ruleset("clasic")
    with pytest.raises(RulesetError) as info:  # nothing near: no guess
        Ruleset.from_dict({"colour": 3})
    assert "did you mean" not in str(info.value)


def test_a_key_set_twice_in_a_toml_file_quotes_its_line(tmp_path: Path) -> None:
    """Defect (organiser audit): a key set twice in a ruleset file (or any TOML file the
    product reads: a tokens file too) said only tomllib's "Cannot overwrite a value (at
    line 3, column 16)", naming no key; the tournament config alone quoted the line."""
    f = tmp_path / "house.toml"
    f.write_text('preset = "classic"\nconcede = "penalty"\nconcede = "off"\n')
    with pytest.raises(TomlFileError) as info:
        read_toml_file(f)
    assert info.value.key_set_twice
    assert str(info.value).endswith(": line 3 (concede = ...) sets a key that the file already set")
    with pytest.raises(RulesetError) as info2:
        load_ruleset(f)
    assert info2.value.key == "file"
    assert str(info2.value).startswith(f"{f}: not valid TOML: Cannot overwrite a value")
    assert "line 3 (concede = ...) sets a key" in str(info2.value)
    f.write_text('preset = "classic"\nmust_beat = true\nmust_beat = false')  # "end of document"
    with pytest.raises(TomlFileError, match=r"line 3 \(must_beat = \.\.\.\) sets a key"):
        read_toml_file(f)
    f.write_text("[a]\nx = 1\n[a]\n")
    with pytest.raises(TomlFileError) as info:
        read_toml_file(f)
    assert not info.value.key_set_twice
    assert str(info.value).endswith("line 3 ([a]) declares a table that the file already declared")
    f.write_text('"x\\u001b[2J" = 1\n"x\\u001b[2J" = 2 \n')  # the quoted line is escaped
    with pytest.raises(TomlFileError, match=r'line 2 \("x\\u001b\[2J" = \.\.\.\) sets'):
        read_toml_file(f)
    f.write_text("a = [1,\n")  # another error: as tomllib says it
    with pytest.raises(TomlFileError) as info:
        read_toml_file(f)
    assert "line" not in str(info.value).split(")", 1)[-1]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('tok = "a"\ntok = """\nsecret-xyz"""\n', "line 2 (tok = ...) sets a key"),
        ("tok = 'a'\ntok = [\n  'first',\n  'secret-xyz' ]\n", "line 2 (tok = ...) sets a key"),
        ('a = 1\r\nb = 2\r\na = """\r\nsecret-xyz"""\r\n', "line 3 (a = ...) sets a key"),
        ('"a=b" = 1\n"a=b" = "secret-xyz"\n', 'line 2 ("a=b" = ...) sets a key'),
        ("'a=b' = 1\n'a=b' = 'secret-xyz'\n", "line 2 ('a=b' = ...) sets a key"),
        ('"a\\"=" = 1\n"a\\"=" = "secret-xyz"\n', 'line 2 ("a\\"=" = ...) sets a key'),
        # a backslash escapes nothing in a literal string: the key ends at its quote
        ("'C:\\' = 1\n'C:\\' = 'secret-xyz'\n", "line 2 ('C:\\' = ...) sets a key"),
    ],
)
def test_a_key_set_twice_is_quoted_by_its_key_line_only(
    tmp_path: Path, text: str, words: str
) -> None:
    """Defect (review): tomllib points past the value, so a value of several lines was
    quoted by its last line (``secret-xyz\"\"\"``: a token in a tokens file printed), and a
    quoted key holding ``=`` was cut there (``"a = ...``)."""
    f = tmp_path / "tokens.toml"
    f.write_bytes(text.encode())
    with pytest.raises(TomlFileError) as info:
        read_toml_file(f)
    assert words in str(info.value) and "secret" not in str(info.value)


def test_a_bad_ruleset_file_says_so_in_one_short_line(tmp_path: Path) -> None:
    """Defect: a ruleset error quoted a bad value whole (a 100 KB string was a 100 KB
    message), wrote a key's newline or escape sequence as it was (the one line split, the
    terminal obeyed), and `preset = 1001` was "unknown preset 1001 (known: ..., 1001, ...)"."""
    f = tmp_path / "house.toml"
    f.write_text(f'concede = "{"x" * 100_000}"\n')
    with pytest.raises(RulesetError) as info:
        load_ruleset(f)
    assert info.value.key == "concede" and len(str(info.value)) < 300
    assert str(info.value).endswith("xxx...")
    f.write_text(f"target = [{'1,' * 10_000}]\n")
    with pytest.raises(RulesetError, match=r"target: expected an integer, got \[1, 1, ") as info:
        load_ruleset(f)
    assert len(str(info.value)) < 300
    f.write_text('"a\\nb\\u001b[31m" = 1\n')
    with pytest.raises(RulesetError) as info:
        load_ruleset(f)
    assert info.value.key == "a\\nb\\x1b[31m"
    assert str(info.value).startswith(f"{f}: a\\nb\\x1b[31m: unknown option; known options: ")
    assert str(info.value).isprintable()
    f.write_text("preset = 1001\n")
    with pytest.raises(RulesetError) as info:
        load_ruleset(f)
    assert (
        str(info.value) == f'{f}: preset: expected a string, got 1001 (quote it: preset = "1001")'
    )
    assert load_ruleset("classic") is PRESETS["classic"]  # (a preset has no file to name:)
    with pytest.raises(RulesetError) as info:
        load_ruleset("nope")
    assert info.value.source is None and str(info.value).startswith("preset: unknown preset")


def test_did_you_mean_reads_an_iterator_of_names_once() -> None:
    """Defect (review of round 17): ``did_you_mean(word, known)`` takes any iterable of
    names, and read it twice since a name the word begins was looked for first: given an
    iterator (a generator of keys), the spelling fallback saw none of them, and a misspelt
    name got no hint at all."""
    names = ("must_beat", "max_deals")
    assert did_you_mean("must_bet", iter(names)) == " (did you mean 'must_beat'?)"
    assert did_you_mean("max", (n for n in names)) == " (did you mean 'max_deals'?)"
