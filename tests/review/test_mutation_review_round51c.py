"""Review round 51c: hostile round 51's limits (``HELLO_MAX_BYTES`` allowing 4 bytes a
character of text, ``Hello.running`` ids limited in bytes, one flood WARNING per window per
bot counting those left out, an answer's allowance of 512 bytes), read with hand mutants.
Each test here kills mutants the round's own tests let live:

- the flood WARNING's window and count, with the loop's clock held by hand over three
  windows and two bots: the count reset by each line (it counted every stream since the
  first), the window the configured one (not half of it), the state the bot's (a referee-wide
  one left out the second bot's first line), the first flood logged whatever the loop's
  clock reads (asyncio's epoch is unspecified: "never logged" as 0.0 left out a flood in
  the first window of a clock that starts at 0);
- a running id of exactly 256 bytes in UTF-8 is taken, one of 257 refused (``>=``, or the
  limit counted in characters past the ASCII check);
- the SDK's answer to a decision its bot failed, with the longest ``failed`` it sends (an
  exception type named in 300 four-byte characters: ``type()`` takes any name) and the
  longest match id the arena makes, fits ``ANSWER_BYTES``, so that it weighs nothing
  (mutant: the SDK's ``FAILED_MAX`` raised, its answers weighed as strays' bytes).

No defect found. 54 hand mutants (arena/protocol.py's byte cap and ``hello_problem``, the
referee's flood line and weighing, ``BotSession``'s new state, the SDK's Hello and
``FAILED_MAX``): 44 killed by the earlier tests, 8 by these, 2 equivalent (the ASCII check
before encoding dropped: an ASCII id within its characters is within its bytes; ``>=`` for
``>`` against the window, told apart only at a float-equal clock, where ``>`` is the flood
meter's own convention), none left.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from arena.protocol import HELLO_LIMITS, action_to_pb, hello_problem
from arena.referee import Referee, RefereeConfig
from arena.referee.core import ANSWER_BYTES, MAX_DECISION_BATCH, _Refusal
from arena.referee.sessions import Stream
from arena.tournament.config import parse_config
from arena.tournament.schedule import match_id
from arena.v1 import arena_pb2 as pb
from engine import Action, Game, PlayerView, observe
from sdk.bot import Bot
from sdk.local import decide_failed
from tests.arena.test_referee_limits import _Reader

WINDOW = 10.0
MORE = " ({} more of its streams closed so since the last such line, not logged)"


def _flood_lines(caplog: pytest.LogCaptureFixture, schedule: list[tuple[float, str]]) -> list[str]:
    """Bots x and y of a referee (flood limit 1, window ``WINDOW``) each open a stream that
    floods (two strays) at the loop times of ``schedule``: the flood WARNINGs logged."""
    caplog.set_level(logging.WARNING, logger="arena.referee")
    stray = pb.BotMessage(decision=pb.Decision(request_id="1", match_id="nowhere"))

    async def main() -> None:
        now = [0.0]  # (asyncio's clock has no set epoch: a fresh machine's is near 0)
        asyncio.get_running_loop().time = lambda: now[0]  # type: ignore[method-assign]
        ref = Referee(RefereeConfig(flood_limit=1, flood_window_s=WINDOW))
        for name in ("x", "y"):
            ref.add_bot(name, f"tok-{name}")
        for at, name in schedule:
            now[0] = at
            session = ref.session(name)
            stream = Stream("peer")
            session.attach(stream)
            with pytest.raises(_Refusal, match="answering no pending request"):
                await ref._read_loop(session, stream, _Reader(stray, stray))

    asyncio.run(main())
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return [line for line in said if "flooded its stream" in line]


def test_flood_lines_are_one_a_window_per_bot_each_counting_since_the_last(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lines = _flood_lines(caplog, [
        (0.0, "x"),   # logged: the first, at a clock that starts at 0
        (1.0, "x"), (2.0, "x"),  # within x's window: counted
        (3.0, "y"),   # another bot: its own first line, nothing to count
        (6.0, "x"),   # past half x's window, within it: counted (3)
        (10.5, "x"),  # x's window passed: logged, counting 3
        (11.0, "y"),  # within y's window (from 3.0): counted (1)
        (14.0, "y"),  # logged, counting y's 1 (not x's)
        (21.0, "x"),  # x's next window: logged, nothing left out since 10.5
    ])  # fmt: skip
    closed = "flooded its stream: closed"
    assert lines == [
        f"bot x {closed}",
        f"bot y {closed}",
        f"bot x {closed}{MORE.format(3)}",
        f"bot y {closed}{MORE.format(1)}",
        f"bot x {closed}",
    ], lines


def test_a_running_id_of_exactly_the_limit_in_bytes_is_taken() -> None:
    most_ids, id_bytes = HELLO_LIMITS["running"]
    assert id_bytes == 256
    for at in ("ж" * 128, "\U0001f0a1" * 64, "m" * 256):  # 256 bytes in UTF-8 each
        assert len(at.encode()) == id_bytes
        assert hello_problem(pb.Hello(running=["m", at] * (most_ids // 2))) is None, at
        unit = "bytes long in UTF-8" if not at.isascii() else "characters long"
        assert hello_problem(pb.Hello(running=["m", at + "m"])) == (
            f"Hello.running[1] is 257 {unit}, more than the 256 each may have"
            + (" (ids are ASCII)" if not at.isascii() else "")
        ), at
    # Text fields count characters: 256 of 4 bytes each are within their limit.
    name, (most, chars) = "features", HELLO_LIMITS["features"]
    four = pb.Hello(bot_name="\U0001f0a1" * 256, client="Ж" * 256)
    getattr(four, name).extend(["\U0001f0a1" * chars] * most)
    assert hello_problem(four) is None


#: An exception type named as no Python source could, in 300 four-byte characters.
_LONG = type("\U0001f0a1" * 300, (RuntimeError,), {})


class _RaisesLong(Bot):
    def act(self, view: PlayerView) -> Action:
        raise _LONG("a bug")


class _AnswersLong(Bot):
    def act(self, view: PlayerView) -> Action:
        wrong: object = _LONG()  # (an exception, not an action)
        return wrong  # type: ignore[return-value]


def test_the_sdks_longest_failed_answer_weighs_nothing() -> None:
    game = Game.new("classic", seed=1, players=["a", "b", "c"])
    assert game.to_act is not None
    view = observe(game, game.to_act)
    config = parse_config({"name": "t" * 64, "bots": {"a": "random", "b": "random", "c": "random"}})
    mid = match_id(config.tournament_id, 999_999)  # (the longest tournament's millionth)
    for bot in (_RaisesLong(), _AnswersLong()):
        action, failed = decide_failed(bot, view, logging.getLogger("test.round51c"))
        assert failed is not None and len(failed) == 64, failed
        answer = pb.Decision(request_id="9" * 9, match_id=mid, action=action_to_pb(action),
                             failed=failed)  # fmt: skip
        # As the SDK sends them: one alone, or 64 in a batch (the referee allows 256).
        assert pb.BotMessage(decision=answer).ByteSize() <= ANSWER_BYTES
        batch = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[answer] * 64))
        assert batch.ByteSize() <= 64 * ANSWER_BYTES
        most = pb.BotMessage(decisions=pb.DecisionBatch(decisions=[answer] * MAX_DECISION_BATCH))
        assert most.ByteSize() <= MAX_DECISION_BATCH * ANSWER_BYTES
