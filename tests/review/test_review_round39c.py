"""Review of round 39's last merges (f32f980..f07a965): the tournament's "no {ca}" hint,
`arena leaderboard --config` with a fixed id, `--list`'s running/stopped, the hooks' fork
counter, `_needs_arguments`, the tokens note's quoting, the proto's comments, `try --help`,
and the web changes (replay keys, long names, plot tooltips, the HTML file's tables).

Two defects are pinned here: the "no {ca}" hint was said of a command that connects with
TLS by its own options (`--ca FILE`, `--tls`), only slow to start; and the rating plots'
new hover titles (web page and HTML file) were hidden wherever a later bot's ±σ band lay
over a line, so that with many bots, the case they were added for, a line rarely named
its bot.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main as cli
from arena.tournament.config import BotSpec, TLSSpec
from arena.tournament.runner import _no_ca_hint
from tests.support.browser import driver, paths
from tests.support.certs import make_cert
from tests.support.harness import web_server
from tests.web.test_web_browser import load, waiting
from tests.web.test_web_round39 import SEATS, make_db

__all__ = ["driver", "paths"]  # (the shared browser fixtures, used here)

# --- the "no {ca}" hint -------------------------------------------------------------------


def _cmd(*words: str) -> BotSpec:
    return BotSpec(name="mine", kind="command", command=words)


def test_the_no_ca_hint_is_not_said_of_a_command_that_asks_for_tls_itself(
    tmp_path: Path,
) -> None:
    """Defect: a command bot given the certificate by its own path (`--ca certs/arena.pem`,
    as docs/tournament.md shows for remote bots) or `--tls` (a certificate a public
    authority signed) connects with TLS; when it was only slow to start, the run said
    "this command has no {ca}: a bot connecting in plain text is never let in", sending the
    organiser to fix what was not broken."""
    tls = TLSSpec(cert=tmp_path / "c.pem", key=tmp_path / "k.pem", server_name="localhost")
    run = (sys.executable, "-m", "sdk.cli", "run", "random", "--arena", "{arena}")
    for extra in (("--ca", "certs/arena.pem"), ("--ca=certs/arena.pem",), ("--tls",)):
        assert _no_ca_hint(_cmd(*run, *extra), tls) == "", extra
    # one word for a shell: its options are read there too
    shell = "exec {python} -m sdk.cli run random --arena {arena} --ca /etc/arena.pem"
    assert _no_ca_hint(_cmd("sh", "-c", shell), tls) == ""
    # still said where it applies: no TLS option at all, or one only alike
    assert "has no {ca}" in _no_ca_hint(_cmd(*run), tls)
    assert "has no {ca}" in _no_ca_hint(_cmd(*run, "--cache", "x"), tls)
    assert "has no {ca}" in _no_ca_hint(_cmd(*run, "--name", "tls-bot"), tls)


def test_a_slow_command_bot_with_its_own_ca_is_not_said_to_lack_one(tmp_path: Path) -> None:
    """End to end: a `command` bot with `--ca <the certificate's path>` that is still
    loading when `bot_wait_s` runs out is said to be still starting, with no word of
    {ca}."""
    make_cert(tmp_path / "certs")
    (tmp_path / "slow.py").write_text(
        "import time\ntime.sleep(60)  # a model loading\n"
        "from bots.random_bot import RandomBot as Slow\n"
    )
    pem = tmp_path / "certs" / "arena.pem"
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        'name = "slowca"\nseed = 1\nmax_deals = 1\nbot_wait_s = 3\n'
        f'db = "{tmp_path / "t.sqlite"}"\nout = "{tmp_path / "out"}"\n'
        '[tls]\ncert = "certs/arena.pem"\nkey = "certs/arena.key"\n'
        '[bots]\nrandom = "random"\nheuristic = "heuristic"\n'
        'mine = { command = "{python} -m sdk.cli run slow.py:Slow --arena {arena} '
        f'--ca {pem} --retry-for 30", cwd = "{tmp_path}" }}\n'
    )
    r = CliRunner().invoke(cli, ["tournament", "--config", str(cfg), "--no-progress"])
    assert r.exit_code == 1, r.output
    assert "  mine: local bot, still starting or stuck" in r.output, r.output
    assert "{ca}" not in r.output, r.output


# --- the rating plots' hover titles ---------------------------------------------------------


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("r39c") / "r39c.sqlite"
    make_db(path)
    return path


#: For each rating line (polyline) of the page: its title, and how many of 39 points along
#: it the pointer would reach the line itself at, rather than the band of a bot after it.
_HOVERED = """
  const out = [];
  for (const l of document.querySelectorAll(arguments[0])) {
    const n = l.getTotalLength(), m = l.getScreenCTM();
    let mine = 0;
    for (let k = 1; k < 40; k++) {
      const q = l.getPointAtLength(n * k / 40).matrixTransform(m);
      const hit = document.elementFromPoint(q.x, q.y);
      if (hit === l || (hit && hit.tagName === "polyline")) mine++;  // a line, not a band
    }
    out.push([l.querySelector("title").textContent, mine]);
  }
  return out;
"""


def _lines_hover(driver: Any, selector: str) -> list[tuple[str, int]]:
    driver.execute_script("window.scrollTo(0, 0)")
    plot = driver.find_element("css selector", selector)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", plot)
    return [tuple(x) for x in driver.execute_script(_HOVERED, f"{selector} polyline")]


@pytest.mark.browser
def test_a_rating_line_names_its_bot_where_a_later_band_lies_over_it(
    driver: Any, db: Path, tmp_path: Path
) -> None:
    """Defect: each bot's ±σ band is drawn after the lines of the bots before it, and took
    the pointer there: the title a line was given in round 39 ("ann: μ 27.52 σ 3.07") was
    not shown where a later bot's band covered the line (ann's line: at 17 of 39 points),
    and with a dozen bots and more, whose colours are alike, nearly nowhere. Lines drawn
    over lines may still hide one another; a band no longer hides any. The same in
    `arena leaderboard --format html`'s plot."""
    with web_server(db) as server:
        load(driver, server.url)
        waiting(driver).until(
            lambda d: d.find_elements("css selector", "#rating-plot svg.plot polyline.mu")
        )
        lines = _lines_hover(driver, "#rating-plot svg.plot")
    assert sorted(t.split(":")[0] for t, _ in lines) == sorted(SEATS)
    for title, reached in lines:
        assert reached == 39, (title, reached, lines)

    page = tmp_path / "leaderboard.html"
    r = CliRunner().invoke(cli, ["leaderboard", "--db", str(db), "--out", str(page)])
    assert r.exit_code == 0, r.output
    driver.get(page.as_uri())
    lines = _lines_hover(driver, "svg[aria-label='rating history']")
    assert sorted(t for t, _ in lines) == sorted(SEATS)
    for title, reached in lines:
        assert reached == 39, (title, reached, lines)
