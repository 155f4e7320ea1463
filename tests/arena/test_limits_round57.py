"""Known limits of round 56's closing note, fixed in round 57.

1. One helper quotes a key part the TOML way (``engine.rules.toml_key``; its
   ``ensure_ascii=False`` for a key an error names) and one join (``error_key``): the
   config's own ``_key_part``/``_key`` and ``_toml_key`` were copies of it.
2. ``arena serve --tokens FILE``'s errors and notes named a bot key bare (``bots.v1.2``,
   read as the key "2" of a bot "v1").
3. A bot name that breaks the name rule kept Python's single quotes (``bots.'my bot'``) in
   a config's errors and a tokens file's, beside every other key's ``"my bot"``.
4. ``arena-bot try --seed`` of hundreds of digits: the record file named after it was too
   long for the system ("cannot write" after the first match was played).
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli import main as arena_cli
from arena.cli.serve import _TokensWatch, read_tokens_file
from arena.referee import Lobby, Referee
from arena.render import printable
from arena.tournament.config import ConfigError, error_key, parse_config
from engine import load_ruleset
from engine.rules import toml_key, toml_shown
from sdk.cli import main as bot_cli

# ------------------------------------------------------------------ 1. one helper, one join

#: A key part -> as an error names it (round 56's form, kept) and as TOML writes it to paste.
PARTS = [
    ("workers", "workers", "workers"),
    ("my-bot_2", "my-bot_2", "my-bot_2"),
    ("v1.2", '"v1.2"', '"v1.2"'),
    ("it's", '"it\'s"', '"it\'s"'),
    ("", '""', '""'),
    ('a"b\\c', '"a\\"b\\\\c"', '"a\\"b\\\\c"'),
    ("über", '"über"', '"\\u00fcber"'),
    ("a\nb\x1b[31m", '"a\\x0ab\\x1b[31m"', '"a\\nb\\u001b[31m"'),
    ("\x7f\u200f\U000e0001", '"\\x7f\\u200f\\U000e0001"', '"\\u007f\\u200f\\udb40\\udc01"'),
]


@pytest.mark.parametrize(("part", "named", "pasted"), PARTS)
def test_one_helper_quotes_a_key_part_for_an_error_and_to_paste(
    part: str, named: str, pasted: str
) -> None:
    assert toml_key(part, ensure_ascii=False) == named
    assert error_key(part) == named and named.isprintable()
    assert toml_key(part) == pasted == error_key(part, paste=True)
    assert toml_key(part) == (part if part == named else json.dumps(part))  # (as before)


def test_the_one_join_names_dotted_keys_and_cuts_each_part_as_before() -> None:
    assert error_key("bots", "v1.2", "env", "MY VAR") == 'bots."v1.2".env."MY VAR"'
    assert error_key("bots", "über", paste=True) == 'bots."\\u00fcber"'
    long = "x" * 150  # (bare, cut at 100 characters saying its length, as round 56)
    assert error_key("bots", long) == f"bots.{'x' * 100}... (150 characters)"
    assert error_key(long, paste=True) == long


def test_what_uses_the_ascii_form_and_printable_are_unchanged() -> None:
    """`toml_shown` (a table a message shows) writes its keys as before, byte for byte, and
    `printable` writes characters out with the one function the key helper uses."""
    assert toml_shown({"über": 1, "a.b": True, "k": {"x y": "z"}}) == (
        '{ "\\u00fcber" = 1, "a.b" = true, k = { "x y" = \'z\' } }'
    )
    assert printable("a\x1b\u200f\U000e0001\nb", keep="\n") == ("a\\x1b\\u200f\\U000e0001\nb")


# ------------------------------------------------------------- 3. a bad bot name, in a config
@pytest.mark.parametrize(
    ("name", "key"),
    [("my bot", 'bots."my bot"'), ("ü\x1b[2J", 'bots."ü\\x1b[2J"'), ("it's", 'bots."it\'s"')],
)
def test_a_bot_name_that_breaks_the_rule_is_named_as_every_key(name: str, key: str) -> None:
    data = {"bots": {"random": "random", name: "random", "counting": "counting"}}
    with pytest.raises(ConfigError) as info:
        parse_config(data, source="t.toml")
    assert info.value.key == key, str(info.value)
    assert str(info.value).startswith(f"t.toml: {key}: a bot name starts with a letter")


# ------------------------------------------------------- 2. and 3. an `arena serve` tokens file
def _tokens(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bots.toml"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[bots]\n"v1.2" = ""\n', 'bots."v1.2": the token must be a non-empty string'),
        ('[bots]\n"v1.2" = 5\n', 'bots."v1.2": the token must be a non-empty string'),
        ('[bots]\n"v1.2" = "tok-en-1"\n"v1.3" = "tok-en-1"\n',
         'bots."v1.3": the same token as bots."v1.2" (each bot needs a token of its own)'),
        ('[bots]\n"v1.2" = "tok\\u0000en-1"\n', 'bots."v1.2": '),
        ('[bots]\n"my bot" = "tok-en-1"\n', 'bots."my bot": a bot name starts with'),
        ('[bots]\n"ü\\u001b[2J" = "tok-en-1"\n', 'bots."ü\\x1b[2J": a bot name starts with'),
        ('[bots]\na = "tok-en-1"\n[members]\n"a b" = ["a"]\n',
         'members."a b": a bot name starts with'),
        ('[bots]\na = "tok-en-1"\n[members]\n"t.1" = "a"\n',
         'members."t.1": expected a list of its bots ["bot", ...]'),
        ('[bots]\na = "tok-en-1"\n[members]\n"t.1" = ["b"]\n',
         "members.\"t.1\": 'b' is no bot of [bots]"),
        ('[bots]\na = "tok-en-1"\n[members]\n"t.1" = ["a"]\n"t.2" = ["a"]\n',
         'members."t.2": a is a bot of members."t.1" too (a bot has one member)'),
    ],
)  # fmt: skip
def test_a_tokens_files_errors_quote_its_keys_as_a_configs_do(
    tmp_path: Path, text: str, said: str
) -> None:
    path = _tokens(tmp_path, text)
    with pytest.raises(click.BadParameter) as info:
        read_tokens_file(path)
    message = info.value.message
    assert message.startswith(f"{path}: {said}"), message
    assert message.isprintable(), message


def test_the_weak_token_notes_name_their_bots_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """At the start (the note) and when the file changes (the log line)."""
    import arena.cli.serve as serve_module

    async def no_server(*args: Any) -> None:
        pass

    monkeypatch.setattr(serve_module, "_serve", no_server)
    path = _tokens(tmp_path, '[bots]\n"v1.2" = "t1"\nb = "8-chars!"\nc = "seven77"\n')
    r = CliRunner().invoke(arena_cli, ["serve", "--port", "0", "--tokens", str(path),
                                       "--record-dir", str(tmp_path / "rec")])  # fmt: skip
    assert r.exit_code == 0, r.output
    note = " ".join(r.output.split())
    assert 'bots."v1.2", bots.c: a token shorter than 8 characters' in note, note

    referee = Referee()
    tokens, _ = read_tokens_file(path)
    for n, t in tokens.items():
        referee.add_bot(n, t)
    watch = _TokensWatch(path, tokens, Lobby(referee, load_ruleset("classic")), None)
    _tokens(tmp_path, '[bots]\n"v1.2" = "t2"\nb = "8-chars!"\nc = "seven77-x"\n"d.e" = "t3"\n')

    async def twice() -> None:  # (a change is taken once it looks the same twice)
        await watch.poll()
        await watch.poll()

    with caplog.at_level(logging.WARNING):
        asyncio.run(twice())
    assert 'bots."d.e", bots."v1.2": a token shorter than 8' in caplog.text, caplog.text


# --------------------------------------------------------------------- 4. a seed of 300 digits
@pytest.mark.parametrize("command", ["try", "human"])
@pytest.mark.parametrize("seed", [10**300, -(10**300), 2**63, -(2**63) - 1])
def test_a_seed_past_64_bits_is_refused_before_any_match(
    tmp_path: Path, command: str, seed: int
) -> None:
    args = ["random", "--records", str(tmp_path / "rec")] if command == "try" else []
    r = CliRunner().invoke(bot_cli, [command, *args, f"--seed={seed}"])
    assert r.exit_code == 2, r.output
    out = " ".join(r.output.split())
    assert "Invalid value for '--seed'" in out, out
    assert "a seed is an integer from -2**63 to 2**63-1" in out, out
    assert len(out) < 600, out  # (the number is not echoed whole)
    assert not (tmp_path / "rec").exists()


@pytest.mark.parametrize("seed", [2**63 - 1, -(2**63)])
def test_the_seeds_at_the_ends_of_the_range_name_their_records(tmp_path: Path, seed: int) -> None:
    r = CliRunner().invoke(bot_cli, ["try", "random", "-n", "1", "--max-deals", "1",
                                     f"--seed={seed}", "--records", str(tmp_path)])  # fmt: skip
    assert r.exit_code == 0, r.output
    name = f"local-{seed}-0.json" if seed > 0 else f"local-minus{-seed}-0.json"
    assert [p.name for p in tmp_path.iterdir()] == [name]
