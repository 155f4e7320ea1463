"""An organiser's audit of docs/tournament.md (round 18): what it found wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament.config import ConfigError, load_config

BOTS = """
[bots]
a = "random"
b = "heuristic"
friend = { remote = true, token_env = "R18_FRIEND_TOKEN" }
"""


def _error(tmp_path: Path, text: str) -> str:
    p = tmp_path / "t.toml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    return str(ei.value)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("short", "bots.friend.token_env: the value of R18_FRIEND_TOKEN: must be at least 8"),
        ("a secret with spaces", "bots.friend.token_env: the value of R18_FRIEND_TOKEN: a token "
                                 "is printable ASCII without spaces"),
    ],
)  # fmt: skip
def test_a_bad_token_from_the_environment_names_its_variable_and_hides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    """A token read from `token_env` that is unusable was blamed on `bots.friend.token`,
    a key the file does not have, and one with a space was quoted whole in the message,
    though `token_env` is there to keep it out of files and logs."""
    monkeypatch.setenv("R18_FRIEND_TOKEN", value)
    message = _error(tmp_path, BOTS)
    assert says in message
    assert value not in message


def test_two_remote_bots_with_one_token_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("R18_FRIEND_TOKEN", "s3cret-token-1")
    message = _error(tmp_path, BOTS + 'pal = { remote = true, token_env = "R18_FRIEND_TOKEN" }\n')
    assert "bots.pal.token_env: the same token as bots.friend" in message
    assert "s3cret-token-1" not in message
