"""A config error names its key as TOML writes it: a part with a dot, a space or a quote
quoted (limits round 56).

Defect: the bot "v1.2" (a valid name) was named ``bots.v1.2.workers`` in an error, which
reads as the key ``2`` of a bot ``v1``; an environment variable or an unknown key holding
a dot, a space or a quote was named bare too (``bots.a.env.MY VAR``). Every error of the
config (its bots' tables, their ``env``, unknown keys, the tokens of remote bots, ``--set``)
now quotes such a part as TOML does, ``bots."v1.2".workers``, as ``--set`` takes it and
as the messages' own hints write it; plain names read as before (``bots.a.workers``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from arena.tournament.config import ConfigError, load_config

HEAD = 'name = "q"\nruleset = "classic"\n[bots]\nb = "random"\nc = "random"\n'


def _error(tmp_path: Path, bots: str, overrides: tuple[str, ...] = ()) -> ConfigError:
    path = tmp_path / "t.toml"
    path.write_text(HEAD + bots, encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_config(path, overrides)
    assert str(ei.value).startswith(f"{path}: {ei.value.key}: "), str(ei.value)
    return ei.value


def _parts(key: str) -> list[str]:
    """The parts of ``key`` read as TOML reads a dotted key."""
    node: Any = tomllib.loads(f"{key} = 0")
    parts = []
    while isinstance(node, dict):
        ((part, node),) = node.items()
        parts.append(part)
    return parts


@pytest.mark.parametrize(
    ("bots", "key", "parts"),
    [
        ('"v1.2" = { bot = "random", workers = 0 }', 'bots."v1.2".workers',
         ["bots", "v1.2", "workers"]),
        ('"v1.2" = { command = "x", workers = 2 }', 'bots."v1.2".workers',
         ["bots", "v1.2", "workers"]),
        ('"v1.2" = { bot = "nope" }', 'bots."v1.2".bot', ["bots", "v1.2", "bot"]),
        ('"v1.2" = 3', 'bots."v1.2"', ["bots", "v1.2"]),
        ('"v1.2" = { bot = "random", cwd = "no/such/dir" }', 'bots."v1.2".cwd',
         ["bots", "v1.2", "cwd"]),
        ('"v1.2" = { remote = true }', 'bots."v1.2"', ["bots", "v1.2"]),
        # unknown keys of a bot's table, and environment variables, of every awkward kind
        ('"v1.2" = { bot = "random", "wor.kers" = 1 }', 'bots."v1.2"."wor.kers"',
         ["bots", "v1.2", "wor.kers"]),
        ('"v1.2" = { bot = "random", "it\'s" = 1 }', 'bots."v1.2"."it\'s"',
         ["bots", "v1.2", "it's"]),
        ('"v1.2" = { bot = "random", env = { "MY VAR" = 1 } }', 'bots."v1.2".env."MY VAR"',
         ["bots", "v1.2", "env", "MY VAR"]),
        ('"v1.2" = { bot = "random", env = { "A.B" = 1 } }', 'bots."v1.2".env."A.B"',
         ["bots", "v1.2", "env", "A.B"]),
        ("a = { bot = \"random\", env = { 'say \"hi\"' = 1 } }", 'bots.a.env."say \\"hi\\""',
         ["bots", "a", "env", 'say "hi"']),
        # plain names read as before
        ('a = { bot = "random", workers = 0 }', "bots.a.workers", ["bots", "a", "workers"]),
        ('my_bot-2 = { bot = "random", wrkers = 1 }', "bots.my_bot-2.wrkers",
         ["bots", "my_bot-2", "wrkers"]),
    ],
)  # fmt: skip
def test_a_bots_key_is_quoted_where_toml_quotes_it(
    tmp_path: Path, bots: str, key: str, parts: list[str]
) -> None:
    e = _error(tmp_path, bots + "\n")
    assert e.key == key, str(e)
    assert _parts(e.key) == parts  # the key named is the TOML key of the value at fault


def test_an_unknown_top_level_key_with_a_space_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('"max deals" = 3\n' + HEAD, encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_config(path)
    assert ei.value.key == '"max deals"' and "unknown key" in ei.value.message


def test_the_token_of_another_bot_is_named_quoted(tmp_path: Path) -> None:
    token = "x" * 40
    e = _error(
        tmp_path,
        f'"v1.2" = {{ remote = true, token = "{token}" }}\n'
        f'"v1.3" = {{ remote = true, token = "{token}" }}\n',
    )
    assert e.key == 'bots."v1.3".token'
    assert 'the same token as bots."v1.2":' in e.message, e.message


@pytest.mark.parametrize(
    ("item", "key"),
    [
        ('bots."v1.2".workers=0', 'bots."v1.2".workers'),
        ("bots.'v1.2'.workers=0", 'bots."v1.2".workers'),
        ('bots."v1.2".wrkers=1', 'bots."v1.2".wrkers'),
        ('bots."v1.2".env."MY VAR"=1', 'bots."v1.2".env."MY VAR"'),
    ],
)
def test_a_bad_value_set_by_set_is_named_quoted_and_said_to_come_from_it(
    tmp_path: Path, item: str, key: str
) -> None:
    """The key is quoted, and the error still knows which ``--set`` set it (it matches
    the override's key against the error's)."""
    e = _error(tmp_path, '"v1.2" = { bot = "random" }\n', (item,))
    assert e.key == key, str(e)
    assert e.message.endswith(f"(from --set {item}, not from the file)"), e.message


def test_a_value_set_inside_a_string_is_named_quoted(tmp_path: Path) -> None:
    e = _error(tmp_path, '"v1.2" = "random"\n', ('bots."v1.2".workers=2',))
    assert e.key == 'bots."v1.2".workers', str(e)
    assert e.message.endswith("""set it whole: --set 'bots."v1.2"={bot = "random", workers = 2}'""")
