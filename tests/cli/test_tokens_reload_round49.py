"""`arena serve` reads its tokens file again when it changes (round 49): what a change
lets in and refuses, and what a bad edit leaves as it was. The watch is driven poll by
poll against a referee without a server (tests/e2e/test_organiser_round49.py plays it)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from arena.cli.serve import _TokensWatch, load_tokens
from arena.referee import Lobby, Referee
from arena.referee.sessions import AuthError
from engine import load_ruleset


def _write(path: Path, names: dict[str, str] | str) -> None:
    text = (
        names
        if isinstance(names, str)
        else "[bots]\n" + "".join(f'{n} = "{t}"\n' for n, t in names.items())
    )
    new = path.with_name(path.name + ".new")
    new.write_text(text)
    new.replace(path)


def _who(referee: Referee, token: str) -> str:
    """The bot ``token`` is let in as, or the refusal's words."""
    try:
        return referee.authenticate([("authorization", f"Bearer {token}")]).name
    except AuthError as e:
        return e.message


def _watch(tmp_path: Path, tokens: dict[str, str]) -> tuple[Path, Referee, _TokensWatch]:
    path = tmp_path / "bots.toml"
    _write(path, tokens)
    referee = Referee()
    for n, t in load_tokens(path).items():
        referee.add_bot(n, t)
    lobby = Lobby(referee, load_ruleset("classic"))
    return path, referee, _TokensWatch(path, load_tokens(path), lobby, None)


def _settle(watch: _TokensWatch) -> None:
    """Two looks at the file: a change is taken once it looks the same twice."""

    async def twice() -> None:
        await watch.poll()
        await watch.poll()

    asyncio.run(twice())


BOTS = {"ann": "ann-token-1", "bob": "bob-token-1", "cid": "cid-token-1"}


def test_a_removed_bot_is_refused_saying_so_and_let_in_again_when_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, watch = _watch(tmp_path, BOTS)
    _write(path, {"ann": "ann-token-1", "bob": "bob-token-1"})
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert _who(referee, "cid-token-1") == (
        "token revoked: bot 'cid' was removed from the arena's tokens file"
    )
    assert _who(referee, "ann-token-1") == "ann"
    assert "bot cid removed: its token is refused from now on" in caplog.text
    assert sorted(referee.active_bots()) == ["ann", "bob"]
    _write(path, BOTS)  # (put back: in again, with the same token)
    _settle(watch)
    assert _who(referee, "cid-token-1") == "cid"
    assert sorted(referee.active_bots()) == ["ann", "bob", "cid"]


def test_a_changed_token_refuses_the_old_one_and_two_bots_may_swap_theirs(
    tmp_path: Path,
) -> None:
    path, referee, watch = _watch(tmp_path, BOTS)
    _write(path, {"ann": "bob-token-1", "bob": "ann-token-1", "cid": "cid-token-2"})
    _settle(watch)
    assert _who(referee, "bob-token-1") == "ann" and _who(referee, "ann-token-1") == "bob"
    assert _who(referee, "cid-token-2") == "cid"
    assert _who(referee, "cid-token-1") == "token revoked: bot 'cid' has another token now"
    assert _who(referee, "never-a-token") == "unknown token"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[bots\nann = ", "not valid TOML"),
        ('[bots]\nann = "same-token"\nbob = "same-token"\n', "the same token as bots.ann"),
        ('[bots]\n"a b" = "x-token-1"\n', 'bots."a b"'),
        ("", 'expected a [bots] table of name = "token"'),
        (None, "No such file or directory"),
    ],
)
def test_a_bad_edit_keeps_the_tokens_read_before_and_says_what_is_wrong(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str | None, said: str
) -> None:
    path, referee, watch = _watch(tmp_path, BOTS)
    if text is None:
        os.unlink(path)
    else:
        _write(path, text)
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
        _settle(watch)  # (said once, not at every look)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, caplog.text
    assert said in errors[0].getMessage(), errors[0].getMessage()
    assert "the 3 bot(s) read before are kept until it is fixed" in errors[0].getMessage()
    assert "Invalid value" not in errors[0].getMessage()  # (click's words for an option)
    assert {t: _who(referee, t) for t in BOTS.values()} == {t: n for n, t in BOTS.items()}
    _write(path, {"ann": "ann-token-1", "bob": "bob-token-1"})  # fixed: taken
    _settle(watch)
    assert sorted(referee.active_bots()) == ["ann", "bob"]


def test_a_file_still_changing_is_not_taken_until_it_looks_the_same_twice(
    tmp_path: Path,
) -> None:
    """An editor or a script writing the file in steps: half of it (one bot of three) must
    not be taken for a file that removes the others."""
    path, referee, watch = _watch(tmp_path, BOTS)
    path.write_text('[bots]\nann = "ann-token-1"\n')  # (in place: half written)
    asyncio.run(watch.poll())
    assert sorted(referee.active_bots()) == ["ann", "bob", "cid"]
    with open(path, "a") as f:  # the rest of it, before the next look
        f.write('bob = "bob-token-1"\ncid = "cid-token-1"\ndan = "dan-token-1"\n')
    os.utime(path, ns=(1, 2))  # (a different time of change, whatever the clock's step)
    asyncio.run(watch.poll())
    assert sorted(referee.active_bots()) == ["ann", "bob", "cid"]
    asyncio.run(watch.poll())
    assert sorted(referee.active_bots()) == ["ann", "bob", "cid", "dan"]


def test_members_changed_are_taken_for_the_next_tables(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, referee, watch = _watch(tmp_path, BOTS)
    _write(path, _tokens_text(BOTS) + '[members]\nann = ["ann", "bob"]\n')
    with caplog.at_level(logging.WARNING, "arena.referee"):
        _settle(watch)
    assert watch._lobby.members == {"ann": "ann", "bob": "ann"}
    assert "[members] changed: ann (ann, bob)" in caplog.text
    # two members left of three bots: said, as no table of three can start
    assert "lists bots of 2 member(s): no match starts until there are 3" in caplog.text
    assert sorted(referee.active_bots()) == ["ann", "bob", "cid"]


def _tokens_text(names: dict[str, str]) -> str:
    return "[bots]\n" + "".join(f'{n} = "{t}"\n' for n, t in names.items())
