"""Faults round 53: local bot processes that abuse their host rather than the protocol
(docs/tournament.md, `[bots]` and "Bots that abuse the machine").

Fixed in this round (each test says what the defect was):

- a bot allocating memory in many processes made the kernel's out-of-memory killer kill
  the arena itself (whose process was then the largest), ending the run mid-match;
- a bot whose code was edited while the tournament ran was restarted, after a crash, with
  the edited code: the rest of its matches were played by other code than the one the
  tournament's id names, and nothing said so.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from arena.tournament.config import BotSpec
from arena.tournament.runner import BOT_OOM_SCORE_ADJ, _BotProcess, _restart
from tests.faults.test_faults_round36 import _complete, _config, _incidents, _running

#: A bot file that plays the first legal action; at its 2nd decision it appends a line to
#: its own file (the organiser editing it mid-run) and crashes (once: DIR53 remembers).
EDITED_BOT = r"""
import os
from pathlib import Path
from sdk import Bot

D = Path(os.environ["DIR53"])


class Edited(Bot):
    n = 0

    def act(self, view):
        Edited.n += 1
        if Edited.n == 2 and not (D / "fired").exists():
            (D / "fired").write_text("1")
            with open(__file__, "a") as fh:
                fh.write("# edited while the tournament ran\n")
            os._exit(3)
        return view.legal_actions[0]
"""


@pytest.mark.skipif(not Path("/proc/self/oom_score_adj").exists(), reason="Linux only")
def test_a_bot_and_what_it_starts_are_the_out_of_memory_killers_first_pick(
    tmp_path: Path,
) -> None:
    """Defect: a bot allocating without bound in many processes (40 of some 30 MB each, in a
    memory cgroup of 1.2 GB) made the kernel's out-of-memory killer kill the arena, the
    largest process then: the run ended mid-match ("Killed"). Every bot process is now
    started with the highest ``oom_score_adj``, which what it starts inherits, so that the
    killer takes a bot's process (restarted as after any crash), never the arena's, whose
    own score is left as it was."""
    mine = Path("/proc/self/oom_score_adj").read_text().strip()
    # (read a moment after the start: the runner sets it once the process exists)
    script = "sleep 0.5; cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'"
    p = _BotProcess(BotSpec(name="b", kind="command"), ["sh", "-c", script], "t",
                    tmp_path / "b.log")  # fmt: skip

    async def scenario() -> None:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        await p.stop()

    asyncio.run(scenario())
    lines = (tmp_path / "b.log").read_text().splitlines()
    assert lines[1:] == [str(BOT_OOM_SCORE_ADJ)] * 2, lines
    assert Path("/proc/self/oom_score_adj").read_text().strip() == mine


@pytest.mark.slow  # (a real run of 6 matches: 6 s)
def test_a_bot_whose_code_changed_is_not_restarted_with_it(tmp_path: Path) -> None:
    """Defect: the tournament's id names each bot's code (editing a bot file makes another
    tournament), but a bot that crashed after its file was edited mid-run was restarted with
    the edited code, and played the rest of its matches under the old code's id, with no
    word of it. It is now given up instead, saying which file changed: the referee plays
    its seats to the end (forfeits), and every match is stored."""
    (tmp_path / "edited.py").write_text(EDITED_BOT)
    d = tmp_path / "d53"
    d.mkdir()
    env = json.dumps(str(d))
    cfg = _config(tmp_path, {"r1": '"random"', "r2": '"random"',
                             "ed": f'{{ bot = "edited.py:Edited", env = {{ DIR53 = {env} }} }}'},
                  grace_s=2)  # fmt: skip
    with _running(cfg) as run:
        code, _out, err = run.finish()
    _complete(tmp_path, code, err)
    file = tmp_path / "edited.py"
    said = f"bot ed exited with code 3, and its code changed since the run began ({file})"
    assert said in err, err[-3000:]
    assert "restarting it" not in err, err[-3000:]
    log = (tmp_path / "out" / "logs" / "ed.log").read_text()
    assert log.count("--- ") == 2 and "starting ed" in log, log[-2000:]
    assert f"exited with code 3, and its code changed since the run began ({file}): not " \
        "restarted" in log, log[-2000:]  # fmt: skip
    forfeits = [detail for bot, kind, detail in _incidents(tmp_path / "db.sqlite")
                if bot == "ed" and kind == "forfeit"]  # fmt: skip
    assert forfeits, err[-3000:]
    assert any("its code changed since the run began" in f for f in forfeits), forfeits


def test_a_restart_before_the_tournament_began_stops_it_naming_the_changed_file(
    tmp_path: Path,
) -> None:
    """The same check where a bot is restarted while the others still connect: the restart
    returns why it was not made (the start then stops, naming it), the bot is given up and
    nothing of it runs. A file whose digest did not change restarts as before."""
    script = tmp_path / "bot.sh"
    script.write_text("exit 3\n")
    spec = BotSpec(name="b", kind="command", command=("sh", "bot.sh"), cwd=tmp_path)
    p = _BotProcess(spec, ["sh", "bot.sh"], "t", tmp_path / "b.log")

    async def scenario() -> tuple[str | None, str | None]:
        await p.start()
        assert p.proc is not None
        await p.proc.wait()
        unchanged = await _restart(p, 3, 3, begun=False)
        assert p.proc is not None
        await p.proc.wait()
        script.write_text("exit 4\n")
        changed = await _restart(p, 3, 3, begun=False)
        await p.stop()
        return unchanged, changed

    unchanged, changed = asyncio.run(scenario())
    assert unchanged is None and p.restarts == 1
    assert changed == f"its code changed since the run began ({script})"
    assert p.given_up and p.restarts == 1
    log = (tmp_path / "b.log").read_text()
    assert log.count("starting b") == 2, log
    assert f"exited with code 3, and its code changed since the run began ({script}): not " \
        "restarted" in log, log  # fmt: skip
