"""Round 37: the docs read as a new user reads them, every command pasted: a bot author on
another machine (README.md, docs/writing-a-bot.md: a bot in a few lines, ``arena-bot try``
against the bundled bots, ``arena-bot run`` with a token against ``arena serve``, a
tournament of one's own) and an organiser (``make tournament``'s config, the leaderboard on
screen and in files, ``arena replay`` and ``--list``, ``arena serve --db``, ``arena web``
and its API, remote bots, TLS, house rules with ``arena rules``).

Found and fixed (docs): ``arena-bot try``'s defaults were in ``--help`` only: no doc said
that without options it plays 20 matches against ``random,heuristic`` on ``classic`` from
seed 0, nor that it caps each match at 1000 deals (a bot that never bids keeps a match on
the barrel for ever) and says so under the table. ``arena-bot human``, a command of its
own, was named only as taking ``--decision-ms``: not what it is (``try human`` against two
heuristic bots, one match, no deal cap) nor its other options. tournament.md's config
example was ``tournaments/default.toml`` without ``bot_wait_s`` and with ``pimc`` in one
process, while the text around it says ``make tournament`` gives it 3 workers.
record-format.md quoted ``not a match record: ...`` as ``arena replay``'s words for bad JSON
too; it says ``not a readable match record: ...`` there, and ``a match record is a JSON
object`` for JSON that is no object. protocol.md did not say how to run
docs/examples/raw_bot.py. The guide said ``mypy --strict mybot.py`` checks a bot and then
showed an untyped ``mybot.py``, which ``--strict`` refuses as a whole. architecture.md's
record example had seat 2 bid first under dealer 1 in ``classic`` (seat 0 speaks first
there) and a seat that never bid score the 105. web.md gave no exit code for an ``arena
web`` that cannot start (2, or 1 for an unreadable database or a busy address), and
record-format.md none for ``arena replay`` on a database it cannot read (2, where
``arena leaderboard`` says 1); referee.md none for ``arena serve`` on a busy port (1).

Pasted and found right (not pinned again here: earlier rounds pin most): the guide's
``mybot.py`` and its ``try`` table, the typed bot under ``mypy --strict``, the rehearsal
with ``tokens.toml`` and three ``arena-bot run --once`` (with ``--port 0``), ``run``'s
refusals (no token, an IPv6 address without brackets, a bad ``ARENA_ADDRESS``, a token
with a space: exit 2; ``--retry-for`` against no arena: exit 1), the tournament of
``mine.toml`` and ``arena leaderboard --config`` after an edit (``changed since ...``),
``arena replay --list`` (``--db``, ``--tournament``, ``--bot``, the ``cut -d' ' -f1``
pipe), ``arena replay --check`` on a record of ``try --records`` and a ``.jsonl`` of
``arena serve``, the default tournament (24 matches, exit 0, the four files), ``arena
leaderboard --format all --out``, ``--out x.md``, a directory ``--out``, an unknown
tournament (exit 2), ``arena serve --db`` with ``leaderboard``, ``--list`` (``2/–``) and
its ``standings:`` line at SIGTERM, ``tournaments/remote.toml`` with a friend's bot,
the ``openssl`` certificate with ``--ca`` (and ``127.0.0.1`` failing its handshake, exit
2), ``python -m arena.web.demo`` with ``arena web --port 0`` and the API's endpoints,
``arena-bot try human`` from a pipe, ``arena rules`` (``--json``, ``--players``, a
misspelt option, a bad value, a key set twice), the config errors tournament.md quotes,
``arena.bench.referee one``, ``arena.bench.breakdown`` and ``arena.bench.strength`` at small
sizes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tests.docs.test_docs_round35 import DOCS, ROOT, _joined, _text


def _rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("│")]


def _without_times(output: str) -> list[str]:
    """The table's rows and title, not the timing line under it."""
    return [line for line in output.splitlines() if not line.startswith("slowest decision")]


def test_try_without_options_plays_what_the_guide_says_its_defaults_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect (docs): no doc said what `arena-bot try BOT` plays without options (its
    `--help` alone did). The guide's list of them, given explicitly, plays exactly the
    series the bare command plays."""
    from sdk import cli

    guide = _joined(_text("writing-a-bot.md"))
    m = re.search(r"Options \(without them: `([^`]+)`\)", guide)
    assert m, "writing-a-bot.md names try's defaults"
    defaults = m.group(1).split()
    assert defaults[0::2] == ["--vs", "-n", "--ruleset", "--seed"]
    assert defaults[3] == "20"  # what the title below counts
    monkeypatch.chdir(ROOT)
    bare = CliRunner().invoke(cli.main, ["try", "random", "--max-deals", "1"])
    given = CliRunner().invoke(cli.main, ["try", "random", "--max-deals", "1", *defaults])
    assert bare.exit_code == given.exit_code == 0, bare.output + given.output
    assert _without_times(bare.output) == _without_times(given.output)
    assert f"{defaults[3]} matches, ruleset {defaults[5]}, seed {defaults[7]}" in bare.output
    assert len(_rows(bare.output)) == 1 + len(defaults[1].split(","))


def test_try_caps_a_match_where_the_guide_says_and_says_so_as_quoted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Defect (docs): `try` caps each match at 1000 deals unless told otherwise and prints a
    note under the table; the guide said `--max-deals N` caps each match, nothing of the
    default cap or its line. The line quoted, its numbers put for a cap of 1 deal."""
    from sdk import cli

    guide = _joined(_text("writing-a-bot.md"))
    m = re.search(r"`--max-deals N` \(cap each match; default (\d+) deals", guide)
    assert m and int(m.group(1)) == cli.TRY_MAX_DEALS
    quoted = re.search(r'"(note: 1 of 20 matches reached the cap of \d+ deals [^"]+)"', guide)
    assert quoted
    expected = quoted.group(1).replace("1 of 20 matches", "3 of 3 matches")
    expected = expected.replace(f"cap of {cli.TRY_MAX_DEALS} deals", "cap of 1 deal")
    monkeypatch.setattr(cli, "TRY_MAX_DEALS", 1)
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(cli.main, ["try", "random", "-n", "3"])
    assert r.exit_code == 0, r.output
    assert expected in _joined(r.output)


def test_arena_bot_human_is_what_web_md_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Defect (docs): `arena-bot human` was named as taking `--decision-ms` and
    `--time-bank-ms`, no more: not that it is `try human` with other defaults, nor its
    other options. web.md's line gives its equivalent; each option is named beside it."""
    from sdk import cli

    web = _text("web.md")
    m = re.search(r"^arena-bot human +# = arena-bot try human (.+)$", web, re.M)
    assert m
    given = m.group(1).split()
    cmd = cli.main.get_command(click.Context(cli.main), "human")
    assert cmd is not None
    values = cmd.make_context("human", []).params  # what it plays given no option
    options = [p for p in cmd.params if p.opts[0].startswith("-") and p.opts != ["--help"]]
    defaults = {p.opts[0]: values[p.name] for p in options if p.name}
    assert dict(zip(given[0::2], given[1::2], strict=True)) == {
        "--vs": ",".join(defaults["--vs"]),  # (repeatable since round 52: a tuple)
        "-n": str(defaults["-n"]),
    }
    paragraph = _joined(web[web.index("`arena-bot human` is `arena-bot try human`") :])
    paragraph = paragraph[: paragraph.index(" as `try` does.")]
    for opt in defaults:
        assert f"`{opt}`" in paragraph, opt
    assert defaults["--max-deals"] is None and "with no deal cap" in paragraph
    assert f"`--ruleset`), dealt from `--seed {defaults['--seed']}`" in paragraph
    assert f"on `{defaults['--ruleset']}`" in paragraph


def test_try_human_has_no_deal_cap_as_web_md_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned: "try caps a bot's matches at 1000 deals, never a person's": with the default
    cap made 1 deal, a person who answers `1` to every question plays past it (and leaves
    with `quit`: exit code 1); given `--max-deals 1`, the match ends there (exit 0)."""
    from sdk import cli

    monkeypatch.setattr(cli, "TRY_MAX_DEALS", 1)
    monkeypatch.setenv("NO_COLOR", "1")
    answers = "1\n" * 60 + "quit\n"
    uncapped = CliRunner().invoke(cli.main, ["human", "--seed", "3"], input=answers)
    assert uncapped.exit_code == 1, uncapped.output
    assert "Deal 2" in uncapped.output or "deal 2" in uncapped.output, uncapped.output[-2000:]
    capped = CliRunner().invoke(
        cli.main, ["human", "--seed", "3", "--max-deals", "1"], input=answers
    )
    assert capped.exit_code == 0, capped.output[-2000:]
    assert "the cap of 1 deal was reached" in capped.output


def test_the_config_example_of_tournament_md_is_default_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (docs): the example under "The config file" read as `make tournament`'s
    config but lacked its `bot_wait_s` and gave `pimc` no workers (the text above it says
    the config gives it 3). It now says it is tournaments/default.toml; it loads the same."""
    from arena.tournament.config import load_config

    doc = _text("tournament.md")
    intro = "`tournaments/default.toml`, what `make tournament` runs (without its comments):"
    after = doc[doc.index(intro) :]
    block = re.search(r"```toml\n(.*?)```", after, re.S)
    assert block
    (tmp_path / "example.toml").write_text(block.group(1), encoding="utf-8")
    monkeypatch.chdir(ROOT)
    shipped = load_config(ROOT / "tournaments" / "default.toml")
    example = load_config(tmp_path / "example.toml")
    assert dataclasses.replace(example, source=shipped.source) == shipped
    assert example.tournament_id == shipped.tournament_id


@pytest.mark.parametrize(
    ("content", "quoted"),
    [
        ("{", "not a readable match record: "),
        ("[1]", "a match record is a JSON object"),
        ('{"players": 3}', "not a match record: "),
    ],
)
def test_replay_says_what_record_format_md_quotes_for_a_file_that_is_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, quoted: str
) -> None:
    """Defect (docs): record-format.md gave `not a match record: ...` for bad JSON and a
    wrong shape alike; bad JSON is `not a readable match record: ...`, and JSON that is no
    object `a match record is a JSON object`. Each exit 2, for `--check` and without."""
    from arena.cli import main

    doc = _joined(_text("record-format.md"))
    assert f"`{quoted.strip()}" in doc
    (tmp_path / "r.json").write_text(content, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for args in (["replay", "--check", "r.json"], ["replay", "r.json"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert f"r.json: {quoted}" in r.output
    missing = CliRunner().invoke(main, ["replay", "--check", "nofile.json", "--db", "x.sqlite"])
    assert missing.exit_code == 2
    assert "nofile.json: no such file" in missing.output
    assert "`no such file, and no stored match with this id in runs/x.sqlite`" in doc


def test_the_guides_rehearsal_starts_a_bot_for_every_token_of_its_file(tmp_path: Path) -> None:
    """Pinned: the rehearsal's `printf ... > tokens.toml` is a tokens file `arena serve`
    reads (its short tokens a `note:`, not a refusal), and the `ARENA_TOKEN=...` of its
    three `arena-bot run` lines are its three tokens, one each: the match can start."""
    from arena.cli.serve import load_tokens

    guide = _text("writing-a-bot.md")
    m = re.search(r"^printf '(\[bots\][^']*)' > tokens\.toml$", guide, re.M)
    assert m
    path = tmp_path / "tokens.toml"
    path.write_text(m.group(1).replace("\\n", "\n"), encoding="utf-8")
    tokens = load_tokens(path)
    block = guide[m.end() : guide.index("```", m.end())]
    assert "arena serve --tokens tokens.toml" in block
    used = re.findall(r"^ARENA_TOKEN=(\S+) arena-bot run ", block, re.M)
    assert sorted(used) == sorted(tokens.values()) and len(set(used)) == 3


def test_protocol_md_says_how_to_run_raw_bot_as_its_docstring_does() -> None:
    """Defect (docs): protocol.md called docs/examples/raw_bot.py a complete bot but said
    not how to start it (its docstring alone did). The command it gives is the file's own,
    and each option it names is one the file parses."""
    import ast

    source = (DOCS / "examples" / "raw_bot.py").read_text(encoding="utf-8")
    doc = _joined(_text("protocol.md"))
    m = re.search(r"run in a checkout as `([^`]+)` \(`(--\w+) N`", doc)
    assert m
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring and m.group(1) in _joined(docstring)
    parsed = set(re.findall(r'add_argument\("(--[\w-]+)"', source))
    named = set(re.findall(r"--[\w-]+", m.group(1))) | {m.group(2)}
    assert named <= parsed


def test_mypy_says_of_the_guides_two_bots_what_the_guide_says(tmp_path: Path) -> None:
    """Defect (docs): the guide says `mypy --strict mybot.py` checks a bot, then shows an
    untyped `mybot.py` first: pasted, `--strict` refuses it for want of hints, which the
    guide did not say. Now it says what mypy answers for the untyped bot, the hinted one
    (`a.card` of a `Bid`) and the typed one (nothing), and mypy (run in the checkout, as
    the guide says, on files beside each other) answers that."""
    import subprocess
    import sys

    guide = _text("writing-a-bot.md")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    untyped = next(b for b in blocks if "class Lowest(Bot):" in b and "def play(self, view):" in b)
    typed = next(b for b in blocks if "isinstance(a, Play)" in b)
    hinted = untyped.replace("from sdk import Bot", "from sdk import Action, Bot, PlayerView")
    hinted = hinted.replace("def play(self, view):", "def play(self, view: PlayerView) -> Action:")
    assert hinted != untyped
    for name, text in (("untyped", untyped), ("hinted", hinted), ("typed", typed)):
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    files = [str(tmp_path / f"{n}.py") for n in ("untyped", "hinted", "typed")]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *files],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    said = {n: [line for line in done.stdout.splitlines() if f"/{n}.py:" in line] for n in
            ("untyped", "hinted", "typed")}  # fmt: skip
    joined = _joined(guide)
    assert '("Function is missing a type annotation";' in joined
    assert any("Function is missing a type annotation" in line for line in said["untyped"])
    assert '(\'Item "Bid" of ... has no attribute "card"\')' in joined
    assert any('Item "Bid" of' in line and 'has no attribute "card"' in line
               for line in said["hinted"])  # fmt: skip
    assert "`mypy --strict` passes this one" in joined
    assert said["typed"] == [], done.stdout


@pytest.mark.parametrize("doc", ["architecture.md", "record-format.md"])
def test_the_auction_of_a_docs_record_example_is_in_the_order_the_rules_ask(doc: str) -> None:
    """Defect (docs): architecture.md's record example had seat 2 bid first and seat 0 pass
    under dealer 1 in `classic`, where seat 2 is first hand (its 100 is obligatory, not
    spoken) and seat 0 speaks first; and seat 1, who never bid, scored the 105. Each
    example's spoken bids and passes are replayed by the engine from its dealer."""
    from engine import Game, observe, parse_action

    text = _text(doc)
    m = re.search(r"```json\n(\{\s*\"format\": \"thousand-arena/record/1\",.*?)```", text, re.S)
    assert m
    example = m.group(1)
    dealer = int(re.search(r'"dealer": (\d+)', example).group(1))  # type: ignore[union-attr]
    assert '"name": "classic"' in example
    spoken = re.findall(r'\{"seat": (\d+), "action": "(bid \d+|pass)"\}', example)
    assert len(spoken) >= 2
    game = Game.new("classic", seed=1, players=["a", "b", "c"], dealer=dealer)
    declarer = None
    for seat, action in spoken:
        assert int(seat) == game.to_act, (doc, seat, action)
        act = parse_action(action)
        assert act in observe(game, int(seat)).legal_actions
        game.apply(act, seat=int(seat))
        declarer = int(seat) if action.startswith("bid") else declarer
    deltas = json.loads(re.search(r'"deltas": (\[[^]]*\])', example).group(1))  # type: ignore[union-attr]
    bid = int(next(a for s, a in spoken if int(s) == declarer).split()[1])
    assert declarer is not None and deltas[declarer] >= bid  # the bidder made it


def test_arena_web_refuses_to_start_with_the_exit_codes_web_md_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (docs): web.md gave `arena web`'s exit code when stopped (0) and none when it
    cannot start: 2 for what the command line named wrong, 1 for a database it cannot read
    or an address it cannot listen on (the `arena leaderboard` rule). Each case, as run."""
    import socket
    import sqlite3

    from arena.cli import main
    from arena.web.demo import make_demo_db

    doc = _joined(_text("web.md"))
    assert "It does not start, naming why, with exit code 2" in doc
    assert "`cannot listen on 127.0.0.1:8000: ... Address already in use`" in doc
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with sqlite3.connect(tmp_path / "other.sqlite") as con:
        con.execute("CREATE TABLE t (x)")
    make_demo_db(str(tmp_path / "demo.sqlite"), matches=1, max_deals=1)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        port = str(busy.getsockname()[1])
        cases = [
            (["web"], 2, "no database found in runs/"),
            (["web", "--db", "nosuch.sqlite"], 2, "no database at nosuch.sqlite"),
            (["web", "--db", "demo.sqlite", "--tournament", "nope"], 2, "nope"),
            (["web", "--db", "demo.sqlite", "--host", "a:b"], 2, "'a:b'"),
            (["web", "--db", "empty.sqlite"], 1, "empty.sqlite is an empty database"),
            (["web", "--db", "other.sqlite"], 2, "not a Thousand Arena database"),  # (52: 1)
            (
                ["web", "--db", "demo.sqlite", "--port", port],
                1,
                f"cannot listen on 127.0.0.1:{port}",
            ),
        ]
        for args, code, said in cases:
            r = CliRunner().invoke(main, args)
            assert (r.exit_code, said in r.output) == (code, True), (args, r.output)
    finally:
        busy.close()


def test_replay_names_a_database_it_cannot_read_with_exit_2_as_record_format_md_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect (docs): record-format.md gave `arena replay --list`'s exit codes for an
    unknown tournament or bot, not for a database it cannot read, which `arena replay`
    names with exit 2 where `arena leaderboard` exits 1. Each case, `--list` and a match id."""
    import sqlite3

    from arena.cli import main

    doc = _joined(_text("record-format.md"))
    # (round 54: `--list` exits as `arena leaderboard` does, 1 for a database that cannot be
    # read; a match id keeps 2, its 1 being a record the rules refuse)
    assert "with the exit codes of `arena leaderboard` and `arena web`" in doc
    assert "For a match id (`arena replay MATCH_ID`, `--check`) every one of these is exit 2" in doc
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.sqlite").write_bytes(b"")
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all\n" * 10)
    with sqlite3.connect(tmp_path / "other.sqlite") as con:
        con.execute("CREATE TABLE t (x)")
    for db in ("nosuch.sqlite", "empty.sqlite", "junk.sqlite", "other.sqlite"):
        unreadable = db in ("empty.sqlite", "junk.sqlite")
        for args, code in ((["replay", "--list", "--db", db], 1 if unreadable else 2),
                           (["replay", "m00001", "--db", db], 2)):  # fmt: skip
            r = CliRunner().invoke(main, args)
            assert r.exit_code == code and db in r.output, (args, r.output)
        if db != "nosuch.sqlite":
            board = CliRunner().invoke(main, ["leaderboard", "--db", db])
            # (another program's database is named wrong, exit 2 as here: 1 before round 52)
            assert board.exit_code == (2 if db == "other.sqlite" else 1), board.output
    assert CliRunner().invoke(main, ["replay", "--list"]).exit_code == 2  # none in runs/


def test_arena_serve_on_a_busy_port_exits_1_as_referee_md_says(tmp_path: Path) -> None:
    """Defect (docs): referee.md said a busy port is refused ("cannot listen on ...") but
    not with which exit code (1: a bad option or tokens file is 2). Run as a process (the
    command raises its open-files limit, which a test process should keep)."""
    import os
    import socket
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    doc = _joined(_text("referee.md"))
    assert '("cannot listen on ...", exit code 1, before anything starts;' in doc
    tokens = tmp_path / "bots.toml"
    tokens.write_text('[bots]\na = "token-aaaa"\nb = "token-bbbb"\nc = "token-cccc"\n')
    code = "import sys; from arena.cli import main; sys.argv[0] = 'arena'; sys.exit(main())"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        done = subprocess.run(
            [sys.executable, "-c", code, "serve", "--tokens", str(tokens), "--port", port],
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
            env=env,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    tokens.write_text('[bots]\na = "token-aaaa"\n')
    short = subprocess.run(
        [sys.executable, "-c", code, "serve", "--tokens", str(tokens), "--port", "0"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env=env,
    )  # fmt: skip
    assert short.returncode == 2, short.stderr
