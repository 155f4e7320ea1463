"""Adversarial review of round 54 (review54b): the branches of round 54's code that a hand
mutant changed without any of round 54's tests failing.

Each test names the mutant it kills (``R``: ``arena replay --list --vs``; ``O``/``T``: the
one reading of a comma-separated option, ``comma_names``; ``W``/``J``: the web's paged
other incidents and bot.js; ``C``: ``arena leaderboard --out`` and the bots' logs; ``K``:
the runner's words for a SIGKILL it did not send). In-process (click's CliRunner, node over
a fake page, a shell as the bot), no server: fast.
"""

from __future__ import annotations

import asyncio
import logging
import types
from collections import Counter
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli.options import comma_names
from arena.referee import match as match_mod
from arena.storage import Storage, resolve_record
from arena.tournament import runner
from arena.tournament.config import ConfigError, bot_logs, load_config, parse_config
from arena.tournament.runner import TournamentError, _exit_words, _monitor, _restart
from arena.web import DataSource
from arena.web.data import _incident_page
from arena.web.demo import demo_record, make_demo_db
from sdk.cli import _comma_file
from tests.arena.test_ahead_round53 import _moves, _play, _requests, honest
from tests.arena.test_replay_list_round54 import _run as _replay
from tests.arena.test_replay_list_round54 import db  # noqa: F401 (the fixture: four)
from tests.faults.test_sigkill_words_round54 import HINT, _bot
from tests.web.test_incident_pages_round54 import FAKE_DOM_JS
from tests.web.test_web_round38 import _run_page_js

# --- arena replay --list --vs --------------------------------------------------------------


@pytest.mark.parametrize("vs", [["--vs", "c,c"], ["--vs", "c", "--vs", " c"]])
def test_r4_an_opponent_named_twice_is_said_once(db: Path, vs: list[str]) -> None:  # noqa: F811
    """R4 (``_opponents`` returning the names as given): the line over the list read
    "played by a against c, c", two opponents where one was meant."""
    shown = _replay("--list", "--db", str(db), "--tournament", "four", "--bot", "a", *vs)
    assert shown.exit_code == 0, shown.output
    assert "2 match(es) played by a against c (4 of 4 stored)" in shown.stderr, shown.stderr


def test_r10_an_opponent_no_stored_name_can_be_is_refused_by_name(db: Path) -> None:  # noqa: F811
    """R10 (the worst deal's guard of names SQLite cannot take reading ``--bot`` alone): an
    undecodable ``--vs`` (``$'\\xff'``: a lone surrogate in Python) reached the query,
    a traceback; it is a bot the tournament never seated, exit 2."""
    bad = _replay("--list", "--db", str(db), "--tournament", "four", "--bot", "a",
                  "--vs", "b,\udcff")  # fmt: skip
    assert bad.exit_code == 2, bad.output
    assert "--vs: no bot '\\udcff' in tournament four" in bad.stderr, bad.stderr


def test_r15_an_opponent_elsewhere_is_said_to_play_where_he_plays(db: Path) -> None:  # noqa: F811
    """R15 (the tournaments looked up for ``--bot`` given for a ``--vs``): e plays in
    "other" only; a plays there and in "four", which the error named as e's too."""
    with Storage(db) as st:
        st.ensure_tournament("other", name="other", fingerprint="o", total_matches=0,
                             config={}, bots=[("e", "demo"), ("a", "demo")])  # fmt: skip
    bad = _replay("--list", "--db", str(db), "--tournament", "four", "--bot", "a", "--vs", "e")
    assert bad.exit_code == 2, bad.output
    said = " ".join(bad.stderr.split())
    assert said.endswith("e plays in other (--tournament ID)"), said


# --- comma_names: one reading of --vs -------------------------------------------------------


def test_o3_o6_a_whole_value_is_judged_and_kept_stripped() -> None:
    """O3 (``whole`` asked of the value unstripped) and O6 (the whole value kept
    unstripped): ``--vs " my,bot.py "`` was split into "my" and "bot.py", or kept with
    its spaces (no such file), where the value stripped is one bot file."""
    whole = lambda v: v == "my,bot.py"  # noqa: E731
    assert comma_names((" my,bot.py ", "random"), "--vs", "opponent", whole) == [
        "my,bot.py", "random"
    ]  # fmt: skip
    with pytest.raises(click.BadParameter, match="an empty name in 'a,,b'"):
        comma_names(("a,", "b"), "--vs", "opponent")


def test_t2_a_file_of_no_python_name_holding_a_comma_is_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T2 (``_comma_file`` without its ``.py``): a file named "random,heuristic" beside
    the command made ``--vs random,heuristic`` one opponent, an unknown bot file."""
    monkeypatch.chdir(tmp_path)
    Path("random,heuristic").write_text("", encoding="utf-8")
    Path("my,bot.py").write_text("", encoding="utf-8")
    assert not _comma_file("random,heuristic")
    assert _comma_file("my,bot.py:Bot") and _comma_file("my,bot.py")


# --- arena web: the other incidents paged ---------------------------------------------------


def test_w6_a_page_starting_inside_a_match_at_index_1_takes_the_match_whole() -> None:
    """W6 (the start moved back to its match's first only past index 1): incidents of
    schedule indexes 5, 5, 7, two a page: the first page began at the second of match 5
    and the next page, below 5, was empty: the first incident was never shown."""
    listed = [{"idx": 5, "detail": "x"}, {"idx": 5, "detail": "y"}, {"idx": 7, "detail": "z"}]
    page = _incident_page(listed, 2, None, "other_incidents")
    assert [i["detail"] for i in page["other_incidents"]] == ["z", "y", "x"]
    assert page["other_incidents_next_before"] is None and page["other_incidents_total"] == 3


def test_w10_only_the_two_incident_lists_are_paged(tmp_path: Path) -> None:
    """W10 (another of the bot's lists taken as one of incidents): refused by name."""
    path = tmp_path / "demo.sqlite"
    make_demo_db(path, matches=2, max_deals=1)
    name = DataSource(path).tournaments()[0]["bots"][0]
    for which in ("deal_score_counts", "deal_scores_held_back"):
        with pytest.raises(ValueError, match=f"no list of incidents '{which}'"):
            DataSource(path).incidents(name, None, which, before=None)


#: bot.js's render over a fake page (tests/web/test_incident_pages_round54.py's), the API's
#: older page of other incidents saying there is one more page.
PAGE_JS = (
    FAKE_DOM_JS
    + """const byId = (n, id) => {
  if (n.attrs && n.attrs.id === id) return n;
  for (const c of n.children) { const f = byId(c, id); if (f) return f; }
  return null;
};
const asked = [];
api = async (path) => {
  asked.push(path);
  return { other_incidents: [{ match_id: "t-m5", idx: 5, deal: 0, kind: "bot_error", detail: "" }],
           other_incidents_next_before: 5, strikes_next_before: null };
};
const inc = (m, k) => ({ match_id: m, idx: 9, deal: 0, kind: k, detail: "" });
const base = { bot: "a", tournament: { id: "t", name: "t", bots: ["a", "b"] }, row: {},
  history: [], plays_in: [], matches: [], matches_total: 0, next_before: null,
  deal_score_counts: [[5, 1]], strikes: [], strikes_total: 0, strikes_next_before: null,
  strikes_not_listed: 0 };
const page = new Node("main");
document.getElementById = (id) => (id === "main" ? page : null);
render({ ...base, other_incidents: [inc("t-m9", "wrong_request")], other_incidents_total: 4,
  other_incidents_next_before: 9, other_incidents_not_listed: 0 });
const more = byId(page, "older-incidents");
(async () => {
  await clicks.get(more)();
  const after = [byId(page, "incidents-shown").textContent, more.hidden];
  await clicks.get(more)();
  // none listed, 3 not listed: the note alone, no count of a list
  render({ ...base, other_incidents: [], other_incidents_total: 0,
    other_incidents_next_before: null, other_incidents_not_listed: 3 });
  const empty = [byId(page, "incidents-shown") === null, byId(page, "other-not-listed") !== null];
  process.stdout.write(JSON.stringify({ after, asked, empty }));
})();
"""
)


def test_j3_j6_the_older_incidents_page_on_and_none_listed_shows_no_count() -> None:
    """J3 (the next page's ``before`` read as the strikes'): after one older page that has
    another after it, the button hid, the rest out of reach. J6 (the list and its
    count made of no incident): "newest first: 0 of 0 shown" under the note of the
    incidents not listed."""
    got = _run_page_js("bot.js", PAGE_JS)
    assert got["after"] == ["newest first: 2 of 4 shown", False]
    assert got["asked"] == [
        "/api/bots/a/other_incidents?tournament=t&limit=50&before=9",
        "/api/bots/a/other_incidents?tournament=t&limit=50&before=5",
    ]
    assert got["empty"] == [True, True]


# --- arena leaderboard --config X --out: a config whose out no run could use ---------------


@pytest.mark.parametrize("out", ["5", '""', '"  "'])
def test_c5_c6_a_config_whose_out_is_no_folder_writes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    """C5 (``bot_logs`` taking any ``out``) and C6 (its ConfigError not caught): a config
    whose ``out`` is no path wrote no log, so none is kept; ``arena leaderboard --config
    X --out FILE`` writes the file (only name, id and db are read of a config that does
    not load), where it ended in a traceback or a refusal of the config."""
    monkeypatch.chdir(tmp_path)
    make_demo_db(tmp_path / "runs" / "demo.sqlite", matches=2, max_deals=1)
    config = tmp_path / "demo.toml"
    config.write_text(f'name = "demo"\nout = {out}\n[bots]\nrandy = "random"\n', "utf-8")
    done = CliRunner().invoke(main, ["leaderboard", "--config", str(config), "--out", "b.txt"])
    assert done.exit_code == 0, done.output
    assert "randy" in Path("b.txt").read_text(encoding="utf-8")


# --- the runner's words for a SIGKILL ------------------------------------------------------


def test_k3_a_start_after_a_stop_that_killed_forgets_that_kill(tmp_path: Path) -> None:
    """K3 (``killed_here`` kept across a start): a bot the runner killed when stopping
    (it ignored SIGTERM), started again and then taken by the out-of-memory killer, was
    said to have exited with "code -9" alone."""
    flag = tmp_path / "second"
    p = _bot(tmp_path, f"if [ -e {flag} ]; then kill -9 $$; fi; trap '' TERM; echo up; "
                       f"touch {flag}.ready; sleep 30")  # fmt: skip

    async def scenario() -> int | None:
        await p.start()
        while not (tmp_path / "second.ready").exists():  # (the trap set)
            await asyncio.sleep(0.02)
        await p.stop(grace=0.2)
        assert p.killed_here
        flag.write_text("", encoding="utf-8")
        await p.start()
        assert p.proc is not None
        code = await p.proc.wait()
        await p.stop()
        return code

    assert asyncio.run(scenario()) == -9
    assert _exit_words(p, -9) == HINT


def test_k4_a_bot_that_leaves_at_the_sigterm_is_not_marked_killed(tmp_path: Path) -> None:
    """K4 (``killed_here`` set at the SIGTERM): only the SIGKILL the runner sends marks
    the start as killed by the runner."""
    p = _bot(tmp_path, "echo up; sleep 30")

    async def scenario() -> int | None:
        await p.start()
        await p.stop(grace=10)
        assert p.proc is not None
        return p.proc.returncode

    assert asyncio.run(scenario()) == -15
    assert not p.killed_here and _exit_words(p, -9) == HINT


def test_k7_a_bot_killed_after_its_last_match_says_so(tmp_path: Path) -> None:
    """K7 (the line of a bot that exited after its last match saying "code -9" alone)."""
    p = _bot(tmp_path, "echo up; kill -9 $$")

    async def scenario() -> None:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        stopping = asyncio.Event()
        watch = asyncio.create_task(_monitor({"b": p}, stopping, 3, Counter({"b": 0})))
        while not p.done:
            await asyncio.sleep(0.05)
        stopping.set()
        await watch

    asyncio.run(scenario())
    log = (tmp_path / "b.log").read_text(encoding="utf-8")
    assert f"exited with {HINT} after its last match: not restarted" in log, log


def test_k8_k9_a_bot_killed_before_connecting_says_so_in_the_error_and_its_log(
    tmp_path: Path,
) -> None:
    """K8, K9 (the tournament's error and the bot's log line, of a bot that died before
    connecting, saying "code -9" alone)."""
    p = _bot(tmp_path, "echo up; kill -9 $$")
    referee: Any = types.SimpleNamespace(
        wait_for_bots=lambda names, timeout: asyncio.sleep(timeout, names),
        welcomed_bots=lambda: [],
    )
    cfg: Any = types.SimpleNamespace(bot_names=["b"], bot_wait_s=60.0, bots=[])

    async def scenario() -> None:
        await p.start()
        await runner._wait_for_bots(cfg, referee, {"b": p}, 3)

    with pytest.raises(TournamentError) as e:
        asyncio.run(scenario())
    assert str(e.value).startswith(f"bot 'b' exited with {HINT} before connecting"), e.value
    log = (tmp_path / "b.log").read_text(encoding="utf-8")
    assert f"exited with {HINT} before connecting: the tournament stops" in log, log


def test_k10_a_bot_killed_whose_code_changed_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """K10 (the reason given of a bot not restarted for its changed code, "code -9" alone:
    the reason its forfeits quote)."""
    given: list[str] = []
    p = _bot(tmp_path, "echo up; kill -9 $$", on_given_up=lambda name, why: given.append(why))

    async def scenario() -> str | None:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        p.code_changed = lambda: [tmp_path / "bot.py"]  # type: ignore[method-assign]
        return await _restart(p, p.proc.returncode, 3)

    with caplog.at_level(logging.ERROR, logger="arena.tournament.runner"):
        assert (
            asyncio.run(scenario()) == f"its code changed since the run began ({tmp_path}/bot.py)"
        )
    assert given and given[0].startswith(f"its process exited with {HINT}, and its code changed")
    assert f"bot b exited with {HINT}, and its code changed" in caplog.text, caplog.text


# --- storage.named_match: resolve_record ----------------------------------------------------


def test_s3_an_id_that_is_the_suffix_of_another_loads_itself(tmp_path: Path) -> None:
    """S3 (``resolve_record`` refusing every reference that several ids end with): the id
    ``t-m1`` itself, beside ``xt-m1``, was "ambiguous, 2 matches"; it is the match of that
    id, as ``named_match`` says and the held-back note and the web read it."""
    path = tmp_path / "t.sqlite"
    with Storage(path) as st:
        st.ensure_tournament("t", name="t", fingerprint="t", total_matches=2, config={},
                             bots=[(b, "demo") for b in "abc"])  # fmt: skip
        for i, match_id in enumerate(("xt-m1", "t-m1")):
            record = demo_record(i, ("a", "b", "c"), max_deals=1)
            st.save_match("t", match_id=match_id, index=i, table=i, set_no=i,
                          seed=record["seed"], seats=("a", "b", "c"), record=record,
                          started_at=1.0, finished_at=2.0)  # fmt: skip
        want = st.load_record("t-m1")
    assert resolve_record("t-m1", path) == want != resolve_record("xt-m1", path)
    with pytest.raises(LookupError, match="ambiguous, 2 matches"):
        resolve_record("m1", path)


# --- the referee's answers ahead; a config's database -----------------------------------------


def test_a2_an_answer_ahead_the_referee_foresees_nothing_of_is_not_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A2 (the foresight read before asking whether there is one): where ``own_next_view``
    foresees no view, the seat is asked as usual (round 54's ruleset check came before the
    ``None`` check, an AttributeError that ended the match)."""
    base, bots, _ = _play(None)
    monkeypatch.setattr(match_mod, "own_next_view", lambda view, action: None)
    rec, ahead_bots, _ = _play(honest)
    assert _moves(rec) == _moves(base) and not rec["incidents"]
    assert _requests(ahead_bots) == _requests(bots)


def test_c9_a_database_named_as_a_bots_log_is_refused(tmp_path: Path) -> None:
    """C9 (the bots' logs left out of the files a run writes): ``db = "o/logs/randy.log"``
    was taken, and the bot's log written into the database."""
    data = {"name": "c", "out": str(tmp_path / "o"), "db": str(tmp_path / "o/logs/randy.log"),
            "bots": {"randy": "random", "bold": "heuristic", "cid": "counting"}}  # fmt: skip
    with pytest.raises(ConfigError, match="is a file the tournament writes"):
        parse_config(data, source="c.toml")
    data["db"] = str(tmp_path / "o/logs/other.sqlite")
    assert parse_config(data, source="c.toml").db == tmp_path / "o/logs/other.sqlite"


def test_a_log_of_a_bot_taken_out_of_the_config_since_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defect: randy crashed, and the organiser took it out of the config; ``arena
    leaderboard --config demo.toml --out out/demo/logs/randy.log`` (completed by the shell)
    showed the tournament randy played in and wrote the table over randy's log, the one
    file saying why it crashed, exit 0: only the config's bots' logs were kept. The bots of
    the tournament shown are kept too (refused, exit 2, naming the bot)."""
    monkeypatch.chdir(tmp_path)
    make_demo_db(tmp_path / "runs" / "demo.sqlite", matches=2, max_deals=1)
    config = tmp_path / "demo.toml"
    config.write_text('name = "demo"\nout = "out/demo"\n[bots]\nbold = "heuristic"\n'
                      'careful = "counting"\n', "utf-8")  # fmt: skip
    log = Path("out/demo/logs/randy.log")
    log.parent.mkdir(parents=True)
    log.write_text("Traceback: why it crashed\n", encoding="utf-8")
    bad = CliRunner().invoke(main, ["leaderboard", "--config", str(config), "--out", str(log)])
    assert bad.exit_code == 2, bad.output
    assert "would write over bot randy's log" in " ".join(bad.stderr.split()), bad.stderr
    assert log.read_text(encoding="utf-8") == "Traceback: why it crashed\n"
    # (the names given beside the config's are bot names only: no path out of logs/)
    assert bot_logs(config, also=["randy", "../up", "bold"]) == {
        Path(f"out/demo/logs/{b}.log").resolve(): b for b in ("bold", "careful", "randy")
    }


def test_the_runner_writes_each_bots_log_where_bot_logs_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bot_logs`` (what ``arena leaderboard --out`` keeps) and the runner share one
    ``bot_log_path``: the runner had its own ``out / "logs" / f"{name}.log"``, which a
    change of either would have parted from the other in silence. The bots' processes are
    stood in for: each records its log's path, and the first start stops the run."""
    from tests.arena.test_tournament_runner import QUIET, FakeReferee

    monkeypatch.chdir(tmp_path)
    config = tmp_path / "c.toml"
    config.write_text('name = "c"\nbots = ["random", "heuristic", "counting"]\n', "utf-8")
    logs: list[Path] = []

    class Recorded:
        def __init__(self, spec: Any, argv: Any, token: str, log_path: Path, **kw: Any) -> None:
            logs.append(log_path)

        async def start(self) -> None:
            if len(logs) == 3:
                raise TournamentError("recorded")

        async def stop(self) -> None:
            pass

    monkeypatch.setattr(runner, "_BotProcess", Recorded)
    with pytest.raises(TournamentError, match="recorded"):
        asyncio.run(runner.run_tournament(load_config(config), QUIET,
                                          referee_factory=lambda _c: FakeReferee(),
                                          serve=False))  # fmt: skip
    assert logs and sorted(logs) == sorted(bot_logs(config))
