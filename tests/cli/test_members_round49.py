"""`arena serve`'s ``[members]`` (round 49): the bots of one person are never seated at one
table (one person would see two hands of it). The tokens file had no notion of whose a
bot is, and the lobby drew any idle bots: half the tables of a club with a member of two
bots among four bots seated both."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli.serve import read_tokens_file, tables_possible
from arena.referee import Lobby, Referee
from engine import load_ruleset

TOKENS = """\
[bots]
alice-v1 = "alice-token-1"
alice-v2 = "alice-token-2"
bob = "bob-token-1"
cid = "cid-token-1"

[members]
alice = ["alice-v1", "alice-v2"]
"""


def test_the_members_table_is_read_and_a_bot_of_none_is_its_own(tmp_path: Path) -> None:
    path = tmp_path / "bots.toml"
    path.write_text(TOKENS)
    tokens, members = read_tokens_file(path)
    assert len(tokens) == 4 and members == {"alice-v1": "alice", "alice-v2": "alice"}
    assert tables_possible(tokens, members) == 3
    # a member named as a bot of no member is not that bot
    assert tables_possible({"bob": "x1-token", "b2": "x2-token"}, {"b2": "bob"}) == 2


def test_a_draw_never_seats_two_bots_of_one_member() -> None:
    lobby = Lobby(Referee(), load_ruleset("classic"), seed=49,
                  members={"alice-v1": "alice", "alice-v2": "alice"})  # fmt: skip
    idle = ["alice-v1", "alice-v2", "bob", "cid"]
    tables = {frozenset(lobby._draw(idle, 3)) for _ in range(60)}
    assert tables == {frozenset({a, "bob", "cid"}) for a in ("alice-v1", "alice-v2")}
    assert lobby._members_among(idle) == 3 and lobby._members_among(idle[:2]) == 1
    # without members, the draw of earlier runs (a --seed deals as before)
    plain, old = (
        Lobby(Referee(), load_ruleset("classic"), seed=49),
        Lobby(Referee(), load_ruleset("classic"), seed=49),
    )
    assert [plain._draw(idle, 3) for _ in range(5)] == [old._rng.sample(idle, 3) for _ in range(5)]


def _serve(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bots.toml"
    path.write_text(text)
    path.chmod(0o600)
    r = CliRunner().invoke(main, ["serve", "--tokens", str(path), "--port", "0",
                                  "--record-dir", str(tmp_path / "rec")])  # fmt: skip
    assert r.exit_code == 2, r.output
    return r.output


@pytest.mark.parametrize(
    ("members", "said"),
    [
        ('alice = ["alice-v1", "alise-v2"]', "members.alice: 'alise-v2' is no bot of [bots]"),
        ('alice = ["alice-v1"]\nbob2 = ["alice-v1"]', "alice-v1 is a bot of members.alice too"),
        ('alice = "alice-v1"', 'members.alice: expected a list of its bots ["bot", ...]'),
        ("alice = []", 'members.alice: expected a list of its bots ["bot", ...]'),
        ('"a b" = ["bob"]', 'members."a b"'),
        ('alice = ["alice-v1", "alice-v2"]\ncrew = ["bob", "cid"]', "bots of 2 member(s)"),
    ],
)
def test_bad_members_are_refused_at_the_start(tmp_path: Path, members: str, said: str) -> None:
    text = TOKENS.replace('alice = ["alice-v1", "alice-v2"]\n', members + "\n")
    out = _serve(tmp_path, text)
    assert said in out, out


def test_a_misspelt_members_table_is_named(tmp_path: Path) -> None:
    out = _serve(tmp_path, TOKENS.replace("[members]", "[member]"))
    assert "member: unknown key (did you mean 'members'?)" in out, out
