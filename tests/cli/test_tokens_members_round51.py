"""Round 51: `arena serve`'s tokens file read again: a bot removed from ``[bots]`` (or the
whole table emptied, to let no bot in) while ``[members]`` still names it is removed, its
member's line taken without it. The file was refused ("members.alice: 'alice-v1' is no bot
of [bots]"), and the bots it removed kept their tokens, a cheater's among them. A name
``[bots]`` never listed (a typo) is refused as before, and at the start as always."""

from __future__ import annotations

import logging
from pathlib import Path

import click
import pytest

from arena.cli.serve import _TokensWatch, read_tokens_file
from arena.referee import Lobby, Referee
from engine import load_ruleset
from tests.cli.test_tokens_reload_round49 import _settle, _who, _write

BOTS = """[bots]
alice-v1 = "alice-token-1"
alice-v2 = "alice-token-2"
bob = "bob-token-1"
cid = "cid-token-1"
"""
MEMBERS = """[members]
alice = ["alice-v1", "alice-v2"]
"""


def _watch(tmp_path: Path) -> tuple[Path, Referee, Lobby, _TokensWatch]:
    path = tmp_path / "bots.toml"
    _write(path, BOTS + MEMBERS)
    tokens, members = read_tokens_file(path)
    referee = Referee()
    for n, t in tokens.items():
        referee.add_bot(n, t)
    lobby = Lobby(referee, load_ruleset("classic"))
    lobby.members = members
    return path, referee, lobby, _TokensWatch(path, tokens, lobby, None)


def test_emptying_bots_with_members_left_removes_every_bot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, lobby, watch = _watch(tmp_path)
    _write(path, "[bots]\n" + MEMBERS)
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert referee.active_bots() == [] and lobby.members == {}
    assert _who(referee, "alice-token-1") == (
        "token revoked: bot 'alice-v1' was removed from the arena's tokens file"
    )
    assert "lists no bot: no match starts until there are 3" in caplog.text
    # listed again, under the member's line kept all along: one member again
    _write(path, BOTS + MEMBERS)
    _settle(watch)
    assert sorted(referee.active_bots()) == ["alice-v1", "alice-v2", "bob", "cid"]
    assert lobby.members == {"alice-v1": "alice", "alice-v2": "alice"}


def test_a_bot_removed_but_left_in_its_members_line_is_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, lobby, watch = _watch(tmp_path)
    _write(path, BOTS.replace('alice-v1 = "alice-token-1"\n', "") + MEMBERS)
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert "alice-v1" not in referee.active_bots()
    assert "bot alice-v1 removed: its token is refused from now on" in caplog.text
    assert lobby.members == {"alice-v2": "alice"}  # (her other bot: still hers)
    # a later edit, the stale line still there, is taken too
    _write(path, BOTS.replace('alice-v1 = "alice-token-1"\n', "") + 'dan = "dan-token-1"\n'
           + MEMBERS)  # fmt: skip
    _settle(watch)
    assert "dan" in referee.active_bots() and "alice-v1" not in referee.active_bots()


def test_a_member_naming_a_bot_never_listed_is_refused_as_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _, lobby, watch = _watch(tmp_path)
    _write(path, BOTS + '[members]\nalice = ["alice-v1", "alice-v3"]\n')  # (a typo)
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert "tokens file changed, not taken" in caplog.text
    assert "members.alice: 'alice-v3' is no bot of [bots]" in caplog.text
    assert lobby.members == {"alice-v1": "alice", "alice-v2": "alice"}  # (as it was)
    # and at the start, a member's bot that [bots] does not list is refused as ever
    start = tmp_path / "start.toml"
    start.write_text('[bots]\nbob = "bob-token-1"\n' + MEMBERS)
    with pytest.raises(click.BadParameter, match="'alice-v1' is no bot of"):
        read_tokens_file(start)


def test_a_bot_renamed_in_bots_alone_is_said_to_be_a_member_of_its_own(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot renamed in ``[bots]`` and not in ``[members]``: the stale entry is dropped, so
    the new name belongs to no member and may sit beside its owner's other bot; the line
    saying it was added says so (review51b). A bot added where no ``[members]`` table is
    kept is not flagged."""
    path, referee, lobby, watch = _watch(tmp_path)
    _write(path, BOTS.replace("alice-v1 =", "alice-v1b =") + MEMBERS)
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert "alice-v1b" in referee.active_bots() and lobby.members == {"alice-v2": "alice"}
    assert (
        "bot alice-v1b added: it may connect now (in no [members] entry: a member of its "
        "own, which may sit at a table with any bot)" in caplog.text
    )
    caplog.clear()
    _write(path, BOTS.replace("alice-v1 =", "alice-v1b =") + 'dan = "dan-token-1"\n')
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert "bot dan added: it may connect now\n" in caplog.text + "\n"
    assert "a member of its own" not in caplog.text
