"""Round 33 of the organiser's audit: a walkthrough of docs/tournament.md and
docs/referee.md with house rules, one's own bot (file, module and command), a remote bot
over TLS, `--set`, Ctrl-C and resume, a changed config and the results."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.storage import Storage
from arena.tournament.config import ConfigError, identity_changes, load_config


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "chg"\nid = "fixed"\nseed = 5\nmax_deals = 1\n'
        'bots = ["random", "heuristic", "counting"]\n' + extra
    )
    return path


def test_a_changed_referee_key_the_first_run_left_unset_names_its_default(
    tmp_path: Path,
) -> None:
    """Defect: a config run again with `[referee] max_strikes = 2` (the first run had no
    `[referee]`) was refused, or said to start a new tournament, naming the change as
    `referee.max_strikes null → 2`: JSON's null, which no config holds and which hides that
    the first run played with the referee's default of 3 strikes (docs/tournament.md's
    table). Now `referee.max_strikes unset (3) → 2`, and the grace likewise."""
    path = _config(tmp_path)
    before = load_config(path).to_json()
    after = load_config(path, ["referee.max_strikes=2", "referee.reconnect_grace_s=1.5"]).identity()
    assert identity_changes(before, after) == [
        "referee.max_strikes unset (3) → 2",
        "referee.reconnect_grace_s unset (5.0) → 1.5",
    ]
    # and back: the stored one set it, the new one leaves it to the default
    assert identity_changes(after, before) == [
        "referee.max_strikes 2 → unset (3)",
        "referee.reconnect_grace_s 1.5 → unset (5.0)",
    ]
    # (a change between two set values is as before)
    three = load_config(path, ["referee.max_strikes=3"]).identity()
    assert identity_changes(after, three)[0] == "referee.max_strikes 2 → 3"


def test_a_changed_draw_probability_is_named_by_its_key_in_the_config(
    tmp_path: Path,
) -> None:
    """Defect: a changed `[ratings] draw_probability` was named `draw_probability 0.02 →
    0.1`, a key the config does not have at its top (there it is refused as unknown); now
    `ratings.draw_probability 0.02 → 0.1`, the key the organiser set."""
    path = _config(tmp_path)
    before = load_config(path).to_json()
    after = load_config(path, ["ratings.draw_probability=0.1"]).identity()
    assert identity_changes(before, after) == ["ratings.draw_probability 0.02 → 0.1"]


def test_a_module_bot_not_found_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: a config beside its package (`mine = "mypkg.mybot:Lowest"`, `mypkg/` next to
    the config file) run from another directory stopped with the bot's "no module
    'mypkg.mybot' and no bundled bot of that name": a bot file is looked up beside the
    config, a module is not, and nothing said where it had been looked for. Now the
    directory it was looked in is named (a tournament bot's `cwd`, else the arena's)."""
    from sdk.loader import BotLoadError, load_bot

    beside = tmp_path / "cfg" / "zzq_round33_pkg"
    beside.mkdir(parents=True)
    (beside / "__init__.py").write_text("")
    (beside / "mybot.py").write_text("from sdk import Bot\n\nclass Lowest(Bot):\n    pass\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(BotLoadError) as e:
        load_bot("zzq_round33_pkg.mybot:Lowest")
    assert str(e.value).startswith("no module 'zzq_round33_pkg.mybot' and no bundled bot")
    assert f"looked for in the current directory, {elsewhere}, and on PYTHONPATH" in str(e.value)


def test_a_bot_name_holding_a_dot_set_unquoted_says_how_to_quote_it(tmp_path: Path) -> None:
    """Defect: `--set 'bots.v1.2.env.X="1"'` for the bot "v1.2" (docs/tournament.md: "a
    part holding a dot quoted as in TOML") was refused as `bots.v1.2: unknown key; known
    keys: bot, command, ...`: the override had made a new bot `v1` with a key "2", and the
    message said nothing of the quoting. Now it names the key it found no table for and
    gives the override quoted, to paste."""
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "dots"\n[bots]\n"v1.2" = { bot = "random" }\nh = "heuristic"\nr = "random"\n'
    )
    with pytest.raises(ConfigError) as e:
        load_config(path, ['bots.v1.2.env.X="1"'])
    assert str(e.value) == (
        f"{path}: bots.v1.2.env.X: no key 'bots.v1' to set inside; a part holding a dot "
        """is quoted as in TOML: --set 'bots."v1.2".env.X="1"'"""
    )
    # the quoted one sets it; a new bot without a dot is still made by --set
    assert dict(load_config(path, ['bots."v1.2".env.X="1"']).bots[0].env) == {"X": "1"}
    assert load_config(path, ['bots.v2="random"']).bot_names[-1] == "v2"


def test_the_leaderboard_of_a_changed_config_says_what_changed(tmp_path: Path) -> None:
    """Defect: `arena leaderboard --config mine.toml` after the bot file `mybot.py` was
    edited (or `max_deals` raised) said "mine-... is not stored (the config changed since
    it ran)": the config file had not changed, and nothing said what had. Now it names the
    changes as `arena tournament` does: `changed since mine-... ran: bot mine's code`."""
    (tmp_path / "mybot.py").write_text("from sdk import Bot\n\nclass Lowest(Bot):\n    pass\n")
    path = tmp_path / "mine.toml"
    path.write_text(
        f'name = "mine"\nseed = 1\nmax_deals = 2\ndb = "{tmp_path / "mine.sqlite"}"\n'
        '[bots]\nrandom = "random"\nheuristic = "heuristic"\nmine = "mybot.py:Lowest"\n'
    )
    cfg = load_config(path)
    with Storage(cfg.db) as st:
        st.ensure_tournament(
            cfg.tournament_id,
            name=cfg.name,
            fingerprint=cfg.fingerprint,
            total_matches=6,
            config=cfg.to_json(),
            bots=[(b.name, b.bot or "") for b in cfg.bots],
        )
    (tmp_path / "mybot.py").write_text(
        "from sdk import Bot\n\nclass Lowest(Bot):\n    name = 'v2'\n"
    )
    path.write_text(path.read_text().replace("max_deals = 2", "max_deals = 3"))
    r = CliRunner().invoke(main, ["leaderboard", "--config", str(path), "--format", "csv"])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    new_id = load_config(path).tournament_id
    assert (
        f"{new_id} is not stored (changed since {cfg.tournament_id} ran: bot mine's code; "
        f"max_deals 2 → 3): showing {cfg.tournament_id}, the latest named mine"
    ) in said


def test_a_bots_changed_env_or_cwd_is_named_as_such(tmp_path: Path) -> None:
    """Defect: a config run again with an `env` added to one bot (docs/tournament.md: the
    id counts `cwd` and `env`) was refused, or said to start a new tournament, naming the
    change `bot r's launch`, as for another command: an organiser looked for a changed
    command line that was not there. Now the part is named (`env`, `cwd`, `code`), and
    `launch` only for how it is launched (its bundled name, spec or command)."""
    (tmp_path / "sub").mkdir()
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "e"\nseed = 1\n[bots]\nrandom = "random"\nheuristic = "heuristic"\n'
        'counting = "counting"\n'
    )
    before = load_config(path).to_json()

    def changes(*overrides: str) -> list[str]:
        return identity_changes(before, load_config(path, list(overrides)).identity())

    assert changes('bots.random={bot = "random", env.A = "1"}') == ["bot random's env"]
    assert changes('bots.random={bot = "random", cwd = "sub", env.A = "1"}') == [
        "bot random's cwd and env"
    ]
    # (a bundled bot's code is its own modules since round 51: another bot's is other code)
    assert changes('bots.random="heuristic"') == ["bot random's launch and code"]


def test_a_tournament_without_a_deal_cap_on_the_barrel_is_noted_at_the_start(
    tmp_path: Path,
) -> None:
    """Defect: `arena tournament --max-deals 0` on `classic` said only "no deal cap" in its
    first line, while `arena serve` notes at once that bots that never make a contract of
    120 play for ever on the barrel (docs/referee.md); random bots played deal 89 of one
    match within 3 seconds here, and the tournament would never have ended. Now the same
    note, unless `match_timeout_s` bounds the matches; none for 1001 (no barrel)."""
    import io

    from rich.console import Console

    from arena.cli.tournament import _announce

    path = tmp_path / "t.toml"
    path.write_text('name = "n"\nseed = 1\nbots = ["random", "heuristic", "counting"]\n')

    def said(*overrides: str) -> str:
        out = io.StringIO()
        _announce(load_config(path, list(overrides)), Console(file=out, width=300))
        return out.getvalue()

    note = "note: matches of classic have no deal cap: bots that never make a contract of 120"
    assert note in said("max_deals=0")
    assert "note:" not in said("max_deals=0", "match_timeout_s=60")
    assert "note:" not in said("max_deals=5")
    # (round 40: 1001 has no barrel, but a concession there scores nobody else, and random
    # bots played 20,000 deals of one match without an end: it has its note too)
    assert "concede or fail their contracts can play for ever" in said(
        "max_deals=0", "ruleset=1001"
    )


def test_running_a_finished_tournaments_command_again_plays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(What docs/tournament.md now says, checked:) the command of a finished tournament
    run again resumes it with every match stored: it starts no bot (their logs get no new
    "starting" line), plays nothing, and writes the leaderboard again, exit 0."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.toml").write_text(
        'name = "again"\nseed = 1\nmax_deals = 1\nbots = ["random", "heuristic", "counting"]\n'
    )
    first = CliRunner().invoke(main, ["tournament", "--config", "t.toml", "--no-progress"])
    assert first.exit_code == 0, first.output
    board = tmp_path / "out" / "again" / "leaderboard.json"
    board.unlink()
    again = CliRunner().invoke(main, ["tournament", "--config", "t.toml", "--no-progress"])
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "0 matches played" in said and "6 were already stored (resumed)" in said
    assert board.is_file()
    log = (tmp_path / "out" / "again" / "logs" / "random.log").read_text()
    assert log.count("starting random") == 1
