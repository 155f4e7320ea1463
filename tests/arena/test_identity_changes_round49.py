"""Round 49: ``identity_changes`` says a bot renamed only when something but its name shows
it is the same bot.

A bot added as one removed was, name apart (the same launch and code), is said renamed
(the 47th session). A remote bot's identity is its name and kind alone (its token is never
stored): every two remote bots are alike but for their names, so a club whose member alice
left and carol joined was told "bot alice renamed carol", and with two such changes paired
them at random, where "bots added: carol; bots removed: alice" is what happened.
"""

from __future__ import annotations

from arena.tournament.config import identity_changes


def _remote(name: str) -> dict[str, object]:
    return {"name": name, "kind": "remote", "bot": None, "command": []}


def _sdk(name: str, code: str) -> dict[str, object]:
    return {"name": name, "kind": "sdk", "bot": "mine.py", "command": [], "code": code}


def test_remote_bots_that_came_and_went_are_not_said_renamed() -> None:
    old = {"bots": [_remote("alice"), _remote("bob"), _sdk("ref", "1")]}
    new = {"bots": [_remote("carol"), _remote("dave"), _sdk("ref", "1")]}
    assert identity_changes(old, new) == ["bots added: carol, dave", "bots removed: alice, bob"]


def test_a_local_bot_of_the_same_launch_and_code_is_said_renamed() -> None:
    old = {"bots": [_remote("alice"), _sdk("carol", "1"), _sdk("x", "2")]}
    new = {"bots": [_remote("alice"), _sdk("caroline", "1"), _sdk("x", "2")]}
    assert identity_changes(old, new) == ["bot carol renamed caroline"]
    # Another code is another bot.
    new = {"bots": [_remote("alice"), _sdk("caroline", "9"), _sdk("x", "2")]}
    assert identity_changes(old, new) == ["bots added: caroline", "bots removed: carol"]
